"""The training loop: every model of a population, one fused step at a time.

:func:`train_population` cuts a population into chunks that fit the device
and trains each as one fused run (:func:`_train`). A run is a loop of small
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

import dataclasses
import contextlib
import gc
import time
import warnings

import numpy as np
import torch

from ._build import run_data
from ._chunks import merge_results
from ._device import resolve_device
from ._init import population_initial_weights
from ._lbfgs import train_lbfgs
from ._native import choose_trainer
from ._epoch import close_epoch, epoch_values, past
from ._refill import run_adaptive
from ._memory import (
    data_bytes, halving_chunks, is_out_of_memory, memory_budget, model_bytes, plan_chunks,
)
from ._spec import TrainResult
from ._schedules import LearningRates
from ._stopping import ReplicaStatus
from ._threads import torch_threads


def train_population(
    spec, config, X, y, folds, *, sample_weight=None, monitor=True, epoch_callback=None,
    max_memory=None, deadline=None, always_start=True, data_parallel=None, refill_source=None,
):
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
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights in every model's loss (and in the L2 divisor, as
        scikit-learn's MLP) and in the monitoring scores.
    monitor : bool, default=True
        Score every replica on its fold's evaluation rows every epoch
        (needed by early stopping and pruning; gives ``validation_scores``).
    epoch_callback : callable, optional
        Called after every epoch as ``epoch_callback(epoch, info)`` with a
        dict of per-replica numpy arrays (``loss``, ``val_score``,
        ``active``; minibatch runs also ``converged``, the replicas the
        stopping rule stopped so far, and ``learning_rate``, the rates for
        the next epoch), of shape (n_folds * n_models,), fold-major.
    max_memory : float, optional
        Bytes the run may use on its device (with halving, the only input
        of the chunk plan).
    deadline : float, optional
        Wall-clock time (:func:`time.time`, comparable across processes and
        machines, unlike :func:`time.perf_counter`) after which training
        ends at the end of an epoch, keeping what was trained
        (``halted="max_time"``). A chunk that would start after it is not
        trained (initial weights, ``n_iter=0``).
    always_start : bool, default=True
        Train the first chunk for at least one epoch even when it starts
        past ``deadline``, so that a fit always has a trained model. The
        shards of a split search other than the first pass False: one that
        was queued past the deadline trains nothing.
    data_parallel : DataParallel, optional
        Split every step's rows over its ranks
        (:mod:`._distributed`); the chunk plan, the deadline and the
        stopping decisions are then agreed by every rank, and running out
        of memory fails the run on every rank instead of retrying.
        L-BFGS models and adaptive runs (``config.refill``) are not supported.
    refill_source : RefillSource, optional
        Needed with ``config.refill``: the new models of freed slots (see
        :mod:`._refill`). An adaptive run is one fused run, never chunked,
        and its result holds every model it trained.

    Returns
    -------
    TrainResult
        ``halted="interrupted"`` when a KeyboardInterrupt ended training
        after at least one epoch (one before that propagates).
    """
    config = dataclasses.replace(config, device=resolve_device(config.device))
    kwargs = dict(sample_weight=sample_weight, monitor=monitor, epoch_callback=epoch_callback,
                  max_memory=max_memory, deadline=deadline)
    lbfgs = np.array([o.solver == "lbfgs" for o in spec.optimizers_of(config)], dtype=bool)
    if lbfgs.any() and data_parallel is not None:
        raise ValueError(
            "solver='lbfgs' trains full-batch and cannot split its rows over the ranks of a "
            "data-parallel fit; use 'adam' or 'sgd', or fit inside skpmlp.data_parallel(False)."
        )
    if lbfgs.any():
        return _train_lbfgs_apart(spec, config, X, y, folds, lbfgs, always_start=always_start, **kwargs)
    batch_sizes = spec.batch_sizes_of(config)
    if len(np.unique(batch_sizes)) > 1:
        return _train_batch_sizes_apart(spec, config, X, y, folds, batch_sizes, always_start=always_start,
                                        data_parallel=data_parallel, **kwargs)
    if batch_sizes[0] != config.batch_size:
        config = dataclasses.replace(config, batch_size=int(batch_sizes[0]))
    has_eval = _has_eval(folds)
    assert has_eval or not (config.early_stopping or config.pruning), "monitoring needs evaluation rows"
    monitor = monitor and has_eval
    dp = data_parallel
    if dp is not None and config.refill:
        raise ValueError(
            f"refill={config.refill!r} is not supported in a data-parallel fit: its slots are "
            f"refilled by one process. Fit inside skpmlp.data_parallel(False), or set refill=None."
        )
    if dp is not None:
        dp.plan_rows(min(config.batch_size, max(len(train) for train, _ in folds)))
    if config.refill:  # an adaptive run refills its own slots: one run, never chunked
        pending = [np.arange(spec.n_models)]
    else:
        pending = _plan_chunks(spec, config, X, folds, monitor, max_memory, dp)
    parts, halted = [], None
    while pending:
        chunk = pending.pop(0)
        if halted is None and past(deadline, dp) and (parts or not always_start):
            halted = "max_time"
        if halted is not None:  # nothing more to train: keep the chunk untrained
            untrained = _untrained(spec.subset(chunk), config, X.shape[1], len(folds), monitor, halted)
            parts.append((chunk, untrained))
            continue
        try:
            result = _train(spec.subset(chunk), config, X, y, folds, sample_weight, monitor,
                            epoch_callback, deadline, dp, refill_source)
        except Exception as error:
            # data-parallel: the other ranks did not run out; all fail
            if not is_out_of_memory(error) or len(chunk) == 1 or dp is not None:
                raise
            if config.pruning is not None or config.refill:  # halving's ranks would depend on the split
                raise _halving_out_of_memory(len(chunk), config.device) from error
            result = None
        if result is None:
            # out of the except block: the exception and its traceback,
            # whose frames held the failed run's tensors, are gone, so
            # collecting now frees them
            _release_device_memory(config.device)
            half = len(chunk) // 2
            warnings.warn(
                f"Out of memory training {len(chunk)} models on {config.device}; retrying them "
                f"as two chunks of {half} and {len(chunk) - half} models.",
                ResourceWarning, stacklevel=2,
            )
            pending[:0] = [chunk[:half], chunk[half:]]
            continue
        halted = result.halted
        parts.append((chunk, result))
    return merge_results(parts, spec.n_models)


