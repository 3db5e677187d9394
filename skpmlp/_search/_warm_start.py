"""Resumable searches: ``warm_start=True`` on a search of several models.

A second ``fit`` of a fitted search continues every surviving model (each
fold replica from its own previous weights) for ``max_iter`` more epochs,
with a fresh optimizer and stopping rule, as a warm-started
:class:`SingleMLPClassifier` does. Pruned and failed (diverged) models are
not trained again: their weights and rows stay as they were. The helpers
here check that the second fit searches the same population on the same
rows and folds, build the spec that starts from the previous weights, and
merge what the new run trained into the previous results.
"""

import dataclasses
import hashlib
from numbers import Integral

import numpy as np


def folds_digest(folds):
    """A digest of a fold plan (every fold's training and held-out rows):
    what a resumed search compares to know its folds are the previous
    fit's."""
    digest = hashlib.sha256()
    for train, test in folds:
        for rows in (train, test):
            if rows is None:
                digest.update(b"none")
            else:
                digest.update(np.ascontiguousarray(rows, dtype=np.int64).tobytes())
            digest.update(b"|")
    return digest.hexdigest()


def previous_search(estimator, prior):
    """The fitted state a ``warm_start=True`` fit continues, ``prior`` (the
    estimator's attributes before this fit), or None: no warm start, no
    previous fit, or a previous fit of one configuration (which continues
    from its ``coefs_``, see :func:`~skpmlp._core._attributes.warm_start_weights`)."""
    if not estimator.warm_start or "_coefs" not in prior or "cv_results_" not in prior:
        return None
    return prior if prior.get("n_models_", 0) > 1 else None


def check_resume_settings(estimator):
    """Refuse what a resumed search does not support.

    Raises
    ------
    ValueError
        With ``warm_start=True`` and ``refill`` (an adaptive search draws
        and perturbs models during its run: there is no fixed population
        to continue).
    """
    if estimator.warm_start and estimator.refill is not None:
        raise ValueError(
            f"warm_start=True with refill={estimator.refill!r} is not supported: an adaptive "
            f"search replaces models during its run, so there is no fixed population to "
            f"continue. Set warm_start=False, or refill=None."
        )


def resume_seed(estimator, previous, seed):
    """The seed a resumed search runs with: the previous fit's where
    ``random_state`` is not an int (None or a RandomState, which would draw
    another population and other folds), else ``seed``.

    Raises
    ------
    ValueError
        If an int ``random_state`` gives another seed than the previous
        fit's (its models' initial weights and batches came from that seed).
    """
    if not isinstance(estimator.random_state, Integral):
        return int(previous["_seed"])
    if seed != int(previous["_seed"]):
        raise ValueError(
            f"random_state={estimator.random_state!r} gives another seed than the previous fit "
            f"({previous['_seed']}); warm_start=True continues the previous search's models, "
            f"drawn and split with its seed. Keep random_state, or set warm_start=False to start "
            f"afresh."
        )
    return seed


def check_same_population(previous, population, n_samples, n_features, folds):
    """A resumed search must train the previous fit's models on the same
    rows and folds.

    Raises
    ------
    ValueError
        Naming what changed: the drawn configurations (``params``), the
        number of rows or features, or the folds.
    """
    fix = (" warm_start=True continues the previous search's models; fit the same parameters, "
           "random_state and data, or set warm_start=False to start afresh.")
    if "hyperparameter_schedules_" in previous:
        raise ValueError(
            "The previous fit was an adaptive search (refill): its models were replaced during "
            "the run, so there is no fixed population to continue. Set warm_start=False."
        )
    needed = ("_folds_digest", "_n_samples_fit", "_diverged", "_pruned")
    missing = [name for name in needed if name not in previous]
    if missing:
        raise ValueError(
            f"The previous fit lacks what a resumed search needs ({', '.join(missing)}): it was "
            f"fitted by an older skpmlp version. Set warm_start=False to start afresh."
        )
    previous_params = list(previous["cv_results_"]["params"])
    params = population.shown_params()
    previous_repeats = np.asarray(previous["cv_results_"]["param_repeat"]).tolist()
    if (_canonical(params) != _canonical(previous_params)
            or np.asarray(population.repeats).tolist() != previous_repeats):
        raise ValueError(
            f"The search's configurations changed since the previous fit: it drew "
            f"{len(previous_params)} models, this fit draws {len(params)}"
            + ("" if len(params) != len(previous_params) else " with other parameters")
            + " (params, random_state, n_models, n_repeats or param_grid changed)." + fix
        )
    if previous.get("n_features_in_") != n_features:
        raise ValueError(
            f"X has {n_features} features, but the previous fit had "
            f"{previous.get('n_features_in_')}." + fix
        )
    if previous.get("_n_samples_fit") != n_samples:
        raise ValueError(
            f"X has {n_samples} rows, but the previous fit had "
            f"{previous.get('_n_samples_fit')}." + fix
        )
    if previous.get("_folds_digest") != folds_digest(folds):
        raise ValueError(
            "The folds (or the held-out validation rows) differ from the previous fit's: cv, "
            "validation_fraction, groups, y or random_state changed." + fix
        )


