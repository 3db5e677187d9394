"""A scorer that raises: one FitFailedWarning naming the error, error_score in its rows.

scikit-learn's ``neg_mean_squared_log_error`` raises a ``ValueError`` for a
model that predicts a value <= -1: the barely trained models of this search
(learning rate 1e-6, inputs scaled up) do, the trained ones do not.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.exceptions import FitFailedWarning

from skpmlp import ParallelMLPRegressor
from skpmlp._search._scoring import ScoredRows, ScoringFailures, score_population

MSLE = "Mean Squared Logarithmic Error cannot be used when targets contain values less than"


@pytest.fixture(scope="module")
def data():
    X, y = make_regression(n_samples=120, n_features=5, noise=1.0, random_state=0)
    return 3 * X, 1 + 2 * (y - y.min()) / (y.max() - y.min())


def _search(**params):
    params.setdefault("scoring", "neg_mean_squared_log_error")
    # the inputs and targets as given (3 X; y in [1, 3], not rescaled into
    # the output layer): the untrained model's predictions fall below -1 on every fold
    params.setdefault("input_transform", "none")
    params.setdefault("target_transform", "none")
    return ParallelMLPRegressor(
        (16,), "relu", learning_rate_init=(1e-6, 0.03), cv=3, max_iter=30, random_state=0,
        **params,
    )


def _fit(search, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    return search, [w for w in caught if issubclass(w.category, FitFailedWarning)]


@pytest.mark.parametrize("error_score", [np.nan, -99.0])
def test_a_raising_scorer_warns_once_with_the_error_and_scores_error_score(data, error_score):
    search, caught = _fit(_search(error_score=error_score), *data)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "Scoring failed for 3 of 6 scorings" in message
    assert f"3 scorings failed with ValueError: {MSLE}" in message
    assert ("(rows of cv_results_: [0]; columns ['split0_test_score', 'split1_test_score', "
            "'split2_test_score'])") in message
    assert "Traceback (most recent call last)" in message
    assert f"will be set to {error_score}" in message
    results = search.cv_results_
    for k in range(3):
        np.testing.assert_array_equal(results[f"split{k}_test_score"][0], error_score)
        assert np.isfinite(results[f"split{k}_test_score"][1])
    assert search.best_index_ == 1


def test_error_score_raise_raises_the_scorers_error(data):
    with pytest.raises(ValueError, match=MSLE):
        _search(error_score="raise").fit(*data)


def test_multimetric_names_the_failing_scorers_columns(data):
    search, caught = _fit(
        _search(scoring={"msle": "neg_mean_squared_log_error", "r2": "r2"}, refit="r2"), *data,
    )
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "split0_test_msle" in message and "_test_r2" not in message
    assert np.isnan(search.cv_results_["mean_test_msle"][0])
    assert np.isfinite(search.cv_results_["mean_test_r2"]).all()


def test_a_callable_scorers_own_error_is_named(data):
    """A user's scorer raising an exception of its own kind: its type and text."""

    def picky(estimator, X, y):
        prediction = estimator.predict(X)
        if prediction.min() <= -1:
            raise ZeroDivisionError(f"picky cannot score a minimum of {prediction.min():.0f}")
        return -np.mean((prediction - y) ** 2)

    search, caught = _fit(_search(scoring=picky), *data)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "ZeroDivisionError: picky cannot score a minimum of" in message
    assert np.isnan(search.cv_results_["mean_test_score"][0])


def test_score_population_alone_warns_itself():
    outputs = np.array([[[0.0], [1.0]], [[-5.0], [1.0]]])
    y = np.array([0.5, 1.0])
    from sklearn.metrics import get_scorer

    with pytest.warns(FitFailedWarning, match=f"1 scorings failed with ValueError: {MSLE}"):
        rows = ScoredRows(np.zeros((2, 1)), y, y, "regression")
        scores, _ = score_population(outputs, rows, get_scorer("neg_mean_squared_log_error"))
    assert np.isfinite(scores[0]) and np.isnan(scores[1])


def test_failures_are_grouped_by_error():
    failures = ScoringFailures()
    failures.n_scorings = 30
    for row in range(12):
        failures.record(row, f"split{row % 3}_test_score", ValueError("bad"))
    failures.record(3, None, TypeError("worse"))
    with pytest.warns(FitFailedWarning) as record:
        failures.warn(np.nan)
    message = str(record[0].message)
    assert "Scoring failed for 13 of 30 scorings" in message
    assert "12 scorings failed with ValueError: bad" in message
    assert "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9] and 2 more" in message
    assert "1 scorings failed with TypeError: worse\n(rows of cv_results_: [3])" in message
