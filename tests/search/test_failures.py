"""Divergence, interruption and determinism (issue 8, items 2, 4 and 5).

A model whose loss turns NaN/inf is frozen and scored ``error_score``
while every other model trains exactly as without it; a Ctrl-C or
``max_time`` ends training keeping what finished (or, in the first epoch,
leaves the estimator as it was); the same ``random_state`` gives the same
results.
"""

import time

import numpy as np
import pytest
import torch
from sklearn.datasets import make_regression
from sklearn.exceptions import FitFailedWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

import skpmlp.io
from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._engine import PopulationSpec, TrainConfig, train_population
from skpmlp._estimators import _single
from skpmlp._search import _scoring

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(120, 5, noise=1.0, random_state=0)
    return X, y / y.std()


def _key(params, repeat):
    return tuple(sorted((name, str(value)) for name, value in params.items())) + (int(repeat),)


def _rows_by_params(search):
    results = search.cv_results_
    return {_key(p, r): i for i, (p, r) in enumerate(zip(results["params"], results["param_repeat"]))}


# -------------------------------------------------------------- divergence
# Plain SGD with a learning rate of 1e6 blows a squared loss up to inf, then
# NaN, within a few epochs. (Softmax cross-entropy stays finite even at such
# rates: an absurd classifier just scores badly, it does not diverge.)
DIVERGING = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(6,), (4, 3)], activation=("relu", "identity"), solver="sgd",
    max_iter=15, dtype="float64", random_state=0, cv=None,
)
ABSURD = 1e6


@pytest.fixture(scope="module")
def healthy(regression):
    return ParallelMLPRegressor(learning_rate_init=(0.001, 0.01), **DIVERGING).fit(*regression)


@pytest.fixture(scope="module")
def with_absurd(regression):
    with pytest.warns(FitFailedWarning, match="4 fits failed out of a total of 12"):
        return ParallelMLPRegressor(learning_rate_init=(0.001, ABSURD, 0.01), **DIVERGING).fit(*regression)


def _failed(search):
    return np.array([p["learning_rate_init"] == ABSURD for p in search.cv_results_["params"]])


def test_diverged_models_are_frozen_and_scored_nan(with_absurd):
    results, failed = with_absurd.cv_results_, _failed(with_absurd)
    assert failed.sum() == 4
    assert np.isnan(results["mean_test_score"][failed]).all()
    assert np.isfinite(results["mean_test_score"][~failed]).all()
    # frozen at the epoch their loss stopped being finite
    assert (with_absurd.n_iter_per_model_[failed] < DIVERGING["max_iter"]).all()
    for i in np.flatnonzero(failed):
        curve = with_absurd.loss_curves_[i, : with_absurd.n_iter_per_model_[i]]
        assert not np.isfinite(curve[-1]) and np.isfinite(curve[:-1]).all()
    # ranked last, never selected
    assert (results["rank_test_score"][failed] > (~failed).sum()).all()
    assert not failed[with_absurd.best_index_]
    assert np.isfinite(with_absurd.predict(np.zeros((2, 5)))).all()


def test_divergence_leaves_every_other_model_unchanged(healthy, with_absurd):
    """The independence invariant under divergence: each healthy model's
    score, epochs, curve and weights are those of the run without the
    absurd learning rate (rows matched by params, not by position)."""
    rows = _rows_by_params(with_absurd)
    assert len(rows) == 12
    for i, (params, repeat) in enumerate(zip(healthy.cv_results_["params"], healthy.cv_results_["param_repeat"])):
        j = rows[_key(params, repeat)]
        assert healthy.cv_results_["mean_test_score"][i] == with_absurd.cv_results_["mean_test_score"][j]
        assert healthy.n_iter_per_model_[i] == with_absurd.n_iter_per_model_[j]
        np.testing.assert_allclose(healthy.loss_curves_[i], with_absurd.loss_curves_[j], rtol=0, atol=1e-12)
        a, b = healthy.export_model(i), with_absurd.export_model(j)
        for wa, wb in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
            np.testing.assert_allclose(wa, wb, rtol=0, atol=1e-12)
    assert healthy.best_params_ == with_absurd.best_params_


def test_an_ensemble_never_takes_a_diverged_model(regression):
    with pytest.warns(RuntimeWarning, match="diverged"):
        search = ParallelMLPRegressor(
            learning_rate_init=(0.001, ABSURD, 0.01), ensemble_size=12, **DIVERGING
        ).fit(*regression)
    members = search.ensemble_indices_
    assert len(members) == 8 and not _failed(search)[members].any()


