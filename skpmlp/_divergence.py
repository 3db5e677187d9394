"""What a diverged lone model means: scikit-learn MLP's error or a kept model.

In a search, a model whose loss became NaN or infinite is a failed fit
(frozen, scored ``error_score``, never selected; see
:func:`~._scoring.warn_or_raise_about_fit_failures`). A lone model (one configuration with
``cv=None``, or a standalone model's ``fit``) is scikit-learn's MLP instead,
whose ``fit`` judges the weights it ends with: non-finite weights raise its
``ValueError``, finite ones (early stopping's best weights) are the fitted
model, its NaN validation scores kept.
"""

import warnings

import numpy as np

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
            f"The model's loss became NaN or infinite in epoch {int(result.n_iter[0, 0])}; training "
            f"stopped there. Its weights (with early_stopping, the best ones) are finite and make the "
            f"fitted model. Try a smaller learning rate or scale the input features.",
            RuntimeWarning,
            stacklevel=3,
        )
    return np.zeros_like(result.diverged)
