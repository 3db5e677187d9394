"""The fused population engine (torch and numpy only, never scikit-learn).

Public to the rest of the package: the dataclasses describing a population
(:class:`PopulationSpec`, :class:`TrainConfig`, :class:`TrainResult`),
:func:`train_population`, :func:`population_outputs` and
:func:`mlp_forward`, and the activation tables.
"""

from ._activations import ACTIVATION_CODES, ACTIVATION_NAMES, ACTIVATIONS, canonical_activation
from ._device import resolve_device
from ._losses import MONITOR_SCORES
from ._predict import mlp_forward
from ._spec import PopulationSpec, TrainConfig, TrainResult
from ._train import population_outputs, train_population

__all__ = [
    "ACTIVATIONS",
    "ACTIVATION_CODES",
    "ACTIVATION_NAMES",
    "MONITOR_SCORES",
    "PopulationSpec",
    "TrainConfig",
    "TrainResult",
    "canonical_activation",
    "mlp_forward",
    "population_outputs",
    "resolve_device",
    "train_population",
]
