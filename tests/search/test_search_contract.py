"""GridSearchCV's contract on the population estimators (issue 20, item 2):
refit callables, multi-metric callables, refit by the single scorer's name,
GridSearchCV's warnings and errors, and the dtypes of ``param_*``."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.metrics import accuracy_score, f1_score, make_scorer, r2_score
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.neural_network import MLPClassifier

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor

SMALL = dict(hidden_layer_sizes=[(6,), (4, 3)], activation=("relu", "tanh"), learning_rate_init=(0.01, 0.05),
             max_iter=8, random_state=0)


def _quiet_fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _two_metrics(estimator, X, y):
    predicted = estimator.predict(X)
    return {"acc": accuracy_score(y, predicted), "f1": f1_score(y, predicted, average="macro")}


def _worst_ranked(results):
    """A refit callable: the worst-ranked model, to show the choice is the callable's."""
    return int(np.argmax(results["rank_test_score"]))


@pytest.mark.parametrize("cv", [None, 3])
def test_refit_callable_chooses_best_index(iris, cv):
    X, y = iris
    # holdout_refit=False: with cv=None the chosen model itself predicts
    search = _quiet_fit(ParallelMLPClassifier(cv=cv, refit=_worst_ranked, holdout_refit=False, **SMALL), X, y)
    expected = int(np.argmax(search.cv_results_["rank_test_score"]))
    assert search.best_index_ == expected
    assert search.best_params_ == search.cv_results_["params"][expected]
    # as GridSearchCV: no best_score_ for a custom choice
    assert not hasattr(search, "best_score_")
    np.testing.assert_array_equal(search.ensemble_indices_, [expected])
    np.testing.assert_array_equal(search.predict(X), search.export_model(expected).predict(X))


def test_gridsearchcv_has_the_same_callable_semantics(iris):
    """The reference: GridSearchCV sets best_index_ from the callable and no best_score_."""
    X, y = iris
    grid = _quiet_fit(GridSearchCV(MLPClassifier(max_iter=5), {"alpha": [1e-4, 1e-2]}, cv=2,
                                   refit=_worst_ranked), X, y)
    assert not hasattr(grid, "best_score_") and hasattr(grid, "best_index_")


@pytest.mark.parametrize("returned, error, message", [
    (1.5, TypeError, "best_index_ returned is not an integer"),
    (-1, IndexError, "best_index_ index out of range"),
    (100, IndexError, "best_index_ index out of range"),
])
def test_refit_callable_returning_a_bad_index_raises_as_gridsearchcv(iris, returned, error, message):
    X, y = iris
    with pytest.raises(error, match=message):
        _quiet_fit(ParallelMLPClassifier(refit=lambda results: returned, **SMALL, cv=None), X, y)


@pytest.mark.parametrize("refit", ["acc", "f1"])
def test_callable_scoring_returning_a_dict_is_multimetric(iris, refit):
    X, y = iris
    search = _quiet_fit(ParallelMLPClassifier(cv=3, scoring=_two_metrics, refit=refit, **SMALL), X, y)
    assert search.multimetric_
    for name in ("acc", "f1"):
        for key in (f"split0_test_{name}", f"mean_test_{name}", f"rank_test_{name}"):
            assert key in search.cv_results_
            assert np.isfinite(search.cv_results_[key]).all()
    assert "mean_test_score" not in search.cv_results_
    assert search.best_index_ == int(np.argmin(search.cv_results_[f"rank_test_{refit}"]))
    assert search.best_score_ == search.cv_results_[f"mean_test_{refit}"][search.best_index_]
    # the dict's values are those of the named scorers on the same predictions
    model = search.export_model(0, fold=0)
    _, test = next(StratifiedKFold(3).split(X, y))
    assert search.cv_results_["split0_test_acc"][0] == pytest.approx(accuracy_score(y[test], model.predict(X[test])))


def test_callable_multimetric_without_refit_keeps_scores(iris):
    X, y = iris
    search = _quiet_fit(ParallelMLPClassifier(cv=3, scoring=_two_metrics, refit=False, **SMALL), X, y)
    assert np.isfinite(search.cv_results_["mean_test_acc"]).all()
    for name in ("best_index_", "best_score_", "best_params_", "best_estimator_"):
        assert not hasattr(search, name)


