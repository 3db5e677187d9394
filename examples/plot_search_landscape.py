"""
The search landscape: width against activation on the digits data
===================================================================

A small version of the experiment that motivates skpmlp: train every
combination of hidden width and activation function, several times each,
and look at how the validation accuracy depends on them. Trained one by one
this is dozens of ``MLPClassifier`` fits; here it is one fused run.
"""

# %%
# The data
# --------
# scikit-learn's bundled 8x8 digits (1,797 images, 10 classes), scaled to
# [0, 1]. A quarter is kept aside as a test set.
import time
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier
from skpmlp.plotting import SearchHeatmapDisplay, SearchResultsDisplay

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
scaler = MinMaxScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

# %%
# The search space
# ----------------
# Five one-layer widths on a geometric grid, four activations and two
# learning rates, each configuration trained with two different initial
# weights (``n_repeats=2``): 5 x 4 x 2 x 2 = 80 models. A tenth of the
# training rows is held out (``validation_fraction``) to score every model.
search = ParallelMLPClassifier(
    hidden_layer_sizes=[(4,), (8,), (16,), (32,), (64,)],
    activation=("relu", "tanh", "logistic", "elu"),
    learning_rate_init=(0.003, 0.01),
    n_repeats=2,
    max_iter=30,
    cv=None,  # the holdout: one run per model (cv="auto" would take 5 folds here)
    random_state=0,
)
with warnings.catch_warnings():
    # a few epochs are enough to see the landscape; most models stop unconverged
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()
    search.fit(X_train, y_train)
print(f"{search.n_models_} models trained in {time.perf_counter() - start:.1f} s")
print(f"best: {search.best_params_}, validation accuracy {search.best_score_:.3f}")
print(f"test accuracy of the best model: {search.score(X_test, y_test):.3f}")

# %%
# Validation accuracy against width
# ---------------------------------
# One line per activation. At each width the line follows the learning rate
# with the best mean over the repeats (``aggregate="max"``), and the band
# spans that configuration's two repeats: where bands overlap, the
# difference between activations is within seed-to-seed noise.
SearchResultsDisplay.from_estimator(search)

# %%
# With ``aggregate="mean"`` each point averages over the learning rates
# instead, which shows how forgiving an activation is to that choice.
SearchResultsDisplay.from_estimator(search, aggregate="mean", band="std")

# %%
# The same results as a heatmap
# -----------------------------
# Rows are activations, columns widths; each cell is the best mean (over
# repeats) validation accuracy of its learning rates.
SearchHeatmapDisplay.from_estimator(search, x_param="width", y_param="activation")

# %%
# And the learning rate against the activation, taking the best width:
SearchHeatmapDisplay.from_estimator(search, x_param="learning_rate_init", y_param="activation")
