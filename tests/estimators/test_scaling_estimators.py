"""``diagonal_scaling`` as an estimator parameter (issue 40, item 1): a
learnable per-feature scale before the first layer, per model and
searchable.

Refused as scikit-learn refuses bad values; a ``cv_results_`` column where
searched; every exported model carries it, with the scale folded into its
first layer, so ``to_sklearn`` and ``to_torch`` predict what it predicts and
its own ``fit`` retrains it; saved and loaded; untouched by halving; an
adaptive search refills scaled models. The engine's float64 tests (plain
torch reference, independence) are ``tests/engine/test_diagonal_scaling.py``;
checkpoints, ``tests/persistence/test_checkpoint.py``.
"""


import numpy as np
import pytest
import torch
from ingredient_checks import assert_halving_survivors_are_unpruned
from ingredient_checks import fit as _fit
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.utils._param_validation import InvalidParameterError

import skpmlp.io
from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)

BASE = dict(hidden_layer_sizes=[(6,), (4, 3)], activation="tanh", learning_rate_init=0.03, max_iter=10,
            dtype="float64", random_state=0, cv=None, **sklearn_mlp_params())


def _rows(search, scaled):
    """The rows of ``search`` whose model scales (or not)."""
    return [i for i, p in enumerate(search.cv_results_["params"]) if p["diagonal_scaling"] == scaled]


def _classification():
    X, y = make_classification(150, 6, n_informative=4, n_classes=3, random_state=0)
    return X * np.array([1.0, 10.0, 0.1, 1.0, 3.0, 0.3]), y  # features of other scales


@pytest.mark.parametrize("estimator", [
    ParallelMLPClassifier(diagonal_scaling="yes"),
    ParallelMLPRegressor(diagonal_scaling=2),
    SingleMLPClassifier(diagonal_scaling=[False, True]),
    SingleMLPRegressor(diagonal_scaling=None),
], ids=lambda v: type(v).__name__)
def test_bad_values_are_refused_as_scikit_learn_refuses_them(estimator):
    X, y = _classification()
    with pytest.raises(InvalidParameterError,
                       match=f"'diagonal_scaling' parameter of {type(estimator).__name__}"):
        estimator.fit(X, y)


def test_a_bad_searched_value_is_refused():
    X, y = _classification()
    with pytest.raises((InvalidParameterError, ValueError), match="diagonal_scaling"):
        ParallelMLPClassifier(**BASE, diagonal_scaling=[False, "yes"]).fit(X, y)


@pytest.fixture(scope="module")
def searched():
    """A search over diagonal_scaling and the data it was fitted on."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, diagonal_scaling=[False, True], alpha=[1e-4, 1e-1],
                                        holdout_refit=False), X, y)
    return search, X, y


def test_searched_it_is_a_column_and_every_exported_model_carries_it(searched):
    search, X, y = searched
    results = search.cv_results_
    assert search.n_models_ == 8
    assert sorted(results["param_diagonal_scaling"]) == [False] * 4 + [True] * 4
    for i, params in enumerate(results["params"]):
        assert search.export_model(i).diagonal_scaling == params["diagonal_scaling"]
    # the scale changes what a model learns: each scaled row differs from its unscaled twin
    for i, j in zip(_rows(search, False), _rows(search, True)):
        assert {**results["params"][i], "diagonal_scaling": True} == results["params"][j]
        assert np.abs(search.export_model(i).coefs_[0] - search.export_model(j).coefs_[0]).max() > 1e-3


def test_the_scaled_model_converts_to_sklearn_and_torch(searched):
    """The scale is folded into the first layer: scikit-learn's MLP and
    torch's module predict what the model predicts, and neither holds a
    scale."""
    search, X, _ = searched
    model = search.export_model(_rows(search, True)[1])
    assert model.diagonal_scaling
    mlp = model.to_sklearn()
    assert [c.shape for c in mlp.coefs_] == [c.shape for c in model.coefs_]
    np.testing.assert_allclose(mlp.predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12)
    with torch.no_grad():
        logits = model.to_torch(dtype=torch.float64)(torch.from_numpy(X)).numpy()
    np.testing.assert_allclose(torch.softmax(torch.from_numpy(logits), 1).numpy(), model.predict_proba(X),
                               rtol=0, atol=1e-12)


def test_an_exported_scaled_model_retrains_alone_to_the_same_weights():
    """``export_model(i, fold=k).fit`` trains that model alone (its scale
    included) on the rows given: fold k's replica, trained in the fused
    search beside unscaled models, equals it retrained on fold k's rows."""
    X, y = _classification()
    folds = [(np.arange(100), np.arange(100, 150)), (np.arange(50, 150), np.arange(50))]
    search = _fit(ParallelMLPClassifier(**{**BASE, "cv": folds}, diagonal_scaling=[False, True],
                                        ensemble="best", refit=False), X, y)
    for i in _rows(search, True):
        for k, (train, _) in enumerate(folds):
            model = search.export_model(i, fold=k)
            assert model.diagonal_scaling
            alone = _fit(clone(model), X[train], y[train])
            for a, b in zip(model.coefs_ + model.intercepts_, alone.coefs_ + alone.intercepts_):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_a_saved_search_and_model_keep_it(searched, tmp_path):
    search, X, _ = searched
    skpmlp.io.save(search, tmp_path / "search.skpmlp")
    loaded = skpmlp.io.load(tmp_path / "search.skpmlp")
    assert loaded.get_params()["diagonal_scaling"] == [False, True]
    assert loaded.cv_results_["params"] == search.cv_results_["params"]
    i = _rows(search, True)[0]
    np.testing.assert_array_equal(loaded.export_model(i).predict_proba(X), search.export_model(i).predict_proba(X))
    model = search.export_model(i)
    skpmlp.io.save(model, tmp_path / "model.skpmlp")
    again = skpmlp.io.load(tmp_path / "model.skpmlp")
    assert again.diagonal_scaling and again.get_params() == model.get_params()
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


