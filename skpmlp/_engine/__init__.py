"""The fused population engine (torch and numpy only, never scikit-learn).

Public to the rest of the package: the dataclasses describing a population
(:class:`PopulationSpec`, :class:`TrainConfig`, :class:`TrainResult`),
:func:`train_population`, :func:`population_outputs` and
:func:`mlp_forward`, :func:`split_models` / :func:`merge_results` (parts
of a population trained apart), the device helpers (:func:`check_device`
where a device is given, :func:`resolve_device` where a run trains,
:func:`local_device` for the client's own work), the activation tables, and
what a search of several training calls needs: halving decided over them
(:class:`PausedTraining`, :class:`Rung`, :func:`decide`) and results as
host arrays (:func:`result_state`, :func:`restore_result`).
"""

from ._activations import (
    ACTIVATION_CODES,
    ACTIVATION_NAMES,
    ACTIVATIONS,
    TORCH_MODULES,
    canonical_activation,
)
from ._backends import prepare_kernel, run_device
from ._chunks import merge_results, split_models
from ._device import check_device, local_device, resolve_device
from ._distributed import (
    DataParallelError,
    current_data_parallel,
    data_parallel,
    train_data_parallel,
)
from ._halving import Rung, decide
from ._losses import MONITOR_SCORES, negated_loss, training_loss
from ._predict import mlp_forward, population_outputs
from ._run_state import restore_result, result_state
from ._runs import RunOptions
from ._spec import SCHEDULES, OptimizerSettings, PopulationSpec, TrainConfig, TrainResult
from ._threads import torch_threads
from ._train import PausedTraining, ResumeError, train_population

__all__ = [
    "ACTIVATIONS",
    "ACTIVATION_CODES",
    "ACTIVATION_NAMES",
    "MONITOR_SCORES",
    "SCHEDULES",
    "OptimizerSettings",
    "PopulationSpec",
    "RunOptions",
    "TrainConfig",
    "TORCH_MODULES",
    "TrainResult",
    "DataParallelError",
    "current_data_parallel",
    "data_parallel",
    "train_data_parallel",
    "canonical_activation",
    "check_device",
    "local_device",
    "merge_results",
    "negated_loss",
    "training_loss",
    "mlp_forward",
    "population_outputs",
    "prepare_kernel",
    "resolve_device",
    "run_device",
    "split_models",
    "torch_threads",
    "train_population",
    "PausedTraining",
    "ResumeError",
    "Rung",
    "decide",
    "restore_result",
    "result_state",
]
