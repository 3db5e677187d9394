"""skpmlp: train whole hyperparameter searches of MLPs at once.

:class:`ParallelMLPClassifier` and :class:`ParallelMLPRegressor` train every
model of a search space as one fused PyTorch network and hand back the best
model, a GridSearchCV-style ``cv_results_`` table and every trained model.
"""

from ._core._torch_version import check_torch_version
from ._core._version import __version__

check_torch_version()  # before anything that trains: a clear error for an old torch

from ._core._params import sklearn_mlp_params  # noqa: E402
from ._engine import DataParallelError, data_parallel  # noqa: E402
from ._estimators import (  # noqa: E402
    MLPEnsembleClassifier,
    MLPEnsembleRegressor,
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    RobustSmoothClipScaler,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from ._search._space import LayerSizesDistribution  # noqa: E402

__all__ = [
    "DataParallelError",
    "LayerSizesDistribution",
    "MLPEnsembleClassifier",
    "MLPEnsembleRegressor",
    "ParallelMLPClassifier",
    "ParallelMLPRegressor",
    "RobustSmoothClipScaler",
    "SingleMLPClassifier",
    "SingleMLPRegressor",
    "__version__",
    "data_parallel",
    "sklearn_mlp_params",
]
