"""Train / validation splits of rows and the folds of a fit (numpy and scikit-learn).

They depend only on the seed and the labels (and the groups, when given),
never on the models, so a model's split is the same in any population and
when it trains alone. What decides them comes from the estimator once, as
a :class:`SplitSettings` of plain values, at the top of a fit.
"""

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    ShuffleSplit,
    StratifiedShuffleSplit,
    check_cv,
)
from sklearn.utils import check_array

from .._core._values import restores_best, restores_best_on_test_folds, uses_early_stopping

#: The folds of ``cv="auto"`` where it chooses k-fold.
AUTO_CV_FOLDS = 5

#: The most rows for which ``cv="auto"`` chooses k-fold (a holdout above).
#: Measured (``benchmarks/cv_auto.py``; the user guide's cross-validation
#: page has the table): over 4 real data sets, 5 folds beat the holdout's
#: choice by 0.007 to 0.012 (0.016 to 0.020 with fold or greedy ensembles)
#: at 300 and 1,000 rows, by 0.004 at 2,000, and by nothing at 3,000, for
#: 2 to 4 times the training time.
AUTO_CV_MAX_SAMPLES = 2000

#: scikit-learn MLP's words when early stopping would watch fewer than two rows.
VALIDATION_TOO_SMALL = (
    "The validation set is too small. Increase 'validation_fraction' or the size of your dataset."
)


def holdout_split(y_encoded, fraction, seed, *, stratify, early_stopping=False):
    """Split row indices into training and validation parts.

    The split depends only on ``seed`` and ``y``, and is stratified for
    classifiers. An early-stopping validation set is split off as
    scikit-learn's MLP does: at least 2 validation rows, and a class too
    small to appear in both parts raises scikit-learn's own error
    (``train_test_split``). A split that only selects models (``cv=None``
    without early stopping, or successive halving's validation part) falls
    back to a random split instead, with a warning.

    Parameters
    ----------
    y_encoded : ndarray of int of shape (n_samples,)
        Class indices (classifiers) or zeros.
    fraction : float
        Fraction of the rows held out (rounded up, as ``train_test_split``).
    seed : int
    stratify : bool
    early_stopping : bool, default=False
        Whether early stopping watches the validation part.

    Raises
    ------
    ValueError
        If either part would be empty; with ``early_stopping``, if the
        validation part has fewer than 2 rows (scikit-learn MLP's message)
        or a class cannot be stratified.
    """
    n = len(y_encoded)
    n_val = math.ceil(fraction * n)
    strata = None
    if stratify:
        counts = np.bincount(y_encoded)
        n_classes = np.count_nonzero(counts)
        if early_stopping:
            strata = _mlp_strata(y_encoded, n_classes)
        elif counts[counts > 0].min() >= 2 and min(n_val, n - n_val) >= n_classes:
            strata = y_encoded
        else:
            warnings.warn(
                f"The validation split is not stratified: with n_samples={n} and "
                f"validation_fraction={fraction}, some class is too small to appear in "
                f"both the training and the validation part.",
                UserWarning,
                stacklevel=4,
            )
    if n_val < 1 or n - n_val < 1:
        raise ValueError(
            f"validation_fraction={fraction} with n_samples={n} leaves {n - n_val} training "
            f"and {n_val} validation samples; at least one of each is needed."
        )
    train, val = _train_test_rows(n, n_val, seed, strata)
    if early_stopping and len(val) < 2:
        # as scikit-learn's MLP: split first (a class too small to stratify
        # raises train_test_split's own error), then check the size
        raise ValueError(VALIDATION_TOO_SMALL)
    return train, val


def _train_test_rows(n, n_val, seed, strata):
    """``train_test_split(np.arange(n), test_size=n_val, random_state=seed,
    stratify=strata)``, the same rows and errors: the splitter it draws from,
    without its argument checks and indexing (0.7 ms a call against 0.4 for
    a stratified split, 0.15 unstratified: a small search splits every
    fold)."""
    splitter = (ShuffleSplit if strata is None else StratifiedShuffleSplit)(
        test_size=n_val, train_size=n - n_val, random_state=seed)
    return next(splitter.split(np.arange(n), strata))


def _mlp_strata(y_encoded, n_classes):
    """What scikit-learn's MLP stratifies its early-stopping split on, where
    it gives the same split as the class indices: for two classes its
    binarized labels (a column: is the row of the second class), so a class too small
    to stratify is named as scikit-learn names it (``['True']``). With more
    classes scikit-learn stratifies on one-hot rows, whose order differs
    from the classes': the class indices keep the split independent of
    that artefact."""
    if n_classes == 2:  # LabelBinarizer's column, (n_samples, 1)
        return (y_encoded == y_encoded.max())[:, None]
    return y_encoded


