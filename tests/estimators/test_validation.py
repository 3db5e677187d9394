"""Bad input gets a clear error, raised before any torch work (issue 8, item 1).

Every bad value is refused by ``_parameter_constraints`` (scikit-learn's
InvalidParameterError, a ValueError and a TypeError), by ``validate_data``
or by the population / split checks, with a message naming the problem;
a fixture makes any training fail the test, so "before any torch work" is
checked too. Sparse X is accepted and densified.
"""

import numpy as np
import pytest
from scipy import sparse
from scipy.stats import loguniform, randint, uniform
from sklearn.utils._param_validation import InvalidParameterError

import skpmlp._estimators._base
import skpmlp._estimators._single
import skpmlp._execution._shards
from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._engine import ACTIVATION_NAMES
from skpmlp._engine._backends import _torch as _trainer
from skpmlp._engine._minibatch._run import FusedRun

PARALLEL = [ParallelMLPClassifier, ParallelMLPRegressor]
SINGLE = [SingleMLPClassifier, SingleMLPRegressor]
FAST = dict(hidden_layer_sizes=(4,), activation="relu", max_iter=3, random_state=0)


def _data(estimator_class, n=30):
    rng = np.random.RandomState(0)
    X = rng.randn(n, 3)
    if estimator_class._task == "classification":
        return X, np.arange(n) % 3
    return X, rng.randn(n)


@pytest.fixture
def no_training(monkeypatch):
    """Fail the test if any model starts training."""

    def fail(*args, **kwargs):
        pytest.fail("training started before the bad input was refused")

    monkeypatch.setattr(FusedRun, "advance", fail)
    monkeypatch.setattr(_trainer.PopulationTrainer, "__init__", fail)
    monkeypatch.setattr(skpmlp._execution._shards, "train_population", fail)
    monkeypatch.setattr(skpmlp._estimators._single, "train_by_input", fail)


def _refused(estimator, X, y, error, message, **fit_params):
    with pytest.raises(error, match=message) as info:
        estimator.fit(X, y, **fit_params)
    return str(info.value)


