"""scikit-learn's estimator checks.

Every check runs on float64 instances, and passes on the single models and
on searches of scikit-learn's MLPs (``**sklearn_mlp_params()``). The
searches' own default space trains with dropout, whose mask is drawn per
row of a batch: a row of weight 2 is not the row twice, so scikit-learn's
sample-weight equivalence checks are expected to fail there, as scikit-learn
expects them to fail for its own stochastic estimators. The float32
defaults run every check but those: they compare a weighted fit with a fit
on repeated rows to 1e-7, below float32's resolution after hundreds of
optimizer steps (they pass in float64, above).
"""

import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)

ESTIMATORS = [ParallelMLPClassifier, ParallelMLPRegressor, SingleMLPClassifier, SingleMLPRegressor]


SAMPLE_WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data",
                        "check_sample_weight_equivalence_on_sparse_data")


def _expected_failures(estimator):
    """The sample-weight equivalence of a search that trains with dropout."""
    if getattr(estimator, "dropout", 0.0) == 0.0:
        return {}
    reason = "dropout masks are drawn per batch row: a weight of 2 is not a repeated row"
    return {name: reason for name in SAMPLE_WEIGHT_CHECKS}


@parametrize_with_checks([cls(dtype="float64") for cls in ESTIMATORS],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible_float64(estimator, check):
    check(estimator)


def _sample_weight_checks_of_sklearn_spaces():
    for cls in (ParallelMLPClassifier, ParallelMLPRegressor):
        for estimator, check in estimator_checks_generator(
                cls(dtype="float64", **sklearn_mlp_params())):
            name = getattr(check, "func", check).__name__
            if name in SAMPLE_WEIGHT_CHECKS:
                yield pytest.param(estimator, check, id=f"{cls.__name__}-{name}")


@pytest.mark.parametrize("estimator, check", list(_sample_weight_checks_of_sklearn_spaces()))
def test_searches_of_sklearns_mlps_pass_the_sample_weight_checks(estimator, check):
    """Without dropout a weight of 2 is the row twice, as in scikit-learn's MLP."""
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
