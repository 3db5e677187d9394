"""ParallelMLPClassifier: a whole MLP search space, trained fused."""

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._core._params import parameter_constraints, parameter_entries, store_params
from .._core._targets import ClassifierTargetsMixin
from ._base import BaseParallelMLP, SearchScoreMixin, _needs_refit
from ._docstrings import class_docstring, search_attributes
from ._ensemble import MLPEnsembleClassifier
from ._single import SingleMLPClassifier


class ParallelMLPClassifier(ClassifierTargetsMixin, SearchScoreMixin, ClassifierMixin,
                            BaseParallelMLP):
    __doc__ = class_docstring(
        "Train a whole search space of MLP classifiers at once.",
        """    Every combination of ``hidden_layer_sizes`` x ``activation`` x
    ``learning_rate_init`` x ``alpha`` (and of any other searchable
    parameter given a list: the optimizer's settings and ``batch_size``, see
    ``param_grid``), or ``n_models`` configurations drawn from them (any of
    them a distribution, as in RandomizedSearchCV), times ``n_repeats``, is
    trained as one fused PyTorch network on CPU or GPU; each model stays
    independent (trained alone, the same model gets the same weights up to
    floating-point rounding; tested in float64). The best model on held-out
    validation data predicts.""",
        parameters=parameter_entries("search", "classifier"),
        attributes=search_attributes("classifier", "SingleMLPClassifier"),
        see_also=[("ParallelMLPRegressor", "The same search for regression."),
                  ("SingleMLPClassifier", "One standalone model.")],
        examples="""\
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(8,), (16,)], ("relu", "tanh"),
    ...                                learning_rate_init=0.01, max_iter=50,
    ...                                random_state=0).fit(X, y)
    >>> search.n_models_  # 2 x 2, on each of the 2 default input transforms
    8
    >>> search.predict(X[:3]).shape
    (3,)""",
    )

    _single_class = SingleMLPClassifier
    _ensemble_class = MLPEnsembleClassifier
    _parameter_constraints = parameter_constraints("search", "classifier")

    def __init__(
        self,
        hidden_layer_sizes=None,
        activation=("relu", "tanh"),
        *,
        solver="adam",
        learning_rate_init=(0.003, 0.01),
        alpha=0.0001,
        class_weight=None,
        batch_size="auto",
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        n_repeats=1,
        n_models=None,
        param_grid=None,
        early_stopping=False,
        restore_best_weights=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        n_iter_no_change=10,
        tol=0.0001,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.95,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        amsgrad=False,
        warmup_fraction=0.0,
        label_smoothing=0.0,
        diagonal_scaling=False,
        dropout="auto",
        input_transform=("robust-smooth-clip", "quantile"),
        pruning=None,
        halving_factor=3,
        min_iter=5,
        refill=None,
        max_models=None,
        cv="auto",
        scoring=None,
        refit=True,
        holdout_refit=True,
        selection="auto",
        tie_breaker="loss",
        ensemble="auto",
        ensemble_size=None,
        error_score=np.nan,
        return_train_score=False,
        dtype="float32",
        device="auto",
        n_jobs=None,
        max_memory=None,
        max_time=None,
        checkpoint=None,
        checkpoint_every=60.0,
        random_state=None,
        verbose=0,
    ):
        store_params(self, locals())

    @available_if(_needs_refit("predict_proba"))
    def predict_proba(self, X):
        """Predict class probabilities with the best model (or ensemble).

        For a multilabel ``y``, each label's probability.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples the best model (or ensemble) gives probabilities of.

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
            The probability of every class (every label), rows in ``X``'s order.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_needs_refit("predict_log_proba"))
    def predict_log_proba(self, X):
        """Predict the log of the class probabilities with the best model (or ensemble).

        As ``MLPClassifier.predict_log_proba``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples the best model (or ensemble) gives log-probabilities of.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log-probability of every class.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_log_proba(X)
