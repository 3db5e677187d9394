"""The scorers a search ranks models with, from its ``scoring``.

:func:`resolve_scorers` reads ``scoring`` as GridSearchCV does (one scorer,
several, or None for the fused default score), :func:`fitted_scorers` gives
what ``scorer_`` holds, and :func:`weighted_scorers` which of them take
``sample_weight``.
"""

import warnings

from sklearn.metrics import check_scoring, get_scorer

from .._core._compat import scorer_accepts_sample_weight


def resolve_scorers(estimator, scoring):
    """``({name: scorer or None}, multimetric)``; None means the fused
    default score (accuracy / R^2)."""
    if scoring is None:
        return {"score": None}, False
    if isinstance(scoring, str) or callable(scoring):
        return {"score": check_scoring(estimator, scoring)}, False
    if isinstance(scoring, dict):
        if not scoring:
            raise ValueError("scoring is an empty dict; give at least one scorer.")
        return {name: check_scoring(estimator, s) for name, s in scoring.items()}, True
    names = list(scoring)
    if not names or len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"scoring as a list, tuple or set must hold unique scorer names; got {scoring!r}."
        )
    return {name: get_scorer(name) for name in names}, True


def fitted_scorers(estimator, scorers):
    """``scorers`` (from :func:`resolve_scorers`) with the default score as
    a scorer object: what ``scorer_`` holds. As GridSearchCV's, the default
    is the scoring of the estimator searched over, the standalone model's
    own ``score`` (accuracy / R^2)."""
    default = check_scoring(estimator._single_class())
    return {name: default if scorer is None else scorer for name, scorer in scorers.items()}


def weighted_scorers(estimator, scorers, multimetric):
    """The names of the ``scorers`` that take ``sample_weight``, warning as
    GridSearchCV does for each one that does not (it is then called
    without it, as GridSearchCV calls it).

    Parameters
    ----------
    estimator : the search being fitted with ``sample_weight``
    scorers : dict of str to scorer or None
        None (the fused default score) takes ``sample_weight``.
    multimetric : bool
        Name each scorer in the warning (``scoring`` was a list or dict).

    Returns
    -------
    set of str
    """
    accepting = set()
    for name, scorer in scorers.items():
        if scorer is None or scorer_accepts_sample_weight(scorer):
            accepting.add(name)
            continue
        which = f"{name}={scorer}" if multimetric else f"{scorer}"
        warnings.warn(
            f"The scoring {which} does not support sample_weight, which may lead to "
            f"statistically incorrect results when fitting {estimator} with sample_weight. ",
            UserWarning,
            stacklevel=4,
        )
    return accepting
