"""
K-fold cross-validation of a whole search in one fused run
===========================================================

With ``cv=5`` every model of the search is trained once per fold, and all
the fold replicas of all the models train together as one fused network.
The result is a ``cv_results_`` table in ``GridSearchCV``'s schema, so the
usual pandas leaderboard works, and a configuration's scores can be set
next to the ones scikit-learn's own ``GridSearchCV(MLPClassifier())`` gives.
"""

# %%
# The data
# --------
# The breast cancer data (569 tumours, 30 features, two classes),
# standardized. The scaler is fitted on all the rows to keep the example
# short; inside a real cross-validation it belongs in a ``Pipeline``.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params
from skpmlp.model_selection import fused_cross_validate

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
warnings.simplefilter("ignore", ConvergenceWarning)  # short training on purpose

# %%
# Five folds, 24 configurations, one run
# --------------------------------------
# 3 architectures x 2 activations x 2 learning rates x 2 penalties = 24
# configurations. ``cv`` takes what ``GridSearchCV`` takes; a fixed
# splitter lets scikit-learn use exactly the same folds below. 24 x 5 = 120
# fold replicas train in one fused network, and the best configuration is
# then refitted on all the rows (``refit=True``).
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
search = ParallelMLPClassifier(
    hidden_layer_sizes=[(8,), (32,), (16, 16)],
    activation=("relu", "tanh"),
    learning_rate_init=(0.001, 0.01),
    alpha=(1e-4, 1e-1),
    max_iter=60,
    cv=cv,
    random_state=0,
    **sklearn_mlp_params(),  # scikit-learn's MLPs, to set next to GridSearchCV's below
)
start = time.perf_counter()
search.fit(X, y)
fused_seconds = time.perf_counter() - start
print(f"{search.n_models_} configurations x {search.n_splits_} folds "
      f"trained in {fused_seconds:.1f} s")
print(f"best: {search.best_params_}, mean CV accuracy {search.best_score_:.4f}")

# %%
# The leaderboard
# ---------------
# Mean and standard deviation of the test accuracy over the five folds, and
# the number of epochs each model trained (``n_iter``, the most over its
# fold replicas; ``search.n_iter_per_model_`` has one column per fold).
results = pd.DataFrame(search.cv_results_)
columns = ["param_hidden_layer_sizes", "param_activation", "param_learning_rate_init",
           "param_alpha", "mean_test_score", "std_test_score", "n_iter", "rank_test_score"]
leaderboard = results.sort_values("rank_test_score")[columns]
print(leaderboard.head(8).to_string(index=False))

# %%
# Scores per fold of the top eight configurations: the spread between folds
# is often as large as the gap between configurations, which is what the
# standard deviation column warns about.
top = leaderboard.index[:8]
split_columns = [f"split{k}_test_score" for k in range(search.n_splits_)]
fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
for rank, row in enumerate(top):
    ax.scatter(np.full(5, rank), results.loc[row, split_columns], color="tab:blue", s=14)
    ax.errorbar(rank, results.loc[row, "mean_test_score"], yerr=results.loc[row, "std_test_score"],
                color="black", capsize=4, marker="_", markersize=14)
ax.set_xticks(range(len(top)), [f"#{r + 1}" for r in range(len(top))])
ax.set(xlabel="configuration (by rank)", ylabel="test accuracy per fold",
       title="Top configurations: fold scores, mean ± std")

# %%
# Cross-validation without refitting
# ----------------------------------
# :func:`~skpmlp.model_selection.fused_cross_validate` is ``cross_validate``
# for the whole search space: one fused run, the table back, nothing refitted
# and the estimator left untouched. Here with two scorers at once.
start = time.perf_counter()
table = fused_cross_validate(search, X, y, cv=cv, scoring=["accuracy", "roc_auc"])
print(f"fused_cross_validate: {time.perf_counter() - start:.1f} s")
table = pd.DataFrame(table).sort_values("rank_test_roc_auc")
columns = ["param_hidden_layer_sizes", "param_activation", "param_learning_rate_init",
           "param_alpha", "mean_test_accuracy", "mean_test_roc_auc"]
print(table[columns].head(5).to_string(index=False))

# %%
# Next to scikit-learn's GridSearchCV
# -----------------------------------
# The four best configurations, cross-validated again by
# ``GridSearchCV(MLPClassifier())`` on the same folds. (Only four, to keep
# the example short: scikit-learn trains the 20 fits one after another.)
# scikit-learn's MLP starts from other random weights, so the scores agree
# up to seed noise, not exactly.
grid = [{name: [value] for name, value in search.cv_results_["params"][row].items()}
        for row in leaderboard.index[:4]]
sk_search = GridSearchCV(
    MLPClassifier(max_iter=60, batch_size=min(200, len(X)), random_state=0), grid, cv=cv,
)
start = time.perf_counter()
sk_search.fit(X, y)
sk_seconds = time.perf_counter() - start
print(f"GridSearchCV: {len(grid)} configurations x 5 folds in {sk_seconds:.1f} s "
      f"(skpmlp: {search.n_models_} configurations x 5 folds in {fused_seconds:.1f} s)")

sk_results = pd.DataFrame(sk_search.cv_results_)
comparison = pd.DataFrame({
    "configuration": [str(p) for p in sk_results["params"]],
    "skpmlp mean": leaderboard["mean_test_score"].to_numpy()[:4],
    "sklearn mean": sk_results["mean_test_score"].to_numpy(),
    "skpmlp std": leaderboard["std_test_score"].to_numpy()[:4],
    "sklearn std": sk_results["std_test_score"].to_numpy(),
})
print(comparison.to_string(index=False, float_format="%.4f"))

# %%
# The columns line up
# -------------------
# Both tables use the same keys; skpmlp only adds a few of its own
# (``param_repeat``, the repeat index of a model, and ``n_iter``, its
# epochs). So code written for ``GridSearchCV.cv_results_`` reads skpmlp's
# table unchanged.
ours, theirs = set(search.cv_results_), set(sk_search.cv_results_)
print("keys in both tables:", len(ours & theirs))
print("only in GridSearchCV's:", sorted(theirs - ours))
print("only in skpmlp's:", sorted(ours - theirs))
