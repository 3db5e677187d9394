"""The codec's tags for Python and numpy data beyond plain trees.

:data:`DATA_TAGS` store, each as ``{"$<name>": payload}``
(:mod:`skpmlp._persistence._codec`):

* ``tuple``, ``set``, ``frozenset``: the items, a list;
* ``dict``: a dict whose keys are not all strings, or one of which starts
  with ``$``, as a list of ``[key, value]`` pairs;
* ``scalar``: a numpy scalar (bool, integer, float or string) as
  ``{"dtype": ..., "value": ...}``;
* ``object_array``: an array of Python objects as ``{"shape": ...,
  "items": ...}``, its items encoded one by one;
* ``masked_array``: ``{"data": ..., "mask": ..., "fill_value": ...}``;
* ``random_state``: a :class:`numpy.random.RandomState`, as its state.

Types are matched exactly where a subclass would come back as its base
class (a namedtuple as a tuple, a defaultdict as a dict): such a value is
refused rather than changed.
"""

import math
import re

import numpy as np

from ._codec import NotDataError, Tag, payload_fields, payload_list

__all__ = ["DATA_TAGS"]

#: dtype kinds a numpy scalar may have in a file (no objects, no voids).
_SCALAR_KINDS = frozenset("biufU")

#: The dtypes of those kinds, as :attr:`numpy.dtype.str` spells them.
_SCALAR_DTYPE = re.compile(r"[<>|=]?(b1|[iu][1248]|f[248]|U[0-9]{1,6})")


def _collection(kind, describe):
    """The tag of the exact type ``kind`` (tuple, set, frozenset), whose
    items are located in messages by ``describe(index, item)``."""

    def encode(value, child):
        return [child(item, describe(i, item)) for i, item in enumerate(value)]

    def decode(payload, child):
        return kind(child(item) for item in payload_list(payload))

    return Tag(kind.__name__, lambda value: type(value) is kind, encode, decode)


def _encode_dict(value, child):
    return [[child(key, f" key {key!r}"), child(item, f"[{key!r}]")]
            for key, item in value.items()]


def _decode_dict(payload, child):
    pairs = [payload_list(pair) for pair in payload_list(payload)]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("expected [key, value] pairs")
    return {child(key): child(item) for key, item in pairs}


def _encode_scalar(value, child):
    if value.dtype.kind not in _SCALAR_KINDS:
        raise NotDataError(f"cannot save a numpy scalar of dtype {value.dtype}")
    return {"dtype": value.dtype.str, "value": child(value.item())}


def _decode_scalar(payload, child):
    name, value = payload_fields(payload, "dtype", "value")
    value = child(value)
    if not isinstance(name, str) or not _SCALAR_DTYPE.fullmatch(name):
        raise ValueError(f"scalar dtype {str(name)[:80]!r} is not allowed")
    dtype = np.dtype(name)
    # a string scalar's width is its text's: a file cannot make it allocate more
    fits = isinstance(value, str) and dtype.itemsize <= 4 * max(len(value), 1)
    if dtype.kind == "U" and not fits:
        raise ValueError(f"scalar dtype {name!r} does not fit its value")
    return np.array(value, dtype=dtype)[()]


def _encode_object_array(value, child):
    items = [child(item, f"[{i}]") for i, item in enumerate(value.ravel())]
    return {"shape": list(value.shape), "items": items}


def _decode_object_array(payload, child):
    shape, items = payload_fields(payload, "shape", "items")
    items = [child(item) for item in payload_list(items)]
    if (type(shape) is not list or not all(type(n) is int and n >= 0 for n in shape)
            or math.prod(shape) != len(items)):
        raise ValueError(f"an object array of shape {str(shape)[:80]} holds {len(items)} items")
    array = np.empty(len(items), dtype=object)
    # element-wise, so tuples stay elements instead of becoming a dimension
    for i, item in enumerate(items):
        array[i] = item
    return array.reshape(shape)


def _encode_masked_array(value, child):
    return {
        "data": child(np.ma.getdata(value), ".data"),
        "mask": child(np.ma.getmaskarray(value), ".mask"),
        "fill_value": child(value.fill_value, ".fill_value"),
    }


def _decode_masked_array(payload, child):
    data, mask, fill_value = payload_fields(payload, "data", "mask", "fill_value")
    return np.ma.MaskedArray(child(data), mask=child(mask), fill_value=child(fill_value))


def _decode_random_state(payload, child):
    random_state = np.random.RandomState()
    random_state.set_state(child(payload))
    return random_state


#: The tags of this module, in the order the encoder asks them.
DATA_TAGS = (
    # np.float64 subclasses float, np.str_ str: this tag keeps their dtype
    Tag("scalar", lambda value: isinstance(value, np.generic), _encode_scalar, _decode_scalar),
    _collection(tuple, lambda i, item: f"[{i}]"),
    _collection(set, lambda i, item: f" item {item!r}"),
    _collection(frozenset, lambda i, item: f" item {item!r}"),
    Tag("dict", lambda value: type(value) is dict, _encode_dict, _decode_dict),
    Tag("object_array", lambda value: type(value) is np.ndarray and value.dtype.hasobject,
        _encode_object_array, _decode_object_array),
    Tag("masked_array", lambda value: type(value) is np.ma.MaskedArray, _encode_masked_array,
        _decode_masked_array),
    Tag("random_state", lambda value: isinstance(value, np.random.RandomState),
        lambda value, child: child(value.get_state(), ".state"), _decode_random_state),
)
