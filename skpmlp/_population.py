"""The models of a search as rows of a table (pure Python / numpy).

A population is the configurations drawn from the search space (see
``_space``: the cross product of the list-valued hyperparameters, or
``n_models`` draws), times ``n_repeats``. Each row's ``params`` holds one
valid value per searched parameter, so it can be passed back to the
estimator; the repeat index is kept apart. The checks of single values
live here, and the search space reads its candidates with them.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from dataclasses import fields

from ._engine import ACTIVATION_CODES, OptimizerSettings, PopulationSpec, canonical_activation

#: Architectures trained when ``hidden_layer_sizes=None``.
DEFAULT_HIDDEN_LAYER_SIZES = ((32,), (64,), (128,), (64, 64))

#: What a model is: always ``cv_results_`` columns, searched or not.
MODEL_PARAMS = ("hidden_layer_sizes", "activation", "learning_rate_init", "alpha")

#: How a model's optimizer steps (and on how many rows), with scikit-learn's
#: MLP defaults: each may vary per model; ``cv_results_`` shows them only
#: where searched.
OPTIMIZER_DEFAULTS = {
    **{f.name: f.default for f in fields(OptimizerSettings)},
    "batch_size": "auto",
}
OPTIMIZER_PARAMS = tuple(OPTIMIZER_DEFAULTS)

#: The hyperparameters a population varies, in cv_results_ column order.
SEARCHED_PARAMS = MODEL_PARAMS + OPTIMIZER_PARAMS


def _as_list(value, name):
    """The searched values of parameter ``name``: a list, tuple or array-like
    (e.g. ``np.logspace(-4, -2, 3)``) gives its entries, anything else is
    one value."""
    if isinstance(value, (list, tuple)):
        values = list(value)
    elif hasattr(value, "__array__") or isinstance(value, range):
        # numpy (and pandas) values become Python ones
        values = np.asarray(value).tolist()
        values = values if isinstance(values, list) else [values]
    else:
        values = [value]
    if not values:
        raise ValueError(f"{name} must hold at least one value; got an empty {type(value).__name__}.")
    return values


def _is_width(value):
    return isinstance(value, Integral) and not isinstance(value, bool)


#: How to write ``hidden_layer_sizes``, for its error messages.
_HIDDEN_LAYER_SIZES_HELP = (
    "Write one network as an int or a sequence of ints (e.g. 100, or (100, 50) or [100, 50] "
    "for two hidden layers, as scikit-learn's MLP), and several networks as a list of tuples "
    "(e.g. [(100,), (100, 50)])."
)


def _architecture(value):
    """One architecture (a tuple of positive ints) from a sequence of widths."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (tuple, list)) or not value or not all(_is_width(w) for w in value):
        raise ValueError(
            f"hidden_layer_sizes: {value!r} is not an architecture (a non-empty sequence of "
            f"positive ints). {_HIDDEN_LAYER_SIZES_HELP}"
        )
    if any(w < 1 for w in value):
        raise ValueError(
            f"hidden_layer_sizes: every hidden layer width must be a positive int; got {value!r}."
        )
    return tuple(int(w) for w in value)


def architectures(hidden_layer_sizes):
    """Normalise ``hidden_layer_sizes`` to a list of architectures.

    As in scikit-learn's MLP, an int is one network with one hidden layer
    and a flat sequence of ints (a tuple, a list or a 1-D array, e.g.
    ``(100, 50)`` or ``[100, 50]``) one network with those hidden layers. A
    sequence of sequences (e.g. ``[(32,), (64, 64)]``) is several networks.

    Raises
    ------
    ValueError
        Naming ``hidden_layer_sizes``, for a width that is not a positive
        int, an empty value, or a sequence mixing ints and sequences (is
        ``[8, (16, 8)]`` one network or two?), with how to write it.
    """
    value = DEFAULT_HIDDEN_LAYER_SIZES if hidden_layer_sizes is None else hidden_layer_sizes
    if _is_width(value):
        return [_architecture((value,))]
    values = _as_list(value, "hidden_layer_sizes")
    is_width = [_is_width(v) for v in values]
    if all(is_width):
        # errors show the value as the user wrote it
        return [_architecture(value if isinstance(value, (tuple, list)) else values)]
    if any(is_width):
        raise ValueError(
            f"hidden_layer_sizes={hidden_layer_sizes!r} mixes widths and architectures, so it "
            f"is ambiguous. {_HIDDEN_LAYER_SIZES_HELP}"
        )
    return [_architecture(v) for v in values]


def _positive_numbers(value, name, *, allow_zero):
    numbers = _as_list(value, name)
    for number in numbers:
        ok = isinstance(number, Real) and not isinstance(number, bool) and np.isfinite(number)
        if not ok or number < 0 or (number == 0 and not allow_zero):
            kind = "non-negative" if allow_zero else "positive"
            raise ValueError(f"{name} values must be finite {kind} numbers; got {number!r}.")
    return [float(n) for n in numbers]


def _activations(value):
    names = _as_list(value, "activation")
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"activation values must be strings; got {name!r}.")
        canonical_activation(name)
    return names


@dataclass(frozen=True)
class Population:
    """Rows of models: ``params[i]`` and ``repeats[i]`` describe model i.

    ``params[i]`` holds a value of every searched parameter
    (:data:`SEARCHED_PARAMS`; optimizer parameters it lacks take
    :data:`OPTIMIZER_DEFAULTS`); ``shown`` names those ``cv_results_``
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
                params.append({name: configuration[name] for name in SEARCHED_PARAMS if name in configuration})
                repeats.append(repeat)
        shown = tuple(name for name in SEARCHED_PARAMS if name in shown)
        unset = () if unset is None else tuple(names for names in unset for _ in range(n_repeats))
        return cls(params=params, repeats=np.array(repeats, dtype=int), shown=shown, unset=unset)

    def column(self, name):
        default = OPTIMIZER_DEFAULTS.get(name)
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
                OptimizerSettings(**dict(zip(_SETTINGS, values)))
                for values in zip(*(self.column(name) for name in _SETTINGS))
            ],
            batch_sizes=np.array([resolve_batch_size(b) for b in self.column("batch_size")], dtype=np.int64),
        )


#: The optimizer parameters an :class:`OptimizerSettings` holds (all but batch_size).
_SETTINGS = tuple(f.name for f in fields(OptimizerSettings))


def resolve_batch_size(batch_size):
    """An int batch size: ``"auto"`` is 200, as scikit-learn's MLP (whose
    ``min(200, n_samples)`` the engine gets by clipping the batch to the
    training rows)."""
    return 200 if batch_size == "auto" else int(batch_size)


def model_seed(seed, hidden_layer_sizes, activation, repeat):
    """Entropy of one model's initial weights."""
    code = ACTIVATION_CODES[canonical_activation(activation)]
    return (int(seed), int(repeat), code, len(hidden_layer_sizes), *hidden_layer_sizes)
