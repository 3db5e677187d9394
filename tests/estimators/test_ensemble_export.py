"""Every estimator a search hands out exports and saves alike (issue 36).

``best_estimator_`` and ``export_model`` return single models, fold
ensembles, top-k ensembles and greedy ensembles of fold ensembles; each one
predicts, scores, converts with ``to_sklearn()`` / ``to_torch()`` and
round-trips through :mod:`skpmlp.io`, and every conversion predicts what the
original does, in float64.
"""

import pickle
import warnings

import numpy as np
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import VotingClassifier, VotingRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import skpmlp.io
from skpmlp import (
    MLPEnsembleClassifier,
    MLPEnsembleRegressor,
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)
from skpmlp._core._attributes import CONFIGURATION_ATTRIBUTES, PER_MODEL_ATTRIBUTES

#: scikit-learn's MLPs (no input transform, no dropout): the exports are
#: plain MLPs; the case "default space" exports a Pipeline of the searches'
#: own defaults.
GRID = dict(hidden_layer_sizes=[(8,), (6, 4)], activation=("tanh", "relu"), max_iter=15,
            learning_rate_init=0.02, dtype="float64", random_state=0, **sklearn_mlp_params())

#: Conversions of the same float64 weights agree to rounding.
TOL = dict(rtol=0, atol=1e-12)


def _classification(kind):
    X, y = make_classification(n_samples=120, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, random_state=0)
    X = StandardScaler().fit_transform(X)
    if kind == "binary":
        return X, np.where(y == 2, "yes", "no")
    if kind == "multilabel":
        return X, np.stack([y == 0, y == 1, X[:, 0] > 0], axis=1).astype(int)
    return X, np.array(["ant", "bee", "cat"])[y]


def _regression(kind):
    X, y = make_regression(n_samples=120, n_features=5, n_targets=2 if kind == "two" else 1,
                           noise=1.0, random_state=0)
    X = StandardScaler().fit_transform(X)
    y = y / np.std(y)
    return (X, np.abs(y)) if kind == "poisson" else (X, y)


