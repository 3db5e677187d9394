"""ParallelMLPClassifier: a whole MLP search space, trained fused."""

from sklearn.base import ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._base import BaseParallelMLP, _refitted
from ._docstrings import ATTRIBUTES, PARAMETERS
from ._ensemble import MLPEnsembleClassifier
from ._single import SingleMLPClassifier
from ._targets import ClassifierTargetsMixin


class ParallelMLPClassifier(ClassifierTargetsMixin, ClassifierMixin, BaseParallelMLP):
    __doc__ = (
        """Train a whole search space of MLP classifiers at once.

    Every combination of ``hidden_layer_sizes`` x ``activation`` x
    ``learning_rate_init`` x ``alpha``, times ``n_repeats``, is trained as
    one fused PyTorch network on CPU or GPU; each model stays independent
    (trained alone, the same model gets the same weights up to floating-point
    rounding; tested in float64). The best model on
    held-out validation data predicts.

    Parameters
    ----------"""
        + PARAMETERS.replace("<default_score>", "accuracy")
        + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels. Only with ``refit``, as GridSearchCV."""
        + ATTRIBUTES.replace("<single>", "SingleMLPClassifier").replace("<default_score>", "accuracy")
        + """
    See Also
    --------
    ParallelMLPRegressor : the same search for regression.
    SingleMLPClassifier : one standalone model.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(8,), (16,)], ("relu", "tanh"),
    ...                                learning_rate_init=0.01, max_iter=50,
    ...                                random_state=0).fit(X, y)
    >>> search.n_models_
    4
    >>> search.predict(X[:3]).shape
    (3,)
    """
    )

    _single_class = SingleMLPClassifier
    _ensemble_class = MLPEnsembleClassifier

    @available_if(_refitted)
    def predict_proba(self, X):
        """Class probabilities of the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_refitted)
    def predict_log_proba(self, X):
        """Log of the class probabilities of the best model (or ensemble), as
        ``MLPClassifier.predict_log_proba``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_log_proba(X)
