"""Checkpoints of a search: its whole state in one file, replaced atomically, resumed.

With ``checkpoint=path`` a fit keeps the state of everything it trains in
one file (:class:`SearchCheckpoint`), written every ``checkpoint_every``
seconds at an epoch's end, at every halving rung, when training halts
(Ctrl-C, ``max_time``) and when a training call ends:

* what identifies the search (:func:`~skpmlp._persistence._fingerprint.search_identity`: the
  estimator, its parameters, digests of X, y, sample_weight and groups),
  the seed, the folds and validation rows themselves (a splitter need
  not split the same way twice) and a digest of the drawn population;
* one *section* per training call of the fit (the search, each refit),
  keyed by what it trains: the engine's state of the call (its plan of
  runs, the finished runs' results, the others' weights, optimizer state,
  batch generators, stopping counters, schedules and curves, the halving
  decisions taken), or for a sharded call the shards' plan, the finished
  shards' results and the decisions, each unfinished shard keeping its own
  state in a file of its own next to the checkpoint (:class:`ShardCheckpoint`,
  written by the worker that trains it).

A file is written as a temporary file in the same directory, flushed and
fsynced, then renamed over the previous one (and the directory fsynced):
a kill at any moment leaves the previous checkpoint whole. Files are
skpmlp's pickle-free archives (:mod:`skpmlp._persistence._archive`,
:mod:`skpmlp._persistence._codec`).

The next ``fit`` with the same path, parameters and data goes on from the
file: it re-trains nothing that finished and skips nothing that had not;
once every section finished it returns at once. Another search (other
parameters, other data) is refused, saying what differs.

How a file is written and read is :mod:`skpmlp._persistence._checkpoint_file`'s job.
"""

import os
import time
import uuid
import warnings

import numpy as np

from .._core._version import __version__
from .._engine._run_state import restore_result, result_state
from ._archive import InvalidFileError
from ._checkpoint_file import (
    FORMAT,
    FORMAT_VERSION,
    read_file,
    remove_file,
    remove_stale_temporaries,
    write_file,
)
from ._fingerprint import describe, search_identity, text_digest

_FIX = "Delete the file or pass another checkpoint path to start afresh."


# ------------------------------------------------------------- the search
def open_checkpoint(estimator, **data):
    """The :class:`SearchCheckpoint` of ``estimator``'s fit on ``data``
    (the validated ``X``, ``y``, ``sample_weight`` and ``groups``), or
    None without ``checkpoint``.

    Raises
    ------
    ValueError
        For settings a checkpoint cannot keep (``warm_start=True``), or
        a file written by another search.
    InvalidFileError
        If the file is not a checkpoint, or is damaged.
    """
    if getattr(estimator, "checkpoint", None) is None:
        return None
    if estimator.warm_start:
        raise ValueError(
            "checkpoint with warm_start=True is not supported: a warm start continues the "
            "fitted state in memory, a checkpoint the state of an unfinished fit in its file. "
            "Use one or the other."
        )
    return SearchCheckpoint.open(estimator, data)


class CheckpointWarning(UserWarning):
    """Warning of a fit whose checkpoint could not be written.

    A full disk, a permission changed or a directory gone: training goes
    on, the write is retried at the next interval, and the fit returns its
    estimator as usual; the file holds the last write that succeeded.
    """


def check_path(checkpoint):
    """The absolute path of ``checkpoint``, refused before anything trains
    where no checkpoint can ever be written.

    Raises
    ------
    ValueError
        For an empty path, an existing directory, a missing directory, or
        one this process may not write in.
    """
    raw = os.fspath(checkpoint)
    if not str(raw).strip():
        raise ValueError("checkpoint must be a file path; got an empty string (None: no "
                         "checkpoint).")
    path = os.path.abspath(raw)
    directory = os.path.dirname(path)
    if os.path.isdir(path):
        raise ValueError(f"checkpoint={raw!r} is a directory; give a file path in it, e.g. "
                         f"{os.path.join(raw, 'search.ckpt')!r}.")
    if not os.path.isdir(directory):
        raise ValueError(f"checkpoint={raw!r}: the directory {directory!r} does not exist; "
                         f"create it first.")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ValueError(f"checkpoint={raw!r}: this process may not write in {directory!r}.")
    return path


