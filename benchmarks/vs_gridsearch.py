"""skpmlp's fused cv=5 search against GridSearchCV(MLPClassifier()) on the same grid.

Grid: 4 widths x scikit-learn's 4 activations x 3 learning rates x 2 alphas
(96 configurations), 5-fold stratified CV, on scikit-learn's digits and
breast-cancer data. Both searches use the same defaults (adam, max_iter=200,
tol=1e-4, n_iter_no_change=10, batch_size="auto").

Reports wall time and best mean_test_score of both, their ratio, and the
Spearman rank correlation of the two mean_test_score columns (rows matched by
parameters).

Usage::

    python benchmarks/vs_gridsearch.py            # both data sets
    python benchmarks/vs_gridsearch.py --quick    # breast cancer only, max_iter=50

Writes ``benchmarks/results/vs_gridsearch.json``.
"""

import argparse
import json
import time
import warnings
from pathlib import Path

from scipy.stats import spearmanr
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from skpmlp import ParallelMLPClassifier

GRID = {
    "hidden_layer_sizes": [(25,), (50,), (100,), (200,)],
    "activation": ["identity", "logistic", "tanh", "relu"],
    "learning_rate_init": [0.001, 0.003, 0.01],
    "alpha": [0.0001, 0.01],
}


def datasets(quick):
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", StandardScaler().fit_transform(X), y
    if not quick:
        X, y = load_digits(return_X_y=True)
        yield "digits", MinMaxScaler().fit_transform(X), y


def key(params):
    return tuple(sorted((k, v) for k, v in params.items()))


def run(name, X, y, max_iter, n_jobs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        ours = ParallelMLPClassifier(**GRID, cv=5, max_iter=max_iter, random_state=0).fit(X, y)
        ours_seconds = time.perf_counter() - start
        start = time.perf_counter()
        grid = GridSearchCV(
            MLPClassifier(max_iter=max_iter, random_state=0), GRID, cv=5, n_jobs=n_jobs
        ).fit(X, y)
        grid_seconds = time.perf_counter() - start
    ours_scores = {key(p): s for p, s in zip(ours.cv_results_["params"], ours.cv_results_["mean_test_score"])}
    grid_scores = {key(p): s for p, s in zip(grid.cv_results_["params"], grid.cv_results_["mean_test_score"])}
    keys = sorted(grid_scores)
    rho = spearmanr([ours_scores[k] for k in keys], [grid_scores[k] for k in keys]).statistic
    return {
        "dataset": name, "n_samples": X.shape[0], "n_features": X.shape[1],
        "configurations": len(keys), "folds": 5, "max_iter": max_iter,
        "gridsearch_seconds": grid_seconds, "skpmlp_seconds": ours_seconds,
        "speedup": grid_seconds / ours_seconds,
        "gridsearch_best_score": float(grid.best_score_), "skpmlp_best_score": float(ours.best_score_),
        "score_gap": float(grid.best_score_ - ours.best_score_),
        "spearman": float(rho),
        "gridsearch_best_params": grid.best_params_, "skpmlp_best_params": ours.best_params_,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=-1, help="GridSearchCV's n_jobs")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    max_iter = 50 if args.quick else 200
    rows = [run(name, X, y, max_iter, args.n_jobs) for name, X, y in datasets(args.quick)]
    head = f"{'data':<14} {'GridSearchCV':>13} {'skpmlp':>9} {'speedup':>8} {'best GSCV':>10} {'best ours':>10} {'gap':>7} {'spearman':>9}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['dataset']:<14} {r['gridsearch_seconds']:>12.1f}s {r['skpmlp_seconds']:>8.1f}s "
            f"{r['speedup']:>7.1f}x {r['gridsearch_best_score']:>10.4f} {r['skpmlp_best_score']:>10.4f} "
            f"{r['score_gap']:>7.4f} {r['spearman']:>9.3f}"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vs_gridsearch.json").write_text(json.dumps(rows, indent=2, default=str))
    print(f"wrote {out / 'vs_gridsearch.json'}")


if __name__ == "__main__":
    main()