def _train_apart(spec, config, X, y, folds, groups, *, deadline, always_start, monitor, dp=None):
    """Train the groups of ``spec``, one after another, and merge their results.

    ``groups`` is a list of ``(model indices, train)``, where
    ``train(sub_spec, always_start)`` trains those models as one fused run
    (or several chunks) and returns its :class:`TrainResult`. A group that
    would start past ``deadline``, or after a group was interrupted, is not
    trained (initial weights, ``n_iter=0``), as a chunk would not be.
    """
    parts, halted = [], None
    for index, train in groups:
        sub = spec.subset(index)
        if halted is None and past(deadline, dp) and (parts or not always_start):
            halted = "max_time"
        if halted is not None:
            result = _untrained(sub, config, X.shape[1], len(folds), monitor, halted)
        else:
            result = train(sub, always_start and not parts)
            halted = result.halted
        parts.append((index, result))
    parts.sort(key=lambda part: part[0][0])
    return merge_results(parts, spec.n_models)


def _train_lbfgs_apart(spec, config, X, y, folds, lbfgs, *, sample_weight, monitor, epoch_callback,
                       max_memory, deadline, always_start):
    """Train the L-BFGS models of ``spec`` (where ``lbfgs``) as their own
    fused run, the others as usual, and merge the two results.

    L-BFGS is full-batch and counts iterations, the other solvers step
    through minibatches and count epochs, so the two never share a step:
    they train one after the other inside the same call. L-BFGS models are
    never monitored (scikit-learn ignores ``early_stopping`` for lbfgs),
    never pruned, and train as one run (no memory chunks).
    """
    def minibatch(sub, start):
        return train_population(
            sub, config, X, y, folds, sample_weight=sample_weight, monitor=monitor,
            epoch_callback=epoch_callback, max_memory=max_memory, deadline=deadline, always_start=start,
        )

    def full_batch(sub, start):
        return train_lbfgs(sub, config, X, y, folds, sample_weight=sample_weight,
                           epoch_callback=epoch_callback, deadline=deadline)

    groups = [(np.flatnonzero(~lbfgs), minibatch), (np.flatnonzero(lbfgs), full_batch)]
    groups = [(index, train) for index, train in groups if len(index)]
    # the minibatch part is monitored; an untrained L-BFGS part is not
    return _train_apart(spec, config, X, y, folds, groups, deadline=deadline, always_start=always_start,
                        monitor=False)


def _train_batch_sizes_apart(spec, config, X, y, folds, batch_sizes, *, always_start, **kwargs):
    """Train the models of each batch size as their own fused run.

    Models of different batch sizes take different numbers of steps per
    epoch over different row groupings, so they cannot share a step; each
    batch size is one fused run (chunked for memory as usual), the runs one
    after another, smallest batch first. Within a run nothing changes, so a
    model's result is the one it gets trained alone. Successive halving,
    which ranks the models of a run, ranks them within their batch size
    (as it ranks within a memory chunk).
    """
    def train_with(size):
        sized = dataclasses.replace(config, batch_size=int(size))
        return lambda sub, start: train_population(sub, sized, X, y, folds, always_start=start, **kwargs)

    groups = [(np.flatnonzero(batch_sizes == size), train_with(size)) for size in np.unique(batch_sizes)]
    return _train_apart(spec, config, X, y, folds, groups, deadline=kwargs["deadline"],
                        always_start=always_start, monitor=kwargs["monitor"] and _has_eval(folds),
                        dp=kwargs["data_parallel"])


