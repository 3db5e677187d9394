"""Scoring every trained model on held-out data.

The fused engine computes all models' outputs at once; scikit-learn scorers
then see each model through a tiny estimator that hands back its
precomputed outputs, so any scorer (string or callable) works unchanged. The
default scores (accuracy, R^2) are computed vectorised over models.
"""

import time
import traceback
import warnings

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import FitFailedWarning

from ._compat import scorer_accepts_sample_weight
from ._engine import MONITOR_SCORES, negated_loss, training_loss
from ._targets import ClassifierTargetsMixin


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


#: Distinct scorer errors a warning shows in full (their text and traceback).
_MAX_ERRORS_SHOWN = 5


class ScoringFailures:
    """Scorings that raised during a search, reported once as GridSearchCV would.

    A scoring is one scorer called on one model's replica on one split.
    :func:`score_population` records each that raised (with
    ``error_score`` a number; ``"raise"`` raises it as it is); :meth:`warn`
    then issues one :class:`~sklearn.exceptions.FitFailedWarning` that says,
    for every distinct error, its type and text, its traceback, how many
    scorings it failed, which ``cv_results_`` rows and which columns.
    """

    def __init__(self):
        self.n_scorings = 0
        #: (type name, text) -> {"rows": set, "columns": set, "count": int, "traceback": str}
        self.errors = {}

    def record(self, row, column, error):
        """Record that scoring ``row`` for ``column`` raised ``error``.

        Parameters
        ----------
        row : int
            Row of ``cv_results_``.
        column : str or None
            The ``cv_results_`` column the score was for (e.g.
            ``"split0_test_score"``), None when unknown.
        error : Exception
        """
        key = (type(error).__name__, str(error))
        entry = self.errors.setdefault(key, {
            "rows": set(), "columns": set(), "count": 0,
            "traceback": "".join(traceback.format_exception(error)),
        })
        entry["rows"].add(int(row))
        if column is not None:
            entry["columns"].add(column)
        entry["count"] += 1

    def warn(self, error_score, stacklevel=2):
        """One ``FitFailedWarning`` for every scoring that raised (none: nothing).

        Parameters
        ----------
        error_score : float
            The score the failed scorings were given.
        stacklevel : int, default=2
        """
        if not self.errors:
            return
        n_failed = sum(entry["count"] for entry in self.errors.values())
        delimiter = "-" * 80 + "\n"
        shown = list(self.errors.items())[:_MAX_ERRORS_SHOWN]
        details = "".join(
            f"{delimiter}{entry['count']} scorings failed with {name}: {text}\n(rows of "
            f"cv_results_: {_listed(sorted(entry['rows']))}"
            + (f"; columns {_listed(sorted(entry['columns']))}" if entry["columns"] else "")
            + f")\n{entry['traceback']}"
            for (name, text), entry in shown
        )
        if len(self.errors) > len(shown):
            details += f"{delimiter}and {len(self.errors) - len(shown)} other errors.\n"
        warnings.warn(
            f"\nScoring failed for {n_failed} of {max(self.n_scorings, n_failed)} scorings "
            f"(a scoring is one scorer on one model on one split).\nThe score of these "
            f"train-test partitions for these parameters will be set to {error_score}.\nIf "
            f"these failures are not expected, you can try to debug them by setting "
            f"error_score='raise'.\n\nBelow are more details about the failures:\n{details}",
            FitFailedWarning,
            stacklevel=stacklevel + 1,
        )


