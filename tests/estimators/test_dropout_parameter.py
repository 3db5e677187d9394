"""``dropout`` as an estimator parameter (issue 40, item 1).

Validated as scikit-learn validates (``InvalidParameterError``), refused
with L-BFGS, searched per model in one fused run (a ``cv_results_``
column), carried by exported and saved models (which retrain alone to the
same weights), inert at prediction (``to_sklearn`` and ``to_torch`` predict
the same), untouched by halving, working with k folds and in adaptive
searches, and trained on the native kernel (as on torch, to rounding) with
``verbose`` saying so. The float64 tests against plain torch are
``tests/engine/test_dropout.py``; the checkpoints',
``tests/persistence/test_checkpoint.py``.
"""

import dataclasses
import warnings

import numpy as np
import pytest
import torch
from ingredient_checks import assert_halving_survivors_are_unpruned, same_weights
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import InvalidParameterError

import skpmlp._estimators._single
import skpmlp._search._plan
import skpmlp.io
from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)

BASE = dict(hidden_layer_sizes=[(6,), (4, 3)], activation="tanh", learning_rate_init=0.03, max_iter=8,
            dtype="float64", random_state=0, cv=None, batch_size=32, input_transform="none")


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return estimator.fit(X, y)


def _classification():
    return make_classification(120, 6, n_informative=4, n_classes=3, random_state=0)


def _rows(search, rate):
    """The rows of ``cv_results_`` whose models have dropout ``rate``."""
    return [i for i, p in enumerate(search.cv_results_["params"]) if p["dropout"] == rate]


@pytest.mark.parametrize("cls", [ParallelMLPClassifier, ParallelMLPRegressor, SingleMLPClassifier,
                                 SingleMLPRegressor])
@pytest.mark.parametrize("value", [-0.1, 1.0, "x"])
def test_bad_values_are_refused_as_scikit_learn_refuses_them(cls, value):
    X, y = _classification()
    with pytest.raises(InvalidParameterError, match=f"'dropout' parameter of {cls.__name__}"):
        cls(dropout=value).fit(X, y)


def test_bad_searched_values_are_refused():
    X, y = _classification()
    with pytest.raises(ValueError,
                       match=r"dropout values must be 'auto' or numbers in \[0, 1\); got 1.0"):
        ParallelMLPClassifier(**BASE, dropout=[0.0, 1.0]).fit(X, y)
    with pytest.raises(ValueError, match="dropout"):
        ParallelMLPClassifier(**BASE, param_grid={"dropout": [0.1, -0.5]}).fit(X, y)


@pytest.mark.parametrize("make", [
    lambda: ParallelMLPClassifier(**BASE, solver="lbfgs", dropout=0.1),
    lambda: ParallelMLPClassifier(**BASE, solver=["adam", "lbfgs"], dropout=[0.0, 0.2]),
    lambda: ParallelMLPClassifier(**BASE, param_grid=[{"solver": ["lbfgs", "adam"], "dropout": [0.2]}]),
    lambda: SingleMLPClassifier(solver="lbfgs", dropout=0.5),
    lambda: SingleMLPRegressor(solver="lbfgs", dropout=0.5),
], ids=["search", "grid", "param_grid", "single-classifier", "single-regressor"])
def test_lbfgs_with_dropout_is_refused(make):
    X, y = _classification()
    with pytest.raises(ValueError, match=r"solver='lbfgs' cannot train with dropout"):
        make().fit(X, y)


def test_lbfgs_and_dropout_in_separate_subspaces_train():
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, param_grid=[{"solver": ["lbfgs"]},
                                                            {"solver": ["adam"], "dropout": [0.0, 0.3]}]), X, y)
    # the L-BFGS subspace leaves dropout to the estimator's "auto": 0 for lbfgs
    assert [(p["solver"], p["dropout"]) for p in search.cv_results_["params"][::2]] == [
        ("lbfgs", "auto"), ("adam", 0.0), ("adam", 0.3)]
    assert [search.export_model(i).dropout for i in (0, 2, 4)] == [0.0, 0.0, 0.3]


