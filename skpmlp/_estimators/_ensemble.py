"""Weighted averages of trained models: what ``best_estimator_`` is with an ensemble.

:class:`MLPEnsembleClassifier` averages its members' probabilities,
:class:`MLPEnsembleRegressor` their predictions, weighted by ``weights``
(equal by default). A member may itself be an ensemble: with ``cv``, a
configuration's fold ensemble (its k fold models, equally weighted).
"""

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from .._core._attributes import CONFIGURATION_ATTRIBUTES, PER_MODEL_ATTRIBUTES
from .._core._compat import _fit_context
from . import _export


def _checked_weights(weights, n_members):
    """``weights`` as a float array of ``n_members`` entries summing to 1
    (equal for None).

    Raises
    ------
    ValueError
        If the weights are not ``n_members`` finite non-negative numbers
        with a positive sum.
    """
    if weights is None:
        return np.full(n_members, 1.0 / n_members)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_members,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(
            f"weights must be {n_members} finite non-negative numbers (one per estimator) "
            f"with a positive sum; got {weights!r}."
        )
    return w / w.sum()


class _BaseMLPEnsemble(BaseEstimator):
    _parameter_constraints = {"estimators": [list, tuple], "weights": ["array-like", None]}

    def __init__(self, estimators=(), weights=None):
        self.estimators = estimators
        self.weights = weights

    def __sklearn_is_fitted__(self):
        return hasattr(self, "estimators_")

    def __getattr__(self, name):
        # only reached for attributes the ensemble does not have: a model's
        # own (coefs_, loss_curve_, ...) says where to read them
        one_model = PER_MODEL_ATTRIBUTES + CONFIGURATION_ATTRIBUTES
        if name in one_model and "estimators_" in vars(self):
            raise AttributeError(
                f"{type(self).__name__} has no {name}: it averages {len(self.estimators_)} "
                f"models (weights_), each with its own. Read estimators_[i].{name} for member "
                f"i (a member that is itself an ensemble, e.g. a configuration's fold models, "
                f"has estimators_ of its own), or convert the whole ensemble with to_sklearn() "
                f"or to_torch()."
            )
        # anything else fails as without this method: a descriptor that
        # declined (available_if's predict) raises its own error again
        return object.__getattribute__(self, name)

    @property
    def n_outputs_(self):
        """Output units of every member: classes (or labels), or targets."""
        check_is_fitted(self)
        return self.estimators_[0].n_outputs_

    # the members' own fit validates their parameters
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Retrain every member alone on ``(X, y)``.

        Each member starts from its own initial weights, as its own ``fit`` does.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples, passed to every member's ``fit``.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Class labels or regression targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, passed to every member's ``fit``.

        Returns
        -------
        self : object
            The ensemble, its members refitted.
        """
        if not self.estimators:
            raise ValueError("estimators must hold at least one model.")
        _checked_weights(self.weights, len(self.estimators))
        members = [clone(e).fit(X, y, sample_weight=sample_weight) for e in self.estimators]
        self._set_members(members)
        return self

    def _set_members(self, members):
        self.estimators_ = list(members)
        self.weights_ = _checked_weights(self.weights, len(self.estimators_))
        self.n_features_in_ = self.estimators_[0].n_features_in_
        if hasattr(self.estimators_[0], "feature_names_in_"):
            self.feature_names_in_ = self.estimators_[0].feature_names_in_
        return self

    def _average(self, method, X):
        """The ``weights_``-weighted mean of every member's ``method(X)``."""
        check_is_fitted(self)
        outputs = np.asarray([getattr(m, method)(X) for m in self.estimators_])
        weights = self._member_weights().astype(outputs.dtype, copy=False)
        return np.tensordot(weights, outputs, axes=1)

    def _member_weights(self):
        """``weights_``: an ensemble saved before it had weights weighs its
        members equally."""
        weights = vars(self).get("weights_")
        n = len(self.estimators_)
        return np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)

    @classmethod
    def from_fitted(cls, members, weights=None):
        """Return an ensemble of already fitted models (no training).

        Parameters
        ----------
        members : list of fitted estimators
            The fitted members, best first: single models, or ensembles
            of them.
        weights : array-like of shape (n_members,), default=None
            Their weights (equal for None).

        Returns
        -------
        ensemble : MLPEnsembleClassifier or MLPEnsembleRegressor
            Fitted: it predicts with ``members`` as they are.
        """
        if weights is not None:
            weights = np.asarray(weights, dtype=float)
        return cls(estimators=list(members), weights=weights)._set_members(members)

    def to_sklearn(self):
        """Return this ensemble as a fitted scikit-learn voting estimator predicting the same.

        A soft-voting :class:`~sklearn.ensemble.VotingClassifier` (or a
        :class:`~sklearn.ensemble.VotingRegressor`) whose ``estimators_``
        are the members' own ``to_sklearn()``, in order (a member that is
        an ensemble becomes a voting estimator of its own), and whose
        ``weights`` are ``weights_``.

        Returns
        -------
        sklearn.ensemble.VotingClassifier or VotingRegressor
            Fitted: ``predict``, ``predict_proba`` and ``score`` give this
            ensemble's results (up to floating-point rounding).

        Raises
        ------
        ValueError
            For multilabel members or several regression targets, which
            scikit-learn's voting estimators do not support, and for a
            member whose activation scikit-learn's MLP does not have.
        """
        return _export.ensemble_to_sklearn(self)

    def to_torch(self, dtype=torch.float32):
        """Return this ensemble as one ``torch.nn.Module``.

        Parameters
        ----------
        dtype : torch.dtype, default=torch.float32
            Dtype of the module's parameters.

        Returns
        -------
        torch.nn.Module
            Whose ``forward(x)`` is the ``weights_``-weighted mean of the
            members' outputs in prediction space, of shape
            ``(n_samples, n_outputs)``: class (or label) probabilities for
            a classifier ensemble (not logits, unlike a single model's
            ``to_torch()``), predictions for a regressor ensemble. Each
            member (``.members[i]``) is its network followed by its output
            activation, or a nested module of the same kind; the weights
            are its ``weights`` buffer.
        """
        return _export.ensemble_to_torch(self, dtype=dtype)


