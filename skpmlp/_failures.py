"""Failed fits: GridSearchCV's warnings and errors, a halt's warning, a lone model's error.

In a search, a model whose loss became NaN or infinite is a failed fit
(frozen, scored ``error_score``, never selected): :func:`warn_or_raise_about_fit_failures`
says so as GridSearchCV does. A lone model (one configuration with
``cv=None``, or a standalone model's ``fit``) is scikit-learn's MLP instead,
whose ``fit`` judges the weights it ends with (:func:`lone_model_divergence`).
:func:`warn_halted` says how far a training that ended early got.
"""

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
    rows = np.flatnonzero(mask).tolist()
    return str(rows) if len(rows) <= 10 else f"{rows[:10]} and {len(rows) - 10} more"


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
