"""The one way the search layer trains a population: the search, its refits and a single model.

:func:`train_models` trains a population on its folds in this process or as
joblib shards (:mod:`skpmlp._execution._shards`), within a memory budget and a deadline,
reporting its progress: what :class:`Execution` says, built once per fit. A
standalone model's ``fit`` is a population of one, trained the same way.
"""

import contextlib
import os
import signal
import sys
import warnings
from dataclasses import dataclass
from typing import Optional

from .._engine import ResumeError, RunOptions, prepare_kernel
from .._engine._interrupts import Terminated, sigterm_is_ours
from .._persistence._archive import InvalidFileError
from .._persistence._checkpoint import CheckpointWarning, SearchCheckpoint, call_key
from ._progress import ProgressSettings
from ._shards import train_search


@dataclass(frozen=True)
class Execution:
    """Where and within what a fit trains, and what it reports.

    Parameters
    ----------
    n_jobs : int or None, default=None
        Shards as joblib tasks (None: one in-process run).
    max_memory : float or None, default=None
        Bytes a fused run may use on its device.
    deadline : float or None, default=None
        Wall-clock time after which training ends at an epoch's end.
    progress : ProgressSettings or None, default=None
        What the runs report (None: nothing).
    name : str, default="fused run"
        What a run is called in the progress reports ("refit run").
    data_parallel : bool, default=True
        Split every step's rows over the ranks of an initialised
        ``torch.distributed`` process group (as :func:`skpmlp.data_parallel`
        says). A standalone model's ``fit`` trains alone in its process.
    checkpoint : SearchCheckpoint or None, default=None
        Where every training call of the fit keeps its state (see
        :mod:`skpmlp._persistence._checkpoint`): a call that finished in a previous fit
        returns its saved result, an unfinished one goes on from its state.
    """

    n_jobs: int = None
    max_memory: float = None
    deadline: float = None
    progress: Optional[ProgressSettings] = None
    name: str = "fused run"
    data_parallel: bool = True
    checkpoint: Optional[SearchCheckpoint] = None


def train_models(spec, config, X, y, folds, execution, *, sample_weight=None, refill_source=None,
                 always_start=True):
    """Train the models of ``spec`` on every fold as ``execution`` says.

    Every fold with evaluation rows is monitored (early stopping, pruning,
    validation scores); ``config.device`` is resolved where each run trains.
    ``always_start``: the call's first run trains at least one epoch even
    past ``execution.deadline`` (False for a call that follows another in
    the same fit: past the deadline it trains nothing).

    Returns
    -------
    result : TrainResult
    shards : list of dict
        Where and how long each fused run trained (``shards_``).
    """
    section = None
    if execution.checkpoint is not None:
        section = execution.checkpoint.section(call_key(execution.name, spec, config, folds))
        if section.finished:  # trained in a previous fit: nothing to train again
            return section.result()
    verbose = execution.progress is not None and execution.progress.verbose
    if verbose:
        # a first-use compile of the native kernel takes seconds: say so
        prepare_kernel(config, verbose=True, workload=(spec, X, folds))
    progress = None if execution.progress is None else execution.progress.callback(execution.name)
    options = RunOptions(sample_weight=sample_weight, epoch_callback=progress,
                         max_memory=execution.max_memory, deadline=execution.deadline,
                         refill_source=refill_source, always_start=always_start)
    with terminable(execution.checkpoint):
        try:
            result, shards = train_search(spec, config, X, y, folds, options, execution, section)
        except ResumeError as error:  # the file decoded, but its state is not this search's
            raise InvalidFileError(
                f"Invalid checkpoint {execution.checkpoint.path!r}: {error}. Delete the file or "
                f"pass another checkpoint path to start afresh."
            ) from error
        finally:
            if progress is not None:
                progress.close()
        if result.halted == "terminated":  # the engine saved where it stopped
            raise Terminated
    if section is not None and result.halted is None:
        # halted (Ctrl-C, max_time): the engine saved where it stopped, and
        # the next fit goes on from there
        section.finish(result, shards)
        _warn_unwritten(execution.checkpoint)
    return result, shards


def _warn_unwritten(checkpoint):
    """The documented rule for a checkpoint whose last write failed: the
    fit returns what it trained (nothing is lost in this process) and says
    that the file is behind it."""
    if checkpoint.failed is not None:
        warnings.warn(
            f"The training call finished, but its checkpoint {checkpoint.path!r} could not be "
            f"written ({checkpoint.failed}): the fitted estimator is complete, while the file "
            f"holds an earlier state, from which a later fit would train again.",
            CheckpointWarning, stacklevel=4,
        )


def _raise_terminated(signum, frame):
    raise Terminated


_raise_terminated.skpmlp = True  # a handler of ours: training defers it to an epoch's end


@contextlib.contextmanager
def terminable(checkpoint):
    """A block of training that a SIGTERM ends the way a scheduler expects.

    Inside an epoch (or an L-BFGS round) the engine holds SIGTERM back to
    the epoch's end, halts (``"terminated"``) and saves its checkpoint;
    elsewhere (waiting for shards, between runs) it raises
    :class:`~skpmlp._engine._interrupts.Terminated` at once, which stops the
    joblib workers. Either way the block then says on stderr where the
    work is and ends the process with SIGTERM's own status (143 from a
    shell), as the default disposition would have, one epoch later.

    Outside the main thread, or where the application has its own SIGTERM
    handler, the block leaves SIGTERM alone.
    """
    if not sigterm_is_ours():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        where = (f"its checkpoint {checkpoint.path!r} holds every epoch that ended: fit again "
                 f"with it to go on" if checkpoint is not None else
                 "no checkpoint was set (checkpoint=path keeps it): its epochs are lost")
        print(f"skpmlp: SIGTERM: training stopped at the end of an epoch; {where}.",
              file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        raise  # where SIGTERM is blocked: the exception goes on
    finally:
        signal.signal(signal.SIGTERM, previous)
