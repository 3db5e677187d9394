"""Cost of ``dropout`` (issue 40, item 1).

Dropout trains on the native kernel (which hashes every hidden unit's mask
where the layer's activation is formed, and masks the backward's delta), on the Triton kernels (the same hash, folded into the stored
activations and derivatives) and on torch. This measures its cost on
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
are to ``native, dropout=0``. With ``--device cuda`` the cases are the
Triton kernels' and torch's on the GPU, in wall seconds (synchronised),
the ratios to ``triton, dropout=0``. ``--json PATH`` writes them.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/dropout_cost.py [--repeats 5] [--json out.json]
    python benchmarks/dropout_cost.py --device cuda
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
GPU_CASES = {"triton, dropout=0": ("triton", 0.0), "triton, dropout=0.1": ("triton", 0.1),
             "torch, dropout=0": ("torch", 0.0), "torch, dropout=0.1": ("torch", 0.1)}


def seconds(X, y, backend, dropout, device="cpu"):
    """One fit's seconds on ``backend`` (the engine's, set on its config):
    CPU seconds on the CPU, synchronised wall seconds on a GPU."""
    original = _plan.train_config
    _plan.train_config = lambda *a, **k: dataclasses.replace(original(*a, **k), backend=backend,
                                                             device=device)
    clock = time.process_time if device == "cpu" else time.perf_counter
    try:
        start = clock()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ParallelMLPClassifier(**GRID, dropout=dropout).fit(X, y)
        if device != "cpu":
            torch.cuda.synchronize()
        return clock() - start
    finally:
        _plan.train_config = original


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    cases = CASES if args.device == "cpu" else GPU_CASES
    X, y = make_classification(500, 8, n_informative=5, random_state=0)
    for backend, dropout in cases.values():  # warm-up: the kernel's build, torch's first calls
        seconds(X, y, backend, dropout, args.device)
    samples = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, (backend, dropout) in cases.items():
            samples[name].append(seconds(X, y, backend, dropout, args.device))
    median = {name: float(np.median(values)) for name, values in samples.items()}
    base_name = next(iter(cases))
    base, unit = median[base_name], "CPU s" if args.device == "cpu" else "s"
    print(f"load average {os.getloadavg()[0]:.1f}; 36 models, 500 x 8, 30 epochs, "
          f"{'1 thread' if args.device == 'cpu' else args.device}")
    for name, value in median.items():
        print(f"  {name:20s} {value:6.3f} {unit}   {value / base:.2f}x {base_name}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"median_cpu_seconds": median, "samples": samples}, f, indent=2)


if __name__ == "__main__":
    main()
