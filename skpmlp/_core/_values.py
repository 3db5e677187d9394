"""A parameter's values as one fit reads them: its single value, the seed, early stopping.

Plain functions of the estimator's parameters, below every layer that reads
them (splits, progress, settings, selection).
"""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from .._kernels import SOLVERS


def resolve_seed(random_state):
    """An int seed: ``random_state`` itself if an int, else one drawn from it."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def one_value(value):
    """A parameter's single value: the value itself, or the only entry of a
    one-element list, tuple or array; None for several candidates or a
    distribution (a searched parameter)."""
    if hasattr(value, "rvs"):
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        if isinstance(value, np.ndarray):
            values = np.asarray(value, dtype=object).ravel().tolist()
        else:
            values = list(value)
        return values[0] if len(values) == 1 else None
    return value


def uses_early_stopping(estimator):
    """Whether ``estimator`` early-stops: ``early_stopping=True`` with a
    minibatch solver (scikit-learn's MLP ignores it for ``"lbfgs"``). A
    searched ``solver`` counts as minibatch (:func:`check_solvers` refuses
    lbfgs models in a search that early-stops or prunes)."""
    return bool(estimator.early_stopping) and not full_batch(estimator)


def restores_best(estimator):
    """Whether ``estimator`` keeps every model at its own best epoch:
    ``restore_best_weights`` true or ``"fold"`` (search estimators only)
    with a minibatch solver (L-BFGS models are never monitored)."""
    return bool(getattr(estimator, "restore_best_weights", False)) and not full_batch(estimator)


def restores_best_on_test_folds(estimator):
    """Whether :func:`restores_best` picks each epoch on the fold's test
    rows: ``restore_best_weights="fold"`` (RealMLP's ``n_cv``)."""
    value = getattr(estimator, "restore_best_weights", False)
    return isinstance(value, str) and value == "fold" and restores_best(estimator)


def full_batch(estimator):
    """Whether ``estimator``'s one solver trains full-batch (L-BFGS); a
    searched ``solver`` counts as minibatch."""
    solver = one_value(estimator.solver)
    return solver is not None and SOLVERS[solver].family == "lbfgs"
