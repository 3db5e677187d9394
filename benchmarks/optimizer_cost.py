"""Cost of per-model optimizer settings against shared ones (issue 14).

The 240-model population of ``step.py`` trained one epoch at a time twice
in the same process: every model with the same Adam, and the models
cycling through four optimizers (Adam, Adam with other betas, SGD with
Nesterov momentum 0.9, SGD with plain momentum 0.5), on the torch engine
and on the native kernel, 1 thread; CPU milliseconds per step, the best of
five epochs.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/optimizer_cost.py
"""
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np
import torch

from skpmlp._engine import OptimizerSettings, TrainConfig
from skpmlp._engine._backends._native import NativeTrainer
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._minibatch._batches import BatchPlanner

# the population of step.py, beside this script
sys.path.insert(0, str(Path(__file__).resolve().parent))
from step import BATCH, N_CLASSES, N_FEATURES, N_ROWS, population  # noqa: E402

torch.set_num_threads(1)

rng = np.random.default_rng(0)
X = torch.tensor(rng.normal(size=(N_ROWS, N_FEATURES)), dtype=torch.float32)
y = torch.tensor(rng.integers(0, N_CLASSES, N_ROWS))
shared = population()
kinds = [OptimizerSettings("adam"), OptimizerSettings("adam", beta_1=0.8, beta_2=0.99),
         OptimizerSettings("sgd", momentum=0.9), OptimizerSettings("sgd", momentum=0.5, nesterovs_momentum=False)]
mixed = dataclasses.replace(shared, optimizers=[kinds[i % 4] for i in range(shared.n_models)])
cfg = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH)
plan = BatchPlanner([np.arange(N_ROWS)], BATCH, 0, None, dtype=torch.float32, device="cpu").next_epoch()
for cls in (PopulationTrainer, NativeTrainer):
    res = {}
    trainers = {name: cls(spec, cfg, N_FEATURES, 1) for name, spec in (("shared", shared), ("per-model", mixed))}
    for t in trainers.values():
        t.n_threads = 1
        t.run_epoch(X, y, plan)
    samples = {name: [] for name in trainers}
    for _ in range(5):
        for name, t in trainers.items():
            c = time.process_time()
            t.run_epoch(X, y, plan)
            samples[name].append((time.process_time() - c) / plan.n_steps * 1e3)
    a, b = min(samples["shared"]), min(samples["per-model"])
    print(f"{cls.__name__:18s} shared {a:.2f} ms/step, per-model (4 optimizers) {b:.2f} ms/step, ratio {b/a:.3f}")