def test_error_score_number_scores_the_diverged_models(regression, with_absurd):
    with pytest.warns(FitFailedWarning, match="4 fits failed out of a total of 12"):
        search = ParallelMLPRegressor(
            learning_rate_init=(0.001, ABSURD, 0.01), error_score=0, **DIVERGING
        ).fit(*regression)
    failed = _failed(search)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"][failed], 0.0)
    np.testing.assert_array_equal(
        search.cv_results_["mean_test_score"][~failed], with_absurd.cv_results_["mean_test_score"][~failed]
    )
    assert not failed[search.best_index_]


def test_a_diverged_model_is_never_selected_even_with_a_finite_error_score(regression):
    X, y = regression
    with pytest.warns(FitFailedWarning, match="1 fits failed out of a total of 2"):
        search = ParallelMLPRegressor(
            (6,), "relu", solver="sgd", learning_rate_init=(1e-5, ABSURD), error_score=0,
            max_iter=6, dtype="float64", random_state=0, cv=None, input_transform="robust-smooth-clip",
        ).fit(X, y + 5)  # the healthy model's R^2 after 6 tiny steps is < 0
    assert search.cv_results_["mean_test_score"][0] < 0
    assert search.best_index_ == 0


def test_error_score_raise_names_the_diverged_models(regression):
    # raised as the fits fail, before any scoring or warning (GridSearchCV raises the fit's error)
    message = r"(?s)4 of 12 fits failed and error_score='raise'.*diverged.*rows of cv_results_: \[1, 4, 7, 10\]"
    with pytest.raises(ValueError, match=message):
        ParallelMLPRegressor(
            learning_rate_init=(0.001, ABSURD, 0.01), error_score="raise", **DIVERGING
        ).fit(*regression)


@pytest.mark.parametrize("error_score", ["raise", np.nan, -1.0])
def test_error_score_sets_only_the_failed_scores(error_score, monkeypatch):
    # float32 scores: a trip through a string array would round them to their
    # shortest decimals (0.1 instead of float32(0.1)), so exactness shows it
    exact = np.float32([0.1, 2 / 3, 0.7])
    monkeypatch.setitem(_scoring.MONITOR_SCORES, "regression", lambda *args: torch.as_tensor(exact))
    outputs, y = np.zeros((3, 4, 1)), np.zeros((4, 1))
    failed = None if error_score == "raise" else np.array([False, True, False])
    scores, _ = _scoring.score_population(
        outputs, _scoring.ScoredRows(None, y, y, task="regression"), None, failed=failed, error_score=error_score,
    )
    expected = exact.astype(np.float64)
    if failed is not None:
        expected[failed] = error_score
    assert scores.dtype == np.float64
    np.testing.assert_array_equal(scores, expected)


def test_all_models_diverging_is_a_clear_error(regression):
    # GridSearchCV's message, with why the fits failed
    with pytest.raises(ValueError, match="(?s)All the 4 fits failed.*Try smaller learning rates"):
        ParallelMLPRegressor(learning_rate_init=ABSURD, **DIVERGING).fit(*regression)


def test_divergence_with_cv_is_isolated_too(regression):
    params = dict(DIVERGING, hidden_layer_sizes=(6,), activation="relu", cv=3)
    healthy = ParallelMLPRegressor(learning_rate_init=0.01, **params).fit(*regression)
    with pytest.warns(FitFailedWarning, match="3 fits failed out of a total of 6"):
        mixed = ParallelMLPRegressor(learning_rate_init=(ABSURD, 0.01), **params).fit(*regression)
    assert np.isnan(mixed.cv_results_["mean_test_score"][0])
    for column in ("split0_test_score", "split1_test_score", "split2_test_score", "mean_test_score"):
        assert healthy.cv_results_[column][0] == mixed.cv_results_[column][1]
    np.testing.assert_array_equal(healthy.n_iter_per_model_[0], mixed.n_iter_per_model_[1])
    assert mixed.best_index_ == 1
    np.testing.assert_allclose(healthy.predict(regression[0]), mixed.predict(regression[0]), rtol=0, atol=1e-12)


# ------------------------------------------------------------ interruption
SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8, 8)], activation=("relu", "tanh"), learning_rate_init=(0.01, 0.03),
    max_iter=20, random_state=0, cv=None,
)


