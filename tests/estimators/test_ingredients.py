"""RealMLP's ingredients as estimator parameters (issue 40, item 1):
``label_smoothing`` (classifiers), ``learning_rate="cosine"`` /
``"coslog4"`` and ``warmup_fraction``, per model and searchable.

Validated as scikit-learn validates (``InvalidParameterError``), shown in
``cv_results_`` where searched, carried by exported and saved models,
untouched by halving (a survivor is the model a search without pruning
trains), and working in adaptive searches. The engine's float64 tests are
``tests/engine/test_label_smoothing.py`` and ``tests/engine/test_schedules.py``;
checkpoints, ``tests/persistence/test_checkpoint.py``.
"""


import numpy as np
import pytest
import torch
from ingredient_checks import assert_halving_survivors_are_unpruned
from ingredient_checks import fit as _fit
from sklearn.base import clone
from sklearn.datasets import make_classification, make_multilabel_classification, make_regression
from sklearn.utils._param_validation import InvalidParameterError

import skpmlp.io
from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)

BASE = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(6,), (4, 3)], activation="tanh", learning_rate_init=0.03, max_iter=10,
    dtype="float64", random_state=0, cv=None)


def _classification():
    return make_classification(150, 6, n_informative=4, n_classes=3, random_state=0)


@pytest.mark.parametrize("estimator, name", [
    (ParallelMLPClassifier(label_smoothing=1.0), "label_smoothing"),
    (ParallelMLPClassifier(label_smoothing=-0.1), "label_smoothing"),
    (ParallelMLPClassifier(label_smoothing="0.1"), "label_smoothing"),
    (ParallelMLPClassifier(warmup_fraction=1.5), "warmup_fraction"),
    (ParallelMLPRegressor(warmup_fraction=-0.5), "warmup_fraction"),
    (ParallelMLPClassifier(learning_rate="cyclic"), "learning_rate"),
    (SingleMLPClassifier(label_smoothing=1.0), "label_smoothing"),
    (SingleMLPClassifier(learning_rate=["cosine"]), "learning_rate"),
    (SingleMLPRegressor(warmup_fraction=2.0), "warmup_fraction"),
], ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_bad_values_are_refused_as_scikit_learn_refuses_them(estimator, name):
    X, y = _classification()
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {type(estimator).__name__}"):
        estimator.fit(X, y)


def test_label_smoothing_is_the_classifiers_only():
    X, y = make_regression(60, 4, random_state=0)
    with pytest.raises(TypeError, match="label_smoothing"):
        ParallelMLPRegressor(label_smoothing=0.1)
    with pytest.raises(TypeError, match="label_smoothing"):
        SingleMLPRegressor(label_smoothing=0.1)
    with pytest.raises(ValueError, match=r"param_grid has keys \['label_smoothing'\] that cannot be searched"):
        ParallelMLPRegressor(**BASE, param_grid={"label_smoothing": [0.0, 0.1]}).fit(X, y)
    assert "label_smoothing" not in ParallelMLPRegressor().get_params()


@pytest.fixture(scope="module")
def searched():
    """A search over the three ingredients and the data it was fitted on."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(
        **{**BASE, "hidden_layer_sizes": [(6,)]}, label_smoothing=[0.0, 0.15],
        learning_rate=["constant", "cosine", "coslog4"], warmup_fraction=[0.0, 0.2],
        holdout_refit=False), X, y)
    return search, X, y


def test_searched_ingredients_are_columns_and_exported(searched):
    search, X, y = searched
    results = search.cv_results_
    assert search.n_models_ == 12
    assert {"param_label_smoothing", "param_learning_rate", "param_warmup_fraction"} <= set(results)
    assert set(results["param_learning_rate"]) == {"constant", "cosine", "coslog4"}
    weights = set()
    for i, params in enumerate(results["params"]):
        model = search.export_model(i)
        for name in ("label_smoothing", "learning_rate", "warmup_fraction"):
            assert getattr(model, name) == params[name]
        weights.add(model.coefs_[0].tobytes())
    assert len(weights) == 12  # every ingredient changes what the model learns


def test_a_saved_search_keeps_the_ingredients(searched, tmp_path):
    search, X, _ = searched
    skpmlp.io.save(search, tmp_path / "search.skpmlp")
    loaded = skpmlp.io.load(tmp_path / "search.skpmlp")
    assert loaded.get_params()["label_smoothing"] == [0.0, 0.15]
    assert loaded.cv_results_["params"] == search.cv_results_["params"]
    model = search.export_model(search.n_models_ - 1)
    skpmlp.io.save(model, tmp_path / "model.skpmlp")
    again = skpmlp.io.load(tmp_path / "model.skpmlp")
    assert again.get_params() == model.get_params()
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(loaded.export_model(3).predict_proba(X), search.export_model(3).predict_proba(X))


def test_a_smoothed_model_converts_to_sklearn_and_torch(searched):
    """A fitted model is its weights: scikit-learn's MLP and torch's module
    predict what it predicts (neither can retrain with the smoothing)."""
    search, X, _ = searched
    i = next(i for i, p in enumerate(search.cv_results_["params"])
             if p["label_smoothing"] and p["learning_rate"] == "cosine")
    model = search.export_model(i)
    assert model.label_smoothing == 0.15
    np.testing.assert_allclose(model.to_sklearn().predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12)
    with torch.no_grad():
        logits = model.to_torch(dtype=torch.float64)(torch.from_numpy(X)).numpy()
    np.testing.assert_allclose(torch.softmax(torch.from_numpy(logits), 1).numpy(), model.predict_proba(X),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("early_stopping", [False, True])
def test_halving_survivors_are_the_models_a_search_without_it_trains(early_stopping):
    """The schedules span ``max_iter`` whatever the rungs do: a model that
    survives every rung has the weights the same model gets in a search
    without pruning."""
    X, y = _classification()
    assert_halving_survivors_are_unpruned(
        dict(BASE, hidden_layer_sizes=[(6,), (5,), (4, 3)], learning_rate=["cosine", "coslog4"],
             warmup_fraction=0.2, label_smoothing=[0.0, 0.1], max_iter=12, n_iter_no_change=1000,
             early_stopping=early_stopping, holdout_refit=False), X, y)


def test_multilabel_smoothing_trains_alone_to_the_same_weights():
    """A multilabel search's best model, smoothed, refitted on every row
    (``holdout_refit``): its own ``fit`` retrains it to the same weights;
    the smoothed loss stays above the plain one."""
    X, y = make_multilabel_classification(120, 6, n_classes=3, random_state=0)
    search = _fit(ParallelMLPClassifier(**BASE, label_smoothing=[0.1, 0.3]), X, y)
    best = search.best_estimator_
    assert best.label_smoothing == search.best_params_["label_smoothing"] > 0
    alone = _fit(clone(best), X, y)
    for a, b in zip(best.coefs_ + best.intercepts_, alone.coefs_ + alone.intercepts_):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    plain = _fit(clone(best).set_params(label_smoothing=0.0), X, y)
    assert best.loss_curve_[-1] > plain.loss_curve_[-1]


def test_holdout_refit_lays_the_schedule_over_its_epochs():
    """With ``holdout_refit``, the best model retrains for the epochs it
    trained in the search, ``max_iter`` set to them: its schedule spans
    them, and its own ``fit`` retrains exactly it."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**{**BASE, "max_iter": 30}, learning_rate=["cosine", "coslog4"],
                                        warmup_fraction=0.3, early_stopping=True, n_iter_no_change=2), X, y)
    best = search.best_estimator_
    assert best.learning_rate == search.best_params_["learning_rate"] and best.warmup_fraction == 0.3
    assert best.max_iter == best.n_iter_ and not best.early_stopping
    alone = _fit(clone(best), X, y)
    for a, b in zip(best.coefs_ + best.intercepts_, alone.coefs_ + alone.intercepts_):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


