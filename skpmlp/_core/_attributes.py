"""scikit-learn MLP's fitted attributes of one trained model.

:func:`mlp_attributes` computes them from what training returns, with the
meanings of ``MLPClassifier`` / ``MLPRegressor``, for a standalone model
(:class:`SingleMLPClassifier`, ``best_estimator_``, ``export_model``) and,
delegated to the best model, for the population estimators.
"""

import numpy as np

#: The fitted attributes scikit-learn's MLP has after ``fit`` (besides the
#: data attributes ``n_features_in_``, ``feature_names_in_``, ``classes_``).
MLP_ATTRIBUTES = (
    "coefs_", "intercepts_", "n_iter_", "loss_", "loss_curve_", "best_loss_", "t_",
    "validation_scores_", "best_validation_score_", "n_layers_", "n_outputs_", "out_activation_",
)

#: Those of :data:`MLP_ATTRIBUTES` every member of an ensemble shares.
SHARED_ATTRIBUTES = ("n_outputs_", "out_activation_")

#: Those of :data:`MLP_ATTRIBUTES` a configuration has whether it is one
#: model or its k fold models: its layers and epochs (the most over its
#: folds, as ``cv_results_["n_iter"]``).
CONFIGURATION_ATTRIBUTES = ("n_iter_", "n_layers_")

#: Those of :data:`MLP_ATTRIBUTES` that belong to one trained model, its
#: weights and its training record: an ensemble has one per member, so
#: neither it nor a search whose best estimator is a fold ensemble has them.
PER_MODEL_ATTRIBUTES = tuple(
    name for name in MLP_ATTRIBUTES
    if name not in SHARED_ATTRIBUTES + CONFIGURATION_ATTRIBUTES
)


def _best(curve, pick, start):
    """The best finite-or-infinite value of ``curve`` by ``pick`` (min or
    max), ``start`` if none: NaN never counts, as scikit-learn's MLP only
    records a value that compares better than its best so far."""
    return pick((v for v in curve if not np.isnan(v)), default=start)


def mlp_attributes(coefs, intercepts, *, loss_curve, validation_curve, n_train, out_activation,
                   early_stopping):
    """The fitted attributes of one trained model, as scikit-learn's MLP.

    Parameters
    ----------
    coefs, intercepts : list of ndarray
        The trained weights (the best ones with early stopping).
    loss_curve : array-like of shape (n_iter,)
        Training loss per epoch trained (no NaN padding).
    validation_curve : array-like of shape (n_iter,) or None
        Monitored validation value per epoch, None when not monitored.
    n_train : int
        Rows the model trained on (its ``t_`` counts ``n_train`` per epoch).
    out_activation : str
        ``"softmax"``, ``"identity"`` or ``"exp"``.
    early_stopping : bool
        As scikit-learn: ``validation_scores_`` and
        ``best_validation_score_`` only with early stopping (else None),
        ``best_loss_`` only without it (else None).

    Returns
    -------
    dict
        One entry per name of :data:`MLP_ATTRIBUTES`.
    """
    loss_curve = [float(v) for v in loss_curve]
    n_iter = len(loss_curve)
    validation = None
    if early_stopping and validation_curve is not None:
        validation = [float(v) for v in validation_curve[:n_iter]]
    return {
        "coefs_": [np.array(c) for c in coefs],
        "intercepts_": [np.array(b) for b in intercepts],
        "n_iter_": n_iter,
        "loss_": loss_curve[-1] if loss_curve else None,
        "loss_curve_": loss_curve,
        "best_loss_": None if early_stopping else _best(loss_curve, min, np.inf),
        "t_": int(n_iter * n_train),
        "validation_scores_": validation,
        "best_validation_score_": None if validation is None else _best(validation, max, -np.inf),
        "n_layers_": len(coefs) + 1,
        "n_outputs_": int(np.shape(coefs[-1])[1]),
        "out_activation_": out_activation,
    }


def warm_start_weights(estimator, hidden_layer_sizes, n_features, n_outputs):
    """The ``(coefs, intercepts)`` a fit with ``warm_start=True`` starts
    from: the previous fit's ``coefs_`` and ``intercepts_``, or None (no
    warm start, or no previous fit).

    Raises
    ------
    ValueError
        When the previous weights' layer sizes are not those this fit
        trains (``n_features``, ``hidden_layer_sizes``, ``n_outputs``).
    """
    if not estimator.warm_start or "coefs_" not in vars(estimator):
        return None
    coefs, intercepts = estimator.coefs_, estimator.intercepts_
    previous = [int(np.shape(coefs[0])[0]), *(int(np.shape(c)[1]) for c in coefs)]
    expected = [int(n_features), *(int(w) for w in hidden_layer_sizes), int(n_outputs)]
    if previous != expected:
        raise ValueError(
            f"warm_start=True starts from the previous fit's weights, whose layer sizes "
            f"(n_features, hidden_layer_sizes, n_outputs) are {previous}; this fit needs "
            f"{expected}. Fit the same shapes, or set warm_start=False to start afresh."
        )
    return [np.array(c) for c in coefs], [np.array(b) for b in intercepts]


def continued_attributes(previous, attributes):
    """``attributes`` of a warm-started fit, continuing ``previous`` (the
    attributes of the fit it started from) as scikit-learn's MLP does:
    ``loss_curve_``, ``validation_scores_`` and ``t_`` go on from the
    previous fit's (``best_loss_`` and ``best_validation_score_`` over the
    whole curves); ``n_iter_`` counts this fit's epochs only."""
    attributes = dict(attributes)
    loss_curve = list(previous.get("loss_curve_") or []) + list(attributes["loss_curve_"])
    attributes["loss_curve_"] = loss_curve
    if attributes.get("best_loss_") is not None:
        attributes["best_loss_"] = _best(loss_curve, min, np.inf)
    if attributes.get("validation_scores_") is not None:
        validation = list(previous.get("validation_scores_") or [])
        validation += list(attributes["validation_scores_"])
        attributes["validation_scores_"] = validation
        attributes["best_validation_score_"] = _best(validation, max, -np.inf)
    if attributes["loss_"] is None:  # no epoch (L-BFGS at a minimum): the weights did not move
        attributes["loss_"] = previous.get("loss_")
    attributes["t_"] = int(previous.get("t_") or 0) + int(attributes["t_"])
    return attributes
