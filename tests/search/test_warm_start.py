"""``warm_start``: a fit that starts from the previous fit's weights, as
scikit-learn's MLP (fresh optimizer and stopping rule, curves that go on)."""

import copy
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_regression

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)
from skpmlp._search._splits import SplitSettings, plan_folds
from skpmlp.io import load, save

# plain full-batch SGD without momentum, in row order: no optimizer state, so
# 3 epochs then 4 warm-started ones are exactly 7 epochs (scikit-learn's MLP:
# a warm fit draws its batches and dropout masks from epoch 0 again)
PLAIN = dict(
    **sklearn_mlp_params(),
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
    # with cv, "best": the 7-epoch fit's refit is one model, as the warm fit's
    extra = {} if cv is None else {"cv": cv, "ensemble": "best"}
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


# ------------------------------------------------------ resumed searches
# a search of 4 models (2 activations x 2 learning rates), full-batch Adam in
# row order: a fresh optimizer on the second fit matters (Adam's moments)
SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=(5,), activation=("tanh", "relu"), solver="adam", learning_rate_init=(0.01, 0.03),
    alpha=1e-3, batch_size=200, shuffle=False, tol=0.0, n_iter_no_change=1000, dtype="float64",
    random_state=0, max_iter=5,
)


def _folds(search, X, y):
    """The (training, test) rows of every fold of a fitted search."""
    return plan_folds(SplitSettings.of(search), X, y, y, search._seed, None, search.n_models_)


def _alone(previous, i, k, rows, X, y, max_iter):
    """Model i's fold-k replica of ``previous``, trained ``max_iter`` more
    epochs alone on ``rows`` from its weights, with a fresh optimizer."""
    model = previous.export_model(i, fold=k).set_params(warm_start=True, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X[rows], y[rows])


def _at(search, name, i, k):
    value = getattr(search, name)
    return value[i] if search.cv is None else value[i, k]


@pytest.mark.parametrize(
    "estimator_class, cv",
    [(ParallelMLPClassifier, None), (ParallelMLPClassifier, 3), (ParallelMLPRegressor, 3)],
)
def test_resumed_search_equals_every_model_continued_alone(iris, backend, estimator_class, cv):
    """5 epochs, then 5 warm-started ones: every model on every fold equals
    its 5-epoch replica trained 5 more epochs alone from its weights with a
    fresh optimizer; curves extend, n_iter adds up, scores are the new ones."""
    X, y = iris
    search = _fit(estimator_class(**SEARCH, cv=cv, warm_start=True), X, y)
    previous = copy.deepcopy(search)
    _fit(search, X, y)
    assert search.n_models_ == 4
    for k, (train, test) in enumerate(_folds(search, X, y)):
        for i in range(search.n_models_):
            alone = _alone(previous, i, k, train, X, y, 5)
            resumed = search.export_model(i, fold=k)
            np.testing.assert_allclose(_coefs(resumed), _coefs(alone), rtol=0, atol=1e-10)
            assert _at(search, "n_iter_per_model_", i, k) == 10
            curve = _at(search, "loss_curves_", i, k)
            np.testing.assert_array_equal(curve[:5], _at(previous, "loss_curves_", i, k)[:5])
            np.testing.assert_allclose(curve, alone.loss_curve_, rtol=0, atol=1e-10)
            assert search.cv_results_[f"split{k}_test_score"][i] == pytest.approx(
                alone.score(X[test], y[test]), abs=1e-10
            )
    best = search.best_index_
    assert search.best_params_ == search.cv_results_["params"][best]
    # selection="auto" without a scorer: the lowest validation loss of the continued models
    assert best == np.nanargmin(search.validation_loss_)


