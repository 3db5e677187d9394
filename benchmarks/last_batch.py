"""What a short last batch costs: a cv=5 search as the folds' rows pass a
multiple of the batch size.

At cv=5 and scikit-learn's ``batch_size="auto"`` (200 rows), a fold of 200
training rows trains one batch an epoch, a fold of 205 a batch of 200 and
one of 5. The native kernel lays every batch out at the batch size's width;
a step computes only the columns that hold its real rows (rounded up to
whole vectors), so the 5-row batch should cost about 5 rows' work, not
200's. This times the ``vs_gridsearch.py`` grid (48 configurations x 5
folds) on random data of 6 features and 3 classes, 100 epochs, no
stopping, ``ensemble="best"``, for each ``--rows`` (total rows: 250 gives
200 a fold, 257 gives 205), best of ``--repeats`` fits after a warm-up,
on the kernel built for each ``--targets`` entry (``SKPMLP_KERNEL_TARGET``).

Usage::

    python benchmarks/last_batch.py
    python benchmarks/last_batch.py --targets native,x86-64-v3,x86-64-v2 --rows 250 257 400
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_data import GRID  # noqa: E402

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params  # noqa: E402
from skpmlp._kernels import build_info, kernel_available  # noqa: E402


def search_seconds(n_rows, repeats):
    """Best wall seconds of the search on ``n_rows`` random rows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_rows, 6)).astype(np.float32)
    y = rng.integers(0, 3, n_rows)

    def fit():
        search = ParallelMLPClassifier(**GRID, **sklearn_mlp_params(ParallelMLPClassifier), cv=5,
                                       ensemble="best", max_iter=100, n_iter_no_change=1000,
                                       random_state=0)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y)
        return time.perf_counter() - start

    fit()  # the kernel's build and the first call
    return min(fit() for _ in range(repeats))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[250, 257, 300, 400])
    parser.add_argument("--targets", default="native")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'target':>10} {'rows':>5} {'~a fold':>7} {'batches':>9} {'seconds':>8}")
    for target in args.targets.split(","):
        os.environ["SKPMLP_KERNEL_TARGET"] = target
        if not kernel_available() or build_info()["built_for"] != target:
            raise SystemExit(f"no kernel for {target}: {build_info()}")
        for n_rows in args.rows:
            fold = n_rows * 4 // 5
            batches = " + ".join(str(min(200, fold - start)) for start in range(0, fold, 200))
            print(f"{target:>10} {n_rows:>5} {fold:>7} {batches:>9} "
                  f"{search_seconds(n_rows, args.repeats):8.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
