"""The plan of a fused search: everything ``fit`` decides before anything trains.

:func:`plan_search` reads the estimator's parameters and the data once:
it validates the data (setting ``n_features_in_`` and the other data
attributes on the estimator), expands the parameters into a population,
plans the folds and the scorers, and what a warm start continues. The
result, a frozen :class:`SearchPlan`, is all that the runner
(:mod:`skpmlp._search._run`), the selection and the refits read: none of them looks
at the estimator's parameters again.
"""

import dataclasses
import time
from collections.abc import Iterable
from numbers import Integral
from typing import Union

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import BaseCrossValidator

from .._core._attributes import warm_start_weights
from .._core._data import validated_data
from .._core._params import param_task
from .._core._target_scaling import TargetScaling
from .._core._values import resolve_seed
from .._engine import PopulationSpec, TrainConfig
from .._execution._progress import ProgressSettings
from .._execution._training import Execution
from .._persistence._checkpoint import open_checkpoint
from ._adaptive import check_refill
from ._inputs import InputTransforms, fit_rows
from ._population import Population
from ._scorers import resolve_scorers, weighted_scorers
from ._settings import check_dropout, check_solvers, train_config, warn_batch_size
from ._space import SearchSpace
from ._splits import SplitSettings, check_groups, plan_folds, resolve_cv, training_folds
from ._warm_start import (
    check_resume_settings,
    check_same_population,
    previous_search,
    resume_seed,
    resume_spec,
    survivors,
)


@dataclasses.dataclass(frozen=True)
class SearchData:
    """A fit's validated data.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray
        The targets as given (validated).
    y_encoded : ndarray
        What the engine trains on: class indices, indicator matrix or
        2-D regression targets.
    sample_weight : ndarray of shape (n_samples,) or None
        What the scorers that take it see.
    train_weight : ndarray of shape (n_samples,) or None
        What the models train with: ``sample_weight`` times any class weights.
    classes : ndarray or None
        A classifier's classes (what the scorers predict).
    """

    X: np.ndarray
    y: np.ndarray
    y_encoded: np.ndarray
    sample_weight: np.ndarray = None
    train_weight: np.ndarray = None
    classes: np.ndarray = None


@dataclasses.dataclass(frozen=True)
class SearchPlan:
    """Everything a fused search trains and scores, decided once from the
    estimator and the data.

    Attributes
    ----------
    data : SearchData
    seed : int
        The search's seed (the previous fit's when a search resumes).
    space : SearchSpace
    population : Population
        The models, as rows of ``cv_results_``.
    spec : PopulationSpec
        The engine's description of the population (a warm start's
        initial weights included).
    train_spec : PopulationSpec
        What the run trains: ``spec``, or a resumed search's survivors, each
        fold replica from its previous weights.
    config : TrainConfig
    folds : list of (ndarray, ndarray or None)
        Every fold's training and held-out (scoring) rows.
    engine_folds : list of (ndarray, ndarray or None)
        What the engine trains and monitors on in each fold.
    scorers : dict
        ``{name: scorer or None}`` (None: the fused default score).
    multimetric : bool
    weighted : set of str
        The scorers that get ``sample_weight``.
    execution : Execution
        Where and within what the runs train, and what they report.
    lone : bool
        The fit is one model: scikit-learn's MLP (its errors and lines).
    error_score : "raise" or float
    return_train_score : bool
    previous : dict or None
        The fitted state a resumed search continues (warm start of a
        search of several models).
    resumed : ndarray of int or None
        The rows it trains again.
    warm_started : bool
        Whether the models start from the previous fit's weights (one
        configuration's warm start).
    cv : int, cross-validation generator, iterable or None
        The estimator's ``cv``, ``"auto"`` resolved (what ``cv_`` is).
    keep_predictions : bool
        Keep every model's predictions on its held-out rows (what
        ``ensemble="greedy"`` selects on).
    inputs : InputTransforms
        Every ``input_transform`` value of the population fitted on each
        fold's training rows (see :mod:`skpmlp._search._inputs`).
    targets : list of TargetScaling or None
        ``target_transform`` fitted on each fold's training rows (the same
        rows as ``inputs``), None where the models train on ``y`` as given
        (see :mod:`skpmlp._core._target_scaling`).
    refit_targets : TargetScaling or None
        ``target_transform`` fitted on all the rows, what a refit trains on.
    """

    data: SearchData
    seed: int
    space: SearchSpace
    population: Population
    spec: PopulationSpec
    train_spec: PopulationSpec
    config: TrainConfig
    folds: list
    engine_folds: list
    scorers: dict
    multimetric: bool
    weighted: frozenset
    execution: Execution
    lone: bool
    error_score: Union[float, str]
    return_train_score: bool
    previous: dict = None
    resumed: np.ndarray = None
    warm_started: bool = False
    cv: Union[int, BaseCrossValidator, Iterable, None] = None
    keep_predictions: bool = False
    inputs: InputTransforms = None
    targets: list = None
    refit_targets: TargetScaling = None

    @property
    def held_out(self):
        """Whether the folds have held-out rows to score on."""
        return self.folds[0][1] is not None

    @property
    def train_sizes(self):
        """Rows each fold's models train on."""
        return [len(train) for train, _ in self.engine_folds]



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


