"""One minibatch run of a training call, epoch by epoch, that can stop and go on.

A :class:`FusedRun` is a run of the flat plan (:mod:`._runs`) with its
epoch loop: an epoch of fused steps (the trainer), the epoch's losses and
scores, the stopping rules and schedules (:func:`~skpmlp._engine._minibatch._epoch.close_epoch`),
retiring finished replicas (freeze, then compaction), the deadline. What
sets it apart from a plain loop is where it may stop:

* **at a halving rung**, before the cut: it reports its
  :class:`~._halving.Rung` and waits for the decision, which the call takes
  over all its runs (:mod:`._train`);
* **between two epochs**, suspended: its whole state leaves the device as
  host arrays (:meth:`FusedRun.host_state`, :mod:`._run_state`), which a
  checkpoint writes and from which the run goes on bit for bit.

Ctrl-C is held back while an epoch (or a rung's cut) changes the state
(:func:`~._interrupts.deferred_interrupts`) and seen at its end, so an
interrupted run always holds whole epochs.

An adaptive run (``config.refill``) is this loop with a hook,
:class:`~skpmlp._engine._minibatch._refill.Refills`, which refills the seats that stopped models
free; everything above holds for it too.
"""

import contextlib
import time

import numpy as np
import torch

from .._backends import choose_trainer, fallback_reason
from .._build import run_data
from .._interrupts import deferred_interrupts, halt_reason
from .._run_state import (
    kept_state,
    planner_state,
    restore_kept,
    restore_planner,
    restore_status,
    saved_rung,
    status_state,
)
from .._spec import TrainResult
from .._threads import torch_threads
from ._epoch import close_epoch, epoch_values, past, per_replica
from ._epoch_calls import chains_epochs, check_replay, epochs_per_call, stopping_state
from ._refill import Refills
from ._schedules import LearningRates
from ._stopping import ReplicaStatus


class _Live:
    """A run's objects while it is on its device."""

    def __init__(self, trainer, data, rates, status, curves, kept, refills):
        self.trainer, self.data, self.rates = trainer, data, rates
        self.status, self.curves, self.kept = status, curves, kept
        #: the adaptive run's hook (:class:`~skpmlp._engine._minibatch._refill.Refills`), or None
        self.refills = refills
        #: the replicas an epoch ending at a rung finished, retired with the cut
        self.finished = None
        #: the last epoch's monitored values (a perturbing refill ranks by them)
        self.score = None