# ------------------------------------------------------------- parameters
BAD_SEARCH_PARAMS = [
    (dict(batch_size=0), InvalidParameterError, r"'batch_size' parameter .* Got 0 instead"),
    (dict(batch_size=-3), InvalidParameterError, r"'batch_size' parameter .* Got -3 instead"),
    (dict(hidden_layer_sizes=[(0,)]), ValueError,
     r"hidden_layer_sizes: every hidden layer width must be a positive int; got \(0,\)"),
    (dict(hidden_layer_sizes=[(8,), (4, -1)]), ValueError, r"hidden_layer_sizes: .* positive int; got \(4, -1\)"),
    (dict(hidden_layer_sizes=(8, 0)), ValueError, r"hidden_layer_sizes: .* positive int; got \(8, 0\)"),
    (dict(hidden_layer_sizes=[100, 0]), ValueError, r"hidden_layer_sizes: .* positive int; got \[100, 0\]"),
    (dict(hidden_layer_sizes=[8, (16, 8)]), ValueError,
     r"hidden_layer_sizes=\[8, \(16, 8\)\] mixes widths and architectures, so it is ambiguous\. "
     r"Write one network as .* several networks as a list of tuples"),
    (dict(hidden_layer_sizes=[(8,), 2.5]), ValueError, r"hidden_layer_sizes: 2.5 is not an architecture"),
    (dict(hidden_layer_sizes="wide"), InvalidParameterError, r"'hidden_layer_sizes' parameter .* Got 'wide'"),
    (dict(hidden_layer_sizes=0), InvalidParameterError, r"'hidden_layer_sizes' parameter .* Got 0 instead"),
    (dict(hidden_layer_sizes=[]), ValueError, "hidden_layer_sizes must hold at least one value; got an empty list"),
    (dict(hidden_layer_sizes=()), ValueError, "hidden_layer_sizes must hold at least one value; got an empty tuple"),
    (dict(activation="foo"), InvalidParameterError, r"'activation' parameter .* Got 'foo' instead"),
    (dict(activation=["relu", "foo"]), ValueError, "Unknown activation 'foo'; allowed activations are 'identity'"),
    (dict(activation=[]), ValueError, "activation must hold at least one value"),
    (dict(solver="newton"), InvalidParameterError, r"'solver' parameter .* among \{.*\}.* Got 'newton'"),
    (dict(learning_rate_init=[0.1, -1]), ValueError,
     "learning_rate_init values must be finite positive numbers; got -1"),
    (dict(learning_rate_init=[0.1, np.nan]), ValueError,
     "learning_rate_init values must be finite positive numbers; got nan"),
    (dict(learning_rate_init=0), InvalidParameterError, r"'learning_rate_init' parameter .* Got 0 instead"),
    (dict(learning_rate_init=[]), ValueError, "learning_rate_init must hold at least one value"),
    (dict(alpha=[0.0, -1.0]), ValueError, "alpha values must be finite non-negative numbers; got -1.0"),
    (dict(n_jobs=0), InvalidParameterError, r"'n_jobs' parameter .* Got 0 instead"),
    (dict(n_jobs=1.5), InvalidParameterError, r"'n_jobs' parameter .* Got 1.5 instead"),
    (dict(max_memory=-1), InvalidParameterError, r"'max_memory' parameter .* Got -1 instead"),
    (dict(max_time=0), InvalidParameterError, r"'max_time' parameter .* Got 0 instead"),
    (dict(ensemble_size=0), InvalidParameterError, r"'ensemble_size' parameter .* Got 0 instead"),
    (dict(pruning="foo"), InvalidParameterError, r"'pruning' parameter .* Got 'foo' instead"),
    (dict(halving_factor=1), InvalidParameterError, r"'halving_factor' parameter .* Got 1 instead"),
    (dict(n_repeats=0), InvalidParameterError, r"'n_repeats' parameter .* Got 0 instead"),
    (dict(max_iter=0), InvalidParameterError, r"'max_iter' parameter .* Got 0 instead"),
    (dict(validation_fraction=1.0), InvalidParameterError, r"'validation_fraction' parameter .* Got 1.0 instead"),
    (dict(dtype="float16"), InvalidParameterError, r"'dtype' parameter .* Got 'float16' instead"),
    (dict(device="tpu"), ValueError, "device='tpu' is not a valid torch device"),
    (dict(cv=1), InvalidParameterError, r"'cv' parameter .* Got 1 instead"),
    (dict(error_score="foo"), InvalidParameterError, r"'error_score' parameter .* Got 'foo' instead"),
    (dict(n_models=0), InvalidParameterError, r"'n_models' parameter .* Got 0 instead"),
    (dict(param_grid="relu"), InvalidParameterError, r"'param_grid' parameter .* Got 'relu' instead"),
    (dict(param_grid=[]), ValueError, "param_grid must be a dict or a non-empty list of dicts"),
    (dict(param_grid=[{"max_iter": [5]}]), ValueError, r"param_grid\[0\] has keys \['max_iter'\] that cannot"),
    (dict(param_grid=[{"alpha": [-1.0]}]), ValueError,
     r"param_grid\[0\]\['alpha'\] values must be finite non-negative numbers; got -1.0"),
    (dict(alpha=loguniform(1e-5, 1)), ValueError, r"n_models must be set .* \(alpha\)"),
    (dict(learning_rate_init=uniform(-1, 0.5), n_models=20), ValueError,
     "learning_rate_init values must be finite positive numbers"),
    (dict(hidden_layer_sizes=randint(0, 1), n_models=3), ValueError,
     "hidden_layer_sizes: every hidden layer width must be a positive int"),
]


@pytest.mark.parametrize("estimator_class", PARALLEL)
@pytest.mark.parametrize("params, error, message", BAD_SEARCH_PARAMS)
def test_bad_search_parameters(estimator_class, params, error, message, no_training):
    X, y = _data(estimator_class)
    estimator = estimator_class(**{**FAST, "hidden_layer_sizes": None, "activation": "relu", **params})
    _refused(estimator, X, y, error, message)


@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
def test_unknown_activation_lists_the_allowed_ones(estimator_class, no_training):
    X, y = _data(estimator_class)
    message = _refused(estimator_class(activation="swish"), X, y, InvalidParameterError, "'swish'")
    assert all(f"'{name}'" in message for name in ACTIVATION_NAMES)


BAD_SINGLE_PARAMS = [
    (dict(batch_size=0), InvalidParameterError, r"'batch_size' parameter .* Got 0 instead"),
    (dict(hidden_layer_sizes=(0,)), ValueError, r"hidden_layer_sizes: .* positive int; got \(0,\)"),
    (dict(hidden_layer_sizes=0), InvalidParameterError, r"'hidden_layer_sizes' parameter .* Got 0 instead"),
    (dict(hidden_layer_sizes=()), ValueError, "hidden_layer_sizes must hold at least one value"),
    (dict(hidden_layer_sizes=[(4,), (8,)]), ValueError, "must be one architecture"),
    (dict(hidden_layer_sizes=((8,), (4,))), ValueError, "must be one architecture"),
    (dict(activation="foo"), InvalidParameterError, r"'activation' parameter .* Got 'foo' instead"),
    (dict(activation=["relu", "tanh"]), InvalidParameterError, r"'activation' parameter .* Got \['relu', 'tanh'\]"),
    (dict(solver="newton"), InvalidParameterError, r"'solver' parameter .* Got 'newton' instead"),
    (dict(learning_rate_init=-1.0), InvalidParameterError, r"'learning_rate_init' parameter .* Got -1.0 instead"),
    (dict(learning_rate_init=[0.1, -1]), InvalidParameterError, r"'learning_rate_init' parameter .* Got \[0.1, -1\]"),
    (dict(alpha=-1.0), InvalidParameterError, r"'alpha' parameter .* Got -1.0 instead"),
    (dict(repeat=-1), InvalidParameterError, r"'repeat' parameter .* Got -1 instead"),
    (dict(validation_fraction=0.0), InvalidParameterError, r"'validation_fraction' parameter .* Got 0.0 instead"),
    (dict(max_iter=0), InvalidParameterError, r"'max_iter' parameter .* Got 0 instead"),
    (dict(device="tpu"), ValueError, "device='tpu' is not a valid torch device"),
]


