"""Splitting a population into independent parts and merging their results.

Models never interact, so any part of a population (a memory chunk, a
parallel shard) trains as its own fused run; :func:`merge_results` puts the
parts' :class:`TrainResult` s back in population order.
"""

import numpy as np

from ._memory import model_parameters
from ._spec import TrainResult


def split_models(spec, n_parts, n_features, n_outputs):
    """Cut a population into ``n_parts`` parts of about equal cost.

    Models are dealt in order of decreasing size to the currently cheapest
    part (longest-processing-time first), so parts cost about the same.

    Returns
    -------
    list of ndarray of int
        Model indices of every non-empty part, ascending.
    """
    n_parts = max(1, min(n_parts, spec.n_models))
    costs = np.array([model_parameters(a, n_features, n_outputs) for a in spec.hidden_layer_sizes],
                     float)
    loads, parts = np.zeros(n_parts), [[] for _ in range(n_parts)]
    for i in np.argsort(-costs, kind="stable"):
        target = int(np.argmin(loads))
        parts[target].append(i)
        loads[target] += costs[i]
    return [np.sort(p) for p in parts if p]


def _pad_epochs(curves, n_epochs):
    """(n, K, e) curves padded with NaN to ``n_epochs`` epochs."""
    if curves.shape[2] == n_epochs:
        return curves
    pad = np.full((*curves.shape[:2], n_epochs - curves.shape[2]), np.nan)
    return np.concatenate([curves, pad], axis=2)


def merge_results(parts, n_models):
    """One :class:`TrainResult` from the results of disjoint parts.

    Parameters
    ----------
    parts : list of (ndarray of int, TrainResult)
        Model indices of each part and its result.
    n_models : int

    Returns
    -------
    TrainResult
        In population order; curves padded with NaN to the longest run;
        ``train_time`` is the sum of the parts' times.
    """
    if len(parts) == 1 and np.array_equal(parts[0][0], np.arange(n_models)):
        return parts[0][1]
    first = parts[0][1]
    K = len(first.coefs)
    n_epochs = max(r.loss_curves.shape[2] for _, r in parts)
    coefs = [[None] * n_models for _ in range(K)]
    intercepts = [[None] * n_models for _ in range(K)]
    loss = np.full((n_models, K, n_epochs), np.nan)
    # parts trained by L-BFGS are never monitored: NaN where others are
    monitored = any(r.validation_scores is not None for _, r in parts)
    val = np.full((n_models, K, n_epochs), np.nan) if monitored else None
    per_model = {name: np.zeros((n_models, K), dtype=getattr(first, name).dtype)
                 for name in ("n_iter", "converged", "diverged", "pruned")}
    # restore_best_weights: 0 (none) for parts L-BFGS trained
    if any(r.best_epoch is not None for _, r in parts):
        per_model["best_epoch"] = np.zeros((n_models, K), dtype=int)
    for index, result in parts:
        for k in range(K):
            for j, i in enumerate(index):
                coefs[k][i], intercepts[k][i] = result.coefs[k][j], result.intercepts[k][j]
        loss[index] = _pad_epochs(result.loss_curves, n_epochs)
        if result.validation_scores is not None:
            val[index] = _pad_epochs(result.validation_scores, n_epochs)
        for name, array in per_model.items():
            if getattr(result, name) is not None:
                array[index] = getattr(result, name)
    halts = [r.halted for _, r in parts if r.halted]
    return TrainResult(
        coefs=coefs, intercepts=intercepts, loss_curves=loss, validation_scores=val,
        train_time=sum(r.train_time for _, r in parts), halted=halts[0] if halts else None,
        extra={"parts": [r.extra for _, r in parts]}, **per_model,
    )
