"""When replicas stop: scikit-learn's stopping rule, divergence and successive halving.

Host side and numpy only, once per epoch: the training loop hands over the
epoch's per-replica losses and monitored values and learns which replicas
improved (their weights are the best so far) and which finished; or once
per kernel call of several epochs where the training loss alone decides
(:meth:`ReplicaStatus.end_epochs`). Replica ``r = k * n_models + i`` is
fold k's copy of model i (fold-major).

At a halving rung the status only reports its models still in the race
and their scores (:class:`~._halving.Rung`): which of them go on is decided
over every run of the call at once (:func:`~._halving.decide`), so that a
population split into memory chunks or shards is ranked as one, and the
decision comes back as :meth:`ReplicaStatus.cut`.
"""

import numpy as np

from .._halving import Rung, halve


class StoppingRule:
    """scikit-learn MLP's per-model ``tol`` / ``n_iter_no_change`` rule,
    vectorised over models.

    Parameters
    ----------
    n_models : int
        Number of independently watched values.
    config : TrainConfig
        ``early_stopping`` (watch a score to maximise, else a loss to
        minimise), ``tol`` and ``n_iter_no_change``.
    """

    def __init__(self, n_models, config):
        self.maximize = config.early_stopping
        self.tol, self.patience = config.tol, config.n_iter_no_change
        self.best = np.full(n_models, -np.inf if self.maximize else np.inf)
        self.count = np.zeros(n_models, dtype=int)

    def update(self, values, active):
        """Feed this epoch's monitored values; return (improved, stop) masks."""
        if self.maximize:
            no_gain = ~(values >= self.best + self.tol)  # NaN never gains
            improved = values > self.best
        else:
            no_gain = ~(values <= self.best - self.tol)
            improved = values < self.best
        self.count = np.where(active, np.where(no_gain, self.count + 1, 0), self.count)
        improved &= active
        self.best = np.where(improved, values, self.best)
        return improved, active & (self.count > self.patience)

    def trajectories(self, values):
        """The state :meth:`update` would reach after each of several
        epochs' ``values`` (n_epochs, n_models), every model watched, from
        the state now, without changing it: the best is the running
        minimum of the values (the loss rule: a lower value replaces it;
        early stopping's score rule: the running maximum) and the count the
        distance to the last epoch with a gain. Minimising, a NaN or
        infinite value never gains (the caller ends such a model there: its
        epoch's state is not the rule's); maximising, a NaN never gains
        (a score's, as :meth:`update`).

        Returns
        -------
        best, count : ndarray of shape (n_epochs, n_models)
        """
        epochs = np.arange(len(values))[:, None]
        if self.maximize:
            seen = np.where(np.isnan(values), -np.inf, values)
            best = np.maximum.accumulate(np.vstack([self.best[None], seen]), axis=0)
            gain = values >= best[:-1] + self.tol
        else:
            seen = np.where(np.isfinite(values), values, np.inf)
            best = np.minimum.accumulate(np.vstack([self.best[None], seen]), axis=0)
            gain = values <= best[:-1] - self.tol
        last_gain = np.maximum.accumulate(np.where(gain, epochs, -1), axis=0)
        count = np.where(last_gain >= 0, epochs - last_gain, self.count[None] + epochs + 1)
        return best[1:], count


class BestEpochs:
    """Every replica's own best epoch by its validation loss
    (``restore_best_weights``), vectorised over replicas.

    Parameters
    ----------
    n_replicas : int

    Attributes
    ----------
    loss : ndarray of shape (n_replicas,)
        The lowest validation loss each replica reached (inf before any
        finite one).
    epoch : ndarray of int of shape (n_replicas,)
        After how many of the run's epochs it was reached (0: never).
    """

    def __init__(self, n_replicas):
        self.loss = np.full(n_replicas, np.inf)
        self.epoch = np.zeros(n_replicas, dtype=int)

    def update(self, epoch, val_loss, healthy):
        """Feed epoch ``epoch``'s (0-based) validation losses; return the
        replicas (among ``healthy``) whose loss is the lowest so far, the
        first of ties (NaN never improves)."""
        improved = healthy & (val_loss < self.loss)
        self.loss = np.where(improved, val_loss, self.loss)
        self.epoch = np.where(improved, epoch + 1, self.epoch)
        return improved

    def reset(self, replicas):
        """Start ``replicas`` afresh (refilled models)."""
        self.loss[replicas] = np.inf
        self.epoch[replicas] = 0


