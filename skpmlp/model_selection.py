"""Fused cross-validation of a whole search space.

:func:`fused_cross_validate` trains every model of a ParallelMLP estimator
once per fold inside ONE fused run and returns the per-model table, without
refitting anything: ``cross_validate`` for a whole grid at once.
"""

from sklearn.base import clone

from ._core._compat import validate_params
from ._search._run import search

__all__ = ["fused_cross_validate"]


def fused_cross_validate(
    estimator, X, y, *, groups=None, cv=5, scoring=None, return_train_score=False,
    sample_weight=None,
):
    """Cross-validate every model of a search space in one fused run.

    Parameters
    ----------
    estimator : ParallelMLPClassifier or ParallelMLPRegressor
        Its hyperparameters define the population; it is not modified.
    X : array-like of shape (n_samples, n_features)
        The training input samples.
    y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Class labels or regression targets.
    groups : array-like of shape (n_samples,), default=None
        Group labels of the rows, passed to the ``cv`` splitter's ``split``
        (``GroupKFold``, ``LeaveOneGroupOut``, ...), as in
        ``cross_validate``.
    cv : int, cross-validation generator or iterable, default=5
        As in GridSearchCV: an int gives StratifiedKFold for classifiers and
        KFold for regressors; any splitter or iterable of (train, test)
        index pairs is used as given.
    scoring : str, callable, list, tuple, set, dict or None, default=None
        One scorer, or several (multi-metric). None uses accuracy / R^2.
    return_train_score : bool, default=False
        Also score each replica on its fold's training rows.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights in every model's loss and in the scorers that take them.

    Returns
    -------
    cv_results : dict of ndarray
        GridSearchCV's ``cv_results_`` schema: ``params``, ``param_*``,
        ``split{k}_test_<metric>``, ``mean_/std_/rank_test_<metric>``, fit
        and score times (equal shares of the fused run).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.model_selection import fused_cross_validate
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(8,), (16,)], "tanh", max_iter=20, random_state=0)
    >>> results = fused_cross_validate(search, X, y, cv=3)
    >>> results["split2_test_score"].shape  # 2 x 2 default learning rates x 2 input transforms
    (8,)
    """
    estimator = clone(estimator).set_params(
        cv=cv, scoring=scoring, return_train_score=return_train_score, refit=False
    )
    validate_params(estimator)
    return search(estimator, X, y, sample_weight, groups).cv_results
