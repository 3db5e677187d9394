"""Mutations of skpmlp files, for the property tests (``tests/test_io_fuzz.py``)
and the fuzzer (``benchmarks/fuzz_io.py``).

Every mutation takes the bytes of a valid file and a :class:`random.Random`
and returns ``(kind, bytes)``. Two families:

* :data:`RAW_MUTATIONS` damage the bytes as a disk, a download or a hand
  edit would (flipped bytes anywhere or in the zip directory, truncation,
  bytes inserted or deleted). zip's CRC-32 guards the members' contents,
  so such a file either is refused or loads as the same model.
* :data:`REBUILT_MUTATIONS` change what the archive holds and write a new,
  well-formed zip around it (fresh CRCs): ``.npy`` headers that grow their
  shape (up to 10^12 elements), change dtype or header length, JSON
  documents with a value replaced, a key dropped or a byte flipped, members
  dropped, renamed or added. Such a file is refused or loads as a model
  that works.
"""

import ast
import io
import json
import struct
import zipfile

#: Values a document mutation puts in place of one it picks.
_HOSTILE_VALUES = [
    None, True, False, 0, -1, 1, 2, 3, 10**12, -(10**12), 2**63, 1e308, -1e308, 0.5, "", "x",
    "relu", "softmax", "logistic", "identity", "exp", "nan", "inf", "__class__", [], {}, [1, 2, 3],
    [[1.0]], {"__type__": "float", "value": "nan"}, {"__type__": "ndarray", "key": "a0"},
    {"__type__": "ndarray", "key": "a1"}, {"__type__": "tuple", "items": [1, 2]},
    {"__type__": "scalar", "dtype": "<U999999", "value": "x"},
    {"__type__": "scalar", "dtype": "<f8", "value": 1.0},
    {"__type__": "object_array", "shape": [10**12, 0], "items": []},
    {"__type__": "object_array", "shape": [2], "items": [1]},
    {"__type__": "estimator", "class": "SingleMLPClassifier", "params": {}, "state": {},
     "derived": []},
    {"__type__": "random_state", "state": ["MT19937", [1, 2], 0, 0, 0.0]},
    {"__type__": "distribution", "module": "scipy.stats", "name": "randint", "args": [0, 10**300],
     "kwds": {}},
    {"__type__": "splitter", "module": "sklearn.model_selection", "class": "KFold",
     "params": {"n_splits": 10**12}},
    {"__type__": "masked_array", "data": [1, 2], "mask": [True], "fill_value": 0},
    # the codec's tags (format 1's above are plain dicts in a file of format 2)
    {"$float": "nan"}, {"$float": "1e400"}, {"$float": 1.0}, {"$code": "x"}, {"$": 1},
    {"$array": "x", "other": 1}, {"$array": ["packed_f4", 0, [2, 2]]},
    {"$array": ["packed_f4", 0, [10**12]]}, {"$array": ["packed_f4", 10**12, [1]]},
    {"$array": ["packed_f4", -1, [1]]}, {"$array": ["packed_f4", 0, [0, 2**62]]},
    {"$array": ["packed_i8", 0, [1]]}, {"$array": ["own_0", 0, [2]]},
    {"$array": ["__document__", 0, [3]]}, {"$array": ["packed_f4", 0, [1] * 65]},
    {"$array": ["packed_f4", True, [1]]}, {"$array": ["packed_f4", 0]},
    {"$tuple": [1, 2]}, {"$tuple": {}}, {"$set": [[1]]}, {"$frozenset": [1, 1]},
    {"$dict": [[1, 2]]}, {"$dict": [[[1], 2]]}, {"$dict": [[1]]},
    {"$scalar": {"dtype": "<U999999", "value": "x"}}, {"$scalar": {"dtype": "<f8", "value": 1.0}},
    {"$scalar": {"dtype": "|O", "value": 1}}, {"$scalar": {"dtype": "<f8"}},
    {"$object_array": {"shape": [10**12, 0], "items": []}},
    {"$object_array": {"shape": [2], "items": [1]}},
    {"$estimator": {"class": "SingleMLPClassifier", "params": {}, "state": {}, "derived": []}},
    {"$estimator": {"class": "SingleMLPClassifier", "params": {}, "state": {}}},
    {"$random_state": ["MT19937", [1, 2], 0, 0, 0.0]},
    {"$distribution": {"module": "scipy.stats", "name": "randint", "args": [0, 10**300],
                       "kwds": {}}},
    {"$splitter": {"module": "sklearn.model_selection", "class": "KFold",
                   "params": {"n_splits": 10**12}}},
    {"$masked_array": {"data": [1, 2], "mask": [True], "fill_value": 0}},
]

_DESCRS = [
    "<f8", "<f4", ">f8", "<i8", "|b1", "<U3", "|O", "<M8[s]", "|V8", "[('a', '<f8')]", "<f16",
]


# ------------------------------------------------------------------- raw bytes
def flip_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    return "flip", bytes(data)


def flip_directory(data, rng):
    """Flip bytes in the zip directory at the end, which no CRC guards."""
    data = bytearray(data)
    start = max(0, data.rfind(b"PK\x01\x02", 0, len(data)) - rng.randrange(0, 512))
    for _ in range(rng.randint(1, 4)):
        data[rng.randrange(start, len(data))] ^= rng.randint(1, 255)
    return "flip_directory", bytes(data)


def truncate(data, rng):
    return "truncate", data[: rng.randrange(len(data))]