@pytest.mark.parametrize(
    "extra", [dict(n_jobs=2), dict(solver="lbfgs"), dict(batch_size=32, shuffle=True)],
)
def test_resumed_search_in_shards_with_lbfgs_or_minibatches(iris, extra):
    """Resumed joblib shards, L-BFGS models and shuffled minibatches
    continue each fold replica from its own weights, as alone."""
    X, y = iris
    search = _fit(ParallelMLPClassifier(**{**SEARCH, **extra}, cv=3, warm_start=True), X, y)
    previous = copy.deepcopy(search)
    _fit(search, X, y)
    for k, (train, _) in enumerate(_folds(search, X, y)):
        for i in range(search.n_models_):
            alone = _alone(previous, i, k, train, X, y, 5)
            np.testing.assert_allclose(_coefs(search.export_model(i, fold=k)), _coefs(alone), rtol=0, atol=1e-9)
            assert search.n_iter_per_model_[i, k] == previous.n_iter_per_model_[i, k] + alone.n_iter_


def test_resumed_search_with_early_stopping_extends_the_validation_curves(iris):
    """With early_stopping the validation curves go on from the previous
    fit's, and cv_results_ holds the continued models' new scores."""
    X, y = iris
    search = _fit(ParallelMLPClassifier(**SEARCH, early_stopping=True, cv=3, warm_start=True), X, y)
    previous = copy.deepcopy(search)
    _fit(search, X, y)
    assert (search.n_iter_per_model_ == 10).all()
    scores = search.validation_scores_per_model_
    np.testing.assert_array_equal(scores[:, :, :5], previous.validation_scores_per_model_[:, :, :5])
    assert np.isfinite(scores[:, :, 5:10]).all()
    assert not np.array_equal(search.loss_curves_[:, :, 5:], previous.loss_curves_[:, :, :5])
    for k, (_, test) in enumerate(_folds(search, X, y)):
        for i in range(search.n_models_):
            assert search.cv_results_[f"split{k}_test_score"][i] == pytest.approx(
                search.export_model(i, fold=k).score(X[test], y[test]), abs=1e-12
            )


def test_early_stopped_models_train_again(iris):
    """A model that stopped by its stopping rule (converged) trains again
    on a warm-started fit, as scikit-learn's MLP: its stop does not carry
    over (a fresh stopping rule)."""
    X, y = iris
    params = {**SEARCH, "tol": 10.0, "n_iter_no_change": 2, "max_iter": 50}
    search = _fit(ParallelMLPClassifier(**params, warm_start=True, cv=None), X, y)
    first = search.n_iter_per_model_.copy()
    assert (first < 50).all()  # every model stopped early
    previous = copy.deepcopy(search)
    _fit(search, X, y)
    assert (search.n_iter_per_model_ > first).all()
    train = _folds(search, X, y)[0][0]
    for i in range(search.n_models_):
        alone = _alone(previous, i, 0, train, X, y, 50)
        assert search.n_iter_per_model_[i] == first[i] + alone.n_iter_
        np.testing.assert_allclose(_coefs(search.export_model(i)), _coefs(alone), rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(learning_rate_init=(0.01, 0.02)), "configurations changed"),
        (dict(activation=("tanh", "relu", "logistic")), "drew 4 models, this fit draws 6"),
        (dict(n_repeats=2), "drew 4 models, this fit draws 8"),
        (dict(random_state=1), "random_state=1 gives another seed"),
        (dict(cv=4), "folds"),
        (dict(validation_fraction=0.2), None),
        (dict(activation="tanh", learning_rate_init=0.01), "previous fit trained 4 models|configurations"),
    ],
)
def test_resume_refuses_a_changed_population(iris, change, message):
    X, y = iris
    cv = None if "validation_fraction" in change else 3
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=cv, warm_start=True), X, y)
    before = copy.deepcopy(search)
    with pytest.raises(ValueError, match=message or "folds"):
        _fit(search, X, y, **change)
    np.testing.assert_array_equal(search.n_iter_per_model_, before.n_iter_per_model_)
    for k in range(search.n_splits_):
        for i in range(search.n_models_):
            got, want = search.export_model(i, fold=k), before.export_model(i, fold=k)
            np.testing.assert_array_equal(_coefs(got), _coefs(want))


