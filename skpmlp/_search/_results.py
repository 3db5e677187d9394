"""The ``cv_results_`` table, in GridSearchCV's schema."""

import warnings

import numpy as np
from scipy.stats import rankdata


def rank_scores(means, demoted=None):
    """Rank (1 = best) as GridSearchCV does: ``method="min"``, NaN last.

    Rows where ``demoted`` is True (pruned or failed models) rank below
    every other row, among themselves by score.
    """
    means = np.asarray(means, dtype=float)
    if np.isnan(means).all():
        return np.ones(len(means), dtype=np.int32)
    filled = np.nan_to_num(means, nan=np.nanmin(means) - 1)
    if demoted is not None and np.any(demoted):
        # shift demoted rows below the worst kept score
        filled = np.where(demoted, filled - (np.ptp(filled) + 1), filled)
    return rankdata(-filled, method="min").astype(np.int32)


def _param_column(values, masked=None):
    """A ``param_<name>`` column as GridSearchCV builds it: a masked array
    with the values' own dtype when they are numbers (float for learning
    rates, int for repeats), object for strings and tuples. Entries where
    ``masked`` is True stay masked (a ``param_grid`` subspace left the
    parameter to the estimator's value); their data is that value still."""
    try:
        inferred = np.array(values)
    except ValueError:  # tuples of different lengths
        dtype = np.dtype(object)
    else:
        plain = inferred.dtype.kind != "U" and inferred.ndim == 1
        dtype = inferred.dtype if plain else np.dtype(object)
    data = np.empty(len(values), dtype=dtype)
    for i, value in enumerate(values):
        data[i] = value  # one by one: a tuple stays one object
    return np.ma.MaskedArray(data,
                             mask=np.zeros(len(values), dtype=bool) if masked is None else masked)


def warn_non_finite(key, means):
    """GridSearchCV's warning when some mean train or test score is NaN or infinite."""
    if np.any(~np.isfinite(means)):
        warnings.warn(
            f"One or more of the {key.split('_')[0]} scores are non-finite: {means}",
            category=UserWarning,
            stacklevel=4,
        )


def _store(results, key, per_split, *, splits=True, rank=False, demoted=None, warn=False):
    """Add ``split{k}_<key>``, ``mean_<key>``, ``std_<key>`` (and rank);
    ``warn`` on non-finite means, as GridSearchCV."""
    per_split = np.asarray(per_split, dtype=float)
    if splits:
        for k in range(per_split.shape[1]):
            results[f"split{k}_{key}"] = per_split[:, k]
    means = per_split.mean(axis=1)
    results[f"mean_{key}"] = means
    if warn:
        warn_non_finite(key, means)
    results[f"std_{key}"] = per_split.std(axis=1)
    if rank:
        results[f"rank_{key}"] = rank_scores(means, demoted)


def mean_best_epoch(best_epoch):
    """Every model's mean best epoch over its folds, from ``best_epoch`` of
    shape (n_models, n_folds): the folds that kept one (above 0) only; NaN
    where none did."""
    best = np.asarray(best_epoch, dtype=float)
    found = best > 0
    with np.errstate(invalid="ignore"):
        return np.where(found.any(1), (best * found).sum(1) / found.sum(1), np.nan)


def build_cv_results(population, scores, *, fit_time, score_time, multimetric, status=None,
                     held_out=True):
    """Build ``cv_results_`` for a population.

    Parameters
    ----------
    population : Population
    scores : dict
        ``scores["test"]``: dict of str to ndarray of shape (n_models,
        n_splits), one entry per scorer (the single-metric entry is named
        ``"score"``); ``scores["train"]``, when there, adds the
        ``*_train_<name>`` columns (``return_train_score=True``).
    fit_time : float
        Total seconds of the fused run; each model and split is charged an
        equal share (the fused run trains them together).
    score_time : ndarray of shape (n_models, n_splits)
        Seconds each model spent being scored on each split (0 for a failed
        fit, as GridSearchCV's).
    multimetric : bool
        Column suffixes are ``_<name>`` (multi-metric) or ``_score``.
    status : dict of str to ndarray of shape (n_models,), optional
        Every model's ``"n_iter"`` (the epochs it trained, the most over its
        folds: the ``n_iter`` column), ``"pruned"`` (stopped by successive
        halving: the ``pruned`` column; they rank below the others) and
        ``"failed"`` (diverged or never trained: they rank below every
        other model whatever their ``error_score``, so they are never
        selected while another model is left), ``"best_epoch"``
        (``restore_best_weights``: the mean of its folds' best epochs, see
        :func:`mean_best_epoch`: the ``best_epoch`` column); each may be
        left out.
    held_out : bool, default=True
        Whether the test scores come from held-out rows. False when a lone
        configuration trained on every row (its test scores are NaN by
        design, so no "non-finite" warning is given for them).

    Returns
    -------
    dict
        ``mean_/std_fit_time``, ``mean_/std_score_time``, ``param_<name>``
        (masked arrays), ``param_repeat``, ``params``, and per metric
        ``split{k}_test_<name>``, ``mean_/std_/rank_test_<name>`` (and the
        train columns).
    """
    status = status or {}
    n_iter, pruned, failed = status.get("n_iter"), status.get("pruned"), status.get("failed")
    test_scores, train_scores = scores["test"], scores.get("train")
    n = population.n_models
    n_splits = next(iter(test_scores.values())).shape[1]
    share = n * n_splits
    results = {}
    _store(results, "fit_time", np.full((n, n_splits), fit_time / share), splits=False)
    _store(results, "score_time", score_time, splits=False)
    for name in population.shown:
        results[f"param_{name}"] = _param_column(population.column(name), population.masked(name))
    results["param_repeat"] = _param_column(list(population.repeats))
    results["params"] = population.shown_params()
    if n_iter is not None:
        results["n_iter"] = np.asarray(n_iter, dtype=int)
    if pruned is not None:
        results["pruned"] = np.asarray(pruned, dtype=bool)
    if status.get("best_epoch") is not None:
        results["best_epoch"] = np.asarray(status["best_epoch"], dtype=float)
    demoted = np.zeros(n, dtype=bool)
    for mask in (pruned, failed):
        if mask is not None:
            demoted |= np.asarray(mask, dtype=bool)
    for name, scores in test_scores.items():
        suffix = name if multimetric else "score"
        _store(results, f"test_{suffix}", scores, rank=True, demoted=demoted, warn=held_out)
        if train_scores is not None:
            _store(results, f"train_{suffix}", train_scores[name], warn=True)
    return results
