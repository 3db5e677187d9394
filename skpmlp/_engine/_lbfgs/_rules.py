"""L-BFGS-B's settings and stop reasons, shared by the torch and the native L-BFGS.

:mod:`skpmlp._engine._lbfgs._fused` (the torch path and reference) and
:mod:`skpmlp._engine._lbfgs._native` (the kernel's) run the same algorithm
with the same constants; both take them from here, so neither imports the other for them.
"""

import numpy as np

from .._minibatch._epoch_calls import CALL_SECONDS

#: L-BFGS-B's settings under scikit-learn's MLP: history length (scipy's
#: ``maxcor``), relative decrease tolerance (``ftol``, scipy's default
#: ``factr * eps``), and evaluations per line search (``maxls``).
HISTORY = 10
FTOL = 2.2204460492503131e-09
MAX_LINE_SEARCH = 20

#: The most evaluations of each model in one native call.
MAX_NATIVE_EVALS = 10_000


def native_evals(evals, seconds, seconds_left=None):
    """Evaluations of each model for the next native call, after a call of
    ``evals`` that took ``seconds``: as many as fit in the minibatch runs'
    call length (:data:`~skpmlp._engine._minibatch._epoch_calls.CALL_SECONDS`,
    0.2 s) at that call's rate, or in the ``seconds_left`` before the
    deadline where fewer do; between 1 and :data:`MAX_NATIVE_EVALS`.

    Each call runs every training model for that many evaluations in a row
    (its curvature pairs stay in the core's cache) and ends with a barrier,
    its threads waiting for its last model, then the round's host work;
    ``max_time`` and Ctrl-C are seen between calls. Calls of a fixed 25
    evaluations (a few ms on small data) made those 5-13 % of a small
    search's time (iris, wine, two threads) and could take seconds on large
    data. How a run's evaluations are split into calls changes none of its
    results.
    """
    target = CALL_SECONDS if seconds_left is None else min(CALL_SECONDS, seconds_left)
    scaled = evals * max(target, 0.0) / max(seconds, 1e-6)
    return int(min(max(scaled, 1), MAX_NATIVE_EVALS))


#: Machine epsilon of float64: the curvature condition's scale.
EPS = np.finfo(np.float64).eps

#: Why a model stopped (``LbfgsRun.reason``, the native run's ``reason``).
RUNNING, CONVERGED, MAX_ITER, MAX_FUN, ABNORMAL, DIVERGED = range(6)
