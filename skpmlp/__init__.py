"""skpmlp: train whole hyperparameter searches of MLPs at once.

:class:`ParallelMLPClassifier` and :class:`ParallelMLPRegressor` train every
model of a search space as one fused PyTorch network and hand back the best
model, a GridSearchCV-style ``cv_results_`` table and every trained model.
"""

from ._torch_version import check_torch_version

check_torch_version()  # before anything that trains: a clear error for an old torch

from ._classifier import ParallelMLPClassifier  # noqa: E402
from ._engine import DataParallelError, data_parallel  # noqa: E402
from ._ensemble import MLPEnsembleClassifier, MLPEnsembleRegressor  # noqa: E402
from ._regressor import ParallelMLPRegressor  # noqa: E402
from ._single import SingleMLPClassifier, SingleMLPRegressor  # noqa: E402
from ._space import LayerSizesDistribution  # noqa: E402

__version__ = "0.2.0"

__all__ = [
    "DataParallelError",
    "LayerSizesDistribution",
    "MLPEnsembleClassifier",
    "MLPEnsembleRegressor",
    "ParallelMLPClassifier",
    "ParallelMLPRegressor",
    "SingleMLPClassifier",
    "SingleMLPRegressor",
    "__version__",
    "data_parallel",
]