class SearchCheckpoint:
    """The checkpoint of one search's fit (see the module docstring).

    Build it with :meth:`open`.

    Parameters
    ----------
    path : str
    every : float
        Seconds between two checkpoints (at an epoch's end).
    identity : dict
        What the search is (:func:`~skpmlp._persistence._fingerprint.search_identity`).
    content : dict, optional
        What the file held (a resumed search).
    """

    def __init__(self, path, every, identity, content=None):
        self.path, self.every, self.identity = path, float(every), identity
        self.content = content or {
            "format": FORMAT, "version": FORMAT_VERSION, "skpmlp": __version__,
            "identity": identity, "seed": None, "folds": None, "population": None,
            # tells this search's shard files from those of a deleted one
            "run_id": uuid.uuid4().hex,
            "sections": {},
        }
        self._last = time.monotonic()
        #: the error of the last write, if it failed (None: the file is current)
        self.failed = None

    @classmethod
    def open(cls, estimator, data):
        """The checkpoint of ``estimator``'s fit on ``data`` (see
        :func:`~skpmlp._persistence._fingerprint.search_identity`): the file's, if it exists.

        Raises
        ------
        ValueError
            If the file was written by another search, naming what differs.
        InvalidFileError
            If the file is not a checkpoint, or is damaged.
        """
        path = check_path(estimator.checkpoint)
        identity = search_identity(estimator, data)
        remove_stale_temporaries(path)
        if not os.path.exists(path):
            return cls(path, estimator.checkpoint_every, identity)
        content = read_file(path)
        _check_identity(path, content.get("identity"), identity)
        return cls(path, estimator.checkpoint_every, identity, content)

    def seed(self, seed, *, fixed):
        """The search's seed: the file's (a ``random_state`` that is not
        an int draws another), else ``seed``, recorded.

        Raises
        ------
        InvalidFileError
            If the file's seed is no seed (an int in [0, 2**32)), or is not
            ``seed`` where an int ``random_state`` fixes it (``fixed``).
        """
        saved = self.content["seed"]
        if saved is None:
            self.content["seed"] = int(seed)
            return int(seed)
        if isinstance(saved, bool) or not isinstance(saved, int) or not 0 <= saved < 2**32:
            raise InvalidFileError(f"Invalid checkpoint {self.path!r}: its seed {saved!r} is "
                                   f"not an int in [0, 2**32). {_FIX}")
        if fixed and saved != int(seed):
            raise InvalidFileError(f"Invalid checkpoint {self.path!r}: its seed {saved} is not "
                                   f"the seed {int(seed)} of random_state. {_FIX}")
        return saved

    def folds(self, plan, *, n_samples):
        """The fold plan and the engine's folds: the file's, else ``plan()``
        (``(folds, engine_folds)``), recorded.

        Raises
        ------
        InvalidFileError
            For saved folds that are not rows of the ``n_samples`` the fit has.
        """
        if self.content["folds"] is None:
            folds, engine_folds = plan()
            self.content["folds"] = {"folds": _pairs(folds), "engine": _pairs(engine_folds)}
        saved = self.content["folds"]
        pairs = _unpairs(saved["folds"]), _unpairs(saved["engine"])
        for name, folds in zip(("folds", "engine folds"), pairs):
            if not folds or not all(_are_rows(rows, n_samples, none=side == 1)
                                    for fold in folds for side, rows in enumerate(fold)):
                raise InvalidFileError(f"Invalid checkpoint {self.path!r}: its {name} are not "
                                       f"rows of the {n_samples} the fit has. {_FIX}")
        return pairs

    def check_population(self, population):
        """The population drawn now must be the file's (the same seed and
        parameters draw it; another numpy or scipy might not)."""
        digest = text_digest(describe([population.shown_params(), list(population.repeats)]))
        if self.content["population"] is None:
            self.content["population"] = digest
        elif self.content["population"] != digest:
            raise ValueError(
                f"The checkpoint {self.path!r} holds another population than this fit draws "
                f"from the same parameters and seed (another numpy or scipy version draws "
                f"differently). {_FIX}"
            )

    def start(self):
        """Write the file now, before anything trains (a write that fails
        warns, as any: see :meth:`write`)."""
        self.write()

    def due(self):
        """Whether ``every`` seconds passed since the last write."""
        return time.monotonic() - self._last >= self.every

    def write(self):
        """Write the file; where that fails (``OSError``: a full disk, a
        permission changed, a directory removed), warn the first time
        (:class:`CheckpointWarning`, naming the path and the error) and
        go on: the next write, at the next interval, tries again."""
        try:
            write_file(self.path, self.content)
        except OSError as error:
            if self.failed is None:
                warnings.warn(
                    f"Could not write the checkpoint {self.path!r} ({error}); training goes "
                    f"on, and the write is retried every checkpoint_every="
                    f"{self.every:g} s. The file holds the last state that was written.",
                    CheckpointWarning, stacklevel=2,
                )
            self.failed = error
        else:
            if self.failed is not None:
                warnings.warn(f"The checkpoint {self.path!r} is written again.",
                              CheckpointWarning, stacklevel=2)
            self.failed = None
        self._last = time.monotonic()

    def section(self, key):
        """The :class:`CallCheckpoint` of the training call ``key``."""
        return CallCheckpoint(self, key)


def _are_rows(rows, n_samples, *, none=False):
    """Whether ``rows`` are distinct row indices in ``[0, n_samples)`` (or
    None, where ``none``: a fold without evaluation rows)."""
    if rows is None:
        return none
    rows = np.asarray(rows)
    return (rows.ndim == 1 and rows.dtype.kind in "iu" and len(rows) > 0
            and rows.min() >= 0 and rows.max() < n_samples and len(np.unique(rows)) == len(rows))


def _pairs(folds):
    return [[train, rows] for train, rows in folds]