def fold_mean(values, valid, n_folds):
    """Per-model mean over the folds where ``valid`` (replica arrays, fold
    major, on the last axis: one epoch's, or several epochs' rows) of
    ``values``; NaN where no fold is valid.

    The folds are added one after the other in fold order (not numpy's
    pairwise sum, whose order depends on the shape): the native kernel's
    early stopping forms the same mean in the same order."""
    shape = np.shape(values)[:-1] + (n_folds, -1)
    values = np.where(valid, values, 0.0).reshape(shape)
    counts = valid.reshape(shape).sum(-2)
    total = values[..., 0, :].copy()
    for fold in range(1, n_folds):
        total += values[..., fold, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, total / counts, np.nan)


class ReplicaStatus:
    """Where every replica of a fused run stands, epoch after epoch.

    Parameters
    ----------
    n_folds, n_models : int
    config : TrainConfig
        The stopping rule's settings and the halving schedule.
    learning_rates : LearningRates, optional
        Where given, an adaptive SGD replica that the rule would stop has
        its rate divided instead (:meth:`LearningRates.absorb`) and its
        patience restarts, as scikit-learn's MLP.

    Attributes
    ----------
    active : ndarray of bool of shape (n_folds * n_models,)
        Replicas still training.
    rung : Rung or None
        Set by :meth:`end_epoch` at a halving rung, until :meth:`cut`
        applies the decision.
    converged, diverged, pruned : ndarray of bool of shape (n_folds * n_models,)
        Why a replica stopped: its stopping rule, a NaN/inf loss, halving.
    n_iter : ndarray of int of shape (n_folds * n_models,)
        Epochs each replica trained.
    best : BestEpochs or None
        With ``restore_best_weights``, every replica's own best epoch by
        its validation loss (the weights :meth:`end_epoch` says to keep).
    """

    def __init__(self, n_folds, n_models, config, learning_rates=None):
        self.n_folds, self.n_models = n_folds, n_models
        self.learning_rates = learning_rates
        self.early_stopping = config.early_stopping
        self.halving_factor = config.halving_factor
        self.halving_epochs = config.halving_epochs()
        n_replicas = n_folds * n_models
        self.active = np.ones(n_replicas, dtype=bool)
        self.converged = np.zeros(n_replicas, dtype=bool)
        self.diverged = np.zeros(n_replicas, dtype=bool)
        self.pruned = np.zeros(n_replicas, dtype=bool)
        self.n_iter = np.zeros(n_replicas, dtype=int)
        self.rung = None
        # early stopping watches a model's mean validation score over its
        # folds, so its replicas stop together; the loss rule watches each
        # replica
        self.rule = StoppingRule(n_models if config.early_stopping else n_replicas, config)
        self.best = BestEpochs(n_replicas) if config.restore_best_weights else None

    def end_epoch(self, epoch, loss, score, val_loss=None):
        """Judge the epoch just trained.

        Parameters
        ----------
        epoch : int
            Index of the epoch (0 for the first).
        loss : ndarray of shape (n_folds * n_models,)
            Every replica's mean training loss.
        score : ndarray of shape (n_folds * n_models,) or None
            Every replica's monitored value (higher is better); None when
            not monitored.
        val_loss : ndarray of shape (n_folds * n_models,), optional
            Every replica's validation loss, with ``restore_best_weights``.

        Returns
        -------
        improved : ndarray of bool of shape (n_folds * n_models,)
            Replicas whose weights are the best so far, to keep: with
            ``restore_best_weights`` those whose own validation loss is the
            lowest so far, else those whose watched value is the best.
        finished : ndarray of bool of shape (n_folds * n_models,)
            Replicas that stop now (converged or diverged); they stay in
            :attr:`active` until :meth:`retire`. At a halving rung,
            :attr:`rung` holds the models still in the race, the others
            that stop then come from :meth:`cut`.
        """
        K, M = self.n_folds, self.n_models
        self.n_iter[self.active] = epoch + 1
        newly_diverged = self.active & ~np.isfinite(loss)
        self.diverged |= newly_diverged
        healthy = self.active & ~newly_diverged
        if self.early_stopping:
            improved, stop = self.rule.update(fold_mean(score, healthy, K),
                                              healthy.reshape(K, M).any(0))
            improved, stop = np.tile(improved, K) & healthy, np.tile(stop, K) & healthy
        else:
            improved, stop = self.rule.update(loss, healthy)
        if self.learning_rates is not None:
            stop = stop & ~self._slow_down(stop)
        self.converged |= stop
        if self.best is not None:
            improved = self.best.update(epoch, val_loss, healthy)
        if epoch + 1 in self.halving_epochs:
            self.rung = self._rung(epoch + 1, score, healthy, healthy & ~stop)
        return improved, stop | newly_diverged

    def replays_epochs(self, first, n, scored=False):
        """Whether :meth:`end_epochs` (or, under early stopping, with the
        epochs' scores in hand, ``scored``: :meth:`end_scored_epochs`) may
        stand for ``n`` calls of :meth:`end_epoch` from epoch ``first``:
        the training loss or early stopping's score decides (no
        ``restore_best_weights``, no adaptive rates) and no halving rung
        falls among them."""
        return ((not self.early_stopping or scored) and self.best is None
                and self.learning_rates is None
                and not any(first < e <= first + n for e in self.halving_epochs))

    def end_epochs(self, first, losses):
        """:meth:`end_epoch` of ``len(losses)`` epochs in a row from epoch
        ``first``, where :meth:`replays_epochs`: each epoch's finished
        replicas retired before the next (the last epoch's left to
        :meth:`retire`), and none past the epoch where no replica is still
        training. The same state, computed over all the epochs at once (an
        epoch at a time took 13-15 us of the host's: 5-6 ms of an iris
        search's 230, its 200 epochs and its refit's): each replica ends at
        its first epoch that stops it (:meth:`StoppingRule.trajectories`)
        or whose loss is not finite, as :meth:`end_epoch` ends it.

        Parameters
        ----------
        first : int
            The run's index of the first epoch.
        losses : ndarray of shape (n_epochs, n_folds * n_models)
            Every replica's mean training loss of each epoch (NaN for those
            in no slot, or that trained no further).

        Returns
        -------
        ended_at : ndarray of int of shape (n_folds * n_models,)
            The epoch (index into ``losses``) at which each replica ended;
            ``len(losses)`` for those that did not, or were not training.
        trained : ndarray of bool of shape (n_replayed, n_folds * n_models)
            Which replicas trained each epoch replayed: fewer epochs than
            ``len(losses)`` where every replica ended before the last.
        """
        n, rule, active = len(losses), self.rule, self.active
        finite = np.isfinite(losses)
        best, count = rule.trajectories(losses)
        ends = ~finite | (count > rule.patience)
        ended_at = np.where(active & ends.any(0), ends.argmax(0), n)
        trained, columns, last, diverged = self._end_replayed(first, ended_at, finite)
        # a diverging epoch changes neither the best nor the count
        before = np.where(last > 0, count[np.maximum(last - 1, 0), columns], rule.count[columns])
        rule.best[columns] = best[last, columns]
        rule.count[columns] = np.where(diverged, before, count[last, columns])
        return ended_at, trained

    def _end_replayed(self, first, ended_at, finite):
        """What a replay of ``len(finite)`` epochs from epoch ``first``
        leaves of the replicas training at its start, each ended at
        ``ended_at`` (``len(finite)``: not ended), diverged where its
        loss there is not finite (``finite``: per epoch and replica):
        their epochs, why they stopped, and which train on (those ended
        before the last epoch retired, the last epoch's left to
        :meth:`retire`).

        Returns
        -------
        trained : ndarray of bool of shape (n_replayed, n_folds * n_models)
            Which replicas trained each epoch replayed.
        columns, last : ndarray of int
            Those replicas, and the last epoch each trained.
        diverged : ndarray of bool
            Whether each of them ended by diverging.
        """
        n, active = len(finite), self.active
        n_replayed = int(min(n, ended_at[active].max(initial=0) + 1))
        trained = active & (np.arange(n_replayed)[:, None] <= ended_at)
        columns = np.flatnonzero(active)
        last = np.minimum(ended_at, n_replayed - 1)[columns]
        ended = ended_at[columns] < n
        diverged = ended & ~finite[last, columns]
        self.n_iter[columns] = first + last + 1
        self.diverged[columns[diverged]] = True
        self.converged[columns[ended & ~diverged]] = True
        self.active &= ~(ended_at < n - 1)
        return trained, columns, last, diverged

    def end_scored_epochs(self, first, losses, scores):
        """:meth:`end_epochs` under early stopping: :meth:`end_epoch` of
        ``len(losses)`` epochs in a row from epoch ``first``, each model
        watched by the mean of its replicas' ``scores`` over the folds
        whose replica still trains with a finite loss, where
        :meth:`replays_epochs`. The same state, computed over all the epochs
        at once (an epoch at a time took 5-6 % of an early-stopping search of
        iris, about a hundred epochs of 50 us each): a replica ends at its
        first epoch of a non-finite loss or at its model's first epoch that
        the rule stops (:meth:`StoppingRule.trajectories` of the fold
        means), whichever comes first.

        Parameters
        ----------
        first : int
            The run's index of the first epoch.
        losses, scores : ndarray of shape (n_epochs, n_folds * n_models)
            Every replica's mean training loss and monitored score of each
            epoch (NaN for those in no slot, or that trained no further).

        Returns
        -------
        ended_at : ndarray of int of shape (n_folds * n_models,)
            As :meth:`end_epochs`.
        trained : ndarray of bool of shape (n_replayed, n_folds * n_models)
            As :meth:`end_epochs`.
        kept_after : ndarray of int of shape (n_folds * n_models,)
            After how many of the epochs each replica's weights were its
            best (its model's best mean score, where the replica counted in
            it); 0 for none.
        """
        n, K, M = len(losses), self.n_folds, self.n_models
        rule, active = self.rule, self.active
        epochs = np.arange(n)[:, None]
        finite = np.isfinite(losses)
        diverges_at = np.where((~finite).any(0), (~finite).argmax(0), n)
        # a replica counts in its model's mean until it diverges (or ends)
        healthy = active & (epochs < diverges_at)
        # per model, a run of epochs from the first: past it, none of its
        # replicas trains (the rule's state stays)
        watched = healthy.reshape(n, K, M).any(1)
        means = fold_mean(scores, healthy, K)
        best, count = rule.trajectories(means)
        best_before = np.vstack([rule.best[None], best[:-1]])
        stops = watched & (count > rule.patience)
        stop_at = np.where(stops.any(0), stops.argmax(0), n)
        ended_at = np.where(active, np.minimum(diverges_at, np.tile(stop_at, K)), n)
        trained, _, _, _ = self._end_replayed(first, ended_at, finite)
        n_replayed = len(trained)
        improved = (np.tile(watched & (means > best_before), K) & healthy)[:n_replayed] & trained
        kept_after = np.where(improved.any(0), n_replayed - improved[::-1].argmax(0), 0)
        # each model's rule as its last watched epoch left it
        n_watched = watched[:n_replayed].sum(0)
        models = np.flatnonzero(n_watched > 0)
        at = np.minimum(stop_at, n_watched - 1)[models]
        rule.best[models] = best[at, models]
        rule.count[models] = count[at, models]
        return ended_at, trained, kept_after

    def _slow_down(self, stop):
        """The replicas of ``stop`` whose adaptive rate drops instead, with
        their patience restarted (a model's, under early stopping, whose
        replicas share one rule)."""
        absorbed = self.learning_rates.absorb(stop)
        if self.early_stopping:
            self.rule.count[absorbed.reshape(self.n_folds, -1).any(0)] = 0
        else:
            self.rule.count[absorbed] = 0
        return absorbed

    def _rung(self, epoch, score, healthy, candidates):
        """The :class:`~._halving.Rung` of the models with a replica among
        ``candidates``, ranked by their best mean score (early stopping) or
        by this epoch's mean over their ``healthy`` replicas."""
        K = self.n_folds
        alive = candidates.reshape(K, -1).any(0)
        scores = self.rule.best if self.early_stopping else fold_mean(score, healthy, K)
        models = np.flatnonzero(alive)
        return Rung(epoch, models, np.asarray(scores, float)[models], candidates)

    def cut(self, pruned):
        """Apply the decision of the pending :attr:`rung`: the models
        ``pruned`` (model indices) stop.

        Returns
        -------
        ndarray of bool of shape (n_folds * n_models,)
            Their replicas that were still in the race (to retire).
        """
        rung, self.rung = self.rung, None
        models = np.zeros(self.n_models, dtype=bool)
        models[np.asarray(pruned, dtype=int)] = True
        cut = np.tile(models, self.n_folds) & rung.candidates
        self.pruned |= cut
        return cut

    def cut_alone(self, factor, min_keep):
        """Decide the pending :attr:`rung` on this run's models alone and
        apply it (an adaptive run is its call's only run): as :meth:`cut`."""
        rung = self.rung
        keep_out = halve(rung.scores, np.ones(len(rung.models), dtype=bool), factor, min_keep)
        return self.cut(rung.models[keep_out])

    def retire(self, finished):
        """Mark the ``finished`` replicas as no longer training."""
        self.active &= ~finished

    def admit(self, models):
        """Start the replicas of ``models`` (model indices) afresh: a refill
        put them in freed slots (see :mod:`skpmlp._engine._minibatch._refill`); they train from the
        next epoch on, with a stopping rule of their own."""
        K, M = self.n_folds, self.n_models
        replicas = (np.arange(K)[:, None] * M + np.asarray(models)[None, :]).ravel()
        self.active[replicas] = True
        for mask in (self.converged, self.diverged, self.pruned):
            mask[replicas] = False
        if self.best is not None:
            self.best.reset(replicas)
        watched = models if self.early_stopping else replicas
        self.rule.best[watched] = -np.inf if self.rule.maximize else np.inf
        self.rule.count[watched] = 0