def check_warm_start(estimator, n_models, prior):
    """``warm_start=True`` continues the previous fit: one configuration
    from its ``coefs_``, a search of several models each from its own
    previous weights (see :mod:`skpmlp._search._warm_start`). A search of several models
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


def plan_search(estimator, X, y, sample_weight=None, groups=None):
    """The :class:`SearchPlan` of ``estimator``'s fit on ``(X, y)``.

    Raises
    ------
    ValueError
        For data, folds, weights or settings that cannot make a search (each
        check says what to change), before anything trains.
    """
    # max_time counts from here, the start of fit, as a wall-clock time that
    # shards compare with wherever (and whenever) they run
    deadline = None if estimator.max_time is None else time.time() + estimator.max_time
    # warm_start: what the previous fit left (validation replaces n_features_in_)
    prior = dict(vars(estimator))
    check_resume_settings(estimator)
    previous = previous_search(estimator, prior)
    X, y, y_encoded, sample_weight, n_outputs, task = validated_data(
        estimator, X, y, sample_weight
    )
    seed = resolve_seed(estimator.random_state)
    if previous is not None:  # the previous search's population and folds
        seed = resume_seed(estimator, previous, seed)
    checkpoint = open_checkpoint(estimator, X=X, y=y, sample_weight=sample_weight, groups=groups)
    if checkpoint is not None:  # a resumed fit: the file's seed
        seed = checkpoint.seed(seed, fixed=isinstance(estimator.random_state, Integral))
    space, population = _drawn_population(estimator, seed, prior, checkpoint)
    scorers, multimetric, weighted = _scorers(estimator, sample_weight)
    splits = resolve_cv(SplitSettings.of(estimator), y_encoded, check_groups(groups, X),
                        population.n_models)
    # the estimator's choice settings, checked against the folds (the
    # selection layer above decides; the plan only keeps what it needs)
    ensemble = estimator._ensemble_kind(splits.cv)
    folds, engine_folds = _fold_plan(splits, X, y, y_encoded, seed, groups, population.n_models,
                                     checkpoint)
    data = SearchData(
        X, y, y_encoded, sample_weight,
        # the models train (and early stopping watches) with the class
        # weights; the scorers see sample_weight alone, as GridSearchCV's
        train_weight=estimator._training_weight(y, sample_weight),
        classes=getattr(estimator, "classes_", None),
    )
    if data.train_weight is not None:
        check_weighted_folds(estimator, y_encoded, data.train_weight, folds)
    config = train_config(estimator, task=task, n_outputs=n_outputs, seed=seed,
                          X_dtype=data.X.dtype)
    spec, resumed = _continued(estimator, population.spec(seed), previous, population, data, folds,
                               n_outputs)
    warn_batch_size(set(population.column("batch_size")),
                    max(len(train) for train, _ in engine_folds))
    lone = splits.is_lone(population.n_models)
    # each fold's transforms, fitted on its training rows (a lone model's on every row)
    rows = fit_rows(folds, data.X.shape[0], lone)
    inputs = InputTransforms.fit(population.column("input_transform"), data.X, rows)
    refit_targets = estimator._target_scaling(data.y_encoded, data.train_weight)
    weight = data.train_weight
    targets = None if refit_targets is None else [
        estimator._target_scaling(data.y_encoded[fit], None if weight is None else weight[fit])
        for fit in rows]
    if checkpoint is not None:  # a path that cannot be written fails now, before training
        checkpoint.start()
    return SearchPlan(
        data=data, seed=seed, space=space, population=population, spec=spec,
        train_spec=spec if resumed is None else resume_spec(spec, previous, resumed),
        config=config, folds=folds,
        engine_folds=engine_folds, scorers=scorers, multimetric=multimetric,
        weighted=weighted,
        execution=Execution(
            n_jobs=estimator.n_jobs, max_memory=estimator.max_memory, deadline=deadline,
            progress=ProgressSettings.of(estimator, lone), checkpoint=checkpoint,
        ),
        lone=lone, error_score=estimator.error_score,
        return_train_score=bool(getattr(estimator, "return_train_score", False)),
        previous=previous, resumed=resumed, warm_started=spec.initial_weights is not None,
        cv=splits.cv,
        keep_predictions=bool(estimator.refit) and ensemble.held_out_predictions,
        inputs=inputs, targets=targets, refit_targets=refit_targets,
    )


def _drawn_population(estimator, seed, prior, checkpoint):
    """``(space, population)``: the search space of ``estimator``'s
    parameters and the configurations it draws with ``seed``, checked
    against the solvers, a warm start (``prior``: the estimator's
    attributes before this fit), refills and a checkpoint's population."""
    # the parameters become values once, here: the space validates them and
    # draws the configurations (reproducibly from the search's seed)
    space = SearchSpace.from_params(estimator.get_params(deep=False), estimator.param_grid,
                                    param_task(estimator))
    check_dropout(space.subspaces)
    configurations, unset = space.draw_unset(estimator.n_models, random_state=seed)
    population = Population.from_configurations(configurations, estimator.n_repeats,
                                                space.searched, unset)
    check_solvers(estimator, population)
    check_warm_start(estimator, population.n_models, prior)
    check_refill(estimator, population.n_models, space)
    if checkpoint is not None:
        checkpoint.check_population(population)
    return space, population


