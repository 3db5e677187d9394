"""
Early stopping, successive halving and top-k ensembles
======================================================

The same population of MLPs is trained three ways: plainly (each model
stops when its training loss stops improving, or at ``max_iter``), with
``early_stopping=True`` (each model stops when its validation score stops
improving and keeps its best weights) and with ``pruning="halving"``
(successive halving inside the fused run: at a few rungs, only the best
third of the models still training goes on). Then the top five models are
averaged with ``ensemble_size=5``.
"""

# %%
# The data and the population
# ---------------------------
# The digits data, a quarter kept aside as a test set that no search sees.
# 4 widths x 3 activations x 2 learning rates x 2 repeats = 48 models,
# trained for at most 60 epochs.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier
from skpmlp.plotting import EpochCurvesDisplay

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

population = dict(
    cv=None,  # the holdout: one run per model (cv="auto" would take 5 folds here)
    hidden_layer_sizes=[(8,), (16,), (32,), (64,)],
    activation=("relu", "tanh", "logistic"),
    learning_rate_init=(0.003, 0.01),
    n_repeats=2,
    max_iter=60,
    random_state=0,
)

# %%
# Three ways to train it
# ----------------------
# All three hold out the same 10 % of the training rows
# (``validation_fraction``) and rank the models on them.
#
# - ``plain``: the default rule, a plateau of the training loss;
# - ``early stopping``: a plateau of the validation accuracy
#   (more than ``n_iter_no_change=10`` epochs without a gain of ``tol``), best epoch
#   kept;
# - ``halving``: rungs at epochs 5, 15 and 45 (``min_iter=5``,
#   ``halving_factor=3``); at each rung the models still training are
#   ranked by validation accuracy and two thirds of them stop.
settings = {
    "plain": {},
    "early stopping": {"early_stopping": True, "ensemble_size": 5},
    "halving": {"pruning": "halving", "min_iter": 5, "halving_factor": 3},
}
searches, seconds = {}, {}
for name, extra in settings.items():
    search = ParallelMLPClassifier(**population, **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        search.fit(X_train, y_train)
    seconds[name] = time.perf_counter() - start
    searches[name] = search

summary = pd.DataFrame({
    "wall time (s)": seconds,
    "epochs (all models)": {n: int(s.cv_results_["n_iter"].sum()) for n, s in searches.items()},
    "best validation accuracy": {n: s.best_score_ for n, s in searches.items()},
    "test accuracy of the best": {n: s.export_model(s.best_index_).score(X_test, y_test)
                                  for n, s in searches.items()},
})
print(summary.to_string(float_format="%.3f"))

# %%
# Halving trains the fewest epochs by far. Early stopping trains fewer
# epochs than the plain run too, but it also scores every model on the
# validation rows after each epoch and copies the weights of the models
# that improved, so on a problem this small it saves less time than its
# epoch count suggests. The best validation accuracies are within a few
# validation rows of each other (135 rows: one row is 0.007).
#
# Training time and best score of each:
fig, (ax_time, ax_score) = plt.subplots(1, 2, figsize=(8, 3.2), layout="constrained")
colors = ["tab:grey", "tab:blue", "tab:orange"]
ax_time.bar(summary.index, summary["wall time (s)"], color=colors)
ax_time.set(ylabel="seconds", title="Wall time of the fused run")
ax_score.bar(summary.index, summary["best validation accuracy"], color=colors, label="validation")
ax_score.scatter(summary.index, summary["test accuracy of the best"], color="black", zorder=3,
                 label="test")
low = min(summary["best validation accuracy"].min(), summary["test accuracy of the best"].min())
ax_score.set(ylim=(low - 0.02, 1.0), ylabel="accuracy", title="Best model")
ax_score.legend(loc="lower right")

# %%
# When each model stopped
# -----------------------
# ``cv_results_["n_iter"]`` holds the epochs each model trained. Without
# early stopping most models run to ``max_iter``; with it they stop where
# their validation accuracy levels off; with halving most models stop at
# the first rungs, and only a handful of survivors train long.
fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
bins = np.arange(0, population["max_iter"] + 6, 5)
for (name, search), color in zip(searches.items(), colors):
    ax.hist(search.cv_results_["n_iter"], bins=bins, histtype="step", linewidth=2,
            color=color, label=name)
ax.set(xlabel="epochs trained", ylabel="models", title="Epoch at which each model stopped")
ax.legend()

# %%
# Pruned models stay in the table, with the score they had reached when they
# stopped, ranked below every model that trained to the end:
halving = pd.DataFrame(searches["halving"].cv_results_)
print(halving.groupby("pruned")[["n_iter", "mean_test_score"]].agg(["count", "mean", "max"])
      .to_string(float_format="%.3f"))

# %%
# Learning curves
# ---------------
# The five best models with early stopping: training loss and validation
# accuracy per epoch, each curve ending where its model stopped.
EpochCurvesDisplay.from_estimator(searches["early stopping"], top_k=5)

# %%
# Averaging the top five
# ----------------------
# The early-stopping search above was fitted with ``ensemble_size=5``: its
# ``best_estimator_`` is an :class:`~skpmlp.MLPEnsembleClassifier` that
# averages the class probabilities of the five top-ranked models, and
# ``predict`` / ``score`` use it. The models were trained anyway, so the
# ensemble costs only their predictions. ``export_model(best_index_)`` is
# the best single model.
ensemble = searches["early stopping"]
print(type(ensemble.best_estimator_).__name__, "of rows", ensemble.ensemble_indices_)
members = pd.DataFrame({
    "validation accuracy": ensemble.cv_results_["mean_test_score"][ensemble.ensemble_indices_],
    "test accuracy": [ensemble.export_model(i).score(X_test, y_test)
                      for i in ensemble.ensemble_indices_],
}, index=[f"member {k}" for k in range(5)])
print(members.to_string(float_format="%.4f"))
single = ensemble.export_model(ensemble.best_index_)
print(f"best single model: test accuracy {single.score(X_test, y_test):.4f}")
print(f"top-5 ensemble:    test accuracy {ensemble.score(X_test, y_test):.4f}")

# %%
# Judge the ensemble on the test set, never on the validation rows: its
# members were *chosen* because they scored best there, so their validation
# accuracies (first column above) are the top of 48 noisy draws and sit
# above what the same models score on new rows (second column), and an
# average of them looks better on the validation rows than it will on new
# data. The single best model's ``best_score_`` carries the same selection
# bias; only rows that no search has seen, like this test set, compare the
# two fairly.
