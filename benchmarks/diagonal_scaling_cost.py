"""Cost of ``diagonal_scaling`` (issue 40, item 1).

The native CPU kernel has no diagonal scaling layer, so a run with a scaled
model trains on torch. On a 500 x 8 regression set (``make_regression``,
features of unequal scales), 36 models (widths 32, 64 and 64-64, three
learning rates, two alphas, two repeats), ``cv=None``, 50 epochs, one
thread, the same run measures:

- ``off``: ``diagonal_scaling=False`` (the native kernel, the default path);
- ``off-torch``: the same on torch (the trainer forced to torch's): what
  torch costs;
- ``on``: ``diagonal_scaling=True`` (torch, plus the scale's product);
- ``mixed``: ``diagonal_scaling=[False, True]`` (72 models, one run on torch).

CPU seconds (``time.process_time``) of ``fit``, best of ``--repeats``
interleaved runs. Measured (2026-11-27, a shared 2-core x86-64 machine at
load 5, ``--repeats 3``): off 0.28 s, off-torch 0.75 s (2.66x), on 0.75 s
(2.66x), mixed 1.56 s (72 models); best R^2 0.957 off, 0.996 on (these
features are unscaled: the scale learns what a standard scaler would give).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/diagonal_scaling_cost.py [--repeats 3]
"""
import argparse
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import make_regression  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from skpmlp import ParallelMLPRegressor  # noqa: E402
from skpmlp._engine._backends import choose_trainer  # noqa: E402
from skpmlp._engine._backends._torch import PopulationTrainer  # noqa: E402
from skpmlp._engine._minibatch import _run  # noqa: E402

GRID = dict(hidden_layer_sizes=[(32,), (64,), (64, 64)], activation="relu",
            learning_rate_init=[1e-3, 3e-3, 1e-2], alpha=[1e-4, 1e-2], n_repeats=2)
CASES = {
    "off": dict(diagonal_scaling=False),
    "off-torch": dict(diagonal_scaling=False, torch_only=True),
    "on": dict(diagonal_scaling=True),
    "mixed": dict(diagonal_scaling=[False, True]),
}


def fit_seconds(X, y, torch_only=False, **params):
    _run.choose_trainer = (lambda spec, config: PopulationTrainer) if torch_only else choose_trainer
    search = ParallelMLPRegressor(**GRID, max_iter=50, cv=None, holdout_refit=False, random_state=0,
                                  **params)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    return time.process_time() - start, float(np.max(search.cv_results_["mean_test_score"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y = make_regression(500, 8, n_informative=6, noise=5.0, random_state=0)
    X = X * np.array([1.0, 10.0, 0.1, 1.0, 3.0, 0.3, 30.0, 1.0])
    fit_seconds(X, y)  # compiles / warms the kernel
    samples = {name: [] for name in CASES}
    scores = {}
    for _ in range(args.repeats):
        for name, params in CASES.items():
            seconds, scores[name] = fit_seconds(X, y, **params)
            samples[name].append(seconds)
    best = {name: min(values) for name, values in samples.items()}
    print(f"load average {os.getloadavg()[0]:.1f}; 500 x 8, 36 models (mixed: 72), 50 epochs, 1 thread")
    for name, value in best.items():
        print(f"  {name:9s} {value:6.2f} CPU s   {value / best['off']:.2f}x off   "
              f"best R^2 {scores[name]:.4f}")


if __name__ == "__main__":
    main()