def test_interrupt_after_two_epochs_keeps_a_fitted_search(iris, interrupt_epoch):
    X, y = iris
    interrupt_epoch(3)
    search = ParallelMLPClassifier(**SEARCH)
    with pytest.warns(UserWarning, match=r"Training was interrupted after 2 epochs; the search keeps what "
                                         r"was trained \(8 of 8 models"):
        assert search.fit(X, y) is search
    check_is_fitted(search)
    np.testing.assert_array_equal(search.n_iter_per_model_, 2)
    np.testing.assert_array_equal(search.cv_results_["n_iter"], 2)
    assert search.loss_curves_.shape == (8, 2)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.n_iter_ == 2
    proba = search.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1)
    np.testing.assert_array_equal(search.classes_[proba.argmax(1)], search.predict(X))


def test_interrupt_of_a_cv_search(iris, interrupt_epoch):
    X, y = iris
    interrupt_epoch(3)
    with pytest.warns(UserWarning, match="Training was interrupted after 2 epochs"):
        search = ParallelMLPClassifier(**{**SEARCH, "cv": 3}).fit(X, y)
    assert search.n_iter_per_model_.shape == (8, 3) and (search.n_iter_per_model_ <= 2).all()
    assert search.predict(X).shape == (150,)


def test_interrupt_in_the_first_epoch_propagates_and_leaves_it_unfitted(iris, interrupt_epoch):
    X, y = iris
    interrupt_epoch(1)
    search = ParallelMLPClassifier(**SEARCH)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(search)
    for name in ("cv_results_", "best_estimator_", "best_index_", "n_iter_", "loss_curves_"):
        assert not hasattr(search, name)


def test_interrupt_in_the_first_epoch_keeps_the_previous_fit(iris, interrupt_epoch):
    X, y = iris
    search = ParallelMLPClassifier(**SEARCH).fit(X, y)
    before = {name: value for name, value in vars(search).items() if name.endswith("_")}
    scores, proba = search.cv_results_["mean_test_score"].copy(), search.predict_proba(X)
    interrupt_epoch(1)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    after = {name: value for name, value in vars(search).items() if name.endswith("_")}
    assert after.keys() == before.keys()
    assert all(after[name] is before[name] for name in before if name not in ("classes_", "n_features_in_"))
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], scores)
    np.testing.assert_array_equal(search.predict_proba(X), proba)


def test_interrupt_of_a_fit_on_other_data_keeps_the_previous_fit(iris, interrupt_epoch):
    X, y = iris
    search = ParallelMLPClassifier(**SEARCH).fit(X, y)
    interrupt_epoch(1)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X[:, :2], np.array(["a", "b"])[y % 2])
    assert search.n_features_in_ == 4
    np.testing.assert_array_equal(search.classes_, search.best_estimator_.classes_)


@pytest.mark.parametrize("where", ["cv refit", "single model"])
def test_interrupt_outside_the_search_warns(where, iris, interrupt_epoch):
    X, y = iris
    if where == "cv refit":
        interrupt_epoch(20 + 3)  # the search's 20 epochs run, then the refit's 3rd is interrupted
        estimator = ParallelMLPClassifier((4,), "relu", max_iter=20, tol=0, n_iter_no_change=100, cv=2,
                                          ensemble="best", random_state=0,
                                          input_transform="robust-smooth-clip")  # one fused run
    else:
        interrupt_epoch(3)
        estimator = SingleMLPClassifier((4,), "relu", max_iter=20, random_state=0)
    with pytest.warns(UserWarning, match="interrupted after 2 epochs"):
        estimator.fit(X, y)


@pytest.fixture
def failing_training(monkeypatch):
    """Training of a single model raises, after its data was validated."""

    def fail(*args, **kwargs):
        raise RuntimeError("simulated training failure")

    monkeypatch.setattr(_single, "train_by_input", fail)


@pytest.mark.parametrize("estimator_class", [SingleMLPClassifier, SingleMLPRegressor])
def test_failed_single_fit_leaves_it_unfitted(estimator_class, iris, failing_training, tmp_path):
    X, y = iris
    model = estimator_class((4,), "relu", max_iter=5, random_state=0)
    with pytest.raises(RuntimeError, match="simulated"):
        model.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    with pytest.raises(NotFittedError):
        skpmlp.io.save(model, tmp_path / "model.npz")
    assert not [name for name in vars(model) if name.endswith("_")]


