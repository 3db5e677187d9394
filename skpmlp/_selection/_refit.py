"""The standalone models of a fitted search: the refit of the chosen ones, and export.

:func:`refit` builds ``best_estimator_``: the chosen configurations
retrained on all the data (with ``cv``, or ``cv=None`` and
``holdout_refit``) through the same training entry as the search
(:func:`~skpmlp._execution._training.train_models`), or the trained models themselves.
:func:`single_model` turns one trained model (a row, on a fold, or
refitted) into a :class:`~skpmlp.SingleMLPClassifier` /
:class:`~skpmlp.SingleMLPRegressor`, for the refit and for ``export_model``.
"""

import copy
import dataclasses
import time

import numpy as np

from .._core._attributes import MLP_ATTRIBUTES, SHARED_ATTRIBUTES, mlp_attributes
from .._core._compat import get_param_names
from .._core._params import INPUT_PARAMS, OPTIMIZER_PARAMS, param_task, training_params
from .._core._transforms import INPUT_TRANSFORMS, fit_input_transform_rows, transformed_rows
from .._core._values import one_value, restores_best, uses_early_stopping
from .._search._failures import warn_halted
from .._search._inputs import train_by_input
from .._search._population import with_resolved_dropout
from .._search._results import mean_best_epoch
from .._search._splits import SplitSettings, validation_split

#: Attributes that data validation sets on the estimator, before training starts.
DATA_ATTRIBUTES = ("n_features_in_", "feature_names_in_", "classes_", "out_activation_")


def refit(estimator, run, fitted, members):
    """``best_estimator_`` (and ``ensemble_indices_``, ``ensemble_weights_``,
    ``refit_time_``, ``_refitted``) of ``members``.

    Members that predict through their fold models (``ensemble="folds"``,
    a greedy ensemble with ``cv``) are the average of their fold replicas:
    nothing is retrained. Otherwise, with cv, their configurations are
    retrained on all the data in one fused run (with
    ``restore_best_weights``, for the mean of their folds' best epochs, see
    :func:`fold_best_epochs`); with a holdout, the same for the epochs they
    trained (``holdout_refit``; their best epoch with early stopping or
    ``restore_best_weights``) or the trained models themselves. A lone
    configuration is scikit-learn's MLP (its early-stopping validation part
    its own): nothing was chosen, nothing is retrained.

    Parameters
    ----------
    estimator : BaseParallelMLP
    run : SearchRun
    fitted : dict
        The search's fitted attributes (see ``BaseParallelMLP._search_attributes``).
    members : Members
        The rows, best first, and their weights (:class:`~skpmlp._selection._choice.Members`).

    Returns
    -------
    dict
        The attributes to set, the MLP attributes of the best model (the
        first member's) included; members that predict through their fold
        models have none of one model's (:data:`~skpmlp._core._attributes.PER_MODEL_ATTRIBUTES`).
    """
    start = time.perf_counter()
    rows, cv = members.rows, run.plan.cv
    refitted, overrides, transforms = {}, {}, {}
    holdout = cv is None and estimator.holdout_refit and run.plan.held_out
    if not members.through_folds:  # else the fold models themselves: nothing to retrain
        if holdout and run.population.n_models > 1:
            transforms = _refit_transforms(run, rows)
            refitted, overrides = _holdout_refit(estimator, run, fitted, rows, transforms)
        elif cv is not None and restores_best(estimator):
            transforms = _refit_transforms(run, rows)
            epochs = {row: fold_best_epochs(fitted, row) for row in rows}
            refitted, overrides = _fixed_epochs_refit(run, epochs, transforms)
        elif cv is not None:
            transforms = _refit_transforms(run, rows)
            refitted = _cv_refit(estimator, run, rows, transforms)
    data = {name: vars(estimator)[name] for name in DATA_ATTRIBUTES if name in vars(estimator)}
    state = {**fitted, **data, "_refitted": refitted, "_refit_input_transforms": transforms}
    if members.through_folds:
        models = [fold_ensemble(estimator, state, row) for row in rows]
    else:
        models = [
            single_model(estimator, state, row, None, refitted=bool(refitted),
                         training=overrides.get(row))
            for row in rows
        ]
    equal = np.allclose(members.weights, members.weights[0])
    best = models[0] if len(models) == 1 else estimator._ensemble_class.from_fitted(
        models, weights=None if equal else members.weights)
    attributes = {
        "_refitted": refitted,
        "_refit_input_transforms": transforms,
        "best_estimator_": best,
        "ensemble_indices_": np.array(rows),
        "ensemble_weights_": np.asarray(members.weights, dtype=float),
        "refit_time_": time.perf_counter() - start,
        # MLPClassifier's fitted attributes, those of the best model
        **_best_model_attributes(models[0], members.through_folds, fitted),
    }
    if members.score is not None:
        attributes["ensemble_score_"] = members.score
    return attributes


