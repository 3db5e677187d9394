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


def epoch_values(trainer, data, n_replicas, monitor, dp=None):
    """Every replica's mean training loss and monitored value (None without
    monitoring) of the epoch; NaN for replicas no longer in the network.

    Data-parallel, the loss sums of the ranks' rows are summed, and every
    rank scores all evaluation rows (its weights are everyone's) and takes
    rank 0's scores: one decision on every rank, equal to a single
    process's."""
    slot_models = trainer.net.slot_models
    if dp is not None:
        dp.all_reduce(trainer.loss_sums)
    loss = np.full(n_replicas, np.nan)
    loss[slot_models] = trainer.epoch_losses(data.fold_sizes, data.fold_batches)
    if not monitor:
        return loss, None
    score = np.full(n_replicas, np.nan)
    score[slot_models] = trainer.monitor_scores(data.X_eval, data.y_eval, data.eval_weights)
    if dp is not None:
        score = dp.from_rank0(score)
    return loss, score


def close_epoch(epoch, trainer, status, rates, config, loss, score, epoch_callback):
    """What every epoch of a run ends with, once its per-replica ``loss``
    and ``score`` are known: the stopping rules, the learning-rate
    schedules, early stopping's best weights and ``epoch_callback``.

    Returns
    -------
    finished : ndarray of bool
        The replicas the stopping rules ended this epoch (still to retire).
    """
    improved, finished = status.end_epoch(epoch, loss, score)
    if rates.scheduled:
        rates.end_epoch(epoch)
        trainer.set_learning_rates(rates.current)
    if config.early_stopping and improved.any():
        trainer.keep_best(improved[trainer.net.slot_models])
    if epoch_callback is not None:
        epoch_callback(epoch, {
            "loss": loss, "val_score": score, "active": status.active.copy(),
            "converged": status.converged.copy(), "learning_rate": rates.current.copy(),
            "backend": trainer.describe(), "gflops": trainer.last_gflops,
        })
    return finished
