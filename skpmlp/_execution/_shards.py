"""Shards of a population as joblib tasks.

With ``n_jobs``, the population is cut into shards of about equal cost and
each shard is trained as its own fused network in a joblib task
(:class:`sklearn.utils.parallel.Parallel`), so the user's joblib backend
decides where shards run: loky processes on this machine by default, a Dask
cluster under ``joblib.parallel_config(backend="dask")``. Tasks receive and
return numpy only, pick their torch thread count and device where they run,
and give the results of one in-process run: models are independent, and
successive halving ranks the models of every shard together, the shards
training rung by rung (:mod:`skpmlp._execution._rungs`).
With ``verbose``, one progress bar covers every shard, fed by the shards
while they train (:mod:`skpmlp._execution._shard_progress`).
"""

import dataclasses
import os
import socket
import sys
import threading
import time
from typing import Optional

import torch
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from .._engine import (
    PausedTraining,
    RunOptions,
    current_data_parallel,
    merge_results,
    resolve_device,
    run_device,
    split_models,
    torch_threads,
    train_data_parallel,
    train_population,
)
from .._persistence._checkpoint import ShardCheckpoint
from ._rungs import ShardedCall, is_sharded_state
from ._shard_progress import ShardedProgress


def shard_device(device, shard):
    """The device shard ``shard`` trains on, resolved where it runs
    (``"auto"`` decided first by :func:`~skpmlp._engine.run_device`).

    ``"auto"`` and ``"cuda"`` spread shards over the visible GPUs (one GPU
    per worker when each worker sees one, e.g. through
    ``CUDA_VISIBLE_DEVICES`` or Dask worker resources); an explicit
    ``"cuda:N"`` or ``"cpu"`` is kept.
    """
    resolved = resolve_device(device)
    if resolved == "cuda":
        return f"cuda:{shard % torch.cuda.device_count()}"
    return resolved


