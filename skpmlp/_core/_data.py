"""A fit's input data, validated: what every estimator's ``fit`` and ``predict`` start with.

The fused engine is dense: sparse input is accepted (:data:`SPARSE`) and
densified (:func:`dense`). :func:`validated_data` is the validation a
search and a standalone model share.
"""

import numpy as np

from ._compat import check_sample_weight, validate_data

#: The sparse formats ``fit`` and ``predict`` accept (densified).
SPARSE = ["csr", "csc", "coo"]


class SparseInputMixin:
    """Estimators whose ``fit`` and ``predict`` take sparse input (densified)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def dense(X):
    """Sparse input is accepted and densified, as the fused engine is dense."""
    return X.toarray() if hasattr(X, "toarray") else X


def validated_data(estimator, X, y, sample_weight):
    """``(X, y, y_encoded, sample_weight, n_outputs, task)`` validated.

    Sets ``n_features_in_`` (and ``feature_names_in_``, and with the target
    encoding ``classes_`` and ``out_activation_``) on ``estimator``, as
    scikit-learn's validation does.
    """
    X, y = validate_data(
        estimator, X, y, accept_sparse=SPARSE, dtype=(np.float64, np.float32),
        # classifiers take multilabel indicator matrices, as MLPClassifier
        multi_output=True, y_numeric=estimator._task == "regression",
    )
    X = dense(X)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X, dtype=np.float64,
                                            ensure_non_negative=True)
    y, y_encoded, n_outputs, task = estimator._encode_targets(y)
    return X, y, y_encoded, sample_weight, n_outputs, task