def group_holdout_split(groups, fraction, seed):
    """Split row indices into training and validation parts by group: the
    validation part holds ``ceil(fraction * n_groups)`` whole groups drawn
    with :class:`~sklearn.model_selection.GroupShuffleSplit`, so no group
    has rows on both sides. The split depends only on ``seed`` and
    ``groups``.

    Raises
    ------
    ValueError
        If there are fewer than two groups.
    """
    n_groups = len(np.unique(groups))
    if n_groups < 2:
        raise ValueError(
            f"groups holds {n_groups} distinct group; the group-aware validation split "
            f"(cv=None with groups) needs at least 2."
        )
    splitter = GroupShuffleSplit(n_splits=1, test_size=fraction, random_state=seed)
    return next(splitter.split(np.zeros((len(groups), 1)), groups=groups))


@dataclass(frozen=True)
class SplitSettings:
    """The parameters that decide a fit's rows, as values.

    Parameters
    ----------
    classifier : bool
        Splits of single-label class targets are stratified.
    cv : int, cross-validation generator, iterable or None, default=None
        The estimator's ``cv`` (None: one holdout split).
    validation_fraction : float, default=0.1
    early_stopping : bool, default=False
        Whether the models early-stop (minibatch solvers only, see
        :func:`~skpmlp._core._values.uses_early_stopping`).
    pruning : {None, "halving"}, default=None
    restore_best_weights : bool, default=False
        Whether every model keeps its own best epoch by its validation loss
        (minibatch solvers only, see :func:`~skpmlp._core._values.restores_best`).
    monitors_test_folds : bool, default=False
        ``restore_best_weights="fold"``: with ``cv``, each fold's test rows
        are the validation rows (RealMLP's ``n_cv``), not a part of its
        training rows.
    """

    classifier: bool
    cv: object = None
    validation_fraction: float = 0.1
    early_stopping: bool = False
    pruning: object = None
    restore_best_weights: bool = False
    monitors_test_folds: bool = False

    @classmethod
    def of(cls, estimator):
        """The settings of ``estimator``'s current parameters."""
        return cls(
            classifier=is_classifier(estimator), cv=getattr(estimator, "cv", None),
            validation_fraction=estimator.validation_fraction,
            early_stopping=uses_early_stopping(estimator),
            pruning=getattr(estimator, "pruning", None),
            restore_best_weights=restores_best(estimator),
            monitors_test_folds=restores_best_on_test_folds(estimator),
        )

    @property
    def monitored(self):
        """Whether training watches validation rows (early stopping, pruning,
        each model's best epoch)."""
        return self.early_stopping or self.pruning is not None or self.restore_best_weights

    def stratifies(self, y_encoded):
        """Whether splits of ``y_encoded`` are stratified: for classifiers
        with one label per row (class indices), as scikit-learn's MLP;
        multilabel and regression targets are split at random."""
        return self.classifier and np.ndim(y_encoded) == 1

    def trains_alone(self, n_models):
        """Whether a fit of ``n_models`` is one model trained as
        scikit-learn's MLP would train it: a single configuration,
        ``cv=None``, nothing monitored. It then trains on every row (nothing
        is held out, so nothing scores it)."""
        return n_models == 1 and self.cv is None and not self.monitored

    def is_lone(self, n_models):
        """Whether a fit of ``n_models`` models is scikit-learn's MLP itself:
        one model and ``cv=None`` (else it is a search, GridSearchCV's
        contract). A lone model fails, and talks, as scikit-learn's MLP."""
        return n_models == 1 and self.cv is None


def resolve_cv(settings, y_encoded, groups, n_models):
    """The settings with ``cv="auto"`` made concrete (other values as given).

    ``"auto"`` is :data:`AUTO_CV_FOLDS`-fold (``GroupKFold`` with
    ``groups``) for at most :data:`AUTO_CV_MAX_SAMPLES` rows, else None (the
    holdout); None too where k folds cannot hold every class or group (a
    class with fewer than k members, fewer than k groups) and for one model
    (nothing is chosen: scikit-learn's MLP).

    Parameters
    ----------
    settings : SplitSettings
    y_encoded : ndarray
        Class indices (single-label classifiers) or other targets.
    groups : ndarray of shape (n_samples,) or None
        Checked by :func:`check_groups`.
    n_models : int

    Returns
    -------
    SplitSettings
    """
    if not (isinstance(settings.cv, str) and settings.cv == "auto"):
        return settings
    k, n_samples = AUTO_CV_FOLDS, len(y_encoded)
    folds = n_models > 1 and k <= n_samples <= AUTO_CV_MAX_SAMPLES
    if folds and groups is not None:
        folds = len(np.unique(groups)) >= k
    elif folds and settings.stratifies(y_encoded):
        counts = np.bincount(y_encoded)
        folds = counts[counts > 0].min() >= k
    cv = None if not folds else (k if groups is None else GroupKFold(n_splits=k))
    return replace(settings, cv=cv)


