"""Top-k ensembles of trained models: what ``best_estimator_`` is with
``ensemble_size > 1``."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted


class _BaseMLPEnsemble(BaseEstimator):
    def __init__(self, estimators=()):
        self.estimators = estimators

    def __sklearn_is_fitted__(self):
        return hasattr(self, "estimators_")

    def fit(self, X, y, sample_weight=None):
        """Retrain every member alone on ``(X, y)`` (each from its own
        initial weights, as the member's own ``fit`` does).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        if not self.estimators:
            raise ValueError("estimators must hold at least one model.")
        self._set_members([clone(e).fit(X, y, sample_weight=sample_weight) for e in self.estimators])
        return self

    def _set_members(self, members):
        self.estimators_ = list(members)
        self.n_features_in_ = self.estimators_[0].n_features_in_
        if hasattr(self.estimators_[0], "feature_names_in_"):
            self.feature_names_in_ = self.estimators_[0].feature_names_in_
        return self

    @classmethod
    def from_fitted(cls, members):
        """An ensemble of already fitted models (no training)."""
        return cls(estimators=list(members))._set_members(members)


class MLPEnsembleClassifier(ClassifierMixin, _BaseMLPEnsemble):
    """Average of the class probabilities of several fitted MLP classifiers.

    ``best_estimator_`` of a search with ``ensemble_size > 1``: its members
    are the top-ranked models. The members were chosen by their validation
    scores, so the ensemble's score on that same validation data is
    optimistic; judge it on data the search never saw.

    Parameters
    ----------
    estimators : list of SingleMLPClassifier
        The members.

    Attributes
    ----------
    estimators_ : list of SingleMLPClassifier
        The fitted members.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    """

    @property
    def classes_(self):
        check_is_fitted(self)
        return self.estimators_[0].classes_

    def predict_proba(self, X):
        """Mean of the members' class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return np.mean([m.predict_proba(X) for m in self.estimators_], axis=0)

    def predict(self, X):
        """The class of highest mean probability.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class MLPEnsembleRegressor(RegressorMixin, _BaseMLPEnsemble):
    """Average of the predictions of several fitted MLP regressors.

    ``best_estimator_`` of a search with ``ensemble_size > 1``; as for
    :class:`MLPEnsembleClassifier`, its validation score is optimistic.

    Parameters
    ----------
    estimators : list of SingleMLPRegressor
        The members.

    Attributes
    ----------
    estimators_ : list of SingleMLPRegressor
        The fitted members.
    n_features_in_ : int
    """

    def predict(self, X):
        """Mean of the members' predictions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        return np.mean([m.predict(X) for m in self.estimators_], axis=0)
