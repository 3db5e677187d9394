"""Running a search plan: every model on every fold in ONE fused run, then scored.

:func:`run_search` is what ``fit`` and
:func:`skpmlp.model_selection.fused_cross_validate` share: it trains the
plan's population (:func:`~skpmlp._execution._training.train_models`, one
call per ``input_transform`` value: :mod:`skpmlp._search._inputs`), judges the failed
fits, scores every replica on its fold's held-out rows with every scorer
and builds ``cv_results_``. It returns a :class:`SearchRun`, which the
selection (:mod:`skpmlp._selection._choice`) and the refits (:mod:`skpmlp._selection._refit`) read.
"""

import dataclasses

import numpy as np

from .._engine import PopulationSpec, TrainResult, torch_threads
from .._execution._progress import announce_fits, report_fits
from ._adaptive import AdaptiveRows, SpaceRefills
from ._failures import judge_failures
from ._inputs import train_by_input
from ._plan import SearchPlan, plan_search
from ._population import Population
from ._results import build_cv_results, mean_best_epoch
from ._scoring import score_folds
from ._warm_start import folds_digest, merge_resumed


@dataclasses.dataclass(frozen=True)
class SearchRun:
    """What a fused search produced, before any refit.

    Attributes
    ----------
    plan : SearchPlan
        What it ran.
    population : Population
        Every model trained (an adaptive search adds its refills).
    spec : PopulationSpec
        Their engine description.
    result : TrainResult
        The whole population's (a resumed search's merged with the
        previous fit's).
    cv_results : dict
    multimetric : bool
        Several metrics (scorers, or a callable returning a dict).
    shards : list of dict
    failed : ndarray of bool of shape (n_models,)
        Models that failed on some fold (diverged or untrained).
    test_loss : ndarray of shape (n_models,)
        Mean loss on the held-out rows over the folds (NaN for a model that
        failed on some fold): what ``selection="loss"`` and
        ``tie_breaker="loss"`` compare.
    schedules : list of dict or None
        With ``refill``: every row's per-epoch hyperparameters.
    held_out : list of (ndarray, ndarray) or None
        With ``plan.keep_predictions``: per fold, its held-out rows and
        every model's outputs on them (see :func:`~skpmlp._search._scoring.score_folds`).
    """

    plan: SearchPlan
    population: Population
    spec: PopulationSpec
    result: TrainResult
    cv_results: dict
    multimetric: bool
    shards: list
    failed: np.ndarray
    test_loss: np.ndarray
    schedules: list = None
    held_out: list = None

    @property
    def folds_digest(self):
        """Digest of the fold plan (see :func:`~skpmlp._search._warm_start.folds_digest`)."""
        return folds_digest(self.plan.folds)


def search(estimator, X, y, sample_weight=None, groups=None):
    """Plan ``estimator``'s search on ``(X, y)`` and run it: a :class:`SearchRun`.

    Sets ``n_features_in_`` (and ``feature_names_in_``, ``classes_``,
    ``out_activation_``) on ``estimator``; everything else is returned.
    """
    plan = plan_search(estimator, X, y, sample_weight, groups)
    return run_search(plan)


def run_search(plan):
    """Train the plan's population on every fold fused, and score it."""
    # refill: the run adds models, drawn or perturbed from the space
    source = SpaceRefills(plan.space, plan.population, plan.seed) if plan.config.refill else None
    # a lone model talks as scikit-learn's MLP (its own lines), a search as GridSearchCV
    verbose = 0 if plan.lone else plan.execution.progress.verbose
    announce_fits(len(plan.folds), plan.population.n_models, verbose)
    data = plan.data
    values = plan.population.column("input_transform")
    if plan.resumed is not None:  # the rows a resumed search trains again
        values = [values[row] for row in plan.resumed]
    result, shards = train_by_input(
        plan.train_spec, values, lambda value: plan.inputs.fold_inputs(value, len(plan.folds)),
        plan.config, data.X, data.y_encoded, plan.engine_folds, plan.execution,
        sample_weight=data.train_weight, refill_source=source, targets=plan.targets,
    )
    if plan.resumed is not None:  # the whole population: the others as they were
        result = merge_resumed(plan.previous, result, plan.resumed)
    # every model an adaptive run trained is a row
    adaptive = None if source is None else AdaptiveRows.of(result, plan.population, source)
    population, spec = plan.population, plan.spec
    if adaptive is not None:
        population, spec = adaptive.population, adaptive.spec
    failed = judge_failures(result, lone=plan.lone, error_score=plan.error_score)
    # small torch ops, on one thread: on a busy CPU, OpenMP's barriers made
    # them 25x slower with 2 threads (digits, 24 models, load 5: 430 ms
    # against 17 ms per fold)
    with torch_threads(1):
        scores, score_time, test_loss, held_out = score_folds(
            plan, result, spec, failed, population.column("input_transform"))
    multimetric = plan.multimetric or set(scores["test"]) != {"score"}
    status = {"n_iter": result.n_iter.max(axis=1), "failed": failed.any(axis=1)}
    if plan.config.pruning is not None:
        status["pruned"] = result.pruned.any(axis=1)
    if result.best_epoch is not None:
        status["best_epoch"] = mean_best_epoch(result.best_epoch)
    cv_results = build_cv_results(
        population, scores, fit_time=result.train_time, score_time=score_time,
        multimetric=multimetric, status=status, held_out=plan.held_out,
    )
    if adaptive is not None:
        cv_results.update(adaptive.columns)
    report_fits(
        cv_results, fit_time=np.full(failed.shape, result.train_time / failed.size),
        score_time=score_time, verbose=verbose, multimetric=multimetric,
        return_train_score=plan.return_train_score,
    )
    return SearchRun(
        plan=plan, population=population, spec=spec, result=result, cv_results=cv_results,
        multimetric=multimetric, shards=shards, failed=failed.any(axis=1), test_loss=test_loss,
        schedules=None if adaptive is None else adaptive.schedules, held_out=held_out,
    )
