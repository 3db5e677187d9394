"""``warm_start``: a fit that starts from the previous fit's weights, as
scikit-learn's MLP (fresh optimizer and stopping rule, curves that go on)."""

import warnings

import numpy as np
import pytest

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, SingleMLPClassifier, SingleMLPRegressor

# plain full-batch SGD without momentum, in row order: no optimizer state, so
# 3 epochs then 4 warm-started ones are exactly 7 epochs
PLAIN = dict(
    hidden_layer_sizes=(5,), activation="tanh", solver="sgd", momentum=0.0, learning_rate_init=0.05,
    alpha=1e-3, batch_size=150, shuffle=False, tol=0.0, n_iter_no_change=1000, dtype="float64",
    random_state=0,
)
ESTIMATORS = [SingleMLPClassifier, SingleMLPRegressor, ParallelMLPClassifier, ParallelMLPRegressor]


def _fit(estimator, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.set_params(**params).fit(X, y)


def _coefs(model):
    return np.concatenate([w.ravel() for w in (*model.coefs_, *model.intercepts_)])


@pytest.mark.parametrize(
    "estimator_class, cv",
    [*((estimator, None) for estimator in ESTIMATORS), (ParallelMLPClassifier, 3), (ParallelMLPRegressor, 3)],
)
def test_warm_fit_continues_from_the_previous_weights(iris, backend, estimator_class, cv):
    """3 epochs, then 4 warm-started ones, equal 7 epochs in one fit (every
    cv fold replica and the refit start from the previous coefs_)."""
    X, y = iris
    extra = {} if cv is None else {"cv": cv}
    warm = _fit(estimator_class(**PLAIN, **extra, warm_start=True), X, y, max_iter=3)
    first_curve = list(warm.loss_curve_)
    _fit(warm, X, y, max_iter=4)
    once = _fit(estimator_class(**PLAIN, **extra), X, y, max_iter=7)
    np.testing.assert_allclose(_coefs(warm), _coefs(once), rtol=0, atol=1e-10)
    assert warm.n_iter_ == 4  # this fit's epochs, as scikit-learn
    assert warm.loss_curve_[:3] == first_curve  # the curve goes on
    np.testing.assert_allclose(warm.loss_curve_, once.loss_curve_, rtol=0, atol=1e-10)
    assert warm.t_ == once.t_
    np.testing.assert_allclose(warm.predict(X), once.predict(X), atol=1e-10)


@pytest.mark.parametrize("estimator_class", ESTIMATORS)
def test_warm_start_false_starts_afresh(iris, estimator_class):
    """Without warm_start a second fit is bit-identical to a fresh one."""
    X, y = iris
    params = {**PLAIN, "solver": "adam", "momentum": 0.9, "max_iter": 5}
    refit = _fit(estimator_class(**params), X, y)
    _fit(refit, X, y)
    fresh = _fit(estimator_class(**params), X, y)
    np.testing.assert_array_equal(_coefs(refit), _coefs(fresh))
    assert refit.loss_curve_ == fresh.loss_curve_


@pytest.mark.parametrize("estimator_class", ESTIMATORS)
def test_warm_start_needs_the_same_layer_sizes(iris, estimator_class):
    X, y = iris
    model = _fit(estimator_class(**{**PLAIN, "max_iter": 2}, warm_start=True), X, y)
    before = _coefs(model)
    with pytest.raises(ValueError, match=r"warm_start=True starts from the previous fit's weights"):
        _fit(model, X, y, hidden_layer_sizes=(4,))
    np.testing.assert_array_equal(_coefs(model), before)  # a failed fit keeps the previous one


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
@pytest.mark.parametrize("search", [dict(activation=("relu", "tanh")), dict(n_repeats=2)])
def test_warm_start_refuses_a_search_of_several_models(iris, estimator_class, search):
    X, y = iris
    params = {**PLAIN, "max_iter": 2, **search}
    with pytest.raises(ValueError, match=r"warm_start=True is supported for one configuration only"):
        _fit(estimator_class(**params, warm_start=True), X, y)


@pytest.mark.parametrize("estimator_class", [SingleMLPClassifier, ParallelMLPClassifier])
def test_warm_start_needs_the_same_classes(iris, estimator_class):
    X, y = iris
    model = _fit(estimator_class(**{**PLAIN, "max_iter": 2}, warm_start=True), X, y)
    with pytest.raises(ValueError, match=r"warm_start can only be used where `y` has the same classes"):
        _fit(model, X, np.where(y == 2, 1, y))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])


@pytest.mark.parametrize("estimator_class", ESTIMATORS)
def test_warm_start_with_early_stopping_extends_the_validation_curve(iris, estimator_class):
    X, y = iris
    params = {**PLAIN, "solver": "adam", "momentum": 0.9, "batch_size": 32, "shuffle": True}
    model = _fit(estimator_class(**params, early_stopping=True, warm_start=True), X, y, max_iter=5)
    first = list(model.validation_scores_)
    _fit(model, X, y, max_iter=3)
    assert model.validation_scores_[:len(first)] == first
    assert len(model.validation_scores_) == len(first) + model.n_iter_
    assert model.best_validation_score_ == max(model.validation_scores_)
