"""scikit-learn's ``sklearn/model_selection/tests/test_search.py`` (1.9.1), run against skpmlp.

Only the cases about a search estimator's contract are ported, each mapped
as a user would: ``GridSearchCV(est, grid, cv=..., scoring=..., refit=...)``
becomes ``ParallelMLPClassifier(**grid, cv=..., scoring=..., refit=...)``
(or ``param_grid=`` for a list of grids), ``RandomizedSearchCV(est,
distributions, n_iter=k)`` becomes ``ParallelMLPClassifier(**distributions,
n_models=k)``. The originals search ``C`` of SVC / LinearSVC /
LogisticRegression, ``alpha`` of Ridge, ``max_depth`` of trees or
``foo_param`` of a mock; here they search the MLP's ``alpha`` (the L2
penalty, ``1/C``'s role), ``hidden_layer_sizes`` (``max_depth``'s role) or
``learning_rate_init``, of a small MLP (:data:`BASE`). GridSearchCV's default
``cv=None`` is 5-fold where skpmlp's is a held-out split, so ``cv=5`` is
written where the original relies on that default. Mock estimators whose
failure is scripted (``FailingClassifier``) become a learning rate that makes
the MLP diverge, skpmlp's failed fit; the mock's own error text is dropped
from the expected messages. The RandomizedSearchCV variants are one
parametrization of the same case.

Left out, as they cannot apply (they test something other than a search
estimator's contract, or another estimator's feature):

- ``test_validate_parameter_input`` (x6), ``test_parameter_grid``,
  ``test_param_sampler``, ``test_parameters_sampler_replacement``: test
  scikit-learn's ``ParameterGrid`` / ``ParameterSampler`` classes.
- ``test_grid_search_pipeline_steps``, ``test_search_estimator_param`` (x3),
  ``test_search_html_repr``, ``test_cv_results_dtype_issue_29074``,
  ``test_search_with_estimators_issue_29157``,
  ``test_grid_search_allows_nans``, ``test_search_cv_using_minimal_compatible_estimator``
  (x4): estimators, pipelines or arbitrary objects as searched parameters,
  or a wrapped third-party estimator; skpmlp searches the MLP's own
  hyperparameters.
- ``test_SearchCV_with_fit_params`` (x2), ``test_scalar_fit_param`` (x2),
  ``test_scalar_fit_param_compat`` (x2), ``test_gridsearch_nd``: extra fit
  parameters or n-d X passed through to a wrapped estimator.
- ``test_grid_search_no_score``, ``test_refit`` (BrokenClassifier),
  ``test_transform_inverse_transform_round_trip``,
  ``test_predict_proba_disabled``, ``test_stochastic_gradient_loss_param``,
  ``test_search_cv_score_samples_error`` (x2),
  ``test_search_cv_score_samples_method`` (x2): estimators without ``score``
  or ``predict_proba``, with ``transform`` / ``score_samples``, that cannot
  be fitted twice; an MLP has ``score``, ``predict_proba`` and none of the
  others.
- ``test_grid_search_precomputed_kernel``,
  ``test_grid_search_precomputed_kernel_error_nonsquare``, the three
  ``pairwise`` tests, ``test_unsupervised_grid_search``,
  ``test_gridsearch_no_predict``: precomputed kernels, pairwise tags,
  unsupervised estimators.
- ``test_search_cv_results_none_param``: searches ``random_state`` over
  ``[0, None]``; no parameter skpmlp searches takes None (seeds are
  ``n_repeats``).
- ``test_custom_run_search``, ``test__custom_fit_no_run_search``: subclass
  the private ``BaseSearchCV``.
- ``test_multi_metric_search_forwards_metadata`` (x2),
  ``test_score_rejects_params_with_no_routing_enabled`` (x3): metadata
  routing, which skpmlp's ``fit`` / ``score`` do not take part in.
- ``test_array_api_search_cv_classifier``, ``test_yield_masked_array_*``
  (private helper), ``test_search_callbacks_*`` (scikit-learn's
  experimental callback API).

``test_search_with_2d_array`` (tuple-valued parameters stored as tuples) and
``test_cv_results_multi_size_array`` (array-valued parameters of different
sizes stored as objects) are ported with ``hidden_layer_sizes``, the MLP's
tuple-valued parameter. ``test_grid_search_cv_splits_consistency``'s last
part (duplicated candidates) is a case of its own.
"""

import pickle
import re
import warnings
from types import GeneratorType

import numpy as np
import pytest
from scipy.stats import expon
from sklearn.datasets import make_blobs, make_classification, make_multilabel_classification
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    f1_score,
    make_scorer,
    recall_score,
    roc_auc_score,
)
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    LeaveOneGroupOut,
    LeavePGroupsOut,
    StratifiedKFold,
    StratifiedShuffleSplit,
)
from sklearn.model_selection.tests.common import OneTimeSplitter
from sklearn.utils._mocking import MockDataFrame
from sklearn.utils._testing import (
    assert_allclose,
    assert_almost_equal,
    assert_array_almost_equal,
    assert_array_equal,
)
from sklearn.utils.fixes import CSR_CONTAINERS

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)

#: The MLP every search here is over (one value per parameter it does not search):
#: scikit-learn's, as GridSearchCV's estimator.
BASE = {
    **sklearn_mlp_params(),
    "hidden_layer_sizes": (10,),
    "activation": "relu",
    "learning_rate_init": 0.01,
    "max_iter": 100,
    "random_state": 0,
    # GridSearchCV's best_estimator_: the best configuration refitted alone
    # (skpmlp's default with folds is a greedy ensemble of fold models)
    "ensemble": "best",
}

#: A learning rate at which the MLP diverges: skpmlp's failed fit.
DIVERGING = 1e10


def _search(Estimator, kind="grid", n_iter=None, **params):
    """``GridSearchCV(mlp, grid)`` or ``RandomizedSearchCV(mlp, dists, n_iter)`` as skpmlp
    (a regressor's models on the targets as given: ``target_transform="none"``)."""
    params = {**BASE, **sklearn_mlp_params(Estimator), **params}
    if kind == "random":
        params["n_models"] = n_iter
    return Estimator(**params)


def grid(**params):
    return _search(ParallelMLPClassifier, **params)


KINDS = ["grid", "random"]


X = np.array([[-1, -1], [-2, -1], [1, 1], [2, 1]])
y = np.array([1, 1, 2, 2])


def test_grid_search(capsys):
    # Test that the best estimator contains the right value for the parameter
    # (MockClassifier's foo_param [1, 2, 3], scored 0, 1, 1: here alpha, where
    # alpha=1e3 leaves a constant classifier and the other two separate the data)
    grid_search = grid(alpha=[1e3, 1e-4, 1e-3], cv=2, verbose=3)
    # make sure it selects the smallest parameter in case of ties
    grid_search.fit(X, y)
    assert grid_search.best_estimator_.alpha == 1e-4

    assert_array_equal(grid_search.cv_results_["param_alpha"].data, [1e3, 1e-4, 1e-3])

    # Smoke test the score etc:
    grid_search.score(X, y)
    grid_search.predict_proba(X)

    # Test exception handling on scoring
    grid_search.scoring = "sklearn"
    with pytest.raises(ValueError):
        grid_search.fit(X, y)


