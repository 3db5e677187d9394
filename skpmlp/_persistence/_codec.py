"""skpmlp's one codec: a tree of data as an archive's JSON document and arrays, and back, strictly.

Saved estimators (:mod:`skpmlp.io`) and checkpoints are trees of data:
dicts, lists, numbers, strings, None and numpy arrays, and values of the
kinds that *tags* store (tuples, numpy scalars, estimators, ...).
:func:`encode` turns a tree into what
:func:`~skpmlp._persistence._archive.write_archive` writes, a JSON
document and a few flat arrays; :func:`decode` rebuilds it and refuses,
with :class:`~skpmlp._persistence._archive.InvalidFileError` naming the
problem, anything that does not fit: nothing is evaluated, nothing is
unpickled.

In the document, None, bools, ints, strings, finite floats, lists and
dicts whose keys are strings not starting with ``$`` stand for themselves.
Every other value is *tagged*: a dict of one key, ``"$"`` and the tag's
name, whose value is the tag's payload:

* ``{"$array": [member, offset, shape]}``: a numpy array of a plain dtype
  (:func:`~skpmlp._persistence._archive.is_plain_dtype`), the ``shape``'s
  elements from ``offset`` on in the flat array ``member``. An array of
  64 KiB or more is a member of its own; smaller ones are packed into one
  member per dtype, so that the thousands of small weight matrices of a
  population stay a handful of zip members. An array referenced twice is
  stored once and comes back as one array.
* ``{"$float": "nan"}`` (or ``"inf"``, ``"-inf"``): a non-finite float,
  which strict JSON cannot hold.
* ``{"$<name>": payload}`` for each :class:`Tag` the caller passes: the
  tag says which values it stores (``claims``) and how (``encode``,
  ``decode``). :mod:`~skpmlp._persistence._data_tags` has those of Python
  and numpy data, :mod:`skpmlp.io` adds estimators, splitters and
  distributions.

The decoder refuses a tag it does not know, a ``$`` key among other keys,
a payload its tag cannot read, a reference to a member that is missing or
not flat, an array that would reach outside its member or a shape that
does not fit, and a member that no reference uses.
"""

import math
from numbers import Integral
from typing import Callable, NamedTuple

import numpy as np

from ._archive import InvalidFileError, is_plain_dtype

__all__ = ["OWN_MEMBER_BYTES", "NotDataError", "Tag", "decode", "encode", "payload_fields",
           "payload_list"]

#: Arrays of at least this many bytes are members of their own.
OWN_MEMBER_BYTES = 1 << 16

#: Most dimensions an array may have (numpy's own limit).
_MAX_NDIM = 64

_NON_FINITE = ("nan", "inf", "-inf")


class Tag(NamedTuple):
    """A kind of value the codec stores as ``{"$<name>": payload}``.

    Attributes
    ----------
    name : str
        The tag, without its ``$``.
    claims : callable
        ``claims(value)``: whether this tag stores ``value``. The tags are
        asked in order, after the plain values of the module docstring.
    encode : callable
        ``encode(value, child)``: the JSON payload of ``value``, where
        ``child(item, where)`` encodes a value inside it (``where``, e.g.
        ``"[2]"`` or ``".state"``, locates the item in messages). Raises
        :class:`NotDataError` for a value it claims but cannot store.
    decode : callable
        ``decode(payload, child)``: the value, where ``child(item)``
        decodes an encoded value inside the payload. Any exception it
        raises is reported as a malformed value of this tag.
    """

    name: str
    claims: Callable
    encode: Callable
    decode: Callable


class NotDataError(TypeError):
    """A value the codec cannot store; :func:`encode` raises a ``TypeError``
    whose message says where in the tree it is.

    Parameters
    ----------
    message : str
        What is wrong, without the location.
    """

    def __init__(self, message):
        super().__init__(message)
        self.message = message
        #: the steps from the value up to the tree's root, innermost first
        self.where = []

    def at(self, where):
        """This error, one step further from its value (``"[2]"``, ``".x"``)."""
        self.where.append(where)
        return self


def payload_fields(payload, *names):
    """The values of a payload's fields ``names``, in order.

    Raises
    ------
    ValueError
        Unless ``payload`` is a dict of exactly those keys.
    """
    if type(payload) is not dict or set(payload) != set(names):
        found = sorted(payload) if type(payload) is dict else type(payload).__name__
        raise ValueError(f"expected the fields {list(names)}, found {str(found)[:120]}")
    return [payload[name] for name in names]


