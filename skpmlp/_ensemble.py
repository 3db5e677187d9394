"""Top-k ensembles of trained models: what ``best_estimator_`` is with
``ensemble_size > 1``."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils.validation import check_is_fitted

from ._compat import _fit_context


def select_members(ranks, size, *, best, usable, pruned=None):
    """Rows of a search's top-``size`` ensemble, best first.

    The members are ``best`` (``best_index_``), then the best-ranked other
    models (ties by row order) among those that trained to the end: a
    model pruned by successive halving stopped at a rung, so its score and,
    with a holdout, its weights are those of a partly trained model. Only
    when fewer than ``size`` models trained to the end is the ensemble
    filled up with the best pruned ones, with a warning. Models that are
    not ``usable`` (failed, or scored NaN) never enter.

    Parameters
    ----------
    ranks : ndarray of shape (n_models,)
        ``rank_test_<metric>`` of the search (1 is best).
    size : int
        ``ensemble_size``.
    best : int
        Row of the best model, the first member.
    usable : ndarray of bool of shape (n_models,)
        Models that may enter the ensemble.
    pruned : ndarray of bool of shape (n_models,), default=None
        Models stopped by successive halving (``cv_results_["pruned"]``);
        None when the search did not prune.

    Returns
    -------
    ndarray of int of shape (n_members,)
        At most ``size`` rows.
    """
    pruned = np.zeros(len(ranks), dtype=bool) if pruned is None else np.asarray(pruned, dtype=bool)
    others = [i for i in np.argsort(ranks, kind="stable") if usable[i] and i != best]
    survivors = [i for i in others if not pruned[i]][: size - 1]
    # pruned models only fill the places no survivor is left for
    filling = [i for i in others if pruned[i]][: size - 1 - len(survivors)]
    if filling:
        n_trained = len(survivors) + (not pruned[best])
        warnings.warn(
            f"ensemble_size={size}, but only {n_trained} usable models trained to the end; "
            f"the other {len(filling)} members are the best models pruned by successive "
            f"halving, ranked on partial training (with cv=None they are the partly trained "
            f"models themselves). Lower ensemble_size, or keep more models training "
            f"(a smaller halving_factor, a larger min_iter).",
            UserWarning,
            stacklevel=3,
        )
    return np.array([best, *survivors, *filling], dtype=int)


class _BaseMLPEnsemble(BaseEstimator):
    _parameter_constraints = {"estimators": [list, tuple]}

    def __init__(self, estimators=()):
        self.estimators = estimators

    def __sklearn_is_fitted__(self):
        return hasattr(self, "estimators_")

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
        members = [clone(e).fit(X, y, sample_weight=sample_weight) for e in self.estimators]
        self._set_members(members)
        return self

    def _set_members(self, members):
        self.estimators_ = list(members)
        self.n_features_in_ = self.estimators_[0].n_features_in_
        if hasattr(self.estimators_[0], "feature_names_in_"):
            self.feature_names_in_ = self.estimators_[0].feature_names_in_
        return self

    @classmethod
    def from_fitted(cls, members):
        """Return an ensemble of already fitted models (no training).

        Parameters
        ----------
        members : list of SingleMLPClassifier or SingleMLPRegressor
            The fitted members, best first.

        Returns
        -------
        ensemble : MLPEnsembleClassifier or MLPEnsembleRegressor
            Fitted: it predicts with ``members`` as they are.
        """
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
    out_activation_ : {"softmax", "logistic"}
        ``"logistic"`` when the members are multilabel.
    n_features_in_ : int
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
        """Mean of the members' class (or, multilabel, label) probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples every member gives probabilities of.

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
            The members' mean probability of every class (every label).
        """
        check_is_fitted(self)
        return np.mean([m.predict_proba(X) for m in self.estimators_], axis=0)

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
            The samples every member predicts.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            The members' mean prediction.
        """
        check_is_fitted(self)
        return np.mean([m.predict(X) for m in self.estimators_], axis=0)