def test_grid_search_score_method():
    X, y = make_classification(n_samples=100, n_classes=2, flip_y=0.2, random_state=0)
    # a two-unit MLP, so that the data stays hard for it as for LinearSVC
    g = {"alpha": [0.1], "hidden_layer_sizes": [(2,)]}

    search_no_scoring = grid(**g, cv=5, scoring=None).fit(X, y)
    search_accuracy = grid(**g, cv=5, scoring="accuracy").fit(X, y)
    search_auc = grid(**g, cv=5, scoring="roc_auc").fit(X, y)
    # (the LinearSVCNoScore search of the original is left out: an MLP has score)

    score_no_scoring = search_no_scoring.score(X, y)
    score_accuracy = search_accuracy.score(X, y)
    score_auc = search_auc.score(X, y)

    # ensure the test is sane
    assert score_auc < 1.0
    assert score_accuracy < 1.0
    assert score_auc != score_accuracy

    assert_almost_equal(score_accuracy, score_no_scoring)


def test_grid_search_groups():
    # Check if ValueError (when groups is None) propagates to GridSearchCV
    # And also check if groups is correctly passed to the cv object
    rng = np.random.RandomState(0)

    X, y = make_classification(n_samples=15, n_classes=2, random_state=0)
    groups = rng.randint(0, 3, 15)

    g = {"alpha": [1]}

    group_cvs = [
        LeaveOneGroupOut(),
        LeavePGroupsOut(2),
        GroupKFold(n_splits=3),
        GroupShuffleSplit(),
    ]
    error_msg = "The 'groups' parameter should not be None."
    for cv in group_cvs:
        gs = grid(**g, cv=cv)
        with pytest.raises(ValueError, match=error_msg):
            gs.fit(X, y)
        gs.fit(X, y, groups=groups)

    non_group_cvs = [StratifiedKFold(), StratifiedShuffleSplit()]
    for cv in non_group_cvs:
        gs = grid(**g, cv=cv)
        # Should not raise an error
        gs.fit(X, y)


def test_classes__property():
    # Test that classes_ property matches best_estimator_.classes_
    X = np.arange(100).reshape(10, 10)
    y = np.array([0] * 5 + [1] * 5)
    Cs = [0.1, 1, 10]

    grid_search = grid(alpha=Cs, cv=5)
    grid_search.fit(X, y)
    assert_array_equal(grid_search.best_estimator_.classes_, grid_search.classes_)

    # Test that regressors do not have a classes_ attribute
    grid_search = _search(ParallelMLPRegressor, alpha=[1.0, 2.0], cv=5)
    grid_search.fit(X, y)
    assert not hasattr(grid_search, "classes_")

    # Test that the grid searcher has no classes_ attribute before it's fit
    grid_search = grid(alpha=Cs, cv=5)
    assert not hasattr(grid_search, "classes_")

    # Test that the grid searcher has no classes_ attribute without a refit
    grid_search = grid(alpha=Cs, cv=5, refit=False)
    grid_search.fit(X, y)
    assert not hasattr(grid_search, "classes_")


@pytest.mark.parametrize("kind", KINDS)
def test_trivial_cv_results_attr(kind):
    # Test search over a "grid" with only one point.
    search = grid(kind=kind, n_iter=1, alpha=[1], cv=2)
    search.fit(X, y)
    assert hasattr(search, "cv_results_")


def test_no_refit():
    # Test that GSCV can be used for model selection alone without refitting
    for scoring in [None, ["accuracy", "precision"]]:
        # (the original builds the search without scoring=scoring too)
        grid_search = grid(alpha=[1, 2, 3], refit=False, cv=2)
        grid_search.fit(X, y)
        assert (
            not hasattr(grid_search, "best_estimator_")
            and hasattr(grid_search, "best_index_")
            and hasattr(grid_search, "best_params_")
        )

        # Make sure the functions predict/transform etc. raise meaningful
        # error messages (an MLP has no transform / inverse_transform)
        for fn_name in ("predict", "predict_proba", "predict_log_proba"):
            outer_msg = f"has no attribute '{fn_name}'"
            inner_msg = f"`refit=False`. {fn_name} is available only after refitting on the best parameters"
            with pytest.raises(AttributeError, match=outer_msg) as exec_info:
                getattr(grid_search, fn_name)(X)

            assert isinstance(exec_info.value.__cause__, AttributeError)
            assert inner_msg in str(exec_info.value.__cause__)

    # Test that an invalid refit param raises appropriate error messages
    error_msg = "For multi-metric scoring, the parameter refit must be set to a scorer key"
    for refit in [True, "recall", "accuracy"]:
        with pytest.raises(ValueError, match=error_msg):
            grid(refit=refit, scoring={"acc": "accuracy", "prec": "precision"}).fit(X, y)


def test_grid_search_error():
    # Test that grid search will capture errors on data with different length
    X_, y_ = make_classification(n_samples=200, n_features=100, random_state=0)

    cv = grid(alpha=[0.1, 1.0], cv=5)
    with pytest.raises(ValueError):
        cv.fit(X_[:180], y_)


def test_grid_search_one_grid_point():
    X_, y_ = make_classification(n_samples=200, n_features=100, random_state=0)
    param_dict = {"alpha": [1.0], "activation": ["relu"], "learning_rate_init": [0.01]}

    cv = grid(**param_dict, cv=5, dtype="float64")
    cv.fit(X_, y_)

    clf = SingleMLPClassifier(
        hidden_layer_sizes=(10,), alpha=1.0, activation="relu", learning_rate_init=0.01, max_iter=100,
        random_state=0, dtype="float64",
    )
    clf.fit(X_, y_)

    for a, b in zip(clf.coefs_ + clf.intercepts_, cv.best_estimator_.coefs_ + cv.best_estimator_.intercepts_):
        assert_array_equal(a, b)


def test_grid_search_when_param_grid_includes_range():
    # Test that the best estimator contains the right value for the parameter
    # (alpha=0 separates the data; 1000 and 2000 leave constant classifiers)
    grid_search = grid(alpha=range(0, 3000, 1000), cv=2)
    grid_search.fit(X, y)
    assert grid_search.best_estimator_.alpha == 0


def test_grid_search_bad_param_grid():
    X, y = make_classification(n_samples=10, n_features=5, random_state=0)
    param_dict = {"alpha": 1}
    error_msg = re.escape(
        "Parameter grid for parameter 'alpha' needs to be a list or "
        "a numpy array, but got 1 (of type int) instead. Single "
        "values need to be wrapped in a list with one element."
    )
    search = grid(param_grid=param_dict)
    with pytest.raises(TypeError, match=error_msg):
        search.fit(X, y)

    param_dict = {"alpha": []}
    error_msg = re.escape("Parameter grid for parameter 'alpha' need to be a non-empty sequence, got: []")
    search = grid(param_grid=param_dict)
    with pytest.raises(ValueError, match=error_msg):
        search.fit(X, y)

    param_dict = {"alpha": "1,2,3"}
    error_msg = re.escape(
        "Parameter grid for parameter 'alpha' needs to be a list or a numpy array, "
        "but got '1,2,3' (of type str) instead. Single values need to be "
        "wrapped in a list with one element."
    )
    search = grid(param_grid=param_dict)
    with pytest.raises(TypeError, match=error_msg):
        search.fit(X, y)

    param_dict = {"alpha": np.ones((3, 2))}
    search = grid(param_grid=param_dict)
    with pytest.raises(ValueError):
        search.fit(X, y)


@pytest.mark.parametrize("csr_container", CSR_CONTAINERS)
def test_grid_search_sparse(csr_container):
    # Test that grid search works with both dense and sparse matrices
    X_, y_ = make_classification(n_samples=200, n_features=100, random_state=0)

    cv = grid(alpha=[0.1, 1.0], cv=5)
    cv.fit(X_[:180], y_[:180])
    y_pred = cv.predict(X_[180:])
    C = cv.best_estimator_.alpha

    X_ = csr_container(X_)
    cv = grid(alpha=[0.1, 1.0], cv=5)
    cv.fit(X_[:180].tocoo(), y_[:180])
    y_pred2 = cv.predict(X_[180:])
    C2 = cv.best_estimator_.alpha

    assert np.mean(y_pred == y_pred2) >= 0.9
    assert C == C2


