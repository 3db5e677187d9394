"""Running a search plan: every model on every fold in ONE fused run, then scored.

:func:`run_search` is what ``fit`` and
:func:`skpmlp.model_selection.fused_cross_validate` share: it trains the
plan's population (:func:`~._training.train_models`), judges the failed
fits, scores every replica on its fold's held-out rows with every scorer
and builds ``cv_results_``. It returns a :class:`SearchRun`, which the
selection (:mod:`._selection`) and the refits (:mod:`._refit`) read.
"""

import dataclasses

import numpy as np

from ._adaptive import adaptive_columns, adaptive_population, hyperparameter_schedules
from ._engine import torch_threads
from ._failures import lone_model_divergence, warn_halted, warn_or_raise_about_fit_failures
from ._progress import announce_fits, report_fits
from ._results import build_cv_results
from ._resume import folds_digest, merge_resumed
from ._scoring import score_folds
from ._search import plan_search
from ._training import train_models


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
    """

    plan: object
    population: object
    spec: object
    result: object
    cv_results: dict
    multimetric: bool
    shards: list
    failed: np.ndarray
    test_loss: np.ndarray
    schedules: list = None

    @property
    def folds_digest(self):
        """Digest of the fold plan (see :func:`~._resume.folds_digest`)."""
        return folds_digest(self.plan.folds)


def search(estimator, X, y, sample_weight=None, groups=None):
    """Plan ``estimator``'s search on ``(X, y)`` and run it: a :class:`SearchRun`.

    Sets ``n_features_in_`` (and ``feature_names_in_``, ``classes_``,
    ``out_activation_``) on ``estimator``; everything else is returned.
    """
    return run_search(plan_search(estimator, X, y, sample_weight, groups))


def run_search(plan):
    """Train the plan's population on every fold fused, and score it."""
    population, spec = plan.population, plan.spec
    # a lone model talks as scikit-learn's MLP (its own lines), a search as GridSearchCV
    verbose = 0 if plan.lone else plan.execution.progress.verbose
    announce_fits(len(plan.folds), population.n_models, verbose)
    # refill: the run adds models, drawn or perturbed from the space
    source = plan.refill_source()
    data = plan.data
    result, shards = train_models(
        plan.training_spec(), plan.config, data.X, data.y_encoded, plan.engine_folds,
        plan.execution,
        sample_weight=data.train_weight, refill_source=source,
    )
    if plan.resumed is not None:  # the whole population: the others as they were
        result = merge_resumed(plan.previous, result, plan.resumed)
    if source is not None:  # every model trained is a row
        population, spec = adaptive_population(result, population), result.extra["spec"]
    failed = _failures(plan, result)
    # small torch ops, on one thread: on a busy CPU, OpenMP's barriers made
    # them 25x slower with 2 threads (digits, 24 models, load 5: 430 ms
    # against 17 ms per fold)
    with torch_threads(1):
        scores, score_time, test_loss = score_folds(plan, result, spec, failed)
    multimetric = plan.multimetric or set(scores["test"]) != {"score"}
    status = {"n_iter": result.n_iter.max(axis=1), "failed": failed.any(axis=1)}
    if plan.config.pruning is not None:
        status["pruned"] = result.pruned.any(axis=1)
    cv_results = build_cv_results(
        population, scores, fit_time=result.train_time, score_time=score_time,
        multimetric=multimetric,
        status=status, held_out=plan.held_out,
    )
    schedules = None
    if source is not None:
        cv_results = adaptive_columns(cv_results, result)
        schedules = hyperparameter_schedules(
            population, result.extra["parent"], result.extra["start_iter"],
            result.n_iter.max(axis=1),
            source.perturbed,
        )
    report_fits(
        cv_results, fit_time=np.full(failed.shape, result.train_time / failed.size),
        score_time=score_time,
        verbose=verbose, multimetric=multimetric, return_train_score=plan.return_train_score,
    )
    return SearchRun(
        plan=plan, population=population, spec=spec, result=result, cv_results=cv_results,
        multimetric=multimetric, shards=shards, failed=failed.any(axis=1), test_loss=test_loss,
        schedules=schedules,
    )


def _failures(plan, result):
    """Every fit's failure (diverged or untrained), judged as scikit-learn's
    MLP (a lone model) or GridSearchCV (a search) judges it: ndarray of bool
    of shape (n_models, n_folds)."""
    diverged = result.diverged
    if plan.lone:
        # a lone model is scikit-learn's MLP: its weights decide (an error)
        diverged = lone_model_divergence(result)
    warn_halted(result)
    # untrained models (a halt before their chunk ran) are failures too
    # (a warm-started L-BFGS model already at a minimum converges in 0)
    untrained = (result.n_iter == 0) & ~result.converged
    warn_or_raise_about_fit_failures(diverged, untrained, plan.error_score)
    return diverged | untrained
