"""The search space: grids, distributions, conditional spaces and a model budget (issue 14, item 1)."""

import collections
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import loguniform, randint, uniform
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import ParameterGrid

from skpmlp import LayerSizesDistribution, ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._core._params import SEARCHED_DEFAULTS
from skpmlp._search._space import PARAMETERS, SearchSpace
from skpmlp.model_selection import fused_cross_validate

BASE = dict(hidden_layer_sizes=[(4,), (8, 4)], activation=("relu", "tanh", "elu"),
            learning_rate_init=(0.01, 0.1), alpha=0.0)
GRID_SIZE = 2 * 3 * 2


def _space(param_grid=None, **params):
    return SearchSpace.from_params({**BASE, **params}, param_grid)


class _Constant:
    """A distribution that always draws ``value``."""

    def __init__(self, value):
        self.value = value

    def rvs(self, random_state=None):
        return self.value


# --------------------------------------------------------------- grids
def test_a_value_listed_twice_is_two_identical_candidates():
    """As GridSearchCV: a duplicated value is kept, and its two models train
    and score alike (same seed, same hyperparameters)."""
    drawn = _space(activation=["relu", "relu"]).draw()
    counts = collections.Counter(map(repr, drawn))
    assert len(drawn) == 2 * GRID_SIZE // 3 and set(counts.values()) == {2}
    X, y = np.random.RandomState(0).normal(size=(40, 3)), np.arange(40) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = ParallelMLPClassifier((4,), "relu", learning_rate_init=0.01, alpha=[1e-3, 1e-3], max_iter=5, cv=2,
                                       dtype="float64", input_transform="robust-smooth-clip",
                                       random_state=0).fit(X, y)
    for fold in range(2):
        first, second = search.export_model(0, fold=fold), search.export_model(1, fold=fold)
        for a, b in zip(first.coefs_, second.coefs_):
            np.testing.assert_array_equal(a, b)
    assert search.cv_results_["mean_test_score"][0] == search.cv_results_["mean_test_score"][1]


def test_grid_is_the_cross_product_in_parameter_grid_order():
    drawn = _space().draw()
    grid = {"hidden_layer_sizes": [(4,), (8, 4)], "activation": ["relu", "tanh", "elu"],
            "learning_rate_init": [0.01, 0.1], "alpha": [0.0]}
    # the optimizer (and input) parameters not given take their defaults (scikit-learn's)
    assert drawn == [{name: {**SEARCHED_DEFAULTS, **c}[name] for name in PARAMETERS} for c in ParameterGrid(grid)]
    assert _space().n_configurations == GRID_SIZE and not _space().is_sampled


@pytest.mark.parametrize("n_models", [1, 5, GRID_SIZE])
def test_budget_on_a_grid_samples_it_without_replacement(n_models):
    grid = _space().draw()
    drawn = _space().draw(n_models, random_state=0)
    assert len(drawn) == n_models
    assert all(config in grid for config in drawn)
    assert len({tuple(c.values()) for c in drawn}) == n_models


def test_budget_larger_than_the_grid_trains_the_grid_once():
    with pytest.warns(UserWarning, match=f"n_models=50 is more than the {GRID_SIZE} configurations"):
        drawn = _space().draw(50, random_state=0)
    assert sorted(map(repr, drawn)) == sorted(map(repr, _space().draw()))


@pytest.mark.parametrize("sampled", [False, True], ids=["grid", "distributions"])
def test_draws_are_reproducible(sampled):
    params = dict(learning_rate_init=loguniform(1e-3, 1)) if sampled else {}
    first = _space(**params).draw(6, random_state=3)
    assert first == _space(**params).draw(6, random_state=np.random.RandomState(3))
    assert first != _space(**params).draw(6, random_state=4)


# -------------------------------------------------------- distributions
def test_distributions_draw_plain_valid_values():
    space = _space(hidden_layer_sizes=randint(3, 9), learning_rate_init=loguniform(1e-4, 1e-1),
                   alpha=uniform(0, 1e-2))
    drawn = space.draw(40, random_state=0)
    assert space.is_sampled and space.n_configurations is None
    archs = [c["hidden_layer_sizes"] for c in drawn]
    # an int-valued distribution: one hidden layer of the drawn width
    assert all(type(a) is tuple and len(a) == 1 and type(a[0]) is int and 3 <= a[0] < 9 for a in archs)
    assert all(type(c["learning_rate_init"]) is float and 1e-4 <= c["learning_rate_init"] <= 1e-1
               for c in drawn)
    assert all(type(c["alpha"]) is float for c in drawn)
    assert {c["activation"] for c in drawn} == {"relu", "tanh", "elu"}
    assert len({c["learning_rate_init"] for c in drawn}) == 40


