"""``input_transform`` in a search (issue 40, item 1): each fold's transform is
fitted on its training rows only, models of every value sit in one search
and each equals the same model trained alone, in float64."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    RobustSmoothClipScaler,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._search import _inputs
from skpmlp._search._splits import holdout_split

VALUES = ["none", "standard", "robust-smooth-clip"]
SCALERS = {"standard": StandardScaler, "robust-smooth-clip": RobustSmoothClipScaler}
#: Without dropout and with scikit-learn's beta_2, as the single models the
#: tests compare with (the searches' input_transform default is each test's).
SEARCH = dict(hidden_layer_sizes=[(5,), (4, 3)], activation=["tanh", "relu"],
              learning_rate_init=0.02, max_iter=12, batch_size=32, dtype="float64",
              random_state=2, dropout=0.0, beta_2=0.999)


def _fit(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(*args, **kwargs)


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(150, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=0)
    # features on very different scales, one constant, one heavy-tailed
    X = X * [1, 100, 0.01, 1, 1] + [0, 500, 0, 0, 7]
    X[:, 3] = 4.0
    X[:, 4] += np.random.default_rng(0).standard_cauchy(150)
    return X, y


def _statistics(transform):
    """A fitted transform's fitted statistics, by name."""
    names = ("mean_", "scale_") if isinstance(transform, StandardScaler) else ("center_",
                                                                              "factor_")
    return {name: getattr(transform, name) for name in names}


def _assert_fitted_on(transform, X):
    """``transform`` equals one of its class fitted on ``X``, bit for bit."""
    expected = _statistics(type(transform)().fit(X))
    for name, value in _statistics(transform).items():
        np.testing.assert_array_equal(value, expected[name], err_msg=name)


def _alone(exported, X, y, **fit):
    """The same model trained alone on ``X``, its input transform inside."""
    return _fit(clone(exported), X, y, **fit)