def shard_threads(n_shards):
    """Torch threads for one of ``n_shards`` shards sharing this machine's
    cores: ``cpu_count // n_shards``, at least 1."""
    cores = os.cpu_count() or 1
    return max(1, cores // min(n_shards, cores))


def _dask_worker():
    """Address of the Dask worker running this task, or None. A process
    that never imported ``distributed`` is no Dask worker: importing it
    (about 0.4 s) is not for a plain fit to pay."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return distributed.get_worker().address
    except ValueError:
        return None


def _shard_info(shard, spec, device, threads, start):
    """Where and how long a fused run trained (an entry of ``shards_``)."""
    return {
        "shard": shard, "models": spec.n_models, "device": device, "host": socket.gethostname(),
        "pid": os.getpid(), "worker": _dask_worker(), "threads": threads,
        "seconds": time.perf_counter() - start,
    }


@dataclasses.dataclass(frozen=True)
class ShardTask:
    """What one round of one shard gets, besides its models and data.

    Attributes
    ----------
    shard, n_shards : int
        Its index, and how many shards share the machine's cores.
    options : RunOptions
        The engine call's options (its progress reporter, whether it must
        train even past the deadline).
    resume : dict or None
        The state it returned at the last rung.
    rungs : dict or None
        The halving decisions taken so far, in its own indices.
    checkpoint : ShardCheckpoint or None
        Its own file next to the search's.
    client : (str, int)
        Host name and process id of the process that started the search:
        a worker on the same host ends itself when that process is gone.
    """

    shard: int
    n_shards: int
    options: RunOptions
    resume: dict = None
    rungs: dict = None
    checkpoint: Optional[ShardCheckpoint] = None
    client: tuple = dataclasses.field(default_factory=lambda: (socket.gethostname(), os.getpid()))


def train_shard(spec, config, X, y, folds, task):
    """Train one shard where this task runs (a :class:`ShardTask`); numpy
    in, numpy out.

    Its device is ``config.device`` resolved here, on the worker (see
    :func:`shard_device`). With a checkpoint (the shard's
    :class:`~skpmlp._persistence._checkpoint.ShardCheckpoint`) it goes on from the state its
    file holds, which is never older than ``task.resume`` (the state it
    returned at the last rung).

    Returns
    -------
    result : TrainResult or PausedTraining
    info : dict
        Where and how long the shard trained: ``shard``, ``models``,
        ``device``, ``host``, ``pid``, ``worker`` (Dask address or None),
        ``threads``, ``seconds``.
    """
    # private copies: never hand torch a read-only memmap or shared buffer
    X, y = X.copy(), y.copy()
    start = time.perf_counter()
    _ends_with(task.client)
    with torch_threads(shard_threads(task.n_shards)):
        threads = torch.get_num_threads()
        # "auto" is decided by this shard's own size, on this worker
        device = run_device(spec, config, X, folds) if config.device == "auto" else config.device
        config = dataclasses.replace(config, device=shard_device(device, task.shard))
        resume = task.resume
        if task.checkpoint is not None:
            saved = task.checkpoint.load()
            resume = resume if saved is None else saved
        result = train_population(spec, config, X, y, folds, options=task.options,
                                  checkpoint=task.checkpoint, resume=resume, rungs=task.rungs)
    return result, _shard_info(task.shard, spec, config.device, threads, start)


#: Seconds between two checks of a worker that its client still runs.
CLIENT_CHECK_SECONDS = 0.5


def _ends_with(client):
    """In a process the client started (a loky worker, a local Dask
    cluster's worker: the client is among its ancestors, on this host), a
    thread that ends this process once the client is gone, so a search
    killed even with SIGKILL leaves no worker training, or idling, for
    nobody. Started once per process; in the client itself, or in a worker
    someone else started (a Dask cluster of its own), nothing."""
    host, pid = client
    if (pid == os.getpid() or host != socket.gethostname() or pid in _WATCHED
            or not _descends_from(pid)):
        return
    _WATCHED.add(pid)

    def watch():
        while _alive(pid):
            time.sleep(CLIENT_CHECK_SECONDS)
        os._exit(1)  # nothing this process does is wanted any more

    threading.Thread(target=watch, name="skpmlp-client-watch", daemon=True).start()


#: Clients this process watches already.
_WATCHED = set()


def _descends_from(pid):
    """Whether process ``pid`` is an ancestor of this one (from /proc; False
    without it)."""
    current = os.getpid()
    try:
        while current > 1:
            with open(f"/proc/{current}/stat") as stat:
                current = int(stat.read().rsplit(")", 1)[1].split()[1])
            if current == pid:
                return True
    except OSError:
        return False
    return False


def _alive(pid):
    """Whether process ``pid`` runs (a zombie, dead but not reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process of that number: ours is gone
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # no procfs (macOS): kill(pid, 0) is all there is
        return True


def train_search(spec, config, X, y, folds, options, execution, checkpoint=None):
    """Train a population in-process (``execution.n_jobs=None``) or as joblib shards.

    ``config.device`` is resolved where each run trains: here without
    ``n_jobs``, on its worker for a shard. With ``execution.data_parallel``
    (and an initialised process group, see :func:`skpmlp.data_parallel`)
    every step's rows are split over the ranks instead.

    ``options`` (a :class:`~skpmlp._engine.RunOptions`) go to
    :func:`~skpmlp._engine.train_population`. Its ``epoch_callback`` (a
    :class:`~skpmlp._execution._progress.SearchProgress`, or None when quiet)
    reports an in-process run's epochs; with shards, its ``verbose`` and
    ``name`` set up one bar for all of them instead
    (:class:`~skpmlp._execution._shard_progress.ShardedProgress`).
    ``checkpoint``: the call's checkpoint section (its ``state`` is where
    the call goes on from).

    Returns
    -------
    result : TrainResult
        In population order.
    shards : list of dict
        One entry per fused run (see :func:`train_shard`); a data-parallel
        run's also has ``world_size`` and ``rows_per_rank``.
    """
    n_jobs, resume = execution.n_jobs, None if checkpoint is None else checkpoint.state
    dp = current_data_parallel() if execution.data_parallel else None
    if dp is not None:
        if checkpoint is not None:
            raise ValueError(
                "checkpoint is not supported in a torch.distributed data-parallel fit (every "
                "rank holds a share of each step). Use checkpoint=None, or fit inside "
                "skpmlp.data_parallel(False)."
            )
        return _train_data_parallel(dp, spec, config, X, y, folds, options, n_jobs=n_jobs)
    # a checkpoint's call goes on as it began (in-process or sharded),
    # whatever n_jobs is now
    sharded = is_sharded_state(resume) if resume is not None else n_jobs is not None
    if not sharded:
        config = dataclasses.replace(config, device=run_device(spec, config, X, folds))
        start = time.perf_counter()
        result = train_population(spec, config, X, y, folds, options=options,
                                  checkpoint=checkpoint, resume=resume)
        return result, [_shard_info(0, spec, config.device, torch.get_num_threads(), start)]
    parts = split_models(spec, effective_n_jobs(n_jobs), X.shape[1], config.n_outputs)
    call = ShardedCall(parts, config, checkpoint, resume)

    def tasks(reporters, first):
        return (
            delayed(train_shard)(
                spec.subset(call.parts[i]), config, X, y, folds,
                ShardTask(
                    i, len(call.parts),
                    # a shard queued past the fit's deadline trains nothing;
                    # the first one always trains, so a fit has a model
                    dataclasses.replace(options, always_start=options.always_start and first
                                        and i == 0,
                                        epoch_callback=reporters[i]),
                    **call.task_settings(i),
                ),
            )
            for i in call.pending()
        )

    if options.epoch_callback is None:
        _train_rounds(call, tasks, lambda t: Parallel(n_jobs=n_jobs)(t), [None] * len(call.parts))
    else:
        sizes = [len(part) * len(folds) * config.max_iter for part in call.parts]
        _train_with_progress(call, tasks, n_jobs, sizes, config.max_iter, options.epoch_callback)
    outputs = call.outputs()
    result = merge_results([(part, r) for part, (r, _) in zip(call.parts, outputs)],
                           spec.n_models)
    return result, [info for _, info in outputs]


def _train_rounds(call, tasks, run, reporters):
    """Run rounds of the ``call``'s unfinished shards' ``tasks`` (through
    ``run``) until every shard finished: with halving, a round ends at the
    next rung (see :mod:`skpmlp._execution._rungs`)."""
    first = True
    while call.pending():
        call.take(run(tasks(reporters, first)))
        first = False


def _train_with_progress(call, tasks, n_jobs, sizes, max_iter, epoch_callback):
    """:func:`_train_rounds` with one progress bar for every shard (see
    :mod:`skpmlp._execution._shard_progress`), fed by the shards as they train and as they
    finish."""
    progress = ShardedProgress(
        sizes, max_iter, getattr(epoch_callback, "verbose", 1),
        name=getattr(epoch_callback, "name", "fused run"),
    )

    def run(round_tasks):
        try:  # the shards' results as they finish, where the backend can
            parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        except ValueError:  # e.g. joblib's multiprocessing backend
            parallel = Parallel(n_jobs=n_jobs)
        outputs = []
        for result, info in parallel(round_tasks):
            outputs.append((result, info))
            if not isinstance(result, PausedTraining):
                progress.finish(info["shard"], info)
        return outputs

    try:
        _train_rounds(call, tasks, run, [progress.reporter(i) for i in range(len(sizes))])
    finally:
        progress.close()


def _train_data_parallel(dp, spec, config, X, y, folds, options, *, n_jobs):
    """The population trained once by every rank of ``dp``, each on its
    share of every step's rows: one ``shards_`` entry, the same on every
    rank but for ``host`` and ``pid`` (this rank's)."""
    if n_jobs is not None:
        raise ValueError(
            f"n_jobs={n_jobs!r} shards the models over joblib workers, but this fit runs in a "
            f"torch.distributed process group of {dp.world_size} ranks, which split the rows "
            f"instead. Use n_jobs=None, or fit inside skpmlp.data_parallel(False) to shard models."
        )
    start = time.perf_counter()
    result = train_data_parallel(dp, spec, config, X, y, folds, options)
    device = dp.device(run_device(spec, config, X, folds))
    info = _shard_info(0, spec, device, torch.get_num_threads(), start)
    info.update(world_size=dp.world_size, rows_per_rank=dp.rows_per_rank)
    return result, [info]
