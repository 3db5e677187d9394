"""What the tests of RealMLP's ingredients as estimator parameters share
(issue 40: ``test_ingredients``, ``test_dropout_parameter``,
``test_scaling_estimators``): a silenced fit, weight comparisons and the
halving check that a survivor is the model a search without pruning trains."""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skpmlp import ParallelMLPClassifier


def fit(estimator, X, y):
    """``estimator.fit(X, y)`` with scikit-learn's ConvergenceWarning
    silenced (the tests train a few epochs on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


def same_weights(a, b, atol=0.0):
    """Assert that two fitted MLPs have the same ``coefs_`` and
    ``intercepts_`` (bit for bit by default)."""
    for u, v in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        np.testing.assert_allclose(u, v, rtol=0, atol=atol)


def assert_halving_survivors_are_unpruned(params, X, y, atol=0.0):
    """Halving's rungs leave the survivors alone: every model a halving
    search over ``params`` keeps has, bit for bit (within ``atol``), the
    weights the same search without pruning gives it (and the rungs did
    prune)."""
    pruned = fit(ParallelMLPClassifier(**params, pruning="halving", min_iter=3, halving_factor=2), X, y)
    full = fit(ParallelMLPClassifier(**params), X, y)
    assert pruned.cv_results_["pruned"].any()
    survivors = np.flatnonzero(~pruned.cv_results_["pruned"])
    assert len(survivors)
    for i in survivors:
        same_weights(pruned.export_model(i), full.export_model(i), atol=atol)
