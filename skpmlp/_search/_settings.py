"""From an estimator's parameters to what the engine trains with.

The engine's :class:`~._engine.TrainConfig`, and the checks and warnings
about the solvers and batch sizes a fit combines; shared by the search and
the single-model estimators.
"""

import warnings
from dataclasses import fields
from numbers import Integral

import numpy as np

from .._core._params import OPTIMIZER_DEFAULTS
from .._core._values import full_batch, one_value, restores_best, uses_early_stopping
from .._engine import OptimizerSettings, TrainConfig, check_device
from .._kernels import SOLVERS
from ._population import resolve_batch_size, with_resolved_dropout


def check_solvers(estimator, population):
    """Refuse a search whose models' solvers disagree with its monitoring.

    L-BFGS models train full-batch and are never monitored, so they cannot
    share a search with minibatch models that early-stop or are pruned (the
    validation rows and the ranking would not mean the same for both).

    Raises
    ------
    ValueError
        With ``early_stopping=True`` or ``pruning``, if some models use
        ``"lbfgs"`` and others a minibatch solver, or the models' solver is
        not the estimator's own ``"lbfgs"`` / minibatch choice.
    """
    monitored = (bool(estimator.early_stopping) or getattr(estimator, "pruning", None) is not None
                 or bool(getattr(estimator, "restore_best_weights", False)))
    if not monitored:
        return
    solvers = set(population.column("solver"))
    families = {SOLVERS[solver].family for solver in solvers}
    own_lbfgs = full_batch(estimator)
    mixed = "lbfgs" in families and (len(families) > 1 or not own_lbfgs)
    if mixed or (own_lbfgs and families != {"lbfgs"}):
        raise ValueError(
            f"The searched solvers {sorted(solvers)} mix 'lbfgs' with minibatch solvers while "
            f"early_stopping={estimator.early_stopping!r}, pruning="
            f"{getattr(estimator, 'pruning', None)!r} and restore_best_weights="
            f"{getattr(estimator, 'restore_best_weights', False)!r}: L-BFGS models train "
            f"full-batch and are never monitored. Search 'lbfgs' in a fit of its own, or set "
            f"early_stopping=False, pruning=None and restore_best_weights=False."
        )


def check_dropout(subspaces):
    """Refuse models that would train L-BFGS with dropout.

    ``subspaces``: dicts of candidate lists (or distributions) of
    ``solver`` and ``dropout``, as a :class:`~._space.SearchSpace` holds
    them: a subspace that can draw both ``"lbfgs"`` and a rate above 0 is
    refused, whether or not a draw combines them (a refill might).

    Raises
    ------
    ValueError
        Naming ``solver`` and ``dropout``.
    """
    for subspace in subspaces:
        solvers, rates = subspace["solver"], subspace["dropout"]
        lbfgs = hasattr(solvers, "rvs") or "lbfgs" in list(solvers)
        # "auto" is 0 for an L-BFGS model
        drops = hasattr(rates, "rvs") or any(rate != "auto" and rate > 0 for rate in rates)
        if lbfgs and drops:
            shown = "a distribution" if hasattr(rates, "rvs") else list(rates)
            raise ValueError(
                f"solver='lbfgs' cannot train with dropout (got dropout={shown}): dropout makes "
                f"the objective random, which breaks L-BFGS's line search. Use a minibatch "
                f"solver ('adam', 'adamw' or 'sgd') with dropout, or dropout=0 with 'lbfgs' "
                f"(in a param_grid: separate dicts)."
            )


def _scalar(estimator, name, default):
    """``estimator``'s single value of ``name`` (its default when searched:
    each model's own value then goes to the engine in the spec)."""
    value = one_value(getattr(estimator, name, default))
    return default if value is None else value


def training_dtype(dtype, X_dtype):
    """The dtype a fit trains in: ``dtype`` itself, or X's (float32 or
    float64 after validation) for ``"auto"``, as scikit-learn's MLP."""
    return np.dtype(X_dtype).name if dtype == "auto" else dtype


#: The optimizer parameters a :class:`TrainConfig` holds as its default
#: :class:`OptimizerSettings` (the batch size is resolved apart).
_CONFIG_OPTIMIZER = [f.name for f in fields(OptimizerSettings)]


def train_config(estimator, *, task, n_outputs, seed, X_dtype=np.float64):
    """The engine's :class:`TrainConfig` from an estimator's parameters.

    ``X_dtype`` (the validated X's) is the training dtype where the
    estimator's ``dtype`` is ``"auto"``.

    ``solver="lbfgs"`` ignores ``early_stopping`` (as scikit-learn's MLP)
    and the minibatch settings. ``batch_size="auto"`` is 200; the engine
    clips the batch to the training rows of each run, so "auto" means
    ``min(200, n_samples)``. A searched ``batch_size`` goes to the engine
    per model, in the population's spec. Estimators without a ``pruning``
    parameter (single models) never prune.
    """
    return TrainConfig(
        task=task,
        n_outputs=n_outputs,
        # each model's optimizer is in the population spec; the config's
        # optimizer (a spec without one) is the estimator's single values,
        # the defaults where searched
        **with_resolved_dropout({name: _scalar(estimator, name, OPTIMIZER_DEFAULTS[name])
                                 for name in _CONFIG_OPTIMIZER}),
        batch_size=resolve_batch_size(_scalar(estimator, "batch_size", "auto")),
        max_iter=estimator.max_iter,
        max_fun=estimator.max_fun,
        tol=estimator.tol,
        n_iter_no_change=estimator.n_iter_no_change,
        early_stopping=uses_early_stopping(estimator),
        restore_best_weights=restores_best(estimator),
        shuffle=estimator.shuffle,
        shuffle_seed=seed,
        dtype=training_dtype(estimator.dtype, X_dtype),
        # only checked here: each run resolves it where it trains, which
        # may be a worker with GPUs that this machine lacks
        device=check_device(estimator.device),
        pruning=getattr(estimator, "pruning", None),
        halving_factor=getattr(estimator, "halving_factor", 3.0),
        min_iter=getattr(estimator, "min_iter", 5),
        min_survivors=halving_keeps(estimator),
        refill=getattr(estimator, "refill", None),
        max_models=getattr(estimator, "max_models", None),
        monitor=estimator.monitor,
        # regressors only (classifiers have no loss parameter)
        loss=getattr(estimator, "loss", "squared_error"),
    )


def halving_keeps(estimator):
    """How many models every halving rung keeps at least: an ensemble's
    members must be models trained to the end, so ``ensemble_size`` for
    ``ensemble="best"`` or ``"folds"``; a greedy ensemble's ``ensemble_size``
    counts selection steps, not models, and picks among whatever trained to
    the end, so it needs 1. ``"auto"`` (greedy with k folds, best with a
    holdout) keeps ``ensemble_size`` too: the rungs are cut before the
    search knows which."""
    if getattr(estimator, "ensemble", "best") == "greedy":
        return 1
    return getattr(estimator, "ensemble_size", None) or 1


def warn_batch_size(batch_sizes, n_train):
    """scikit-learn MLP's warning when an int batch size (one of
    ``batch_sizes``: the models' values, or one value) exceeds the
    ``n_train`` rows a model trains on; the batch is then clipped to them."""
    sizes = [batch_sizes] if isinstance(batch_sizes, (str, Integral)) else list(batch_sizes)
    if any(size != "auto" and size > n_train for size in sizes):
        warnings.warn(
            "Got `batch_size` less than 1 or larger than sample size. It is going to be clipped",
            UserWarning,
            stacklevel=3,
        )
