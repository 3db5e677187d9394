"""Cost of searching ``batch_size`` per model (issue 14).

Models of different batch sizes take different steps (another number of
steps per epoch, other rows in each), so they cannot share a fused step:
skpmlp trains each batch size as its own fused run, one after another, in
the same ``fit``. This measures what that costs against the ideal of one
fused run whose per-model cost does not depend on the population's mix.

On digits (1,347 training rows, 64 features, 10 classes), 16
configurations (widths 16 to 128, relu and tanh, two learning rates) times
batch sizes 32, 64, 128 and 256 (64 models), 10 epochs, no monitoring:

- ``mixed``: one ``fit`` with ``batch_size=[32, 64, 128, 256]``;
- ``separate``: four ``fit`` s, one per batch size, 16 models each (what a
  user would run without the feature), summed;
- ``ideal``: for each batch size a ``fit`` of all 64 models at that batch
  size, a quarter of its time, summed: the cost if the mixed population
  ran as one fused run with every model at its own batch size and no loss
  of efficiency from the smaller runs.

CPU seconds (``time.process_time``, robust to other jobs on a shared
machine), best of ``--repeats`` interleaved runs, one thread.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/batch_size_cost.py [--repeats 3]
"""
import argparse
import os
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from skpmlp import ParallelMLPClassifier  # noqa: E402

SIZES = [32, 64, 128, 256]
GRID = dict(hidden_layer_sizes=[(16,), (32,), (64,), (128,)], activation=["relu", "tanh"],
            learning_rate_init=[1e-3, 1e-2])


def cpu_seconds(X, y, **params):
    search = ParallelMLPClassifier(**GRID, max_iter=10, holdout_refit=False, random_state=0, **params)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    cpu_seconds(X, y, batch_size=SIZES)  # compiles / warms the kernel
    samples = {"mixed": [], "separate": [], "ideal": []}
    for _ in range(args.repeats):
        samples["mixed"].append(cpu_seconds(X, y, batch_size=SIZES))
        samples["separate"].append(sum(cpu_seconds(X, y, batch_size=b) for b in SIZES))
        samples["ideal"].append(sum(cpu_seconds(X, y, batch_size=b, n_repeats=4) / 4 for b in SIZES))
    best = {name: min(values) for name, values in samples.items()}
    print(f"load average {os.getloadavg()[0]:.1f}; 64 models, batch sizes {SIZES}, 10 epochs, 1 thread")
    for name, value in best.items():
        print(f"  {name:9s} {value:6.2f} CPU s   {value / best['ideal']:.2f}x ideal")


if __name__ == "__main__":
    main()
