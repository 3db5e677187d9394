"""L-BFGS-B's settings and stop reasons, shared by the torch and the native L-BFGS.

:mod:`skpmlp._engine._lbfgs._fused` (the torch path and reference) and
:mod:`skpmlp._engine._lbfgs._native` (the kernel's) run the same algorithm
with the same constants; both take them from here, so neither imports the other for them.
"""

import numpy as np

#: L-BFGS-B's settings under scikit-learn's MLP: history length (scipy's
#: ``maxcor``), relative decrease tolerance (``ftol``, scipy's default
#: ``factr * eps``), and evaluations per line search (``maxls``).
HISTORY = 10
FTOL = 2.2204460492503131e-09
MAX_LINE_SEARCH = 20

#: How long a native call should take. Each call runs every training
#: model for up to some evaluations in a row (its curvature pairs stay in
#: the core's cache), and ends with a barrier: its threads wait for the
#: last model. Calls of 25 evaluations (a few ms on small data) made that
#: wait and the round's host work 5-13 % of a small search's time
#: (iris, wine, 2 threads); calls of a quarter second would hold
#: ``max_time`` and Ctrl-C back that long.
NATIVE_CALL_SECONDS = 0.1

#: The most evaluations of each model in one native call.
MAX_NATIVE_EVALS = 10_000


def native_evals(evals, seconds):
    """Evaluations of each model for the next native call, after a call of
    ``evals`` that took ``seconds``: as many as fit in
    :data:`NATIVE_CALL_SECONDS` at that call's rate, between 1 and
    :data:`MAX_NATIVE_EVALS`. (How a run's evaluations are split into
    calls changes none of its results.)"""
    scaled = evals * NATIVE_CALL_SECONDS / max(seconds, 1e-6)
    return int(min(max(scaled, 1), MAX_NATIVE_EVALS))

#: Machine epsilon of float64: the curvature condition's scale.
EPS = np.finfo(np.float64).eps

#: Why a model stopped (``LbfgsRun.reason``, the native run's ``reason``).
RUNNING, CONVERGED, MAX_ITER, MAX_FUN, ABNORMAL, DIVERGED = range(6)
