"""What identifies a search: its parameters and its data, described canonically.

A checkpoint may only be resumed by the search that wrote it: the same
estimator class, the same parameters (those that change what is trained;
how it runs, ``n_jobs`` or ``max_memory``, may change) and the same data.
:func:`describe` writes any parameter value as a string that is the same
in every process for the same value (no memory addresses: a distribution
by its name and arguments, a splitter by its class and parameters, a
function by its qualified name), :func:`data_digest` hashes an array's
dtype, shape and bytes.
"""

import hashlib
import inspect

import numpy as np
from sklearn.base import BaseEstimator

#: Parameters that say how and where a search runs, never what it trains:
#: a resumed search may change them.
EXECUTION_PARAMS = frozenset(
    {"checkpoint", "checkpoint_every", "n_jobs", "max_memory", "max_time", "verbose"}
)


def describe(value):
    """A canonical string of a parameter value (see the module docstring)."""
    if isinstance(value, np.generic):
        return repr(value.item())
    if value is None or isinstance(value, (bool, str, int, float)):
        return repr(value)
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return f"array({describe(value.tolist())})"
        return f"array({value.dtype.str}, {value.shape}, {data_digest(value)})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        items = sorted((describe(k), describe(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        # a resumed search takes the checkpoint's seed, not a new draw
        return type(value).__name__
    dist = getattr(value, "dist", None)
    if dist is not None and hasattr(value, "rvs"):  # a frozen scipy.stats distribution
        return f"{getattr(dist, 'name', type(dist).__name__)}{describe(tuple(value.args))}" \
               f"{describe(dict(value.kwds))}"
    if isinstance(value, BaseEstimator) or hasattr(value, "get_params"):
        return f"{_qualified(type(value))}{describe(value.get_params(deep=False))}"
    if inspect.isroutine(value) or inspect.isclass(value):
        return _qualified(value)
    # another object (a splitter of the user's, a distribution class):
    # its type and its plain attributes
    state = {k: v for k, v in vars(value).items() if not k.startswith("_")} \
        if hasattr(value, "__dict__") else {}
    return f"{_qualified(type(value))}{describe(state)}"


def _qualified(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def data_digest(array):
    """A SHA-256 of an array's dtype, shape and values (None for None)."""
    if array is None:
        return None
    array = np.asarray(array)
    digest = hashlib.sha256()
    if array.dtype == object:
        # labels as Python objects (strings): their canonical descriptions
        digest.update(f"object{array.shape}".encode())
        for item in array.ravel().tolist():
            digest.update(describe(item).encode())
            digest.update(b"\0")
        return digest.hexdigest()
    array = np.ascontiguousarray(array)
    digest.update(f"{array.dtype.str}{array.shape}".encode())
    digest.update(array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def text_digest(text):
    """A SHA-256 of a string."""
    return hashlib.sha256(text.encode()).hexdigest()


def search_identity(estimator, data):
    """What a checkpoint must match to be resumed by this fit.

    Parameters
    ----------
    estimator : BaseParallelMLP
    data : dict of str to ndarray or None
        The validated data: ``X``, ``y``, ``sample_weight``, ``groups``.

    Returns
    -------
    dict
        ``estimator`` (its class), ``params`` (``{name: description}``
        of every parameter but :data:`EXECUTION_PARAMS`) and ``data``
        (``{name: digest}``).
    """
    params = estimator.get_params(deep=False)
    return {
        "estimator": type(estimator).__name__,
        "params": {name: describe(value) for name, value in sorted(params.items())
                   if name not in EXECUTION_PARAMS},
        "data": {name: data_digest(array) for name, array in data.items()},
    }