def _predict(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def test_each_fold_fits_its_transform_on_its_training_rows(classification, backend):
    """No leakage: fold k's transform is fitted on fold k's training rows,
    and its models equal models trained alone on the pre-transformed data
    (a plain "none" model on ``T_k(X[train])``, predicting ``T_k(X)``)."""
    X, y = classification
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    folds = list(cv.split(X, y))
    search = _fit(ParallelMLPClassifier(**SEARCH, input_transform=VALUES, cv=cv,
                                        ensemble="best"), X, y)
    assert search.n_models_ == 12
    values = list(search.cv_results_["param_input_transform"])
    for i, value in enumerate(values):
        for k, (train, test) in enumerate(folds):
            model = search.export_model(i, fold=k)
            assert model.input_transform == value
            if value == "none":
                assert model.input_transform_ is None
                continue
            _assert_fitted_on(model.input_transform_, X[train])
            # the same model, input_transform="none", alone on the fold's transformed rows
            plain = clone(model).set_params(input_transform="none")
            transform = SCALERS[value]().fit(X[train])
            plain = _fit(plain, transform.transform(X[train]), y[train])
            np.testing.assert_allclose(_predict(model, X), _predict(plain, transform.transform(X)),
                                       rtol=0, atol=1e-10)
            # scored on its fold's test rows through that transform
            score = model.score(X[test], y[test])
            assert score == pytest.approx(search.cv_results_[f"split{k}_test_score"][i], abs=1e-12)


@pytest.mark.parametrize("task", ["classifier", "regressor"])
def test_models_of_every_value_equal_models_trained_alone(classification, backend, task):
    """The independence invariant, with sample weights, for every value beside
    the others (k folds: k stacked copies of X)."""
    if task == "classifier":
        X, y = classification
        estimator = ParallelMLPClassifier(**SEARCH, input_transform=VALUES, cv=3, ensemble="best")
        folds = list(StratifiedKFold(3).split(X, y))
    else:
        X, y = make_regression(120, 4, n_targets=2, noise=0.1, random_state=0)
        X, y = X * [1, 50, 0.02, 3] + 10, y / y.std()
        estimator = ParallelMLPRegressor(**SEARCH, input_transform=VALUES, cv=3, ensemble="best")
        from sklearn.model_selection import KFold
        folds = list(KFold(3).split(X, y))
    weight = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    search = _fit(estimator, X, y, sample_weight=weight)
    for i in range(search.n_models_):
        for k, (train, _) in enumerate(folds):
            exported = search.export_model(i, fold=k)
            alone = _alone(exported, X[train], y[train], sample_weight=weight[train])
            np.testing.assert_allclose(_predict(exported, X), _predict(alone, X), rtol=0,
                                       atol=1e-10)
            assert alone.n_iter_ == search.n_iter_per_model_[i, k]


def test_monitored_folds_equal_each_fold_alone(classification, backend):
    """Early stopping with k folds watches a validation part of each fold's
    training rows, in that fold's transformed copy: every fold's training and
    validation curves are those of the same search on that fold alone (no
    stacking). Models never stop here (the folds of a model stop together,
    and keep the best epoch of their mean score, so only the curves are a
    fold's own)."""
    X, y = classification
    folds = list(StratifiedKFold(3).split(X, y))
    params = dict(SEARCH, input_transform=VALUES, early_stopping=True, n_iter_no_change=1000,
                  ensemble="best", refit=False)
    search = _fit(ParallelMLPClassifier(**params, cv=folds), X, y)
    for k, fold in enumerate(folds):
        alone = _fit(ParallelMLPClassifier(**params, cv=[fold]), X, y)
        for name in ("validation_scores_per_model_", "loss_curves_"):
            np.testing.assert_allclose(getattr(search, name)[:, k], getattr(alone, name)[:, 0],
                                       rtol=0, atol=1e-12, err_msg=name)


def test_none_models_are_those_of_a_search_without_transforms(classification):
    """Beside transformed models, the "none" ones are the search without the
    option, bit for bit: the same run, the same data."""
    X, y = classification
    mixed = _fit(ParallelMLPClassifier(**SEARCH, input_transform=VALUES, cv=3, ensemble="best"),
                 X, y)
    plain = _fit(ParallelMLPClassifier(**SEARCH, input_transform="none", cv=3, ensemble="best"),
                 X, y)
    assert "param_input_transform" not in plain.cv_results_
    assert "input_transform" not in plain.cv_results_["params"][0]
    rows = np.flatnonzero(mixed.cv_results_["param_input_transform"] == "none")
    assert len(rows) == plain.n_models_
    for k in range(3):
        for j, i in enumerate(rows):
            for mine, theirs in zip(mixed._coefs[k][i], plain._coefs[k][j]):
                np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(mixed.cv_results_["mean_test_score"][rows],
                                  plain.cv_results_["mean_test_score"])
    assert [p["input_transform"] for p in mixed.cv_results_["params"]] == list(
        mixed.cv_results_["param_input_transform"])


def test_holdout_fits_on_the_training_part_and_refits_on_every_row(classification):
    """cv=None: the transform of the trained model is the training part's
    (it scores on the held-out rows); the holdout refit's, every row's."""
    X, y = classification
    params = dict(SEARCH, input_transform=["standard", "robust-smooth-clip"], cv=None,
                  ensemble="best")
    train, val = holdout_split(y, 0.1, 2, stratify=True)
    kept = _fit(ParallelMLPClassifier(**params, holdout_refit=False), X, y)
    for i in range(kept.n_models_):
        model = kept.export_model(i)
        _assert_fitted_on(model.input_transform_, X[train])
        assert model.score(X[val], y[val]) == pytest.approx(
            kept.cv_results_["split0_test_score"][i], abs=1e-12)
    refitted = _fit(ParallelMLPClassifier(**params), X, y)
    best = refitted.best_estimator_
    _assert_fitted_on(best.input_transform_, X)
    # its fit retrains exactly it: the transform on every row, then the epochs it trained
    np.testing.assert_allclose(_predict(_alone(best, X, y), X), refitted.predict_proba(X),
                               rtol=0, atol=1e-10)


def test_cv_refit_and_fold_ensembles(classification):
    """ensemble="best" refits on all the rows (its transform too); a fold
    ensemble's members keep their own folds' transforms."""
    X, y = classification
    folds = list(StratifiedKFold(3).split(X, y))
    best = _fit(ParallelMLPClassifier(**SEARCH, input_transform=VALUES, cv=3, ensemble="best",
                                      early_stopping=True, n_iter_no_change=3), X, y)
    model = best.best_estimator_
    if model.input_transform != "none":
        _assert_fitted_on(model.input_transform_, X)
    np.testing.assert_allclose(_predict(_alone(model, X, y), X), best.predict_proba(X), rtol=0,
                               atol=1e-10)
    for i in range(best.n_models_):  # every row refits where asked to
        if best.cv_results_["param_input_transform"][i] != "none":
            ensemble = best.export_model(i, fold="all")
            for (train, _), member in zip(folds, ensemble.estimators_):
                _assert_fitted_on(member.input_transform_, X[train])
    folds_kind = _fit(ParallelMLPClassifier(**SEARCH, input_transform="robust-smooth-clip",
                                            cv=3, ensemble="folds"), X, y)
    members = folds_kind.best_estimator_.estimators_
    for (train, _), member in zip(folds, members):
        _assert_fitted_on(member.input_transform_, X[train])
    assert "param_input_transform" not in folds_kind.cv_results_  # one value: not searched
    np.testing.assert_allclose(
        folds_kind.predict_proba(X), np.mean([m.predict_proba(X) for m in members], axis=0),
        rtol=0, atol=1e-12)


def test_a_lone_model_is_a_pipeline_of_scikit_learn(classification):
    """One configuration with cv=None is scikit-learn's MLP: its transform is
    fitted on every row (with early stopping, its validation part included,
    as in a Pipeline), so it equals the single model's fit."""
    X, y = classification
    for early in (False, True):
        params = dict(hidden_layer_sizes=(6,), activation="tanh", learning_rate_init=0.02,
                      max_iter=15, dtype="float64", random_state=0, early_stopping=early,
                      input_transform="robust-smooth-clip", dropout=0.0, beta_2=0.999)
        lone = _fit(ParallelMLPClassifier(**params, cv=None), X, y)
        single = _fit(SingleMLPClassifier(**params), X, y)
        _assert_fitted_on(lone.best_estimator_.input_transform_, X)
        np.testing.assert_allclose(lone.predict_proba(X), single.predict_proba(X), rtol=0,
                                   atol=1e-12)


def test_halving_ranks_within_each_value(classification):
    """Each value trains as its own run: with halving, its models are pruned
    among themselves, as the same search of that value alone prunes them."""
    X, y = classification
    params = dict(SEARCH, hidden_layer_sizes=[(4,), (8,), (3, 3)], learning_rate_init=[0.01, 0.03],
                  pruning="halving", min_iter=2, halving_factor=2, max_iter=8, cv=2,
                  n_iter_no_change=100, ensemble="best")
    mixed = _fit(ParallelMLPClassifier(**params, input_transform=["none", "standard"]), X, y)
    assert mixed.cv_results_["pruned"].any()
    for value in ("none", "standard"):
        alone = _fit(ParallelMLPClassifier(**params, input_transform=value), X, y)
        rows = np.flatnonzero(mixed.cv_results_["param_input_transform"] == value)
        for name in ("pruned", "n_iter", "mean_test_score"):
            np.testing.assert_array_equal(mixed.cv_results_[name][rows], alone.cv_results_[name])
        np.testing.assert_array_equal(mixed.n_iter_per_model_[rows], alone.n_iter_per_model_)


def test_a_distribution_and_param_grid(classification):
    """Searched as any other parameter: drawn from a distribution, or per
    param_grid dict (masked where a dict leaves it to the estimator)."""
    X, y = classification

    class Choice:
        def rvs(self, random_state=None):
            return ["standard", "robust-smooth-clip"][random_state.randint(2)]

    one = dict(SEARCH, hidden_layer_sizes=(4,), activation="tanh", cv=None)
    drawn = _fit(ParallelMLPClassifier(**one, n_models=6, input_transform=Choice()), X, y)
    assert set(drawn.cv_results_["param_input_transform"]) == {"standard", "robust-smooth-clip"}
    grid = _fit(ParallelMLPClassifier(**one, param_grid=[
        {"input_transform": ["standard"], "alpha": [1e-3]}, {"activation": ["relu"]}]), X, y)
    column = grid.cv_results_["param_input_transform"]
    # the second dict leaves it to the estimator's default, whose two values
    # it then searches (a searched value is never masked)
    assert list(column.data) == ["standard", "robust-smooth-clip", "quantile"]
    assert not column.mask.any()
    assert grid.export_model(1).input_transform == "robust-smooth-clip"
    assert grid.export_model(2).input_transform == "quantile"
    assert grid.export_model(0).input_transform == "standard"


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor,
                                             SingleMLPClassifier, SingleMLPRegressor])