def _scorers(estimator, sample_weight):
    """``(scorers, multimetric, weighted)``: the scorers of ``scoring`` and
    the names of those ``sample_weight`` goes to (as GridSearchCV: only to
    the scorers that take it)."""
    scorers, multimetric = resolve_scorers(estimator, estimator.scoring)
    weighted = set()
    if sample_weight is not None:
        weighted = weighted_scorers(estimator, scorers, multimetric)
    return scorers, multimetric, frozenset(weighted)


def _fold_plan(splits, X, y, y_encoded, seed, groups, n_models, checkpoint):
    """``(folds, engine_folds)``: the scoring folds and what the engine
    trains and monitors on; a checkpoint's, when it holds them (a splitter
    need not split the same way twice)."""

    def plan():
        folds = plan_folds(splits, X, y, y_encoded, seed, groups, n_models)
        return folds, training_folds(splits, folds, y_encoded, seed)

    return plan() if checkpoint is None else checkpoint.folds(plan, n_samples=len(y_encoded))


def _continued(estimator, spec, previous, population, data, folds, n_outputs):
    """What a warm start continues: ``(spec, resumed)``.

    A search of several models resumes (``resumed``: the rows that train
    again, each fold replica from its own previous weights); one
    configuration starts every replica, on every fold, and the refit from
    the previous fit's ``coefs_`` / ``intercepts_`` (in ``spec``).
    """
    if previous is not None:
        check_same_population(previous, population, data.X.shape[0], data.X.shape[1], folds)
        resumed = survivors(previous)
        if not len(resumed):
            raise ValueError(
                "warm_start=True continues the models that were neither pruned nor failed, "
                "and the previous fit left none. Set warm_start=False to start afresh."
            )
        return spec, resumed
    warm = warm_start_weights(estimator, spec.hidden_layer_sizes[0], data.X.shape[1], n_outputs)
    if warm is not None:
        spec = dataclasses.replace(spec, initial_weights=[warm])
    return spec, None
