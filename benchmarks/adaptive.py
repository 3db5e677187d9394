"""Adaptive searches (``refill``) against plain halving and GridSearchCV, on real data.

Issue 16's table. Data: breast_cancer, digits and wine (scikit-learn's own
copies, no download), split and scaled as ``_real_data.prepare`` does (25 %
test, never seen by a search). Space: ``_real_data.GRID`` (48
configurations), the first population of every skpmlp search.

Per data set, interleaved in one process:

* ``halving``: ``ParallelMLPClassifier(pruning="halving")`` on the grid,
  ``refit=False``; its wall time ``T`` is the budget of the next two;
* ``sample`` and ``perturb``: the same search with ``refill="sample"`` /
  ``refill="perturb"`` and ``max_time=T`` (equal wall time);
* ``GridSearchCV(MLPClassifier(), GRID, cv=5, n_jobs=-1)``.

All skpmlp searches hold out ``validation_fraction=0.2`` of the training
part, select by validation score (``selection="score"``), and are judged by
the exported best row's accuracy on the test part (no refit: the adaptive
ones have no time left for one); GridSearchCV by its refitted best
estimator. ``occ`` is the fraction of slot-epochs trained out of the
network's slots x the epochs run (``occ@refill``: over the epochs in which
refills could happen, before ``max_iter - min_iter``), from ``cv_results_``
(``n_iter``, ``start_iter``). Targets (issue 16): ``sample`` and ``perturb``
best validation score >= halving's and test score at most 0.005 below it on
average; the best adaptive test score >= GridSearchCV's in <= 1/20 of its
time on average; occupancy >= 90 %.

Usage::

    python benchmarks/adaptive.py              # max_iter=200
    python benchmarks/adaptive.py --quick      # max_iter=50

Writes ``benchmarks/results/adaptive.json``.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import warm_gridsearch  # noqa: E402
from _real_data import CV, GRID, SEED, machine, prepare, timed  # noqa: E402

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params  # noqa: E402

#: every skpmlp model scikit-learn's MLP with the same hyperparameters (the
#: searches' own defaults of input_transform, dropout and beta_2 are not)
SKLEARN = sklearn_mlp_params()

DATASETS = ["breast_cancer", "digits", "wine"]


def occupancy(results, max_iter, min_iter):
    """(over the epochs run, over the epochs that could refill) fraction of
    slot-epochs trained, holdout searches (one fold)."""
    start = np.asarray(results.get("start_iter", np.zeros(len(results["n_iter"]))), dtype=int)
    n_iter = np.asarray(results["n_iter"], dtype=int)
    seats = int((start == 0).sum())
    epochs = int((start + n_iter).max())
    trained = np.zeros(epochs)
    for s, n in zip(start, n_iter):
        trained[s : s + n] += 1
    window = max(1, min(epochs, max_iter - min_iter))
    return float(trained.sum() / (seats * epochs)), float(trained[:window].sum() / (seats * window))


def skpmlp_search(X, y, X_test, y_test, max_iter, **params):
    search = ParallelMLPClassifier(
        **GRID, **SKLEARN, pruning="halving", max_iter=max_iter, validation_fraction=0.2, selection="score",
        refit=False, random_state=SEED, **params,
    )
    _, seconds = timed(lambda: search.fit(X, y))
    results = search.cv_results_
    best = search.export_model(search.best_index_)
    whole, window = occupancy(results, max_iter, search.min_iter)
    return {
        "seconds": seconds, "models": len(results["params"]), "best_val": float(search.best_score_),
        "test": float(best.score(X_test, y_test)), "occupancy": whole, "occupancy_refill": window,
        "epochs": int((np.asarray(results.get("start_iter", 0)) + results["n_iter"]).max()),
    }


def grid_search(X, y, X_test, y_test, max_iter):
    search = GridSearchCV(MLPClassifier(max_iter=max_iter, random_state=SEED), GRID, cv=CV, n_jobs=-1)
    _, seconds = timed(lambda: search.fit(X, y))
    return {"seconds": seconds, "best_val": float(search.best_score_),
            "test": float(search.best_estimator_.score(X_test, y_test))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    max_iter = 50 if args.quick else 200
    print(machine(), flush=True)
    header = f"{'data':<14} {'search':<9} {'seconds':>8} {'models':>6} {'epochs':>6} {'val':>7} {'test':>7} " \
             f"{'occ':>6} {'occ@refill':>10}"
    rows = []
    warm_gridsearch(-1)  # GridSearchCV's worker start is no data set's time
    for name in args.datasets:
        task, X, X_test, y, y_test = prepare(name)
        assert task == "classification"
        skpmlp_search(X, y, X_test, y_test, 5)  # warm-up: kernel load, first-call costs
        halving = skpmlp_search(X, y, X_test, y_test, max_iter)
        budget = halving["seconds"]
        found = {"halving": halving}
        for refill in ("sample", "perturb"):
            found[refill] = skpmlp_search(X, y, X_test, y_test, max_iter, refill=refill, max_time=budget)
        found["gridsearch"] = grid_search(X, y, X_test, y_test, max_iter)
        print(header)
        for search, row in found.items():
            row = {"data": name, "search": search, **row}
            rows.append(row)
            print(f"{name:<14} {search:<9} {row['seconds']:>8.2f} {row.get('models', 48):>6} "
                  f"{row.get('epochs', max_iter):>6} {row['best_val']:>7.4f} {row['test']:>7.4f} "
                  f"{row.get('occupancy', float('nan')):>6.1%} {row.get('occupancy_refill', float('nan')):>10.1%}",
                  flush=True)

    def of(search, field):
        return {r["data"]: r[field] for r in rows if r["search"] == search}

    summary = {}
    for refill in ("sample", "perturb"):
        val_gain = [of(refill, "best_val")[d] - of("halving", "best_val")[d] for d in args.datasets]
        test_gap = [of(refill, "test")[d] - of("halving", "test")[d] for d in args.datasets]
        summary[refill] = {
            "val_ge_halving": all(g >= 0 for g in val_gain), "val_gain": val_gain,
            "mean_test_gap_vs_halving": statistics.mean(test_gap),
            "mean_occupancy": statistics.mean(of(refill, "occupancy").values()),
            "mean_occupancy_refill": statistics.mean(of(refill, "occupancy_refill").values()),
        }
    best_adaptive = {d: max(of("sample", "test")[d], of("perturb", "test")[d]) for d in args.datasets}
    summary["vs_gridsearch"] = {
        "mean_test_gap": statistics.mean(best_adaptive[d] - of("gridsearch", "test")[d] for d in args.datasets),
        "mean_time_fraction": statistics.mean(
            max(of("sample", "seconds")[d], of("perturb", "seconds")[d]) / of("gridsearch", "seconds")[d]
            for d in args.datasets
        ),
    }
    print()
    for refill in ("sample", "perturb"):
        s = summary[refill]
        print(f"{refill}: best val >= halving on every data set: {s['val_ge_halving']} "
              f"(gains {np.round(s['val_gain'], 4).tolist()}); mean test gap vs halving "
              f"{s['mean_test_gap_vs_halving']:+.4f} (target >= -0.005); occupancy "
              f"{s['mean_occupancy']:.1%} over the run, {s['mean_occupancy_refill']:.1%} while refilling "
              f"(target >= 90%)")
    g = summary["vs_gridsearch"]
    print(f"best adaptive vs GridSearchCV: mean test gap {g['mean_test_gap']:+.4f} (target >= 0), "
          f"time {g['mean_time_fraction']:.3f} of GridSearchCV's (target <= 0.05)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "adaptive.json").write_text(json.dumps(
        {"machine": machine(), "max_iter": max_iter, "rows": rows, "summary": summary}, indent=2, default=str))
    print(f"wrote {out / 'adaptive.json'}")


if __name__ == "__main__":
    main()
