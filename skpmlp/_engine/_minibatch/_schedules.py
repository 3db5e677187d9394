"""Learning-rate schedules of SGD models, as scikit-learn's MLP runs them.

Host side and numpy only, once per epoch, one value per replica (fold-major,
as :mod:`skpmlp._engine._minibatch._stopping`):

- ``"constant"``: the initial rate throughout;
- ``"invscaling"``: after each epoch, ``learning_rate_init / (t + 1) **
  power_t`` with ``t`` the training samples seen so far (the fold's rows
  times the epochs trained), scikit-learn's ``SGDOptimizer.iteration_ends``;
- ``"adaptive"``: where the stopping rule would stop a model, its rate is
  divided by 5 instead and its patience restarts, until the rate is at most
  1e-6 (scikit-learn's ``SGDOptimizer.trigger_stopping``).

Adam models keep their rate, whatever their ``learning_rate`` says, as in
scikit-learn.
"""

import numpy as np

from ..._kernels import SOLVERS

#: scikit-learn's floor below which an adaptive rate stops dividing
ADAPTIVE_FLOOR = 1e-6


class LearningRates:
    """Every replica's current learning rate.

    Parameters
    ----------
    initial : ndarray of shape (n_replicas,)
        ``learning_rate_init`` of every replica.
    settings : sequence of OptimizerSettings, one per replica
    fold_rows : ndarray of int of shape (n_folds,)
        Training rows of every fold (samples seen per epoch).
    """

    def __init__(self, initial, settings, fold_rows):
        self.initial = np.asarray(initial, dtype=float)
        self.current = self.initial.copy()
        n_folds = len(fold_rows)
        sgd = _scheduled(settings)
        schedule = np.array([s.learning_rate for s in settings])
        self.power_t = np.array([s.power_t for s in settings], dtype=float)
        self.invscaling = sgd & (schedule == "invscaling")
        self.adaptive = sgd & (schedule == "adaptive")
        self.rows = np.repeat(np.asarray(fold_rows, dtype=float), len(self.initial) // n_folds)
        # the epoch each replica joined the run (refills join late)
        self.born = np.zeros(len(self.initial))

    @property
    def scheduled(self):
        """Whether any replica's rate can change during the run."""
        return bool(self.invscaling.any() or self.adaptive.any())

    def end_epoch(self, epoch):
        """The invscaling rates for the epoch after ``epoch`` (0-based);
        whether any rate changed."""
        if not self.invscaling.any():
            return False
        seen = (epoch + 1 - self.born) * self.rows
        self.current = np.where(self.invscaling, self.initial / (seen + 1) ** self.power_t,
                                self.current)
        return True

    def absorb(self, stop):
        """Of the replicas the stopping rule stops (``stop``), those whose
        adaptive rate is divided by 5 instead (bool mask)."""
        absorbed = stop & self.adaptive & (self.current > ADAPTIVE_FLOOR)
        self.current = np.where(absorbed, self.current / 5.0, self.current)
        return absorbed

    def admit(self, replicas, initial, settings, epoch):
        """Replicas that join the run after ``epoch`` (a refill, see
        ``_refill``), with their own rates and :class:`OptimizerSettings`;
        their schedules count epochs from their start."""
        self.initial[replicas] = initial
        self.current[replicas] = initial
        self.born[replicas] = epoch + 1
        sgd = _scheduled(settings)
        schedule = np.array([s.learning_rate for s in settings])
        self.power_t[replicas] = [s.power_t for s in settings]
        self.invscaling[replicas] = sgd & (schedule == "invscaling")
        self.adaptive[replicas] = sgd & (schedule == "adaptive")


def _scheduled(settings):
    """Which replicas' solvers follow ``learning_rate`` schedules (SGD's,
    as scikit-learn's MLP)."""
    return np.array([SOLVERS[s.solver].velocity for s in settings], dtype=bool)