@pytest.mark.parametrize("refit", [True, "nope"])
def test_callable_multimetric_needs_a_refit_naming_a_key(iris, refit):
    X, y = iris
    with pytest.raises(ValueError, match="For multi-metric scoring, the parameter refit must be set to a scorer key"):
        _quiet_fit(ParallelMLPClassifier(cv=2, scoring=_two_metrics, refit=refit, **SMALL), X, y)


def test_callable_refit_with_multimetric_scoring(iris):
    X, y = iris
    search = _quiet_fit(ParallelMLPClassifier(cv=2, scoring=["accuracy", "f1_macro"], refit=lambda r: 2, **SMALL),
                        X, y)
    assert search.best_index_ == 2 and not hasattr(search, "best_score_")


@pytest.mark.parametrize("estimator_class, scoring", [
    (ParallelMLPClassifier, "accuracy"), (ParallelMLPClassifier, "balanced_accuracy"),
    (ParallelMLPRegressor, "r2"),
])
def test_refit_may_name_the_single_scorer(iris, estimator_class, scoring):
    X, y = iris
    target = y if estimator_class is ParallelMLPClassifier else X[:, 0]
    search = _quiet_fit(estimator_class(scoring=scoring, refit=scoring, **SMALL), X, target)
    assert search.best_index_ == int(np.argmin(search.cv_results_["rank_test_score"]))
    assert hasattr(search, "best_estimator_")


@pytest.mark.parametrize("cv", [2, None])
def test_diverged_models_warn_with_fitfailedwarning(iris, cv):
    X, y = iris
    params = dict(SMALL, learning_rate_init=(0.01, 1e6), solver="sgd", momentum=0.0, alpha=0.0)
    with pytest.warns(FitFailedWarning, match="diverged"):
        ParallelMLPRegressor(cv=cv, **params).fit(X, 1e3 * X[:, 0])


def test_non_finite_mean_scores_warn_as_gridsearchcv(iris):
    X, y = iris
    calls = []

    def first_nan(estimator, X, y):  # NaN for the first model scored only
        calls.append(1)
        return np.nan if len(calls) == 1 else 0.5

    with pytest.warns(UserWarning, match="One or more of the test scores are non-finite"):
        ParallelMLPClassifier(scoring=first_nan, refit=False, **SMALL, cv=None).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ParallelMLPClassifier(scoring="accuracy", refit=False, **SMALL, cv=None).fit(X, y)
    assert not [w for w in caught if "non-finite" in str(w.message)]


@pytest.mark.parametrize("cv", [[], iter(()), (split for split in [])], ids=["list", "iterator", "generator"])
def test_empty_cv_iterator_raises_no_fits_were_performed(iris, cv):
    X, y = iris
    with pytest.raises(ValueError, match="No fits were performed. Was the CV iterator empty"):
        ParallelMLPClassifier(cv=cv, **SMALL).fit(X, y)


@pytest.mark.parametrize("refit", [True, False])
def test_classes_only_after_a_refit(iris, refit):
    X, y = iris
    search = _quiet_fit(ParallelMLPClassifier(refit=refit, **SMALL, cv=None), X, y)
    assert hasattr(search, "classes_") == refit
    # every model keeps its classes
    np.testing.assert_array_equal(search.export_model(0).classes_, np.unique(y))


def test_a_refit_false_fit_drops_the_previous_refits_attributes(iris):
    X, y = iris
    search = _quiet_fit(ParallelMLPClassifier(**SMALL, cv=None), X, y)
    assert hasattr(search, "classes_") and hasattr(search, "coefs_")
    _quiet_fit(search.set_params(refit=False), X, y)
    assert not hasattr(search, "classes_") and not hasattr(search, "coefs_")


