"""What every epoch of a fused run ends with, shared by the plain and the
adaptive runs: the epoch's per-replica values, the stopping rules and
schedules, and the deadline."""

import time

import numpy as np


def past(deadline, dp=None):
    """Whether the wall-clock ``deadline`` (None: none) has passed (on any
    rank of a data-parallel run, so that all stop together)."""
    passed = deadline is not None and time.time() >= deadline
    return passed if dp is None or deadline is None else dp.any(passed)


def per_replica(values, slots, n_replicas):
    """Per-slot ``values`` (slots on the last axis: one epoch's, or several
    epochs' rows) as replica arrays, NaN for replicas in no slot."""
    full = np.full(np.shape(values)[:-1] + (n_replicas,), np.nan)
    full[..., slots] = values
    return full


def epoch_values(trainer, data, n_replicas, monitor, dp=None, with_loss=False, outputs=None,
                 scores=None):
    """Every replica's mean training loss, monitored value and validation
    loss of the epoch; NaN for replicas no longer in the network. The
    monitored value is None without monitoring, the validation loss None
    unless ``with_loss`` (``restore_best_weights``) and monitoring.
    ``outputs`` (n_slots, n_eval, C): every slot's outputs for the
    evaluation rows where the epoch's kernel call gave them (NaN for frozen
    slots), else the trainer computes them; ``scores`` (n_slots,): every
    slot's monitored value where the kernel call scored them itself.

    Data-parallel, the loss sums of the ranks' rows are summed, and every
    rank scores all evaluation rows (its weights are everyone's) and takes
    rank 0's scores: one decision on every rank, equal to a single
    process's."""
    slot_models = trainer.net.slot_models
    if dp is not None:
        dp.all_reduce(trainer.loss_sums)
    loss = per_replica(trainer.epoch_losses(data.fold_sizes, data.fold_batches), slot_models,
                       n_replicas)
    if not monitor:
        return loss, None, None
    if scores is not None:
        values = scores
    else:
        if outputs is None:
            outputs = trainer.outputs(data.X_eval)
        values = trainer.scores_of_outputs(outputs, data.y_eval, data.eval_weights,
                                           with_loss=with_loss)
    per_slot = values if with_loss else (values,)
    per_replica_values = []
    for value in per_slot:
        full = per_replica(value, slot_models, n_replicas)
        per_replica_values.append(full if dp is None else dp.from_rank0(full))
    score, val_loss = per_replica_values if with_loss else (per_replica_values[0], None)
    return loss, score, val_loss


def close_epoch(epoch, trainer, status, rates, config, loss, score, epoch_callback,
                val_loss=None, keep_best=True):
    """What every epoch of a run ends with, once its per-replica ``loss``
    and ``score`` (and ``val_loss``, with ``restore_best_weights``) are
    known: the stopping rules, the learning-rate schedules, the best
    weights (early stopping's, or each replica's own best epoch; not
    where the kernel call that trained the epoch kept them: ``keep_best``
    False) and ``epoch_callback``.

    Returns
    -------
    improved : ndarray of bool
        The replicas whose weights are their best so far.
    finished : ndarray of bool
        The replicas the stopping rules ended this epoch (still to retire).
    """
    improved, finished = status.end_epoch(epoch, loss, score, val_loss)
    if rates.scheduled:
        rates.end_epoch(epoch)
        trainer.set_learning_rates(rates.current)
    if keep_best and trainer.best_flat is not None and improved.any():
        trainer.keep_best(improved[trainer.net.slot_models])
    if epoch_callback is not None:
        epoch_callback(epoch, {
            "loss": loss, "val_score": score, "val_loss": val_loss, "active": status.active.copy(),
            "converged": status.converged.copy(), "learning_rate": rates.current.copy(),
            "backend": trainer.describe(), "gflops": trainer.last_gflops,
        })
    return improved, finished
