"""The training loop: every model of a population, one fused step at a time.

:func:`train_population` is the engine's one entry: it plans the call's
runs once (:func:`~._runs.plan_runs`: solver family, batch size, memory
chunk) and trains each, one after another, with no recursion: an L-BFGS run
by :func:`~._lbfgs.train_lbfgs`, a minibatch run as one fused run
(:func:`_train`, or the adaptive loop of :mod:`._refill`). A run is a loop of small
steps: an epoch of fused steps (:class:`~._trainer.PopulationTrainer`), the
epoch's per-replica losses and scores, the stopping rule and halving
(:class:`~._stopping.ReplicaStatus`), retiring finished replicas (freeze,
then compaction), the deadline, and the result.

Per step: one gather of the minibatch rows (the data lives on the device;
each epoch's row permutation is drawn on the host and copied over once),
one forward per group, one backward of the summed per-model losses and one
fused optimizer update. Nothing in a step synchronises with the host;
per-model bookkeeping (loss curves, stopping rules, divergence) happens once
per epoch.
"""

import contextlib
import dataclasses
import gc
import time
import warnings

import numpy as np
import torch

from ._build import run_data
from ._chunks import merge_results
from ._device import resolve_device
from ._epoch import close_epoch, epoch_values, past
from ._init import population_initial_weights
from ._lbfgs import train_lbfgs
from ._memory import is_out_of_memory
from ._native import choose_trainer
from ._refill import run_adaptive
from ._runs import RunOptions, plan_runs
from ._schedules import LearningRates
from ._spec import TrainResult
from ._stopping import ReplicaStatus
from ._threads import torch_threads


def train_population(spec, config, X, y, folds, **options):
    """Train every model of ``spec`` on every fold as one fused network.

    A population whose estimated needs exceed ``max_memory`` or 80% of the
    device's free memory trains as chunks, one fused run after another; a
    chunk that still runs out of memory is split in two and retried, with a
    warning. Models are independent, so chunks give the results of one run.

    Successive halving is the exception: it ranks the models within each
    chunk, so with ``config.pruning`` the chunks are planned from
    ``max_memory`` alone (None: one run), a population that does not fit
    the free memory raises :class:`MemoryError` instead of being split, and
    so does a run that runs out of memory. The results then never depend on
    the memory free at fit time.

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
        Its ``device`` (``"auto"`` included) is resolved here, on the
        machine that trains.
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Class indices in ``[0, n_outputs)`` or regression targets.
    folds : list of (train_rows, eval_rows)
        Row indices per fold; ``eval_rows`` may be None (no monitoring).
    **options :
        The fields of :class:`~._runs.RunOptions` (``sample_weight``,
        ``monitor``, ``epoch_callback``, ``max_memory``, ``deadline``,
        ``always_start``, ``data_parallel``, ``refill_source``): what every
        run of the call gets.

    Returns
    -------
    TrainResult
        ``halted="interrupted"`` when a KeyboardInterrupt ended training
        after at least one epoch (one before that propagates).
    """
    config = dataclasses.replace(config, device=resolve_device(config.device))
    options = RunOptions(**options)
    runs = plan_runs(spec, config, X, folds, options)
    return _train_runs(runs, spec, X, y, folds, options)


def _train_runs(runs, spec, X, y, folds, options):
    """Train ``runs`` one after another and merge their results.

    A run that would start past the deadline (but the call's first, with
    ``always_start``), or after a run was interrupted, is not trained
    (initial weights, ``n_iter=0``). A minibatch run that runs out of
    memory is split in two and retried, with a warning.
    """
    dp = options.data_parallel
    pending, parts, halted = list(runs), [], None
    while pending:
        run = pending.pop(0)
        sub = spec.subset(run.models)
        if halted is None and past(options.deadline, dp) and (parts or not options.always_start):
            halted = "max_time"
        if halted is not None:  # nothing more to train: keep the run untrained
            untrained = _untrained(sub, run.config, X.shape[1], len(folds), run.options.monitor,
                                   halted)
            parts.append((run.models, untrained))
            continue
        if run.solver == "lbfgs":
            result = train_lbfgs(sub, run.config, X, y, folds, sample_weight=options.sample_weight,
                                 epoch_callback=options.epoch_callback, deadline=options.deadline)
        else:
            result = _train_or_split(run, sub, X, y, folds)
        if result is None:
            pending[:0] = run.halves()
            continue
        halted = result.halted
        parts.append((run.models, result))
    return merge_results(parts, spec.n_models)


