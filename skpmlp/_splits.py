"""Train / validation splits of rows (pure numpy and scikit-learn).

They depend only on the seed and the labels (and the groups, when given),
never on the models, so a model's split is the same in any population and
when it trains alone.
"""

import math
import warnings

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import GroupShuffleSplit, train_test_split


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
    if early_stopping:
        # as scikit-learn's MLP: split first (a class too small to stratify
        # raises train_test_split's own error), then check the size
        train, val = train_test_split(np.arange(n), test_size=n_val, random_state=seed, stratify=strata)
        if len(val) < 2:
            raise ValueError(VALIDATION_TOO_SMALL)
        return train, val
    return train_test_split(np.arange(n), test_size=n_val, random_state=seed, stratify=strata)


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


def validation_split(estimator, rows, y_encoded, seed):
    """Split ``rows`` into (training, validation) rows with the estimator's
    ``validation_fraction`` (stratified for single-label classifiers): what early
    stopping and pruning monitor when the held-out rows are for scoring."""
    stratify = stratifies(estimator, y_encoded)
    labels = y_encoded[rows] if stratify else np.zeros(len(rows), dtype=int)
    train, val = holdout_split(
        labels, estimator.validation_fraction, seed, stratify=stratify,
        early_stopping=estimator.early_stopping,
    )
    return rows[train], rows[val]


def stratifies(estimator, y_encoded):
    """Whether splits of ``y_encoded`` are stratified: for classifiers with
    one label per row (class indices), as scikit-learn's MLP; multilabel
    and regression targets are split at random."""
    return is_classifier(estimator) and np.ndim(y_encoded) == 1