def payload_list(payload):
    """``payload``, which must be a list.

    Raises
    ------
    ValueError
        If it is not.
    """
    if type(payload) is not list:
        raise ValueError(f"expected a list, found a {type(payload).__name__}")
    return payload


# ---------------------------------------------------------------- encoding
def encode(tree, tags=(), *, root="tree"):
    """The ``(document, arrays)`` of ``tree`` (see the module docstring).

    Parameters
    ----------
    tree : object
        Plain values and values that ``tags`` claim.
    tags : sequence of Tag
    root : str, default="tree"
        What the tree is, to locate a value in messages (``estimator``
        gives ``estimator.coefs_[0]``).

    Returns
    -------
    document : JSON data
    arrays : dict of str to ndarray
        Flat arrays of plain dtypes, by member name.

    Raises
    ------
    TypeError
        For a value that is none of those, naming where it is.
    """
    encoder = _Encoder(tags)
    try:
        document = encoder.encode(tree)
    except NotDataError as error:
        raise TypeError(f"{root}{''.join(reversed(error.where))}: {error.message}") from None
    return document, encoder.members.arrays()


class _Encoder:
    def __init__(self, tags):
        self.tags = tuple(tags)
        self.members = _Members()
        # id -> (array, reference); holding the array keeps its id from being reused
        self._memo = {}

    def encode(self, value):
        kind = type(value)
        if value is None or kind is bool or kind is str or kind is int:
            return value
        if kind is float:
            return value if math.isfinite(value) else {"$float": repr(value)}
        if kind is list:
            return self._list(value)
        if kind is dict and all(type(key) is str and key[:1] != "$" for key in value):
            return self._dict(value)
        if kind is np.ndarray and is_plain_dtype(value.dtype):
            return self._array(value)
        for tag in self.tags:
            if tag.claims(value):
                return {f"${tag.name}": tag.encode(value, self.child)}
        return self._other(value)

    def child(self, value, where=""):
        """``value`` encoded, located at ``where`` in messages."""
        try:
            return self.encode(value)
        except NotDataError as error:
            raise error.at(where)

    def _list(self, items):
        out = []
        for i, item in enumerate(items):
            try:
                out.append(self.encode(item))
            except NotDataError as error:
                raise error.at(f"[{i}]")
        return out

    def _dict(self, value):
        out = {}
        for key, item in value.items():
            try:
                out[key] = self.encode(item)
            except NotDataError as error:
                raise error.at(f"[{key!r}]")
        return out

    def _array(self, array):
        known = self._memo.get(id(array))
        if known is None:
            known = self._memo[id(array)] = (array, self.members.add(array))
        return {"$array": list(known[1])}

    def _other(self, value):
        """A value of a subclass of int or float, or the refusal."""
        if isinstance(value, Integral):
            return int(value)
        if isinstance(value, float):
            return self.encode(float(value))
        if type(value) is dict:
            key = next(key for key in value if type(key) is not str or key[:1] == "$")
            raise NotDataError(
                f"cannot save the dict key {key!r}: plain dicts have string keys not starting "
                f"with '$' (other dicts need the 'dict' tag)"
            )
        if type(value) is np.ndarray:
            raise NotDataError(
                f"cannot save an array of dtype {value.dtype}; skpmlp files store bool, "
                f"integer, float, complex and string arrays"
            )
        tags = ", ".join(tag.name for tag in self.tags)
        raise NotDataError(
            f"cannot save a value of type {type(value).__module__}.{type(value).__qualname__}; "
            f"skpmlp files store only data: None, bool, int, float, str, list, dict, numpy "
            f"arrays of plain dtypes" + (f" and the values of the tags {tags}" if tags else "")
        )


class _Members:
    """The flat arrays of a file: big arrays alone, small ones packed by dtype."""

    def __init__(self):
        self.own = {}  # member name -> array
        self.small = {}  # dtype code -> list of flat arrays
        self.sizes = {}  # dtype code -> elements packed so far

    def add(self, array):
        """Store ``array``; its reference ``[member, offset, shape]``."""
        shape = list(array.shape)  # before ascontiguousarray, which makes a 0-d array 1-d
        array = np.ascontiguousarray(array)
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        if array.nbytes >= OWN_MEMBER_BYTES:
            name = f"own_{len(self.own)}"
            self.own[name] = array.reshape(-1)
            return [name, 0, shape]
        code = array.dtype.str.lstrip("<>|=")
        offset = self.sizes.get(code, 0)
        self.small.setdefault(code, []).append(array.reshape(-1))
        self.sizes[code] = offset + array.size
        return [f"packed_{code}", offset, shape]

    def arrays(self):
        """``{member name: flat array}``."""
        members = dict(self.own)
        for code, parts in self.small.items():
            members[f"packed_{code}"] = np.concatenate(parts)
        return members


