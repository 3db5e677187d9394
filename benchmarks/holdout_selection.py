"""How the default holdout search (``cv=None``) picks its model, judged on test data.

(This was ``selection.py`` until issue 30; ``selection.py`` now compares the
searches and RealMLP-TD on 14 data sets. The figures in the cross-validation
user guide's "Choosing the model" come from this script.)

The data sets, split and 48-configuration grid of ``vs_gridsearch.py``
(``_real_data.py``: breast_cancer, digits, iris, wine, diabetes; 25 % test
split no search sees). For each data set it trains, on the training part:

* ``default``: a default ``MLPClassifier()`` / ``MLPRegressor()``
  (``random_state=0``);
* ``gscv``: ``GridSearchCV(MLP..., GRID, cv=5)``, its best estimator (refit on
  the whole training part);
* ``skpmlp cv=5``: the fused search with ``cv=5`` (only without ``--quick``);
* the fused holdout search with the estimators' defaults (``cv=None``,
  ``validation_fraction=0.1``), fitted once per seed, and assembled from that
  same fit (``export_model(i)`` and each configuration retrained alone, see
  :func:`holdout_variants`), every combination of

  - refit: ``norefit`` returns the models trained on the 90 % training part
    (``holdout_refit=False``); ``refit`` retrains each chosen configuration
    on all the training rows for its ``n_iter_`` epochs
    (``holdout_refit=True``);
  - the selection criterion: accuracy / R^2 with ties by row order
    (``first``: ``tie_breaker=None``, GridSearchCV's rule), accuracy / R^2
    with ties by the validation loss (``tie-loss``: ``tie_breaker="loss"``),
    or ranking by the loss itself (``loss``: ``selection="loss"``, as
    ``scoring="neg_log_loss"`` / ``"neg_mean_squared_error"`` would rank);
  - ``ensemble_size`` 1, 3 and 5 (the top models' mean probabilities /
    predictions).

The holdout searches run with ``--seeds`` values of ``random_state`` (the
validation split, the initial weights and the batch order change; the test
split does not), and their test scores are averaged over the seeds; the
references use ``random_state=0``. Everything else is left at both
libraries' defaults (``max_iter=200``, adam, no early stopping).

It prints per data set the test score (accuracy / R^2) of every variant,
then per variant the mean over the data sets, its gap to GridSearchCV and
its worst gap to the default MLP, and the issue's targets for the
estimators' defaults (mean gap to GridSearchCV >= -0.005, no data set more
than 0.01 below the default MLP). Times are wall seconds of ``fit`` taken in
the same run (pin the threads, e.g. ``OMP_NUM_THREADS=2``, and read them as
ratios: the machines are shared).

Usage::

    OMP_NUM_THREADS=2 python benchmarks/holdout_selection.py           # five data sets, 5 seeds
    OMP_NUM_THREADS=2 python benchmarks/holdout_selection.py --quick   # breast_cancer and diabetes, 1 seed, max_iter=50

Writes ``benchmarks/results/holdout_selection.json``
(``holdout_selection_quick.json`` with ``--quick``).
"""

import argparse
import json
import os
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, r2_score
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier, MLPRegressor

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import warm_gridsearch  # noqa: E402
from _real_data import CV, DATASETS, GRID, QUICK, SEED, TEST_SIZE, machine, prepare, timed  # noqa: E402

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, sklearn_mlp_params  # noqa: E402
from skpmlp._search._splits import holdout_split  # noqa: E402
from skpmlp._selection._choice import Selection  # noqa: E402

TARGET_GAP_GSCV = 0.005
TARGET_GAP_DEFAULT = 0.01
CRITERIA = ("first", "tie_loss", "rank_loss")
ENSEMBLE_SIZES = (1, 3, 5)


#: The holdout search (``cv="auto"`` now trains folds on small data, and
#: ``ensemble="auto"`` then a greedy ensemble): one validation part, the
#: best configuration.
HOLDOUT = {"cv": None, "ensemble": "best"}


def variant_name(refit, criterion, ensemble_size):
    return f"{'refit' if refit else 'norefit'}/{criterion}/ens{ensemble_size}"


