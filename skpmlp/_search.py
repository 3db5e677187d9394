"""One fused search: the population on every fold, scored (no refit).

:func:`run_search` is what ``fit`` and
:func:`skpmlp.model_selection.fused_cross_validate` share: validate the
data, expand the parameters into a population, plan the folds, train every
model on every fold in ONE fused run, and score every replica on its fold's
held-out rows with every scorer.
"""

import dataclasses
import time

import numpy as np
from sklearn.base import is_classifier
from sklearn.metrics import check_scoring, get_scorer
from sklearn.utils import check_array

from ._adaptive import (
    SpaceRefills, adaptive_columns, adaptive_population, check_refill, hyperparameter_schedules,
)
from ._attributes import warm_start_weights
from ._compat import check_sample_weight, validate_data
from ._divergence import lone_model_divergence
from ._engine import local_device, population_outputs, prepare_kernel, torch_threads
from ._parallel import train_search
from ._params import check_solvers, resolve_seed, train_config, warn_batch_size
from ._population import Population
from ._progress import announce_fits, progress_for, report_fits
from ._resume import (
    check_resume_settings, check_same_population, folds_digest, merge_resumed, previous_search, resume_seed,
    resume_spec, survivors,
)
from ._results import build_cv_results
from ._scoring import (
    ScoringFailures, population_loss, score_population, warn_halted,
    warn_or_raise_about_fit_failures, weighted_scorers,
)
from ._space import SearchSpace
from ._single import _SPARSE, dense
from ._splits import SplitSettings, plan_folds, training_folds


def check_weighted_folds(estimator, y_encoded, sample_weight, folds):
    """Row weights (``sample_weight`` times any class weights) must leave
    something to learn and to score.

    Raises
    ------
    ValueError
        If fewer than two classes have positive weight (classifiers whose
        ``y`` has two or more), or a fold's training or held-out
        rows weigh zero in total.
    """
    if is_classifier(estimator) and y_encoded.ndim == 1:
        weighted = np.unique(y_encoded[sample_weight > 0])
        if len(weighted) < min(2, len(np.unique(y_encoded))):
            raise ValueError(
                f"sample_weight is positive for {len(weighted)} class only; "
                f"{type(estimator).__name__} needs at least 2 classes with positive weight."
            )
    for k, (train, test) in enumerate(folds):
        for part, rows in (("training", train), ("held-out", test)):
            if rows is not None and sample_weight[rows].sum() <= 0:
                raise ValueError(
                    f"The {part} rows of split {k} all have zero sample_weight; they cannot "
                    f"{'train' if part == 'training' else 'score'} any model."
                )


def resolve_scorers(estimator, scoring):
    """``({name: scorer or None}, multimetric)``; None means the fused
    default score (accuracy / R^2)."""
    if scoring is None:
        return {"score": None}, False
    if isinstance(scoring, str) or callable(scoring):
        return {"score": check_scoring(estimator, scoring)}, False
    if isinstance(scoring, dict):
        if not scoring:
            raise ValueError("scoring is an empty dict; give at least one scorer.")
        return {name: check_scoring(estimator, s) for name, s in scoring.items()}, True
    names = list(scoring)
    if not names or len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"scoring as a list, tuple or set must hold unique scorer names; got {scoring!r}."
        )
    return {name: get_scorer(name) for name in names}, True


def fitted_scorers(estimator, scorers):
    """``scorers`` (from :func:`resolve_scorers`) with the default score as
    a scorer object: what ``scorer_`` holds. As GridSearchCV's, the default
    is the scoring of the estimator searched over, the standalone model's
    own ``score`` (accuracy / R^2)."""
    default = check_scoring(estimator._single_class())
    return {name: default if scorer is None else scorer for name, scorer in scorers.items()}


def train_fused(estimator, spec, config, X, y, folds, *, name="fused run", lone=False, **train_kwargs):
    """Train a population as ``estimator`` asks: in shards with its
    ``n_jobs``, within its ``max_memory``, reporting progress with its
    ``verbose`` (scikit-learn MLP's lines where ``lone``: the fit is one
    model, see :meth:`~._splits.SplitSettings.is_lone`), on ``config.device`` (resolved
    where each run trains). The search and the cv refit both train through
    here.

    Returns
    -------
    result : TrainResult
    shards : list of dict
    """
    if estimator.verbose:
        # a first-use compile of the native kernel takes seconds: say so
        prepare_kernel(config, verbose=True)
    progress = progress_for(estimator, lone, config.max_iter, name)
    try:
        return train_search(
            spec, config, X, y, folds, n_jobs=estimator.n_jobs, epoch_callback=progress,
            max_memory=estimator.max_memory, **train_kwargs,
        )
    finally:
        if progress is not None:
            progress.close()