def test_distributions_need_a_budget():
    with pytest.raises(ValueError, match=r"n_models must be set .* \(alpha\)"):
        _space(alpha=loguniform(1e-5, 1)).draw()


@pytest.mark.parametrize("name, value, message", [
    ("learning_rate_init", uniform(-1, 0.5), "learning_rate_init values must be finite positive numbers"),
    ("learning_rate_init", _Constant(np.nan), "learning_rate_init values must be finite positive"),
    ("alpha", _Constant(-1.0), "alpha values must be finite non-negative numbers; got -1.0"),
    ("hidden_layer_sizes", randint(0, 1), r"hidden_layer_sizes: every hidden layer width must be a positive int; got \(0,\)"),
    ("hidden_layer_sizes", _Constant(2.5), r"hidden_layer_sizes: 2.5 is not an architecture"),
    ("activation", _Constant("swish"), "Unknown activation 'swish'"),
    ("activation", _Constant(3), "activation values must be strings; got 3"),
])
def test_bad_draws_name_the_parameter(name, value, message):
    with pytest.raises(ValueError, match=message):
        _space(**{name: value}).draw(5, random_state=0)


# ---------------------------------------------------- conditional spaces
def test_param_grid_subspaces_override_the_estimator_parameters():
    param_grid = [{"activation": ["relu"], "alpha": [0.1, 0.2]}, {"hidden_layer_sizes": [(16,)]}]
    space = _space(param_grid)
    drawn = space.draw()
    first = [c for c in drawn if c["alpha"] in (0.1, 0.2)]
    second = [c for c in drawn if c["hidden_layer_sizes"] == (16,)]
    assert len(first) == 2 * 1 * 2 * 2 and len(second) == 1 * 3 * 2 * 1
    assert len(drawn) == space.n_configurations == len(first) + len(second)
    assert {c["activation"] for c in first} == {"relu"}
    # parameters a subspace leaves out keep the estimator's values
    assert {c["activation"] for c in second} == {"relu", "tanh", "elu"} and {c["alpha"] for c in second} == {0.0}
    # GridSearchCV masks what a subspace leaves out and another sets: here the
    # second's alpha (the estimator's one value); its activations are a list
    # the estimator searches, and the first's architectures too: shown
    configurations, unset = space.draw_unset()
    assert configurations == drawn
    assert unset == [frozenset() if c in first else frozenset({"alpha"}) for c in drawn]
    assert space.draw_unset(7, random_state=0)[0] == space.draw(7, random_state=0)


def test_sampled_conditional_space_draws_from_each_subspace():
    param_grid = [{"activation": ["relu"], "alpha": loguniform(1e-5, 1e-3)},
                  {"activation": ["tanh"], "alpha": [0.5]}]
    drawn = _space(param_grid).draw(60, random_state=0)
    relu = [c for c in drawn if c["activation"] == "relu"]
    tanh = [c for c in drawn if c["activation"] == "tanh"]
    assert len(relu) + len(tanh) == 60 and relu and tanh
    assert all(1e-5 <= c["alpha"] <= 1e-3 for c in relu) and {c["alpha"] for c in tanh} == {0.5}


@pytest.mark.parametrize("param_grid, message", [
    ([], "param_grid must be a dict or a non-empty list of dicts"),
    ([{"activation": ["relu"]}, 5], r"param_grid\[1\] must be a dict; got 5"),
    ([{"max_iter": [5]}], r"param_grid\[0\] has keys \['max_iter'\] that cannot be searched"),
    ({"max_iter": [16]}, r"param_grid has keys \['max_iter'\] that cannot be searched"),
    ([{"alpha": [0.1]}, {"alpha": [1.0, -1.0]}],
     r"param_grid\[1\]\['alpha'\] values must be finite non-negative numbers; got -1.0"),
])
def test_bad_param_grid_is_named(param_grid, message):
    with pytest.raises(ValueError, match=message):
        _space(param_grid)


