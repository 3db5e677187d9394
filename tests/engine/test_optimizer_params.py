"""Per-model optimizer settings searched like any other parameter (issue 14, item 2).

``solver``, ``momentum``, ``nesterovs_momentum``, ``beta_1``, ``beta_2``,
``epsilon``, ``learning_rate`` and ``power_t`` may each be one value, a list
or a distribution; models that differ in them train in one fused run, and a
model found by the search and exported trains alone to the same weights.
"""

import warnings

import numpy as np
import pytest
from scipy.stats import randint, uniform
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import ConvergenceWarning

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)
from skpmlp._core._params import MODEL_PARAMS, OPTIMIZER_DEFAULTS, OPTIMIZER_PARAMS
from skpmlp._search._splits import holdout_split

#: What the searches' exported minibatch models train with where a grid
#: leaves them out ("auto" dropout is 0.15 for adam and sgd).
SEARCH_DEFAULTS = dict(dropout=0.15, beta_2=0.95)

BASE = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(5,), (4, 3)], activation="tanh", learning_rate_init=0.03, max_iter=12,
    random_state=3)


def _classification():
    return make_classification(120, 6, n_informative=4, n_classes=3, random_state=0)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


# ------------------------------------------------------------ parameters
@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor,
                                             SingleMLPClassifier, SingleMLPRegressor])
def test_parameters_have_scikit_learns_names_and_defaults(estimator_class):
    params = estimator_class().get_params()
    # label_smoothing is the classifiers' only
    classifier = "Classifier" in estimator_class.__name__
    assert ("label_smoothing" in params) == classifier
    # the searches' default space differs in dropout and beta_2, and
    # sklearn_mlp_params() gives them back scikit-learn's values
    search = estimator_class.__name__.startswith("Parallel")
    own = dict(dropout="auto", beta_2=0.95) if search else {}
    assert {name: params[name] for name in OPTIMIZER_PARAMS if name in params} == {
        name: own.get(name, value) for name, value in OPTIMIZER_DEFAULTS.items() if name in params}
    if search:
        sklearn = estimator_class(**sklearn_mlp_params()).get_params()
        assert {name: sklearn[name] for name in OPTIMIZER_PARAMS if name in params} == {
            name: value for name, value in OPTIMIZER_DEFAULTS.items() if name in params}
    assert OPTIMIZER_DEFAULTS == dict(solver="adam", momentum=0.9, nesterovs_momentum=True, beta_1=0.9,
                                      beta_2=0.999, epsilon=1e-8, learning_rate="constant", power_t=0.5,
                                      amsgrad=False, warmup_fraction=0.0, label_smoothing=0.0,
                                      diagonal_scaling=False, dropout=0.0, batch_size="auto")


def test_a_default_search_shows_no_optimizer_columns():
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, cv=None), X, y)
    assert set(search.best_params_) == set(MODEL_PARAMS)
    assert not any(f"param_{name}" in search.cv_results_ for name in OPTIMIZER_PARAMS)


