"""scikit-learn's estimator checks, with no expected failures.

Every check runs on float64 instances. The float32 defaults run every check
too, except the sample-weight equivalence checks: those compare a weighted
fit with a fit on repeated rows to 1e-7, below float32's resolution after
hundreds of optimizer steps (they pass in float64, above).
"""

import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)

ESTIMATORS = [ParallelMLPClassifier, ParallelMLPRegressor, SingleMLPClassifier, SingleMLPRegressor]


@parametrize_with_checks([cls(dtype="float64") for cls in ESTIMATORS])
def test_sklearn_compatible_float64(estimator, check):
    check(estimator)


def _float32_checks():
    for cls in ESTIMATORS:
        for estimator, check in estimator_checks_generator(cls()):
            name = getattr(check, "func", check).__name__
            if "sample_weight_equivalence" not in name:
                yield pytest.param(estimator, check, id=f"{cls.__name__}-{name}")


@pytest.mark.parametrize("estimator, check", list(_float32_checks()))
def test_sklearn_compatible_float32_defaults(estimator, check):
    check(estimator)