def test_a_regressor_scales_and_refits_alone():
    """The best regressor, scaled, refitted on every row (holdout_refit):
    its own ``fit`` retrains it to the same weights."""
    X, y = make_regression(120, 5, noise=1.0, random_state=0)
    X = X * np.array([1.0, 5.0, 0.2, 1.0, 2.0])
    search = _fit(ParallelMLPRegressor(**BASE, diagonal_scaling=True), X, y)
    best = search.best_estimator_
    assert best.diagonal_scaling
    alone = _fit(clone(best), X, y)
    for a, b in zip(best.coefs_ + best.intercepts_, alone.coefs_ + alone.intercepts_):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    np.testing.assert_allclose(best.to_sklearn().predict(X), best.predict(X), rtol=0, atol=1e-10)


@pytest.mark.parametrize("early_stopping", [False, True])
def test_halving_survivors_are_the_models_a_search_without_it_trains(early_stopping):
    X, y = _classification()
    # the scaled models train on torch's CPU ops, whose batched matmuls may
    # sum in another order once halving shrinks a group (they did on the
    # 16-core host of an H100, torch 2.11; a Zen 4 gives the same bits)
    assert_halving_survivors_are_unpruned(
        dict(BASE, hidden_layer_sizes=[(6,), (5,), (4, 3)], diagonal_scaling=[False, True],
             max_iter=12, n_iter_no_change=1000, early_stopping=early_stopping, holdout_refit=False),
        X, y, atol=1e-10)


def test_a_scaled_fold_ensemble_predicts_as_its_members():
    """With k folds every member of a fold ensemble is a scaled model of
    its own fold; the ensemble's ``to_sklearn`` predicts the same."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**{**BASE, "cv": 3}, diagonal_scaling=[False, True]), X, y)
    model = search.export_model(_rows(search, True)[0])
    assert all(member.diagonal_scaling for member in model.estimators_)
    np.testing.assert_allclose(model.to_sklearn().predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("refill", ["sample", "perturb"])
def test_an_adaptive_search_refills_scaled_models(refill):
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(
        **{**BASE, "hidden_layer_sizes": [(6,)], "activation": ["tanh", "relu"], "max_iter": 12,
           "learning_rate_init": [0.01, 0.03]},
        diagonal_scaling=True, n_iter_no_change=1000, pruning="halving", min_iter=2, halving_factor=2,
        refill=refill, max_models=16, holdout_refit=False), X, y)
    results = search.cv_results_
    assert (results["start_iter"] > 0).any()
    for i in np.flatnonzero(results["start_iter"] > 0):
        model = search.export_model(i)
        assert model.diagonal_scaling and np.isfinite(model.loss_curve_).all()


def test_refill_refuses_a_searched_diagonal_scaling():
    X, y = _classification()
    with pytest.raises(ValueError, match="searched diagonal_scaling"):
        ParallelMLPClassifier(**BASE, diagonal_scaling=[False, True], pruning="halving",
                              refill="sample").fit(X, y)


def test_verbose_says_the_run_trains_on_torch_and_why(capsys):
    X, y = _classification()
    _fit(ParallelMLPClassifier(**{**BASE, "max_iter": 2}, diagonal_scaling=[False, True], verbose=1,
                               device="cpu"), X, y)
    out = capsys.readouterr()
    assert "not the native kernel: diagonal_scaling=True" in out.out + out.err


def test_with_input_transforms_the_scale_acts_on_the_transformed_inputs():
    """Both searched: every exported model is a Pipeline of its fitted
    transform and a plain MLP whose first layer holds the scale."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**{**BASE, "input_transform": ["none", "robust-smooth-clip"]},
                                        diagonal_scaling=[False, True], holdout_refit=False), X, y)
    assert search.n_models_ == 8
    for i, params in enumerate(search.cv_results_["params"]):
        model = search.export_model(i)
        assert (model.diagonal_scaling, model.input_transform) == (params["diagonal_scaling"],
                                                                   params["input_transform"])
        np.testing.assert_allclose(model.to_sklearn().predict_proba(X), model.predict_proba(X), rtol=0,
                                   atol=1e-12)


def test_a_warm_started_search_goes_on_from_the_folded_weights():
    """A second fit with ``warm_start=True`` continues every scaled model
    from its folded weights (its scale at 1 again: the same function)."""
    X, y = _classification()
    search = ParallelMLPClassifier(**{**BASE, "max_iter": 3}, diagonal_scaling=[False, True], warm_start=True,
                                   holdout_refit=False)
    _fit(search, X, y)
    before = [search.export_model(i).predict_proba(X) for i in range(search.n_models_)]
    _fit(search, X, y)
    assert (np.asarray(search.n_iter_per_model_) == 6).all()
    for i in range(search.n_models_):
        assert np.abs(search.export_model(i).predict_proba(X) - before[i]).max() > 1e-6