def validation_split(settings, rows, y_encoded, seed):
    """Split ``rows`` into (training, validation) rows with the settings'
    ``validation_fraction`` (stratified for single-label classifiers): what early
    stopping and pruning monitor when the held-out rows are for scoring."""
    stratify = settings.stratifies(y_encoded)
    labels = y_encoded[rows] if stratify else np.zeros(len(rows), dtype=int)
    train, val = holdout_split(
        labels, settings.validation_fraction, seed, stratify=stratify,
        early_stopping=settings.early_stopping,
    )
    return rows[train], rows[val]


def _row_indices(split):
    """Row indices of one side of a split: index arrays as given, boolean
    masks turned into the indices of their True rows."""
    split = np.asarray(split)
    return np.flatnonzero(split) if split.dtype == bool else split


def check_groups(groups, X):
    """``groups`` as a 1-D array of one label per row of ``X`` (or None).

    Raises
    ------
    ValueError
        If ``groups`` is not 1-D or its length is not ``X``'s.
    """
    if groups is None:
        return None
    groups = check_array(groups, ensure_2d=False, dtype=None, input_name="groups")
    if groups.ndim != 1:
        raise ValueError(
            f"groups must be 1-D, one group label per sample; got shape {groups.shape}."
        )
    if len(groups) != X.shape[0]:
        raise ValueError(
            f"groups has {len(groups)} entries but X has {X.shape[0]} samples; give one "
            f"group label per sample."
        )
    return groups


def plan_folds(settings, X, y, y_encoded, seed, groups=None, n_models=2):
    """``[(train_rows, test_rows)]``: the holdout split (``cv=None``) or the
    splits of ``cv`` (an int gives (Stratified)KFold, as GridSearchCV).

    ``groups`` (checked by :func:`check_groups`) go to the splitter's
    ``split``, as GridSearchCV passes them (splitters that take no groups
    ignore them); with ``cv=None`` they make the holdout split group-aware
    (whole groups held out, not stratified).
    A lone model (:meth:`SplitSettings.trains_alone`) gets ``[(all_rows, None)]``: no test
    rows.

    Raises
    ------
    ValueError
        With GridSearchCV's messages when ``cv`` yields no split or not
        as many as its ``get_n_splits`` says; when a
        split has no training or no test rows; when the early-stopping
        validation part would hold fewer than 2 rows (scikit-learn MLP's
        message) or a class is too small for it (see :func:`holdout_split`).
    """
    groups = check_groups(groups, X)
    if settings.trains_alone(n_models):
        return [(np.arange(len(y)), None)]
    if settings.cv is None:
        if groups is not None:
            return [group_holdout_split(groups, settings.validation_fraction, seed)]
        stratify = settings.stratifies(y_encoded)
        labels = y_encoded if stratify else np.zeros(len(y), dtype=int)
        return [holdout_split(labels, settings.validation_fraction, seed, stratify=stratify,
                              early_stopping=settings.early_stopping)]
    splitter = check_cv(settings.cv, y, classifier=settings.classifier)
    n_splits = splitter.get_n_splits(X, y, groups)
    # a cv iterable may give boolean masks, as scikit-learn's splits accept
    splits = splitter.split(X, y, groups)
    folds = [(_row_indices(train), _row_indices(test)) for train, test in splits]
    if len(folds) != n_splits:
        raise ValueError(
            f"cv.split and cv.get_n_splits return inconsistent results. Expected {n_splits} "
            f"splits, got {len(folds)}"
        )
    if not folds:
        raise ValueError(
            "No fits were performed. Was the CV iterator empty? Were there no candidates?"
        )
    for k, (train, test) in enumerate(folds):
        if len(train) == 0 or len(test) == 0:
            raise ValueError(
                f"cv split {k} has {len(train)} training and {len(test)} test samples; "
                f"every split needs at least one of each (n_samples={len(y)})."
            )
    return folds


def training_folds(settings, folds, y_encoded, seed):
    """``[(train_rows, monitor_rows or None)]``: what the engine trains and
    monitors on in each fold.

    With ``cv=None`` the held-out validation rows are monitored (and later
    score the models). With ``cv``, a fold's test rows only score: early
    stopping and pruning watch a validation part of the fold's training rows,
    as scikit-learn's MLP does inside each fold of GridSearchCV; with
    ``restore_best_weights="fold"`` they watch the fold's test rows, and
    every training row trains, as RealMLP's ``n_cv``.
    """
    if settings.cv is None or settings.monitors_test_folds:
        return folds
    if not settings.monitored:
        return [(train, None) for train, _ in folds]
    return [validation_split(settings, np.asarray(train), y_encoded, seed) for train, _ in folds]