def _canonical(value):
    """``value`` with tuples, lists and numpy scalars made comparable
    (a loaded search's params come back through JSON)."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _per_fold(previous, name):
    """``previous[name]`` as (n_models, n_folds, ...) (a holdout search
    keeps its curves without the fold axis)."""
    value = previous[name]
    if value is None:
        return None
    value = np.asarray(value)
    return value[:, None] if np.ndim(previous["n_iter_per_model_"]) == 1 else value


def survivors(previous):
    """Rows a resumed search trains again: neither pruned nor failed
    (diverged) on any fold. A model that stopped early (converged) or
    never trained (an interrupted fit) trains again."""
    stopped = np.asarray(previous["_diverged"]) | np.asarray(previous["_pruned"])
    return np.flatnonzero(~stopped.any(axis=1))


def resume_spec(spec, previous, rows):
    """``spec`` restricted to ``rows``, each fold replica starting from its
    previous weights."""
    return dataclasses.replace(spec.subset(rows), fold_initial_weights=[
        [(previous["_coefs"][k][i], previous["_intercepts"][k][i]) for i in rows]
        for k in range(len(previous["_coefs"]))
    ])


def _extend(previous_curves, previous_n, new_curves, new_n, rows):
    """Every replica's previous curve then, for ``rows``, its new epochs;
    NaN padded to the longest."""
    total = previous_n.copy()
    total[rows] += new_n
    width = max(int(total.max(initial=0)), previous_curves.shape[2])
    curves = np.full(previous_curves.shape[:2] + (width,), np.nan)
    curves[:, :, :previous_curves.shape[2]] = previous_curves
    for j, i in enumerate(rows):
        for k in range(curves.shape[1]):
            start, n = int(previous_n[i, k]), int(new_n[j, k])
            curves[i, k, start:start + n] = new_curves[j, k, :n]
    return curves


def merge_resumed(previous, result, rows):
    """The run's result for the whole population: ``result`` (of the
    models at ``rows``) merged into the previous fit's. Curves extend,
    ``n_iter`` adds up, the others keep their weights and state.

    Returns
    -------
    TrainResult
    """
    previous_n = _per_fold(previous, "n_iter_per_model_").astype(int)
    n_folds = len(previous["_coefs"])
    coefs = [list(fold) for fold in previous["_coefs"]]
    intercepts = [list(fold) for fold in previous["_intercepts"]]
    for k in range(n_folds):
        for j, i in enumerate(rows):
            coefs[k][i], intercepts[k][i] = result.coefs[k][j], result.intercepts[k][j]
    n_iter = previous_n.copy()
    n_iter[rows] += result.n_iter
    loss_curves = _extend(_per_fold(previous, "loss_curves_"), previous_n, result.loss_curves,
                          result.n_iter, rows)
    validation = None
    previous_scores = _per_fold(previous, "validation_scores_per_model_")
    if previous_scores is not None and result.validation_scores is not None:
        validation = _extend(previous_scores, previous_n, result.validation_scores, result.n_iter,
                             rows)

    def flags(previous_flags, new_flags):
        merged = np.array(previous_flags, dtype=bool)
        merged[rows] = new_flags
        return merged

    converged = flags(previous.get("_converged", np.zeros_like(previous_n, dtype=bool)),
                      result.converged)
    diverged = flags(previous["_diverged"], result.diverged)
    pruned = flags(previous["_pruned"], result.pruned)
    best_epoch = None
    if result.best_epoch is not None:
        # counted from the previous fit's first epoch, as n_iter; the
        # others keep theirs (0 where the previous fit kept none)
        previous_best = _per_fold({**previous, "best_epoch_per_model_":
                                   previous.get("best_epoch_per_model_")},
                                  "best_epoch_per_model_")
        best_epoch = (np.zeros_like(previous_n) if previous_best is None
                      else np.array(previous_best, dtype=int))
        best_epoch[rows] = np.where(result.best_epoch > 0, previous_n[rows] + result.best_epoch,
                                    0)
    return dataclasses.replace(
        result, coefs=coefs, intercepts=intercepts, loss_curves=loss_curves,
        validation_scores=validation,
        n_iter=n_iter, converged=converged, diverged=diverged, pruned=pruned,
        best_epoch=best_epoch,
    )