@pytest.mark.parametrize("csr_container", CSR_CONTAINERS)
def test_grid_search_sparse_scoring(csr_container):
    X_, y_ = make_classification(n_samples=200, n_features=100, random_state=0)

    cv = grid(alpha=[0.1, 1.0], cv=5, scoring="f1")
    cv.fit(X_[:180], y_[:180])
    y_pred = cv.predict(X_[180:])
    C = cv.best_estimator_.alpha

    X_ = csr_container(X_)
    cv = grid(alpha=[0.1, 1.0], cv=5, scoring="f1")
    cv.fit(X_[:180], y_[:180])
    y_pred2 = cv.predict(X_[180:])
    C2 = cv.best_estimator_.alpha

    assert_array_equal(y_pred, y_pred2)
    assert C == C2

    # test loss where greater is worse
    def f1_loss(y_true_, y_pred_):
        return -f1_score(y_true_, y_pred_)

    F1Loss = make_scorer(f1_loss, greater_is_better=False)
    cv = grid(alpha=[0.1, 1.0], cv=5, scoring=F1Loss)
    cv.fit(X_[:180], y_[:180])
    y_pred3 = cv.predict(X_[180:])
    C3 = cv.best_estimator_.alpha

    assert C == C3
    assert_array_equal(y_pred, y_pred3)


def test_refit_callable():
    """
    Test refit=callable, which adds flexibility in identifying the
    "best" estimator.
    """
    # LinearSVC's C=[0.01, 0.1, 1] as alpha=[100, 10, 1]: the first the most regularised

    def refit_callable(cv_results):
        """
        A dummy function tests `refit=callable` interface.
        Return the index of a model that has the least
        `mean_test_score`.
        """
        # Fit a dummy clf with `refit=True` to get a list of keys in
        # clf.cv_results_.
        X, y = make_classification(n_samples=100, n_features=4, random_state=42)
        clf = grid(alpha=[100, 10, 1], cv=5, scoring="precision", refit=True)
        clf.fit(X, y)
        # Ensure that `best_index_ != 0` for this dummy clf
        assert clf.best_index_ != 0

        # Assert every key matches those in `cv_results`
        for key in clf.cv_results_.keys():
            assert key in cv_results

        return cv_results["mean_test_score"].argmin()

    X, y = make_classification(n_samples=100, n_features=4, random_state=42)
    clf = grid(alpha=[100, 10, 1], cv=5, scoring="precision", refit=refit_callable)
    clf.fit(X, y)

    assert clf.best_index_ == 0
    # Ensure `best_score_` is disabled when using `refit=callable`
    assert not hasattr(clf, "best_score_")


def test_refit_callable_invalid_type():
    """
    Test implementation catches the errors when 'best_index_' returns an
    invalid result.
    """

    def refit_callable_invalid_type(cv_results):
        """
        A dummy function tests when returned 'best_index_' is not integer.
        """
        return None

    X, y = make_classification(n_samples=100, n_features=4, random_state=42)

    clf = grid(alpha=[10, 1], cv=5, scoring="precision", refit=refit_callable_invalid_type)
    with pytest.raises(TypeError, match="best_index_ returned is not an integer"):
        clf.fit(X, y)


@pytest.mark.parametrize("out_bound_value", [-1, 2])
@pytest.mark.parametrize("kind", ["random", "grid"])
def test_refit_callable_out_bound(out_bound_value, kind):
    """
    Test implementation catches the errors when 'best_index_' returns an
    out of bound result.
    """

    def refit_callable_out_bound(cv_results):
        """
        A dummy function tests when returned 'best_index_' is out of bounds.
        """
        return out_bound_value

    X, y = make_classification(n_samples=100, n_features=4, random_state=42)

    # RandomizedSearchCV's default n_iter=10 over a list of 2: 2 candidates
    clf = grid(kind=kind, n_iter=2, alpha=[10, 1], cv=5, scoring="precision", refit=refit_callable_out_bound)
    with pytest.raises(IndexError, match="best_index_ index out of range"):
        clf.fit(X, y)


def test_refit_callable_multi_metric():
    """
    Test refit=callable in multiple metric evaluation setting
    """

    def refit_callable(cv_results):
        """
        A dummy function tests `refit=callable` interface.
        Return the index of a model that has the least
        `mean_test_prec`.
        """
        assert "mean_test_prec" in cv_results
        return cv_results["mean_test_prec"].argmin()

    X, y = make_classification(n_samples=100, n_features=4, random_state=42)
    scoring = {"Accuracy": make_scorer(accuracy_score), "prec": "precision"}
    clf = grid(alpha=[100, 10, 1], cv=5, scoring=scoring, refit=refit_callable)
    clf.fit(X, y)

    assert clf.best_index_ == 0
    # Ensure `best_score_` is disabled when using `refit=callable`
    assert not hasattr(clf, "best_score_")


def test_X_as_list():
    # Pass X as list (the original checks that the wrapped estimator sees the
    # list; the fused engine converts it, so here: fit and score work)
    X = np.arange(100).reshape(10, 10)
    y = np.array([0] * 5 + [1] * 5)

    cv = KFold(n_splits=3)
    grid_search = grid(alpha=[1, 2, 3], cv=cv)
    grid_search.fit(X.tolist(), y).score(X, y)
    assert hasattr(grid_search, "cv_results_")


def test_y_as_list():
    # Pass y as list (see test_X_as_list)
    X = np.arange(100).reshape(10, 10)
    y = np.array([0] * 5 + [1] * 5)

    cv = KFold(n_splits=3)
    grid_search = grid(alpha=[1, 2, 3], cv=cv)
    grid_search.fit(X, y.tolist()).score(X, y)
    assert hasattr(grid_search, "cv_results_")


def test_pandas_input():
    # check the search doesn't destroy pandas dataframe (the original checks
    # that the wrapped estimator sees them; here fit, score and predict take them)
    types = [(MockDataFrame, MockDataFrame)]
    try:
        from pandas import DataFrame, Series

        types.append((DataFrame, Series))
    except ImportError:
        pass

    X = np.arange(100).reshape(10, 10)
    y = np.array([0] * 5 + [1] * 5)

    for InputFeatureType, TargetType in types:
        # X dataframe, y series
        X_df, y_ser = InputFeatureType(X), TargetType(y)

        grid_search = grid(alpha=[1, 2, 3], cv=5)
        grid_search.fit(X_df, y_ser).score(X_df, y_ser)
        grid_search.predict(X_df)
        assert hasattr(grid_search, "cv_results_")


def check_cv_results_array_types(search, param_keys, score_keys, expected_cv_results_kinds):
    # Check if the search `cv_results`'s array are of correct types
    cv_results = search.cv_results_
    assert all(isinstance(cv_results[param], np.ma.MaskedArray) for param in param_keys)
    assert {key: cv_results[key].dtype.kind for key in param_keys} == expected_cv_results_kinds
    assert not any(isinstance(cv_results[key], np.ma.MaskedArray) for key in score_keys)
    assert all(cv_results[key].dtype == np.float64 for key in score_keys if not key.startswith("rank"))

    scorer_keys = search.scorer_.keys() if search.multimetric_ else ["score"]

    for key in scorer_keys:
        assert cv_results["rank_test_%s" % key].dtype == np.int32


