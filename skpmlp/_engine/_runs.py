"""The flat plan of a training call: a population cut into homogeneous runs.

:func:`plan_runs` splits a population once, before anything trains, into
the fused runs :func:`~._train.train_population` then runs one after
another: models of one solver family (minibatch or L-BFGS), one batch size
and one memory chunk share a run. Every run carries the call's options
(:class:`RunOptions`), so an option given at the top reaches every run by
construction.
"""

import dataclasses
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Optional, Protocol

import numpy as np
import torch

from .._kernels import SOLVERS
from ._memory import data_bytes, held_bytes, memory_budget, model_bytes, plan_chunks
from ._spec import TrainConfig

if TYPE_CHECKING:  # annotations only: both import the training call
    from ._distributed import DataParallel
    from ._minibatch._refill import RefillSource


class Checkpoint(Protocol):
    """Where a training call's state goes (``skpmlp._persistence._checkpoint``)."""

    def due(self) -> bool:
        """Whether a checkpoint is due (asked after every epoch or round)."""

    def save(self, state: dict) -> None:
        """Keep ``state``, what ``train_population(..., resume=state)`` goes on from."""


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """What a training call (:func:`~._train.train_population`) asks of every run.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights in every model's loss (and in the L2 divisor, as
        scikit-learn's MLP) and in the monitoring scores.
    monitor : bool, default=True
        Score every replica on its fold's evaluation rows every epoch
        (needed by early stopping and pruning; gives ``validation_scores``).
    epoch_callback : callable, optional
        Called after every epoch as ``epoch_callback(epoch, info)`` with a
        dict of per-replica numpy arrays (``loss``, ``val_score``,
        ``active``; minibatch runs also ``converged``, the replicas the
        stopping rule stopped so far, and ``learning_rate``, the rates for
        the next epoch), of shape (n_folds * n_models,), fold-major.
    max_memory : float, optional
        Bytes the run may use on its device (with halving, the only input
        of the chunk plan).
    deadline : float, optional
        Wall-clock time (:func:`time.time`, comparable across processes and
        machines, unlike :func:`time.perf_counter`) after which training
        ends at the end of an epoch, keeping what was trained
        (``halted="max_time"``). A run that would start after it is not
        trained (initial weights, ``n_iter=0``).
    always_start : bool, default=True
        Train the first run for at least one epoch even when it starts
        past ``deadline``, so that a fit always has a trained model. The
        shards of a split search other than the first pass False: one that
        was queued past the deadline trains nothing.
    data_parallel : DataParallel, optional
        Split every step's rows over its ranks
        (:mod:`._distributed`); the chunk plan, the deadline and the
        stopping decisions are then agreed by every rank, and running out
        of memory fails the run on every rank instead of retrying.
        L-BFGS models and adaptive runs (``config.refill``) are not supported.
    refill_source : RefillSource, optional
        Needed with ``config.refill``: the new models of freed slots (see
        :mod:`skpmlp._engine._minibatch._refill`). An adaptive run is one fused run, never chunked,
        and its result holds every model it trained.
    checkpoint : object, optional
        Where the call's state goes (see ``skpmlp._persistence._checkpoint``): an object
        with ``due()`` (whether a checkpoint is due, called after every
        epoch or L-BFGS round) and ``save(state)`` (the call's state as host
        arrays: what ``train_population(..., resume=state)`` goes on from).
        It is saved when due, at every halving rung, when training halts
        and at the end.
    """

    sample_weight: np.ndarray = None
    monitor: bool = True
    epoch_callback: Optional[Callable] = None
    max_memory: float = None
    deadline: float = None
    always_start: bool = True
    data_parallel: Optional["DataParallel"] = None
    refill_source: Optional["RefillSource"] = None
    checkpoint: Optional[Checkpoint] = None


@dataclasses.dataclass(frozen=True)
class Run:
    """One fused run of a training call.

    Parameters
    ----------
    models : ndarray of int
        The models it trains: indices into the call's spec.
    config : TrainConfig
        The call's config, with the run's own batch size.
    solver : {"minibatch", "lbfgs"}
        Adam / SGD models step through minibatches and count epochs;
        L-BFGS models train full batch and count iterations.
    options : RunOptions
        The call's options, ``monitor`` the run's own (L-BFGS runs and runs
        without evaluation rows watch nothing).
    """

    models: np.ndarray
    config: TrainConfig
    solver: str
    options: RunOptions

    @property
    def family(self):
        """What halving ranks the run's models with: the runs of its batch
        size (None for L-BFGS runs, never pruned)."""
        return None if self.solver == "lbfgs" else int(self.config.batch_size)

    def state(self):
        """The run as the plan saved in a checkpoint holds it."""
        return {"models": np.asarray(self.models, dtype=np.int64), "solver": self.solver,
                "batch_size": int(self.config.batch_size)}

    def halves(self):
        """The run as two runs of half its models each (an out-of-memory retry)."""
        half = len(self.models) // 2
        parts = (self.models[:half], self.models[half:])
        return [dataclasses.replace(self, models=part) for part in parts]


