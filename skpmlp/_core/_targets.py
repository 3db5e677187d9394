"""What differs between classification and regression, as two mixins.

Each mixin turns ``y`` into what the engine trains on and turns model
outputs back into predictions; the estimators combine one of them with
their own orchestration.
"""

import numpy as np
from scipy.special import expit, log_softmax, softmax
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import column_or_1d

from ._target_scaling import fit_target_scaling


def _warm(estimator):
    """Whether ``estimator``'s fit starts from its previous fit's weights."""
    return bool(getattr(estimator, "warm_start", False)) and "coefs_" in vars(estimator)


def _check_warm_classes(previous, classes):
    """A warm start needs the classes of the previous fit (scikit-learn's
    message)."""
    if previous is not None and not np.array_equal(previous, classes):
        raise ValueError(
            "warm_start can only be used where `y` has the same classes as in the previous "
            f"call to fit. Previously got {previous}, `y` has {classes}"
        )


def _check_label_types(y):
    """Refuse labels that cannot be sorted, with a message naming them:
    missing ones (None, NaN in an object array) and a mix of strings and
    numbers (where scikit-learn's own checks fail inside numpy's sort).

    Raises
    ------
    ValueError
    """
    y = np.asarray(y)
    if y.dtype != object:
        return
    flat = y.ravel()
    missing = np.flatnonzero([v is None or (isinstance(v, float) and v != v) for v in flat])
    if len(missing):
        rows = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
        raise ValueError(
            f"y has {len(missing)} missing label(s) (None or NaN) at position(s) {rows}: "
            f"every row needs a class label. Drop those rows, or give them a label."
        )
    kinds = {"string" if isinstance(v, (str, np.str_)) else "number" for v in flat}
    if len(kinds) > 1:
        example = next(v for v in flat if not isinstance(v, (str, np.str_)))
        raise ValueError(
            f"y mixes string and number labels (e.g. {flat[0]!r} and {example!r}): labels "
            f"must all be strings or all numbers. Convert them, e.g. y.astype(str)."
        )


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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a 2-D indicator y is multilabel classification, as MLPClassifier
        tags.classifier_tags.multi_label = True
        return tags

    def _out_activation(self):
        """``out_activation_`` of the models: a softmax over the classes (two
        units for binary problems, where scikit-learn's MLP has one logistic
        unit), or one logistic unit per label for a multilabel ``y``, as
        :meth:`_encode_targets` found."""
        # models saved before multilabel support have no out_activation_
        return getattr(self, "out_activation_", "softmax")

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
            For targets that are not classes (continuous) or for several
            multiclass outputs.
        """
        if y.ndim == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        _check_label_types(y)
        check_classification_targets(y)
        kind = type_of_target(y)
        previous = vars(self).get("classes_") if _warm(self) else None
        if kind == "multilabel-indicator":
            # as scikit-learn's LabelBinarizer: the labels are the columns
            _check_warm_classes(previous, np.arange(y.shape[1]))
            self.classes_ = np.arange(y.shape[1])
            self.out_activation_ = "logistic"
            return y, np.asarray(y, dtype=np.float64), y.shape[1], "multilabel"
        if y.ndim == 2:
            raise ValueError(
                f"{type(self).__name__} takes 1-D class labels or a multilabel indicator "
                f"matrix (n_samples, n_labels) of 0/1 values; got targets of type {kind!r} "
                f"with shape {y.shape}. Several multiclass outputs are not supported."
            )
        classes, y_encoded = np.unique(y, return_inverse=True)
        _check_warm_classes(previous, classes)
        # a single class trains too, as MLPClassifier: a softmax over one
        # unit predicts it with probability 1 (the loss is the L2 term alone)
        self.classes_ = classes
        self.out_activation_ = "softmax"
        return y, y_encoded, len(self.classes_), "classification"

    def _training_weight(self, y, sample_weight):
        """Row weights the models train with: ``sample_weight`` times the
        class weights of ``class_weight`` for ``y`` (computed on ``y`` by
        :func:`sklearn.utils.class_weight.compute_sample_weight`, so
        "balanced" uses the class frequencies of the ``y`` given to fit).

        Returns
        -------
        ndarray of shape (n_samples,) or None
            None when there is neither.
        """
        if self.class_weight is None:
            return sample_weight
        weights = compute_sample_weight(self.class_weight, y)
        return weights if sample_weight is None else sample_weight * weights

    @staticmethod
    def _target_scaling(y_encoded, sample_weight=None):
        """Classifiers train on their labels as they are: None."""
        return None

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
        # multilabel: the log of predict_proba, as MLPClassifier (so a label
        # whose probability rounds to 1 has log-probability 0, and ties where
        # predict_proba ties); one label per row: the exact log-softmax,
        # finite where the probabilities underflow
        if self._multilabel():
            return np.log(self._proba_from_outputs(logits))
        return log_softmax(logits, axis=1)


class RegressorTargetsMixin:
    """Targets as a 2-D float array (squared error), outputs to predictions."""

    _task = "regression"

    def _out_activation(self):
        """``out_activation_``: "exp" with ``loss="poisson"`` (log link), else
        "identity", as scikit-learn's MLPRegressor."""
        return "exp" if self.loss == "poisson" else "identity"

    def _encode_targets(self, y):
        """``(y, y_encoded, n_outputs, task)``: ``y`` as a 2-D float array."""
        y = np.asarray(y, dtype=np.float64)
        if self.loss == "poisson" and np.any(y < 0):
            raise ValueError(
                f"loss='poisson' needs non-negative targets; y has {int(np.sum(y < 0))} "
                f"negative value(s), the smallest {y.min()!r}."
            )
        y2d = y.reshape(len(y), -1)
        return y, y2d, y2d.shape[1], "regression"

    def _target_scaling(self, y_encoded, sample_weight=None):
        """The :class:`~skpmlp._core._target_scaling.TargetScaling` of
        ``target_transform`` fitted on the 2-D targets ``y_encoded`` (the
        rows a fit trains on, weighted by ``sample_weight``), or None for
        ``"none"``."""
        # models saved before target_transform existed trained on y as given
        return fit_target_scaling(getattr(self, "target_transform", "none"), y_encoded,
                                  log_link=self.loss == "poisson", sample_weight=sample_weight)

    @staticmethod
    def _training_weight(y, sample_weight):
        """Regressors train with ``sample_weight`` as given."""
        return sample_weight

    @staticmethod
    def _labels_from_outputs(outputs):
        # as scikit-learn's MLPRegressor: one target gives a 1-D prediction
        return outputs[:, 0] if outputs.shape[1] == 1 else outputs