@dataclasses.dataclass
class SearchRun:
    """Everything a fused search produced, before any refit."""

    population: object
    spec: object
    config: object
    folds: list
    result: object
    cv_results: dict
    scorers: dict
    multimetric: bool
    seed: int
    X: np.ndarray
    y: np.ndarray
    y_encoded: np.ndarray
    #: what the models trained with: sample_weight times the class weights
    train_weight: np.ndarray
    shards: list
    failed: np.ndarray
    deadline: float = None
    train_sizes: list = None
    held_out: bool = True
    #: (n_models,) mean loss on the held-out rows over the folds (NaN for
    #: a model that failed on some fold): what ``selection="loss"`` and
    #: ``tie_breaker="loss"`` compare
    test_loss: np.ndarray = None
    #: whether the models started from the previous fit's weights (warm_start)
    warm_started: bool = False
    #: with ``refill``: every row's per-epoch hyperparameters (see _adaptive)
    schedules: list = None
    #: digest of the fold plan (see _resume.folds_digest)
    folds_digest: str = None
    #: whether the run continued a previous search (warm_start, several models)
    resumed: bool = False


def check_warm_start(estimator, n_models, prior):
    """``warm_start=True`` continues the previous fit: one configuration
    from its ``coefs_``, a search of several models each from its own
    previous weights (see :mod:`._resume`). A search of several models
    cannot continue a previous fit of one configuration.

    Parameters
    ----------
    estimator : BaseParallelMLP
    n_models : int
        Models this fit draws.
    prior : dict
        The estimator's attributes before this fit.

    Raises
    ------
    ValueError
        For ``warm_start=True`` with a search of several models after a
        fit of one configuration.
    """
    if estimator.warm_start and n_models > 1 and prior.get("n_models_") == 1:
        raise ValueError(
            f"warm_start=True continues the previous fit's models, but the previous fit "
            f"trained 1 model and this search draws {n_models} (the parameters changed). "
            f"Fit the same parameters, or set warm_start=False to start afresh."
        )


def check_groups(groups, X):
    """``groups`` as a 1-D array of one label per row of ``X`` (or None).

    Raises
    ------
    ValueError
        If ``groups`` is not 1-D or its length is not ``X``'s.
    """
    if groups is None:
        return None
    groups = check_array(groups, ensure_2d=False, dtype=None, input_name="groups")
    if groups.ndim != 1:
        raise ValueError(f"groups must be 1-D, one group label per sample; got shape {groups.shape}.")
    if len(groups) != X.shape[0]:
        raise ValueError(
            f"groups has {len(groups)} entries but X has {X.shape[0]} samples; give one "
            f"group label per sample."
        )
    return groups


