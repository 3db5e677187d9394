"""The container of skpmlp's files: a JSON document and plain arrays, read strictly.

A file is a zip archive (what :func:`numpy.savez` writes) of ``.npy``
members: ``__document__.npy`` holds the UTF-8 bytes of a JSON document,
every other member one plain numeric or string array. :func:`write_archive`
writes it; :func:`read_archive` reads it back and refuses, with
:class:`InvalidFileError`, anything else: a file that is not a zip archive
or is truncated, a member that is compressed other than by deflate,
encrypted, overlapping another or claiming to expand more than deflate
can, an ``.npy`` header that is malformed, names a dtype other than a plain
number, bool or string one, or claims more (or fewer) bytes than its member
holds, and a document that is not strict JSON (or nests absurdly deep).

Every size is checked against the bytes actually present before anything
of that size is allocated, so a header claiming 10^12 elements is refused
without allocating them, and the memory a read takes is bounded by the
data the file holds (at most 1032 times the file's size for deflated
members, deflate's own limit). Nothing is unpickled and nothing of the
file is evaluated as code: headers are Python literals read with
:func:`ast.literal_eval`, the document is JSON. zip's own CRC-32 checks
every member's bytes.

This module knows nothing of estimators: :mod:`skpmlp.io` builds them from
the document, and checkpoints reuse the same container.
"""

import ast
import itertools
import json
import math
import os
import re
import struct
import zipfile
import zlib

import numpy as np

__all__ = ["DOCUMENT_KEY", "InvalidFileError", "is_plain_dtype", "read_archive", "write_archive"]

#: The member holding the JSON document.
DOCUMENT_KEY = "__document__"

#: Member names: an identifier (what ``np.savez`` keywords are) and ``.npy``.
_MEMBER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\.npy")

#: dtypes an array member may have: bool, integers, floats, complex and
#: fixed-width strings, in either byte order. No objects, no structures,
#: no datetimes, no void.
_DESCR = re.compile(r"[<>|=]?(b1|[iu][1248]|f[248]|c(8|16)|U[1-9][0-9]{0,5}|S[1-9][0-9]{0,6})")

#: numpy writes ``.npy`` headers of at most a few hundred bytes for the
#: dtypes above; 4 KiB leaves room for any shape numpy can hold.
_MAX_HEADER_BYTES = 4096

#: Most dimensions an array member may have (numpy's own limit).
_MAX_NDIM = 64

#: Deflate expands at most 1032 times (258-byte matches from 2-bit codes):
#: a deflated member claiming more is lying about its size.
_DEFLATE_MAX_RATIO = 1032

#: Deepest nesting of lists and objects the document may have; files
#: skpmlp writes stay far below it (an estimator inside a search inside
#: an ensemble nests about 15 deep).
_MAX_DEPTH = 200

_NPY_MAGIC = b"\x93NUMPY"
_END_RECORD = b"PK\x05\x06"
_END_RECORD_SEARCH = 22 + 65535
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_READ_CHUNK = 1 << 20


class InvalidFileError(ValueError):
    """A file :func:`skpmlp.io.load` refuses: not skpmlp's, or damaged.

    The message says what is wrong (and, where the cause is an error of the
    zip or JSON layer, that error's type and text). Nothing of a refused
    file was executed, and no estimator was built from it.
    """


def is_plain_dtype(dtype):
    """Whether arrays of ``dtype`` can be members of an archive: bool,
    integers, floats, complex and non-empty fixed-width strings.

    Parameters
    ----------
    dtype : numpy.dtype

    Returns
    -------
    bool
    """
    return bool(_DESCR.fullmatch(np.dtype(dtype).str))


def write_archive(file, document, arrays, *, compress=False):
    """Write ``document`` and ``arrays`` as one archive.

    Parameters
    ----------
    file : str, path-like or binary file object
        The archive is written whatever the name (no ``.npz`` appended).
    document : dict
        JSON data; non-finite floats are refused (tag them first).
    arrays : dict of str to ndarray
        Plain arrays (no object dtype), by member name.
    compress : bool, default=False
        Deflate the members.
    """
    text = json.dumps(document, allow_nan=False, separators=(",", ":"))
    members = {DOCUMENT_KEY: np.frombuffer(text.encode("utf-8"), dtype=np.uint8), **arrays}
    savez = np.savez_compressed if compress else np.savez
    if hasattr(file, "write"):
        savez(file, **members)
    else:
        # through a file object, so numpy does not append ".npz" to the name
        with open(os.fspath(file), "wb") as handle:
            savez(handle, **members)