def _has_eval(folds):
    return all(e is not None and len(e) > 0 for _, e in folds)


def _plan_chunks(spec, config, X, folds, monitor, max_memory, dp=None):
    """The chunks (model indices) ``spec`` trains as, one after another;
    a warning when there are several. Data-parallel, every rank plans with
    the least free memory of any rank."""
    n_eval = len(np.unique(np.concatenate([np.asarray(e) for _, e in folds]))) if monitor else 0
    per_model = model_bytes(spec, config, X.shape[1], n_folds=len(folds), n_eval=n_eval)
    shared = data_bytes(config, X.shape[0], X.shape[1])
    if config.pruning is None:
        budget = memory_budget(config.device, max_memory)
        if dp is not None:
            budget = dp.minimum(budget)
        chunks = plan_chunks(spec, per_model, shared, budget)
    else:  # halving ranks within a chunk: never chunk by the free memory
        budget = max_memory
        chunks = halving_chunks(spec, per_model, shared, config.device, max_memory)
    if len(chunks) > 1:
        warnings.warn(
            f"The population needs about {per_model.sum() / 2**20:.1f} MiB on {config.device}, more "
            f"than the {budget / 2**20:.1f} MiB available: training it as {len(chunks)} chunks "
            f"one after another.",
            ResourceWarning, stacklevel=3,
        )
    return chunks


def _halving_out_of_memory(n_models, device):
    """The error for a halving run out of memory, which is not retried."""
    return MemoryError(
        f"Out of memory training {n_models} models on {device}. With pruning='halving' a run that "
        f"runs out of memory is not split and retried: halving ranks the models within each chunk, "
        f"so the results would depend on the memory free at fit time. Set or lower max_memory "
        f"(bytes) to train the population as chunks planned from max_memory alone, or use fewer "
        f"models, a smaller batch_size or dtype='float32'."
    )


def _release_device_memory(device):
    """Free what unreachable tensors hold (reference cycles included) and,
    on CUDA, give the allocator's cached blocks back to the device."""
    gc.collect()
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()




def _untrained(spec, config, n_features, K, monitor, halted):
    """The result of a chunk that never trained (``halted`` says why):
    initial weights, 0 epochs."""
    M = spec.n_models
    # each fold's replicas (a resumed search's differ between folds)
    weights = [population_initial_weights(replica, n_features, config.n_outputs)
               for replica in (spec.replicate(K).subset(range(k * M, (k + 1) * M)) for k in range(K))]
    empty = np.zeros((M, K, 0))
    false = np.zeros((M, K), dtype=bool)
    return TrainResult(
        coefs=[coefs for coefs, _ in weights],
        intercepts=[intercepts for _, intercepts in weights],
        loss_curves=empty, validation_scores=empty.copy() if monitor else None,
        n_iter=np.zeros((M, K), dtype=int), converged=false, diverged=false.copy(),
        pruned=false.copy(), halted=halted,
    )


def _train(spec, config, X, y, folds, sample_weight, monitor, epoch_callback, deadline, dp=None,
           refill_source=None):
    """One fused run of every model of ``spec`` on every fold.

    On the native kernel the epochs run on the kernel's own threads (as many
    as torch would use here), and the torch ops around them (scoring, losses,
    stopping) on one: they are small, and OpenMP threads waiting at their
    barriers on a busy machine made them cost more than the epochs.
    """
    trainer = choose_trainer(spec, config)(spec, config, X.shape[1], len(folds))
    trainer.data_parallel = dp
    glue_threads = contextlib.nullcontext()
    if trainer.backend == "native":
        trainer.n_threads = torch.get_num_threads()
        glue_threads = torch_threads(1)
    with glue_threads:
        if config.refill:
            return run_adaptive(trainer, spec, config, X, y, folds, sample_weight, monitor, epoch_callback,
                                deadline, refill_source)
        return _run(trainer, spec, config, X, y, folds, sample_weight, monitor, epoch_callback, deadline, dp)


def _run(trainer, spec, config, X, y, folds, sample_weight, monitor, epoch_callback, deadline, dp=None):
    """The epoch loop of one fused run."""
    start_time = time.perf_counter()
    K, M = len(folds), spec.n_models
    data = run_data(config, X, y, folds, sample_weight, monitor, dtype=trainer.net.dtype, device=trainer.net.device)
    rates = LearningRates(trainer.initial_learning_rates, trainer.replica_optimizers, data.fold_sizes)
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
        finished = close_epoch(epoch, trainer, status, rates, config, loss, score, epoch_callback)
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
