"""Export of one fitted model to scikit-learn's MLP and to a torch module."""

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import softmax
from sklearn.datasets import make_regression
from sklearn.exceptions import NotFittedError
from sklearn.neural_network import MLPClassifier, MLPRegressor

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._estimators._export import to_sklearn, to_torch

FAST = dict(max_iter=20, learning_rate_init=0.01, dtype="float64", random_state=0)
SKLEARN_ACTIVATIONS = ["identity", "logistic", "sigmoid", "tanh", "relu"]
ALL_ACTIVATIONS = [
    "identity", "logistic", "tanh", "relu", "elu", "selu", "gelu", "leaky_relu", "hardshrink", "mish",
]


def _classification(iris, kind):
    X, y = iris
    if kind == "binary":
        return X, (y == 2).astype(int)
    if kind == "strings":
        return X, np.array(["setosa", "versicolor", "virginica"])[y]
    if kind == "binary_strings":
        return X, np.where(y == 0, "no", "yes")
    return X, y


def _regression(n_targets):
    X, y = make_regression(n_samples=80, n_features=5, n_targets=n_targets, noise=1.0, random_state=0)
    return X, y / np.std(y)


@pytest.mark.parametrize("activation", SKLEARN_ACTIVATIONS)
@pytest.mark.parametrize("kind", ["binary", "multiclass", "strings", "binary_strings"])
def test_to_sklearn_classifier_predicts_the_same(iris, kind, activation):
    X, y = _classification(iris, kind)
    model = SingleMLPClassifier((8, 4), activation, **FAST).fit(X, y)
    mlp = model.to_sklearn()
    assert type(mlp) is MLPClassifier
    assert_array_equal(mlp.classes_, model.classes_)
    assert_allclose(mlp.predict_proba(X), model.predict_proba(X), atol=1e-6)
    assert_array_equal(mlp.predict(X), model.predict(X))
    assert mlp.score(X, y) == pytest.approx(model.score(X, y))


@pytest.mark.parametrize("activation", SKLEARN_ACTIVATIONS)
@pytest.mark.parametrize("n_targets", [1, 3])
def test_to_sklearn_regressor_predicts_the_same(n_targets, activation):
    X, y = _regression(n_targets)
    model = SingleMLPRegressor((8,), activation, **FAST).fit(X, y)
    mlp = model.to_sklearn()
    assert type(mlp) is MLPRegressor
    assert mlp.predict(X).shape == model.predict(X).shape
    assert_allclose(mlp.predict(X), model.predict(X), atol=1e-6)
    assert mlp.score(X, y) == pytest.approx(model.score(X, y))


def test_to_sklearn_carries_hyperparameters_and_fitted_attributes(iris):
    X, y = iris
    model = SingleMLPClassifier(
        (8, 4), "sigmoid", solver="sgd", alpha=0.01, batch_size=32, tol=1e-3,
        n_iter_no_change=5, momentum=0.8, nesterovs_momentum=False, **FAST,
    ).fit(X, y)
    mlp = model.to_sklearn()
    expected = dict(
        hidden_layer_sizes=(8, 4), activation="logistic", solver="sgd", alpha=0.01,
        learning_rate_init=0.01, batch_size=32, max_iter=20, tol=1e-3, n_iter_no_change=5,
        momentum=0.8, nesterovs_momentum=False,
    )
    assert {k: mlp.get_params()[k] for k in expected} == expected
    assert (mlp.n_layers_, mlp.n_outputs_, mlp.out_activation_) == (4, 3, "softmax")
    assert mlp.n_iter_ == model.n_iter_
    assert mlp.loss_curve_ == pytest.approx(model.loss_curve_)
    assert mlp.n_features_in_ == 4
    # the copies are independent of the model
    mlp.coefs_[0][:] = 0
    assert np.any(model.coefs_[0] != 0)


def test_to_sklearn_keeps_feature_names(iris):
    pd = pytest.importorskip("pandas")
    X, y = iris
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = SingleMLPClassifier((8,), "relu", **FAST).fit(frame, y)
    mlp = model.to_sklearn()
    assert_array_equal(mlp.feature_names_in_, ["a", "b", "c", "d"])
    assert_allclose(mlp.predict_proba(frame), model.predict_proba(frame), atol=1e-6)


