"""Scoring every trained model on held-out data.

:func:`score_folds` scores every replica of a search on its fold's rows.
The fused engine computes all models' outputs at once; scikit-learn scorers
then see each model through a tiny estimator that hands back its
precomputed outputs, so any scorer (string or callable) works unchanged. The
default scores (accuracy, R^2) are computed vectorised over models.
"""

import dataclasses
import time

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from .._core._targets import ClassifierTargetsMixin
from .._engine import MONITOR_SCORES, local_device, negated_loss, training_loss
from ._failures import ScoringFailures
from ._inputs import population_outputs_by_input


class _PrecomputedClassifier(ClassifierTargetsMixin, ClassifierMixin, BaseEstimator):
    """A fitted classifier whose outputs on the scored X are known; with
    ``out_activation="logistic"``, a multilabel one."""

    def __init__(self, logits=None, classes=None, out_activation="softmax"):
        self.logits = logits
        self.classes = classes
        self.out_activation = out_activation

    @property
    def classes_(self):
        return self.classes

    @property
    def out_activation_(self):
        return self.out_activation

    def _check(self, X):
        assert X.shape[0] == self.logits.shape[0]

    def predict(self, X):
        self._check(X)
        return self._labels_from_outputs(self.logits)

    def predict_proba(self, X):
        self._check(X)
        return self._proba_from_outputs(self.logits)

    def predict_log_proba(self, X):
        self._check(X)
        return self._log_proba_from_outputs(self.logits)


class _PrecomputedRegressor(RegressorMixin, BaseEstimator):
    """A fitted regressor whose predictions on the scored X are known."""

    def __init__(self, outputs=None):
        self.outputs = outputs

    def predict(self, X):
        assert X.shape[0] == self.outputs.shape[0]
        return self.outputs[:, 0] if self.outputs.shape[1] == 1 else self.outputs


@dataclasses.dataclass(frozen=True)
class ScoredRows:
    """The rows a population is scored on.

    Attributes
    ----------
    X, y :
        The scored data, as the user gave it (what scorers see).
    y_encoded : ndarray
        ``y`` as the engine sees it (class indices or 2-D float targets).
    task : {"classification", "regression", "multilabel"}
    classes : ndarray, optional
        Class labels, for classification scorers.
    sample_weight : ndarray, optional
        Passed to the scorer (weights the default score).
    """

    X: object
    y: np.ndarray
    y_encoded: np.ndarray
    task: str
    classes: np.ndarray = None
    sample_weight: np.ndarray = None


def score_population(outputs, rows, scorer, *, failed=None, error_score=np.nan, failures=None,
                     column=None):
    """Score every model from its outputs on ``rows``.

    Parameters
    ----------
    outputs : ndarray of shape (n_models, n_samples, n_outputs)
        Logits (classification) or predictions (regression).
    rows : ScoredRows
    scorer : callable or None
        A scikit-learn scorer; None uses the fused default score (accuracy
        or R^2).
    failed : ndarray of bool, optional
        Models that diverged or never trained: they get ``error_score`` and are never passed
        to a scorer.
    error_score : "raise" or float
        Score of a diverged model or of a model whose scoring raised; with
        "raise", the error is raised instead, as GridSearchCV does.
    failures : ScoringFailures, optional
        Where a scorer that raised is recorded, for the caller to warn once
        for a whole search; None warns here.
    column : str, optional
        The ``cv_results_`` column these scores go to, for the warning.

    Returns
    -------
    scores : ndarray of shape (n_models,) or dict of str to such arrays
        A dict when ``scorer`` is a callable returning a dict of metrics
        (multi-metric from one callable, as GridSearchCV allows).
    seconds : float
        Wall time spent scoring.
    """
    start = time.perf_counter()
    n_models = outputs.shape[0]
    failed = np.zeros(n_models, dtype=bool) if failed is None else np.array(failed, dtype=bool)
    failed |= ~np.isfinite(outputs).all(axis=(1, 2))
    if failed.any() and error_score == "raise":
        raise ValueError(
            f"{int(failed.sum())} models diverged (loss or outputs not finite), e.g. row "
            f"{int(np.flatnonzero(failed)[0])}; error_score='raise'."
        )
    if scorer is None:
        target, weights = _torch_targets(rows.y_encoded, rows.task, rows.sample_weight)
        scores = MONITOR_SCORES[rows.task](torch.as_tensor(outputs, dtype=torch.float64), target,
                                           weights)
        return _score_array(scores.numpy(), n_models, failed,
                            error_score), time.perf_counter() - start
    own = failures is None
    failures = ScoringFailures() if own else failures
    values = _scorer_values(outputs, rows, scorer, failed, error_score, failures, column)
    if own:
        failures.warn(error_score)
    names = next((list(v) for v in values.values() if isinstance(v, dict)), None)
    if names is None:
        return _score_array(values, n_models, failed, error_score), time.perf_counter() - start
    scores = {  # a callable returning a dict of metrics
        name: _score_array({i: None if v is None else v[name] for i, v in values.items()},
                           n_models, failed, error_score)
        for name in names
    }
    return scores, time.perf_counter() - start