def test_bad_values_are_refused(classification, estimator_class):
    X, y = classification
    with pytest.raises(InvalidParameterError, match="input_transform"):
        estimator_class(input_transform="minmax").fit(X, y)
    if estimator_class in (ParallelMLPClassifier, ParallelMLPRegressor):
        with pytest.raises(ValueError, match="input_transform values must be one of"):
            estimator_class(input_transform=["none", "minmax"]).fit(X, y)
    else:  # one model, one value
        with pytest.raises(InvalidParameterError, match="input_transform"):
            estimator_class(input_transform=["none", "standard"]).fit(X, y)


def test_refill_needs_one_value(classification):
    X, y = classification
    params = dict(SEARCH, pruning="halving", refill="sample", cv=None)
    with pytest.raises(ValueError, match="searched input_transform"):
        ParallelMLPClassifier(**params, input_transform=VALUES).fit(X, y)
    # the default searches two values: the message says which one to pass
    with pytest.raises(ValueError, match="the default searches robust-smooth-clip, quantile: "
                                         "pass input_transform='robust-smooth-clip'"):
        ParallelMLPClassifier(**params).fit(X, y)
    search = _fit(ParallelMLPClassifier(**params, input_transform="standard", min_iter=2), X, y)
    assert (search.cv_results_["start_iter"] > 0).any()  # it refilled
    train, val = holdout_split(y, 0.1, 2, stratify=True)
    for i in range(search.n_models_):
        _assert_fitted_on(search.export_model(i).input_transform_, X[train])


