"""Property-based tests over random small populations and data (issue 8, item 6).

On any valid input ``fit`` succeeds; predictions and probabilities have
the right shapes (rows summing to 1); ``cv_results_`` has one row per
model; and in float64 any model of the population predicts as the same
model trained in a population of its own (the independence invariant).
"""

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._search._splits import holdout_split

# tiny examples, reproducible and nothing written to disk
SETTINGS = settings(
    max_examples=20, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
ARCHITECTURES = [(3,), (5,), (2, 3), (4, 2)]
ACTIVATIONS = ["relu", "tanh", "logistic", "identity", "gelu", "elu"]


@st.composite
def searches(draw):
    """Parameters of a search of 1 to 4 models, and the data sizes."""
    archs = draw(st.lists(st.sampled_from(ARCHITECTURES), min_size=1, max_size=2, unique=True))
    acts = draw(st.lists(st.sampled_from(ACTIVATIONS), min_size=1, max_size=2, unique=True))
    n_repeats = draw(st.integers(1, 4 // (len(archs) * len(acts))))
    n_samples = draw(st.integers(20, 60))
    params = dict(
        hidden_layer_sizes=list(archs),
        activation=list(acts),
        learning_rate_init=draw(st.sampled_from([0.001, 0.01, 0.05])),
        alpha=draw(st.sampled_from([0.0, 1e-4, 0.1])),
        n_repeats=n_repeats,
        input_transform=draw(st.sampled_from(["none", "robust-smooth-clip", "quantile"])),
        solver=draw(st.sampled_from(["adam", "sgd"])),
        batch_size=draw(st.sampled_from(["auto", 7, n_samples])),
        max_iter=draw(st.integers(1, 5)),
        early_stopping=draw(st.booleans()),
        cv=draw(st.sampled_from([None, 2, 3])),
        dtype=draw(st.sampled_from(["float32", "float64"])),
        random_state=draw(st.integers(0, 2**16)),
    )
    return params, n_samples, draw(st.integers(1, 5)), draw(st.integers(0, 2**16))


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        # not converging in <= 5 epochs, unstratified tiny splits: expected here
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _check_results(search, params):
    n_models = len(params["hidden_layer_sizes"]) * len(params["activation"]) * params["n_repeats"]
    assert search.n_models_ == n_models
    for name, column in search.cv_results_.items():
        assert len(column) == n_models, name
    assert search.n_iter_per_model_.shape == ((n_models,) if params["cv"] is None else (n_models, params["cv"]))
    assert ((1 <= search.n_iter_per_model_) & (search.n_iter_per_model_ <= params["max_iter"])).all()


def _check_independence(search, params, X, y, index, predict):
    """Model ``index`` equals the same model trained in a population of its
    own (its repeat index kept by training ``repeat + 1`` repeats), and, with
    a plain holdout, the exported model refitted alone on its training rows."""
    row_params = search.cv_results_["params"][index]
    repeat = int(search.cv_results_["param_repeat"][index])
    lone = search.n_models_ == 1 and params["cv"] is None and not params["early_stopping"]
    # a population of one model with cv=None trains on every row, as
    # MLPClassifier: a second repeat keeps the holdout of a larger search
    n_repeats = repeat + (1 if lone else 2)
    alone = _fit(clone(search).set_params(**row_params, n_repeats=n_repeats, refit=False), X, y)
    fold = None if params["cv"] is None else 0
    expected = predict(search.export_model(index, fold=fold))
    np.testing.assert_allclose(predict(alone.export_model(repeat, fold=fold)), expected, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(alone.n_iter_per_model_[repeat], search.n_iter_per_model_[index])
    if lone:
        refitted = _fit(clone(search.export_model(index)), X, y)
        np.testing.assert_allclose(predict(refitted), expected, rtol=0, atol=1e-6)
    elif params["cv"] is None and not params["early_stopping"]:
        classifier = isinstance(search, ParallelMLPClassifier)
        labels = np.unique(y, return_inverse=True)[1] if classifier else np.zeros(len(y), int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an unstratified split, as in the search
            train, _ = holdout_split(labels, search.validation_fraction, params["random_state"],
                                     stratify=classifier)
        refitted = _fit(clone(search.export_model(index)), X[train], y[train])
        np.testing.assert_allclose(predict(refitted), expected, rtol=0, atol=1e-6)


@SETTINGS
@given(search=searches(), n_classes=st.integers(2, 4), string_labels=st.booleans(), data=st.data())
def test_classifier_properties(search, n_classes, string_labels, data):
    params, n_samples, n_features, seed = search
    # early stopping's validation part holds every class, as scikit-learn's
    # MLP requires (it raises otherwise): >= 5 rows of >= 7 per class
    n_samples = max(n_samples, 30)
    params = {**params, "validation_fraction": 0.25}
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, n_features)
    y = rng.permutation(np.arange(n_samples) % n_classes)  # every class >= 7 times
    if string_labels:
        y = np.array(["ant", "bee", "cat", "dog"])[y]
    search = _fit(ParallelMLPClassifier(**params), X, y)

    _check_results(search, params)
    np.testing.assert_array_equal(search.classes_, np.unique(y))
    pred = search.predict(X)
    assert pred.shape == (n_samples,) and set(pred) <= set(y)
    proba = search.predict_proba(X)
    assert proba.shape == (n_samples, n_classes)
    np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(search.classes_[proba.argmax(1)], pred)

    if params["dtype"] == "float64":
        index = data.draw(st.integers(0, search.n_models_ - 1), label="model")
        _check_independence(search, params, X, y, index, lambda model: model.predict_proba(X))


@SETTINGS
@given(search=searches(), n_targets=st.integers(1, 2), data=st.data())
def test_regressor_properties(search, n_targets, data):
    params, n_samples, n_features, seed = search
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, n_features)
    y = X @ rng.randn(n_features, n_targets) + 0.1 * rng.randn(n_samples, n_targets)
    y = y[:, 0] if n_targets == 1 else y
    search = _fit(ParallelMLPRegressor(**params), X, y)

    _check_results(search, params)
    pred = search.predict(X)
    assert pred.shape == y.shape and np.isfinite(pred).all()

    if params["dtype"] == "float64":
        index = data.draw(st.integers(0, search.n_models_ - 1), label="model")
        _check_independence(search, params, X, y, index, lambda model: model.predict(X))