def default_variant():
    """The variant the estimators' holdout defaults amount to."""
    search = ParallelMLPClassifier(**HOLDOUT)
    params = search.get_params()
    # the holdout's choice settings (cv=None), as the search resolves them
    selection = Selection.of(search, None)
    if selection.criterion == "loss":
        criterion = "rank_loss"
    else:
        criterion = "tie_loss" if params["tie_breaker"] == "loss" else "first"
    return variant_name(params["holdout_refit"], criterion, selection.ensemble_size)


def selection_order(ranks, losses, criterion):
    """Rows best first: by rank with ties by row order (``first``, the
    ``tie_breaker=None`` rule), by rank with ties by the validation loss
    (``tie_loss``, ``tie_breaker="loss"``), or by the loss alone
    (``rank_loss``, ``selection="loss"``)."""
    losses = np.nan_to_num(losses, nan=np.inf)
    rows = np.arange(len(ranks))
    keys = {"first": (rows, ranks), "tie_loss": (rows, losses, ranks), "rank_loss": (rows, losses)}[criterion]
    return np.lexsort(keys)


def holdout_variants(search, task, X_train, y_train, X_test, y_test):
    """Test score of every variant, from one fitted holdout search.

    The search is trained once; the variants differ only in which trained
    models they pick and whether they retrain them, so they are assembled
    here from its public pieces: ``export_model(i)`` is row i's model
    trained on the training part (no refit), and a refit is that model's
    configuration trained alone on all the training rows for its
    ``n_iter_per_model_[i]`` epochs, as ``holdout_refit=True`` does (tested equal in
    tests/selection/test_selection.py). The validation rows are the search's own
    (they depend only on the seed and y)."""
    classifier = task == "classification"
    labels = np.unique(y_train, return_inverse=True)[1] if classifier else np.zeros(len(y_train), dtype=int)
    _, val = holdout_split(labels, search.validation_fraction, search.random_state, stratify=classifier)
    held_out = [search.export_model(i) for i in range(search.n_models_)]
    if classifier:
        losses = np.array([log_loss(y_train[val], m.predict_proba(X_train[val]), labels=search.classes_)
                           for m in held_out])
    else:
        losses = np.array([mean_squared_error(y_train[val], m.predict(X_train[val])) for m in held_out])
    ranks = search.cv_results_["rank_test_score"]
    refits = {}

    def refit(i):
        if i not in refits:
            n = int(search.n_iter_per_model_[i])
            refits[i] = clone(held_out[i]).set_params(max_iter=n, n_iter_no_change=n).fit(X_train, y_train)
        return refits[i]

    def test_score(models):
        if classifier:
            proba = np.mean([m.predict_proba(X_test) for m in models], axis=0)
            return accuracy_score(y_test, search.classes_[proba.argmax(1)])
        return r2_score(y_test, np.mean([m.predict(X_test) for m in models], axis=0))

    scores, picks = {}, {}
    for criterion in CRITERIA:
        order = selection_order(ranks, losses, criterion)
        picks[criterion] = int(order[0])
        for size in ENSEMBLE_SIZES:
            members = order[:size]
            scores[variant_name(False, criterion, size)] = test_score([held_out[i] for i in members])
            scores[variant_name(True, criterion, size)] = test_score([refit(i) for i in members])
    tied = int(np.sum(ranks == 1))
    return scores, picks, tied


