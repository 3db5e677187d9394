"""Data-parallel fused runs: the rows of every step split over the ranks of
a ``torch.distributed`` process group.

Every rank holds the whole data and draws the same epoch plan (the
planner's seed is the run's), then trains on its own contiguous share of
each step's global batch columns. The row weights of a batch are
normalised over the *global* batch before the split, so each rank's loss is
its share of every model's weighted batch mean and the sum of the ranks'
gradients is the gradient of the single-process step: one all-reduce of the
flat gradient buffer per step, then every rank applies the same fused
update. Epoch losses are summed the same way; the monitored scores are
computed on every rank from the (identical) weights over all evaluation
rows and rank 0's copy is broadcast, so that early stopping, halving, the
deadline and the memory plan take one decision everywhere.

A run opens two groups of its own (:meth:`DataParallel.session`): one for
the run's collectives, and a gloo group to report failures. A rank that
raises destroys the first, so a peer blocked in a collective fails at once
instead of waiting for a timeout, and every rank then learns, through the
second, which rank failed and why.
"""

import contextlib
import contextvars
import dataclasses
import datetime
import hashlib
import os
import pickle

import numpy as np
import torch
import torch.distributed as dist

from ._backends._choice import run_device
from ._train import train_population

#: torch's own default for gloo and NCCL process groups
_DEFAULT_TIMEOUT = 1800.0

_SETTING = contextvars.ContextVar("skpmlp_data_parallel", default=("auto", None))


class DataParallelError(RuntimeError):
    """A data-parallel run failed on another rank (or a rank stopped answering).

    Raised on every rank that did not fail itself.
    """


class _PeerFailure(RuntimeError):
    """A collective of the run failed: another rank left it."""


class _Reported(DataParallelError):
    """A failure every rank already learned of (no report to exchange)."""


@contextlib.contextmanager
def data_parallel(enabled=True, *, timeout=None):
    """Choose whether fits inside this block split their rows over the ranks.

    The ranks are those of the initialised ``torch.distributed`` process group.

    By default (outside any such block) a fit splits its rows whenever
    ``torch.distributed`` is initialised with more than one rank, e.g. in a
    script started with ``torchrun --nproc_per_node=N``. Every rank must
    then call ``fit`` with the same data and parameters.

    Parameters
    ----------
    enabled : bool or "auto", default=True
        True: split the rows, and raise at ``fit`` when no process group is
        initialised. False: every process trains alone on all rows (e.g. to
        fit a different search on each rank). "auto": the default behaviour.
    timeout : float, optional
        Seconds a rank waits for the others in any collective of the run
        before it fails (default 1800, torch's default).

    Yields
    ------
    None
        The block runs with the setting; the previous one is back after it.

    Examples
    --------
    >>> import skpmlp
    >>> with skpmlp.data_parallel(False):
    ...     pass  # fits here train on all rows in every process
    """
    if enabled not in (True, False, "auto"):
        raise ValueError(f"enabled must be True, False or 'auto'; got {enabled!r}.")
    if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds or None; got {timeout!r}.")
    token = _SETTING.set((enabled, timeout))
    try:
        yield
    finally:
        _SETTING.reset(token)


def current_data_parallel():
    """The :class:`DataParallel` a fit starting here runs with, or None
    (no process group, a single rank, or opted out).

    Raises
    ------
    ValueError
        Inside ``data_parallel(True)`` with no initialised process group.
    """
    enabled, timeout = _SETTING.get()
    if enabled is False:
        return None
    initialised = dist.is_available() and dist.is_initialized()
    if not initialised:
        if enabled is True:
            raise ValueError(
                "skpmlp.data_parallel(True) needs an initialised torch.distributed process group: "
                "call torch.distributed.init_process_group() first (e.g. in a script started "
                "with torchrun)."
            )
        return None
    if dist.get_world_size() == 1:
        return None
    return DataParallel(timeout)


def digest(*objects):
    """A short hash of numpy arrays (their bytes) and picklable objects."""
    h = hashlib.blake2b(digest_size=12)
    for obj in objects:
        if isinstance(obj, np.ndarray):
            h.update(repr((obj.shape, obj.dtype.str)).encode())
            h.update(np.ascontiguousarray(obj).data)
        else:
            h.update(pickle.dumps(obj))
    return h.hexdigest()