def check_cv_results_keys(cv_results, param_keys, score_keys, n_cand, extra_keys=()):
    # Test the search.cv_results_ contains all the required results
    all_keys = param_keys + score_keys + extra_keys
    assert_array_equal(sorted(cv_results.keys()), sorted(all_keys + ("params",)))
    assert all(cv_results[key].shape == (n_cand,) for key in param_keys + score_keys)


#: skpmlp's own columns (documented): the repeat index and each model's epochs
SKPMLP_KEYS = ("param_repeat", "n_iter")

#: SVC's [{kernel: [rbf], C, gamma}, {kernel: [poly], degree}] as the MLP's
CONDITIONAL_GRID = [
    dict(activation=["relu"], alpha=[1e-4, 1e-2], learning_rate_init=[0.01, 0.1]),
    dict(activation=["tanh"], hidden_layer_sizes=[(5,), (10,)]),
]

SCORE_KEYS = (
    "mean_test_score",
    "mean_train_score",
    "rank_test_score",
    "split0_test_score",
    "split1_test_score",
    "split2_test_score",
    "split0_train_score",
    "split1_train_score",
    "split2_train_score",
    "std_test_score",
    "std_train_score",
    "mean_fit_time",
    "std_fit_time",
    "mean_score_time",
    "std_score_time",
)
PARAM_KEYS = ("param_alpha", "param_hidden_layer_sizes", "param_learning_rate_init", "param_activation")


def _check_masks(cv_results, n_candidates, n_tanh):
    # the "poly" subspace (tanh here) sets only its own parameter, and the "rbf" one only its two
    tanh_results = [
        (
            cv_results["param_alpha"].mask[i]
            and cv_results["param_learning_rate_init"].mask[i]
            and not cv_results["param_hidden_layer_sizes"].mask[i]
        )
        for i in range(n_candidates)
        if cv_results["param_activation"][i] == "tanh"
    ]
    assert all(tanh_results)
    relu_results = [
        (
            not cv_results["param_alpha"].mask[i]
            and not cv_results["param_learning_rate_init"].mask[i]
            and cv_results["param_hidden_layer_sizes"].mask[i]
        )
        for i in range(n_candidates)
        if cv_results["param_activation"][i] == "relu"
    ]
    assert all(relu_results)
    return len(tanh_results), len(relu_results)


def test_grid_search_cv_results():
    X, y = make_classification(n_samples=50, n_features=4, random_state=42)

    n_grid_points = 6
    n_candidates = n_grid_points

    search = grid(cv=3, param_grid=CONDITIONAL_GRID, return_train_score=True)
    search.fit(X, y)
    cv_results = search.cv_results_
    # Check if score and timing are reasonable
    assert all(cv_results["rank_test_score"] >= 1)
    assert (all(cv_results[k] >= 0) for k in SCORE_KEYS if k != "rank_test_score")
    assert (all(cv_results[k] <= 1) for k in SCORE_KEYS if "time" not in k and k != "rank_test_score")
    # Check cv_results structure
    expected_cv_results_kinds = {
        "param_alpha": "f",
        "param_hidden_layer_sizes": "O",
        "param_learning_rate_init": "f",
        "param_activation": "O",
    }
    check_cv_results_array_types(search, PARAM_KEYS, SCORE_KEYS, expected_cv_results_kinds)
    check_cv_results_keys(cv_results, PARAM_KEYS, SCORE_KEYS, n_candidates, SKPMLP_KEYS)
    # Check masking
    assert _check_masks(search.cv_results_, n_candidates, 2) == (2, 4)


def test_random_search_cv_results():
    X, y = make_classification(n_samples=50, n_features=4, random_state=42)

    n_search_iter = 30
    params = [
        {"activation": ["relu"], "alpha": expon(scale=10), "learning_rate_init": expon(scale=0.1)},
        {"activation": ["tanh"], "hidden_layer_sizes": [(2,), (3,)]},
    ]
    n_candidates = n_search_iter

    search = grid(kind="random", n_iter=n_search_iter, cv=3, param_grid=params, return_train_score=True)
    search.fit(X, y)
    cv_results = search.cv_results_
    # Check results structure
    expected_cv_results_kinds = {
        "param_alpha": "f",
        "param_hidden_layer_sizes": "O",
        "param_learning_rate_init": "f",
        "param_activation": "O",
    }
    check_cv_results_array_types(search, PARAM_KEYS, SCORE_KEYS, expected_cv_results_kinds)
    check_cv_results_keys(cv_results, PARAM_KEYS, SCORE_KEYS, n_candidates, SKPMLP_KEYS)
    _check_masks(cv_results, n_candidates, None)


# both kinds: RandomizedSearchCV's case (n_models) differs as GridSearchCV's does
@pytest.mark.parametrize("kind", ["grid", "random"])
def test_search_default_iid(kind):
    # noise-free simple 2d-data
    X, y = make_blobs(
        centers=[[0, 0], [1, 0], [0, 1], [1, 1]],
        random_state=0,
        cluster_std=0.1,
        shuffle=False,
        n_samples=80,
    )
    # split dataset into two folds that are not iid
    # first one contains data of all 4 blobs, second only from two.
    mask = np.ones(X.shape[0], dtype=bool)
    mask[np.where(y == 1)[0][::2]] = 0
    mask[np.where(y == 2)[0][::2]] = 0
    # this leads to perfect classification on one fold and a score of 1/3 on
    # the other
    # create "cv" for splits
    cv = [[mask, ~mask], [~mask, mask]]

    search = grid(kind=kind, n_iter=2, alpha=[1e-4, 1e-3], max_iter=200, cv=cv, return_train_score=True)
    search.fit(X, y)

    test_cv_scores = np.array([search.cv_results_["split%d_test_score" % s][0] for s in range(search.n_splits_)])
    test_mean = search.cv_results_["mean_test_score"][0]
    test_std = search.cv_results_["std_test_score"][0]

    train_cv_scores = np.array([search.cv_results_["split%d_train_score" % s][0] for s in range(search.n_splits_)])
    train_mean = search.cv_results_["mean_train_score"][0]
    train_std = search.cv_results_["std_train_score"][0]

    assert search.cv_results_["param_alpha"][0] == 1e-4
    # scores are the same as above
    assert_allclose(test_cv_scores, [1, 1.0 / 3.0])
    assert_allclose(train_cv_scores, [1, 1])
    # Unweighted mean/std is used
    assert test_mean == pytest.approx(np.mean(test_cv_scores))
    assert test_std == pytest.approx(np.std(test_cv_scores))

    # For the train scores, we do not take a weighted mean irrespective of
    # i.i.d. or not
    assert train_mean == pytest.approx(1)
    assert train_std == pytest.approx(0)


def test_grid_search_cv_results_multimetric():
    X, y = make_classification(n_samples=50, n_features=4, random_state=42)

    n_splits = 3
    grid_searches = []
    for scoring in (
        {"accuracy": make_scorer(accuracy_score), "recall": make_scorer(recall_score)},
        "accuracy",
        "recall",
    ):
        grid_search = grid(cv=n_splits, param_grid=CONDITIONAL_GRID, scoring=scoring, refit=False)
        grid_search.fit(X, y)
        grid_searches.append(grid_search)

    compare_cv_results_multimetric_with_single(*grid_searches)


def test_random_search_cv_results_multimetric():
    X, y = make_classification(n_samples=50, n_features=4, random_state=42)

    n_splits = 3
    n_search_iter = 30

    params = dict(alpha=np.logspace(-4, 1, 3))
    for refit in (True, False):
        random_searches = []
        for scoring in (("accuracy", "recall"), "accuracy", "recall"):
            # If True, for multi-metric pass refit='accuracy'
            if refit and isinstance(scoring, tuple):
                refit = "accuracy"
            random_search = grid(
                kind="random", n_iter=n_search_iter, cv=n_splits, **params, scoring=scoring, refit=refit
            )
            random_search.fit(X, y)
            random_searches.append(random_search)

        compare_cv_results_multimetric_with_single(*random_searches)
        compare_refit_methods_when_refit_with_acc(random_searches[0], random_searches[1], refit)