def test_failed_single_fit_keeps_the_previous_fit(iris, monkeypatch):
    X, y = iris
    model = SingleMLPClassifier((4,), "relu", max_iter=5, random_state=0).fit(X, y)
    before = {name: value for name, value in vars(model).items() if name.endswith("_")}
    proba = model.predict_proba(X)
    monkeypatch.setattr(_single, "train_by_input", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        model.fit(X[:, :2], np.array(["a", "b"])[y % 2])
    after = {name: value for name, value in vars(model).items() if name.endswith("_")}
    assert after.keys() == before.keys()
    assert all(after[name] is before[name] for name in before)
    np.testing.assert_array_equal(model.predict_proba(X), proba)


def test_max_time_ends_training_after_an_epoch_and_keeps_the_results(iris):
    X, y = iris
    search = ParallelMLPClassifier(**{**SEARCH, "max_iter": 1000}, max_time=1e-6)
    with pytest.warns(UserWarning, match=r"Training reached max_time after 1 epochs; the search keeps what "
                                         r"was trained \(8 of 8 models"):
        search.fit(X, y)
    np.testing.assert_array_equal(search.n_iter_per_model_, 1)
    assert search.loss_curves_.shape == (8, 1)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.n_iter_ == 1
    np.testing.assert_allclose(search.predict_proba(X).sum(1), 1)


def test_max_time_counts_the_cv_refit_in(iris):
    """One budget for the whole fit: a search that used it up leaves the
    refit one epoch (it used to get max_time of its own)."""
    X, y = iris
    search = ParallelMLPClassifier((4,), "relu", max_iter=10**6, tol=0, n_iter_no_change=10**6, cv=2,
                                   max_time=0.5, ensemble="best", random_state=0)
    with pytest.warns(UserWarning, match="reached max_time after [0-9]+ epochs; the search keeps"), \
            pytest.warns(UserWarning, match="reached max_time after 1 epochs; the refit of the best"):
        search.fit(X, y)
    assert search.best_estimator_.n_iter_ == 1


def test_a_run_starting_past_the_deadline(iris):
    """The first run of a fit trains one epoch; any other (a shard queued
    behind others) trains nothing."""
    X, y = iris
    spec = PopulationSpec([(4,), (3,)], ["relu", "tanh"], np.full(2, 0.01), np.zeros(2), [(0,), (1,)])
    config = TrainConfig(task="classification", n_outputs=3, max_iter=50)
    folds = [(np.arange(150), None)]
    first = train_population(spec, config, X, y, folds, deadline=time.time())
    queued = train_population(spec, config, X, y, folds, deadline=time.time(), always_start=False)
    assert first.halted == queued.halted == "max_time"
    np.testing.assert_array_equal(first.n_iter, 1)
    np.testing.assert_array_equal(queued.n_iter, 0)


# ------------------------------------------------------------- determinism
def _assert_same_fit(a, b, X, atol=0.0):
    """Same ``cv_results_`` (but the times), epochs and scores; the same
    curves and predictions, exactly or to ``atol``."""
    assert a.cv_results_.keys() == b.cv_results_.keys()
    for name, column in a.cv_results_.items():
        if name.endswith("_time"):
            continue
        if name == "params" or name.startswith("param_"):
            assert list(column) == list(b.cv_results_[name])
        else:
            np.testing.assert_array_equal(column, b.cv_results_[name], err_msg=name)
    np.testing.assert_array_equal(a.n_iter_per_model_, b.n_iter_per_model_)
    np.testing.assert_allclose(a.loss_curves_, b.loss_curves_, rtol=0, atol=atol)
    if hasattr(a, "predict_proba"):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=atol)
    else:
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=0, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cv", [None, 3])
@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_same_random_state_same_results(estimator_class, cv, dtype, iris, regression):
    X, y = iris if estimator_class is ParallelMLPClassifier else regression
    params = dict(SEARCH, max_iter=8, n_repeats=2, cv=cv, dtype=dtype, random_state=7)
    a = estimator_class(**params).fit(X, y)
    b = estimator_class(**params).fit(X, y)
    _assert_same_fit(a, b, X)


def test_sharded_fit_equals_the_in_process_fit(iris):
    X, y = iris
    params = dict(SEARCH, max_iter=8, dtype="float64", random_state=7)
    in_process = ParallelMLPClassifier(**params).fit(X, y)
    sharded = ParallelMLPClassifier(**params, n_jobs=2).fit(X, y)
    assert len(sharded.shards_) == 2
    # the shards group the models differently: the epoch losses (sums over a
    # group's rows) may differ in the last bit, nothing else does
    _assert_same_fit(in_process, sharded, X, atol=1e-12)
