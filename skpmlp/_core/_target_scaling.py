"""Regression targets brought to unit scale for training, and the scale folded back.

A search's default space (learning rates, L2 penalties, initial weights)
was chosen on targets of unit scale. On targets in the thousands its
models barely move from their start in ``max_iter`` epochs, so regressors
standardise ``y`` while they train (``target_transform="standard"``):
each model trains on ``(y - mean) / std`` of the rows its ``fit`` sees (a
fold's training rows in a search, never the rows that score it), and its
output layer is then rescaled so that the model predicts ``y`` in its own
units:

.. math::

    W' = W \\operatorname{diag}(s), \\qquad b' = b \\odot s + m

The fitted model is a plain MLP again: ``predict``, ``cv_results_``,
exported models, ``to_sklearn()``, ``to_torch()`` and saved files know
nothing of the scaling. With ``loss="poisson"`` the log link allows a scale
only: the targets are divided by their mean ``m`` and the output bias gets
``log m`` (``exp(z + log m) = m exp(z)``).

A warm start unfolds the previous weights with the new constants first
(:meth:`TargetScaling.unfold`), so training continues from the same model.
"""

import dataclasses

import numpy as np

#: The values of ``target_transform``.
TARGET_TRANSFORMS = ("none", "standard")


@dataclasses.dataclass(frozen=True)
class TargetScaling:
    """The affine map ``y = offset + scale * t`` from training targets ``t``
    back to ``y``, per output.

    Attributes
    ----------
    offset : ndarray of shape (n_outputs,)
        The targets' mean (0 under a log link).
    scale : ndarray of shape (n_outputs,)
        Their standard deviation (under a log link, their mean); 1 where
        that is 0, as scikit-learn's ``StandardScaler``.
    log_link : bool
        The output is ``exp`` of the last layer (``loss="poisson"``): the
        scale folds into the output bias as ``log scale``.
    """

    offset: np.ndarray
    scale: np.ndarray
    log_link: bool = False

    @classmethod
    def fit(cls, y, log_link=False, sample_weight=None):
        """The scaling of the 2-D targets ``y`` (n_samples, n_outputs), in
        float64: their mean and standard deviation (``ddof=0``), or under a
        log link their mean alone; weighted by ``sample_weight`` where
        given (as ``StandardScaler``'s: a row of weight 2 counts as the row
        twice)."""
        y = np.asarray(y, dtype=np.float64)
        mean = np.average(y, axis=0, weights=sample_weight)
        if log_link:
            # non-negative targets: a zero mean is an all-zero column
            return cls(np.zeros_like(mean), np.where(mean > 0, mean, 1.0), log_link=True)
        # the deviations divided by their largest first: squares of targets
        # near 1e160 and beyond would overflow to inf
        deviation = y - mean
        largest = np.max(np.abs(deviation), axis=0)
        unit = np.where(largest > 0, largest, 1.0)
        std = unit * np.sqrt(np.average((deviation / unit) ** 2, axis=0, weights=sample_weight))
        # a constant target, or one whose spread is lost to rounding next to
        # its mean, is only centred (as StandardScaler's zero scales)
        tiny = 10 * np.finfo(np.float64).eps * np.maximum(np.abs(mean), 1.0)
        return cls(mean, np.where(std > tiny, std, 1.0))

    def encode(self, y):
        """The training targets ``(y - offset) / scale`` of 2-D ``y``."""
        return (np.asarray(y, dtype=np.float64) - self.offset) / self.scale

    def fold(self, coefs, intercepts):
        """A model trained on the encoded targets as one predicting ``y``.

        Parameters
        ----------
        coefs, intercepts : list of ndarray
            The model's weights (the last layer's output columns are the
            targets'); not modified.

        Returns
        -------
        coefs, intercepts : list of ndarray
            New lists; only the last layer's arrays are new (in the dtype
            they had).
        """
        return self._last_layer(coefs, intercepts, inverse=False)

    def unfold(self, coefs, intercepts):
        """The inverse of :meth:`fold`: a model predicting ``y`` as one that
        predicts the encoded targets (where a warm start continues)."""
        return self._last_layer(coefs, intercepts, inverse=True)

    def _last_layer(self, coefs, intercepts, inverse):
        coef = np.array(coefs[-1], dtype=np.float64)
        bias = np.array(intercepts[-1], dtype=np.float64)
        if self.log_link:
            shift = np.log(self.scale)
            new_coef, new_bias = coef, bias - shift if inverse else bias + shift
        elif inverse:
            new_coef, new_bias = coef / self.scale, (bias - self.offset) / self.scale
        else:
            new_coef, new_bias = coef * self.scale, bias * self.scale + self.offset
        dtype = np.asarray(coefs[-1]).dtype
        return ([*coefs[:-1], new_coef.astype(dtype, copy=False)],
                [*intercepts[:-1], new_bias.astype(dtype, copy=False)])


def fit_target_scaling(name, y, log_link=False, sample_weight=None):
    """The :class:`TargetScaling` of ``target_transform`` ``name`` fitted
    on the 2-D targets ``y`` (weighted by ``sample_weight``), or None for
    ``"none"``."""
    if name == "none":
        return None
    return TargetScaling.fit(y, log_link=log_link, sample_weight=sample_weight)


def unfolded_spec(spec, scalings):
    """``spec`` whose warm-start weights (``initial_weights`` or
    ``fold_initial_weights``, in ``y``'s units) are unfolded into each
    fold's training units (``scalings``: one per fold, or None)."""
    if scalings is None:
        return spec
    if spec.fold_initial_weights is not None:
        per_fold = spec.fold_initial_weights
    elif spec.initial_weights is not None:
        per_fold = [spec.initial_weights] * len(scalings)
    else:
        return spec
    unfolded = [[scaling.unfold(coefs, intercepts) for coefs, intercepts in weights]
                for scaling, weights in zip(scalings, per_fold, strict=True)]
    return dataclasses.replace(spec, initial_weights=None, fold_initial_weights=unfolded)


def folded_result(result, scalings):
    """``result`` (a :class:`~skpmlp._engine.TrainResult`) with every fold's
    weights folded back into ``y``'s units (``scalings``: one per fold, or
    None: ``result`` itself)."""
    if scalings is None:
        return result
    coefs, intercepts = [], []
    for scaling, fold_coefs, fold_intercepts in zip(scalings, result.coefs, result.intercepts,
                                                    strict=True):
        folded = [scaling.fold(c, b) for c, b in zip(fold_coefs, fold_intercepts)]
        coefs.append([c for c, _ in folded])
        intercepts.append([b for _, b in folded])
    return dataclasses.replace(result, coefs=coefs, intercepts=intercepts)