# ---------------------------------------------------------------- decoding
def decode(document, arrays, tags=(), *, what="document"):
    """The tree that :func:`encode` gave ``(document, arrays)`` for.

    Parameters
    ----------
    document : JSON data
    arrays : dict of str to ndarray
        The file's members.
    tags : sequence of Tag
        The tags the document may use.
    what : str, default="document"
        What the document holds, for messages.

    Raises
    ------
    InvalidFileError
        For anything that does not fit (see the module docstring).
    """
    decoder = _Decoder(arrays, tags)
    tree = decoder.decode(document)
    unused = sorted(set(arrays) - decoder.used)
    if unused:
        raise InvalidFileError(
            f"Invalid skpmlp file: its arrays {unused[:10]} are not part of the {what}."
        )
    return tree


class _Decoder:
    def __init__(self, arrays, tags):
        self.arrays = arrays
        self.tags = {tag.name: tag for tag in tags}
        #: the members that references use
        self.used = set()
        # reference -> array: a reference met twice is one array, as saved
        self._memo = {}

    def decode(self, value):
        kind = type(value)
        if kind is list:
            return [self.decode(item) for item in value]
        if kind is not dict:
            return value
        if len(value) == 1:
            (key, payload), = value.items()
            if key[:1] == "$":
                return self._tagged(key[1:], payload)
        elif any(key[:1] == "$" for key in value):
            raise InvalidFileError(
                f"Invalid skpmlp file: a key starting with '$' among other keys in "
                f"{str(value)[:80]}; a tag stands alone."
            )
        return {key: self.decode(item) for key, item in value.items()}

    def _tagged(self, name, payload):
        if name == "array":
            return self._array(payload)
        if name == "float":
            if payload not in _NON_FINITE:
                raise InvalidFileError(
                    f"Invalid skpmlp file: malformed 'float' value {str(payload)[:80]!r}; "
                    f"expected one of {list(_NON_FINITE)}."
                )
            return float(payload)
        tag = self.tags.get(name)
        if tag is None:
            raise InvalidFileError(f"Invalid skpmlp file: unknown value type {name[:80]!r}.")
        try:
            return tag.decode(payload, self.decode)
        except InvalidFileError:
            raise
        except Exception as exc:
            # whatever a constructor, numpy or scipy raise on the file's
            # values, the file is what is wrong
            raise InvalidFileError(
                f"Invalid skpmlp file: malformed {name!r} value ({type(exc).__name__}: "
                f"{str(exc)[:200]})."
            ) from exc

    def _array(self, reference):
        name, offset, shape = _checked_reference(reference)
        key = (name, offset, tuple(shape))
        if key not in self._memo:
            self._memo[key] = _slice(self.arrays.get(name), name, offset, shape)
            self.used.add(name)
        return self._memo[key]


def _checked_reference(reference):
    """``[member, offset, shape]`` of an ``$array`` payload, its types checked."""
    ok = (
        type(reference) is list and len(reference) == 3 and type(reference[0]) is str
        and type(reference[1]) is int and reference[1] >= 0 and type(reference[2]) is list
        and len(reference[2]) <= _MAX_NDIM
        and all(type(n) is int and n >= 0 for n in reference[2])
    )
    if not ok:
        raise InvalidFileError(
            f"Invalid skpmlp file: malformed 'array' value {str(reference)[:80]}; expected "
            f"[member, offset, shape]."
        )
    return reference


def _slice(member, name, offset, shape):
    """The array of ``shape`` at ``offset`` in the flat ``member``, or the refusal."""
    if member is None:
        raise InvalidFileError(
            f"Invalid skpmlp file: malformed 'array' value: the document names a missing "
            f"array {name[:80]!r}."
        )
    if member.ndim != 1:
        raise InvalidFileError(
            f"Invalid skpmlp file: member {name!r} has shape {member.shape}; array members "
            f"are flat."
        )
    size = math.prod(shape)
    if offset + size > member.size:
        raise InvalidFileError(
            f"Invalid skpmlp file: an array of shape {tuple(shape)} at {offset} of member "
            f"{name!r} is not in the file (the member holds {member.size} elements)."
        )
    try:
        return member[offset:offset + size].reshape(shape)
    except ValueError as exc:  # a shape of zero elements too large for numpy
        raise InvalidFileError(
            f"Invalid skpmlp file: an array of shape {str(tuple(shape))[:80]} cannot exist "
            f"({exc})."
        ) from exc