def _scorer_values(outputs, rows, scorer, failed, error_score, failures, column):
    """``{model: the scorer's value, or None where it raised}`` of the models
    not ``failed``, each seen through a precomputed estimator; a scoring
    that raised is recorded in ``failures`` (with ``error_score="raise"``,
    the first raises)."""
    kwargs = {} if rows.sample_weight is None else {"sample_weight": rows.sample_weight}
    values = {}
    failures.n_scorings += int((~failed).sum())
    for i in np.flatnonzero(~failed):
        if rows.task != "regression":
            out_activation = "logistic" if rows.task == "multilabel" else "softmax"
            model = _PrecomputedClassifier(outputs[i], rows.classes, out_activation)
        else:
            model = _PrecomputedRegressor(outputs[i])
        try:
            values[i] = scorer(model, rows.X, rows.y, **kwargs)
        except Exception as error:
            if error_score == "raise":
                raise
            values[i] = None
            failures.record(i, column, error)
    return values


def _torch_targets(y_encoded, task, sample_weight):
    """``(target, weights)`` as the engine's losses and scores take them:
    class indices, or 2-D float64 targets; float64 row weights of shape
    (1, n_samples) or None."""
    target = torch.as_tensor(np.asarray(y_encoded))
    if task != "classification":
        target = target.reshape(len(target), -1).to(torch.float64)
    weights = None
    if sample_weight is not None:
        weights = torch.as_tensor(sample_weight, dtype=torch.float64)[None]
    return target, weights


def _score_array(scores, n_models, failed, error_score):
    """Scores as an array of shape (n_models,): from an array, or from
    ``{model: score or None}`` (None where scoring raised, NaN where
    absent); failed models and raised scorings get ``error_score``."""
    if isinstance(scores, dict):
        array = np.full(n_models, np.nan)
        for i, value in scores.items():
            array[i] = error_score if value is None else value
        scores = array
    scores = np.array(scores, dtype=float)
    if failed.any():
        # error_score is a number here ("raise" raised above): only the failed
        # rows take it, and no string ever enters the numeric array
        scores[failed] = error_score
    return scores


def population_loss(outputs, y_encoded, *, config, failed=None, sample_weight=None):
    """Every model's mean loss on ``(X, y)`` from its outputs: what
    ``tie_breaker="loss"`` compares.

    The training loss without its L2 term (``config``'s: softmax
    cross-entropy (log-loss) for classifiers, the labels' summed binary
    log-loss for multilabel ones, half the squared error (mean over targets)
    or the half Poisson deviance for regressors), weighted by
    ``sample_weight``; float64.

    Parameters
    ----------
    outputs : ndarray of shape (n_models, n_samples, n_outputs)
        Logits (classification) or predictions (regression), as
        :func:`~._engine.population_outputs` gives them.
    y_encoded : ndarray
        Class indices of shape (n_samples,) or 2-D float targets.
    config : TrainConfig
        The run's task and regression loss.
    failed : ndarray of bool of shape (n_models,), optional
        Models whose loss is NaN whatever their outputs.
    sample_weight : ndarray of shape (n_samples,), optional

    Returns
    -------
    ndarray of shape (n_models,)
        NaN for failed models and non-finite outputs.
    """
    target, weights = _torch_targets(y_encoded, config.task, sample_weight)
    outputs = torch.as_tensor(outputs, dtype=torch.float64)
    if config.task == "regression" and config.loss == "poisson":
        outputs = torch.log(outputs)  # the loss takes the raw outputs, log(predictions)
    loss = -negated_loss(training_loss(config))(outputs, target, weights).numpy()
    bad = ~np.isfinite(loss) | ~torch.isfinite(outputs).all(2).all(1).numpy()
    if failed is not None:
        bad |= np.asarray(failed, dtype=bool)
    return np.where(bad, np.nan, loss)


