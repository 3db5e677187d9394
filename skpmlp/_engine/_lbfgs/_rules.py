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

#: Evaluations of each model per native call: enough for its curvature
#: pairs to stay in cache, few enough for ``max_time`` and Ctrl-C to be
#: seen within a fraction of a second on small data.
NATIVE_EVALS_PER_CALL = 25

#: Machine epsilon of float64: the curvature condition's scale.
EPS = np.finfo(np.float64).eps

#: Why a model stopped (``LbfgsRun.reason``, the native run's ``reason``).
RUNNING, CONVERGED, MAX_ITER, MAX_FUN, ABNORMAL, DIVERGED = range(6)
