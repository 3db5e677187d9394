"""Several epochs per kernel call: when a run may, how many, and the check
of the host's replay against the kernel.

On the native kernel a small search's epoch is short (iris' folds train
one batch an epoch), and what ran around it every epoch (a kernel call,
the batch plans, the loss, the stopping rule, retiring) cost as much as
the epoch itself. Where nothing but each model's training loss decides its
fate (no early stopping on validation scores, no learning-rate schedule,
no refills, one process), the kernel trains several epochs per call: each
model ends every epoch with the same loss and stopping rule the host would
apply (``mlp_step.cpp``'s ``Epochs``), gives its outputs for the
evaluation rows where the run monitors them, and trains no further once
the rule stops it. The host then replays the epochs' losses through its
own bookkeeping (:meth:`~._run.FusedRun._epochs`), which must stop every
model where the kernel did, and reports each epoch to the epoch callback
(``verbose``'s progress) as it replays it. A run is the same, bit for bit,
however its epochs are grouped into calls.
"""

import numpy as np

#: calls of about this long (the deadline, Ctrl-C and checkpoints are
#: seen between calls)
CALL_SECONDS = 0.05
#: epochs per call at most
MAX_EPOCHS = 64
#: bytes of one call's gathered batches at most
MAX_BYTES = 64 * 2**20


def chains_epochs(trainer, live, options):
    """Whether the run's epochs may share a kernel call: the trainer can,
    and only the training loss decides when each replica stops (a
    monitored score is recorded, and ranks at halving rungs, which end
    calls)."""
    status = live.status
    return (
        getattr(trainer, "trains_epochs", False)
        and options.data_parallel is None
        and not status.rule.maximize  # early stopping watches the scores
        and live.refills is None
        and status.best is None
        and status.learning_rates is None
        and not live.rates.scheduled
    )


def epochs_per_call(epoch, config, status, data, epoch_seconds, n_slots):
    """How many epochs the next call trains: about :data:`CALL_SECONDS` at
    ``epoch_seconds`` an epoch (None before any was timed: one), never past
    ``max_iter`` or the next halving rung, and within :data:`MAX_BYTES` of
    batches (and monitored outputs of the ``n_slots`` models)."""
    if not epoch_seconds:
        return 1
    n = min(MAX_EPOCHS, int(CALL_SECONDS / epoch_seconds))
    planner = data.planner
    n_steps = max(data.fold_batches)
    n_outputs = data.y.shape[1] if data.y.dim() > 1 else 1
    values = (n_steps * len(planner.fold_rows) * planner.batch_size
              * (data.X.shape[1] + n_outputs + 1))
    if data.X_eval is not None:
        values += n_slots * data.X_eval.shape[0] * config.n_outputs
    n = min(n, MAX_BYTES // max(values * data.X.element_size(), 1))
    n = min(n, config.max_iter - epoch)
    rungs = [e for e in status.halving_epochs if e > epoch]
    if rungs:
        n = min(n, min(rungs) - epoch)
    return max(1, n)


def stopping_state(status, trainer):
    """The stopping rule's state for the kernel, per slot of the network."""
    rule, replicas = status.rule, trainer.net.slot_models
    return {"best": rule.best[replicas].astype(np.float64),
            "count": rule.count[replicas].astype(np.int64),
            # n_iter_no_change=inf: a count never above the largest int64
            "tol": float(rule.tol), "patience": int(min(rule.patience, np.iinfo(np.int64).max))}


def check_replay(epochs_done, slot_models, stopped_after, n_epochs):
    """Raise where the host's replay stopped a replica at another epoch
    than the kernel did (``stopped_after``: per replica, the epochs of the
    call it trained by the replay; ``epochs_done``: per slot, by the
    kernel, -1 for frozen slots)."""
    trained = epochs_done >= 0
    by_host = stopped_after[slot_models[trained]]
    if not np.array_equal(by_host, epochs_done[trained]):
        raise RuntimeError(
            f"the native kernel and the host disagree on when models stopped within a call of "
            f"{n_epochs} epochs: kernel {epochs_done[trained].tolist()}, host {by_host.tolist()}"
        )
