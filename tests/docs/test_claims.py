"""Claims of the docstrings and the user guide that a test can check."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

from skpmlp import ParallelMLPClassifier
from skpmlp._engine._init import initial_weights
from skpmlp._engine._layout import plan_groups
from skpmlp._engine._network import FusedNetwork

SMALL = dict(hidden_layer_sizes=[(4,), (8,)], activation=("relu", "tanh"), learning_rate_init=(0.01, 0.03),
             max_iter=12, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize(
    "cv, early_stopping, pruning, monitored",
    [
        (None, False, None, True),  # the held-out rows are always watched
        (None, True, None, True),
        (3, False, None, False),  # a fold's test rows only score
        (3, True, None, True),
        (3, False, "halving", True),  # pruning monitors too, without early stopping
    ],
)
def test_validation_scores_exist_as_documented(data, cv, early_stopping, pruning, monitored):
    search = ParallelMLPClassifier(
        **SMALL, cv=cv, early_stopping=early_stopping, pruning=pruning, min_iter=2
    ).fit(*data)
    assert (search.validation_scores_per_model_ is not None) == monitored
    if monitored:
        assert search.validation_scores_per_model_.shape == search.loss_curves_.shape


@pytest.mark.parametrize("early_stopping", [False, True])
def test_a_pruned_model_keeps_the_weights_documented(data, early_stopping):
    """A pruned model keeps the weights it had when pruned, or its best ones
    with early stopping: its final score is its last, or its best,
    validation score."""
    # large learning rates: validation scores go up and down, so a model's
    # best epoch is often not its last
    params = dict(SMALL, learning_rate_init=(0.3, 1.0), max_iter=30)
    search = ParallelMLPClassifier(
        **params, n_repeats=2, pruning="halving", min_iter=6, halving_factor=2,
        early_stopping=early_stopping, validation_fraction=0.3, dtype="float64", cv=None,
    ).fit(*data)
    pruned = np.flatnonzero(search.cv_results_["pruned"])
    curves = [search.validation_scores_per_model_[i][np.isfinite(search.validation_scores_per_model_[i])] for i in pruned]
    assert sum(curve.max() != curve[-1] for curve in curves) > 0  # the two claims differ here
    expected = [curve.max() if early_stopping else curve[-1] for curve in curves]
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"][pruned], expected)


def test_refit_time_is_set_only_with_refit(data):
    assert hasattr(ParallelMLPClassifier(**SMALL).fit(*data), "refit_time_")
    assert not hasattr(ParallelMLPClassifier(**SMALL, refit=False).fit(*data), "refit_time_")


def test_padded_units_need_no_mask():
    """The user guide's figure and table: one group of widths 3, 5 and 4
    padded to 5; layer 0 is a ``(G, F, w1)`` weight; padded units have zero
    weights and zero biases (-inf under the logistic activation) and output
    exactly 0."""
    archs, acts = [(3,), (5,), (4,)], ["logistic", "relu", "tanh"]
    weights = [initial_weights(a, act, (0, i), 6, 2) for i, (a, act) in enumerate(zip(archs, acts))]
    (group,) = plan_groups(archs, acts)
    net = FusedNetwork.from_weights([group], [w[0] for w in weights], [w[1] for w in weights], 6, 2,
                                    dtype=torch.float64, device="cpu")
    W0, b0 = net.params[0][0], net.params[0][1]
    assert W0.shape == (3, 6, 5) and b0.shape == (3, 1, 5)
    X = torch.randn(7, 6, dtype=torch.float64)
    with torch.no_grad():
        hidden = net._activate(torch.baddbmm(b0, X.expand(3, *X.shape), W0), group)
    for slot, model in enumerate(group.models):
        width = archs[model][0]
        assert (W0[slot, :, width:] == 0).all() and (net.params[0][2][slot, width:] == 0).all()
        assert (b0[slot, 0, width:] == (-np.inf if acts[model] == "logistic" else 0.0)).all()
        assert (hidden[slot, :, width:] == 0).all()


def test_cv_n_iter_is_the_most_over_the_fold_replicas(data):
    # the training-loss rule stops each replica on its own, at different epochs
    params = dict(SMALL, max_iter=200)
    search = ParallelMLPClassifier(**params, cv=3, n_iter_no_change=2, tol=1e-3).fit(*data)
    assert (search.n_iter_per_model_.min(axis=1) < search.n_iter_per_model_.max(axis=1)).any()
    np.testing.assert_array_equal(search.cv_results_["n_iter"], search.n_iter_per_model_.max(axis=1))