def test_resume_refuses_other_data(iris):
    X, y = iris
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, warm_start=True), X, y)
    with pytest.raises(ValueError, match="X has 120 rows, but the previous fit had 150"):
        _fit(search, X[:120], y[:120])
    with pytest.raises(ValueError, match="X has 3 features, but the previous fit had 4"):
        _fit(search, X[:, :3], y)


def test_search_cannot_resume_a_fit_of_one_configuration(iris):
    X, y = iris
    model = _fit(ParallelMLPClassifier(**{**SEARCH, "activation": "tanh", "learning_rate_init": 0.01},
                                       warm_start=True, cv=None), X, y)
    with pytest.raises(ValueError, match="the previous fit trained 1 model and this search draws 4"):
        _fit(model, X, y, activation=("tanh", "relu"), learning_rate_init=(0.01, 0.03))


def test_resume_refuses_refill(iris):
    X, y = iris
    with pytest.raises(ValueError, match="warm_start=True with refill='sample' is not supported"):
        _fit(ParallelMLPClassifier(**SEARCH, warm_start=True, pruning="halving", refill="sample", cv=None), X, y)


def test_resume_refuses_a_previous_adaptive_search(iris):
    X, y = iris
    params = {**SEARCH, "learning_rate_init": (0.001, 0.01, 0.03), "pruning": "halving", "min_iter": 2}
    search = _fit(ParallelMLPClassifier(**{**params, "max_iter": 6}, refill="sample", cv=None), X, y)
    with pytest.raises(ValueError, match="The previous fit was an adaptive search"):
        _fit(search, X, y, refill=None, warm_start=True)


def test_random_state_none_resumes_the_same_population(iris):
    """Without an int random_state the second fit keeps the first one's
    seed: the same folds and models continue."""
    X, y = iris
    search = _fit(ParallelMLPClassifier(**{**SEARCH, "random_state": None}, cv=3, warm_start=True), X, y)
    seed = search._seed
    _fit(search, X, y)
    assert search._seed == seed
    assert (search.n_iter_per_model_ == 10).all()


@pytest.mark.parametrize("cv", [None, 3])
def test_resume_after_save_and_load(iris, tmp_path, cv):
    """A loaded search continues exactly as the one that was saved."""
    X, y = iris
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=cv, warm_start=True), X, y)
    save(search, tmp_path / "search.npz")
    loaded = load(tmp_path / "search.npz")
    _fit(search, X, y)
    _fit(loaded, X, y)
    np.testing.assert_array_equal(loaded.n_iter_per_model_, search.n_iter_per_model_)
    np.testing.assert_array_equal(loaded.loss_curves_, search.loss_curves_)
    for k in range(search.n_splits_):
        for i in range(search.n_models_):
            got, want = loaded.export_model(i, fold=k), search.export_model(i, fold=k)
            np.testing.assert_array_equal(_coefs(got), _coefs(want))
    np.testing.assert_array_equal(loaded.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"])


def test_interrupted_search_resumes(iris, interrupt_epoch):
    """A search interrupted in its 3rd epoch keeps 2 epochs of every model;
    a warm-started fit continues each from there."""
    X, y = iris
    interrupt_epoch(3)
    search = _fit(ParallelMLPClassifier(**{**SEARCH, "max_iter": 20}, cv=3, warm_start=True), X, y)
    assert search.shards_ and (search.n_iter_per_model_ == 2).all()
    previous = copy.deepcopy(search)
    _fit(search, X, y, max_iter=5)
    assert (search.n_iter_per_model_ == 7).all()
    for k, (train, _) in enumerate(_folds(search, X, y)):
        for i in range(search.n_models_):
            alone = _alone(previous, i, k, train, X, y, 5)
            np.testing.assert_allclose(_coefs(search.export_model(i, fold=k)), _coefs(alone), rtol=0, atol=1e-10)
            np.testing.assert_array_equal(search.loss_curves_[i, k, :2], previous.loss_curves_[i, k, :2])


def test_interrupted_resume_resumes_again(iris, interrupt_epoch):
    """A resumed fit interrupted in its 3rd epoch keeps its 2 new epochs on
    top of the previous 5 (nothing already trained is lost); the next
    warm-started fit goes on from there."""
    X, y = iris
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, warm_start=True), X, y)
    previous = copy.deepcopy(search)
    interrupt_epoch(3)
    _fit(search, X, y)
    assert (search.n_iter_per_model_ == 7).all()
    folds = _folds(search, X, y)
    for k, (train, _) in enumerate(folds):
        for i in range(search.n_models_):
            alone = _alone(previous, i, k, train, X, y, 2)
            np.testing.assert_allclose(_coefs(search.export_model(i, fold=k)), _coefs(alone), rtol=0, atol=1e-10)
    interrupted = copy.deepcopy(search)
    _fit(search, X, y)
    assert (search.n_iter_per_model_ == 12).all()
    np.testing.assert_array_equal(search.loss_curves_[:, :, :7], interrupted.loss_curves_[:, :, :7])
    alone = _alone(interrupted, 1, 2, folds[2][0], X, y, 5)
    np.testing.assert_allclose(_coefs(search.export_model(1, fold=2)), _coefs(alone), rtol=0, atol=1e-10)