def compare_cv_results_multimetric_with_single(search_multi, search_acc, search_rec):
    """Compare multi-metric cv_results with the ensemble of multiple
    single metric cv_results from single metric grid/random search"""

    assert search_multi.multimetric_
    assert_array_equal(sorted(search_multi.scorer_), ("accuracy", "recall"))

    cv_results_multi = search_multi.cv_results_
    cv_results_acc_rec = {re.sub("_score$", "_accuracy", k): v for k, v in search_acc.cv_results_.items()}
    cv_results_acc_rec.update({re.sub("_score$", "_recall", k): v for k, v in search_rec.cv_results_.items()})

    # Check if score and timing are reasonable, also checks if the keys
    # are present
    assert all(
        (
            np.all(cv_results_multi[k] <= 1)
            for k in (
                "mean_score_time",
                "std_score_time",
                "mean_fit_time",
                "std_fit_time",
            )
        )
    )

    # Compare the keys, other than time keys, among multi-metric and
    # single metric grid search results. np.testing.assert_equal performs a
    # deep nested comparison of the two cv_results dicts
    np.testing.assert_equal(
        {k: v for k, v in cv_results_multi.items() if not k.endswith("_time")},
        {k: v for k, v in cv_results_acc_rec.items() if not k.endswith("_time")},
    )


def compare_refit_methods_when_refit_with_acc(search_multi, search_acc, refit):
    """Compare refit multi-metric search methods with single metric methods"""
    assert search_acc.refit == refit
    if refit:
        assert search_multi.refit == "accuracy"
    else:
        assert not search_multi.refit
        return  # search cannot predict/score without refit

    X, y = make_blobs(n_samples=100, n_features=4, random_state=42)
    for method in ("predict", "predict_proba", "predict_log_proba"):
        assert_almost_equal(getattr(search_multi, method)(X), getattr(search_acc, method)(X))
    assert_almost_equal(search_multi.score(X, y), search_acc.score(X, y))
    for key in ("best_index_", "best_score_", "best_params_"):
        assert getattr(search_multi, key) == getattr(search_acc, key)


def test_unsupported_sample_weight_scorer():
    """Checks that fitting with sample_weight raises a warning if the scorer does not
    support sample_weight"""

    def fake_score_func(y_true, y_pred):
        "Fake scoring function that does not support sample_weight"
        return 0.5

    fake_scorer = make_scorer(fake_score_func)

    X, y = make_classification(n_samples=10, n_features=4, random_state=42)
    sw = np.ones_like(y)
    search_cv = grid(alpha=[1, 10], cv=5)
    # function
    search_cv.set_params(scoring=fake_score_func)
    with pytest.warns(UserWarning, match="does not support sample_weight"):
        search_cv.fit(X, y, sample_weight=sw)
    # scorer
    search_cv.set_params(scoring=fake_scorer)
    with pytest.warns(UserWarning, match="does not support sample_weight"):
        search_cv.fit(X, y, sample_weight=sw)
    # multi-metric evaluation
    search_cv.set_params(scoring=dict(fake=fake_scorer, accuracy="accuracy"), refit=False)
    # only fake scorer does not support sample_weight
    with pytest.warns(UserWarning, match=r"The scoring fake=.* does not support sample_weight"):
        search_cv.fit(X, y, sample_weight=sw)


@pytest.mark.parametrize(
    "Estimator, kind",
    [
        (ParallelMLPClassifier, "grid"),  # GridSearchCV(LogisticRegression(), {"C": [1, 10, 100]})
        (ParallelMLPRegressor, "random"),  # RandomizedSearchCV(Ridge(), {"alpha": [1, 0.1, 0.01]})
    ],
)
def test_search_cv_sample_weight_equivalence(Estimator, kind):
    # the MLP trains full-batch (batch_size above the rows): weighted rows and
    # repeated rows then give the same loss, gradients and L2 divisor
    rng = np.random.RandomState(42)
    n_classes = 3
    n_samples_per_group = 30
    n_groups = 4
    n_samples = n_groups * n_samples_per_group
    X = rng.rand(n_samples, n_samples * 2)
    y = rng.randint(0, n_classes, size=n_samples)
    sw = rng.randint(0, 5, size=n_samples)
    # we use groups with LeaveOneGroupOut to ensure that
    # the splits are the same in the repeated/weighted datasets
    groups = np.tile(np.arange(n_groups), n_samples_per_group)

    X_weighted = X
    y_weighted = y
    groups_weighted = groups
    splits_weighted = list(LeaveOneGroupOut().split(X_weighted, groups=groups_weighted))
    # repeat samples according to weights
    X_repeated = X_weighted.repeat(repeats=sw, axis=0)
    y_repeated = y_weighted.repeat(repeats=sw)
    groups_repeated = groups_weighted.repeat(repeats=sw)
    splits_repeated = list(LeaveOneGroupOut().split(X_repeated, groups=groups_repeated))

    params = dict(kind=kind, n_iter=3, alpha=[1.0, 0.1, 0.01], batch_size=1000, max_iter=50, dtype="float64")
    estimator_weighted = _search(Estimator, **params, cv=splits_weighted)
    estimator_repeated = _search(Estimator, **params, cv=splits_repeated)

    estimator_repeated.fit(X_repeated, y=y_repeated, sample_weight=None)
    estimator_weighted.fit(X_weighted, y=y_weighted, sample_weight=sw)

    # check that scores stored in cv_results_
    # are equal for the weighted/repeated datasets
    score_keys = [key for key in estimator_repeated.cv_results_ if key.endswith("score")]
    for key in score_keys:
        s1 = estimator_repeated.cv_results_[key]
        s2 = estimator_weighted.cv_results_[key]
        err_msg = f"{key} values are not equal for weighted/repeated datasets"
        assert_allclose(s1, s2, err_msg=err_msg)

    for key in ["best_score_", "best_index_"]:
        s1 = getattr(estimator_repeated, key)
        s2 = getattr(estimator_weighted, key)
        err_msg = f"{key} values are not equal for weighted/repeated datasets"
        assert_almost_equal(s1, s2, err_msg=err_msg)

    for method in ["predict_proba", "decision_function", "predict", "transform"]:
        if hasattr(estimator_weighted, method):
            s1 = getattr(estimator_repeated, method)(X)
            s2 = getattr(estimator_weighted, method)(X)
            err_msg = (
                f"Comparing the output of {method} revealed that fitting "
                "with `sample_weight` is not equivalent to fitting with removed "
                "or repeated data points."
            )
            assert_allclose(s1, s2, err_msg=err_msg)


@pytest.mark.parametrize("kind", KINDS)
def test_search_cv_results_rank_tie_breaking(kind):
    X, y = make_blobs(n_samples=50, random_state=42)

    # The two alpha values are close enough to give similar models
    # which would result in a tie of their mean cv-scores
    param_grid = {"alpha": [1e-4, 1.001e-4, 1e3]}

    search = grid(kind=kind, n_iter=3, **param_grid, cv=5, return_train_score=True)
    search.fit(X, y)
    cv_results = search.cv_results_
    # Check tie breaking strategy -
    # Check that there is a tie in the mean scores between
    # candidates 1 and 2 alone
    assert_almost_equal(cv_results["mean_test_score"][0], cv_results["mean_test_score"][1])
    assert_almost_equal(cv_results["mean_train_score"][0], cv_results["mean_train_score"][1])
    assert not np.allclose(cv_results["mean_test_score"][1], cv_results["mean_test_score"][2])
    assert not np.allclose(cv_results["mean_train_score"][1], cv_results["mean_train_score"][2])
    # 'min' rank should be assigned to the tied candidates
    assert_almost_equal(search.cv_results_["rank_test_score"], [1, 1, 3])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