class FusedRun:
    """A minibatch run trained epoch by epoch (see the module docstring).

    Parameters
    ----------
    run : Run
        Its models, config (its batch size) and options.
    spec : PopulationSpec
        Its models' spec (the call's, restricted to ``run.models``).
    X, y, folds :
        As :func:`~._train.train_population`.
    state : dict, optional
        A :meth:`host_state` to go on from.

    Attributes
    ----------
    epoch : int
        Epochs trained.
    halted : {None, "interrupted", "max_time"}
        Why the run stopped before it finished.
    finished : bool
        Every replica stopped, or ``max_iter`` epochs trained.
    """

    def __init__(self, run, spec, X, y, folds, state=None):
        self.run, self.spec, self.X, self.y, self.folds = run, spec, X, y, folds
        self.config, self.options = run.config, run.options
        self.K, self.M = len(folds), spec.n_models
        self._saved = state
        self._live = None
        self.epoch = 0 if state is None else int(state["epoch"])
        self.elapsed = 0.0 if state is None else float(state["elapsed"])
        self.halted = None
        self.finished = False
        #: seconds an epoch of the last kernel call took (see _epoch_calls)
        self._epoch_seconds = None

    @property
    def started(self):
        """Whether it holds trained epochs (or a state to go on from)."""
        return self._saved is not None or self.epoch > 0

    @property
    def rung(self):
        """The :class:`~._halving.Rung` it waits at, or None."""
        if self._live is not None:
            return self._live.status.rung
        if self._saved is None or self._saved["status"]["rung"] is None:
            return None
        return saved_rung(self._saved["status"]["rung"])

    # ---------------------------------------------------------- building
    def _ensure_live(self):
        """Its trainer, data and bookkeeping on the device: fresh, or from
        the saved state."""
        if self._live is not None:
            return self._live
        config, options, state = self.config, self.options, self._saved
        trainer = choose_trainer(self.spec, config)(
            self.spec, config, self.X.shape[1], self.K,
            state=None if state is None else state["trainer"],
        )
        trainer.data_parallel = options.data_parallel
        trainer.fallback_reason = fallback_reason(self.spec, config)
        if trainer.backend == "native":
            trainer.n_threads = torch.get_num_threads()
        refills = None
        if config.refill and state is None:  # renumbers the replicas for its capacity
            refills = Refills.fresh(trainer, self.spec, config, self.K, options.refill_source)
        elif config.refill:
            refills = Refills.restored(trainer, config, self.K, options.refill_source,
                                       state["refills"])
        data = run_data(config, self.X, self.y, self.folds, options.sample_weight, options.monitor,
                        dtype=trainer.net.dtype, device=trainer.net.device)
        rates = LearningRates(trainer.initial_learning_rates, trainer.replica_optimizers,
                              data.fold_sizes, config.max_iter)
        if state is None:  # the first epoch's rates (a schedule over the run starts below 1)
            trainer.set_learning_rates(rates.current)
        # refills may bring scheduled rates the first population lacks
        watched = rates if rates.scheduled or refills is not None else None
        status = ReplicaStatus(self.K, self.width(refills), config, watched)
        if refills is not None and state is None:
            refills.start(status)
        curves, kept = _Curves(options.monitor), {}
        live = _Live(trainer, data, rates, status, curves, kept, refills)
        if state is not None:
            restore_planner(data.planner, state["planner"])
            rates.restore(state["rates"])
            restore_status(status, state["status"])
            curves.restore(state["curves"], self.K * self.width(refills), self.epoch)
            live.kept = restore_kept(state["kept"])
            live.score = None if state["score"] is None else np.array(state["score"], float)
            finished = state["pending_finished"]
            live.finished = None if finished is None else np.array(finished, dtype=bool)
            # a state saved after the run's last epoch (a checkpoint's last
            # tick, before the call kept the run's result) is a finished run
            if status.rung is None and (self.epoch >= config.max_iter or not status.active.any()):
                self.finished = True
        self._live, self._saved = live, None
        return live

    def width(self, refills):
        """Models per fold in the replica numbering: the run's, or an
        adaptive run's capacity."""
        return self.M if refills is None else refills.capacity

    def host_state(self):
        """Everything the run needs to go on from its last whole epoch, as
        host arrays (see :mod:`._run_state`)."""
        if self._live is None:
            return self._saved
        live = self._live
        n_replicas = self.K * self.width(live.refills)
        return {
            "epoch": self.epoch, "elapsed": self.elapsed,
            "trainer": live.trainer.host_state(), "planner": planner_state(live.data.planner),
            "rates": live.rates.state(),
            "status": status_state(live.status), "curves": live.curves.state(n_replicas),
            "kept": kept_state(live.kept),
            "pending_finished": None if live.finished is None else live.finished.copy(),
            "score": None if live.score is None else live.score.copy(),
            "refills": None if live.refills is None else live.refills.state(),
        }

    def suspend(self):
        """Move its state to the host and free the device."""
        if self._live is not None:
            self._saved = self.host_state()
            self._live = None

    def validate(self):
        """Build the run from its saved state and drop it: a state that does
        not fit the run (layout, shapes, counts) raises now, before any
        run of the call trains."""
        saved = self._saved
        if saved is not None:
            live = self._ensure_live()
            self._live, self._saved = None, saved
            _check_replicas(live, self.K * self.M if live.refills is None else None)

    # ---------------------------------------------------------- training
    def advance(self, decision, tick):
        """Train until the run finishes, halts, or waits at a rung.

        Parameters
        ----------
        decision : callable
            ``decision(epoch)``: the run's models (indices into the run)
            that the rung at ``epoch`` stops, or None while undecided.
        tick : callable
            Called after every epoch: the call's chance to checkpoint.

        Returns
        -------
        {"finished", "halted", "paused"}
        """
        start = time.perf_counter()
        live = self._ensure_live()
        glue = torch_threads(1) if live.trainer.backend == "native" else contextlib.nullcontext()
        try:
            # on the kernel the epochs run on its own threads, the torch
            # ops around them (scoring, stopping) on one: OpenMP threads
            # waiting at their barriers made those cost more than the epochs
            with glue:
                return self._advance(live, decision, tick)
        finally:
            self.elapsed += time.perf_counter() - start

    def _advance(self, live, decision, tick):
        while True:
            if self.halted is not None:
                return "halted"
            if self.finished:
                return "finished"
            rung = live.status.rung
            if rung is not None:
                pruned = decision(rung.epoch)
                if pruned is None:
                    return "paused"
                self._guarded(lambda: self._cut(live, pruned))
            else:
                self._guarded(lambda: self._epoch(live, tick), first=self.epoch == 0)

    def _guarded(self, step, first=False):
        """Run ``step`` with Ctrl-C held back to its end; a Ctrl-C halts the
        run (``"interrupted"``) with what it holds, whole epochs. One that
        comes before the run trained an epoch, or in a data-parallel run
        (the other ranks train on), propagates."""
        done = []
        try:
            with deferred_interrupts():
                step()
                done.append(True)
        except KeyboardInterrupt as interruption:
            if (first and not done) or self.options.data_parallel is not None:
                raise
            self.halted = halt_reason(interruption)

    def _epoch(self, live, tick):
        """One epoch, or several in one kernel call where the run may
        (:mod:`._epoch_calls`), whole or not at all (its batch order given back
        if it raised before training)."""
        if chains_epochs(live.trainer, live, self.options):
            deadline = self.options.deadline
            n = epochs_per_call(self.epoch, self.config, live.status, live.data,
                                self._epoch_seconds, len(live.trainer.net.slot_models),
                                None if deadline is None else deadline - time.time())
            if n > 1:
                return self._epochs(live, tick, n)
        trainer, data, status = live.trainer, live.data, live.status
        dp, config = self.options.data_parallel, self.config
        order = planner_state(data.planner)
        # a kernel that trains epochs gives the evaluation rows' outputs in
        # the same call: no second pass over the models' weights
        in_call = self.options.monitor and dp is None and getattr(trainer, "trains_epochs", False)
        with_loss = status.best is not None
        # ... and scores them there where it can
        scored = in_call and trainer.kernel_score(with_loss) is not None
        evaluated = None
        try:
            plan = data.planner.next_epoch(self.epoch)
            start = time.perf_counter()
            if in_call:
                evaluated = trainer.run_epoch(data.X, data.y, plan, data, scored,
                                              with_loss=scored and with_loss)
            else:
                trainer.run_epoch(data.X, data.y, plan if dp is None else dp.shard_plan(plan))
            self._epoch_seconds = time.perf_counter() - start
        except KeyboardInterrupt:
            restore_planner(data.planner, order)
            raise
        n_replicas = self.K * self.width(live.refills)
        loss, score, val_loss = epoch_values(
            trainer, data, n_replicas, self.options.monitor, dp, with_loss=with_loss,
            outputs=None if scored else evaluated, scores=evaluated if scored else None)
        live.curves.record(loss, score, status.active)
        if live.refills is not None:
            live.refills.count_free(status)
        live.score = score
        _, finished = close_epoch(self.epoch, trainer, status, live.rates, config, loss, score,
                                  self.options.epoch_callback, val_loss)
        self.epoch += 1
        if status.rung is not None and live.refills is not None:
            # the call's only run: its own models decide the rung
            finished = finished | status.cut_alone(config.halving_factor, config.min_survivors)
        if status.rung is None:
            self._retire(live, finished)
        else:  # retired with the rung's cut
            live.finished = finished
        tick()

    def _epochs(self, live, tick, n):
        """``n`` epochs in one kernel call, each model stopping where the
        rule stops it (and under early stopping keeping its best weights);
        then every epoch's values through the bookkeeping of
        :meth:`_epoch`, which must stop the same models (and keep the same
        epochs): all of them at once where only the training loss decides
        and nothing watches each epoch (:meth:`_replay`)."""
        trainer, data, status = live.trainer, live.data, live.status
        monitor = self.options.monitor
        scored = monitor and trainer.kernel_score() is not None
        with_loss = status.best is not None  # chains_epochs: scored then
        order = planner_state(data.planner)
        try:
            plans = data.planner.next_epochs(self.epoch, n)
            start = time.perf_counter()
            losses, epochs_done, evaluated, kept = trainer.run_epochs(
                data.X, data.y, plans, stopping_state(status, trainer),
                evaluation=data if monitor else None, scored=scored, with_loss=with_loss,
            )
            self._epoch_seconds = (time.perf_counter() - start) / n
        except KeyboardInterrupt:
            restore_planner(data.planner, order)
            raise
        n_replicas, slots = self.K * self.M, trainer.net.slot_models
        # every epoch at once where nothing watches each (no epoch
        # callback), the scores (if monitored) are the kernel's, and the
        # best weights (if kept) are too
        if (self.options.epoch_callback is None and (scored or not monitor)
                and (kept is not None or trainer.best_flat is None)
                and status.replays_epochs(self.epoch, n, scored=scored)):
            self._replay(live, losses, epochs_done, n, evaluated if monitor else None, kept)
            tick()
            return
        stopped_after = np.full(n_replicas, n)
        kept_after = np.zeros(n_replicas, dtype=int)
        ended = np.zeros(n_replicas, dtype=bool)
        for e in range(n):
            loss = per_replica(losses[e], slots, n_replicas)
            score = val_loss = None
            if with_loss:
                score, val_loss = (per_replica(values[e], slots, n_replicas)
                                   for values in evaluated)
            elif monitor:  # scored as one epoch's call scores it
                score = per_replica(
                    evaluated[e] if scored
                    else trainer.scores_of_outputs(evaluated[e], data.y_eval, data.eval_weights),
                    slots, n_replicas,
                )
            live.curves.record(loss, score, status.active)
            live.score = score
            improved, finished = close_epoch(self.epoch, trainer, status, live.rates,
                                             self.config, loss, score,
                                             self.options.epoch_callback, val_loss,
                                             keep_best=kept is None)
            self.epoch += 1
            stopped_after[finished] = e + 1
            kept_after[improved] = e + 1
            ended |= finished
            if e < n - 1:  # the last epoch's retire as :meth:`_epoch` does it, below
                status.retire(finished)
                if not status.active.any():  # the kernel trained no later epoch
                    break
        check_replay(epochs_done, slots, stopped_after, n, kept, kept_after)
        if status.rung is None:
            self._retire(live, ended)
        else:  # retired with the rung's cut
            live.finished = ended
        tick()

    def _replay(self, live, losses, epochs_done, n, scores=None, kept=None):
        """:meth:`_epochs`' replay where the training loss, or early
        stopping's ``scores`` (the kernel's, per slot), decide and nothing
        watches each epoch (no epoch callback): the same state, every epoch
        at once (:meth:`ReplicaStatus.end_epochs
        <._stopping.ReplicaStatus.end_epochs>`, or its
        :meth:`~._stopping.ReplicaStatus.end_scored_epochs`), checked
        against the kernel's stops and, under early stopping, the best
        weights it kept (``kept``)."""
        slots, n_replicas, status = live.trainer.net.slot_models, self.K * self.M, live.status
        losses = per_replica(losses, slots, n_replicas)
        scores = None if scores is None else per_replica(scores, slots, n_replicas)
        kept_after = None
        if status.early_stopping:
            ended_at, trained, kept_after = status.end_scored_epochs(self.epoch, losses, scores)
        else:
            ended_at, trained = status.end_epochs(self.epoch, losses)
        n_replayed = len(trained)
        live.curves.record_epochs(losses[:n_replayed], trained,
                                  None if scores is None else scores[:n_replayed])
        live.score = None if scores is None else scores[n_replayed - 1]
        self.epoch += n_replayed
        ended = ended_at < n
        check_replay(epochs_done, slots, np.where(ended, ended_at + 1, n), n,
                     None if kept_after is None else kept, kept_after)
        self._retire(live, ended)  # (no rung among these epochs: replays_epochs)

    def settle(self, decision):
        """Apply the decision of the rung it waits at, if taken, training
        nothing more: a halted call's runs then report every model the
        rungs stopped as pruned."""
        rung = self.rung
        pruned = None if rung is None else decision(rung.epoch)
        if pruned is not None:
            live = self._ensure_live()
            self._cut(live, pruned)

    def _cut(self, live, pruned):
        """Apply a rung's decision: its pruned models stop with the
        replicas the rung's epoch finished."""
        cut = live.status.cut(pruned)
        finished, live.finished = live.finished | cut, None
        self._retire(live, finished)

    def _retire(self, live, finished):
        """Retire the ``finished`` replicas (an adaptive run then refills
        the seats they freed); then whether the run is over (no replica
        active, the deadline, ``max_iter``)."""
        status, trainer, options = live.status, live.trainer, self.options
        out_of_time = None  # read below, only where it decides
        if finished.any():
            status.retire(finished)
            trainer.freeze(finished[trainer.net.slot_models])
        compacts = True
        if live.refills is not None:
            # one reading of the clock: a model placed now trains an epoch
            out_of_time = past(options.deadline, options.data_parallel)
            compacts = live.refills.after_retire(self.epoch - 1, status, live.rates, live.score,
                                                 live.kept, out_of_time)
        if compacts and finished.any():
            _compact(trainer, status.active, live.kept, self.config)
        if not status.active.any():
            self.finished = True
        elif (past(options.deadline, options.data_parallel) if out_of_time is None
              else out_of_time):
            self.halted = "max_time"
        elif self.epoch >= self.config.max_iter:
            self.finished = True

    def result(self):
        """Its :class:`TrainResult` (the run as it stands), the device freed."""
        live = self._ensure_live()
        kept = dict(live.kept)
        kept.update(live.trainer.kept_weights())
        if live.trainer.net.device.type == "cuda":
            torch.cuda.synchronize(live.trainer.net.device)
        self._live = None
        if live.refills is not None:
            return live.refills.result(kept, live.status, live.curves, self.halted, self.elapsed)
        return _result(kept, live.status, live.curves, self.K, self.M, self.halted, self.elapsed)


