"""A lone model talks and fails as scikit-learn's MLP (issue 20, the MLP
port): a y of a single class, divergence, verbose output and the dtype of
the network and its predictions."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)

#: One configuration: scikit-learn's MLP, whose messages and results a lone model keeps.
LONE = dict(hidden_layer_sizes=(5,), activation="relu", learning_rate_init=0.01, max_iter=5,
            random_state=0, **sklearn_mlp_params())


def _fit(estimator, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **fit_params)


# ------------------------------------------------------------- one class
@pytest.mark.parametrize("estimator", [
    ParallelMLPClassifier(**LONE, cv=None),
    ParallelMLPClassifier(**{**LONE, "activation": ("relu", "tanh")}, cv=None),
    ParallelMLPClassifier(**LONE, cv=3),
    ParallelMLPClassifier(**LONE, early_stopping=True, cv=None),
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



# ------------------------------------------------------------- divergence
def _huge():
    rng = np.random.RandomState(0)
    return np.finfo(np.float64).max * rng.uniform(size=(10, 2)), rng.standard_normal(10)


@pytest.mark.parametrize("estimator", [
    ParallelMLPRegressor(**LONE, cv=None),
    SingleMLPRegressor((5,), max_iter=5, random_state=0),
])
def test_a_lone_model_ending_with_nonfinite_weights_raises_sklearns_error(estimator):
    X, y = _huge()
    message = "Solver produced non-finite parameter weights. The input data may contain large values"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=message):
            estimator.fit(X, y)
    assert not hasattr(estimator, "coefs_")  # a failed fit leaves nothing behind


def _diverging(**params):
    return dict(hidden_layer_sizes=(20,), activation="identity", solver="sgd", learning_rate_init=1.0,
                max_iter=20, random_state=0, **params)


@pytest.mark.parametrize("estimator_class", [ParallelMLPRegressor, SingleMLPRegressor])
def test_a_lone_model_diverging_with_early_stopping_keeps_its_best_weights(iris, estimator_class):
    X, y = iris[0], iris[1].astype(float)
    # one configuration: a search given one input transform (its default searches two)
    one = {"input_transform": "robust-smooth-clip"} if estimator_class is ParallelMLPRegressor else {}
    model = estimator_class(**_diverging(early_stopping=True, **one))
    with pytest.warns(RuntimeWarning, match="loss became NaN or infinite in epoch"):
        _fit(model, X, y)
    # as scikit-learn's MLP: the NaN validation score is kept, the best weights are the model
    assert np.isnan(model.validation_scores_[-1]) and isinstance(model.validation_scores_[-1], float)
    assert np.isfinite(model.best_validation_score_)
    assert model.best_validation_score_ == np.nanmax(model.validation_scores_)
    assert all(np.isfinite(w).all() for w in model.coefs_ + model.intercepts_)
    assert np.isfinite(model.predict(X)).all()


@pytest.mark.parametrize("params", [dict(cv=3), dict(n_repeats=2)])
def test_a_search_still_fails_when_every_model_diverged(iris, params):
    """Several models or folds are a search (GridSearchCV's contract):
    diverged models are failed fits, and all of them failing raises."""
    X, y = iris[0], iris[1].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="All the .* fits failed"):
            _fit(ParallelMLPRegressor(**{"cv": None, **_diverging(**params)}), X, y)


# ---------------------------------------------------------------- verbose
@pytest.mark.parametrize("early_stopping", [False, True])
def test_a_lone_model_talks_as_sklearns_mlp(iris, capsys, early_stopping):
    X, y = iris
    params = dict(early_stopping=early_stopping, tol=1e-2, verbose=1)
    model = _fit(ParallelMLPClassifier(**{**LONE, "max_iter": 200}, **params, cv=None), X, y)
    lines = capsys.readouterr().out.splitlines()
    expected = []
    for epoch, loss in enumerate(model.loss_curve_):
        expected.append(f"Iteration {epoch + 1}, loss = {loss:.8f}")
        if early_stopping:
            expected.append(f"Validation score: {model.validation_scores_[epoch]:f}")
    watched = "Validation score" if early_stopping else "Training loss"
    assert model.n_iter_ < 200  # the rule stopped it: scikit-learn says why
    expected.append(f"{watched} did not improve more than tol=0.010000 for 10 consecutive epochs. Stopping.")
    assert lines == expected


def test_an_adaptive_rate_says_when_it_drops_as_sklearn(iris, capsys):
    X, y = iris
    params = dict(solver="sgd", learning_rate="adaptive", n_iter_no_change=2, tol=0.1, verbose=True)
    _fit(ParallelMLPClassifier(**{**LONE, "max_iter": 100}, **params, cv=None), X, y)
    ours = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("Iteration")]
    _fit(MLPClassifier((5,), learning_rate_init=0.01, max_iter=100, random_state=0, **params), X, y)
    theirs = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("Iteration")]
    # the same rates (divided by 5 each time) until the floor, in the same words
    assert ours == theirs
    assert ours[-1].endswith("Learning rate too small. Stopping.")


def test_a_population_keeps_its_per_run_lines(iris, capsys):
    X, y = iris
    _fit(ParallelMLPClassifier(**{**LONE, "activation": ("relu", "tanh")}, verbose=2, cv=None), X, y)
    out = capsys.readouterr().out
    assert "fused run 1 epoch 1: 2 models training" in out and "Iteration" not in out


# ------------------------------------------------------------------ dtype
@pytest.mark.parametrize("x_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dtype", ["float32", "float64", "auto"])
@pytest.mark.parametrize("estimator_class", [ParallelMLPRegressor, SingleMLPRegressor])
def test_weights_have_the_dtype_parameters_and_predictions_follow_numpy_promotion(
        iris, x_dtype, dtype, estimator_class):
    X, y = iris[0].astype(x_dtype), iris[1].astype(float)
    params = dict(max_iter=5, random_state=0, dtype=dtype)
    if estimator_class is ParallelMLPRegressor:
        params.update(hidden_layer_sizes=(5,), activation="relu", learning_rate_init=0.01,
                      **sklearn_mlp_params())
    model = _fit(estimator_class(**params), X, y)
    weights = np.dtype(x_dtype) if dtype == "auto" else np.dtype(dtype)  # "auto": X's, as scikit-learn
    assert all(w.dtype == weights for w in model.coefs_ + model.intercepts_)
    # as scikit-learn's MLP: X @ coefs_ in numpy's promoted dtype
    expected = np.result_type(x_dtype, weights)
    assert model.predict(X).dtype == expected
    reference = model.best_estimator_ if hasattr(model, "best_estimator_") else model
    np.testing.assert_allclose(
        model.predict(X), reference.to_sklearn().predict(X.astype(np.float64)),
        rtol=1e-5 if expected == np.float32 else 1e-12, atol=1e-5 if expected == np.float32 else 1e-12,
    )


def test_a_lone_model_warns_of_max_iter_in_sklearns_words(iris):
    X, y = iris
    message = r"Stochastic Optimizer: Maximum iterations \(5\) reached and the optimization hasn't converged yet."
    with pytest.warns(ConvergenceWarning, match=message):
        ParallelMLPClassifier(**LONE, cv=None).fit(X, y)
    with pytest.warns(ConvergenceWarning, match=r"2 of 2 trained models reached max_iter=5"):
        ParallelMLPClassifier(**{**LONE, "activation": ("relu", "tanh")}, cv=None).fit(X, y)


@pytest.mark.parametrize("cv", [None, 2])
def test_auto_dtype_trains_the_search_and_its_refit_in_xs_dtype(iris, cv):
    X, y = iris
    search = _fit(ParallelMLPClassifier(**{**LONE, "activation": ("relu", "tanh")}, cv=cv, dtype="auto",
                                        ensemble="best"),
                  X.astype(np.float32), y)
    assert search.coefs_[0].dtype == np.float32
    assert search.best_estimator_.dtype == "auto"  # its own fit follows its X too
    refit = _fit(search.best_estimator_, X, y)
    assert refit.coefs_[0].dtype == np.float64