@pytest.fixture(scope="module")
def searched():
    """A search of three rates in one fused run, and its data."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, dropout=[0.0, 0.1, 0.3], holdout_refit=False), X, y)
    return search, X, y


def test_searched_rates_are_a_column_and_exported(searched):
    search, X, y = searched
    results = search.cv_results_
    assert search.n_models_ == 6
    assert sorted(results["param_dropout"]) == [0.0, 0.0, 0.1, 0.1, 0.3, 0.3]
    weights = set()
    for i, params in enumerate(results["params"]):
        model = search.export_model(i)
        assert model.dropout == params["dropout"]
        weights.add(model.coefs_[0].tobytes())
    assert len(weights) == 6  # the rate changes what a model learns


def test_the_rates_train_in_one_fused_run(capsys):
    X, y = _classification()
    _fit(ParallelMLPClassifier(**BASE, dropout=[0.0, 0.1, 0.3], verbose=1, holdout_refit=False), X, y)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "fused run 1 trains on the native kernel" in text and "dropout" not in text
    assert "fused run 2" not in text


def _on_backend(monkeypatch, backend):
    """Train every run of the estimators on ``backend`` from here on."""
    for module in (skpmlp._search._plan, skpmlp._estimators._single):
        original = module.__dict__["train_config"]
        monkeypatch.setattr(module, "train_config", lambda *a, _original=original, **kw: dataclasses.replace(
            _original(*a, **kw), backend=backend))


def test_the_native_kernel_trains_the_searches_of_torch(monkeypatch):
    """A search of rates, with k folds: the kernel's scores and weights are
    torch's to rounding, and its best estimator's predictions as well."""
    X, y = _classification()
    params = dict(BASE, dropout=[0.0, 0.1, 0.3], cv=3)
    fitted = {}
    for backend in ("torch", "native"):
        with monkeypatch.context() as patch:
            _on_backend(patch, backend)
            fitted[backend] = _fit(ParallelMLPClassifier(**params), X, y)
    reference, native = fitted["torch"], fitted["native"]
    for k in range(3):
        np.testing.assert_allclose(native.cv_results_[f"split{k}_test_score"],
                                   reference.cv_results_[f"split{k}_test_score"], rtol=0, atol=1e-12)
        for i in range(native.n_models_):
            same_weights(native.export_model(i, fold=k), reference.export_model(i, fold=k), atol=1e-10)
    assert native.best_params_ == reference.best_params_
    np.testing.assert_allclose(native.best_estimator_.predict_proba(X),
                               reference.best_estimator_.predict_proba(X), rtol=0, atol=1e-10)


def test_a_refitted_model_retrains_alone_to_thesame_weights():
    """The best model refitted on every row (``holdout_refit``) hashes its
    own seed: the lone model's own ``fit`` draws the same masks."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, dropout=[0.2, 0.4]), X, y)
    best = search.best_estimator_
    assert best.dropout == search.best_params_["dropout"] > 0
    same_weights(best, _fit(clone(best), X, y), atol=1e-9)
    plain = _fit(clone(best).set_params(dropout=0.0), X, y)
    assert np.abs(plain.coefs_[0] - best.coefs_[0]).max() > 1e-4


def test_a_saved_search_and_model_keep_the_rates(searched, tmp_path):
    search, X, _ = searched
    skpmlp.io.save(search, tmp_path / "search.skpmlp")
    loaded = skpmlp.io.load(tmp_path / "search.skpmlp")
    assert loaded.get_params()["dropout"] == [0.0, 0.1, 0.3]
    assert loaded.cv_results_["params"] == search.cv_results_["params"]
    model = search.export_model(_rows(search, 0.3)[0])
    skpmlp.io.save(model, tmp_path / "model.skpmlp")
    again = skpmlp.io.load(tmp_path / "model.skpmlp")
    assert again.get_params() == model.get_params() and again.dropout == 0.3
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


def test_dropout_is_inert_at_prediction(searched):
    """A fitted model is its weights: ``predict`` and the scores use them
    whole, and scikit-learn's MLP and torch's module predict the same."""
    search, X, y = searched
    model = search.export_model(_rows(search, 0.3)[0])
    assert model.dropout == 0.3
    np.testing.assert_array_equal(model.predict_proba(X), model.predict_proba(X))
    np.testing.assert_allclose(model.to_sklearn().predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12)
    net = model.to_torch(dtype=torch.float64)
    assert not any(isinstance(m, torch.nn.Dropout) for m in net)
    net.train()  # no dropout module: training mode changes nothing
    with torch.no_grad():
        logits = net(torch.from_numpy(X))
    np.testing.assert_allclose(torch.softmax(logits, 1).numpy(), model.predict_proba(X), rtol=0, atol=1e-12)