def insert_bytes(data, rng):
    at = rng.randrange(len(data) + 1)
    noise = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    return "insert", data[:at] + noise + data[at:]


def delete_bytes(data, rng):
    at = rng.randrange(len(data))
    return "delete", data[:at] + data[at + rng.randint(1, 64):]


RAW_MUTATIONS = [flip_bytes, flip_directory, truncate, insert_bytes, delete_bytes]


# ------------------------------------------------------------ rebuilt archives
def members_of(data):
    """``{name: bytes}`` of a valid archive's members, in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rezip(members, compress=False):
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", compression=method) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def _npy_parts(content):
    """``(version byte, header text, data bytes)`` of a ``.npy`` member."""
    major = content[6]
    size = 2 if major == 1 else 4
    length = struct.unpack("<H" if size == 2 else "<I", content[8: 8 + size])[0]
    header = content[8 + size: 8 + size + length].decode("latin1")
    return major, header, content[8 + size + length:]


def _npy(major, header, payload):
    header = header.encode("latin1")
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header + payload


def _array_members(members):
    return [name for name in members if name != "__document__.npy"]


def grow_header(data, rng):
    """An array's header claims another shape (up to 10^12 elements), dtype,
    order or header length; the data stays as it was."""
    members = members_of(data)
    name = rng.choice(_array_members(members))
    major, header, payload = _npy_parts(members[name])
    fields = ast.literal_eval(header)
    choice = rng.randrange(5)
    if choice == 0:
        dims = [rng.choice([0, 1, 2, 7, 10**6, 10**12, 2**62]) for _ in range(rng.randint(1, 3))]
        fields["shape"] = tuple(dims)
    elif choice == 1:
        fields["descr"] = rng.choice(_DESCRS)
    elif choice == 2:
        fields["fortran_order"] = not fields["fortran_order"]
    elif choice == 3:  # a longer header, as version 2.0 allows (up to 4 GiB)
        major = 2
        header = header.rstrip("\n") + " " * rng.choice([10, 5000, 70000]) + "\n"
        return "grow_header_length", rezip({**members, name: _npy(major, header, payload)})
    else:
        shape = list(fields["shape"]) or [1]
        shape[rng.randrange(len(shape))] *= rng.choice([2, 1000, 10**9])
        fields["shape"] = tuple(shape)
    text = "{" + "".join(f"'{k}': {v!r}, " for k, v in sorted(fields.items())) + "}"
    text = text.ljust(len(header) - 1) + "\n"
    return "grow_header", rezip({**members, name: _npy(major, text, payload)})


def _nodes(value, path=()):
    """Every ``(path, value)`` of a JSON value, depth first."""
    yield path, value
    if isinstance(value, dict):
        items = value.items()
    else:
        items = enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from _nodes(child, path + (key,))


def _set(document, path, value):
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value


_DELETE = object()


def edit_document(data, rng):
    """A value of the JSON document replaced by another (or deleted)."""
    members = members_of(data)
    _, _, payload = _npy_parts(members["__document__.npy"])
    document = json.loads(payload)
    paths = [path for path, _ in _nodes(document) if path]
    path = rng.choice(paths)
    value = _DELETE if rng.random() < 0.15 else rng.choice(_HOSTILE_VALUES)
    if value is _DELETE and not isinstance(path[-1], str):
        value = None
    _set(document, path, value)
    text = json.dumps(document).encode()
    return "edit_document", rezip({**members, "__document__.npy": _document_member(text)})


def flip_document(data, rng):
    """Bytes of the JSON text flipped, the archive rebuilt (valid CRC)."""
    members = members_of(data)
    _, _, payload = _npy_parts(members["__document__.npy"])
    text = bytearray(payload)
    for _ in range(rng.randint(1, 3)):
        text[rng.randrange(len(text))] ^= rng.randint(1, 255)
    return "flip_document", rezip({**members, "__document__.npy": _document_member(bytes(text))})


def _document_member(text):
    import numpy as np

    out = io.BytesIO()
    np.save(out, np.frombuffer(text, dtype=np.uint8))
    return out.getvalue()


def flip_array(data, rng):
    """Bytes of an array's data flipped, the archive rebuilt (valid CRC):
    other weights, NaN or infinite ones among them."""
    members = members_of(data)
    name = rng.choice(_array_members(members))
    major, header, payload = _npy_parts(members[name])
    if not payload:
        return "flip_array", data
    payload = bytearray(payload)
    for _ in range(rng.randint(1, 4)):
        # 0x7f / 0xff in a float's top byte makes NaN or inf
        payload[rng.randrange(len(payload))] = rng.choice([0x7F, 0xFF, 0x00, rng.randrange(256)])
    return "flip_array", rezip({**members, name: _npy(major, header, bytes(payload))})


def reshape_members(data, rng):
    """Members dropped, renamed, duplicated or added."""
    members = members_of(data)
    names = list(members)
    name = rng.choice(names)
    choice = rng.randrange(4)
    if choice == 0:
        del members[name]
    elif choice == 1:
        new = rng.choice(["evil.npy", "a999.npy", "../x.npy", "a0", "__document__.npy"])
        members[new] = members.pop(name)
    elif choice == 2:
        members[f"extra{rng.randrange(10)}.npy"] = members[name]
    else:
        other = rng.choice(names)
        members[name], members[other] = members[other], members[name]
    return "reshape_members", rezip(members, compress=rng.random() < 0.5)


REBUILT_MUTATIONS = [grow_header, edit_document, flip_document, flip_array, reshape_members]