def _search(task, kind, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task == "classifier":
            X, y = _classification(kind)
            return ParallelMLPClassifier(**{**GRID, **params}).fit(X, y), X, y
        X, y = _regression(kind)
        loss = {"loss": "poisson"} if kind == "poisson" else {}
        return ParallelMLPRegressor(**{**GRID, **loss, **params}).fit(X, y), X, y


#: (task, target kind, search parameters, how the estimator is taken from it)
CASES = {
    "single (holdout)": ("classifier", "multiclass", dict(cv=None), "export"),
    "single (refit)": ("classifier", "binary", dict(cv=3, ensemble="best"), "best"),
    "fold ensemble": ("classifier", "multiclass", dict(cv=3), "export"),
    "greedy of fold ensembles": ("classifier", "multiclass", dict(cv=3), "best"),
    "greedy, binary": ("classifier", "binary", dict(cv=3), "best"),
    "top-3 (refits)": ("classifier", "multiclass", dict(cv=3, ensemble="best", ensemble_size=3),
                       "best"),
    "multilabel fold ensemble": ("classifier", "multilabel", dict(cv=3), "export"),
    "regressor single": ("regressor", "one", dict(cv=None), "export"),
    "default space": ("classifier", "multiclass",
                      dict(cv=None, input_transform="robust-smooth-clip", dropout="auto",
                           beta_2=0.95), "export"),
    "default space, folds": ("regressor", "one",
                             dict(cv=3, input_transform="robust-smooth-clip", dropout="auto",
                                  beta_2=0.95), "best"),
    "regressor fold ensemble": ("regressor", "one", dict(cv=3), "export"),
    "regressor greedy": ("regressor", "one", dict(cv=3), "best"),
    "poisson greedy": ("regressor", "poisson", dict(cv=3), "best"),
    "two-target fold ensemble": ("regressor", "two", dict(cv=3), "export"),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    task, kind, params, take = CASES[request.param]
    search, X, y = _search(task, kind, **params)
    model = search.best_estimator_ if take == "best" else search.export_model(1)
    SEARCHES[request.param] = search
    return request.param, model, X, y


#: The search each case's model came from.
SEARCHES = {}


def _is_ensemble(model):
    return hasattr(model, "estimators_")


def _predictions(model, X):
    """What the model predicts, in its own space: probabilities or values."""
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    prediction = model.predict(X)
    return prediction.reshape(len(X), -1)


def test_kinds_are_what_the_case_says(case):
    name, model, _, _ = case
    ensemble = name.split(" (")[0] not in ("single", "regressor single", "default space")
    assert _is_ensemble(model) == ensemble
    if name.endswith("fold ensemble"):
        assert len(model.estimators_) == 3
        assert all(not _is_ensemble(member) for member in model.estimators_)
    if "greedy" in name:  # of fold ensembles; one member is its fold ensemble itself
        members = model.estimators_ if _is_ensemble(model.estimators_[0]) else [model]
        assert all(len(member.estimators_) == 3 for member in members)


def test_predict_predict_proba_and_score(case):
    _, model, X, y = case
    prediction = model.predict(X)
    assert prediction.shape == np.shape(y)
    if hasattr(model, "classes_"):
        proba = model.predict_proba(X)
        assert proba.shape == (len(X), len(model.classes_))
        assert_allclose(np.log(proba), model.predict_log_proba(X), rtol=1e-12)
    assert np.isfinite(model.score(X, y))


def test_to_sklearn_predicts_the_same(case):
    name, model, X, y = case
    if "multilabel" in name or "two-target" in name:
        with pytest.raises(ValueError, match="does not support"):
            model.to_sklearn()
        return
    converted = model.to_sklearn()
    if _is_ensemble(model):
        voting = VotingClassifier if hasattr(model, "classes_") else VotingRegressor
        assert type(converted) is voting
        assert converted.weights == pytest.approx(list(model.weights_), abs=0)
        assert len(converted.estimators_) == len(model.estimators_)
        assert converted.n_features_in_ == X.shape[1]
    elif "default space" in name:  # robust-smooth-clip inputs: the scaler, then the MLP
        assert type(converted) is Pipeline
        assert type(converted[-1]) in (MLPClassifier, MLPRegressor)
    else:
        assert type(converted) in (MLPClassifier, MLPRegressor)
    assert_allclose(_predictions(converted, X), _predictions(model, X), **TOL)
    if hasattr(model, "classes_"):
        assert_array_equal(converted.predict(X), model.predict(X))
    assert converted.score(X, y) == pytest.approx(model.score(X, y), abs=1e-12)


def test_to_torch_predicts_the_same(case):
    _, model, X, _ = case
    net = model.to_torch(dtype=torch.float64)
    assert isinstance(net, torch.nn.Module)
    with torch.no_grad():
        outputs = net(torch.as_tensor(X)).numpy()
    if _is_ensemble(model):  # prediction space: probabilities or values
        assert_allclose(outputs, _predictions(model, X), **TOL)
    else:  # a single model's raw outputs (logits)
        assert_allclose(outputs, model._outputs(X), **TOL)


def test_to_torch_is_one_float32_module_by_default(case):
    _, model, X, _ = case
    net = model.to_torch()
    assert all(p.dtype == torch.float32 for p in net.parameters())
    with torch.no_grad():
        outputs = net(torch.as_tensor(X, dtype=torch.float32)).numpy()
    expected = _predictions(model, X) if _is_ensemble(model) else model._outputs(X)
    assert_allclose(outputs, expected, atol=1e-4)


def test_io_round_trip(case, tmp_path):
    _, model, X, _ = case
    path = tmp_path / "model.npz"
    skpmlp.io.save(model, path)
    loaded = skpmlp.io.load(path)
    assert type(loaded) is type(model)
    assert_array_equal(_predictions(loaded, X), _predictions(model, X))
    assert_array_equal(loaded.predict(X), model.predict(X))
    if _is_ensemble(model):
        assert_array_equal(loaded.weights_, model.weights_)


def test_pickle_round_trip(case):
    _, model, X, _ = case
    again = pickle.loads(pickle.dumps(model))
    assert_array_equal(_predictions(again, X), _predictions(model, X))


def test_an_ensemble_has_no_single_models_attributes(case):
    _, model, _, _ = case
    one_model = PER_MODEL_ATTRIBUTES + CONFIGURATION_ATTRIBUTES
    if not _is_ensemble(model):
        assert all(hasattr(model, name) for name in one_model)
        return
    for name in one_model:
        assert not hasattr(model, name)
    with pytest.raises(AttributeError, match=r"has no coefs_: it averages .* estimators_\[i\]"):
        model.coefs_
    assert model.n_outputs_ == model.estimators_[0].n_outputs_
    with pytest.raises(AttributeError, match="no attribute 'not_an_attribute'"):
        model.not_an_attribute


def test_fold_all_of_every_kind_is_its_fold_models_averaged(case, tmp_path):
    name, _, X, y = case
    search = SEARCHES[name]
    if search.cv_ is None:
        return
    fold_all = search.export_model(1, fold="all")
    assert len(fold_all.estimators_) == 3
    folds = [_predictions(search.export_model(1, fold=k), X) for k in range(3)]
    assert_allclose(_predictions(fold_all, X), np.mean(folds, axis=0), **TOL)
    with torch.no_grad():
        outputs = fold_all.to_torch(dtype=torch.float64)(torch.as_tensor(X)).numpy()
    assert_allclose(outputs, _predictions(fold_all, X), **TOL)
    skpmlp.io.save(fold_all, tmp_path / "folds.npz")
    assert_array_equal(_predictions(skpmlp.io.load(tmp_path / "folds.npz"), X),
                       _predictions(fold_all, X))


# ------------------------------------------------------------ export_model
@pytest.fixture(scope="module")
def folds_search():
    return _search("classifier", "multiclass", cv=3)[0]


@pytest.fixture(scope="module")
def refit_search():
    return _search("classifier", "multiclass", cv=3, ensemble="best")[0]


def test_export_model_of_a_row_without_refit_is_its_fold_ensemble(folds_search):
    X, _ = _classification("multiclass")
    for row in range(folds_search.n_models_):
        model = folds_search.export_model(row)
        assert type(model) is MLPEnsembleClassifier
        assert_array_equal(model.weights_, np.full(3, 1 / 3))
        assert_array_equal(model.predict_proba(X),
                           folds_search.export_model(row, fold="all").predict_proba(X))
        for k, member in enumerate(model.estimators_):
            expected = folds_search.export_model(row, fold=k)
            assert type(member) is SingleMLPClassifier
            for a, b in zip(member.coefs_ + member.intercepts_,
                            expected.coefs_ + expected.intercepts_):
                assert_array_equal(a, b)


def test_export_model_of_a_refitted_row_is_the_refit(refit_search):
    X, _ = _classification("multiclass")
    best = refit_search.best_index_
    model = refit_search.export_model(best)
    assert type(model) is SingleMLPClassifier
    assert_array_equal(model.predict_proba(X), refit_search.best_estimator_.predict_proba(X))
    # the other rows were not refitted: their fold ensembles
    other = (best + 1) % refit_search.n_models_
    assert type(refit_search.export_model(other)) is MLPEnsembleClassifier
    assert type(refit_search.export_model(best, fold=1)) is SingleMLPClassifier
    assert type(refit_search.export_model(best, fold="all")) is MLPEnsembleClassifier


def test_export_model_with_a_holdout_is_the_trained_model():
    search, X, _ = _search("regressor", "one", cv=None)
    model = search.export_model(2)
    assert type(model) is SingleMLPRegressor
    with pytest.raises(ValueError, match=r"fold must be an int in \[0, 1\); got 'all'"):
        search.export_model(2, fold="all")


def test_export_model_refuses_bad_rows_and_folds(folds_search):
    with pytest.raises(ValueError, match="index must be an int"):
        folds_search.export_model(folds_search.n_models_)
    with pytest.raises(ValueError, match=r"fold must be an int in \[0, 3\) or 'all'; got 3"):
        folds_search.export_model(0, fold=3)


def test_a_nested_ensemble_converts_to_nested_voting(folds_search):
    X, _ = _classification("multiclass")
    greedy = folds_search.best_estimator_
    voting = greedy.to_sklearn()
    for member, converted in zip(greedy.estimators_, voting.estimators_):
        assert type(converted) is VotingClassifier
        assert_allclose(converted.predict_proba(X), member.predict_proba(X), **TOL)
    assert list(voting.named_estimators_) == [f"member{i}" for i in range(len(greedy.estimators_))]
    net = greedy.to_torch(dtype=torch.float64)
    assert_array_equal(net.weights.numpy(), greedy.weights_)
    assert len(net.members) == len(greedy.estimators_)


def test_from_fitted_ensemble_of_singles_exports(iris):
    X, y = iris
    members = [SingleMLPRegressor((4,), "tanh", max_iter=5, dtype="float64", random_state=seed)
               .fit(X, y) for seed in range(3)]
    ensemble = MLPEnsembleRegressor.from_fitted(members, weights=[1, 2, 1])
    assert_allclose(ensemble.to_sklearn().predict(X), ensemble.predict(X), **TOL)
    with torch.no_grad():
        out = ensemble.to_torch(dtype=torch.float64)(torch.as_tensor(X)).numpy()
    assert_allclose(out[:, 0], ensemble.predict(X), **TOL)


def test_an_activation_scikit_learn_lacks_is_refused_by_name(iris):
    X, y = iris
    members = [SingleMLPClassifier((4,), "gelu", max_iter=5, random_state=0).fit(X, y)]
    ensemble = MLPEnsembleClassifier.from_fitted(members)
    with pytest.raises(ValueError, match="no 'gelu' activation"):
        ensemble.to_sklearn()
    assert ensemble.to_torch()(torch.zeros(2, 4)).shape == (2, 3)


# ------------------------------------------------------ the search's attributes
def test_a_search_with_fold_ensembles_has_no_single_models_attributes(folds_search):
    for name in PER_MODEL_ATTRIBUTES:
        assert not hasattr(folds_search, name), name
    with pytest.raises(AttributeError, match=r"export_model\(best_index_, fold=k\)\.coefs_"):
        folds_search.coefs_
    assert folds_search.n_outputs_ == 3
    assert folds_search.out_activation_ == "softmax"
    # what the best configuration's fold models have as a whole
    best = folds_search.best_index_
    assert folds_search.n_iter_ == folds_search.cv_results_["n_iter"][best]
    depth = len(folds_search.cv_results_["params"][best]["hidden_layer_sizes"])
    assert folds_search.n_layers_ == depth + 2
    with pytest.raises(AttributeError, match="no attribute 'coefs'"):
        folds_search.coefs


def test_methods_refit_false_withholds_keep_their_message():
    search = _search("classifier", "multiclass", cv=3, refit=False)[0]
    with pytest.raises(AttributeError, match="has no attribute 'predict'") as error:
        search.predict
    assert "refit=False" in str(error.value.__cause__)


def test_a_refitted_search_has_the_refits_attributes(refit_search):
    best = refit_search.best_estimator_
    for name in PER_MODEL_ATTRIBUTES:
        assert hasattr(refit_search, name), name
    for a, b in zip(refit_search.coefs_, best.coefs_):
        assert_array_equal(a, b)
    assert refit_search.loss_curve_ == best.loss_curve_


# ------------------------------------------------------------ FutureWarning
def _fit_quietly_but(search, X, y):
    """Fit, returning the FutureWarnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    return [w for w in caught if issubclass(w.category, FutureWarning)]


def test_the_changed_defaults_warn_where_they_give_fold_ensembles():
    X, y = _classification("multiclass")
    caught = _fit_quietly_but(ParallelMLPClassifier([(4,), (6,)], max_iter=3), X, y)
    assert len(caught) == 1
    message = str(caught[0].message)
    for words in ("cv='auto' trains 5 folds", "this fit has 120", "MLPEnsembleClassifier",
                  "cv=5, ensemble='greedy'", "cv=None, ensemble='best'", "ensemble='best'"):
        assert words in message
    assert caught[0].filename == __file__  # points at the caller's fit


@pytest.mark.parametrize("params", [
    dict(cv=5), dict(cv=None), dict(ensemble="greedy"), dict(ensemble="best"),
    dict(refit=False),
    # one configuration: cv="auto" is the holdout (scikit-learn's MLP)
    dict(hidden_layer_sizes=(4,), activation="relu", learning_rate_init=0.01,
         input_transform="robust-smooth-clip"),
])
def test_pinned_parameters_do_not_warn(params):
    X, y = _classification("multiclass")
    search = ParallelMLPClassifier(**{"hidden_layer_sizes": [(4,), (6,)], "max_iter": 3, **params})
    assert _fit_quietly_but(search, X, y) == []


def test_large_data_does_not_warn():
    X, y = make_regression(n_samples=2001, n_features=3, random_state=0)
    search = ParallelMLPRegressor([(4,), (6,)], max_iter=1, batch_size=500)
    assert _fit_quietly_but(search, X, y / np.std(y)) == []
    assert search.cv_ is None