def _train_or_split(run, spec, X, y, folds):
    """The result of a minibatch run, or None when it ran out of memory and
    is to be retried as two halves (a warning says so)."""
    config = run.config
    try:
        return _train(spec, config, X, y, folds, run.options)
    except Exception as error:
        # data-parallel: the other ranks did not run out; all fail
        retried = spec.n_models > 1 and run.options.data_parallel is None
        if not is_out_of_memory(error) or not retried:
            raise
        # halving's ranks would depend on the split
        if config.pruning is not None or config.refill:
            raise _halving_out_of_memory(spec.n_models, config.device) from error
    # out of the except block: the exception and its traceback, whose frames
    # held the failed run's tensors, are gone, so collecting now frees them
    _release_device_memory(config.device)
    half = spec.n_models // 2
    warnings.warn(
        f"Out of memory training {spec.n_models} models on {config.device}; retrying them "
        f"as two chunks of {half} and {spec.n_models - half} models.",
        ResourceWarning, stacklevel=4,
    )
    return None


def _halving_out_of_memory(n_models, device):
    """The error for a halving run out of memory, which is not retried."""
    return MemoryError(
        f"Out of memory training {n_models} models on {device}. With pruning='halving' a run "
        f"that runs out of memory is not split and retried: halving ranks the models within "
        f"each chunk, so the results would depend on the memory free at fit time. Set or lower "
        f"max_memory (bytes) to train the population as chunks planned from max_memory alone, "
        f"or use fewer models, a smaller batch_size or dtype='float32'."
    )


def _release_device_memory(device):
    """Free what unreachable tensors hold (reference cycles included) and,
    on CUDA, give the allocator's cached blocks back to the device."""
    gc.collect()
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()



def _fold_replicas(spec, K):
    """Every fold's replicas of ``spec``'s models, fold after fold (a
    resumed search's differ between folds)."""
    M = spec.n_models
    replicas = spec.replicate(K)
    return [replicas.subset(range(k * M, (k + 1) * M)) for k in range(K)]


def _untrained(spec, config, n_features, K, monitor, halted):
    """The result of a chunk that never trained (``halted`` says why):
    initial weights, 0 epochs."""
    M = spec.n_models
    # each fold's replicas (a resumed search's differ between folds)
    weights = [population_initial_weights(replica, n_features, config.n_outputs)
               for replica in _fold_replicas(spec, K)]
    empty = np.zeros((M, K, 0))
    false = np.zeros((M, K), dtype=bool)
    return TrainResult(
        coefs=[coefs for coefs, _ in weights],
        intercepts=[intercepts for _, intercepts in weights],
        loss_curves=empty, validation_scores=empty.copy() if monitor else None,
        n_iter=np.zeros((M, K), dtype=int), converged=false, diverged=false.copy(),
        pruned=false.copy(), halted=halted,
    )


def _train(spec, config, X, y, folds, options):
    """One fused minibatch run of every model of ``spec`` on every fold.

    On the native kernel the epochs run on the kernel's own threads (as many
    as torch would use here), and the torch ops around them (scoring, losses,
    stopping) on one: they are small, and OpenMP threads waiting at their
    barriers on a busy machine made them cost more than the epochs.
    """
    trainer = choose_trainer(spec, config)(spec, config, X.shape[1], len(folds))
    trainer.data_parallel = options.data_parallel
    glue_threads = contextlib.nullcontext()
    if trainer.backend == "native":
        trainer.n_threads = torch.get_num_threads()
        glue_threads = torch_threads(1)
    with glue_threads:
        if config.refill:
            return run_adaptive(trainer, spec, config, X, y, folds, options)
        return _run(trainer, spec, config, X, y, folds, options)


