"""
Regression: a leaderboard and learning curves
=============================================

:class:`~skpmlp.ParallelMLPRegressor` searches architectures, activations,
learning rates and L2 penalties on Friedman's regression problem #1
(:func:`sklearn.datasets.make_friedman1`), ranks every model by validation
R², and shows how the best ones trained.
"""

# %%
# The data
# --------
# ``y = 10 sin(pi x0 x1) + 20 (x2 - 0.5)^2 + 10 x3 + 5 x4 + noise`` on ten
# uniform features, five of which are irrelevant: smooth and non-linear,
# the kind of function an MLP fits well. MLPs train best on standardized
# inputs and targets: the search does both itself, fitted on the rows each
# model trains on (``input_transform``, ``target_transform="standard"``), so
# it takes ``X`` and ``y`` as they are and predicts in ``y``'s units.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

from skpmlp import ParallelMLPRegressor
from skpmlp.plotting import EpochCurvesDisplay, SearchHeatmapDisplay

X, y = make_friedman1(n_samples=1000, noise=1.0, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

# %%
# The search
# ----------
# 4 architectures x 3 activations x 2 learning rates x 2 penalties = 48
# models, trained together. ``early_stopping=True`` stops each model on its
# own when its validation R² stops improving and keeps its best weights.
search = ParallelMLPRegressor(
    hidden_layer_sizes=[(16,), (64,), (16, 16), (64, 32)],
    activation=("relu", "tanh", "elu"),
    learning_rate_init=(0.001, 0.01),
    alpha=(1e-4, 1e-1),
    early_stopping=True,
    max_iter=150,
    cv=None,  # the holdout: one run per model (cv="auto" would take 5 folds here)
    random_state=0,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()
    search.fit(X_train, y_train)
print(f"{search.n_models_} models trained in {time.perf_counter() - start:.1f} s")

# %%
# The leaderboard
# ---------------
# ``cv_results_`` has GridSearchCV's columns, so it reads as a DataFrame.
results = pd.DataFrame(search.cv_results_)
columns = ["param_hidden_layer_sizes", "param_activation", "param_learning_rate_init",
           "param_alpha", "mean_test_score", "rank_test_score"]
print(results.sort_values("rank_test_score")[columns].head(8).to_string(index=False))

# %%
# The best configuration predicts, retrained on all the training rows for its
# best epoch count; its validation R² estimates the test R².
y_pred = search.predict(X_test)
print(f"validation R2 {search.best_score_:.3f}, test R2 {r2_score(y_test, y_pred):.3f}")

# %%
# Learning curves of the top five
# -------------------------------
# Training loss (left, in the standardized units the models train in) and
# validation R² (right) per epoch; each curve ends
# where early stopping stopped that model.
EpochCurvesDisplay.from_estimator(search, top_k=5)

# %%
# Which knobs matter
# ------------------
# The L2 penalty against the architecture, each cell the best over the other
# parameters.
SearchHeatmapDisplay.from_estimator(search, x_param="hidden_layer_sizes", y_param="alpha")

# %%
# Predictions of the best model on the test set:
fig, ax = plt.subplots(figsize=(4.5, 4.5), layout="constrained")
ax.scatter(y_test, y_pred, s=12, alpha=0.7)
limits = np.array([y.min(), y.max()])
ax.plot(limits, limits, color="grey", linestyle="--")
ax.set(xlabel="true y", ylabel="predicted y", title="Best model on the test set")
