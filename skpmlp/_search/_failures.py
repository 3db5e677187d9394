"""Failed fits: GridSearchCV's warnings and errors, a halt's warning, a lone model's error.

In a search, a model whose loss became NaN or infinite is a failed fit
(frozen, scored ``error_score``, never selected): :func:`warn_or_raise_about_fit_failures`
says so as GridSearchCV does. A lone model (one configuration with
``cv=None``, or a standalone model's ``fit``) is scikit-learn's MLP instead,
whose ``fit`` judges the weights it ends with (:func:`lone_model_divergence`).
:func:`warn_halted` says how far a training that ended early got. A scorer
that raises is recorded in :class:`ScoringFailures`, which warns once for a
whole search as GridSearchCV does.
"""

import traceback
import warnings

import numpy as np
from sklearn.exceptions import FitFailedWarning

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


def judge_failures(result, *, lone, error_score):
    """Every fit's failure (diverged or untrained), judged as scikit-learn's
    MLP (a ``lone`` model) or GridSearchCV (a search) judges it.

    Returns
    -------
    ndarray of bool of shape (n_models, n_folds)
    """
    diverged = result.diverged
    if lone:
        # a lone model is scikit-learn's MLP: its weights decide (an error)
        diverged = lone_model_divergence(result)
    warn_halted(result)
    # untrained models (a halt before their chunk ran) are failures too
    # (a warm-started L-BFGS model already at a minimum converges in 0)
    untrained = (result.n_iter == 0) & ~result.converged
    warn_or_raise_about_fit_failures(diverged, untrained, error_score)
    return diverged | untrained


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


#: scikit-learn MLP's words when its fit ends with non-finite weights.
NONFINITE_WEIGHTS = (
    "Solver produced non-finite parameter weights. The input data may contain large values and "
    "need to be preprocessed."
)


def lone_model_divergence(result):
    """Judge the one model of ``result`` (one model, one fold) as
    scikit-learn's MLP judges its fit.

    Parameters
    ----------
    result : TrainResult

    Returns
    -------
    diverged : ndarray of bool of shape (1, 1)
        All False: a lone model that returns is a fitted model, never a
        failed fit.

    Raises
    ------
    ValueError
        With scikit-learn MLP's message, if the weights the model kept are
        not all finite.

    Warns
    -----
    RuntimeWarning
        If its loss diverged but the weights it kept (early stopping's best
        ones) are finite: training stopped at the epoch it diverged.
    """
    assert result.diverged.shape == (1, 1), "one model, one fold"
    weights = [*result.coefs[0][0], *result.intercepts[0][0]]
    if not all(np.isfinite(w).all() for w in weights):
        raise ValueError(NONFINITE_WEIGHTS)
    if result.diverged[0, 0]:
        warnings.warn(
            f"The model's loss became NaN or infinite in epoch {int(result.n_iter[0, 0])}; "
            f"training stopped there. Its weights (with early_stopping, the best ones) are finite "
            f"and make the fitted model. Try a smaller learning rate or scale the input features.",
            RuntimeWarning,
            stacklevel=3,
        )
    return np.zeros_like(result.diverged)
