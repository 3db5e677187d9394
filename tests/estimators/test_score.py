"""``score`` uses the search's scorer, as GridSearchCV.score."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, get_scorer, r2_score

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._search._splits import holdout_split

FAST = dict(max_iter=10, learning_rate_init=0.01, random_state=0)


@pytest.mark.parametrize(
    "scoring, refit, name",
    [("neg_log_loss", True, "neg_log_loss"), ("balanced_accuracy", True, "balanced_accuracy"),
     ({"acc": "accuracy", "ll": "neg_log_loss"}, "ll", "neg_log_loss"),
     (["f1_macro", "accuracy"], "f1_macro", "f1_macro")],
)
def test_score_uses_the_refit_scorer(scoring, refit, name, iris):
    X, y = iris
    search = ParallelMLPClassifier([(4,), (8,)], "tanh", scoring=scoring, refit=refit, **FAST, cv=None).fit(X, y)
    expected = get_scorer(name)(search.best_estimator_, X, y)
    assert search.score(X, y) == expected
    weights = np.linspace(0.5, 2.0, len(y))
    assert search.score(X, y, sample_weight=weights) == get_scorer(name)(
        search.best_estimator_, X, y, sample_weight=weights
    )


def test_score_on_the_validation_rows_is_best_score(iris):
    """With a holdout, the best model scored on the held-out rows is what
    ranked it: the same scorer gives best_score_ back."""
    X, y = iris
    search = ParallelMLPClassifier(  # the held-out-trained model itself predicts
        [(4,), (8,)], "tanh", scoring="neg_log_loss", dtype="float64", holdout_refit=False, **FAST, cv=None
    ).fit(X, y)
    _, val = holdout_split(y, 0.1, 0, stratify=True)
    assert search.score(X[val], y[val]) == pytest.approx(search.best_score_, rel=1e-9)
    assert search.score(X, y) < 0


@pytest.mark.parametrize(
    "estimator_class, metric",
    [(ParallelMLPClassifier, accuracy_score), (ParallelMLPRegressor, r2_score)],
)
def test_default_score_is_accuracy_or_r2(estimator_class, metric, iris):
    X, y = iris
    y = y if estimator_class is ParallelMLPClassifier else X[:, 0] - X[:, 1]
    search = estimator_class((8,), "tanh", **FAST).fit(X, y)
    assert search.score(X, y) == pytest.approx(metric(y, search.predict(X)), rel=1e-12)


def test_regressor_score_uses_scoring(iris):
    X, _ = iris
    y = X[:, 0] - X[:, 1]
    search = ParallelMLPRegressor((8,), "tanh", scoring="neg_mean_absolute_error", **FAST, cv=None).fit(X, y)
    assert search.score(X, y) == -np.mean(np.abs(search.predict(X) - y))


def test_no_score_without_refit(iris):
    X, y = iris
    search = ParallelMLPClassifier((4,), "tanh", refit=False, **FAST, cv=None).fit(X, y)
    assert not hasattr(search, "score")
    with pytest.raises(AttributeError, match="has no attribute 'score'"):
        search.score(X, y)
