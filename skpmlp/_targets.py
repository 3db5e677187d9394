"""What differs between classification and regression, as two mixins.

Each mixin turns ``y`` into what the engine trains on and turns model
outputs back into predictions; the estimators combine one of them with
their own orchestration.
"""

import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import column_or_1d


class ClassifierTargetsMixin:
    """Labels to class indices (softmax cross-entropy) or a multilabel
    indicator matrix to 0/1 floats (one sigmoid per label), and outputs back
    to labels.

    ``out_activation_`` (set by :meth:`_encode_targets`) says which:
    ``"softmax"`` for binary and multiclass targets, ``"logistic"`` for
    multilabel ones, as scikit-learn's ``MLPClassifier`` names its output
    activation.
    """

    _task = "classification"

    def _encode_targets(self, y):
        """Check ``y`` (validated with ``multi_output=True``) and encode it.

        Returns
        -------
        y : ndarray
            ``y`` itself, a column vector raveled (with scikit-learn's
            DataConversionWarning).
        y_encoded : ndarray of shape (n_samples,) or (n_samples, n_labels)
            Class indices, or the indicator matrix as 0/1 floats.
        n_outputs : int
            Number of classes or labels.
        task : {"classification", "multilabel"}
            The engine's task.

        Raises
        ------
        ValueError
            For targets that are not classes (continuous), for several
            multiclass outputs, or for a single class.
        """
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        kind = type_of_target(y)
        if kind == "multilabel-indicator":
            # as scikit-learn's LabelBinarizer: the labels are the columns
            self.classes_ = np.arange(y.shape[1])
            self.out_activation_ = "logistic"
            return y, np.asarray(y, dtype=np.float64), y.shape[1], "multilabel"
        if y.ndim == 2:
            raise ValueError(
                f"{type(self).__name__} takes 1-D class labels or a multilabel indicator "
                f"matrix (n_samples, n_labels) of 0/1 values; got targets of type {kind!r} "
                f"with shape {y.shape}. Several multiclass outputs are not supported."
            )
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                f"but the data contains only one class: {self.classes_[0]!r}."
            )
        self.out_activation_ = "softmax"
        return y, y_encoded, len(self.classes_), "classification"

    def _multilabel(self):
        # models saved before multilabel support have no out_activation_
        return getattr(self, "out_activation_", "softmax") == "logistic"

    def _labels_from_outputs(self, logits):
        if self._multilabel():
            # a label is predicted where its probability exceeds 0.5
            return (logits > 0).astype(int)
        return self.classes_[np.argmax(logits, axis=1)]

    def _proba_from_outputs(self, logits):
        return expit(logits) if self._multilabel() else softmax(logits, axis=1)

    def _log_proba_from_outputs(self, logits):
        return log_expit(logits) if self._multilabel() else log_softmax(logits, axis=1)


class RegressorTargetsMixin:
    """Targets as a 2-D float array (squared error), outputs to predictions."""

    _task = "regression"

    def _encode_targets(self, y):
        """``(y, y_encoded, n_outputs, task)``: ``y`` as a 2-D float array."""
        y2d = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        return y, y2d, y2d.shape[1], "regression"

    @staticmethod
    def _labels_from_outputs(outputs):
        # as scikit-learn's MLPRegressor: one target gives a 1-D prediction
        return outputs[:, 0] if outputs.shape[1] == 1 else outputs