def read_archive(file):
    """Read an archive written by :func:`write_archive`, refusing any other.

    Parameters
    ----------
    file : str, path-like or binary file object
        A file object must be seekable.

    Returns
    -------
    document : dict
        The JSON document.
    arrays : dict of str to ndarray
        Every other member, by name (without ``.npy``).

    Raises
    ------
    InvalidFileError
        If the file is not such an archive, or any part of it is damaged or
        inconsistent; nothing larger than the file's own data is allocated
        before that is known.
    OSError
        If the file cannot be opened or read (no such file, permissions).
    """
    if hasattr(file, "read"):
        return _read(file, repr(file))
    with open(os.fspath(file), "rb") as handle:
        return _read(handle, repr(os.fspath(file)))


def _read(handle, name):
    start = handle.read(8)
    if not start.startswith(_ZIP_MAGIC):
        raise InvalidFileError(f"{name} is not a skpmlp file: {_what_it_is(start)}.")
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    # a zip ends with its directory's end record (then a comment of at most
    # 64 KiB): where it is missing, the end of the file is
    handle.seek(max(0, size - _END_RECORD_SEARCH))
    if _END_RECORD not in handle.read():
        raise InvalidFileError(
            f"{name} is truncated or damaged: it starts as a zip archive but its zip directory, "
            f"at the end of the file, is missing."
        )
    handle.seek(0)
    try:
        with zipfile.ZipFile(handle) as archive:
            infos = _checked_members(archive.infolist(), size)
            if DOCUMENT_KEY not in infos:
                raise InvalidFileError(
                    f"{name} is not a skpmlp file: it has no {DOCUMENT_KEY} member (it is "
                    f"another zip or .npz archive)."
                )
            arrays = {key: _read_member(archive, info) for key, info in infos.items()}
    except InvalidFileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError,
            struct.error, UnicodeDecodeError, NotImplementedError, RuntimeError, OverflowError,
            IndexError, KeyError) as exc:
        # the zip layer's errors on a damaged file: truncated, bad CRC,
        # offsets past the end, unknown compression, encrypted members
        raise InvalidFileError(
            f"{name} is damaged or not a skpmlp file: its zip container cannot be read "
            f"({type(exc).__name__}: {exc})."
        ) from exc
    return _document(arrays.pop(DOCUMENT_KEY), name), arrays


def _what_it_is(start):
    """What a file starting with the bytes ``start`` is, for a refusal."""
    if not start:
        return "it is empty"
    if start.startswith(_NPY_MAGIC):
        return "it is a single .npy array, not an .npz archive"
    if start[:1] == b"\x80" or start[:1] in (b"(", b"]", b"}"):
        return "it looks like a pickle, which skpmlp.io never loads (it could run code)"
    return "it is not an .npz (zip) archive"


def _checked_members(infos, size):
    """``{key: ZipInfo}`` of an archive's members, each checked before any
    of it is read: name, compression, encryption, sizes and position."""
    members = {}
    for info in infos:
        if not _MEMBER_NAME.fullmatch(info.filename):
            raise InvalidFileError(
                f"Invalid skpmlp file: member name {info.filename[:80]!r} is not an array "
                f"name ending in .npy."
            )
        key = info.filename[: -len(".npy")]
        if key in members:
            raise InvalidFileError(f"Invalid skpmlp file: member {info.filename!r} appears twice.")
        if info.flag_bits & 0x1:
            raise InvalidFileError(f"Invalid skpmlp file: member {info.filename!r} is encrypted.")
        if info.compress_type == zipfile.ZIP_STORED:
            plausible = info.file_size == info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            plausible = info.file_size <= _DEFLATE_MAX_RATIO * info.compress_size + 64
        else:
            raise InvalidFileError(
                f"Invalid skpmlp file: member {info.filename!r} uses zip compression method "
                f"{info.compress_type}; skpmlp files are stored or deflated."
            )
        if not plausible or info.header_offset + info.compress_size > size:
            raise InvalidFileError(
                f"Invalid skpmlp file: member {info.filename!r} claims {info.file_size} bytes "
                f"({info.compress_size} compressed at offset {info.header_offset}), which a "
                f"{size}-byte file cannot hold."
            )
        members[key] = info
    # members must not share bytes: one deflated stream read by many members
    # would expand the file far beyond the bound above
    ordered = sorted(members.values(), key=lambda info: info.header_offset)
    for before, after in itertools.pairwise(ordered):
        end = before.header_offset + 30 + len(before.orig_filename) + before.compress_size
        if end > after.header_offset:
            raise InvalidFileError(
                f"Invalid skpmlp file: members {before.filename!r} and {after.filename!r} overlap."
            )
    return members