def _run(trainer, spec, config, X, y, folds, options):
    """The epoch loop of one fused run."""
    start_time = time.perf_counter()
    K, M = len(folds), spec.n_models
    monitor, dp, deadline = options.monitor, options.data_parallel, options.deadline
    data = run_data(config, X, y, folds, options.sample_weight, monitor, dtype=trainer.net.dtype,
                    device=trainer.net.device)
    rates = LearningRates(trainer.initial_learning_rates, trainer.replica_optimizers,
                          data.fold_sizes)
    status = ReplicaStatus(K, M, config, rates if rates.scheduled else None)
    curves = _Curves(monitor)
    kept = {}  # replica -> weights, saved when its slot is compacted away
    halted = None
    for epoch in range(config.max_iter):
        try:
            plan = data.planner.next_epoch()
            trainer.run_epoch(data.X, data.y, plan if dp is None else dp.shard_plan(plan))
        except KeyboardInterrupt:
            if epoch == 0 or dp is not None:  # the other ranks train on: stop them
                raise
            halted = "interrupted"
            break
        loss, score = epoch_values(trainer, data, K * M, monitor, dp)
        curves.record(loss, score, status.active)
        finished = close_epoch(epoch, trainer, status, rates, config, loss, score,
                               options.epoch_callback)
        if finished.any():
            status.retire(finished)
            _retire_slots(trainer, finished, status.active, kept, config)
        if not status.active.any():
            break
        if past(deadline, dp):
            halted = "max_time"
            break
    kept.update(trainer.kept_weights())
    if trainer.net.device.type == "cuda":
        torch.cuda.synchronize(trainer.net.device)
    return _result(kept, status, curves, K, M, halted, time.perf_counter() - start_time)


def _retire_slots(trainer, finished, active, kept, config):
    """Freeze the slots of the ``finished`` replicas; once enough slots are
    frozen, save their weights into ``kept`` and compact them away."""
    trainer.freeze(finished[trainer.net.slot_models])
    if active.any() and trainer.frozen.mean() >= config.compact_fraction:
        kept.update(trainer.kept_weights(trainer.frozen))
        trainer.compact()


class _Curves:
    """Per-epoch loss and monitored values of the replicas, NaN once a
    replica stopped."""

    def __init__(self, monitor):
        self.monitor = monitor
        self.loss, self.score = [], []

    def record(self, loss, score, active):
        self.loss.append(np.where(active, loss, np.nan))
        if self.monitor:
            self.score.append(np.where(active, score, np.nan))

    @staticmethod
    def _stack(curves, n_replicas):
        return np.stack(curves, axis=1) if curves else np.zeros((n_replicas, 0))

    def arrays(self, n_replicas):
        """(loss, score or None), each of shape (n_replicas, n_epochs)."""
        score = self._stack(self.score, n_replicas) if self.monitor else None
        return self._stack(self.loss, n_replicas), score


def _result(kept, status, curves, K, M, halted, train_time):
    """The :class:`TrainResult` of a run, per model and fold."""
    per_fold = lambda a: a.reshape(K, M, *a.shape[1:]).swapaxes(0, 1)  # noqa: E731
    loss, score = curves.arrays(K * M)
    assert loss.shape[1] or halted is None
    return TrainResult(
        coefs=[[kept[k * M + i][0] for i in range(M)] for k in range(K)],
        intercepts=[[kept[k * M + i][1] for i in range(M)] for k in range(K)],
        loss_curves=per_fold(loss),
        validation_scores=None if score is None else per_fold(score),
        n_iter=per_fold(status.n_iter),
        converged=per_fold(status.converged),
        diverged=per_fold(status.diverged),
        pruned=per_fold(status.pruned),
        train_time=train_time,
        halted=halted,
    )
