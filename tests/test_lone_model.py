"""A lone model talks and fails as scikit-learn's MLP (issue 20, the MLP
port): a y of a single class, divergence, verbose output and the dtype of
the network and its predictions."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, SingleMLPClassifier

LONE = dict(hidden_layer_sizes=(5,), activation="relu", learning_rate_init=0.01, max_iter=5, random_state=0)


def _fit(estimator, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **fit_params)


# ------------------------------------------------------------- one class
@pytest.mark.parametrize("estimator", [
    ParallelMLPClassifier(**LONE),
    ParallelMLPClassifier(**{**LONE, "activation": ("relu", "tanh")}),
    ParallelMLPClassifier(**LONE, cv=3),
    ParallelMLPClassifier(**LONE, early_stopping=True),
    SingleMLPClassifier((5,), max_iter=5, random_state=0),
])
def test_a_single_class_trains_and_is_predicted_as_mlpclassifier(estimator):
    X = np.random.RandomState(0).randn(30, 3)
    y = np.full(30, "a")
    _fit(estimator, X, y)
    assert list(estimator.classes_) == ["a"]
    assert (estimator.predict(X) == "a").all()
    np.testing.assert_allclose(estimator.predict_proba(X), np.ones((30, 1)))
    assert estimator.score(X, y) == 1.0
    # as scikit-learn's MLP
    assert (_fit(MLPClassifier((5,), max_iter=5), X, y).predict(X) == "a").all()


def test_a_single_class_model_converts_to_sklearns_one_class_layout():
    X = np.random.RandomState(0).randn(30, 3)
    y = np.full(30, 7)
    model = _fit(SingleMLPClassifier((5,), max_iter=5, random_state=0), X, y)
    sk = model.to_sklearn()
    assert (sk.predict(X) == 7).all()
    # scikit-learn's one-class predict_proba has two columns; the first is the class's
    np.testing.assert_allclose(sk.predict_proba(X), np.c_[np.ones(30), np.zeros(30)])