def score_folds(plan, result, spec, failed, input_transforms=None):
    """Score every replica of a search on its fold's test (and, with
    ``return_train_score``, training) rows with every scorer (those of
    ``plan.weighted`` weighted by ``sample_weight``, as GridSearchCV's), and
    its loss on the test rows (weighted as the models trained: class
    weights included).

    Parameters
    ----------
    plan : SearchPlan
    result : TrainResult
        What the run trained, one entry per model of ``spec``.
    spec : PopulationSpec
    failed : ndarray of bool of shape (n_models, n_folds)
    input_transforms : list of str, optional
        Every model's ``input_transform`` (None: all ``"none"``); a
        fold's rows reach each model through its fold's fitted transform
        (``plan.inputs``).

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
    held_out : list of (ndarray, ndarray) or None
        With ``plan.keep_predictions``: per fold with test rows, those rows
        and every model's outputs on them (``(n_models, n_rows,
        n_outputs)``, as :func:`~._engine.population_outputs` gives them);
        else None.
    """
    folds, config, data = plan.folds, plan.config, plan.data
    # scored here, in the client, which may lack the GPUs the shards trained on
    scoring_config = dataclasses.replace(config, device=local_device(config.device))
    parts = ["test"] + ["train"] * plan.return_train_score
    n_models = spec.n_models
    scores = {part: {} for part in parts}
    test_loss = np.full((n_models, len(folds)), np.nan)
    score_time = np.zeros((n_models, len(folds)))
    failures = ScoringFailures()  # scorers that raised: one warning for the whole search
    held_out = [] if plan.keep_predictions else None
    values = ["none"] * n_models if input_transforms is None else input_transforms
    for k, fold_rows in enumerate(folds):
        for part, rows in zip(("train", "test"), fold_rows):
            if part not in scores or rows is None:
                continue
            outputs = population_outputs_by_input(
                result, k, spec, values, lambda value: plan.inputs.inputs(value, k)[rows],
                scoring_config)
            if part == "test":
                if held_out is not None:
                    held_out.append((np.asarray(rows), outputs))
                test_loss[:, k] = population_loss(
                    outputs, data.y_encoded[rows], config=config, failed=failed[:, k],
                    sample_weight=None if data.train_weight is None else data.train_weight[rows],
                )
            if failed[:, k].all():  # nothing to score: error_score below
                continue
            seconds = _score_part(plan, outputs, rows, failed[:, k], scores[part], (k, part),
                                  failures)
            score_time[~failed[:, k], k] += seconds / np.sum(~failed[:, k])
    failures.warn(plan.error_score, stacklevel=5)
    for part in parts:
        if not scores[part]:  # nothing to score on (no test rows)
            scores[part] = {name: np.full((n_models, len(folds)), np.nan) for name in plan.scorers}
        elif plan.held_out:
            # failed fits score error_score in every column, those of a
            # callable's dict of metrics included (as GridSearchCV inserts them)
            for table in scores[part].values():
                table[failed] = plan.error_score
    return scores, score_time, test_loss.mean(axis=1), held_out


def _score_part(plan, outputs, rows, failed, tables, split, failures):
    """Score the models' ``outputs`` on the ``rows`` of ``split`` (fold
    ``k``'s ``part``, ``(k, part)``) with every scorer into ``tables``
    (``{column: (n_models, n_folds)}``), recording scorers that raise in
    ``failures``; the seconds it took."""
    (k, part), data, total = split, plan.data, 0.0
    for name, scorer in plan.scorers.items():
        weighted = data.sample_weight is not None and name in plan.weighted
        scored = ScoredRows(
            data.X[rows], data.y[rows], data.y_encoded[rows], plan.config.task,
            classes=data.classes,
            sample_weight=data.sample_weight[rows] if weighted else None,
        )
        values, seconds = score_population(outputs, scored, scorer, failed=failed,
                                           error_score=plan.error_score, failures=failures,
                                           column=f"split{k}_{part}_{name}")
        total += seconds
        # a callable returning a dict of metrics names its own columns
        named = values.items() if isinstance(values, dict) else [(name, values)]
        for column, column_values in named:
            table = tables.setdefault(column, np.full((len(failed), len(plan.folds)), np.nan))
            table[:, k] = column_values
    return total