def has_eval(folds):
    """Whether every fold has evaluation rows to watch."""
    return all(e is not None and len(e) > 0 for _, e in folds)


def plan_runs(spec, config, X, folds, options):
    """The runs of a training call, in the order they train.

    The minibatch models first, one family per batch size (smallest
    first), each cut into memory chunks; then the L-BFGS models, as one
    run. Models are independent, so a model's result is the one it gets
    trained alone whichever run it is in; successive halving ranks the
    models of every chunk of a batch size together (:mod:`._halving`).

    Raises
    ------
    ValueError
        For what a data-parallel call cannot train (L-BFGS models, an
        adaptive run) or its batches cannot split, and for an adaptive run
        (``config.refill``) that would not be one run.
    """
    dp = options.data_parallel
    lbfgs = np.array([SOLVERS[o.solver].family == "lbfgs" for o in spec.optimizers_of(config)],
                     dtype=bool)
    if lbfgs.any() and dp is not None:
        raise ValueError(
            "solver='lbfgs' trains full-batch and cannot split its rows over the ranks of a "
            "data-parallel fit; use 'adam' or 'sgd', or fit inside skpmlp.data_parallel(False)."
        )
    minibatch = np.flatnonzero(~lbfgs)
    batch_sizes = spec.batch_sizes_of(config)[minibatch]
    if config.refill:
        _check_adaptive(config, lbfgs, batch_sizes, dp)
    runs = []
    monitor = options.monitor and has_eval(folds)
    for size in np.unique(batch_sizes):
        models = minibatch[batch_sizes == size]
        sized = dataclasses.replace(config, batch_size=int(size))
        monitored = config.early_stopping or config.pruning or config.restore_best_weights
        assert has_eval(folds) or not monitored, "monitoring needs evaluation rows"
        if dp is not None:
            dp.plan_rows(min(sized.batch_size, max(len(train) for train, _ in folds)))
        if config.refill:  # an adaptive run refills its own slots: one run, never chunked
            chunks = [np.arange(len(models))]
        else:
            chunks = _plan_chunks(spec.subset(models), sized, X, folds, monitor, options)
        run_options = dataclasses.replace(options, monitor=monitor)
        runs += [Run(models[chunk], sized, "minibatch", run_options) for chunk in chunks]
    if lbfgs.any():  # never monitored (scikit-learn ignores early_stopping), never chunked
        unmonitored = dataclasses.replace(options, monitor=False)
        runs.append(Run(np.flatnonzero(lbfgs), config, "lbfgs", unmonitored))
    return runs


def restore_runs(saved, config, folds, options):
    """The runs of a plan saved by :meth:`Run.state` (a resumed call trains
    the plan it saved, whatever memory is free now)."""
    monitor = options.monitor and has_eval(folds)
    runs = []
    for run in saved:
        solver = str(run["solver"])
        sized = dataclasses.replace(config, batch_size=int(run["batch_size"]))
        if solver == "lbfgs":
            sized, run_options = config, dataclasses.replace(options, monitor=False)
        else:
            run_options = dataclasses.replace(options, monitor=monitor)
        runs.append(Run(np.asarray(run["models"], dtype=np.int64), sized, solver, run_options))
    return runs


def _check_adaptive(config, lbfgs, batch_sizes, dp):
    """An adaptive run refills its own slots from one refill source: it
    must be the call's only run."""
    if dp is not None:
        raise ValueError(
            f"refill={config.refill!r} is not supported in a data-parallel fit: its slots are "
            f"refilled by one process. Fit inside skpmlp.data_parallel(False), or set refill=None."
        )
    if lbfgs.any() or len(np.unique(batch_sizes)) > 1:
        raise ValueError(
            f"refill={config.refill!r} trains the population as one fused run, but its models "
            f"need several (L-BFGS models, or several batch sizes)."
        )


def _plan_chunks(spec, config, X, folds, monitor, options):
    """The chunks (model indices) ``spec`` trains as, one after another;
    a warning when there are several. Data-parallel, every rank plans with
    the least free memory of any rank."""
    dp, max_memory = options.data_parallel, options.max_memory
    # every fold's evaluation rows, a block each (run_data's layout)
    n_eval = sum(len(e) for _, e in folds) if monitor else 0
    per_model = model_bytes(spec, config, X.shape[1], n_folds=len(folds), n_eval=n_eval)
    shared = data_bytes(config, X.shape[0], X.shape[1])
    budget = memory_budget(config.device, max_memory)
    if dp is not None:
        budget = dp.minimum(budget)
    held = None
    if config.pruning is not None and torch.device(config.device).type == "cpu":
        # chunks train rung by rung: the others wait in the same memory
        held = held_bytes(spec, config, X.shape[1], n_folds=len(folds))
    chunks = plan_chunks(spec, per_model, shared, budget, held)
    if len(chunks) > 1:
        warnings.warn(
            f"The population needs about {per_model.sum() / 2**20:.1f} MiB on {config.device}, "
            f"more than the {budget / 2**20:.1f} MiB available: training it as {len(chunks)} "
            f"chunks one after another.",
            ResourceWarning, stacklevel=4,
        )
    return chunks
