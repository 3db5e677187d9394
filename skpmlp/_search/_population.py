"""The models of a search as rows of a table (pure Python / numpy).

A population is the configurations drawn from the search space (see
``_space``: the cross product of the list-valued hyperparameters, or
``n_models`` draws), times ``n_repeats``. Each row's ``params`` holds one
valid value per searched parameter, so it can be passed back to the
estimator; the repeat index is kept apart. :meth:`Population.spec` turns
the rows into the engine's :class:`~._engine.PopulationSpec`.
"""

from dataclasses import dataclass, fields

import numpy as np

from .._core._params import MODEL_PARAMS, SEARCHED_DEFAULTS, SEARCHED_PARAMS
from .._engine import ACTIVATION_CODES, OptimizerSettings, PopulationSpec, canonical_activation
from .._kernels import SOLVERS


@dataclass(frozen=True)
class Population:
    """Rows of models: ``params[i]`` and ``repeats[i]`` describe model i.

    ``params[i]`` holds a value of every searched parameter
    (:data:`SEARCHED_PARAMS`; optimizer and input parameters it lacks take
    :data:`SEARCHED_DEFAULTS`); ``shown`` names those ``cv_results_``
    shows (:meth:`shown_params`): the model parameters, and the optimizer
    parameters that were searched. ``unset[i]`` names those model i's
    ``param_grid`` subspace left to the estimator's value (masked in
    ``param_*``, as GridSearchCV's; empty when none).
    """

    params: list
    repeats: np.ndarray
    shown: tuple = MODEL_PARAMS
    unset: tuple = ()

    @property
    def n_models(self):
        return len(self.params)

    @classmethod
    def from_configurations(cls, configurations, n_repeats, shown=MODEL_PARAMS, unset=None):
        """The population of ``n_repeats`` models of each configuration (a
        dict of valid values per searched parameter), repeats innermost;
        ``unset`` (one set of names per configuration) gives :attr:`unset`."""
        params, repeats = [], []
        for configuration in configurations:
            for repeat in range(n_repeats):
                names = [name for name in SEARCHED_PARAMS if name in configuration]
                params.append({name: configuration[name] for name in names})
                repeats.append(repeat)
        shown = tuple(name for name in SEARCHED_PARAMS if name in shown)
        unset = () if unset is None else tuple(names for names in unset for _ in range(n_repeats))
        return cls(params=params, repeats=np.array(repeats, dtype=int), shown=shown, unset=unset)

    def column(self, name):
        default = SEARCHED_DEFAULTS.get(name)
        return [p.get(name, default) for p in self.params]

    def masked(self, name):
        """Whether each model's ``param_<name>`` entry is masked (see :attr:`unset`)."""
        return [name in names for names in self.unset] if self.unset else [False] * self.n_models

    def shown_params(self):
        """Every model's ``cv_results_["params"]`` entry: its ``shown`` values."""
        return [{name: p[name] for name in self.shown if name in p} for p in self.params]

    def spec(self, seed):
        """The engine's :class:`PopulationSpec`, seeded by int ``seed``.

        A model's initial weights depend on ``seed``, its architecture, its
        activation and its repeat index only, never on its row.
        """
        archs = self.column("hidden_layer_sizes")
        acts = [canonical_activation(a) for a in self.column("activation")]
        return PopulationSpec(
            hidden_layer_sizes=[tuple(a) for a in archs],
            activations=acts,
            learning_rates=np.array(self.column("learning_rate_init"), dtype=float),
            alphas=np.array(self.column("alpha"), dtype=float),
            init_seeds=[
                model_seed(seed, arch, act, repeat)
                for arch, act, repeat in zip(archs, acts, self.repeats)
            ],
            optimizers=[
                OptimizerSettings(**with_resolved_dropout(dict(zip(_SETTINGS, values))))
                for values in zip(*(self.column(name) for name in _SETTINGS))
            ],
            batch_sizes=np.array([resolve_batch_size(b) for b in self.column("batch_size")],
                                 dtype=np.int64),
        )


#: The optimizer parameters an :class:`OptimizerSettings` holds (all but batch_size).
_SETTINGS = tuple(f.name for f in fields(OptimizerSettings))


#: The dropout rate ``dropout="auto"`` gives a model of a minibatch solver:
#: RealMLP-TD's rate, the best of 0, 0.15 and both on the selection
#: benchmark (docs/user_guide/search_space.rst, "The default space, and why").
AUTO_DROPOUT = 0.15


def with_resolved_dropout(values):
    """A copy of one model's parameter dict ``values`` whose ``dropout`` is
    a number: ``"auto"`` is :data:`AUTO_DROPOUT` for a minibatch solver and
    0 for L-BFGS, whose line search needs a deterministic objective."""
    dropout, solver = values["dropout"], values["solver"]
    if dropout == "auto":
        dropout = 0.0 if SOLVERS[solver].family == "lbfgs" else AUTO_DROPOUT
    return {**values, "dropout": float(dropout)}


def resolve_batch_size(batch_size):
    """An int batch size: ``"auto"`` is 200, as scikit-learn's MLP (whose
    ``min(200, n_samples)`` the engine gets by clipping the batch to the
    training rows)."""
    return 200 if batch_size == "auto" else int(batch_size)


def model_seed(seed, hidden_layer_sizes, activation, repeat):
    """Entropy of one model's initial weights."""
    code = ACTIVATION_CODES[canonical_activation(activation)]
    return (int(seed), int(repeat), code, len(hidden_layer_sizes), *hidden_layer_sizes)