def run_search(estimator, X, y, sample_weight=None, groups=None):
    """Validate, train the population on every fold fused, and score it.

    Sets ``n_features_in_`` (and ``feature_names_in_``, ``classes_``,
    ``out_activation_``) on ``estimator``; everything else is returned.
    """
    # max_time counts from here, the start of fit, as a wall-clock time that
    # shards compare with wherever (and whenever) they run
    deadline = None if estimator.max_time is None else time.time() + estimator.max_time
    # warm_start: what the previous fit left (validation replaces n_features_in_)
    prior = dict(vars(estimator))
    check_resume_settings(estimator)
    previous = previous_search(estimator, prior)
    regression = estimator._task == "regression"
    X, y = validate_data(
        estimator, X, y, accept_sparse=_SPARSE, dtype=(np.float64, np.float32),
        # classifiers take multilabel indicator matrices, as MLPClassifier
        multi_output=True, y_numeric=regression,
    )
    X = dense(X)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    y, y_encoded, n_outputs, task = estimator._encode_targets(y)
    seed = resolve_seed(estimator.random_state)
    if previous is not None:  # the previous search's population and folds
        seed = resume_seed(estimator, previous, seed)
    # the parameters become values once, here: the space validates them and
    # draws the configurations (reproducibly from the search's seed)
    space = SearchSpace.from_params(estimator.get_params(deep=False), estimator.param_grid)
    configurations, unset = space.draw_unset(estimator.n_models, random_state=seed)
    population = Population.from_configurations(configurations, estimator.n_repeats, space.searched, unset)
    check_solvers(estimator, population)
    check_warm_start(estimator, population.n_models, prior)
    check_refill(estimator, population.n_models, space)
    scorers, multimetric = resolve_scorers(estimator, estimator.scoring)
    # as GridSearchCV: sample_weight goes only to the scorers that take it
    weighted = set() if sample_weight is None else weighted_scorers(estimator, scorers, multimetric)
    splits = SplitSettings.of(estimator)
    folds = plan_folds(splits, X, y, y_encoded, seed, check_groups(groups, X), population.n_models)
    # the models train (and early stopping watches) with the class weights;
    # the scorers see sample_weight alone, as GridSearchCV's
    train_weight = estimator._training_weight(y, sample_weight)
    if train_weight is not None:
        check_weighted_folds(estimator, y_encoded, train_weight, folds)
    config = train_config(estimator, task=task, n_outputs=n_outputs, seed=seed, X_dtype=X.dtype)
    spec = population.spec(seed)
    warm, resumed = None, None
    if previous is not None:
        # a search of several models: the survivors continue, each fold
        # replica from its own previous weights
        check_same_population(previous, population, X.shape[0], X.shape[1], folds)
        resumed = survivors(previous)
        if not len(resumed):
            raise ValueError(
                "warm_start=True continues the models that were neither pruned nor failed, "
                "and the previous fit left none. Set warm_start=False to start afresh."
            )
    else:
        # warm_start (one configuration): every replica, on every fold, and
        # the refit start from the previous fit's coefs_ / intercepts_
        warm = warm_start_weights(estimator, spec.hidden_layer_sizes[0], X.shape[1], n_outputs)
        if warm is not None:
            spec = dataclasses.replace(spec, initial_weights=[warm])
    engine_folds = training_folds(splits, folds, y_encoded, seed)
    train_sizes = [len(train) for train, _ in engine_folds]
    warn_batch_size(set(population.column("batch_size")), max(train_sizes))
    lone = splits.is_lone(population.n_models)
    # a lone model talks as scikit-learn's MLP (its own lines), a search as GridSearchCV
    verbose = 0 if lone else estimator.verbose
    announce_fits(len(folds), population.n_models, verbose)
    # refill: the run adds models, drawn or perturbed from this space
    source = SpaceRefills(space, population, seed) if config.refill else None
    result, shards = train_fused(
        estimator, spec if resumed is None else resume_spec(spec, previous, resumed), config, X, y_encoded,
        engine_folds, sample_weight=train_weight, monitor=engine_folds[0][1] is not None,
        deadline=deadline, lone=lone, refill_source=source,
    )
    if resumed is not None:  # the whole population: the others as they were
        result = merge_resumed(previous, result, resumed)
    if source is not None:  # every model trained is a row
        population, spec = adaptive_population(result, population), result.extra["spec"]
    diverged = result.diverged
    if lone:
        # a lone model is scikit-learn's MLP: its weights decide (an error)
        diverged = lone_model_divergence(result)
    warn_halted(result)
    # untrained models (a halt before their chunk ran) are failures too
    # (a warm-started L-BFGS model already at a minimum converges in 0)
    untrained = (result.n_iter == 0) & ~result.converged
    warn_or_raise_about_fit_failures(diverged, untrained, estimator.error_score)
    failed = diverged | untrained

    # small torch ops, on one thread: on a busy CPU, OpenMP's barriers made
    # them 25x slower with 2 threads (digits, 24 models, load 5: 430 ms
    # against 17 ms per fold)
    with torch_threads(1):
        scores, score_time, test_loss = _score_folds(
            estimator, result, spec, config, folds, X, y, y_encoded, sample_weight, scorers, failed,
            loss_weight=train_weight, weighted=weighted,
        )
    multimetric = multimetric or set(scores["test"]) != {"score"}
    held_out = folds[0][1] is not None
    cv_results = build_cv_results(
        population, scores["test"], scores.get("train"), fit_time=result.train_time,
        score_time=score_time, multimetric=multimetric, n_iter=result.n_iter.max(axis=1),
        pruned=None if config.pruning is None else result.pruned.any(axis=1),
        failed=failed.any(axis=1), held_out=held_out,
    )
    schedules = None
    if source is not None:
        cv_results = adaptive_columns(cv_results, result)
        schedules = hyperparameter_schedules(
            population, result.extra["parent"], result.extra["start_iter"], result.n_iter.max(axis=1),
            source.perturbed,
        )
    n_fits = failed.size
    report_fits(
        cv_results, fit_time=np.full(failed.shape, result.train_time / n_fits), score_time=score_time,
        verbose=verbose, multimetric=multimetric,
        return_train_score=bool(getattr(estimator, "return_train_score", False)),
    )
    return SearchRun(
        population, spec, config, folds, result, cv_results, scorers, multimetric, seed,
        X, y, y_encoded, train_weight, shards, failed.any(axis=1), deadline, train_sizes, held_out, test_loss,
        warm is not None, schedules, folds_digest(folds), resumed is not None,
    )