@pytest.mark.parametrize("value", [0.1, "relu", np.ones((2, 2))], ids=["scalar", "string", "2d"])
def test_param_grid_values_are_checked_as_grid_search_cv_does(value):
    """A single value must be wrapped in a list, as GridSearchCV's param_grid wants."""
    with pytest.raises((TypeError, ValueError), match="Parameter (grid|array) for (parameter )?'alpha'"):
        _space({"alpha": value})


def test_space_describes_itself():
    text = repr(_space([{"alpha": loguniform(1e-5, 1)}, {"activation": ["tanh"]}]))
    assert text.startswith("SearchSpace([{'hidden_layer_sizes': [(4,), (8, 4)]")
    assert "'alpha': <scipy.stats" in text and "'activation': ['tanh']" in text


# -------------------------------------------------- LayerSizesDistribution
@pytest.mark.parametrize("widths, low, high", [
    ([8, 16, 32], 8, 32), (randint(5, 9), 5, 8), (loguniform(4, 64), 4, 64),
])
def test_layer_sizes_draws_depths_and_widths(widths, low, high):
    sizes = LayerSizesDistribution(depths=[1, 3], widths=widths)
    drawn = sizes.rvs(size=200, random_state=0)
    assert {len(a) for a in drawn} == {1, 3}
    assert all(type(w) is int and low <= w <= high for a in drawn for w in a)
    assert drawn == sizes.rvs(size=200, random_state=0)
    assert isinstance(sizes.rvs(random_state=1), tuple)


def test_layer_sizes_depth_from_a_distribution():
    drawn = LayerSizesDistribution(depths=randint(1, 3), widths=[4]).rvs(size=50, random_state=0)
    assert {a for a in drawn} == {(4,), (4, 4)}


@pytest.mark.parametrize("params, message", [
    (dict(depths=[0, 1]), r"depths must hold ints >= 1 or be a distribution; got \[0, 1\]"),
    (dict(depths=[]), "depths must hold at least one value"),
    (dict(widths=[16, 2.5]), r"widths must hold ints >= 1 or be a distribution"),
    (dict(widths="wide"), "widths must hold ints >= 1"),
])
def test_layer_sizes_refuses_bad_candidates(params, message):
    with pytest.raises(ValueError, match=message):
        LayerSizesDistribution(**params)


@pytest.mark.parametrize("params, message", [
    (dict(widths=uniform(-5, 1)), "widths drew .* it must draw numbers >= 1"),
    (dict(depths=_Constant("deep")), "depths drew 'deep' .* it must draw numbers"),
])
def test_layer_sizes_refuses_bad_draws(params, message):
    with pytest.raises(ValueError, match=message):
        LayerSizesDistribution(**params).rvs(random_state=0)


# ---------------------------------------------------- sampled searches
SAMPLED = dict(
    input_transform="robust-smooth-clip",  # one value (the default searches two, drawn per model)
    hidden_layer_sizes=LayerSizesDistribution(depths=[1, 2], widths=randint(3, 12)),
    activation=["relu", "tanh"], learning_rate_init=loguniform(3e-3, 3e-2),
    alpha=loguniform(1e-5, 1e-2), n_models=12, max_iter=8, random_state=0,
)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


@pytest.fixture(scope="module")
def sampled(iris):
    X, y = iris
    return _fit(ParallelMLPClassifier(**SAMPLED, n_repeats=2, cv=None), X, y)


def test_cv_results_hold_the_drawn_configurations(sampled):
    space = SearchSpace.from_params(SAMPLED)
    drawn = [{name: c[name] for name in space.searched} for c in space.draw(12, random_state=0)]
    params = sampled.cv_results_["params"]
    assert sampled.n_models_ == 24 and params == [c for c in drawn for _ in range(2)]
    assert list(sampled.cv_results_["param_repeat"]) == [0, 1] * 12
    assert list(sampled.cv_results_["param_learning_rate_init"]) == [p["learning_rate_init"] for p in params]
    assert sampled.best_params_ == params[sampled.best_index_]