def _best_model_attributes(first, through_folds, fitted):
    """The MLP attributes of the search: those of ``first``, the first
    member; where the members predict through their fold models, no one
    model is the best, so only what every fold model shares and what the
    best configuration has as a whole (:data:`~skpmlp._core._attributes.CONFIGURATION_ATTRIBUTES`:
    its layers, its epochs as ``cv_results_["n_iter"]`` counts them)."""
    if not through_folds:
        return {name: getattr(first, name) for name in MLP_ATTRIBUTES}
    while hasattr(first, "estimators_"):
        first = first.estimators_[0]
    best = fitted["best_index_"]
    return {
        **{name: getattr(first, name) for name in SHARED_ATTRIBUTES},
        "n_iter_": int(np.max(fitted["n_iter_per_model_"][best])),
        "n_layers_": len(fitted["_coefs"][0][best]) + 1,
    }


def fold_ensemble(estimator, state, index):
    """Row ``index``'s fold replicas of the fitted ``state``, averaged: an
    ``MLPEnsemble*`` of its k fold models, equally weighted.

    Parameters
    ----------
    estimator : BaseParallelMLP
    state : dict
        The fitted attributes (with ``cv``).
    index : int
        Row of ``cv_results_``.

    Returns
    -------
    MLPEnsembleClassifier or MLPEnsembleRegressor
    """
    folds = range(len(state["_coefs"]))
    return estimator._ensemble_class.from_fitted(
        [single_model(estimator, state, index, k) for k in folds])


def fitted_cv(estimator, state):
    """The ``cv`` a fitted ``state`` was trained with: ``cv_`` (``"auto"``
    resolved), or for a state saved before there was one, ``cv``."""
    return state.get("cv_", estimator.cv)


def _refit_transforms(run, rows):
    """``{value: fitted transform}`` of the ``input_transform`` values of
    ``rows`` but ``"none"``, each fitted on all the rows (what a refit on
    all the data trains on)."""
    column = run.population.column("input_transform")
    values = {column[row] for row in rows}
    X = run.plan.data.X
    return {value: fit_input_transform_rows(value, X) for value in INPUT_TRANSFORMS
            if value != "none" and value in values}


def _retrain(run, rows, config, folds, transforms):
    """Train the configurations of ``rows`` on ``folds`` (one) as the search
    trained, in a "refit run", their inputs through ``transforms`` (see
    :func:`_refit_transforms`): ``{row: (coefs, intercepts, loss_curve,
    validation_curve, n_train)}``."""
    plan = run.plan
    column = run.population.column("input_transform")
    result, _ = train_by_input(
        run.spec.subset(rows), [column[row] for row in rows],
        lambda value: [transformed_rows(transforms.get(value), plan.data.X)], config, plan.data.X,
        plan.data.y_encoded, folds, dataclasses.replace(plan.execution, name="refit run"),
        sample_weight=plan.data.train_weight,
        targets=None if plan.refit_targets is None else [plan.refit_targets],
    )
    warn_halted(result, "the refit of the best configuration")
    refitted = {}
    for j, row in enumerate(rows):
        n_iter = int(result.n_iter[j, 0])
        scores = result.validation_scores
        refitted[row] = (
            result.coefs[0][j], result.intercepts[0][j], result.loss_curves[j, 0, :n_iter],
            None if scores is None else scores[j, 0, :n_iter], len(folds[0][0]),
        )
    return refitted


def _cv_refit(estimator, run, members, transforms):
    """The configurations of ``members`` retrained on all the rows (with
    early stopping, on all but its validation part; their input transforms
    on all of them), as GridSearchCV refits."""
    plan = run.plan
    rows = np.arange(plan.data.X.shape[0])
    if uses_early_stopping(estimator):
        fold = validation_split(SplitSettings.of(estimator), rows, plan.data.y_encoded, plan.seed)
    else:
        fold = (rows, None)
    # a refit trains the chosen configurations to completion: no halving
    config = dataclasses.replace(plan.config, pruning=None, refill=None)
    return _retrain(run, members, config, [fold], transforms)


def _holdout_refit(estimator, run, fitted, members, transforms):
    """Retrain the configurations of ``members`` on all the rows
    (training and validation part), each for as many epochs as it
    trained on the training part: ``n_iter_``, or its best epoch with
    ``early_stopping`` or ``restore_best_weights`` (whose weights it
    kept; with both, ``restore_best_weights``'s). A fixed epoch count, as
    nothing is left to watch (see :func:`_fixed_epochs_refit`)."""
    epochs = {}
    for row in members:
        n = int(fitted["n_iter_per_model_"][row])
        best = fitted.get("best_epoch_per_model_")
        if best is not None and best[row] > 0:
            n = int(best[row])
        elif uses_early_stopping(estimator):  # (lbfgs ignores it, as scikit-learn's MLP)
            curve = fitted["validation_scores_per_model_"][row, :n]
            if np.isfinite(curve).any():
                # the first best epoch, as the stopping rule keeps it
                n = int(np.nanargmax(curve)) + 1
        epochs[row] = max(n, 1)
    return _fixed_epochs_refit(run, epochs, transforms)


