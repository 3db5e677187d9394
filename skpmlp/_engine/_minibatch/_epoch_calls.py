"""Several epochs per kernel call: when a run may, how many, and the check
of the host's replay against the kernel.

On the native kernel a small search's epoch is short (iris' folds train
one batch an epoch), and what ran around it every epoch (a kernel call,
the batch plans, the loss, the stopping rule, retiring) cost as much as
the epoch itself. Where the kernel can apply the rule that decides each
model's fate (no learning-rate schedule, no refills, one process), it
trains several epochs per call: each model ends every epoch with the same
loss and stopping rule the host would apply (``mlp_step.cpp``'s
``Epochs``), gives its outputs (or its score) for the evaluation rows
where the run monitors them, and trains no further once the rule stops
it. Under early stopping the rule watches a model's mean score over its
fold replicas, so the kernel trains the replicas of one model together
(one group) and keeps their weights at each epoch that improves it; the
kernel must then score the evaluation rows itself (the run's default
scores). With ``restore_best_weights`` each replica keeps the weights of
its own lowest validation loss, which the kernel computes beside the
score (in every call of a native run, so that one-epoch calls decide as
calls of several do). The host then replays the epochs' values through its
own bookkeeping (:meth:`~._run.FusedRun._epochs`), which must stop every
model where the kernel did (and keep the same best epochs), and reports
each epoch to the epoch callback (``verbose``'s progress) as it replays
it. A run is the same, bit for bit, however its epochs are grouped into
calls.
"""

import math

import numpy as np

#: calls of about this long: Ctrl-C and checkpoints are seen between
#: calls (a call never runs past the deadline by more than an epoch). Each
#: call costs the host about 1 ms (its batches, tables and replay): iris's
#: cv=5 search took 11 calls at 50 ms and 64 epochs at most, 4 at these
#: values, 6-9 ms (3-4 %) less of its fit (benchmarks/vs_gridsearch.py's
#: grid, 2 threads, Zen 4)
CALL_SECONDS = 0.2
#: epochs per call at most
MAX_EPOCHS = 1000
#: bytes of one call's gathered batches at most
MAX_BYTES = 64 * 2**20


def chains_epochs(trainer, live, options):
    """Whether the run's epochs may share a kernel call: the trainer can,
    and the kernel can apply the rule that stops each replica: the
    training loss's, or early stopping's on the scores the kernel computes
    itself (a monitored score is recorded, and ranks at halving rungs,
    which end calls)."""
    status = live.status
    return (
        getattr(trainer, "trains_epochs", False)
        and options.data_parallel is None
        # early stopping's scores and restore_best_weights' validation
        # losses: the kernel's, where it computes them
        and (not (status.rule.maximize or status.best is not None)
             or trainer.kernel_score() is not None)
        and live.refills is None
        and status.learning_rates is None
        and not live.rates.scheduled
    )


def epochs_per_call(epoch, config, status, data, epoch_seconds, n_slots, seconds_left=None):
    """How many epochs the next call trains: about :data:`CALL_SECONDS` at
    ``epoch_seconds`` an epoch (None before any was timed: one), never past
    ``max_iter`` or the next halving rung, none after the first that ends
    at or past the deadline (``seconds_left`` away; None: none), and
    within :data:`MAX_BYTES` of batches (and monitored outputs of the
    ``n_slots`` models)."""
    if not epoch_seconds:
        return 1
    seconds = CALL_SECONDS if seconds_left is None else min(CALL_SECONDS, seconds_left)
    n = min(MAX_EPOCHS, math.ceil(max(seconds, 0.0) / epoch_seconds))
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
    """The stopping rule's state for the kernel: per slot of the network,
    or under early stopping per model, with each slot's ``model``."""
    rule, replicas = status.rule, trainer.net.slot_models
    state = {
        # n_iter_no_change=inf: a count never above the largest int64
        "tol": float(rule.tol), "patience": int(min(rule.patience, np.iinfo(np.int64).max)),
    }
    if status.best is not None:  # restore_best_weights: each replica's lowest validation loss
        state["best_loss"] = status.best.loss[replicas].astype(np.float64)
    if rule.maximize:  # a model's replicas share its rule (ReplicaStatus)
        return dict(state, best=rule.best.astype(np.float64), count=rule.count.astype(np.int64),
                    model=replicas % status.n_models)
    return dict(state, best=rule.best[replicas].astype(np.float64),
                count=rule.count[replicas].astype(np.int64))


def check_replay(epochs_done, slot_models, stopped_after, n_epochs, kept=None, kept_after=None):
    """Raise where the host's replay stopped a replica at another epoch
    than the kernel did (``stopped_after``: per replica, the epochs of the
    call it trained by the replay; ``epochs_done``: per slot, by the
    kernel, -1 for frozen slots), or, under early stopping, kept another
    epoch's weights as its best (``kept_after`` per replica by the replay,
    ``kept`` per slot by the kernel; 0 for none)."""
    trained = epochs_done >= 0
    checks = [("stopped", epochs_done, stopped_after)]
    if kept is not None:
        checks.append(("kept their best weights", kept, kept_after))
    for what, by_kernel, per_replica in checks:
        by_host = per_replica[slot_models[trained]]
        if not np.array_equal(by_host, by_kernel[trained]):
            raise RuntimeError(
                f"the native kernel and the host disagree on when models {what} within a call "
                f"of {n_epochs} epochs: kernel {by_kernel[trained].tolist()}, host "
                f"{by_host.tolist()}"
            )
