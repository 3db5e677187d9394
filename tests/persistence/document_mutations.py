"""Edits of a file's content that keep it well formed (issue 41, item 4).

Where ``file_mutations.py`` damages bytes or swaps in hostile values, these
edit what a person or a broken program could write into a valid file: a
number changed, an array grown or cut, a NaN put among the weights. The
archive is then written again with :func:`~skpmlp._persistence._archive.write_archive`,
so every checksum is right and only the meaning of the content can refuse
it. Used by ``test_document_mutations.py`` and ``benchmarks/fuzz_documents.py``.
"""

import numpy as np

from skpmlp._persistence._archive import read_archive, write_archive


def _numbers(value, path=()):
    """Paths of the int and float leaves of a JSON document (bools aside)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, (*path, index))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path


def _set(document, path, value):
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _get(document, path):
    for key in path:
        document = document[key]
    return document


def change_number(document, arrays, rng):
    """A number of the document changed: by one, negated, zeroed, made huge."""
    paths = list(_numbers(document))
    if not paths:
        return "no number"
    path = paths[rng.integers(len(paths))]
    value = _get(document, path)
    new = [value + 1, -value - 1, 0, 10**9, value * 3][rng.integers(5)]
    _set(document, path, type(value)(new))
    return f"number {'/'.join(map(str, path))}: {value!r} -> {new!r}"


def _members(arrays, rng, kinds="fiub"):
    names = [name for name, a in arrays.items() if a.size and a.dtype.kind in kinds]
    return names[rng.integers(len(names))] if names else None


def resize_array(document, arrays, rng):
    """An array member cut short or grown with zeros."""
    name = _members(arrays, rng)
    if name is None:
        return "no array"
    array = arrays[name].ravel()
    k = int(rng.integers(1, max(2, array.size // 4 + 1)))
    arrays[name] = array[:-k] if rng.random() < 0.5 else np.concatenate(
        [array, np.zeros(k, dtype=array.dtype)])
    return f"array {name}: {array.size} -> {arrays[name].size} values"


def insert_nan(document, arrays, rng):
    """A NaN written over one value of a float member."""
    name = _members(arrays, rng, kinds="f")
    if name is None:
        return "no float array"
    array = arrays[name].ravel().copy()
    index = int(rng.integers(array.size))
    array[index] = np.nan
    arrays[name] = array.reshape(arrays[name].shape)
    return f"NaN in {name}[{index}]"


def change_entry(document, arrays, rng):
    """One value of an int member (indices, counts, offsets) changed."""
    name = _members(arrays, rng, kinds="iu")
    if name is None:
        return "no int array"
    array = arrays[name].ravel().copy()
    index = int(rng.integers(array.size))
    info = np.iinfo(array.dtype)
    new = [int(array[index]) + 1, -1, 10**6][rng.integers(3)]
    array[index] = min(max(new, info.min), info.max)
    arrays[name] = array.reshape(arrays[name].shape)
    return f"{name}[{index}] -> {array[index]}"


MUTATIONS = (change_number, resize_array, insert_nan, change_entry)


def mutate(source, target, rng):
    """Write ``source``'s archive to ``target`` with one edit; returns what
    was edited, in words."""
    document, arrays = read_archive(source)
    arrays = {name: np.array(a) for name, a in arrays.items()}
    mutation = MUTATIONS[rng.integers(len(MUTATIONS))]
    what = mutation(document, arrays, rng)
    write_archive(target, document, arrays)
    return what