def _check_stopped_rows_unchanged(previous, search, stopped):
    """Rows ``stopped`` kept their weights, curves, n_iter and scores;
    every other row trained more epochs on every fold."""
    for i in range(search.n_models_):
        for k in range(search.n_splits_):
            if stopped[i]:
                np.testing.assert_array_equal(
                    _coefs(search.export_model(i, fold=k)), _coefs(previous.export_model(i, fold=k))
                )
                n = previous.n_iter_per_model_[i, k]
                np.testing.assert_array_equal(search.loss_curves_[i, k, :n], previous.loss_curves_[i, k, :n])
                assert np.isnan(search.loss_curves_[i, k, n:]).all()
            else:
                assert search.n_iter_per_model_[i, k] > previous.n_iter_per_model_[i, k]
        if stopped[i]:
            np.testing.assert_array_equal(search.n_iter_per_model_[i], previous.n_iter_per_model_[i])
            for key in ("split0_test_score", "split1_test_score", "split2_test_score"):
                np.testing.assert_array_equal(search.cv_results_[key][i], previous.cv_results_[key][i])


def test_pruned_models_are_not_trained_again(iris):
    X, y = iris
    params = {**SEARCH, "learning_rate_init": (0.001, 0.01, 0.03), "pruning": "halving", "min_iter": 2,
              "halving_factor": 2, "max_iter": 6}
    search = _fit(ParallelMLPClassifier(**params, cv=3, warm_start=True), X, y)
    previous = copy.deepcopy(search)
    pruned = np.asarray(previous.cv_results_["pruned"], dtype=bool)
    assert pruned.any() and not pruned.all()
    _fit(search, X, y)
    _check_stopped_rows_unchanged(previous, search, pruned)


def test_failed_models_are_not_trained_again():
    X, y = make_regression(120, 5, noise=1.0, random_state=0)
    params = dict(hidden_layer_sizes=[(6,), (4, 3)], activation=("relu", "identity"), solver="sgd",
                  learning_rate_init=(1e6, 0.01), max_iter=5, dtype="float64", random_state=0, cv=3)
    search = _fit(ParallelMLPRegressor(**params, warm_start=True), X, y / y.std())
    previous = copy.deepcopy(search)
    failed = np.isnan(previous.cv_results_["mean_test_score"])
    assert failed.any() and not failed.all()
    _fit(search, X, y / y.std())
    _check_stopped_rows_unchanged(previous, search, failed)