def _unpairs(pairs):
    return [(train, rows) for train, rows in pairs]


def _check_identity(path, saved, identity):
    """Refuse a checkpoint of another search, naming what differs."""
    if not isinstance(saved, dict):
        raise InvalidFileError(f"The checkpoint {path!r} does not say which search it is. {_FIX}")
    if saved.get("estimator") != identity["estimator"]:
        raise ValueError(
            f"The checkpoint {path!r} was written by a {saved.get('estimator')} search, not a "
            f"{identity['estimator']}. {_FIX}"
        )
    differences = []
    params, saved_params = identity["params"], saved.get("params") or {}
    for name in sorted(set(params) | set(saved_params)):
        before, now = saved_params.get(name, "(absent)"), params.get(name, "(absent)")
        if before != now:
            differences.append(f"{name}: {_short(before)} in the checkpoint, {_short(now)} now")
    data, saved_data = identity["data"], saved.get("data") or {}
    changed = [name for name in data if data[name] != saved_data.get(name)]
    if changed:
        differences.append(f"the data ({', '.join(changed)}) differ from the checkpoint's")
    if differences:
        raise ValueError(
            f"The checkpoint {path!r} was written by another search: "
            + "; ".join(differences)
            + f". Fit with the checkpoint's parameters and data to resume it. {_FIX}"
        )


def _short(text, limit=80):
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------ sections
def call_key(name, spec, config, folds):
    """The section of a training call: its name ("fused run", "refit
    run") and a digest of what it trains (the models, the settings, the
    folds), the same in every fit of the same search."""
    return f"{name}|{text_digest(describe([spec, config, [list(f) for f in folds]]))}"


class CallCheckpoint:
    """Where one training call of a fit saves its state (an engine
    ``checkpoint`` option, see :class:`~._engine._runs.RunOptions`).

    Parameters
    ----------
    search : SearchCheckpoint
    key : str
        The call's section.
    """

    def __init__(self, search, key):
        self.search, self.key = search, key

    @property
    def saved(self):
        """The section as the file holds it (None for a new call)."""
        return self.search.content["sections"].get(self.key)

    @property
    def state(self):
        """The engine state the call goes on from, or None."""
        saved = self.saved
        return None if saved is None or saved["kind"] != "call" else saved["state"]

    @property
    def finished(self):
        """Whether the call trained to its end in a previous fit."""
        saved = self.saved
        return saved is not None and saved["kind"] == "done"

    def result(self):
        """``(result, shards)`` of a :attr:`finished` call, as
        :func:`~skpmlp._execution._training.train_models` returned them."""
        saved = self.saved
        return restore_result(saved["result"]), [dict(info) for info in saved["shards"]]

    def finish(self, result, shards):
        """Replace the call's state by its result (it trained to its end)."""
        self.store({"kind": "done", "result": result_state(result),
                    "shards": [dict(info) for info in shards]})

    def due(self):
        return self.search.due()

    def save(self, state):
        """Save the state of the unfinished call (the engine's, or a
        sharded call's)."""
        self.store({"kind": "call", "state": state})

    def store(self, section):
        """Put the section in the file and write it."""
        self.search.content["sections"][self.key] = section
        self.search.write()

    def shard(self, index, models):
        """The :class:`ShardCheckpoint` of the call's shard ``index`` (of
        ``models``)."""
        tag = text_digest(self.key)[:12]
        return ShardCheckpoint(
            f"{self.search.path}.{tag}.shard{index}", self.search.every,
            owner=text_digest(f"{self.search.content['run_id']}|{self.key}|{index}|"
                              f"{describe(list(map(int, models)))}"),
        )


class ShardCheckpoint:
    """Where a shard of a sharded call keeps its own state: a file next to
    the search's checkpoint, written by the worker that trains the shard
    (with a Dask cluster, the directory must be one the workers share).
    Picklable: it travels with the shard's task.

    Parameters
    ----------
    path : str
    every : float
    owner : str
        A digest of the search, the call and the shard's models: a file of
        another owner is ignored.
    """

    def __init__(self, path, every, owner):
        self.path, self.every, self.owner = path, every, owner
        self._last = None

    def load(self):
        """The shard's saved engine state, or None."""
        if not os.path.exists(self.path):
            return None
        tree = read_file(self.path, kind=FORMAT + ".shard")
        return tree["state"] if tree.get("owner") == self.owner else None

    def due(self):
        if self._last is None:
            self._last = time.monotonic()
        return time.monotonic() - self._last >= self.every

    def save(self, state):
        """Write the shard's state; a write that fails is skipped (the
        shard trains on, and its search's file keeps what the rungs saved)."""
        try:
            write_file(self.path, {"format": FORMAT + ".shard", "version": FORMAT_VERSION,
                                   "skpmlp": __version__, "owner": self.owner,
                                   "state": state})
        except OSError:
            pass  # in a worker, where a warning would reach nobody: retried when due
        self._last = time.monotonic()

    def remove(self):
        """Remove the file (its shard finished: the search's file holds it)."""
        remove_file(self.path)
