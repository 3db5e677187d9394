"""A checkpoint's file: written atomically, read strictly.

:func:`write_file` writes a tree of state (:mod:`skpmlp._persistence._codec`, with the
data tags of :mod:`skpmlp._persistence._data_tags`) as
skpmlp's pickle-free archive (:mod:`skpmlp._persistence._archive`) to a temporary file in the
same directory, flushes and fsyncs it, renames it over the previous file
and fsyncs the directory: a kill at any moment leaves the previous file
whole. The temporary file's name holds the writer's process id, so the
leftovers of a killed writer are recognised and removed
(:func:`remove_stale_temporaries`). :func:`read_file` reads a file back and
refuses, with :class:`~skpmlp._persistence._archive.InvalidFileError`, anything that is not a
checkpoint of this format and skpmlp version.

``SKPMLP_CHECKPOINT_WRITE_DELAY`` (seconds; a testing hook) makes every
write wait that long between its temporary file and the rename, so that
tests can kill a fit in the middle of a write.
"""

import os
import re
import time
import uuid

from .._core._version import __version__
from ._archive import InvalidFileError, read_archive, write_archive
from ._codec import decode, encode
from ._data_tags import DATA_TAGS

#: What a checkpoint's document says it is.
FORMAT = "skpmlp.checkpoint"
#: Version of the layout; another version is refused.
FORMAT_VERSION = 2
#: The testing hook of the module docstring.
DELAY_VARIABLE = "SKPMLP_CHECKPOINT_WRITE_DELAY"


_FIX = "Delete the file or pass another checkpoint path to start afresh."


def write_file(path, tree):
    """Write ``tree`` to ``path`` atomically (see the module docstring)."""
    path = os.path.abspath(os.fspath(path))
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, f".{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    document, arrays = encode(tree, DATA_TAGS, root="checkpoint")
    try:
        with open(temporary, "wb") as handle:
            write_archive(handle, document, arrays)
            handle.flush()
            os.fsync(handle.fileno())
        delay = float(os.environ.get(DELAY_VARIABLE, 0) or 0)
        if delay > 0:
            time.sleep(delay)
        os.replace(temporary, path)
    except BaseException:
        remove_file(temporary)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory):
    """Make a rename in ``directory`` durable (POSIX; elsewhere a no-op)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def remove_file(path):
    """Remove ``path`` if it exists."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def remove_stale_temporaries(path):
    """Remove the temporary files of writes to ``path`` (or to the files
    named after it: shards) that a killed process left behind."""
    directory, name = os.path.split(os.path.abspath(os.fspath(path)))
    pattern = re.compile(re.escape(f".{name}") + r".*\.tmp-(\d+)-[0-9a-f]+")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for other in names:
        match = pattern.fullmatch(other)
        if match and not _alive(int(match.group(1))):
            remove_file(os.path.join(directory, other))


def _alive(pid):
    """Whether process ``pid`` still runs (on this machine)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def read_file(path, kind=FORMAT):
    """The tree of a checkpoint file, its format checked.

    Raises
    ------
    InvalidFileError
        If the file is not a checkpoint of this format version.
    """
    tree = decode(*read_archive(path), DATA_TAGS, what="checkpoint")
    found = tree.get("format")
    if found != kind:
        raise InvalidFileError(f"{path!r} is not a skpmlp checkpoint ({found!r}). {_FIX}")
    if tree.get("version") != FORMAT_VERSION or tree.get("skpmlp") != __version__:
        raise InvalidFileError(
            f"The checkpoint {path!r} was written by skpmlp {tree.get('skpmlp')} (checkpoint "
            f"format {tree.get('version')}); this is skpmlp {__version__} (format "
            f"{FORMAT_VERSION}), which cannot go on from it. {_FIX}"
        )
    return tree
