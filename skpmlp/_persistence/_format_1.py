"""Files of :mod:`skpmlp.io`'s format 1 (skpmlp 0.2.0) in the codec's scheme.

Format 1 tagged a value as a dict with a ``"__type__"`` key and the tag's
fields beside it, and stored every array whole as a member of its own,
named by ``{"__type__": "ndarray", "key": member}``. :func:`from_format_1`
rewrites such a document and its members into the codec's scheme
(:mod:`skpmlp._persistence._codec`), so that the one strict decoder reads
both formats:

* ``{"__type__": "ndarray", "key": k}`` becomes ``{"$array": [k, 0,
  shape]}``, ``shape`` the member's, and every member is flattened;
* the tags with one field (``float``'s ``value``; ``tuple``, ``set``,
  ``frozenset`` and ``dict``'s ``items``; ``random_state``'s ``state``)
  become ``{"$<tag>": field}``;
* the others (``scalar``, ``object_array``, ``masked_array``,
  ``estimator``, ``splitter``, ``distribution``) become ``{"$<tag>":
  fields}``, their fields as they were;
* a plain dict with a key starting with ``$`` (format 1 had no such tags)
  becomes a ``$dict`` of pairs.

A tag format 1 did not have is refused; anything else a malformed file
holds is left for the decoder to refuse.
"""

from ._archive import InvalidFileError

__all__ = ["from_format_1"]

_TYPE = "__type__"

#: Format 1's tags of one field: tag -> field.
_ONE_FIELD = {"float": "value", "tuple": "items", "set": "items", "frozenset": "items",
              "dict": "items", "random_state": "state"}

#: Format 1's tags whose fields are the payload.
_FIELDS = frozenset({"scalar", "object_array", "masked_array", "estimator", "splitter",
                     "distribution"})


def from_format_1(value, arrays):
    """``(value, arrays)`` of format 1 as the codec's ``(document, arrays)``.

    Parameters
    ----------
    value : JSON data
        A value of a format-1 document (e.g. its estimator).
    arrays : dict of str to ndarray
        The file's members.

    Raises
    ------
    InvalidFileError
        For a tag format 1 did not have.
    """
    shapes = {name: list(array.shape) for name, array in arrays.items()}
    flat = {name: array.reshape(-1) for name, array in arrays.items()}
    return _translated(value, shapes), flat


def _translated(value, shapes):
    if isinstance(value, list):
        return [_translated(item, shapes) for item in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(_TYPE)
    if tag is None:
        items = {key: _translated(item, shapes) for key, item in value.items()}
        if any(key.startswith("$") for key in items):
            return {"$dict": [[key, item] for key, item in items.items()]}
        return items
    if not isinstance(tag, str) or not (tag == "ndarray" or tag in _ONE_FIELD or tag in _FIELDS):
        raise InvalidFileError(f"Invalid skpmlp file: unknown value type {str(tag)[:80]!r}.")
    fields = {key: item for key, item in value.items() if key != _TYPE}
    if tag == "ndarray":
        key = fields.get("key")
        return {"$array": [key, 0, shapes.get(key, []) if isinstance(key, str) else []]}
    if tag in _ONE_FIELD:
        return {f"${tag}": _translated(fields.get(_ONE_FIELD[tag]), shapes)}
    return {f"${tag}": _translated(fields, shapes)}
