"""How the searched parameters are written: scikit-learn's meaning of
``hidden_layer_sizes``, array-likes wherever a list of values goes."""

import numpy as np
import pandas as pd
import pytest

from skpmlp import ParallelMLPClassifier, SingleMLPClassifier
from skpmlp._core._checks import architectures
from skpmlp._search._space import build_population


@pytest.mark.parametrize(
    "hidden_layer_sizes, expected",
    [
        (16, [(16,)]),
        ((100, 50), [(100, 50)]),
        ([100, 50], [(100, 50)]),               # scikit-learn's meaning: ONE network
        (np.array([100, 50]), [(100, 50)]),
        ([(8,), (16, 8)], [(8,), (16, 8)]),     # several networks
        (((8,), (16, 8)), [(8,), (16, 8)]),
        ([[8], [16, 8]], [(8,), (16, 8)]),
        ([(np.int64(8),)], [(8,)]),
        (None, [(32,), (64,), (128,), (64, 64)]),
    ],
)
def test_architectures(hidden_layer_sizes, expected):
    assert architectures(hidden_layer_sizes) == expected


@pytest.mark.parametrize(
    "values",
    [np.logspace(-3, -2, 3), pd.Series([1e-3, 1e-2]), range(1, 3)],
    ids=["logspace", "series", "range"],
)
def test_array_likes_of_values_are_searched(values):
    population = build_population((8,), np.array(["relu", "tanh"]), values, np.array([0.0, 1e-4]), 1)
    expected = [float(v) for v in np.asarray(values)]
    assert sorted(set(population.column("learning_rate_init"))) == expected
    assert population.n_models == 2 * len(expected) * 2
    assert all(type(v) is float for v in population.column("alpha"))
    assert set(population.column("activation")) == {"relu", "tanh"}


def test_search_takes_array_likes_and_a_list_of_ints_as_one_network(iris):
    X, y = iris
    search = ParallelMLPClassifier(
        [8, 4], "relu", learning_rate_init=np.logspace(-3, -2, 2), alpha=np.array([1e-4]),
        max_iter=3, random_state=0, cv=None, input_transform="robust-smooth-clip",
    ).fit(X, y)
    assert search.n_models_ == 2
    assert [p["hidden_layer_sizes"] for p in search.cv_results_["params"]] == [(8, 4)] * 2
    assert [c.shape for c in search.export_model(0).coefs_] == [(4, 8), (8, 4), (4, 3)]
    # best_params_ pass back unchanged
    again = ParallelMLPClassifier(max_iter=3, random_state=0, cv=None, input_transform="robust-smooth-clip")
    again = again.set_params(**search.best_params_).fit(X, y)
    assert again.n_models_ == 1


@pytest.mark.parametrize("hidden_layer_sizes", [[8, 4], np.array([8, 4]), (8, 4)])
def test_single_model_takes_a_sequence_of_widths(hidden_layer_sizes, iris):
    X, y = iris
    model = SingleMLPClassifier(hidden_layer_sizes, max_iter=2, random_state=0).fit(X, y)
    assert [c.shape[1] for c in model.coefs_[:-1]] == [8, 4]