def _read_member(archive, info):
    """One ``.npy`` member as an array, its header checked against the
    member's size before its data is allocated."""
    where = f"Invalid skpmlp file: member {info.filename!r}"
    with archive.open(info) as stream:
        magic = _read_exactly(stream, 8, where, "its .npy magic string")
        if magic[:6] != _NPY_MAGIC or magic[6:] not in (b"\x01\x00", b"\x02\x00", b"\x03\x00"):
            raise InvalidFileError(f"{where} is not a .npy array of format 1.0, 2.0 or 3.0.")
        major = magic[6]
        length_format = "<H" if major == 1 else "<I"
        length_bytes = _read_exactly(
            stream, struct.calcsize(length_format), where, "its header length"
        )
        header_length = struct.unpack(length_format, length_bytes)[0]
        if header_length > _MAX_HEADER_BYTES:
            raise InvalidFileError(
                f"{where} has a {header_length}-byte .npy header; at most {_MAX_HEADER_BYTES} "
                f"are read."
            )
        header = _read_exactly(stream, header_length, where, "its .npy header")
        encoding = "utf-8" if major == 3 else "latin1"
        shape, fortran_order, dtype = _parse_header(header, encoding, where)
        n_bytes = math.prod(shape) * dtype.itemsize
        held = info.file_size - len(magic) - len(length_bytes) - header_length
        if n_bytes != held:
            raise InvalidFileError(
                f"{where}: its header claims shape {shape} of {dtype} ({n_bytes} bytes) but the "
                f"member holds {max(held, 0)} bytes of data."
            )
        buffer = bytearray(n_bytes)
        view = memoryview(buffer)
        filled = 0
        while filled < n_bytes:
            count = stream.readinto(view[filled: filled + _READ_CHUNK])
            if not count:
                raise InvalidFileError(f"{where} ends after {filled} of its {n_bytes} data bytes.")
            filled += count
        # reading to the end checks the member's CRC-32
        if stream.read(1):
            raise InvalidFileError(f"{where} holds more bytes than its header says.")
    array = np.frombuffer(buffer, dtype=dtype)
    if fortran_order:
        return array.reshape(shape[::-1]).transpose()
    return array.reshape(shape)


def _read_exactly(stream, n, where, what):
    data = stream.read(n)
    if len(data) != n:
        raise InvalidFileError(f"{where} ends inside {what}.")
    return data


def _parse_header(header, encoding, where):
    """``(shape, fortran_order, dtype)`` of a ``.npy`` header, strictly:
    a literal dict of exactly numpy's three keys, a plain dtype string,
    a tuple of non-negative ints."""
    try:
        fields = ast.literal_eval(header.decode(encoding))
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError,
            UnicodeDecodeError) as exc:
        raise InvalidFileError(
            f"{where} has an unreadable .npy header ({type(exc).__name__})."
        ) from exc
    if not isinstance(fields, dict) or set(fields) != {"descr", "fortran_order", "shape"}:
        raise InvalidFileError(
            f"{where} has a .npy header that is not numpy's (descr, fortran_order, shape)."
        )
    descr, fortran_order, shape = fields["descr"], fields["fortran_order"], fields["shape"]
    if isinstance(descr, str) and descr.lstrip("<>|=").startswith("O"):
        raise InvalidFileError(
            f"{where} holds Python objects, i.e. pickled data, which skpmlp.io never unpickles "
            f"(allow_pickle=False): unpickling runs code."
        )
    if not isinstance(descr, str) or not _DESCR.fullmatch(descr):
        raise InvalidFileError(
            f"{where} has dtype {str(descr)[:80]!r}; skpmlp files hold only bool, integer, "
            f"float, complex and string arrays."
        )
    if type(fortran_order) is not bool:
        raise InvalidFileError(f"{where} has a .npy header whose fortran_order is not a bool.")
    if (type(shape) is not tuple or len(shape) > _MAX_NDIM
            or not all(type(n) is int and n >= 0 for n in shape)):
        raise InvalidFileError(
            f"{where} has an invalid shape {str(shape)[:80]} in its .npy header."
        )
    return shape, fortran_order, np.dtype(descr)


def _document(member, name):
    """The JSON document of the ``__document__`` member, strictly parsed."""
    if member.dtype != np.uint8 or member.ndim != 1:
        raise InvalidFileError(f"Invalid skpmlp file: {DOCUMENT_KEY} is not a byte string.")
    try:
        document = json.loads(member.tobytes().decode("utf-8"), parse_constant=_reject_constant)
    except InvalidFileError:
        raise
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError included
        raise InvalidFileError(
            f"{name} is damaged or not a skpmlp file: its document is not JSON "
            f"({type(exc).__name__}: {str(exc)[:200]})."
        ) from exc
    if not isinstance(document, dict):
        raise InvalidFileError(f"{name} is not a skpmlp file: its document is not a JSON object.")
    _check_depth(document)
    return document


def _reject_constant(name):
    raise InvalidFileError(f"Invalid skpmlp file: non-standard JSON constant {name}.")


def _check_depth(document):
    """Refuse a document nested deeper than :data:`_MAX_DEPTH`, before any
    recursive code walks it."""
    pending = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > _MAX_DEPTH:
            raise InvalidFileError(
                f"Invalid skpmlp file: its document nests deeper than {_MAX_DEPTH} levels."
            )
        children = value.values() if isinstance(value, dict) else value
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