def test_sampled_model_equals_the_model_trained_alone(iris):
    """The independence invariant in float64: any drawn model, trained
    alone as a one-configuration search, gives the same predictions."""
    X, y = iris
    search = _fit(ParallelMLPClassifier(**SAMPLED, dtype="float64", cv=None), X, y)
    for index in (0, 7):
        params = search.cv_results_["params"][index]
        # two repeats: a lone configuration would train on every row, as MLPClassifier
        alone = _fit(ParallelMLPClassifier(
            **{name: [value] if name == "hidden_layer_sizes" else value for name, value in params.items()},
            n_repeats=2, max_iter=8, dtype="float64", random_state=0, cv=None,
            input_transform=SAMPLED["input_transform"],
        ), X, y)
        assert alone.cv_results_["params"][0] == params and alone.cv_results_["param_repeat"][0] == 0
        assert_allclose(search.export_model(index).predict_proba(X), alone.export_model(0).predict_proba(X),
                        atol=1e-6)


@pytest.mark.parametrize("options", [
    dict(cv=3),
    dict(early_stopping=True, n_iter_no_change=2),
    dict(pruning="halving", min_iter=2, max_memory=2**30),
    dict(ensemble_size=3),
    dict(n_jobs=2),
    dict(max_memory=4e5),  # room for one model with dropout masks
], ids=["cv", "early_stopping", "halving", "ensemble", "n_jobs", "memory_chunks"])
def test_sampled_population_works_with(options, iris, sampled):
    X, y = iris
    search = _fit(ParallelMLPClassifier(**SAMPLED, n_repeats=2, **{"cv": None, **options}), X, y)
    # the draws depend on random_state only, never on how the population trains
    assert search.cv_results_["params"] == sampled.cv_results_["params"]
    assert search.predict(X).shape == y.shape
    if "n_jobs" in options or "max_memory" in options and "pruning" not in options:
        assert_allclose(search.cv_results_["mean_test_score"], sampled.cv_results_["mean_test_score"])
    if "ensemble_size" in options:
        assert len(search.best_estimator_.estimators_) == 3


def test_sampled_regressor_and_fused_cross_validate():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    y = X @ [1.0, -2.0, 0.5]
    regressor = ParallelMLPRegressor(**{**SAMPLED, "n_models": 5}, cv=None)
    results = fused_cross_validate(regressor, X, y, cv=3)
    assert len(results["params"]) == 5 and "split2_test_score" in results
    space = SearchSpace.from_params(SAMPLED)
    assert results["params"] == [{name: c[name] for name in space.searched}
                                 for c in space.draw(5, random_state=0)]


def test_conditional_search(iris):
    X, y = iris
    param_grid = [{"activation": ["relu"], "learning_rate_init": [0.01, 0.03]},
                  {"activation": ["tanh"], "hidden_layer_sizes": [(3,)]}]
    search = _fit(ParallelMLPClassifier((6,), "relu", learning_rate_init=0.003, param_grid=param_grid,
                                       max_iter=5, random_state=0, cv=None,
                                       input_transform="robust-smooth-clip"),
                  X, y)
    assert [(p["activation"], p["hidden_layer_sizes"], p["learning_rate_init"])
            for p in search.cv_results_["params"]] == [
        ("relu", (6,), 0.01), ("relu", (6,), 0.03), ("tanh", (3,), 0.003),
    ]
    # as GridSearchCV: param_* masks what a row's subspace left to the
    # estimator (its one value, still the data under the mask and in params)
    results = search.cv_results_
    np.testing.assert_array_equal(results["param_learning_rate_init"].mask, [False, False, True])
    np.testing.assert_array_equal(results["param_hidden_layer_sizes"].mask, [True, True, False])
    assert not results["param_activation"].mask.any() and not results["param_alpha"].mask.any()
    assert results["param_learning_rate_init"].data[2] == 0.003
    assert search.export_model(2).learning_rate_init == 0.003


@pytest.mark.parametrize("display", ["SearchResultsDisplay", "EpochCurvesDisplay", "SearchHeatmapDisplay"])
def test_sampled_search_plots(display, sampled):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import skpmlp.plotting

    shown = getattr(skpmlp.plotting, display).from_estimator(sampled)
    assert shown.figure_ is not None
    plt.close("all")
