"""Checks of parameter values: what one value, a list of candidates or a drawn value may be.

Each searchable parameter reads its candidates from a list (or one value)
and checks every value a distribution draws with a :class:`Values` rule;
the parameter table (:mod:`skpmlp._core._params`) gives every parameter its rule, and
the search space (:mod:`skpmlp._search._space`) applies them. Messages name the
parameter, so a distribution that draws a negative learning rate fails
with its name.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .._engine import canonical_activation


@dataclass(frozen=True)
class Values:
    """How a searchable parameter's candidates are read and its draws checked.

    ``candidates(value, name)`` turns a list (or a single value) into the
    list of valid candidates; ``check(value, name)`` returns one drawn value
    as a valid (plain Python) value or raises ``ValueError`` naming ``name``.
    """

    candidates: object
    check: object


def as_list(value, name):
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
        raise ValueError(
            f"{name} must hold at least one value; got an empty {type(value).__name__}."
        )
    return values


def _scalar(value):
    """A 0-d array's value; anything else as it is."""
    return value[()] if isinstance(value, np.ndarray) and value.shape == () else value


def is_width(value):
    """Whether ``value`` is a layer width (an int, not a bool)."""
    return isinstance(value, Integral) and not isinstance(value, bool)


#: How to write ``hidden_layer_sizes``, for its error messages.
_HIDDEN_LAYER_SIZES_HELP = (
    "Write one network as an int or a sequence of ints (e.g. 100, or (100, 50) or [100, 50] "
    "for two hidden layers, as scikit-learn's MLP), and several networks as a list of tuples "
    "(e.g. [(100,), (100, 50)])."
)

#: Architectures trained when ``hidden_layer_sizes=None``.
DEFAULT_HIDDEN_LAYER_SIZES = ((32,), (64,), (128,), (64, 64))


def architecture(value):
    """One architecture (a tuple of positive ints) from a sequence of widths."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (tuple, list)) or not value or not all(is_width(w) for w in value):
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
    if is_width(value):
        return [architecture((value,))]
    values = as_list(value, "hidden_layer_sizes")
    widths = [is_width(v) for v in values]
    if all(widths):
        # errors show the value as the user wrote it
        return [architecture(value if isinstance(value, (tuple, list)) else values)]
    if any(widths):
        raise ValueError(
            f"hidden_layer_sizes={hidden_layer_sizes!r} mixes widths and architectures, so it "
            f"is ambiguous. {_HIDDEN_LAYER_SIZES_HELP}"
        )
    return [architecture(v) for v in values]


def _drawn_architecture(value, name):
    # an int-valued distribution draws one hidden layer's width
    value = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    return architecture((value,) if is_width(value) else value)


def positive_numbers(value, name, *, allow_zero):
    """The finite positive (or non-negative) numbers listed in ``value``."""
    numbers = as_list(value, name)
    for number in numbers:
        ok = isinstance(number, Real) and not isinstance(number, bool) and np.isfinite(number)
        if not ok or number < 0 or (number == 0 and not allow_zero):
            kind = "non-negative" if allow_zero else "positive"
            raise ValueError(f"{name} values must be finite {kind} numbers; got {number!r}.")
    return [float(n) for n in numbers]


def activations(value):
    """The activation names listed in ``value``, each checked."""
    names = as_list(value, "activation")
    for name in names:
        _drawn_activation(name, "activation")
    return names


def _drawn_activation(value, name):
    if not isinstance(value, str):
        raise ValueError(f"{name} values must be strings; got {value!r}.")
    canonical_activation(value)
    return value


def _each(check):
    """A :class:`Values`' ``candidates``: ``check`` on every listed value.

    A value listed twice is two candidates, as in GridSearchCV (identical
    models, trained and scored alike).
    """
    return lambda value, name: [check(v, name) for v in as_list(value, name)]


def of_check(check):
    """The :class:`Values` of a parameter whose candidates are checked one by one."""
    return Values(candidates=_each(check), check=check)


# ------------------------------------------------------------- the rules
ARCHITECTURES = Values(candidates=lambda value, name: architectures(value),
                       check=_drawn_architecture)
ACTIVATIONS = Values(candidates=lambda value, name: activations(value), check=_drawn_activation)


def positive(*, allow_zero):
    """Finite numbers above zero (or from zero)."""
    return Values(
        candidates=lambda value, name: positive_numbers(value, name, allow_zero=allow_zero),
        check=lambda value, name: positive_numbers([_scalar(value)], name,
                                                   allow_zero=allow_zero)[0],
    )


def option(options):
    """One of the strings ``options``."""
    def check(value, name):
        value = str(value) if isinstance(value, np.str_) else value
        if not isinstance(value, str) or value not in options:
            raise ValueError(f"{name} values must be one of {sorted(options)}; got {value!r}.")
        return value
    return of_check(check)


def _boolean(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} values must be booleans; got {value!r}.")
    return bool(value)


BOOLEAN = of_check(_boolean)


def interval(low, high, closed):
    """A finite number in the interval from ``low`` to ``high`` (None:
    unbounded), ``closed`` as scikit-learn's ``Interval`` says it."""
    low_closed, high_closed = closed in ("left", "both"), closed in ("right", "both")

    def check(value, name):
        value = _scalar(value)
        ok = isinstance(value, Real) and not isinstance(value, bool) and np.isfinite(value)
        ok = ok and (value >= low if low_closed else value > low)
        ok = ok and (high is None or (value <= high if high_closed else value < high))
        if not ok:
            where = ("[" if low_closed else "(") + f"{low}, {'inf' if high is None else high}" + (
                "]" if high_closed and high is not None else ")")
            raise ValueError(f"{name} values must be numbers in {where}; got {value!r}.")
        return float(value)
    return of_check(check)


def _batch_size(value, name):
    value = _scalar(value)
    if isinstance(value, (str, np.str_)) and value == "auto":
        return "auto"
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} values must be 'auto' or positive ints; got {value!r}.")
    return int(value)


BATCH_SIZE = of_check(_batch_size)


def or_auto(values):
    """``values``' rule, or the string ``"auto"`` (which the message then
    names first)."""
    def check(value, name):
        value = _scalar(value)
        if isinstance(value, (str, np.str_)) and value == "auto":
            return "auto"
        try:
            return values.check(value, name)
        except ValueError as error:
            raise ValueError(str(error).replace(" must be ", " must be 'auto' or ", 1)) from None
    return of_check(check)
