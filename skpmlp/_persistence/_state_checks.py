"""Checks of an estimator rebuilt from a file, before :func:`skpmlp.io.load` returns it.

A file whose bytes are intact (zip's CRC-32 holds) may still have been
written by hand or by another program: its parameters may be out of range,
its weights may not chain, a finished model may hold NaN weights. These
checks refuse such a state with :class:`~skpmlp._persistence._archive.InvalidFileError`
naming what disagrees, so an estimator that loads predicts; they never
change the estimator.

What is checked (each where the attribute is present):

* the parameters, against the estimator's ``_parameter_constraints``
  (what ``fit`` checks);
* a standalone model's weights (``coefs_``, ``intercepts_``): lists of
  float arrays of one dtype whose shapes chain from ``n_features_in_`` to
  ``n_outputs_`` over ``n_layers_``, all finite (a fitted model never holds
  NaN or infinite weights: ``fit`` raises instead); ``out_activation_`` one
  of the output activations; ``classes_`` one label per output;
* a search's tables: ``cv_results_`` columns of one row per model,
  ``best_index_`` and ``ensemble_indices_`` among the rows, with one
  weight each in ``ensemble_weights_`` (finite, non-negative, summing to
  1), every model's weights (``_coefs``, ``_intercepts``) chaining as above
  (they may be NaN: a diverged model is kept frozen);
* an ensemble's members: at least one, all with the ensemble's
  ``n_features_in_`` (and ``classes_``), and one weight each in
  ``weights_`` (finite, non-negative, summing to 1);
* fitted input transforms (a model's ``input_transform_``, a search's
  ``_input_transforms`` and ``_refit_input_transforms``): the class of their
  ``input_transform`` value (None for ``"none"``), taking the model's
  features, with finite statistics of one value per feature (a quantile
  transform's: non-decreasing quantiles of every feature, references from
  0 to 1).
"""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.preprocessing import QuantileTransformer

from .._core._compat import validate_params
from .._core._transforms import INPUT_TRANSFORMS, input_transformer
from ._archive import InvalidFileError

#: Output activations a fitted model may name.
OUT_ACTIVATIONS = frozenset({"softmax", "logistic", "identity", "exp"})


def check_loaded(estimator):
    """Refuse ``estimator``, rebuilt from a file, if its state is inconsistent.

    Parameters
    ----------
    estimator : BaseEstimator
        A skpmlp estimator whose parameters and fitted attributes were set
        from a file (nested estimators already checked).

    Raises
    ------
    InvalidFileError
        Naming the estimator's class and what disagrees.
    """
    name = type(estimator).__name__
    state = vars(estimator)
    try:
        if hasattr(type(estimator), "_parameter_constraints"):
            _check_params(estimator)
        _check_data_attributes(state)
        if "coefs_" in state or "intercepts_" in state:
            _check_model(state, state.get("coefs_"), state.get("intercepts_"), finite=True)
        if "input_transform_" in state:
            value = getattr(estimator, "input_transform", None)
            _check_transform(state["input_transform_"], value, state.get("n_features_in_"),
                             "input_transform_")
        if "_input_transforms" in state or "_refit_input_transforms" in state:
            _check_search_transforms(state)
        if "cv_results_" in state:
            _check_search(state)
        if "estimators_" in state:
            _check_members(state)
    except _Inconsistent as exc:
        raise InvalidFileError(
            f"Invalid skpmlp file: the saved {name} is inconsistent: {exc}"
        ) from exc


class _Inconsistent(Exception):
    """What disagrees, for :func:`check_loaded`'s message."""


def _require(condition, message):
    if not condition:
        raise _Inconsistent(message)


def _check_params(estimator):
    try:
        validate_params(estimator)
    except (ValueError, TypeError) as exc:  # scikit-learn's InvalidParameterError
        raise _Inconsistent(f"its parameters are invalid ({exc})") from exc


def _is_int(value, low=0):
    return isinstance(value, Integral) and not isinstance(value, bool) and int(value) >= low