def test_a_resumed_search_continues_every_value(classification):
    """warm_start=True on a search of several models continues each value's
    survivors through its own transform, as the search of that value alone."""
    X, y = classification
    params = dict(SEARCH, cv=2, ensemble="best", warm_start=True, max_iter=5)
    mixed = ParallelMLPClassifier(**params, input_transform=["none", "standard"])
    _fit(_fit(mixed, X, y), X, y)
    assert (mixed.n_iter_per_model_ > 5).any()
    for value in ("none", "standard"):
        alone = ParallelMLPClassifier(**params, input_transform=value)
        _fit(_fit(alone, X, y), X, y)
        rows = np.flatnonzero(mixed.cv_results_["param_input_transform"] == value)
        np.testing.assert_array_equal(mixed.n_iter_per_model_[rows], alone.n_iter_per_model_)
        for k in range(2):
            for j, i in enumerate(rows):
                for mine, theirs in zip(mixed._coefs[k][i], alone._coefs[k][j]):
                    np.testing.assert_array_equal(mine, theirs)


def test_shards_give_the_in_process_result(classification):
    """With n_jobs, every value's call is sharded over the same stacked data:
    the result of one in-process run."""
    from joblib import parallel_config

    X, y = classification
    params = dict(SEARCH, input_transform=VALUES, cv=3, ensemble="best", refit=False)
    alone = _fit(ParallelMLPClassifier(**params), X, y)
    with parallel_config(backend="threading"):
        sharded = _fit(ParallelMLPClassifier(**params, n_jobs=2), X, y)
    assert len(sharded.shards_) == 2 * len(VALUES)
    for k in range(3):
        for i in range(alone.n_models_):
            for mine, theirs in zip(sharded._coefs[k][i], alone._coefs[k][i]):
                np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(sharded.cv_results_["mean_test_score"],
                                  alone.cv_results_["mean_test_score"])


@pytest.mark.parametrize("kept_bytes", [None, 0])
def test_scores_on_the_rows_training_transformed(classification, monkeypatch, kept_bytes):
    """Scoring reads each fold's transformed rows from the copy its training
    made (``KEPT_COPY_BYTES``; 0: transformed again, as on large data):
    every split's test and train score, quantile transform included, is the
    exported model's score on those rows through scikit-learn's own
    transformer."""
    if kept_bytes is not None:
        monkeypatch.setattr(_inputs, "KEPT_COPY_BYTES", kept_bytes)
    X, y = classification
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    search = _fit(ParallelMLPClassifier(**SEARCH, input_transform=["quantile", "standard"], cv=cv,
                                        ensemble="best", return_train_score=True), X, y)
    for i in range(search.n_models_):
        for k, (train, test) in enumerate(cv.split(X, y)):
            model = search.export_model(i, fold=k)
            for part, rows in (("test", test), ("train", train)):
                assert model.score(X[rows], y[rows]) == pytest.approx(
                    search.cv_results_[f"split{k}_{part}_score"][i], abs=1e-12)