def score_population(
    outputs, X, y, y_encoded, *, task, scorer, classes=None, failed=None, sample_weight=None,
    error_score=np.nan, failures=None, column=None,
):
    """Score every model from its outputs on ``(X, y)``.

    Parameters
    ----------
    outputs : ndarray of shape (n_models, n_samples, n_outputs)
        Logits (classification) or predictions (regression).
    X, y : the scored data, as the user gave it (for scorers).
    y_encoded : ndarray
        ``y`` as the engine sees it (class indices or 2-D float targets).
    task : {"classification", "regression", "multilabel"}
    scorer : callable or None
        A scikit-learn scorer; None uses the fused default score (accuracy
        or R^2).
    classes : ndarray, optional
        Class labels, for classification scorers.
    failed : ndarray of bool, optional
        Models that diverged or never trained: they get ``error_score`` and are never passed
        to a scorer.
    sample_weight : ndarray, optional
        Passed to the scorer (weights the default score).
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
        target, weights = _torch_targets(y_encoded, task, sample_weight)
        scores = MONITOR_SCORES[task](torch.as_tensor(outputs, dtype=torch.float64), target, weights).numpy()
    else:
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        values = {}
        own = failures is None
        failures = ScoringFailures() if own else failures
        failures.n_scorings += int((~failed).sum())
        for i in np.flatnonzero(~failed):
            if task != "regression":
                out_activation = "logistic" if task == "multilabel" else "softmax"
                model = _PrecomputedClassifier(outputs[i], classes, out_activation)
            else:
                model = _PrecomputedRegressor(outputs[i])
            try:
                values[i] = scorer(model, X, y, **kwargs)
            except Exception as error:
                if error_score == "raise":
                    raise
                values[i] = None
                failures.record(i, column, error)
        if own:
            failures.warn(error_score)
        names = next((list(v) for v in values.values() if isinstance(v, dict)), None)
        if names is not None:  # a callable returning a dict of metrics
            scores = {
                name: _score_array({i: None if v is None else v[name] for i, v in values.items()},
                                   n_models, failed, error_score)
                for name in names
            }
            return scores, time.perf_counter() - start
        scores = values
    return _score_array(scores, n_models, failed, error_score), time.perf_counter() - start


def _torch_targets(y_encoded, task, sample_weight):
    """``(target, weights)`` as the engine's losses and scores take them:
    class indices, or 2-D float64 targets; float64 row weights of shape
    (1, n_samples) or None."""
    target = torch.as_tensor(np.asarray(y_encoded))
    if task != "classification":
        target = target.reshape(len(target), -1).to(torch.float64)
    weights = None if sample_weight is None else torch.as_tensor(sample_weight, dtype=torch.float64)[None]
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
        Logits (classification) or predictions (regression).
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
    loss = -negated_loss(training_loss(config))(outputs, target, weights).numpy()
    bad = ~np.isfinite(loss) | ~torch.isfinite(outputs).all(2).all(1).numpy()
    if failed is not None:
        bad |= np.asarray(failed, dtype=bool)
    return np.where(bad, np.nan, loss)


def weighted_scorers(estimator, scorers, multimetric):
    """The names of the ``scorers`` that take ``sample_weight``, warning as
    GridSearchCV does for each one that does not (it is then called
    without it, as GridSearchCV calls it).

    Parameters
    ----------
    estimator : the search being fitted with ``sample_weight``
    scorers : dict of str to scorer or None
        None (the fused default score) takes ``sample_weight``.
    multimetric : bool
        Name each scorer in the warning (``scoring`` was a list or dict).

    Returns
    -------
    set of str
    """
    accepting = set()
    for name, scorer in scorers.items():
        if scorer is None or scorer_accepts_sample_weight(scorer):
            accepting.add(name)
            continue
        which = f"{name}={scorer}" if multimetric else f"{scorer}"
        warnings.warn(
            f"The scoring {which} does not support sample_weight, which may lead to "
            f"statistically incorrect results when fitting {estimator} with sample_weight. ",
            UserWarning,
            stacklevel=4,
        )
    return accepting


#: Why a fit failed, as the "error" of GridSearchCV's failure summary.
FIT_ERRORS = {
    "diverged": (
        "The model diverged: its training loss became NaN or infinite, so it was frozen. Try "
        "smaller learning rates or scale the input features."
    ),
    "untrained": (
        "Training ended (interrupted, or max_time reached) before the model trained an epoch."
    ),
}


def _rows(mask):
    """The rows of ``mask`` that are True, as a short list for a message."""
    return _listed(np.flatnonzero(mask).tolist())


def _listed(items):
    """``items`` as a short list for a message."""
    return str(items) if len(items) <= 10 else f"{items[:10]} and {len(items) - 10} more"


def warn_or_raise_about_fit_failures(diverged, untrained, error_score):
    """GridSearchCV's handling of failed fits, a fit being one model on one fold.

    Parameters
    ----------
    diverged, untrained : ndarray of bool of shape (n_models, n_folds)
        Fits whose loss became NaN or infinite, and fits a halt (Ctrl-C or
        ``max_time``) left untrained.
    error_score : "raise" or float

    Raises
    ------
    ValueError
        With ``error_score="raise"`` when some fit failed; with
        GridSearchCV's "All the N fits failed" message when every fit did.

    Warns
    -----
    FitFailedWarning
        With GridSearchCV's "N fits failed out of a total of M" message when
        some fits failed, naming why and the ``cv_results_`` rows.
    """
    failed = diverged | untrained
    num_failed, num_fits = int(failed.sum()), failed.size
    if not num_failed:
        return
    delimiter = "-" * 80 + "\n"
    summary = "\n".join(
        f"{delimiter}{int(mask.sum())} fits failed with the following error:\n{FIT_ERRORS[why]} "
        f"(rows of cv_results_: {_rows(mask.any(axis=1))})"
        for why, mask in (("diverged", diverged), ("untrained", untrained & ~diverged))
        if mask.any()
    )
    if error_score == "raise":
        raise ValueError(
            f"{num_failed} of {num_fits} fits failed and error_score='raise':\n{summary}"
        )
    if num_failed == num_fits:
        raise ValueError(
            f"\nAll the {num_fits} fits failed.\n"
            "It is very likely that your model is misconfigured.\n"
            "You can try to debug the error by setting error_score='raise'.\n\n"
            f"Below are more details about the failures:\n{summary}"
        )
    warnings.warn(
        f"\n{num_failed} fits failed out of a total of {num_fits}.\n"
        "The score on these train-test partitions for these parameters will be set to "
        f"{error_score}.\n"
        "If these failures are not expected, you can try to debug them by setting "
        "error_score='raise'.\n\n"
        f"Below are more details about the failures:\n{summary}",
        FitFailedWarning,
        stacklevel=3,
    )


def warn_halted(result, what="the search"):
    """Warn that training ended early (Ctrl-C or ``max_time``) and how far
    it got."""
    if result.halted is None:
        return
    why = "was interrupted" if result.halted == "interrupted" else "reached max_time"
    trained = int((result.n_iter > 0).any(axis=1).sum())
    warnings.warn(
        f"Training {why} after {result.loss_curves.shape[2]} epochs; {what} keeps what was "
        f"trained ({trained} of {result.n_iter.shape[0]} models trained at least one epoch; "
        f"untrained ones are scored error_score).",
        UserWarning,
        stacklevel=4,
    )