def run(name, max_iter, seeds, n_jobs, with_cv):
    task, X_train, X_test, y_train, y_test = prepare(name)
    search_class, single = (
        (ParallelMLPClassifier, MLPClassifier) if task == "classification"
        else (ParallelMLPRegressor, MLPRegressor)
    )
    row = {"dataset": name, "task": task, "n_train": X_train.shape[0], "n_test": X_test.shape[0],
           "n_features": X_train.shape[1], "score": "accuracy" if task == "classification" else "r2"}
    default, seconds = timed(lambda: single(random_state=SEED).fit(X_train, y_train))
    row["default"] = {"test": float(default.score(X_test, y_test)), "seconds": seconds}
    grid, seconds = timed(lambda: GridSearchCV(
        single(max_iter=max_iter, random_state=SEED), GRID, cv=CV, n_jobs=n_jobs,
    ).fit(X_train, y_train))
    row["gscv"] = {"test": float(grid.best_estimator_.score(X_test, y_test)), "seconds": seconds,
                   "best_cv": float(grid.best_score_), "best_params": grid.best_params_}
    if with_cv:
        ours, seconds = timed(lambda: search_class(**GRID, **sklearn_mlp_params(search_class), cv=CV, max_iter=max_iter, random_state=SEED)
                              .fit(X_train, y_train))
        row["skpmlp_cv5"] = {"test": float(ours.best_estimator_.score(X_test, y_test)), "seconds": seconds,
                             "best_cv": float(ours.best_score_), "best_params": ours.best_params_}
    runs = []
    for seed in seeds:
        # the estimators' holdout defaults, as a user runs them
        search, seconds = timed(lambda: search_class(**GRID, **sklearn_mlp_params(search_class), **HOLDOUT,
                                                     max_iter=max_iter, random_state=seed)
                                .fit(X_train, y_train))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            scores, picks, tied = holdout_variants(search, task, X_train, y_train, X_test, y_test)
        runs.append({
            "seed": seed, "seconds": seconds, "refit_seconds": float(search.refit_time_),
            "test": float(search.score(X_test, y_test)), "best_score": float(search.best_score_),
            "best_index": int(search.best_index_), "best_params": search.best_params_,
            "tied_at_best": tied, "picks": picks, "variants": scores,
        })
    row["skpmlp_default"] = {
        "test": statistics.fmean(r["test"] for r in runs),
        "seconds": statistics.median(r["seconds"] for r in runs),
        "tied_at_best": statistics.fmean(r["tied_at_best"] for r in runs),
        "runs": runs,
    }
    row["variants"] = {
        name: {"test": statistics.fmean(r["variants"][name] for r in runs),
               "test_std": statistics.pstdev(r["variants"][name] for r in runs)}
        for name in runs[0]["variants"]
    }
    return row


def summarise(rows):
    """Per variant: mean test score over the data sets, its gap to
    GridSearchCV's, and the worst gap to the default MLP."""
    summary = {}
    for name in rows[0]["variants"]:
        tests = [r["variants"][name]["test"] for r in rows]
        summary[name] = {
            "mean_test": statistics.fmean(tests),
            "gap_gscv": statistics.fmean(t - r["gscv"]["test"] for t, r in zip(tests, rows)),
            "worst_gap_default": min(t - r["default"]["test"] for t, r in zip(tests, rows)),
        }
    return summary