@pytest.mark.parametrize("params, shown", [
    (dict(solver=["sgd", "adam"], learning_rate=["constant", "adaptive"]), {"solver", "learning_rate"}),
    (dict(solver="sgd", momentum=[0.5, 0.9], nesterovs_momentum=[False, True]),
     {"momentum", "nesterovs_momentum"}),
    (dict(beta_1=[0.8, 0.9], beta_2=(0.99, 0.999), epsilon=[1e-8, 1e-6]), {"beta_1", "beta_2", "epsilon"}),
    (dict(solver=["sgd"], learning_rate="invscaling", power_t=[0.25, 0.5]), {"power_t"}),
], ids=["solver-schedule", "momentum", "adam", "power_t"])
def test_grid_over_optimizer_settings(params, shown):
    """A typical MLPClassifier grid: the optimizer parameters given as
    lists are searched (cross product), shown in cv_results_, and each
    exported model carries its own values; those given one value are not shown."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, **params, cv=None), X, y)
    n_grid = int(np.prod([len(v) for v in params.values() if isinstance(v, (list, tuple))]))
    assert search.n_models_ == 2 * n_grid
    results = search.cv_results_
    assert {name for name in OPTIMIZER_PARAMS if f"param_{name}" in results} == shown
    assert {name for name in results["params"][0] if name in OPTIMIZER_PARAMS} == shown
    for i in range(search.n_models_):
        model = search.export_model(i)
        for name in OPTIMIZER_PARAMS:
            value = params.get(name, SEARCH_DEFAULTS.get(name, OPTIMIZER_DEFAULTS[name]))
            expected = results["params"][i][name] if name in shown else (
                value[0] if isinstance(value, (list, tuple)) else value)
            assert getattr(model, name) == expected


def test_conditional_space_momentum_for_sgd_only():
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(
        **BASE, param_grid=[{"solver": ["sgd"], "momentum": [0.5, 0.9]}, {"solver": ["adam"]}], cv=None
    ), X, y)
    configs = [(p["solver"], p["momentum"]) for p in search.cv_results_["params"]]
    assert sorted(set(configs)) == [("adam", 0.9), ("sgd", 0.5), ("sgd", 0.9)]
    assert search.n_models_ == 6
    assert search.best_estimator_.solver == search.best_params_["solver"]


def test_distributions_and_a_budget():
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(
        **BASE, n_models=6, beta_1=uniform(0.5, 0.45), momentum=uniform(0.1, 0.8),
        solver=["adam", "sgd"], cv=None
    ), X, y)
    params = search.cv_results_["params"]
    assert len({p["beta_1"] for p in params}) == 6
    assert all(0.5 <= p["beta_1"] <= 0.95 and type(p["beta_1"]) is float for p in params)
    assert {"solver", "beta_1", "momentum"} <= set(params[0])


@pytest.mark.parametrize("params, message", [
    (dict(solver=["adam", "rmsprop"]), "solver values must be one of"),
    (dict(momentum=[0.5, 1.5]), r"momentum values must be numbers in \[0, 1\]"),
    (dict(beta_2=[0.9, 1.0]), r"beta_2 values must be numbers in \[0, 1\)"),
    (dict(epsilon=[0.0, 1e-8]), "epsilon values must be numbers in"),
    (dict(learning_rate=["constant", "cyclic"]), "learning_rate values must be one of"),
    (dict(nesterovs_momentum=[True, 1]), "nesterovs_momentum values must be booleans"),
    (dict(power_t=[-1.0]), "power_t values must be numbers in"),
    (dict(beta_1=uniform(0.5, 1.0), n_models=20), r"beta_1 values must be numbers in \[0, 1\)"),
    (dict(learning_rate=uniform(0, 1), n_models=2), "learning_rate values must be one of"),
    (dict(warmup_fraction=[0.5, 1.5]), r"warmup_fraction values must be numbers in \[0, 1\]"),
    (dict(label_smoothing=[0.1, 1.0]), r"label_smoothing values must be numbers in \[0, 1\)"),
    (dict(label_smoothing=uniform(-1, 1), n_models=4), r"label_smoothing values must be numbers in \[0, 1\)"),
    (dict(batch_size=[16, 0]), "batch_size"),
    (dict(batch_size=[16, "big"]), "batch_size"),
    (dict(batch_size=randint(-5, 0), n_models=2), "batch_size values must be 'auto' or positive ints"),
], ids=["solver", "momentum", "beta_2", "epsilon", "learning_rate", "nesterov", "power_t", "drawn",
        "learning_rate-drawn", "warmup_fraction", "label_smoothing", "label_smoothing-drawn",
        "batch_size", "batch_size-string", "batch_size-drawn"])
def test_bad_optimizer_values_are_named(params, message):
    X, y = _classification()
    with pytest.raises(ValueError, match=message):
        ParallelMLPClassifier(**BASE, **params, cv=None).fit(X, y)


@pytest.mark.parametrize("options", [dict(early_stopping=True), dict(pruning="halving")])
def test_lbfgs_mixed_with_monitored_minibatch_models_is_refused(options):
    X, y = _classification()
    with pytest.raises(ValueError, match="mix 'lbfgs' with minibatch solvers"):
        ParallelMLPClassifier(**BASE, solver=["lbfgs", "adam"], **options, cv=None).fit(X, y)


def test_lbfgs_and_minibatch_models_in_one_search():
    """Without monitoring, lbfgs models train apart in the same call and merge."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**BASE, solver=["lbfgs", "sgd"], dtype="float64",
                                        holdout_refit=False, cv=None), X, y)
    assert [p["solver"] for p in search.cv_results_["params"]] == ["lbfgs", "sgd"] * 2
    _assert_exported_models_train_alone(search, X, y)