@pytest.mark.parametrize("refill", ["sample", "perturb"])
def test_an_adaptive_search_refills_scheduled_and_smoothed_models(refill):
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(
        **{**BASE, "hidden_layer_sizes": [(6,)], "activation": ["tanh", "relu"], "max_iter": 16,
           "learning_rate_init": [0.01, 0.03]},
        learning_rate=["cosine", "coslog4"], warmup_fraction=0.1, label_smoothing=[0.0, 0.1],
        n_iter_no_change=1000, pruning="halving", min_iter=2, halving_factor=2, refill=refill, max_models=30,
        holdout_refit=False), X, y)
    results = search.cv_results_
    assert (results["start_iter"] > 0).any()
    for i in np.flatnonzero(results["start_iter"] > 0):
        model = search.export_model(i)
        assert model.learning_rate in ("cosine", "coslog4") and model.warmup_fraction == 0.1
        assert model.label_smoothing in (0.0, 0.1)
        assert np.isfinite(model.loss_curve_).all()


def test_the_ingredients_together_keep_a_model_independent_of_its_population():
    """A model with dropout, a diagonal scaling layer, label smoothing and a
    coslog4 schedule on robust-scaled inputs, restoring each fold's best
    epoch, predicts the same alone as inside a search mixing every one of
    those options (its fold models, exported)."""
    X, y = make_classification(90, 5, n_informative=3, n_classes=3, random_state=1)
    common = dict(BASE, hidden_layer_sizes=[(5,)], cv=3, ensemble="folds",
                  restore_best_weights=True, input_transform="robust-smooth-clip",
                  learning_rate="coslog4")
    chosen = dict(dropout=0.2, diagonal_scaling=True, label_smoothing=0.1)
    alone = _fit(ParallelMLPClassifier(**common, **chosen), X, y)
    mixed = _fit(ParallelMLPClassifier(**common, dropout=[0.0, 0.2], diagonal_scaling=[False, True],
                                       label_smoothing=[0.0, 0.1]), X, y)
    rows = [i for i, p in enumerate(mixed.cv_results_["params"])
            if all(p[name] == value for name, value in chosen.items())]
    assert len(rows) == 1 and len(mixed.cv_results_["params"]) == 8
    np.testing.assert_allclose(mixed.export_model(rows[0]).predict_proba(X),
                               alone.export_model(0).predict_proba(X), rtol=0, atol=1e-12)
    # the other models differ: the comparison can fail
    assert not np.allclose(mixed.export_model(0).predict_proba(X), alone.export_model(0).predict_proba(X))
