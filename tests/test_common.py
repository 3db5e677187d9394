"""scikit-learn's estimator checks, with no expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)


@parametrize_with_checks(
    [
        ParallelMLPClassifier(),
        ParallelMLPRegressor(),
        SingleMLPClassifier(),
        SingleMLPRegressor(),
    ]
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