# ------------------------------------------------ the float64 invariant
def _assert_exported_models_train_alone(search, X, y):
    """Every exported model, refitted alone on the training part of the
    search's holdout, gives the same weights and epochs (float64)."""
    classifier = isinstance(search, ParallelMLPClassifier)
    train, _ = holdout_split(
        np.unique(y, return_inverse=True)[1] if classifier else np.zeros(len(y), int),
        search.validation_fraction, search.random_state, stratify=classifier,
        early_stopping=search.early_stopping,
    )
    for i in range(search.n_models_):
        exported = search.export_model(i)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            alone = clone(exported).fit(X[train], y[train])
        assert alone.n_iter_ == search.n_iter_per_model_[i]
        for ours, theirs in zip(exported.coefs_ + exported.intercepts_, alone.coefs_ + alone.intercepts_):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)


SETTINGS = {
    "sgd-invscaling": dict(solver="sgd", learning_rate="invscaling", power_t=[0.3, 0.5],
                           learning_rate_init=0.1),
    "sgd-adaptive-momentum": dict(solver="sgd", learning_rate="adaptive", momentum=[0.5, 0.9],
                                  nesterovs_momentum=[False, True], n_iter_no_change=2, tol=1e-1),
    "adam-betas": dict(beta_1=[0.5, 0.9], beta_2=[0.9, 0.999], epsilon=[1e-8, 1e-4]),
    "solvers-schedules": dict(solver=["sgd", "adam"], learning_rate=["constant", "invscaling"]),
    "distributions": dict(solver=["sgd", "adam"], momentum=uniform(0.1, 0.8), beta_1=uniform(0.5, 0.4),
                          n_models=5),
    "schedules-over-the-run": dict(solver=["adam", "sgd"], learning_rate=["cosine", "coslog4"],
                                   warmup_fraction=[0.0, 0.3]),
    "warmup-distribution": dict(solver=["adamw", "sgd"], learning_rate="invscaling",
                                warmup_fraction=uniform(0, 0.5), n_models=4),
    "batch-sizes": dict(solver=["sgd", "adam"], batch_size=[16, "auto", 50]),
    "batch-size-distribution": dict(batch_size=randint(8, 64), n_models=4),
    "conditional": dict(param_grid=[{"solver": ["sgd"], "momentum": [0.3, 0.9],
                                     "learning_rate": ["invscaling"]},
                                    {"solver": ["adam"], "beta_2": [0.95]}]),
}


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_exported_model_with_searched_optimizer_trains_alone_to_the_same_weights(setting, estimator_class):
    if estimator_class is ParallelMLPClassifier:
        X, y = _classification()
    else:
        X, y = make_regression(120, 6, n_targets=2, noise=0.1, random_state=0)
        y = y / y.std()
    params = {**BASE, "hidden_layer_sizes": [(5,), (4, 3)], **SETTINGS[setting]}
    search = _fit(estimator_class(**{"cv": None, **params}, dtype="float64", holdout_refit=False),
                  X, y)
    _assert_exported_models_train_alone(search, X, y)