# both kinds: RandomizedSearchCV's case (n_models) differs as GridSearchCV's does
@pytest.mark.parametrize("kind", ["grid", "random"])
def test_search_cv_timing(kind):
    # LinearSVC's C=[0, 1] (C=0 fails) as a diverging learning rate and a sane one
    X = [[1], [2], [3], [4]]
    y = [0, 1, 1, 0]

    search = grid(kind=kind, n_iter=2, solver="sgd", learning_rate_init=[DIVERGING, 0.01], cv=2, error_score=0)
    search.fit(X, y)
    for key in ["mean_fit_time", "std_fit_time"]:
        # NOTE The precision of time.time in windows is not high
        # enough for the fit/score times to be non-zero for trivial X and y
        assert np.all(search.cv_results_[key] >= 0)
        assert np.all(search.cv_results_[key] < 1)

    for key in ["mean_score_time", "std_score_time"]:
        assert search.cv_results_[key][1] >= 0
        assert search.cv_results_[key][0] == 0.0
        assert np.all(search.cv_results_[key] < 1)

    assert hasattr(search, "refit_time_")
    assert isinstance(search.refit_time_, float)
    assert search.refit_time_ >= 0


def _single(Single, params, **fixed):
    """The model of a cv_results_ row, trained alone (what GridSearchCV clones and fits)."""
    keep = {k: v for k, v in BASE.items() if k not in params and k != "ensemble"}
    return Single(**keep, **params, **fixed)


def test_grid_search_correct_score_results():
    # test that correct scores are used
    n_splits = 3
    X, y = make_blobs(random_state=0, centers=2)
    Cs = [0.1, 1, 10]
    for score in ["f1", "roc_auc"]:
        grid_search = grid(alpha=Cs, scoring=score, cv=n_splits, dtype="float64")
        cv_results = grid_search.fit(X, y).cv_results_

        # Test scorer names
        result_keys = list(cv_results.keys())
        expected_keys = ("mean_test_score", "rank_test_score") + tuple(
            "split%d_test_score" % cv_i for cv_i in range(n_splits)
        )
        assert all(np.isin(expected_keys, result_keys))

        cv = StratifiedKFold(n_splits=n_splits)
        n_splits = grid_search.n_splits_
        for candidate_i, C in enumerate(Cs):
            clf = _single(SingleMLPClassifier, {"alpha": C}, dtype="float64")
            cv_scores = np.array(
                [grid_search.cv_results_["split%d_test_score" % s][candidate_i] for s in range(n_splits)]
            )
            for i, (train, test) in enumerate(cv.split(X, y)):
                clf.fit(X[train], y[train])
                if score == "f1":
                    correct_score = f1_score(y[test], clf.predict(X[test]))
                elif score == "roc_auc":
                    dec = clf.predict_proba(X[test])[:, 1]
                    correct_score = roc_auc_score(y[test], dec)
                assert_almost_equal(correct_score, cv_scores[i])


@pytest.mark.parametrize("kind", KINDS)
def test_pickle(kind):
    # Test that a fit search can be pickled
    search = grid(kind=kind, n_iter=3, alpha=[1, 2, 3], refit=True, cv=2)
    search.fit(X, y)
    search_pickled = pickle.loads(pickle.dumps(search))
    assert_array_almost_equal(search.predict(X), search_pickled.predict(X))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "Estimator, Single",
    [(ParallelMLPRegressor, SingleMLPRegressor), (ParallelMLPClassifier, SingleMLPClassifier)],
)
def test_grid_search_with_multioutput_data(Estimator, Single, kind):
    # Test search with multi-output estimator (DecisionTree's max_depth [1, 2, 3, 4] as alpha)

    X, y = make_multilabel_classification(return_indicator=True, random_state=0)

    est_parameters = {"alpha": [1e-4, 1e-3, 1e-2, 1e-1]}
    cv = KFold()

    # (n_iter=3 for the randomized search, as the original)
    search = _search(Estimator, kind=kind, n_iter=3, **est_parameters, cv=cv, dtype="float64")
    search.fit(X, y)
    res_params = search.cv_results_["params"]
    for cand_i in range(len(res_params)):
        est = _single(Single, res_params[cand_i], dtype="float64")

        for i, (train, test) in enumerate(cv.split(X, y)):
            est.fit(X[train], y[train])
            correct_score = est.score(X[test], y[test])
            assert_almost_equal(
                correct_score,
                search.cv_results_["split%d_test_score" % i][cand_i],
            )


def _get_cand_scores(gs, i):
    return np.array([gs.cv_results_["split%d_test_score" % s][i] for s in range(gs.n_splits_)])


#: FailingClassifier's parameter [0, 1, 2], the third failing
FAILING_GRID = {"solver": "sgd", "learning_rate_init": [0.001, 0.01, DIVERGING]}
FAILING_PARAMETER = 2


def test_grid_search_failing_classifier():
    # GridSearchCV with on_error != 'raise'
    # Ensures that a warning is raised and score reset where appropriate.

    X, y = make_classification(n_samples=20, n_features=10, random_state=0)

    # refit=False because we only want to check that errors caused by fits
    # to individual folds will be caught and warnings raised instead.
    gs = grid(**FAILING_GRID, cv=5, scoring="accuracy", refit=False, error_score=0.0)

    warning_message = re.compile(
        "5 fits failed.+total of 15.+The score on these"
        r" train-test partitions for these parameters will be set to 0\.0",
        flags=re.DOTALL,
    )
    with pytest.warns(FitFailedWarning, match=warning_message):
        gs.fit(X, y)
    n_candidates = len(gs.cv_results_["params"])

    # Ensure that grid scores were set to zero as required for those fits
    # that are expected to fail.
    assert all(
        np.all(_get_cand_scores(gs, cand_i) == 0.0)
        for cand_i in range(n_candidates)
        if gs.cv_results_["param_learning_rate_init"][cand_i] == DIVERGING
    )

    gs = grid(**FAILING_GRID, cv=5, scoring="accuracy", refit=False, error_score=float("nan"))
    warning_message = re.compile(
        "5 fits failed.+total of 15.+The score on these"
        r" train-test partitions for these parameters will be set to nan",
        flags=re.DOTALL,
    )
    with pytest.warns(FitFailedWarning, match=warning_message):
        gs.fit(X, y)
    n_candidates = len(gs.cv_results_["params"])
    assert all(
        np.all(np.isnan(_get_cand_scores(gs, cand_i)))
        for cand_i in range(n_candidates)
        if gs.cv_results_["param_learning_rate_init"][cand_i] == DIVERGING
    )

    ranks = gs.cv_results_["rank_test_score"]

    # Check that succeeded estimators have lower ranks
    assert ranks[0] <= 2 and ranks[1] <= 2
    # Check that failed estimator has the highest rank
    assert ranks[FAILING_PARAMETER] == 3
    assert gs.best_index_ != FAILING_PARAMETER


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_grid_search_classifier_all_fits_fail():
    X, y = make_classification(n_samples=20, n_features=10, random_state=0)

    # [FAILING_PARAMETER] * 3
    gs = grid(solver="sgd", learning_rate_init=[DIVERGING] * 3, cv=5, error_score=0.0)

    warning_message = re.compile("All the 15 fits failed", flags=re.DOTALL)
    with pytest.raises(ValueError, match=warning_message):
        gs.fit(X, y)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_grid_search_failing_classifier_raise():
    # GridSearchCV with on_error == 'raise' raises the error

    X, y = make_classification(n_samples=20, n_features=10, random_state=0)

    # refit=False because we want to test the behaviour of the grid search part
    gs = grid(**FAILING_GRID, cv=5, scoring="accuracy", refit=False, error_score="raise")

    # the failed fit raises a ValueError
    with pytest.raises(ValueError):
        gs.fit(X, y)