def test_to_sklearn_binary_uses_one_logistic_output(iris):
    X, y = _classification(iris, "binary")
    mlp = SingleMLPClassifier((8,), "tanh", **FAST).fit(X, y).to_sklearn()
    assert (mlp.n_outputs_, mlp.out_activation_) == (1, "logistic")
    assert mlp.coefs_[-1].shape == (8, 1)


@pytest.mark.parametrize("activation", ["gelu", "elu", "mish"])
def test_to_sklearn_refuses_activations_sklearn_lacks(iris, activation):
    X, y = iris
    model = SingleMLPClassifier((4,), activation, **FAST).fit(X, y)
    supported = "'identity', 'logistic', 'tanh', 'relu'"
    with pytest.raises(ValueError, match=f"no '{activation}' activation.*{supported}"):
        model.to_sklearn()


@pytest.mark.parametrize("convert", [to_sklearn, to_torch])
def test_export_needs_a_fitted_model(convert):
    with pytest.raises(NotFittedError):
        convert(SingleMLPRegressor())


@pytest.mark.parametrize("activation", ALL_ACTIVATIONS)
def test_to_torch_classifier_outputs_logits(iris, activation):
    X, y = iris
    model = SingleMLPClassifier((8, 4), activation, **FAST).fit(X, y)
    net = model.to_torch(dtype=torch.float64)
    assert isinstance(net, torch.nn.Sequential)
    assert [type(m) is torch.nn.Linear for m in net] == [True, False, True, False, True]
    with torch.no_grad():
        logits = net(torch.as_tensor(X)).numpy()
    assert_allclose(softmax(logits, axis=1), model.predict_proba(X), atol=1e-6)
    assert_array_equal(model.classes_[logits.argmax(1)], model.predict(X))


@pytest.mark.parametrize("activation", ALL_ACTIVATIONS)
def test_to_torch_regressor_outputs_predictions(activation):
    X, y = _regression(2)
    model = SingleMLPRegressor((8,), activation, **FAST).fit(X, y)
    with torch.no_grad():
        outputs = model.to_torch(dtype=torch.float64)(torch.as_tensor(X)).numpy()
    assert_allclose(outputs, model.predict(X), atol=1e-6)


def test_to_torch_default_is_float32_and_trainable(iris):
    X, y = iris
    model = SingleMLPClassifier((8,), "relu", **FAST).fit(X, y)
    net = model.to_torch()
    assert all(p.dtype == torch.float32 and p.requires_grad for p in net.parameters())
    with torch.no_grad():
        logits = net(torch.as_tensor(X, dtype=torch.float32)).numpy()
    assert_allclose(softmax(logits, axis=1), model.predict_proba(X), atol=1e-4)
    # a copy: training the module leaves the model alone
    with torch.no_grad():
        net[0].weight.zero_()
    assert np.any(model.coefs_[0] != 0)


@pytest.fixture(scope="module")
def search(iris):
    X, y = iris
    return ParallelMLPClassifier([(8,), (4, 4)], ("relu", "tanh"), cv=3, ensemble="best", **FAST).fit(X, y)


def test_best_estimator_exports(iris, search):
    X, _ = iris
    best = search.best_estimator_
    assert_allclose(best.to_sklearn().predict_proba(X), search.predict_proba(X), atol=1e-6)
    with torch.no_grad():
        logits = best.to_torch(dtype=torch.float64)(torch.as_tensor(X)).numpy()
    assert_allclose(softmax(logits, axis=1), search.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("index", [0, 3])
@pytest.mark.parametrize("fold", [0, 2])
def test_exported_fold_models_export(iris, search, index, fold):
    X, _ = iris
    model = search.export_model(index, fold=fold)
    assert_allclose(model.to_sklearn().predict_proba(X), model.predict_proba(X), atol=1e-6)


def test_regressor_search_exports():
    X, y = _regression(1)
    search = ParallelMLPRegressor([(8,), (16,)], "tanh", **FAST, cv=None).fit(X, y)
    model = search.export_model(1)
    assert_allclose(model.to_sklearn().predict(X), model.predict(X), atol=1e-6)
    assert_allclose(search.best_estimator_.to_sklearn().predict(X), search.predict(X), atol=1e-6)