@pytest.mark.parametrize("setting", [dict(label_smoothing=[0.0, 0.2]),
                                     dict(label_smoothing=[0.0, 0.2], solver=["adam", "lbfgs"]),
                                     dict(label_smoothing=uniform(0, 0.3), solver="sgd", n_models=3),
                                     dict(label_smoothing=[0.1], learning_rate="coslog4", warmup_fraction=0.1)],
                         ids=["list", "lbfgs", "distribution", "with-schedules"])
def test_exported_smoothed_model_trains_alone_to_the_same_weights(setting):
    X, y = _classification()
    params = {**BASE, "hidden_layer_sizes": [(5,), (4, 3)], **setting}
    search = _fit(ParallelMLPClassifier(**params, cv=None, dtype="float64", holdout_refit=False), X, y)
    if isinstance(setting["label_smoothing"], list) and len(setting["label_smoothing"]) > 1:
        assert set(search.cv_results_["param_label_smoothing"]) == {0.0, 0.2}
    for i, params in enumerate(search.cv_results_["params"]):
        assert search.export_model(i).label_smoothing == params.get("label_smoothing", 0.1)
    _assert_exported_models_train_alone(search, X, y)


@pytest.mark.parametrize("setting", ["sgd-invscaling", "adam-betas", "solvers-schedules",
                                     "schedules-over-the-run"])
def test_best_estimator_refit_on_all_rows_carries_the_models_settings(setting):
    """With holdout_refit the best model is its configuration retrained on every
    row: refitting it alone gives the same weights."""
    X, y = _classification()
    search = _fit(ParallelMLPClassifier(**{**BASE, **SETTINGS[setting]}, dtype="float64", cv=None), X, y)
    best = search.best_estimator_
    for name, value in search.best_params_.items():
        assert getattr(best, name) == value
    alone = _fit(clone(best), X, y)
    for ours, theirs in zip(best.coefs_ + best.intercepts_, alone.coefs_ + alone.intercepts_):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)


# ------------------------------------------------------- per-model batch_size
@pytest.mark.parametrize("options", [
    dict(cv=3, early_stopping=True, n_iter_no_change=2),
    dict(pruning="halving", min_iter=2, halving_factor=2.0),
    dict(n_jobs=2),
], ids=["cv-early-stopping", "halving", "shards"])
def test_models_of_each_batch_size_train_as_a_search_of_that_batch_size(options):
    """Models of different batch sizes train as one fused run per batch size:
    each model's weights, epochs and scores are those of a search given that
    batch size alone (halving ranks within a batch size)."""
    X, y = _classification()
    params = dict(BASE, hidden_layer_sizes=[(5,), (4, 3)], activation=["tanh", "relu"], dtype="float64",
                  holdout_refit=False, **options)
    mixed = _fit(ParallelMLPClassifier(**{"cv": None, **params}, batch_size=[16, 40]), X, y)
    rows = mixed.cv_results_["params"]
    for size in (16, 40):
        alone = _fit(ParallelMLPClassifier(**{"cv": None, **params}, batch_size=size), X, y)
        mine = [i for i, p in enumerate(rows) if p["batch_size"] == size]
        assert len(mine) == alone.n_models_
        for j, i in enumerate(mine):
            folds = range(mixed.n_splits_)
            np.testing.assert_array_equal(mixed.n_iter_per_model_[i], alone.n_iter_per_model_[j])
            for k in folds:
                ours = mixed.export_model(i, fold=k if mixed.cv is not None else None)
                theirs = alone.export_model(j, fold=k if alone.cv is not None else None)
                for a, b in zip(ours.coefs_ + ours.intercepts_, theirs.coefs_ + theirs.intercepts_):
                    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mixed.cv_results_["mean_test_score"][mine],
                                   alone.cv_results_["mean_test_score"], rtol=0, atol=1e-12)


def test_batch_size_larger_than_the_training_rows_warns_once():
    X, y = _classification()
    with pytest.warns(UserWarning, match="larger than sample size"):
        _fit(ParallelMLPClassifier(**BASE, batch_size=[16, 500], cv=None), X, y)
