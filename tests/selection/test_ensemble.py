"""The ensembles' own estimator contract: parameter validation in fit, and
every prediction method refuses an unfitted ensemble."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from skpmlp import (
    MLPEnsembleClassifier,
    MLPEnsembleRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)

X = np.random.default_rng(0).normal(size=(30, 3))
Y = (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("cls", [MLPEnsembleClassifier, MLPEnsembleRegressor])
@pytest.mark.parametrize("estimators", [5, "abc", None])
def test_fit_validates_the_estimators_parameter(cls, estimators):
    with pytest.raises(InvalidParameterError, match="'estimators' parameter of"):
        cls(estimators=estimators).fit(X, Y)


def test_fit_validates_the_members_parameters():
    """Nested validation is on: a member's invalid parameter is named by its own fit."""
    with pytest.raises(InvalidParameterError, match="'max_iter' parameter of SingleMLPClassifier"):
        MLPEnsembleClassifier([SingleMLPClassifier(max_iter=-1)]).fit(X, Y)


@pytest.mark.parametrize(
    "ensemble, methods",
    [
        (MLPEnsembleClassifier([SingleMLPClassifier((3,), max_iter=3)]),
         ["predict", "predict_proba", "predict_log_proba"]),
        (MLPEnsembleRegressor([SingleMLPRegressor((3,), max_iter=3)]), ["predict"]),
    ],
)
def test_every_prediction_method_refuses_an_unfitted_ensemble(ensemble, methods):
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(ensemble, method)(X)


def test_predict_log_proba_checks_fitted_before_predicting(monkeypatch):
    """The check is predict_log_proba's own, not a side effect of predict_proba."""
    ensemble = MLPEnsembleClassifier([SingleMLPClassifier((3,), max_iter=3)])
    monkeypatch.setattr(MLPEnsembleClassifier, "predict_proba",
                        lambda self, X: np.ones((len(X), 2)))
    with pytest.raises(NotFittedError):
        ensemble.predict_log_proba(X)


def test_fitted_ensemble_predicts_log_proba():
    member = SingleMLPClassifier((3,), max_iter=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three epochs may not converge
        ensemble = MLPEnsembleClassifier([member, member]).fit(X, Y)
    np.testing.assert_allclose(ensemble.predict_log_proba(X), np.log(ensemble.predict_proba(X)))
