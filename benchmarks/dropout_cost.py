"""Cost of ``dropout`` (issue 40, item 1).

Dropout trains on the native kernel (which hashes every hidden unit's mask
in a pass of its own after each hidden layer, and masks the backward's
delta) and on torch (the Triton kernels lack it). This measures its cost on
one search of 36 models (widths 32, 64 and 32-32, relu and tanh, two
learning rates, three alphas) on a 500 x 8 classification set, 30 epochs,
a holdout, no refit:

- ``native, dropout=0``: what a search without dropout trains on (the
  native kernel on the CPU);
- ``native, dropout=0.1``: every model with dropout, on the kernel (what
  ``backend="auto"`` trains it on, on the CPU);
- ``torch, dropout=0`` and ``torch, dropout=0.1``: the torch path without
  and with dropout.

CPU seconds (``time.process_time``, robust to other jobs on a shared
machine), median of ``--repeats`` interleaved runs, one thread; the ratios
are to ``native, dropout=0``. ``--json PATH`` writes them.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/dropout_cost.py [--repeats 5] [--json out.json]
"""
import argparse
import dataclasses
import json
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

from skpmlp import ParallelMLPClassifier  # noqa: E402
from skpmlp._search import _plan  # noqa: E402

GRID = dict(hidden_layer_sizes=[(32,), (64,), (32, 32)], activation=["relu", "tanh"],
            learning_rate_init=[1e-3, 1e-2], alpha=[1e-4, 1e-2, 1.0], max_iter=30,
            n_iter_no_change=1000, cv=None, holdout_refit=False, random_state=0)
CASES = {"native, dropout=0": ("native", 0.0), "native, dropout=0.1": ("native", 0.1),
         "torch, dropout=0": ("torch", 0.0), "torch, dropout=0.1": ("torch", 0.1)}


def cpu_seconds(X, y, backend, dropout):
    """One fit's CPU seconds on ``backend`` (the engine's, set on its config)."""
    original = _plan.train_config
    _plan.train_config = lambda *a, **k: dataclasses.replace(original(*a, **k), backend=backend)
    try:
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ParallelMLPClassifier(**GRID, dropout=dropout).fit(X, y)
        return time.process_time() - start
    finally:
        _plan.train_config = original


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y = make_classification(500, 8, n_informative=5, random_state=0)
    for backend, dropout in CASES.values():  # warm-up: the kernel's build, torch's first calls
        cpu_seconds(X, y, backend, dropout)
    samples = {name: [] for name in CASES}
    for _ in range(args.repeats):
        for name, (backend, dropout) in CASES.items():
            samples[name].append(cpu_seconds(X, y, backend, dropout))
    median = {name: float(np.median(values)) for name, values in samples.items()}
    base = median["native, dropout=0"]
    print(f"load average {os.getloadavg()[0]:.1f}; 36 models, 500 x 8, 30 epochs, 1 thread")
    for name, value in median.items():
        print(f"  {name:20s} {value:6.3f} CPU s   {value / base:.2f}x the kernel without dropout")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"median_cpu_seconds": median, "samples": samples}, f, indent=2)


if __name__ == "__main__":
    main()