def test_search_train_scores_set_to_false():
    X = np.arange(6).reshape(6, -1)
    y = [0, 0, 0, 1, 1, 1]

    gs = grid(alpha=[0.1, 0.2], cv=3)
    gs.fit(X, y)


def _pop_time_keys(cv_results):
    for key in (
        "mean_fit_time",
        "std_fit_time",
        "mean_score_time",
        "std_score_time",
    ):
        cv_results.pop(key)
    return cv_results


def test_grid_search_cv_splits_consistency():
    # Check if a one time iterable is accepted as a cv parameter.
    n_samples = 100
    n_splits = 5
    X, y = make_classification(n_samples=n_samples, random_state=0)
    g = {"alpha": [0.1, 0.2, 0.3]}

    gs = grid(**g, cv=OneTimeSplitter(n_splits=n_splits, n_samples=n_samples), return_train_score=True)
    gs.fit(X, y)

    gs2 = grid(**g, cv=KFold(n_splits=n_splits), return_train_score=True)
    gs2.fit(X, y)

    # Give generator as a cv parameter
    assert isinstance(
        KFold(n_splits=n_splits, shuffle=True, random_state=0).split(X, y),
        GeneratorType,
    )
    gs3 = grid(
        **g, cv=KFold(n_splits=n_splits, shuffle=True, random_state=0).split(X, y), return_train_score=True
    )
    gs3.fit(X, y)

    gs4 = grid(**g, cv=KFold(n_splits=n_splits, shuffle=True, random_state=0), return_train_score=True)
    gs4.fit(X, y)

    # Check if generators are supported as cv and
    # that the splits are consistent
    np.testing.assert_equal(_pop_time_keys(gs3.cv_results_), _pop_time_keys(gs4.cv_results_))

    # OneTimeSplitter is a non-re-entrant cv where split can be called only
    # once if ``cv.split`` is called once per param setting in GridSearchCV.fit
    # the 2nd and 3rd parameter will not be evaluated as no train/test indices
    # will be generated for the 2nd and subsequent cv.split calls.
    # This is a check to make sure cv.split is not called once per param
    # setting.
    np.testing.assert_equal(
        {k: v for k, v in gs.cv_results_.items() if not k.endswith("_time")},
        {k: v for k, v in gs2.cv_results_.items() if not k.endswith("_time")},
    )


def test_grid_search_cv_splits_consistency_duplicate_candidates():
    # The last part of scikit-learn's test_grid_search_cv_splits_consistency.
    n_samples = 100
    n_splits = 5
    X, y = make_classification(n_samples=n_samples, random_state=0)
    # Check consistency of folds across the parameters
    gs = grid(alpha=[0.1, 0.1, 0.2, 0.2], cv=KFold(n_splits=n_splits, shuffle=True), return_train_score=True)
    gs.fit(X, y)

    # As the first two param settings (C=0.1) and the next two param
    # settings (C=0.2) are same, the test and train scores must also be
    # same as long as the same train/test indices are generated for all
    # the cv splits, for both param setting
    for score_type in ("train", "test"):
        per_param_scores = {}
        for param_i in range(4):
            per_param_scores[param_i] = [
                gs.cv_results_["split%d_%s_score" % (s, score_type)][param_i] for s in range(5)
            ]

        assert_array_almost_equal(per_param_scores[0], per_param_scores[1])
        assert_array_almost_equal(per_param_scores[2], per_param_scores[3])


@pytest.mark.parametrize(
    "kind",
    [
        "grid",
        "random",
    ],
)
def test_empty_cv_iterator_error(kind):
    # (the original is RandomizedSearchCV(Ridge(), {"alpha": [...]}) only)
    # create cv
    cv = KFold(n_splits=3).split(X)

    # pop all of it, this should cause the expected ValueError
    [u for u in cv]
    # cv is empty now

    train_size = 100
    ridge = _search(ParallelMLPRegressor, kind=kind, n_iter=3, alpha=[1e-3, 1e-2, 1e-1], cv=cv)  # (n_jobs=4 dropped: process start-up on 2 cores)

    # assert that this raises an error
    with pytest.raises(
        ValueError,
        match=("No fits were performed. Was the CV iterator empty\\? Were there no candidates\\?"),
    ):
        ridge.fit(X[:train_size], y[:train_size])


# both kinds: RandomizedSearchCV's case (n_models) differs as GridSearchCV's does
@pytest.mark.parametrize("kind", ["grid", "random"])
def test_random_search_bad_cv(kind):
    # (the original is RandomizedSearchCV(Ridge(), {"alpha": [...]}) only)

    class BrokenKFold(KFold):
        def get_n_splits(self, *args, **kw):
            return 1

    # create bad cv
    cv = BrokenKFold(n_splits=3)

    train_size = 100
    ridge = _search(ParallelMLPRegressor, kind=kind, n_iter=3, alpha=[1e-3, 1e-2, 1e-1], cv=cv)  # (n_jobs=4 dropped: process start-up on 2 cores)

    # assert that this raises an error
    with pytest.raises(
        ValueError,
        match=("cv.split and cv.get_n_splits return inconsistent results. Expected \\d+ splits, got \\d+"),
    ):
        ridge.fit(X[:train_size], y[:train_size])


@pytest.mark.parametrize("return_train_score", [False, True])
@pytest.mark.parametrize("kind", ["grid", "random"])
def test_searchcv_raise_warning_with_non_finite_score(kind, return_train_score):
    # Non-regression test for:
    # https://github.com/scikit-learn/scikit-learn/issues/10529
    # Check that we raise a UserWarning when a non-finite score is
    # computed in the SearchCV
    X, y = make_classification(n_classes=2, random_state=0)

    class FailingScorer:
        """Scorer that will fail for some split but not all."""

        def __init__(self):
            self.n_counts = 0

        def __call__(self, estimator, X, y):
            self.n_counts += 1
            if self.n_counts % 5 == 0:
                return np.nan
            return 1

    # DecisionTree's max_depth [2, 3, 5, 8] as hidden_layer_sizes
    search = grid(
        kind=kind,
        n_iter=4,
        hidden_layer_sizes=[(2,), (3,), (5,), (8,)],
        scoring=FailingScorer(),
        cv=3,
        return_train_score=return_train_score,
    )

    with pytest.warns(UserWarning) as warn_msg:
        # (a DecisionTree emits no ConvergenceWarning, which is a UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)

    set_with_warning = ["test", "train"] if return_train_score else ["test"]
    assert len(warn_msg) == len(set_with_warning)
    for msg, dataset in zip(warn_msg, set_with_warning):
        assert f"One or more of the {dataset} scores are non-finite" in str(msg.message)

    # all non-finite scores should be equally ranked last
    last_rank = search.cv_results_["rank_test_score"].max()
    non_finite_mask = np.isnan(search.cv_results_["mean_test_score"])
    assert_array_equal(search.cv_results_["rank_test_score"][non_finite_mask], last_rank)
    # all finite scores should be better ranked than the non-finite scores
    assert np.all(search.cv_results_["rank_test_score"][~non_finite_mask] < last_rank)


