"""A model's ``input_transform`` goes with it (issue 40, item 1): the single
models fit it on their rows, ``predict`` takes raw X, ``to_sklearn()`` is a
Pipeline and ``to_torch()`` starts with the transform, all equal to the
estimator's predictions in float64."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import VotingClassifier
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import QuantileTransformer, StandardScaler

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    RobustSmoothClipScaler,
    SingleMLPClassifier,
    SingleMLPRegressor,
)

TRANSFORMS = {"standard": StandardScaler, "robust-smooth-clip": RobustSmoothClipScaler,
              "quantile": QuantileTransformer}
MODEL = dict(hidden_layer_sizes=(6, 4), activation="tanh", learning_rate_init=0.02, max_iter=15,
             dtype="float64", random_state=0)


def _fit(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(*args, **kwargs)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(120, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=1)
    return X * [1, 1000, 0.001, 10] + [0, 5000, 0, -30], y


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(100, 3, n_targets=1, noise=0.1, random_state=0)
    return X * [1, 300, 0.01] + 40, y / y.std()


def _reference_transform(value, X):
    """The documented transform of ``input_transform=value`` fitted on X,
    built here from scikit-learn's and skpmlp's classes."""
    if value == "quantile":  # to a normal, one quantile a row up to 1,000
        return QuantileTransformer(n_quantiles=min(1000, len(X)), output_distribution="normal",
                                   random_state=0).fit(X)
    return TRANSFORMS[value]().fit(X)


def _outputs(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


@pytest.mark.parametrize("value", list(TRANSFORMS))
def test_a_single_model_trains_on_its_transformed_rows(data, value):
    """Fit = the transform fitted on X, then the model trained on its output:
    the same model with input_transform="none" on pre-transformed X."""
    X, y = data
    model = _fit(SingleMLPClassifier(**MODEL, input_transform=value), X, y)
    transform = _reference_transform(value, X)
    assert isinstance(model.input_transform_, TRANSFORMS[value])
    plain = _fit(SingleMLPClassifier(**MODEL), transform.transform(X), y)
    assert plain.input_transform_ is None
    np.testing.assert_allclose(model.predict_proba(X), plain.predict_proba(transform.transform(X)),
                               rtol=0, atol=1e-12)
    for W, V in zip(model.coefs_, plain.coefs_):
        np.testing.assert_allclose(W, V, rtol=0, atol=1e-12)
    # back to "none": refitted, the transform goes
    assert _fit(model.set_params(input_transform="none"), X, y).input_transform_ is None


@pytest.mark.parametrize("value", list(TRANSFORMS))
@pytest.mark.parametrize("task", ["classifier", "regressor"])
def test_to_sklearn_is_a_pipeline_and_to_torch_starts_with_the_transform(data, regression,
                                                                          value, task):
    X, y = data if task == "classifier" else regression
    cls = SingleMLPClassifier if task == "classifier" else SingleMLPRegressor
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    model = _fit(cls(**MODEL, input_transform=value), frame, y)
    pipeline = model.to_sklearn()
    assert isinstance(pipeline, Pipeline)
    assert [name for name, _ in pipeline.steps] == ["input_transform", "mlp"]
    step = pipeline.named_steps["input_transform"]
    assert isinstance(step, TRANSFORMS[value]) and step is not model.input_transform_
    assert isinstance(pipeline.named_steps["mlp"], MLPClassifier if task == "classifier"
                      else MLPRegressor)
    assert list(pipeline.feature_names_in_) == list(frame.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warning from either step
        np.testing.assert_allclose(_outputs(pipeline, frame), _outputs(model, frame), rtol=0,
                                   atol=1e-12)
        if task == "classifier":
            np.testing.assert_array_equal(pipeline.predict(frame), model.predict(frame))
    net = model.to_torch(dtype=torch.float64)
    assert type(net[0]).__name__ == {"standard": "Standardize", "robust-smooth-clip": "RobustSmoothClip",
                                     "quantile": "QuantileNormal"}[value]
    with torch.no_grad():
        raw = net(torch.as_tensor(X)).numpy()
    if task == "classifier":
        raw = torch.softmax(torch.as_tensor(raw), dim=1).numpy()
    else:
        raw = raw[:, 0]
    np.testing.assert_allclose(raw, _outputs(model, frame), rtol=0, atol=1e-12)
    # the default dtype, float32, with inputs far out (the clip's bound is float32's own)
    net32 = model.to_torch()
    far = np.vstack([X[:3], 1e30 * np.sign(X[:3] + 0.5)])
    with torch.no_grad():
        outputs = net32(torch.as_tensor(far, dtype=torch.float32)).numpy()
    assert outputs.dtype == np.float32 and np.isfinite(outputs).all()
    with torch.no_grad():
        np.testing.assert_allclose(
            outputs[:3], net(torch.as_tensor(X[:3])).numpy(), rtol=1e-3, atol=1e-3)  # float32
    # a model without a transform converts as before: the MLP alone
    plain = _fit(cls(**MODEL), X, y)
    assert isinstance(plain.to_sklearn(), (MLPClassifier, MLPRegressor))
    assert isinstance(plain.to_torch()[0], torch.nn.Linear)


def test_exported_models_predict_on_raw_x(data):
    """best_estimator_, export_model and their conversions equal the search's
    predictions to 1e-12 in float64; a fold ensemble's members keep their
    own transforms through to_sklearn and to_torch."""
    X, y = data
    search = _fit(ParallelMLPClassifier([(6,), (4, 4)], "tanh", learning_rate_init=0.02,
                                        max_iter=10, dtype="float64", random_state=0, cv=3,
                                        input_transform=["none", *TRANSFORMS], ensemble="best"),
                  X, y)
    best = search.best_estimator_
    np.testing.assert_allclose(_outputs(best.to_sklearn(), X), search.predict_proba(X), rtol=0,
                               atol=1e-12)
    for i in range(search.n_models_):
        ensemble = search.export_model(i, fold="all")  # its fold ensemble
        value = search.cv_results_["param_input_transform"][i]
        members = ensemble.estimators_
        if value != "none":
            # each fold's own statistics
            statistic = {"standard": "mean_", "robust-smooth-clip": "center_",
                         "quantile": "quantiles_"}[value]
            centers = [getattr(m.input_transform_, statistic) for m in members]
            assert not np.array_equal(centers[0], centers[1])
        voting = ensemble.to_sklearn()
        assert isinstance(voting, VotingClassifier)
        assert all(isinstance(m, Pipeline) == (value != "none") for m in voting.estimators_)
        np.testing.assert_allclose(voting.predict_proba(X), ensemble.predict_proba(X), rtol=0,
                                   atol=1e-12)
        with torch.no_grad():
            averaged = ensemble.to_torch(dtype=torch.float64)(torch.as_tensor(X)).numpy()
        np.testing.assert_allclose(averaged, ensemble.predict_proba(X), rtol=0, atol=1e-12)
        # a fold model alone
        model = search.export_model(i, fold=1)
        np.testing.assert_allclose(_outputs(model.to_sklearn(), X), model.predict_proba(X),
                                   rtol=0, atol=1e-12)


def test_pickle_keeps_the_transform(data, regression):
    X, y = regression
    search = _fit(ParallelMLPRegressor((5,), "relu", max_iter=8, dtype="float64", random_state=0,
                                       cv=None, input_transform=["standard", "robust-smooth-clip"],
                                       ensemble="best"), X, y)
    loaded = pickle.loads(pickle.dumps(search))
    np.testing.assert_array_equal(loaded.predict(X), search.predict(X))
    for i in range(search.n_models_):
        np.testing.assert_array_equal(loaded.export_model(i).predict(X),
                                      search.export_model(i).predict(X))
    model = loaded.export_model(1)
    copied = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copied.predict(X), model.predict(X))
    # a clone is unfitted and keeps the parameter
    assert clone(model).get_params()["input_transform"] == model.input_transform