def test_a_regressor_searches_dropout():
    X, y = make_regression(100, 5, noise=1.0, random_state=0)
    search = _fit(ParallelMLPRegressor(**BASE, dropout=[0.0, 0.2]), X, y)
    assert sorted(search.cv_results_["param_dropout"]) == [0.0, 0.0, 0.2, 0.2]
    best = search.best_estimator_
    assert best.dropout == search.best_params_["dropout"]
    same_weights(best, _fit(clone(best), X, y), atol=1e-9)


def test_halving_survivors_are_the_models_a_search_without_it_trains():
    X, y = _classification()
    assert_halving_survivors_are_unpruned(
        dict(BASE, hidden_layer_sizes=[(6,), (5,), (4, 3)], dropout=[0.0, 0.1, 0.3], max_iter=12,
             n_iter_no_change=1000, holdout_refit=False), X, y)


def test_k_fold_replicas_equal_their_fold_alone():
    """With k folds, fold k's replica of a dropout model is the one a
    search on fold k alone trains (its masks hash its row's position in its
    own fold's batch), and its fold ensemble predicts."""
    X, y = _classification()
    folds = list(StratifiedKFold(3).split(X, y))
    params = dict(BASE, hidden_layer_sizes=[(6,)], dropout=[0.0, 0.3], ensemble="best", refit=False)
    full = _fit(ParallelMLPClassifier(**{**params, "cv": folds}), X, y)
    assert list(full.cv_results_["param_dropout"]) == [0.0, 0.3]
    assert _rows(full, 0.3) == [1]
    for k in (0, 2):
        alone = _fit(ParallelMLPClassifier(**{**params, "cv": [folds[k]]}), X, y)
        np.testing.assert_array_equal(full.cv_results_[f"split{k}_test_score"],
                                      alone.cv_results_["split0_test_score"])
        same_weights(full.export_model(1, fold=k), alone.export_model(1, fold=0), atol=1e-9)
    assert full.export_model(1, fold="all").predict(X).shape == y.shape


@pytest.mark.parametrize("refill", ["sample", "perturb"])
def test_an_adaptive_search_refills_models_with_dropout(refill):
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(
        **{**BASE, "hidden_layer_sizes": [(6,)], "activation": ["tanh", "relu"], "max_iter": 12,
           "learning_rate_init": [0.01, 0.03]},
        dropout=[0.0, 0.2], n_iter_no_change=1000, pruning="halving", min_iter=2, halving_factor=2,
        refill=refill, max_models=20, holdout_refit=False), X, y)
    results = search.cv_results_
    assert (results["start_iter"] > 0).any()
    for i in np.flatnonzero(results["start_iter"] > 0):
        model = search.export_model(i)
        assert model.dropout in (0.0, 0.2)
        assert np.isfinite(model.loss_curve_).all()


def test_auto_is_0_15_for_minibatch_solvers_and_0_for_lbfgs():
    """The searches' default: every model trains with its solver's rate, the
    same models as the rates given as numbers."""
    X, y = _classification()
    params = {**BASE, "hidden_layer_sizes": [(6,)], "solver": ["adam", "sgd", "lbfgs"],
              "holdout_refit": False}
    auto = _fit(ParallelMLPClassifier(**params), X, y)
    assert ParallelMLPClassifier().dropout == "auto"
    assert [auto.export_model(i).dropout for i in range(3)] == [0.15, 0.15, 0.0]
    given = _fit(ParallelMLPClassifier(**params, param_grid=[
        {"solver": ["adam", "sgd"], "dropout": [0.15]}, {"solver": ["lbfgs"], "dropout": [0.0]}]),
        X, y)
    assert [p["solver"] for p in given.cv_results_["params"]] == ["adam", "sgd", "lbfgs"]
    for i in range(3):
        same_weights(auto.export_model(i), given.export_model(i))