class MLPEnsembleClassifier(ClassifierMixin, _BaseMLPEnsemble):
    """Weighted average of the class probabilities of several fitted MLP classifiers.

    ``best_estimator_`` of a search with an ensemble (``ensemble``,
    ``ensemble_size``): the top-ranked models, a configuration's fold
    models, or a greedy ensemble (whose members may be fold ensembles).
    The members were chosen by their validation scores, so the ensemble's
    score on that same validation data is optimistic; judge it on data the
    search never saw.

    Parameters
    ----------
    estimators : list of SingleMLPClassifier or MLPEnsembleClassifier
        The members.
    weights : array-like of shape (n_estimators,), default=None
        The members' weights (non-negative, normalised to sum to 1); None
        weighs them equally.

    Attributes
    ----------
    estimators_ : list of SingleMLPClassifier or MLPEnsembleClassifier
        The fitted members.
    weights_ : ndarray of shape (n_estimators,)
        Their weights, summing to 1.
    classes_ : ndarray of shape (n_classes,)
    out_activation_ : {"softmax", "logistic"}
        ``"logistic"`` when the members are multilabel.
    n_outputs_ : int
        Output units of every member.
    n_features_in_ : int

    Notes
    -----
    One model's attributes (``coefs_``, ``loss_curve_``, ``n_iter_``, ...)
    are the members'; reading them on the ensemble raises an
    ``AttributeError`` saying so. :meth:`to_sklearn` and :meth:`to_torch`
    convert the whole ensemble.
    """

    @property
    def classes_(self):
        check_is_fitted(self)
        return self.estimators_[0].classes_

    @property
    def out_activation_(self):
        """``"softmax"`` (one class per row) or ``"logistic"`` (multilabel),
        as the members'."""
        check_is_fitted(self)
        return getattr(self.estimators_[0], "out_activation_", "softmax")

    def predict_proba(self, X):
        """Weighted mean of the members' class (or, multilabel, label) probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples every member gives probabilities of.

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
            The members' mean probability of every class (every label).
        """
        return self._average("predict_proba", X)

    def predict_log_proba(self, X):
        """Log of the mean class probabilities.

        Minus infinity where a class has probability 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples every member gives probabilities of, averaged.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log of the members' mean probability of every class.
        """
        check_is_fitted(self)
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """Predict the class of highest mean probability.

        For multilabel members, every label whose mean probability exceeds 0.5.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples every member predicts a class for.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_labels)
            Class labels, or the multilabel indicator matrix.
        """
        proba = self.predict_proba(X)
        if self.out_activation_ == "logistic":
            return (proba > 0.5).astype(int)
        return self.classes_[np.argmax(proba, axis=1)]


class MLPEnsembleRegressor(RegressorMixin, _BaseMLPEnsemble):
    """Weighted average of the predictions of several fitted MLP regressors.

    ``best_estimator_`` of a search with an ensemble (``ensemble``,
    ``ensemble_size``); as for :class:`MLPEnsembleClassifier`, its
    validation score is optimistic.

    Parameters
    ----------
    estimators : list of SingleMLPRegressor or MLPEnsembleRegressor
        The members.
    weights : array-like of shape (n_estimators,), default=None
        The members' weights (non-negative, normalised to sum to 1); None
        weighs them equally.

    Attributes
    ----------
    estimators_ : list of SingleMLPRegressor or MLPEnsembleRegressor
        The fitted members.
    weights_ : ndarray of shape (n_estimators,)
        Their weights, summing to 1.
    n_outputs_ : int
        Output units of every member.
    n_features_in_ : int

    Notes
    -----
    As for :class:`MLPEnsembleClassifier`, one model's attributes are the
    members'; :meth:`to_sklearn` and :meth:`to_torch` convert the whole
    ensemble.
    """

    def predict(self, X):
        """Weighted mean of the members' predictions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples every member predicts.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            The members' mean prediction.
        """
        return self._average("predict", X)