def _check_replicas(live, n_replicas):
    """Every replica of the run is in a slot of the network or among the
    kept weights (``n_replicas``: how many; None for an adaptive run, whose
    replicas in use its seats say; a stopped model whose seat found no
    newcomer may be in both), and no slot holds another's."""
    slots = [int(r) for r in live.trainer.net.slot_models]
    held = set(slots) | set(live.kept)
    if n_replicas is None:
        seats = live.refills.seats
        wanted = {k * seats.capacity + m for k in range(seats.K) for m in range(seats.n_models)}
        held = {r for r in held if r % seats.capacity < seats.n_models}
    else:
        wanted = set(range(n_replicas))
    if held != wanted or len(set(slots)) != len(slots):
        raise ValueError(f"the saved run's slots and kept weights do not hold each of its "
                         f"{len(wanted)} replicas")


def _compact(trainer, active, kept, config):
    """Once enough slots are frozen, save their weights into ``kept`` and
    compact them away (where that saves the trainer work)."""
    if (active.any() and trainer.compaction_pays
            and trainer.frozen.mean() >= config.compact_fraction):
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

    def record_epochs(self, losses, active, scores=None):
        """:meth:`record` of several epochs, each a row of ``losses``,
        ``active`` and (monitored) ``scores``."""
        self.loss.extend(np.where(active, losses, np.nan))
        if self.monitor:
            self.score.extend(np.where(active, scores, np.nan))

    @staticmethod
    def _stack(curves, n_replicas):
        return np.stack(curves, axis=1) if curves else np.zeros((n_replicas, 0))

    def arrays(self, n_replicas):
        """(loss, score or None), each of shape (n_replicas, n_epochs)."""
        score = self._stack(self.score, n_replicas) if self.monitor else None
        return self._stack(self.loss, n_replicas), score

    def state(self, n_replicas):
        """The curves so far, as host arrays."""
        loss, score = self.arrays(n_replicas)
        return {"loss": loss, "score": score}

    def restore(self, state, n_replicas, n_epochs):
        """Go on from the curves of :meth:`state`, which must hold
        ``n_epochs`` epochs of ``n_replicas`` replicas.

        Raises
        ------
        ValueError
            For curves of another shape.
        """
        names = ("loss", "score") if self.monitor else ("loss",)
        for name in names:
            shape = np.shape(state[name])
            if shape != (n_replicas, n_epochs):
                raise ValueError(f"the {name} curves have shape {shape}, not "
                                 f"{(n_replicas, n_epochs)} (replicas, epochs)")
        self.loss = list(np.asarray(state["loss"], dtype=float).T)
        if self.monitor:
            self.score = list(np.asarray(state["score"], dtype=float).T)


def _result(kept, status, curves, K, M, halted, train_time):
    """The :class:`TrainResult` of a run, per model and fold."""
    per_fold = lambda a: a.reshape(K, M, *a.shape[1:]).swapaxes(0, 1)  # noqa: E731
    loss, score = curves.arrays(K * M)
    return TrainResult(
        coefs=[[kept[k * M + i][0] for i in range(M)] for k in range(K)],
        intercepts=[[kept[k * M + i][1] for i in range(M)] for k in range(K)],
        loss_curves=per_fold(loss),
        validation_scores=None if score is None else per_fold(score),
        n_iter=per_fold(status.n_iter),
        converged=per_fold(status.converged),
        diverged=per_fold(status.diverged),
        pruned=per_fold(status.pruned),
        best_epoch=None if status.best is None else per_fold(status.best.epoch),
        train_time=train_time,
        halted=halted,
    )