def _check_data_attributes(state):
    if "n_features_in_" in state:
        _require(_is_int(state["n_features_in_"], 1), "n_features_in_ is not a positive int.")
    if "feature_names_in_" in state:
        names = state["feature_names_in_"]
        _require(
            isinstance(names, np.ndarray) and names.ndim == 1
            and len(names) == state.get("n_features_in_", len(names))
            and all(isinstance(n, str) for n in names),
            "feature_names_in_ is not one string per feature.",
        )
    if "classes_" in state:
        classes = state["classes_"]
        _require(
            isinstance(classes, np.ndarray) and classes.ndim == 1 and len(classes) >= 1
            and len(np.unique(classes)) == len(classes),
            "classes_ is not a 1-D array of distinct labels.",
        )
    if "out_activation_" in state:
        _require(state["out_activation_"] in OUT_ACTIVATIONS,
                 f"out_activation_ is not one of {sorted(OUT_ACTIVATIONS)}.")


def _layer_sizes(coefs, intercepts, what):
    """``[n_features, *hidden, n_outputs]`` of a model's weights, checked to chain."""
    _require(
        type(coefs) is list and type(intercepts) is list and len(coefs) == len(intercepts) >= 1,
        f"{what}: coefs and intercepts are not two lists of one array per layer.",
    )
    arrays = coefs + intercepts
    _require(
        all(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays)
        and len({a.dtype for a in arrays}) == 1,
        f"{what}: the weights are not float arrays of one dtype.",
    )
    sizes = [coefs[0].shape[0] if coefs[0].ndim == 2 else -1]
    for W, b in zip(coefs, intercepts):
        _require(
            W.ndim == 2 and b.ndim == 1 and W.shape[0] == sizes[-1]
            and W.shape[1] == b.shape[0] >= 1,
            f"{what}: the layer shapes {[a.shape for a in coefs]} and "
            f"{[a.shape for a in intercepts]} do not chain.",
        )
        sizes.append(W.shape[1])
    return sizes


def _check_model(state, coefs, intercepts, *, finite, what="the model"):
    sizes = _layer_sizes(coefs, intercepts, what)
    if "n_features_in_" in state:
        _require(
            sizes[0] == state["n_features_in_"],
            f"{what} takes {sizes[0]} features but n_features_in_ is {state['n_features_in_']}.",
        )
    if "n_outputs_" in state:
        _require(state["n_outputs_"] == sizes[-1],
                 f"{what} has {sizes[-1]} outputs but n_outputs_ is {state['n_outputs_']!r}.")
    if "n_layers_" in state:
        _require(state["n_layers_"] == len(sizes),
                 f"{what} has {len(sizes)} layers but n_layers_ is {state['n_layers_']!r}.")
    if "classes_" in state:
        _require(len(state["classes_"]) == sizes[-1],
                 f"{what} has {sizes[-1]} outputs for {len(state['classes_'])} classes_.")
    if finite:
        _require(
            all(np.isfinite(a).all() for a in coefs + intercepts),
            f"{what} holds NaN or infinite weights, but the file says it is fitted (a fit "
            f"never keeps non-finite weights).",
        )