@pytest.mark.parametrize("estimator_class", SINGLE)
@pytest.mark.parametrize("params, error, message", BAD_SINGLE_PARAMS)
def test_bad_single_model_parameters(estimator_class, params, error, message, no_training):
    X, y = _data(estimator_class)
    _refused(estimator_class(**{**FAST, **params}), X, y, error, message)


# ------------------------------------------------------------------- data
def _with(X, row, col, value):
    X = X.copy()
    X[row, col] = value
    return X


BAD_X = [
    ("nan", lambda X: _with(X, 3, 1, np.nan), ValueError, "Input X contains NaN"),
    ("inf", lambda X: _with(X, 3, 1, np.inf), ValueError, "Input X contains infinity"),
    ("strings", lambda X: np.full(X.shape, "a"), ValueError, "could not convert string to float"),
    ("3-D", lambda X: X[:, :, None], ValueError, "Found array with dim 3"),
    ("1-D", lambda X: X[:, 0], ValueError, "Expected 2D array, got 1D array"),
    ("complex", lambda X: X + 1j, ValueError, "Complex data not supported"),
    ("no features", lambda X: X[:, :0], ValueError, r"0 feature\(s\) \(shape=\(30, 0\)\)"),
]


@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
@pytest.mark.parametrize("case, make_X, error, message", BAD_X, ids=[c[0] for c in BAD_X])
def test_bad_X(estimator_class, case, make_X, error, message, no_training):
    X, y = _data(estimator_class)
    _refused(estimator_class(**FAST), make_X(X), y, error, message)


@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
def test_mismatched_lengths(estimator_class, no_training):
    X, y = _data(estimator_class)
    message = r"inconsistent numbers of samples: \[30, 20\]"
    _refused(estimator_class(**FAST), X, y[:20], ValueError, message)


@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
def test_bad_sample_weight(estimator_class, no_training):
    X, y = _data(estimator_class)
    estimator = estimator_class(**FAST)
    _refused(estimator, X, y, ValueError, "Negative values in data passed to `sample_weight`",
             sample_weight=-np.ones(len(y)))
    _refused(estimator, X, y, ValueError, r"sample_weight.shape == \(20,\), expected \(30,\)",
             sample_weight=np.ones(20))


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, SingleMLPClassifier])
def test_bad_classification_targets(estimator_class, no_training):
    X, _ = _data(estimator_class)
    estimator = estimator_class(**FAST)
    _refused(estimator, X, np.linspace(0, 1, 30), ValueError, "Unknown label type: continuous")
    _refused(estimator, X, np.c_[np.arange(30) % 3, np.arange(30) % 2], ValueError,
             r"multilabel indicator matrix .* got targets of type 'multiclass-multioutput' "
             r"with shape \(30, 2\)")


@pytest.mark.parametrize("estimator_class", [ParallelMLPRegressor, SingleMLPRegressor])
@pytest.mark.parametrize(
    "case, value, message",
    [("nan", np.nan, "Input y contains NaN"), ("inf", np.inf, "Input y contains infinity")],
)
def test_bad_regression_targets(estimator_class, case, value, message, no_training):
    X, y = _data(estimator_class)
    y[4] = value
    _refused(estimator_class(**FAST), X, y, ValueError, message)


@pytest.mark.parametrize("estimator_class", [ParallelMLPRegressor, SingleMLPRegressor])
def test_string_regression_targets(estimator_class, no_training):
    X, _ = _data(estimator_class)
    _refused(estimator_class(**FAST), X, np.full(30, "a"), ValueError, "could not convert string to float")


# ------------------------------------------------- too few samples to split
@pytest.mark.parametrize("estimator_class", PARALLEL)
def test_validation_fraction_too_large_for_the_data(estimator_class, no_training):
    X, y = _data(estimator_class, n=4)
    message = r"validation_fraction=0.9 with n_samples=4 leaves 0 training and 4 validation samples"
    _refused(estimator_class(**FAST, validation_fraction=0.9), X, y, ValueError, message)