def test_callable_multimetric_confusion_matrix():
    # Test callable with many metrics inserts the correct names and metrics
    # into the search cv object
    def custom_scorer(clf, X, y):
        y_pred = clf.predict(X)
        cm = confusion_matrix(y, y_pred)
        return {"tn": cm[0, 0], "fp": cm[0, 1], "fn": cm[1, 0], "tp": cm[1, 1]}

    X, y = make_classification(n_samples=40, n_features=4, random_state=42)
    search = grid(alpha=[10, 1], cv=5, scoring=custom_scorer, refit="fp")

    search.fit(X, y)

    score_names = ["tn", "fp", "fn", "tp"]
    for name in score_names:
        assert "mean_test_{}".format(name) in search.cv_results_

    y_pred = search.predict(X)
    cm = confusion_matrix(y, y_pred)
    assert search.score(X, y) == pytest.approx(cm[0, 1])


def test_callable_multimetric_same_as_list_of_strings():
    # Test callable multimetric is the same as a list of strings
    def custom_scorer(est, X, y):
        y_pred = est.predict(X)
        return {
            "recall": recall_score(y, y_pred),
            "accuracy": accuracy_score(y, y_pred),
        }

    X, y = make_classification(n_samples=40, n_features=4, random_state=42)
    search_callable = grid(alpha=[10, 1], cv=5, scoring=custom_scorer, refit="recall")
    search_str = grid(alpha=[10, 1], cv=5, scoring=["recall", "accuracy"], refit="recall")

    search_callable.fit(X, y)
    search_str.fit(X, y)

    assert search_callable.best_score_ == pytest.approx(search_str.best_score_)
    assert search_callable.best_index_ == search_str.best_index_
    assert search_callable.score(X, y) == pytest.approx(search_str.score(X, y))


def test_callable_single_metric_same_as_single_string():
    # Tests callable scorer is the same as scoring with a single string
    def custom_scorer(est, X, y):
        y_pred = est.predict(X)
        return recall_score(y, y_pred)

    X, y = make_classification(n_samples=40, n_features=4, random_state=42)
    search_callable = grid(alpha=[10, 1], cv=5, scoring=custom_scorer, refit=True)
    search_str = grid(alpha=[10, 1], cv=5, scoring="recall", refit="recall")
    search_list_str = grid(alpha=[10, 1], cv=5, scoring=["recall"], refit="recall")
    search_callable.fit(X, y)
    search_str.fit(X, y)
    search_list_str.fit(X, y)

    assert search_callable.best_score_ == pytest.approx(search_str.best_score_)
    assert search_callable.best_index_ == search_str.best_index_
    assert search_callable.score(X, y) == pytest.approx(search_str.score(X, y))

    assert search_list_str.best_score_ == pytest.approx(search_str.best_score_)
    assert search_list_str.best_index_ == search_str.best_index_
    assert search_list_str.score(X, y) == pytest.approx(search_str.score(X, y))


def test_callable_multimetric_error_on_invalid_key():
    # Raises when the callable scorer does not return a dict with `refit` key.
    def bad_scorer(est, X, y):
        return {"bad_name": 1}

    X, y = make_classification(n_samples=40, n_features=4, random_state=42)
    clf = grid(alpha=[10, 1], cv=5, scoring=bad_scorer, refit="good_name")

    msg = "For multi-metric scoring, the parameter refit must be set to a scorer key or a callable to refit"
    with pytest.raises(ValueError, match=msg):
        clf.fit(X, y)


def test_callable_multimetric_error_failing_clf():
    # Warns when there is an estimator the fails to fit with a float
    # error_score
    def custom_scorer(est, X, y):
        return {"acc": 1}

    X, y = make_classification(n_samples=20, n_features=10, random_state=0)

    gs = grid(**FAILING_GRID, cv=5, scoring=custom_scorer, refit=False, error_score=0.1)

    warning_message = re.compile(
        "5 fits failed.+total of 15.+The score on these" r" train-test partitions for these parameters will be set to 0\.1",
        flags=re.DOTALL,
    )
    with pytest.warns(FitFailedWarning, match=warning_message):
        gs.fit(X, y)

    assert_allclose(gs.cv_results_["mean_test_acc"], [1, 1, 0.1])


def test_callable_multimetric_clf_all_fits_fail():
    # Warns and raises when all estimator fails to fit.
    def custom_scorer(est, X, y):
        return {"acc": 1}

    X, y = make_classification(n_samples=20, n_features=10, random_state=0)

    # [FAILING_PARAMETER] * 3
    gs = grid(
        solver="sgd",
        learning_rate_init=[DIVERGING] * 3,
        cv=5,
        scoring=custom_scorer,
        refit=False,
        error_score=0.1,
    )

    error_message = re.compile("All the 15 fits failed.+your model is misconfigured", flags=re.DOTALL)

    with pytest.raises(ValueError, match=error_message):
        gs.fit(X, y)


@pytest.mark.parametrize("kind", KINDS)
def test_n_features_in(kind):
    # make sure grid search and random search delegate n_features_in to the
    # best estimator
    n_features = 4
    X, y = make_classification(n_features=n_features)
    # HistGradientBoosting's max_iter [3, 4] as alpha (max_iter is not searched)
    search = grid(kind=kind, n_iter=1, alpha=[1e-4, 1e-3], max_iter=4, cv=5)
    assert not hasattr(search, "n_features_in_")
    search.fit(X, y)
    assert search.n_features_in_ == n_features


@pytest.mark.parametrize("return_train_score", [True, False])
def test_search_cv_verbose_3(capsys, return_train_score):
    """Check that search cv with verbose>2 shows the score for single
    metrics. non-regression test for #19658."""
    X, y = make_classification(n_samples=100, n_classes=2, flip_y=0.2, random_state=0)
    grid(alpha=[0.1], scoring="accuracy", verbose=3, cv=3, return_train_score=return_train_score).fit(X, y)
    captured = capsys.readouterr().out
    if return_train_score:
        match = re.findall(r"score=\(train=[\d\.]+, test=[\d.]+\)", captured)
    else:
        match = re.findall(r"score=[\d\.]+", captured)
    assert len(match) == 3


@pytest.mark.parametrize("kind", KINDS)
def test_search_with_2d_array(kind):
    # TfidfVectorizer's ngram_range (tuples) as hidden_layer_sizes: tuple
    # values are stored as tuples in an object masked array
    parameter_grid = {
        "hidden_layer_sizes": [(1, 1), (1, 2)],
        "activation": ["relu", "tanh"],
    }
    data_train = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    data_target = [0, 0, 1, 0, 1]
    random_search = grid(kind=kind, n_iter=3, **parameter_grid, cv=3, verbose=1)  # (n_jobs=2 dropped)
    random_search.fit(data_train, data_target)
    result = random_search.cv_results_["param_hidden_layer_sizes"]
    expected_data = np.empty(len(result), dtype=object)
    expected_data[:] = [p["hidden_layer_sizes"] for p in random_search.cv_results_["params"]]
    assert result.dtype == object
    assert all(isinstance(v, tuple) for v in result.data)
    np.testing.assert_array_equal(result.data, expected_data)


def test_cv_results_multi_size_array():
    """Check that the search works with params that are arrays of different sizes.
    Non-regression test for #29277 (SplineTransformer's knots there; the MLP's
    architectures of different depths here).
    """
    X, y = make_classification(n_features=10)
    search = grid(hidden_layer_sizes=[(5,), (5, 5), (5, 5, 5)], max_iter=20, cv=5)
    search.fit(X, y)
    assert search.cv_results_["param_hidden_layer_sizes"].dtype == object
