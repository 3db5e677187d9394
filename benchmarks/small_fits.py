"""Where a small search's wall time goes: the kernel, or the Python around it.

Issue 39 (item 2) asks for the whole fit of a small search, not only its
kernel, to run at the machine's limit. This script times whole ``fit``
calls of small searches as a user runs them (iris, 150 rows and 4
features; diabetes, 442 rows and 10 features; the default space, 5 folds):

* the default search (no early stopping: the kernel trains several epochs
  per call);
* ``early_stopping=True`` (every epoch ends with every model scored on its
  validation rows);
* ``early_stopping=True, restore_best_weights=True`` (each model also keeps
  its best epoch's weights);
* ``pruning="halving"``.

Each figure is the best of ``--repeats`` fits after a warm-up fit, in one
process. With ``--profile`` it also runs each fit once more with the
native kernel's calls (its training epochs, its forward, the L-BFGS step)
timed, and prints their share of that fit's wall time: the rest is Python,
torch ops and numpy around them. To compare two checkouts, run the script
of each in turn, a few times, alternating.

Usage::

    python benchmarks/small_fits.py
    python benchmarks/small_fits.py --cases es_iris es_diabetes_best --profile

Writes ``benchmarks/results/small_fits.json``.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import torch
from sklearn.datasets import load_diabetes, load_iris

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import kernel_clock  # noqa: E402

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor  # noqa: E402

#: name -> (estimator factory, data loader)
CASES = {
    "default_iris": (lambda: ParallelMLPClassifier(random_state=0), load_iris),
    "default_diabetes": (lambda: ParallelMLPRegressor(random_state=0), load_diabetes),
    "es_iris": (lambda: ParallelMLPClassifier(early_stopping=True, random_state=0), load_iris),
    "es_diabetes_best": (lambda: ParallelMLPRegressor(early_stopping=True,
                                                      restore_best_weights=True,
                                                      random_state=0), load_diabetes),
    "halving_iris": (lambda: ParallelMLPClassifier(pruning="halving", random_state=0),
                     load_iris),
}


def fit_seconds(make, X, y, repeats):
    """The best of ``repeats`` timed fits, after a warm-up fit."""
    make().fit(X, y)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        make().fit(X, y)
        best = min(best, time.perf_counter() - start)
    return best


def kernel_share(make, X, y):
    """The fraction of one fit's wall time spent inside the kernel's calls
    (:func:`_harness.kernel_clock`)."""
    with kernel_clock() as inside:
        start = time.perf_counter()
        make().fit(X, y)
        total = time.perf_counter() - start
    return inside[0] / total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true",
                        help="also print the kernel calls' share of a fit's wall time")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"
                                             / "small_fits.json"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    print(f"torch threads {torch.get_num_threads()}; best of {args.repeats} fits")
    for name in args.cases:
        make, load = CASES[name]
        X, y = load(return_X_y=True)
        row = {"case": name, "seconds": fit_seconds(make, X, y, args.repeats)}
        if args.profile:
            row["kernel_share"] = kernel_share(make, X, y)
        rows.append(row)
        share = f"   kernel calls {row['kernel_share']:.0%} of the fit" if args.profile else ""
        print(f"{name:<18} {row['seconds']:.3f} s{share}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"threads": torch.get_num_threads(), "rows": rows},
                                         indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
