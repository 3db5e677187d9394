"""Learning-rate schedules, as scikit-learn's MLP runs SGD's, and over the run.

Host side and numpy only, once per epoch, one value per replica (fold-major,
as :mod:`skpmlp._engine._minibatch._stopping`): a rate holds for a whole
epoch, every minibatch of it, and changes between two epochs.

scikit-learn's schedules, which apply to SGD alone (Adam and AdamW keep
their rate, whatever their ``learning_rate`` says, as in scikit-learn):

- ``"constant"``: the initial rate throughout;
- ``"invscaling"``: after each epoch, ``learning_rate_init / (t + 1) **
  power_t`` with ``t`` the training samples seen so far (the fold's rows
  times the epochs trained), scikit-learn's ``SGDOptimizer.iteration_ends``;
- ``"adaptive"``: where the stopping rule would stop a model, its rate is
  divided by 5 instead and its patience restarts, until the rate is at most
  1e-6 (scikit-learn's ``SGDOptimizer.trigger_stopping``).

Schedules over the run's ``H`` epochs, for every minibatch solver: epoch
``e`` (0-based) trains at ``learning_rate_init * s(t)`` with
``t = (e + 1/2) / H`` the middle of its share of the run (so no epoch
trains at a rate of exactly 0):

- ``"cosine"``: ``s(t) = (1 + cos(pi t)) / 2``, from the initial rate
  down to 0 (Loshchilov & Hutter's annealing without restarts);
- ``"coslog4"``: ``s(t) = (1 - cos(2 pi log2(1 + 15 t))) / 2``, RealMLP's
  (Holzmüller et al., 2024): four cycles from 0 up to the initial rate and
  back, each twice as long as the one before.

A warm-up (``warmup_fraction`` ``w`` > 0, every minibatch solver)
multiplies any of these rates by ``min(1, t / w)``: it rises linearly over
the first ``w * H`` epochs.

``H`` is ``max_iter``; a replica that joins a run late (a refill, see
``_refill``) counts its epochs from its start, over the ``max_iter - born``
epochs left. A model that stops early simply stops, wherever its schedule
was.
"""

import numpy as np

from ..._kernels import SOLVERS

#: scikit-learn's floor below which an adaptive rate stops dividing
ADAPTIVE_FLOOR = 1e-6

#: The schedules over the run, ``s(t)`` for ``t`` in [0, 1].
OVER_THE_RUN = {
    "cosine": lambda t: 0.5 * (1.0 + np.cos(np.pi * t)),
    "coslog4": lambda t: 0.5 * (1.0 - np.cos(2.0 * np.pi * np.log2(1.0 + 15.0 * t))),
}


