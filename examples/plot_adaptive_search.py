"""
Adaptive search: refilling the slots that halving frees
=======================================================

Successive halving (``pruning="halving"``) stops two thirds of the models
still training at each rung, so most of the fused network's slots sit
empty for most of the run. With ``refill`` every freed slot takes a new
model at once: a fresh draw from the search space (``refill="sample"``), or
a copy of a surviving model with perturbed learning rate and penalty
(``refill="perturb"``, population-based training). Here on the digits data,
with the same first population and ``max_iter`` for all three searches.
"""

# %%
# The data and the search space
# -----------------------------
# A quarter of the digits kept aside as a test set; the search holds out a
# fifth of the rest to rank its models. 24 configurations form the first
# population (the fused network's slots); the adaptive searches may train
# up to 150 models in all within the same 40 epochs.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier
from skpmlp.plotting import LineageDisplay

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

space = dict(
    cv=None,  # the holdout: one run per model (cv="auto" would take 5 folds here)
    hidden_layer_sizes=[(16,), (32,), (64,)],
    activation=["relu", "tanh"],
    learning_rate_init=[1e-3, 1e-2],
    alpha=[1e-4, 1e-2],
    input_transform="robust-smooth-clip",  # one: a refilled search is one fused run
    pruning="halving",
    min_iter=4,
    max_iter=40,
    validation_fraction=0.2,
    selection="score",
    random_state=0,
)

# %%
# Plain halving, then both refills
# --------------------------------
# ``cv_results_`` has a row per model trained; the slot-epochs trained out
# of the network's 24 slots x 40 epochs tell how full the network stayed.
searches = {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    for refill in (None, "sample", "perturb"):
        search = ParallelMLPClassifier(**space, refill=refill, max_models=150 if refill else None)
        searches[refill] = search.fit(X_train, y_train)

for refill, search in searches.items():
    results = search.cv_results_
    start = results.get("start_iter", np.zeros(len(results["n_iter"]), dtype=int))
    occupancy = results["n_iter"].sum() / (24 * (start + results["n_iter"]).max())
    print(
        f"refill={refill!s:<8} models {len(results['params']):>3}  "
        f"slot-epochs used {occupancy:6.1%}  "
        f"best validation {search.best_score_:.4f}  test {search.score(X_test, y_test):.4f}"
    )

# %%
# Who held which slot, and the lineages
# -------------------------------------
# Each bar is a model on the slot that trained it, from the epoch it
# started to its last; its colour is its validation accuracy. On the right,
# every model's validation accuracy over the run: a perturbed copy starts
# where its parent was (dotted link) and goes on with its own learning rate
# and penalty, listed epoch by epoch in ``hyperparameter_schedules_``.
display = LineageDisplay.from_estimator(searches["perturb"])
display.figure_.set_size_inches(11, 4.5)
plt.show()

perturb = searches["perturb"]
child = int(np.flatnonzero(perturb.cv_results_["parent"] >= 0)[-1])
schedule = perturb.hyperparameter_schedules_[child]
print(f"row {child}: parent {perturb.cv_results_['parent'][child]}, learning rate by epoch:")
print(dict(zip(schedule["iter"].tolist(), schedule["learning_rate_init"].round(5).tolist())))