class DataParallel:
    """The ranks of a data-parallel fused run and its collectives.

    Parameters
    ----------
    timeout : float, optional
        Seconds any collective of the run may wait.

    Attributes
    ----------
    rank, world_size : int
    rows_per_rank : list of int or None
        Rows of each step's global batch that every rank trains on (set by
        :meth:`shard_plan`).
    """

    def __init__(self, timeout=None):
        self.timeout = datetime.timedelta(seconds=_DEFAULT_TIMEOUT if timeout is None else timeout)
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.rows_per_rank = None
        self._comm = self._control = self._device = None

    # ------------------------------------------------------------ device
    def device(self, device):
        """This rank's device for a resolved ``device``: plain ``"cuda"``
        becomes the rank's own GPU (``LOCAL_RANK``, as torchrun sets it,
        else the current device)."""
        if device != "cuda":
            return device
        local = os.environ.get("LOCAL_RANK")
        if local is None:
            return f"cuda:{torch.cuda.current_device()}"
        index = int(local) % torch.cuda.device_count()
        return f"cuda:{index}"

    # ----------------------------------------------------------- session
    @contextlib.contextmanager
    def session(self, device):
        """Open the run's groups; on any exception on any rank, fail every
        rank (see the module docstring); close the groups at the end."""
        ranks = list(range(self.world_size))
        backend = "nccl" if torch.device(device).type == "cuda" else "gloo"
        self._control = dist.new_group(ranks, timeout=self.timeout, backend="gloo")
        self._comm = dist.new_group(ranks, timeout=self.timeout, backend=backend)
        self._device = torch.device(device)
        try:
            yield self
            # the last collective: a rank that failed after the last step
            # still fails the others
            self.all_reduce(torch.zeros(1, device=self._device))
        except BaseException as error:
            self._fail(error)
            raise
        finally:
            for group in (self._comm, self._control):
                if group is not None:
                    dist.destroy_process_group(group)
            self._comm = self._control = None

    def _fail(self, error):
        """Break the run's collectives, tell every rank who failed and why,
        and raise :class:`DataParallelError` where this rank did not fail
        itself (the failing rank re-raises its own error)."""
        if isinstance(error, _Reported):
            return
        mine = None if isinstance(error, _PeerFailure) else f"{type(error).__name__}: {error}"
        if self._comm is not None:  # a peer blocked in a collective fails at once
            dist.destroy_process_group(self._comm)
            self._comm = None
        reports = [None] * self.world_size
        try:
            dist.all_gather_object(reports, ("error", mine), group=self._control)
            reports = [message for _, message in reports]
        except Exception:  # a rank died or hangs: nothing more to learn
            reports = [mine if r == self.rank else None for r in range(self.world_size)]
        if mine is not None:
            return
        failed = [f"rank {r}: {m}" for r, m in enumerate(reports) if m is not None]
        if not failed:
            raise DataParallelError(
                f"The data-parallel run stopped on rank {self.rank} of {self.world_size}: "
                f"another rank left the run or did not answer within "
                f"{self.timeout.total_seconds():g} s ({error})."
            ) from error
        raise DataParallelError(
            f"The data-parallel run failed on {'; '.join(failed)}. Every rank stopped."
        ) from error

    # ------------------------------------------------------- collectives
    def _collective(self, function, *args, **kwargs):
        if self._comm is None:
            raise _PeerFailure("the run's process group is closed")
        try:
            function(*args, group=self._comm, **kwargs)
        except RuntimeError as error:  # DistBackendError and gloo's errors included
            raise _PeerFailure(str(error)) from error

    def all_reduce(self, tensor):
        """Sum ``tensor`` over the ranks, in place."""
        self._collective(dist.all_reduce, tensor, op=dist.ReduceOp.SUM)
        return tensor

    def from_rank0(self, array):
        """Rank 0's copy of a float numpy ``array`` (None passes through)."""
        if array is None:
            return None
        t = torch.as_tensor(np.ascontiguousarray(array, dtype=np.float64)).to(self._device)
        self._collective(dist.broadcast, t, src=0)
        return t.cpu().numpy()

    def any(self, flag):
        """Whether ``flag`` is True on any rank."""
        t = torch.tensor([float(bool(flag))], dtype=torch.float64, device=self._device)
        return bool(self.all_reduce(t).item() > 0)

    def minimum(self, value):
        """The least of every rank's ``value`` (None: no limit)."""
        t = torch.tensor([np.inf if value is None else float(value)], dtype=torch.float64,
                         device=self._device)
        self._collective(dist.all_reduce, t, op=dist.ReduceOp.MIN)
        least = t.item()
        return None if np.isinf(least) else least

    def check_same(self, **fingerprint):
        """Raise ValueError on every rank unless every rank passed the same
        ``fingerprint`` (name -> comparable value)."""
        everyone = [None] * self.world_size
        dist.all_gather_object(everyone, ("check", fingerprint), group=self._control)
        # a rank that failed before the check sent its error report instead
        failed = [
            f"rank {r}: {m}" for r, (kind, m) in enumerate(everyone) if kind == "error" and m
        ]
        if failed:
            raise _Reported(
                f"The data-parallel run failed on {'; '.join(failed)}. Every rank stopped."
            )
        everyone = [theirs for _, theirs in everyone]
        for rank, theirs in enumerate(everyone):
            differ = [name for name in fingerprint if theirs.get(name) != everyone[0].get(name)]
            if differ:
                raise ValueError(
                    f"Every rank of a data-parallel fit must fit the same data and parameters; "
                    f"rank {rank} differs from rank 0 in {', '.join(differ)}. Give every rank the "
                    f"same X, y, sample_weight and estimator (an int random_state: with None "
                    f"every rank draws its own seeds, so its folds and initial weights differ), "
                    f"or fit inside skpmlp.data_parallel(False) to train each process alone."
                )

    # -------------------------------------------------------------- rows
    def shard_plan(self, plan):
        """This rank's share of an :class:`~skpmlp._engine._minibatch._batches.EpochPlan`: its
        contiguous slice of every step's batch columns. Weights stay
        normalised over the global batch; the counts, weight sums and
        stepping flags stay global; ``row_start`` says where its columns
        start (dropout masks hash a row's position in the global batch)."""
        bounds = np.linspace(0, plan.rows.shape[2], self.world_size + 1).round().astype(int)
        start, stop = bounds[self.rank], bounds[self.rank + 1]
        return dataclasses.replace(
            plan, rows=plan.rows[:, :, start:stop].contiguous(),
            weights=plan.weights[:, :, start:stop].contiguous(),
            row_start=plan.row_start + int(start),
        )

    def plan_rows(self, batch_size):
        """Set :attr:`rows_per_rank` for global batches of ``batch_size``
        rows; raise ValueError unless every rank gets rows of each."""
        bounds = np.linspace(0, batch_size, self.world_size + 1).round().astype(int)
        self.rows_per_rank = np.diff(bounds).tolist()
        if batch_size < self.world_size:
            raise ValueError(
                f"A data-parallel fit splits every batch over its {self.world_size} ranks, but "
                f"batches hold {batch_size} rows; use batch_size >= {self.world_size}."
            )


def train_data_parallel(dp, spec, config, X, y, folds, options):
    """:func:`~._train.train_population` with the rows split over the ranks
    of ``dp`` (``options``: the call's :class:`~._runs.RunOptions`); every
    rank returns the same :class:`~._spec.TrainResult`.

    ``config.device`` is resolved here (plain ``"cuda"``: the rank's own
    GPU). Every rank must pass the same data, folds, models and config:
    they are compared first, and a difference raises ValueError on every
    rank.
    """
    config = dataclasses.replace(config, device=dp.device(run_device(spec, config, X, folds)))
    with dp.session(config.device):
        dp.check_same(
            X=digest(X), y=digest(y), sample_weight=digest(options.sample_weight),
            folds=digest(folds),
            models=digest(spec), config=digest(dataclasses.replace(config, device=None)),
        )
        return train_population(spec, config, X, y, folds, options=options, data_parallel=dp)
