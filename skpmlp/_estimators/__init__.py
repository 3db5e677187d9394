"""The estimators: scikit-learn's surface of skpmlp, and nothing below it.

Parameter constraints, data validation, label encoding, turning a fit's
parameters into a search (:mod:`skpmlp._search`), the fitted attributes,
prediction and the conversions of a fitted model (``to_sklearn``,
``to_torch``). Every public estimator class is here (the input transform
:class:`RobustSmoothClipScaler`, defined in ``_core`` where the search layer
fits it, too); the package root and :mod:`skpmlp.io` take them from this
namespace.
"""

from .._core._transforms import RobustSmoothClipScaler
from ._classifier import ParallelMLPClassifier
from ._ensemble import MLPEnsembleClassifier, MLPEnsembleRegressor
from ._regressor import ParallelMLPRegressor
from ._single import SingleMLPClassifier, SingleMLPRegressor

__all__ = [
    "MLPEnsembleClassifier",
    "MLPEnsembleRegressor",
    "ParallelMLPClassifier",
    "ParallelMLPRegressor",
    "RobustSmoothClipScaler",
    "SingleMLPClassifier",
    "SingleMLPRegressor",
]
