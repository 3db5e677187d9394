"""What differs between classification and regression, as two mixins.

Each mixin turns ``y`` into what the engine trains on and turns model
outputs back into predictions; the estimators combine one of them with
their own orchestration.
"""

import numpy as np
from scipy.special import softmax
from sklearn.utils.multiclass import check_classification_targets


class ClassifierTargetsMixin:
    """Labels to class indices (softmax cross-entropy), outputs to labels."""

    _task = "classification"

    def _out_activation(self):
        """``out_activation_``: every model ends in a softmax over the
        classes (two units for binary problems, where scikit-learn's MLP has
        one logistic unit)."""
        return "softmax"

    def _encode_targets(self, y):
        check_classification_targets(y)
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                f"but the data contains only one class: {self.classes_[0]!r}."
            )
        return y_encoded, len(self.classes_)

    def _labels_from_outputs(self, logits):
        return self.classes_[np.argmax(logits, axis=1)]

    @staticmethod
    def _proba_from_outputs(logits):
        return softmax(logits, axis=1)


class RegressorTargetsMixin:
    """Targets as a 2-D float array (squared error), outputs to predictions."""

    _task = "regression"

    def _out_activation(self):
        """``out_activation_``: "exp" with ``loss="poisson"`` (log link), else
        "identity", as scikit-learn's MLPRegressor."""
        return "exp" if self.loss == "poisson" else "identity"

    def _encode_targets(self, y):
        y = np.asarray(y, dtype=np.float64)
        if self.loss == "poisson" and np.any(y < 0):
            raise ValueError(
                f"loss='poisson' needs non-negative targets; y has {int(np.sum(y < 0))} "
                f"negative value(s), the smallest {y.min()!r}."
            )
        y2d = y.reshape(len(y), -1)
        return y2d, y2d.shape[1]

    @staticmethod
    def _labels_from_outputs(outputs):
        # as scikit-learn's MLPRegressor: one target gives a 1-D prediction
        return outputs[:, 0] if outputs.shape[1] == 1 else outputs
