"""Parameter constraints and training settings shared by all estimators."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ._compat import Interval, Options, StrOptions
from ._engine import TrainConfig, check_device

#: Parameters that say how each model trains (not what it is); an exported
#: model carries the values of the search it came from.
TRAINING_PARAMS = (
    "solver",
    "batch_size",
    "shuffle",
    "max_iter",
    "max_fun",
    "tol",
    "n_iter_no_change",
    "momentum",
    "nesterovs_momentum",
    "early_stopping",
    "validation_fraction",
    "monitor",
    "dtype",
    "device",
)

TRAINING_CONSTRAINTS = {
    "solver": [StrOptions({"adam", "sgd", "lbfgs"})],
    "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    "shuffle": ["boolean"],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "max_fun": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    # np.inf: never stop on a plateau, as scikit-learn's MLP
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), Options(Real, {np.inf})],
    "momentum": [Interval(Real, 0, 1, closed="both")],
    "nesterovs_momentum": ["boolean"],
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "monitor": [StrOptions({"score", "loss"})],
    "dtype": [StrOptions({"float32", "float64"})],
    "device": [str],
    "random_state": ["random_state"],
}


def resolve_seed(random_state):
    """An int seed: ``random_state`` itself if an int, else one drawn from it."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def uses_early_stopping(estimator):
    """Whether ``estimator`` early-stops: ``early_stopping=True`` with a
    minibatch solver (scikit-learn's MLP ignores it for ``"lbfgs"``)."""
    return bool(estimator.early_stopping) and estimator.solver != "lbfgs"


def train_config(estimator, *, task, n_outputs, seed):
    """The engine's :class:`TrainConfig` from an estimator's parameters.

    ``solver="lbfgs"`` ignores ``early_stopping`` (as scikit-learn's MLP)
    and the minibatch settings. ``batch_size="auto"`` is 200; the engine clips the batch to the training
    rows of each run, so "auto" means ``min(200, n_samples)``. Estimators
    without a ``pruning`` parameter (single models) never prune.
    """
    batch_size = 200 if estimator.batch_size == "auto" else estimator.batch_size
    return TrainConfig(
        task=task,
        n_outputs=n_outputs,
        solver=estimator.solver,
        batch_size=batch_size,
        max_iter=estimator.max_iter,
        max_fun=estimator.max_fun,
        tol=estimator.tol,
        n_iter_no_change=estimator.n_iter_no_change,
        early_stopping=uses_early_stopping(estimator),
        momentum=estimator.momentum,
        nesterovs_momentum=estimator.nesterovs_momentum,
        shuffle=estimator.shuffle,
        shuffle_seed=seed,
        dtype=estimator.dtype,
        # only checked here: each run resolves it where it trains, which
        # may be a worker with GPUs that this machine lacks
        device=check_device(estimator.device),
        pruning=getattr(estimator, "pruning", None),
        halving_factor=getattr(estimator, "halving_factor", 3.0),
        min_iter=getattr(estimator, "min_iter", 5),
        monitor=estimator.monitor,
        # regressors only (classifiers have no loss parameter)
        loss=getattr(estimator, "loss", "squared_error"),
    )


def warn_batch_size(batch_size, n_train):
    """scikit-learn MLP's warning when an int ``batch_size`` exceeds the
    ``n_train`` rows a model trains on; the batch is then clipped to them."""
    if batch_size != "auto" and batch_size > n_train:
        warnings.warn(
            "Got `batch_size` less than 1 or larger than sample size. It is going to be clipped",
            UserWarning,
            stacklevel=3,
        )