def _check_search(state):
    results = state["cv_results_"]
    _require(isinstance(results, dict) and isinstance(results.get("params"), list),
             "cv_results_ is not a dict with a list of params.")
    n_models = len(results["params"])
    _require(n_models >= 1 and state.get("n_models_", n_models) == n_models,
             f"cv_results_ has {n_models} rows but n_models_ is {state.get('n_models_')!r}.")
    for key, column in results.items():
        _require(len(column) == n_models if hasattr(column, "__len__") else False,
                 f"cv_results_[{key!r}] does not have one entry per model ({n_models}).")
    if "best_index_" in state:
        _require(_is_int(state["best_index_"]) and state["best_index_"] < n_models,
                 f"best_index_ {state['best_index_']!r} is not a row of cv_results_.")
    if "ensemble_indices_" in state:
        rows = state["ensemble_indices_"]
        _require(
            isinstance(rows, np.ndarray) and rows.ndim == 1 and rows.dtype.kind in "iu"
            and len(rows) >= 1 and ((rows >= 0) & (rows < n_models)).all(),
            "ensemble_indices_ are not rows of cv_results_.",
        )
        if "ensemble_weights_" in state:
            _require(_are_weights(state["ensemble_weights_"], len(rows)),
                     "ensemble_weights_ are not one weight per member of ensemble_indices_ "
                     "(finite, non-negative, summing to 1).")
    if "cv_" in state:
        cv = state["cv_"]
        _require(not isinstance(cv, str), f"cv_ is {str(cv)[:40]!r}, not a resolved cv.")
        _require(cv is not None or state.get("n_splits_", 1) == 1,
                 f"cv_ is None (a holdout) but n_splits_ is {state.get('n_splits_')!r}.")
    if "ensemble_score_" in state:
        _require(isinstance(state["ensemble_score_"], float),
                 "ensemble_score_ is not a float.")
    if "best_estimator_" in state:
        best = state["best_estimator_"]
        _require(isinstance(best, BaseEstimator), "best_estimator_ is not an estimator.")
        if "n_features_in_" in state:
            _require(getattr(best, "n_features_in_", None) == state["n_features_in_"],
                     "best_estimator_ takes another number of features than the search.")
    if "_coefs" in state or "_intercepts" in state:
        coefs, intercepts = state.get("_coefs"), state.get("_intercepts")
        _require(
            type(coefs) is list and type(intercepts) is list and len(coefs) == len(intercepts) >= 1
            and all(type(c) is list and type(i) is list and len(c) == len(i) == n_models
                    for c, i in zip(coefs, intercepts)),
            f"the population's weights are not one list of {n_models} models per fold.",
        )
        _require(len(coefs) == state.get("n_splits_", len(coefs)),
                 f"the population's weights have {len(coefs)} folds but n_splits_ is "
                 f"{state.get('n_splits_')!r}.")
        n_outputs = state.get("n_outputs_", len(state.get("classes_", ())) or None)
        failed = _failed_replicas(state, n_models, len(coefs))
        for k, (fold_coefs, fold_intercepts) in enumerate(zip(coefs, intercepts)):
            for i, (W, b) in enumerate(zip(fold_coefs, fold_intercepts)):
                sizes = _layer_sizes(W, b, f"model {i} of fold {k}")
                _require(sizes[0] == state.get("n_features_in_", sizes[0])
                         and sizes[-1] == (n_outputs or sizes[-1]),
                         f"model {i} of fold {k} takes {sizes[0]} features to {sizes[-1]} "
                         f"outputs.")
                # a model that trained without failing has finite weights:
                # NaN there predicts NaN, silently
                _require(failed[i, k] or all(np.isfinite(a).all() for a in (*W, *b)),
                         f"model {i} of fold {k} did not fail (_diverged) but has "
                         f"non-finite weights.")


def _failed_replicas(state, n_models, n_folds):
    """``(n_models, n_folds)`` bool: the replicas marked diverged (any
    replica, when the file has no such record)."""
    diverged = state.get("_diverged")
    if diverged is None:  # a file of a version without the record: nothing to hold them to
        return np.ones((n_models, n_folds), dtype=bool)
    diverged = np.asarray(diverged, dtype=bool).reshape(n_models, -1)
    _require(diverged.shape[1] in (1, n_folds),
             f"_diverged has {diverged.shape[1]} folds, not {n_folds}.")
    return np.broadcast_to(diverged, (n_models, n_folds))


def _are_weights(weights, n):
    """Whether ``weights`` are ``n`` finite non-negative floats summing to 1."""
    return (
        isinstance(weights, np.ndarray) and weights.shape == (n,) and weights.dtype.kind == "f"
        and bool(np.isfinite(weights).all()) and bool((weights >= 0).all())
        and abs(float(weights.sum()) - 1) < 1e-9
    )


def _check_members(state):
    members = state["estimators_"]
    _require(type(members) is list and len(members) >= 1
             and all(isinstance(m, BaseEstimator) for m in members),
             "estimators_ is not a list of at least one estimator.")
    if "weights_" in state:
        weights = state["weights_"]
        _require(_are_weights(weights, len(members)),
                 "weights_ are not one weight per member of estimators_ (finite, "
                 "non-negative, summing to 1).")
        given = state.get("weights")
        expected = np.full(len(members), 1 / len(members))
        if given is not None:
            given = np.asarray(given, dtype=float)
            expected = given / given.sum() if given.shape == weights.shape else None
        _require(expected is not None and np.allclose(weights, expected, rtol=1e-9, atol=0),
                 "weights_ are not the weights parameter, normalised.")
    for member in members:
        _require(getattr(member, "n_features_in_", None) == state.get("n_features_in_"),
                 "a member takes another number of features than the ensemble.")
        if hasattr(members[0], "classes_"):
            _require(np.array_equal(getattr(member, "classes_", None), members[0].classes_),
                     "the members have different classes_.")


