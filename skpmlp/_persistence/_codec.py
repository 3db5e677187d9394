"""A tree of training state as an archive's JSON document and arrays, and back, strictly.

Checkpoints hold nested state (the engine's runs, their weights, optimizer
state and curves, the search's folds): dicts with string keys, lists,
numbers, strings, None and numpy arrays. :func:`encode` turns such a tree
into what :func:`~skpmlp._persistence._archive.write_archive` writes, a JSON document and a
few plain arrays: an array of 64 KiB or more is a member of its own, the
smaller ones are packed into one member per dtype (a population's
thousands of small weight matrices stay a handful of zip members).
:func:`decode` rebuilds the tree and refuses with
:class:`~skpmlp._persistence._archive.InvalidFileError` any reference that does not fit the
arrays the file holds: nothing is evaluated, nothing is unpickled.

In the document an array is ``{"$array": [member, offset, shape]}`` and a
non-finite float ``{"$float": "nan"}``; a dict key starting with ``$`` is
refused on both sides. Tuples come back as lists.
"""

import math
from numbers import Integral, Real

import numpy as np

from ._archive import InvalidFileError, is_plain_dtype

#: Arrays of at least this many bytes are members of their own.
OWN_MEMBER_BYTES = 1 << 16

_TAGS = ("$array", "$float")


def encode(tree):
    """The ``(document, arrays)`` of ``tree`` (see the module docstring).

    Raises
    ------
    TypeError
        For a value that is none of the types above.
    """
    packer = _Packer()
    document = packer.encode(tree)
    return document, packer.members()


class _Packer:
    def __init__(self):
        self.own = {}  # member name -> array
        self.small = {}  # dtype str -> list of 1-D arrays
        self.sizes = {}  # dtype str -> elements packed so far

    def encode(self, value):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, np.ndarray):
            return self._array(value)
        if isinstance(value, (np.bool_,)):
            return bool(value)
        if isinstance(value, Integral):
            return int(value)
        if isinstance(value, Real):
            value = float(value)
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if not isinstance(key, str) or key.startswith("$"):
                    raise TypeError(f"state keys must be strings not starting with '$': {key!r}")
                out[key] = self.encode(item)
            return out
        if isinstance(value, (list, tuple)):
            return [self.encode(item) for item in value]
        raise TypeError(f"cannot save a {type(value).__name__} in a checkpoint")

    def _array(self, array):
        if not is_plain_dtype(array.dtype):
            raise TypeError(f"cannot save an array of dtype {array.dtype} in a checkpoint")
        array = np.ascontiguousarray(array)
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        shape = list(array.shape)
        if array.nbytes >= OWN_MEMBER_BYTES:
            name = f"own_{len(self.own)}"
            self.own[name] = array.reshape(-1)
            return {"$array": [name, 0, shape]}
        code = array.dtype.str.lstrip("<>|=")
        offset = self.sizes.get(code, 0)
        self.small.setdefault(code, []).append(array.reshape(-1))
        self.sizes[code] = offset + array.size
        return {"$array": [f"packed_{code}", offset, shape]}

    def members(self):
        members = dict(self.own)
        for code, parts in self.small.items():
            members[f"packed_{code}"] = np.concatenate(parts)
        return members


def decode(document, arrays):
    """The tree that :func:`encode` gave ``(document, arrays)`` for.

    Raises
    ------
    InvalidFileError
        For a reference to a missing member, outside its member, of a
        shape that does not fit, or a malformed tag.
    """
    return _decode(document, arrays)


def _decode(value, arrays):
    if isinstance(value, list):
        return [_decode(item, arrays) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 and next(iter(value)) in _TAGS:
        (tag, payload), = value.items()
        return _array(payload, arrays) if tag == "$array" else _float(payload)
    if any(key.startswith("$") for key in value):
        raise InvalidFileError(f"Invalid checkpoint: malformed entry {str(value)[:80]}.")
    return {key: _decode(item, arrays) for key, item in value.items()}


def _float(payload):
    if payload not in ("nan", "inf", "-inf"):
        raise InvalidFileError(f"Invalid checkpoint: malformed float {str(payload)[:40]}.")
    return float(payload)


def _array(payload, arrays):
    ok = (isinstance(payload, list) and len(payload) == 3 and isinstance(payload[0], str)
          and type(payload[1]) is int and isinstance(payload[2], list)
          and all(type(n) is int and n >= 0 for n in payload[2]))
    if not ok:
        raise InvalidFileError(f"Invalid checkpoint: malformed array entry {str(payload)[:80]}.")
    name, offset, shape = payload
    member = arrays.get(name)
    size = math.prod(shape)
    if member is None or member.ndim != 1 or offset < 0 or offset + size > member.size:
        raise InvalidFileError(
            f"Invalid checkpoint: an array of shape {tuple(shape)} at {offset} of member "
            f"{name!r} is not in the file."
        )
    return member[offset:offset + size].reshape(shape)
