"""
A random search of 2,000 sampled MLPs on the digits data
========================================================

``RandomizedSearchCV`` habits, one fused run: every searched parameter may
be a distribution instead of a list, and ``n_models`` sets the budget. Here
2,000 configurations are drawn (depths 1 to 3, log-uniform widths, learning
rates and L2 penalties, five activations) and trained together on the
digits data, with early stopping.

It is one fused run, not 2,000 fits. On the 2-core CPU this was written
on, the whole script used 275 s of CPU time; shared with other jobs (load
average 7 to 12, the script got about a third of a core) it took 12.5
minutes of wall time. A documentation build with
``SKPMLP_EXAMPLES_QUICK=1`` in the environment (as the test suite does)
draws 100 models instead (12 s).
"""

# %%
# The data
# --------
# scikit-learn's bundled 8x8 digits (1,797 images, 10 classes), scaled to
# [0, 1]; a quarter is kept aside as a test set the search never sees.
import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import loguniform
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from skpmlp import LayerSizesDistribution, ParallelMLPClassifier
from skpmlp.plotting import EpochCurvesDisplay

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

N_MODELS = 100 if os.environ.get("SKPMLP_EXAMPLES_QUICK") == "1" else 2000

# %%
# The search space
# ----------------
# Any object with ``rvs(random_state=...)`` is a distribution, as in
# ``RandomizedSearchCV``: ``scipy.stats.loguniform`` for the learning rate and
# the penalty, and :class:`~skpmlp.LayerSizesDistribution` for the
# architecture, which draws a depth from ``depths`` and then each layer's
# width from ``widths`` (float draws are rounded, so ``loguniform(8, 128)``
# gives log-uniform integer widths). Lists are drawn from uniformly.
# ``n_models`` configurations are drawn, reproducibly from ``random_state``.
# The optimizer is searched too: Adam or SGD (Nesterov momentum 0.9), each
# model with its own, in the same fused run.
search = ParallelMLPClassifier(
    hidden_layer_sizes=LayerSizesDistribution(depths=[1, 2, 3], widths=loguniform(8, 128)),
    activation=["relu", "tanh", "logistic", "elu", "gelu"],
    solver=["adam", "sgd"],
    learning_rate_init=loguniform(1e-4, 3e-2),
    alpha=loguniform(1e-6, 1e-1),
    n_models=N_MODELS,
    max_iter=30,
    early_stopping=True,
    n_iter_no_change=5,
    cv=None,  # the holdout: one run per model (cv="auto" would take 5 folds here)
    random_state=0,
)
with warnings.catch_warnings():
    # 30 epochs at most: models still improving stop unconverged
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()
    search.fit(X_train, y_train)
    seconds = time.perf_counter() - start
print(f"{search.n_models_} models trained in {seconds:.0f} s "
      f"({search.cv_results_['n_iter'].mean():.1f} epochs each on average)")
print(f"test accuracy of the best model: {search.score(X_test, y_test):.3f}")

# %%
# The leaderboard
# ---------------
# ``cv_results_["params"]`` holds the drawn values, so the best ones pass
# straight back to an estimator (``set_params(**search.best_params_)``).
results = search.cv_results_
for index in np.argsort(results["rank_test_score"])[:5]:
    params = results["params"][index]
    print(f"{results['mean_test_score'][index]:.3f}  {str(params['hidden_layer_sizes']):<14} "
          f"{params['activation']:<9} lr={params['learning_rate_init']:.2g}  "
          f"alpha={params['alpha']:.2g}")

# %%
# The score against each sampled parameter
# ----------------------------------------
# One dot per model, coloured by depth. Sampling spreads the models over
# the whole range of every parameter instead of a few grid values, so the
# shape of the landscape shows: the learning rate matters most, the
# penalty hardly at all below 1e-2.
scores = results["mean_test_score"]
params = results["params"]
depth = np.array([len(p["hidden_layer_sizes"]) for p in params])
columns = {
    "learning_rate_init": [p["learning_rate_init"] for p in params],
    "alpha": [p["alpha"] for p in params],
    "total hidden width": [sum(p["hidden_layer_sizes"]) for p in params],
}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), sharey=True, layout="constrained")
for ax, (name, values) in zip(axes, columns.items()):
    for d in (1, 2, 3):
        ax.scatter(np.asarray(values)[depth == d], scores[depth == d], s=6, alpha=0.5,
                   label=f"depth {d}")
    ax.set_xscale("log")
    ax.set_xlabel(name)
axes[0].set_ylabel("validation accuracy")
axes[0].set_ylim(max(0.0, np.nanpercentile(scores, 10) - 0.05), 1.0)
axes[-1].legend(markerscale=3)

# %%
# And against the activation, as a box per activation:
activations = ["relu", "tanh", "logistic", "elu", "gelu"]
fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
finite = np.isfinite(scores)  # a diverged model scores NaN
ax.boxplot([scores[finite & [p["activation"] == a for p in params]] for a in activations])
ax.set_xticks(range(1, len(activations) + 1), activations)
ax.set_ylabel("validation accuracy")

# %%
# The learning curves of the five best models
# -------------------------------------------
EpochCurvesDisplay.from_estimator(search, top_k=5)