@pytest.mark.parametrize("name, kind", [
    ("param_learning_rate_init", "f"), ("param_alpha", "f"), ("param_repeat", "i"),
    ("param_activation", "O"), ("param_hidden_layer_sizes", "O"),
])
def test_param_columns_are_masked_arrays_with_gridsearchcv_dtypes(iris, name, kind):
    X, y = iris
    search = _quiet_fit(ParallelMLPClassifier(**SMALL, alpha=(1e-4, 1e-3), cv=None), X, y)
    column = search.cv_results_[name]
    assert isinstance(column, np.ma.MaskedArray)
    assert column.dtype.kind == kind
    assert not column.mask.any()
    assert list(column) == [p.get(name[len("param_"):], None) if name != "param_repeat" else 0
                            for p in search.cv_results_["params"]]


def test_param_dtype_matches_gridsearchcv(iris):
    X, y = iris
    grid = _quiet_fit(GridSearchCV(MLPClassifier(max_iter=2), {"learning_rate_init": [0.01, 0.05]}, cv=2), X, y)
    ours = _quiet_fit(ParallelMLPClassifier(**SMALL, cv=None), X, y)
    assert ours.cv_results_["param_learning_rate_init"].dtype == grid.cv_results_["param_learning_rate_init"].dtype


def test_regressor_default_score_is_r2_of_predictions(iris):
    """Sanity: the test column is R^2 on the held-out rows (used above)."""
    X, _ = iris
    search = _quiet_fit(ParallelMLPRegressor(cv=2, **SMALL), X, X[:, 0])
    model = search.export_model(0, fold=0)
    _, test = next(KFold(2).split(X))
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(r2_score(X[test, 0], model.predict(X[test])))


@pytest.mark.parametrize("scoring, refit", [("accuracy", "f1"), (None, "accuracy"), (_two_metrics, "acc")])
def test_any_string_refit_with_one_metric_refits_as_true(iris, scoring, refit):
    """As GridSearchCV: with one metric (a string, None, or a callable
    returning a float) any string ``refit`` refits as True does; only a
    callable returning a dict is multi-metric (its keys are the names)."""
    X, y = iris

    def one_metric(estimator, X, y):
        return accuracy_score(y, estimator.predict(X))

    scoring = one_metric if scoring is _two_metrics else scoring
    search = _quiet_fit(ParallelMLPClassifier(scoring=scoring, refit=refit, **SMALL, cv=None), X, y)
    reference = _quiet_fit(ParallelMLPClassifier(scoring=scoring, refit=True, **SMALL, cv=None), X, y)
    assert not search.multimetric_ and search.best_index_ == reference.best_index_
    np.testing.assert_array_equal(search.predict(X), reference.predict(X))
    assert search.score(X, y) == reference.score(X, y)


def _unweighted_accuracy(y_true, y_pred):
    """A metric without sample_weight."""
    return accuracy_score(y_true, y_pred)


@pytest.mark.parametrize("multimetric", [False, True])
def test_a_scorer_without_sample_weight_warns_and_scores_unweighted(iris, multimetric):
    """As GridSearchCV: a warning naming the scorer, which then scores
    without the weights (it is never called with them, so never fails)."""
    X, y = iris
    weights = np.random.RandomState(0).uniform(0.5, 2, len(y))
    unweighted = make_scorer(_unweighted_accuracy)
    scoring = {"plain": unweighted, "acc": "accuracy"} if multimetric else unweighted
    refit = "plain" if multimetric else True
    search = ParallelMLPClassifier(cv=3, scoring=scoring, refit=refit, **SMALL)
    match = "The scoring plain=.* does not support sample_weight" if multimetric else "does not support sample_weight"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(UserWarning, match=match):
            search.fit(X, y, sample_weight=weights)
    column = "mean_test_plain" if multimetric else "mean_test_score"
    # the same models scored by a callable that takes the weights and ignores them
    def ignoring_weights(estimator, X, y, sample_weight=None):
        return accuracy_score(y, estimator.predict(X))

    reference = ParallelMLPClassifier(cv=3, scoring=ignoring_weights, **SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # it takes sample_weight: no warning
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference.fit(X, y, sample_weight=weights)
    np.testing.assert_allclose(search.cv_results_[column], reference.cv_results_["mean_test_score"])
    if multimetric:
        assert not np.allclose(search.cv_results_["mean_test_acc"], search.cv_results_["mean_test_plain"])