#: The statistics a fitted input transform holds: one finite value per feature.
_TRANSFORM_STATISTICS = ("mean_", "var_", "scale_", "center_", "factor_")


def _check_transform(transform, value, n_features, what):
    """A fitted transform of ``input_transform=value``: None for
    ``"none"``, else that value's class, fitted on ``n_features`` features
    (None: any), with one finite statistic per feature."""
    _require(value in INPUT_TRANSFORMS, f"{what}: {str(value)[:40]!r} is not an input_transform.")
    expected = input_transformer(value)
    if expected is None:
        _require(transform is None, f"{what} is set, but input_transform is 'none'.")
        return
    _require(type(transform) is type(expected),
             f"{what} is not a fitted {type(expected).__name__} (input_transform={value!r}).")
    n = getattr(transform, "n_features_in_", None)
    _require(_is_int(n, 1) and (n_features is None or n == n_features),
             f"{what} takes {n!r} features, not the model's {n_features}.")
    for name in _TRANSFORM_STATISTICS:
        statistic = getattr(transform, name, None)
        if statistic is None:
            continue
        _require(isinstance(statistic, np.ndarray) and statistic.shape == (n,)
                 and statistic.dtype.kind == "f" and bool(np.isfinite(statistic).all()),
                 f"{what}.{name} is not one finite float per feature.")
    if isinstance(transform, QuantileTransformer):
        _check_quantiles(transform, n, what)


def _check_quantiles(transform, n_features, what):
    """A fitted ``QuantileTransformer`` of ``input_transform="quantile"``:
    to a normal distribution, each feature's quantiles finite and
    non-decreasing, their references increasing from 0 to 1."""
    _require(transform.output_distribution == "normal",
             f"{what}.output_distribution is not 'normal'.")
    count = getattr(transform, "n_quantiles_", None)
    quantiles = getattr(transform, "quantiles_", None)
    references = getattr(transform, "references_", None)
    _require(_is_int(count, 1), f"{what}.n_quantiles_ is not a positive int.")
    _require(isinstance(quantiles, np.ndarray) and quantiles.shape == (count, n_features)
             and quantiles.dtype.kind == "f" and bool(np.isfinite(quantiles).all())
             and bool((np.diff(quantiles, axis=0) >= 0).all()),
             f"{what}.quantiles_ is not n_quantiles_ finite non-decreasing floats per feature.")
    _require(isinstance(references, np.ndarray) and references.shape == (count,)
             and references.dtype.kind == "f" and bool(np.isfinite(references).all())
             and bool((np.diff(references) > 0).all())
             and (count == 1 or (references[0] == 0 and references[-1] == 1)),
             f"{what}.references_ is not n_quantiles_ increasing floats from 0 to 1.")


def _check_search_transforms(state):
    """A search's fitted input transforms: per fold, then refitted ones,
    each of the value it is filed under."""
    n_features = state.get("n_features_in_")
    folds = state.get("_input_transforms", [])
    _require(type(folds) is list and all(type(fold) is dict for fold in folds)
             and len(folds) in (0, state.get("n_splits_", len(folds))),
             "_input_transforms is not one dict of transforms per fold.")
    named = [(f"_input_transforms[{k}]", fold) for k, fold in enumerate(folds)]
    named.append(("_refit_input_transforms", state.get("_refit_input_transforms", {})))
    for what, transforms in named:
        _require(type(transforms) is dict, f"{what} is not a dict of transforms.")
        for value, transform in transforms.items():
            _require(value != "none", f"{what} holds a transform for 'none'.")
            _check_transform(transform, value, n_features, f"{what}[{str(value)[:40]!r}]")