@pytest.mark.parametrize("estimator_class", SINGLE)
def test_single_model_validation_fraction_too_large(estimator_class, no_training):
    X, y = _data(estimator_class, n=4)
    estimator = estimator_class(**FAST, early_stopping=True, validation_fraction=0.9)
    _refused(estimator, X, y, ValueError, "validation_fraction=0.9 with n_samples=4 leaves 0 training")


@pytest.mark.filterwarnings("ignore:The least populated class:UserWarning")
@pytest.mark.parametrize("estimator_class", PARALLEL)
def test_early_stopping_inside_too_small_cv_folds(estimator_class, no_training):
    """With cv, early stopping splits each fold's training rows again."""
    X, y = _data(estimator_class, n=4)
    estimator = estimator_class(**FAST, cv=2, early_stopping=True, validation_fraction=0.9)
    _refused(estimator, X, y, ValueError, "validation_fraction=0.9 with n_samples=2 leaves 0 training")


@pytest.mark.parametrize("estimator_class", PARALLEL)
def test_more_cv_folds_than_samples(estimator_class, no_training):
    X, y = _data(estimator_class, n=8)
    message = "Cannot have number of splits n_splits=10 greater than the number of samples: n_samples=8"
    _refused(estimator_class(**FAST, cv=10), X, y, ValueError, message)


def test_more_cv_folds_than_class_members(no_training):
    X, y = _data(ParallelMLPClassifier, n=8)
    message = "n_splits=5 cannot be greater than the number of members in each class"
    _refused(ParallelMLPClassifier(**FAST, cv=5), X, y, ValueError, message)


# ------------------------------------------------------------- prediction
@pytest.fixture(scope="module")
def fitted():
    models = {}
    for estimator_class in PARALLEL + SINGLE:
        X, y = _data(estimator_class)
        models[estimator_class] = estimator_class(**FAST).fit(X, y)
    return models


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
@pytest.mark.parametrize("n_features", [2, 4])
def test_predict_with_the_wrong_feature_count(estimator_class, n_features, fitted):
    estimator = fitted[estimator_class]
    X = np.ones((5, n_features))
    methods = ["predict", "score"] + ["predict_proba"] * hasattr(estimator, "predict_proba")
    for method in methods:
        args = (X, np.zeros(5)) if method == "score" else (X,)
        with pytest.raises(ValueError, match=f"X has {n_features} features, but .* is expecting 3 features"):
            getattr(estimator, method)(*args)
    if hasattr(estimator, "export_model"):
        with pytest.raises(ValueError, match=f"X has {n_features} features"):
            # with cv (the default on small data) the best row's fold ensemble
            fold = None if estimator.cv_ is None else "all"
            estimator.export_model(estimator.best_index_, fold=fold).predict(X)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
def test_predict_with_nan(estimator_class, fitted):
    with pytest.raises(ValueError, match="Input X contains NaN"):
        fitted[estimator_class].predict(np.full((2, 3), np.nan))


# ----------------------------------------------------------------- sparse
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator_class", PARALLEL + SINGLE)
@pytest.mark.parametrize("layout", ["csr", "csc", "coo"])
def test_sparse_X_is_accepted_and_predicts_as_dense(estimator_class, layout, fitted):
    X, y = _data(estimator_class)
    X[X < 0.3] = 0.0  # make it really sparse
    as_sparse = getattr(sparse, f"{layout}_matrix")
    params = {**FAST, "dtype": "float64"}
    dense = estimator_class(**params).fit(X, y)
    sparse_fit = estimator_class(**params).fit(as_sparse(X), y)
    method = "predict_proba" if hasattr(dense, "predict_proba") else "predict"
    expected = getattr(dense, method)(X)
    np.testing.assert_array_equal(getattr(sparse_fit, method)(as_sparse(X)), expected)
    np.testing.assert_array_equal(getattr(sparse_fit, method)(X), expected)


@pytest.mark.parametrize("estimator", [ParallelMLPClassifier, SingleMLPClassifier])
@pytest.mark.parametrize("labels, message", [
    (["a", None, "b", "a", "b", "a"], r"1 missing label\(s\) \(None or NaN\) at position\(s\) 1"),
    (["a", "b", None, "a", "b", None], r"2 missing label\(s\) .* position\(s\) 2, 5"),
    (["a", 1, "b", "a", "b", "a"], r"mixes string and number labels \(e.g. 'a' and 1\)"),
])
def test_labels_that_cannot_be_sorted_are_named(estimator, labels, message):
    X = np.random.default_rng(0).normal(size=(6, 2))
    y = np.array(labels, dtype=object)
    with pytest.raises(ValueError, match=message):
        estimator(max_iter=1).fit(X, y)
