"""An L-BFGS run of a training call, round by round, that can stop and go on.

:class:`LbfgsTask` drives a fused L-BFGS (:func:`~skpmlp._engine._lbfgs._fused.open_lbfgs`: the
torch :class:`~skpmlp._engine._lbfgs._fused.LbfgsRun` or the kernel's
:class:`~skpmlp._engine._lbfgs._native.NativeLbfgsRun`) with the interface of a minibatch
:class:`~skpmlp._engine._minibatch._run.FusedRun`: ``advance``, ``host_state``, ``result``.
Its state between two rounds (every model's iterate, gradient, direction,
curvature pairs, line search and counters) leaves the device as host arrays
for a checkpoint, and a run restored from them goes on bit for bit. A
round runs with Ctrl-C held back (:func:`~._interrupts.deferred_interrupts`):
an interrupted run holds whole rounds, and ends with every unfinished model
back at its last iterate, as scipy's L-BFGS-B would return it.
"""

import time

import numpy as np

from .._interrupts import deferred_interrupts, halt_reason
from .._minibatch._epoch import past
from . import _fused as _lbfgs
from ._rules import native_evals


class LbfgsTask:
    """Every model of an L-BFGS run on every fold, trained round by round.

    Parameters
    ----------
    run : Run
        Its models and config (``tol``, ``max_iter``, ``max_fun``).
    spec : PopulationSpec
        Its models (every solver ``"lbfgs"``).
    X, y, folds :
        As :func:`~._train.train_population`; the evaluation rows of
        ``folds`` are not used.
    state : dict, optional
        A :meth:`host_state` to go on from.

    Attributes
    ----------
    rounds : int
        Fused evaluations run after the first (``epoch_callback`` numbers
        them).
    halted : {None, "interrupted", "max_time"}
    finished : bool
    """

    rung = None  # L-BFGS models are never pruned

    def __init__(self, run, spec, X, y, folds, state=None):
        self.run, self.spec, self.X, self.y, self.folds = run, spec, X, y, folds
        self.options = run.options
        self.K, self.M = len(folds), spec.n_models
        self._saved, self._live = state, None
        self.rounds = 0 if state is None else int(state["rounds"])
        self.begun = state is not None and bool(state["begun"])
        self.elapsed = 0.0 if state is None else float(state["elapsed"])
        self.halted, self.finished = None, False

    @property
    def started(self):
        return self.begun

    def _ensure_live(self):
        if self._live is None:
            self._live = _lbfgs.open_lbfgs(self.spec, self.run.config, self.X, self.y, self.folds,
                                    sample_weight=self.options.sample_weight)
            if self._saved is not None:
                self._live.load_host_state(self._saved["run"])
            self._saved = None
        return self._live

    def host_state(self):
        """Everything the run needs to go on from its last whole round."""
        if self._live is None:
            return self._saved
        return {"rounds": self.rounds, "begun": self.begun, "elapsed": self.elapsed,
                "run": self._live.host_state()}

    def suspend(self):
        """Move its state to the host and free the device."""
        if self._live is not None:
            self._saved, self._live = self.host_state(), None

    def validate(self):
        """Build the run from its saved state and drop it (see
        :meth:`~skpmlp._engine._minibatch._run.FusedRun.validate`)."""
        saved = self._saved
        if saved is not None:
            self._ensure_live()
            self._live, self._saved = None, saved

    def advance(self, decision, tick):
        """Train to the end, or until halted (``decision`` is unused: no
        rungs). ``tick`` is called after every round. Returns
        ``"finished"`` or ``"halted"``."""
        start = time.perf_counter()
        try:
            return self._advance(self._ensure_live(), tick)
        finally:
            self.elapsed += time.perf_counter() - start

    def _advance(self, run, tick):
        callback = self.options.epoch_callback
        # natively, one kernel call runs each model for several evaluations
        # in a row, sized from the last call's time (native_evals; one,
        # when a callback wants to see every fused evaluation)
        native = run.evaluate.backend == "native"
        evals = 1
        if not self.begun:
            # evaluating the initial weights trains nothing: a Ctrl-C
            # there propagates
            with deferred_interrupts():
                start = time.perf_counter()
                run.start()
                evals = self._next_evals(1, time.perf_counter() - start)
                self.begun = True
        while run.active.any():
            if self.rounds > 0 and past(self.options.deadline):
                self.halted = "max_time"
                return "halted"
            done = []
            try:
                with deferred_interrupts():
                    if native and callback is None:
                        start = time.perf_counter()
                        run.round(evals)
                        evals = self._next_evals(evals, time.perf_counter() - start)
                    else:
                        run.round()
                    self._report(run, callback)
                    self.rounds += 1
                    done.append(True)
                    tick()
            except KeyboardInterrupt as interruption:
                if self.rounds == 0 and not done:
                    raise
                self.halted = halt_reason(interruption)
                return "halted"
        self.finished = True
        return "finished"

    def _next_evals(self, evals, seconds):
        """:func:`~._rules.native_evals` before the run's deadline."""
        deadline = self.options.deadline
        return native_evals(evals, seconds, None if deadline is None else deadline - time.time())

    def _report(self, run, callback):
        """``epoch_callback`` after a round: every replica's loss and
        whether it still trains."""
        if callback is None:
            return
        K, M, net = self.K, self.M, run.net
        loss = np.full(K * M, np.nan)
        loss[net.slot_models] = run.f
        active = np.zeros(K * M, dtype=bool)
        active[net.slot_models] = run.active
        callback(self.rounds, {"loss": loss, "val_score": None, "active": active})

    def result(self):
        """Its :class:`TrainResult`; an unfinished model back at its last
        iterate."""
        run = self._ensure_live()
        if not self.finished:
            run.halt()
        self._live = None
        return _lbfgs._result(run.net, run, self.K, self.M, self.halted, self.elapsed,
                              run.evaluate.backend)