def print_tables(rows, summary, chosen):
    short = {"first": "first", "tie_loss": "tie-loss", "rank_loss": "loss"}
    names = list(rows[0]["variants"])
    print("\nTest score per data set (holdout variants: mean over seeds)")
    head = f"{'variant':<26}" + "".join(f"{r['dataset']:>14}" for r in rows) + f"{'mean':>9}"
    print(head)
    print("-" * len(head))
    refs = [("default MLP", "default"), ("GridSearchCV cv=5", "gscv"), ("skpmlp defaults (fit)", "skpmlp_default")]
    if "skpmlp_cv5" in rows[0]:
        refs.append(("skpmlp cv=5", "skpmlp_cv5"))
    for label, k in refs:
        tests = [r[k]["test"] for r in rows]
        print(f"{label:<26}" + "".join(f"{t:>14.4f}" for t in tests) + f"{statistics.fmean(tests):>9.4f}")
    for name in names:
        refit, criterion, size = name.split("/")
        label = f"{refit} {short[criterion]} {size}" + (" *" if name == chosen else "")
        tests = [r["variants"][name]["test"] for r in rows]
        print(f"{label:<26}" + "".join(f"{t:>14.4f}" for t in tests) + f"{statistics.fmean(tests):>9.4f}")
    print("\nPer variant over the data sets")
    head = f"{'variant':<26}{'mean test':>10}{'- GSCV':>9}{'worst - dflt':>14}"
    print(head)
    print("-" * len(head))
    for name, s in summary.items():
        refit, criterion, size = name.split("/")
        label = f"{refit} {short[criterion]} {size}" + (" *" if name == chosen else "")
        print(f"{label:<26}{s['mean_test']:>10.4f}{s['gap_gscv']:>+9.4f}{s['worst_gap_default']:>+14.4f}")
    print("\nSeconds per fit (same run; skpmlp: median over seeds, its refit included)")
    head = f"{'data':<14}{'default MLP':>12}{'GSCV':>9}{'skpmlp':>9}{'GSCV/skpmlp':>13}{'ties':>7}"
    print(head)
    print("-" * len(head))
    for r in rows:
        ours = r["skpmlp_default"]
        print(f"{r['dataset']:<14}{r['default']['seconds']:>12.2f}{r['gscv']['seconds']:>9.1f}"
              f"{ours['seconds']:>9.2f}{r['gscv']['seconds'] / ours['seconds']:>12.1f}x"
              f"{ours['tied_at_best']:>7.1f}")
    print("ties: models tied at the best validation accuracy / R^2 (rank 1), mean over seeds")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="breast_cancer and diabetes, one seed, max_iter=50, no skpmlp cv=5")
    parser.add_argument("--datasets", nargs="+", choices=sorted(DATASETS), help="override the data sets")
    parser.add_argument("--max-iter", type=int, help="default: 200 (50 with --quick)")
    parser.add_argument("--seeds", type=int, help="random_state values 0..N-1 of the holdout searches "
                        "(default: 5, 1 with --quick)")
    parser.add_argument("--n-jobs", type=int, default=-1, help="GridSearchCV's n_jobs")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    max_iter = args.max_iter or (50 if args.quick else 200)
    seeds = list(range(args.seeds or (1 if args.quick else 5)))
    names = args.datasets or (QUICK if args.quick else list(DATASETS))
    info = machine()
    chosen = default_variant()
    print(f"holdout searches (cv=None, validation_fraction=0.1) over {len(GRID['hidden_layer_sizes']) * 12} "
          f"configurations, max_iter={max_iter}, seeds {seeds}; GridSearchCV cv={CV} n_jobs={args.n_jobs}; "
          f"{info['cpu_count']} CPUs, OMP_NUM_THREADS={info['OMP_NUM_THREADS']}, "
          f"load average {info['load_average'][0]:.2f}; * = the estimators' defaults ({chosen})")
    rows = []
    warm_gridsearch(args.n_jobs)  # its worker start is no data set's time
    for name in names:
        rows.append(run(name, max_iter, seeds, args.n_jobs, with_cv=not args.quick))
        print(f"  {name} done", flush=True)
    summary = summarise(rows)
    print_tables(rows, summary, chosen)
    s = summary[chosen]
    fit_mean = statistics.fmean(r["skpmlp_default"]["test"] for r in rows)
    print(f"\nskpmlp defaults as fitted: mean test {fit_mean:.4f} (the {chosen} row assembled from the "
          f"same fits: {s['mean_test']:.4f})")
    print(f"defaults ({chosen}): mean test gap to GridSearchCV {s['gap_gscv']:+.4f} (target >= "
          f"-{TARGET_GAP_GSCV}: {'met' if s['gap_gscv'] >= -TARGET_GAP_GSCV else 'missed'}); worst gap to "
          f"the default MLP {s['worst_gap_default']:+.4f} (target >= -{TARGET_GAP_DEFAULT}: "
          f"{'met' if s['worst_gap_default'] >= -TARGET_GAP_DEFAULT else 'missed'})")
    info["load_average_end"] = os.getloadavg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "holdout_selection_quick.json" if args.quick else "holdout_selection.json"
    path = out / name
    payload = {"machine": info, "grid": GRID, "cv": CV, "test_size": TEST_SIZE, "max_iter": max_iter,
               "seeds": seeds, "defaults": chosen, "summary": summary, "rows": rows}
    path.write_text(json.dumps(payload, indent=2, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