class LearningRates:
    """Every replica's current learning rate.

    Parameters
    ----------
    initial : ndarray of shape (n_replicas,)
        ``learning_rate_init`` of every replica.
    settings : sequence of OptimizerSettings, one per replica
    fold_rows : ndarray of int of shape (n_folds,)
        Training rows of every fold (samples seen per epoch).
    max_iter : int
        The epochs the schedules over the run span.

    Attributes
    ----------
    base : ndarray of shape (n_replicas,)
        The rate scikit-learn's schedule gives (``"adaptive"`` divides it);
        ``initial`` for the others.
    current : ndarray of shape (n_replicas,)
        The rate of the next epoch: ``base`` times the schedule over the
        run and the warm-up.
    born : ndarray of shape (n_replicas,)
        The epoch each replica joined the run (refills join late).
    """

    def __init__(self, initial, settings, fold_rows, max_iter):
        self.initial = np.asarray(initial, dtype=float)
        n = len(self.initial)
        self.max_iter = int(max_iter)
        self.rows = np.repeat(np.asarray(fold_rows, dtype=float), n // len(fold_rows))
        self.power_t = np.zeros(n)
        self.invscaling = np.zeros(n, dtype=bool)
        self.adaptive = np.zeros(n, dtype=bool)
        self.shape = np.full(n, "", dtype=object)
        self.warmup = np.zeros(n)
        self._set_settings(np.arange(n), settings)
        self.base = self.initial.copy()
        self.born = np.zeros(n)
        self.current = self.base * self._factor(np.arange(n), 0)

    def _set_settings(self, replicas, settings):
        sgd = np.array([SOLVERS[s.solver].velocity for s in settings], dtype=bool)
        schedule = np.array([s.learning_rate for s in settings])
        self.power_t[replicas] = [s.power_t for s in settings]
        self.invscaling[replicas] = sgd & (schedule == "invscaling")
        self.adaptive[replicas] = sgd & (schedule == "adaptive")
        self.shape[replicas] = [s.learning_rate if s.learning_rate in OVER_THE_RUN else ""
                                for s in settings]
        self.warmup[replicas] = [s.warmup_fraction for s in settings]
        # read every epoch: formed here, where the settings change (comparing
        # the object array of shapes each epoch was 1.5 % of an iris search)
        self.over_the_run = (self.shape != "") | (self.warmup > 0)
        self.scheduled = bool(self.invscaling.any() or self.adaptive.any()
                              or self.over_the_run.any())

    #: which replicas follow a schedule over the run or a warm-up
    over_the_run = None
    #: whether any replica's rate can change during the run
    scheduled = False

    def _factor(self, replicas, epoch):
        """The factor of the schedule over the run and the warm-up of
        ``replicas`` in the run's epoch ``epoch`` (1 where they have none)."""
        replicas = np.asarray(replicas)
        factor = np.ones(len(replicas))
        over = self.over_the_run[replicas]
        if not over.any():
            return factor
        which = replicas[over]
        born = self.born[which]
        span = np.maximum(self.max_iter - born, 1.0)
        # past its span (the epoch after the last, never trained) the last
        # epoch's: a rate is never set to 0
        t = (np.minimum(epoch - born, span - 1) + 0.5) / span
        values = np.ones(len(which))
        for name, s in OVER_THE_RUN.items():
            mine = self.shape[which] == name
            values[mine] = s(t[mine])
        warmup = self.warmup[which]
        warming = warmup > 0
        values[warming] *= np.minimum(1.0, t[warming] / warmup[warming])
        factor[over] = values
        return factor

    def end_epoch(self, epoch):
        """The rates of the epoch after ``epoch`` (0-based); whether any
        may have changed."""
        if not self.scheduled:
            return False
        if self.invscaling.any():
            seen = (epoch + 1 - self.born) * self.rows
            self.base = np.where(self.invscaling, self.initial / (seen + 1) ** self.power_t,
                                 self.base)
        self.current = self.base * self._factor(np.arange(len(self.base)), epoch + 1)
        return True

    def absorb(self, stop):
        """Of the replicas the stopping rule stops (``stop``), those whose
        adaptive rate is divided by 5 instead (bool mask; :meth:`end_epoch`
        then gives the next epoch's rates)."""
        absorbed = stop & self.adaptive & (self.base > ADAPTIVE_FLOOR)
        self.base = np.where(absorbed, self.base / 5.0, self.base)
        return absorbed

    def admit(self, replicas, initial, settings, epoch):
        """Replicas that join the run after ``epoch`` (a refill, see
        ``_refill``), with their own rates and :class:`OptimizerSettings`;
        their schedules count epochs from their start. :attr:`current`
        gives their first epoch's rates."""
        replicas = np.asarray(replicas)
        self.initial[replicas] = initial
        self.base[replicas] = initial
        self.born[replicas] = epoch + 1
        self._set_settings(replicas, settings)
        self.current[replicas] = self.base[replicas] * self._factor(replicas, epoch + 1)

    def state(self):
        """What a resumed run needs, as host arrays."""
        return {"current": self.current.copy(), "base": self.base.copy(),
                "born": self.born.copy()}

    def restore(self, state):
        """Go on from :meth:`state` (a state saved before there was a
        ``base``, i.e. without warm-up, has it equal to ``current``)."""
        self.current[:] = state["current"]
        self.base[:] = state.get("base", state["current"])
        self.born[:] = state["born"]