def fold_best_epochs(fitted, row):
    """The epochs a cv refit of ``row`` trains with ``restore_best_weights``:
    the mean of its fold replicas' best epochs (``cv_results_["best_epoch"]``:
    folds without one, that never had a finite validation loss, left out),
    rounded half up; its ``n_iter`` where no fold has one; at least 1."""
    mean = mean_best_epoch(np.asarray(fitted["best_epoch_per_model_"])[[row]])[0]
    if np.isnan(mean):
        return max(int(np.max(fitted["n_iter_per_model_"][row])), 1)
    return max(int(np.floor(mean + 0.5)), 1)


def _fixed_epochs_refit(run, epochs, transforms):
    """Retrain the configurations of ``epochs`` (``{row: epoch count}``)
    on all the rows, each for its count; models of the same count train in
    one fused run.

    Returns
    -------
    refitted : dict of int to tuple
        ``row: (coefs, intercepts, loss_curve, None, n_train)``, as the
        cv refit's entries.
    overrides : dict of int to dict
        ``row: training parameters`` that make the returned model's
        ``fit`` retrain exactly it (``max_iter`` the epoch count,
        ``n_iter_no_change`` too so it never stops before, no
        ``early_stopping``).
    """
    rows = np.arange(run.plan.data.X.shape[0])
    refitted, overrides = {}, {}
    for n in sorted(set(epochs.values())):
        group = [row for row in epochs if epochs[row] == n]
        training = {"max_iter": n, "n_iter_no_change": n, "early_stopping": False}
        # nothing is held out: no best epoch to watch
        config = dataclasses.replace(run.plan.config, pruning=None, refill=None,
                                     restore_best_weights=False, **training)
        refitted.update(_retrain(run, group, config, [(rows, None)], transforms))
        overrides.update({row: training for row in group})
    return refitted, overrides


def single_model(estimator, state, index, fold, *, refitted=None, training=None):
    """Model ``index`` of the fitted ``state`` (a search's attributes) as a
    standalone estimator.

    Parameters
    ----------
    estimator : BaseParallelMLP
    state : dict
        The fitted attributes.
    index : int
        Row of ``cv_results_``.
    fold : int or None
        Fold ``fold``'s replica, or for None the refitted model
        (``refitted``; by default with ``cv``) or the held-out-trained one.
    refitted : bool, optional
    training : dict, optional
        Training parameters that override the search's on the model.

    Returns
    -------
    SingleMLPClassifier or SingleMLPRegressor
    """
    cv = fitted_cv(estimator, state)
    if refitted is None:
        refitted = fold is None and cv is not None
    if refitted:
        coefs, intercepts, loss_curve, validation_curve, n_train = state["_refitted"][index]
    else:
        fold = fold or 0
        # per model (cv=None) or per model and fold
        at = (lambda a: a[index]) if cv is None else (lambda a: a[index, fold])  # noqa: E731
        n_iter = int(at(state["n_iter_per_model_"]))
        loss_curve = at(state["loss_curves_"])[:n_iter]
        scores = state["validation_scores_per_model_"]
        validation_curve = None if scores is None else at(scores)[:n_iter]
        coefs, intercepts = state["_coefs"][fold][index], state["_intercepts"][fold][index]
        n_train = state["_train_sizes"][fold]
    results = state["cv_results_"]
    model = estimator._single_class(
        **_model_params(estimator, results["params"][index], training),
        repeat=int(results["param_repeat"][index]), random_state=state["_seed"],
    )
    vars(model).update(mlp_attributes(
        coefs, intercepts, loss_curve=loss_curve, validation_curve=validation_curve,
        n_train=n_train, out_activation=estimator._out_activation(),
        early_stopping=(training or {}).get("early_stopping", estimator.early_stopping),
    ))
    model.input_transform_ = _model_transform(state, model.input_transform, fold, refitted)
    for name in DATA_ATTRIBUTES:
        if name in state:
            setattr(model, name, state[name])
    if state.get("_classes") is not None:  # refit=False: the search itself has no classes_
        model.classes_ = state["_classes"]
    return model


def _model_transform(state, value, fold, refitted):
    """The fitted ``input_transform`` of a model of the fitted ``state``: its
    fold's, or for a refitted model the one fitted on all the rows; a copy
    (None for ``"none"``)."""
    if value == "none":
        return None
    if refitted:
        transform = state["_refit_input_transforms"][value]
    else:
        transform = state["_input_transforms"][fold][value]
    return copy.deepcopy(transform)


def _model_params(estimator, params, training):
    """A model's parameters: the search's training parameters, then its
    own values (its searched optimizer settings among them), then
    ``training``."""
    single = estimator._single_class
    names = get_param_names(single)
    task = param_task(single)
    # the rate the model trained with, not "auto", which reads as its solver's
    return with_resolved_dropout({
        **{name: getattr(estimator, name) for name in training_params(task) if name in names},
        # an optimizer setting not shown was not searched: one value
        **{name: one_value(getattr(estimator, name)) for name in OPTIMIZER_PARAMS + INPUT_PARAMS
           if name in names},
        **params,
        **(training or {}),
    })