def _score_folds(estimator, result, spec, config, folds, X, y, y_encoded, sample_weight, scorers, failed, *,
                 loss_weight=None, weighted=()):
    """Score every replica on its fold's test (and, with
    ``return_train_score``, training) rows with every scorer (those named in
    ``weighted`` weighted by ``sample_weight``, as GridSearchCV's), and its
    loss on the test rows (weighted by ``loss_weight``, what the models
    trained with: class weights included).

    Returns
    -------
    scores : dict
        ``{"test": {name: (n_models, n_folds)}, "train": ...}``; a callable
        scorer returning a dict gives one name per key. Test scores are NaN
        where a fold has no test rows (a lone model trained on all rows).
    seconds : ndarray of shape (n_models, n_folds)
        Each fold's scoring time, shared equally by the models scored on it;
        0 for a failed fit, as GridSearchCV's (it scores nothing).
    test_loss : ndarray of shape (n_models,)
        Mean loss over the folds' test rows (NaN without test rows, or for
        a model that failed on some fold).
    """
    classes = getattr(estimator, "classes_", None)
    # scored here, in the client, which may lack the GPUs the shards trained on
    scoring_config = dataclasses.replace(config, device=local_device(config.device))
    parts = ["test"] + (["train"] * bool(getattr(estimator, "return_train_score", False)))
    n_models = spec.n_models
    scores = {part: {} for part in parts}
    test_loss = np.full((n_models, len(folds)), np.nan)
    score_time = np.zeros((n_models, len(folds)))
    failures = ScoringFailures()  # scorers that raised: one warning for the whole search
    for k, fold_rows in enumerate(folds):
        for part, rows in zip(("train", "test"), fold_rows):
            if part not in scores or rows is None:
                continue
            outputs = population_outputs(
                result.coefs[k], result.intercepts[k], spec.activations, scoring_config, X[rows]
            )
            if part == "test":
                test_loss[:, k] = population_loss(
                    outputs, y_encoded[rows], config=config, failed=failed[:, k],
                    sample_weight=None if loss_weight is None else loss_weight[rows],
                )
            if failed[:, k].all():  # nothing to score: error_score below
                continue
            for name, scorer in scorers.items():
                values, seconds = score_population(
                    outputs, X[rows], y[rows], y_encoded[rows], task=config.task,
                    scorer=scorer, classes=classes, failed=failed[:, k],
                    sample_weight=None if sample_weight is None or name not in weighted else sample_weight[rows],
                    error_score=estimator.error_score, failures=failures,
                    column=f"split{k}_{part}_{name}",
                )
                # a callable returning a dict of metrics names its own columns
                named = values.items() if isinstance(values, dict) else [(name, values)]
                for column, column_values in named:
                    table = scores[part].setdefault(column, np.full((n_models, len(folds)), np.nan))
                    table[:, k] = column_values
                score_time[~failed[:, k], k] += seconds / np.sum(~failed[:, k])
    failures.warn(estimator.error_score, stacklevel=5)
    for part in parts:
        if not scores[part]:  # nothing to score on (no test rows)
            scores[part] = {name: np.full((n_models, len(folds)), np.nan) for name in scorers}
        elif folds[0][1] is not None:
            # failed fits score error_score in every column, those of a
            # callable's dict of metrics included (as GridSearchCV inserts them)
            for table in scores[part].values():
                table[failed] = estimator.error_score
    return scores, score_time, test_loss.mean(axis=1)
