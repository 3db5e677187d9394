"""skpmlp: train whole hyperparameter searches of MLPs at once.

:class:`ParallelMLPClassifier` and :class:`ParallelMLPRegressor` train every
model of a search space as one fused PyTorch network and hand back the best
model, a GridSearchCV-style ``cv_results_`` table and every trained model.
"""

from ._classifier import ParallelMLPClassifier
from ._ensemble import MLPEnsembleClassifier, MLPEnsembleRegressor
from ._regressor import ParallelMLPRegressor
from ._single import SingleMLPClassifier, SingleMLPRegressor

__version__ = "0.1.0"

__all__ = [
    "MLPEnsembleClassifier",
    "MLPEnsembleRegressor",
    "ParallelMLPClassifier",
    "ParallelMLPRegressor",
    "SingleMLPClassifier",
    "SingleMLPRegressor",
    "__version__",
]
