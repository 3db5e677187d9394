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
* ``pruning="halving"``;
* the default search on "the 500-row CSV with 8 columns that most people
  bring" (the issue's common case: ``make_classification``, 3 classes).

Each figure is the best of ``--repeats`` fits after a warm-up fit, in one
process. With ``--profile`` it also runs each fit once more with the
native kernel's calls (its training epochs, its forward, the L-BFGS step)
timed, and prints their share of that fit's wall time: the rest is Python,
torch ops and numpy around them. With ``--parts``, ``--repeats`` more fits
with each part of :data:`PARTS` timed (inclusive: a part inside another
counts in both), and each part's share of the fits' wall time. To compare
two checkouts, run the script of each in turn, a few times, alternating.

Usage::

    python benchmarks/small_fits.py
    python benchmarks/small_fits.py --cases es_iris es_diabetes_best --profile
    python benchmarks/small_fits.py --cases halving_iris --parts

Writes ``benchmarks/results/small_fits.json``.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import torch
from sklearn.datasets import load_diabetes, load_iris, make_classification

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import KERNEL_CALLS, kernel_clock, part_clocks  # noqa: E402

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor  # noqa: E402


def csv_like(return_X_y=True):
    """The common case: 500 rows, 8 numeric columns, 3 classes."""
    return make_classification(500, 8, n_informative=5, n_classes=3, random_state=0)


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
    "default_csv500": (lambda: ParallelMLPClassifier(random_state=0), csv_like),
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


#: ``--parts``: the parts of a fit timed apart, (module, attribute) pairs
#: each (see ``_harness.part_clocks``); what ``search`` leaves of the fit
#: is the choice of the returned model (ensembles, refits)
PARTS = {
    "plan (folds, input transforms' fits)": [("skpmlp._search._run", "plan_search")],
    "  input transforms' fits": [("skpmlp._search._plan", "InputTransforms.fit")],
    "input transforms' copies": [("skpmlp._search._inputs", "InputTransforms.inputs")],
    "trainers' set-up (networks, weights)": [("skpmlp._engine._minibatch._run",
                                              "FusedRun._ensure_live")],
    "batch plans": [("skpmlp._engine._minibatch._batches", "BatchPlanner.next_epochs")],
    "batches' gathering": [("skpmlp._engine._backends._native", "kernel_batches")],
    "kernel calls": list(KERNEL_CALLS),
    "epochs' bookkeeping": [("skpmlp._engine._minibatch._run", "close_epoch"),
                            ("skpmlp._engine._minibatch._run", "FusedRun._replay")],
    "scoring the folds": [("skpmlp._search._run", "score_folds")],
    "search": [("skpmlp._estimators._base", "search")],
}


def part_shares(make, X, y, repeats):
    """Each of :data:`PARTS`' share of a fit's wall time (over ``repeats``
    fits), and what ``search`` leaves: the returned model's choice."""
    with part_clocks(PARTS) as seconds:
        start = time.perf_counter()
        for _ in range(repeats):
            make().fit(X, y)
        total = time.perf_counter() - start
    shares = {label: value / total for label, value in seconds.items()}
    shares["choice of the model (ensembles, refits)"] = 1 - shares.pop("search")
    return shares


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true",
                        help="also print the kernel calls' share of a fit's wall time")
    parser.add_argument("--parts", action="store_true",
                        help="also print each part's share of a fit's wall time (PARTS)")
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
        if args.parts:
            row["parts"] = part_shares(make, X, y, args.repeats)
            for label, value in row["parts"].items():
                print(f"    {label:<42} {value:6.1%}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"threads": torch.get_num_threads(), "rows": rows},
                                         indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
