"""What ParallelMLPClassifier and ParallelMLPRegressor share: the search.

The estimator only orchestrates: validate, expand the hyperparameters into a
population, hold out validation data, train the population fused, score it,
build ``cv_results_`` and pick the best model. The numerics live in the
engine, the table logic in ``_population`` / ``_scoring`` / ``_results``.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._compat import _fit_context
from ._engine import ACTIVATION_NAMES, train_population
from ._params import TRAINING_CONSTRAINTS, TRAINING_PARAMS
from ._search import run_search


def _refitted(search):
    """``available_if`` check: prediction needs ``refit=True``, as GridSearchCV."""
    if not search.refit:
        raise AttributeError(
            f"This {type(search).__name__} instance was initialized with refit=False; "
            f"prediction is available only with refit=True. Use export_model(i) to get "
            f"any trained model."
        )
    return True


class BaseParallelMLP(BaseEstimator):
    """Base class of the population estimators; see ParallelMLPClassifier."""

    _parameter_constraints = {
        "hidden_layer_sizes": [None, Interval(Integral, 1, None, closed="left"), tuple, list],
        "activation": [StrOptions(set(ACTIVATION_NAMES)), tuple, list],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither"), tuple, list],
        "alpha": [Interval(Real, 0, None, closed="left"), tuple, list],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "cv": ["cv_object", None],
        "scoring": [StrOptions(set(get_scorer_names())), callable, list, tuple, set, dict, None],
        "refit": ["boolean", str],
        "error_score": [StrOptions({"raise"}), Real],
        "return_train_score": ["boolean"],
        "verbose": ["verbose"],
        **TRAINING_CONSTRAINTS,
    }

    def __init__(
        self,
        hidden_layer_sizes=None,
        activation=("relu", "tanh", "logistic"),
        *,
        solver="adam",
        learning_rate_init=(0.001, 0.003, 0.01),
        alpha=0.0001,
        batch_size="auto",
        max_iter=200,
        n_repeats=1,
        early_stopping=False,
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-4,
        momentum=0.9,
        nesterovs_momentum=True,
        cv=None,
        scoring=None,
        refit=True,
        error_score=np.nan,
        return_train_score=False,
        dtype="float32",
        device="auto",
        random_state=None,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.learning_rate_init = learning_rate_init
        self.alpha = alpha
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.n_repeats = n_repeats
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.dtype = dtype
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __sklearn_is_fitted__(self):
        return hasattr(self, "cv_results_")

    # ------------------------------------------------------------------ fit
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train every model of the search space, on every fold, as one fused network.

        With ``cv=None``, ``validation_fraction`` of the rows (stratified for
        classifiers) is held out; every model trains on the rest and is
        scored on it. The best model is the trained one itself (no
        retraining), so its validation score describes it honestly. With
        ``cv``, every model trains once per fold inside the same fused run
        and is scored on each fold's test rows; with ``refit`` the best
        configuration is then retrained on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is densified.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in every model's loss (and L2 divisor, as
            scikit-learn's MLP) and in the scorers.

        Returns
        -------
        self : object
        """
        self._check_refit()
        run = run_search(self, X, y, sample_weight)
        self._store_search(run)
        if self.refit:
            self._refit_best(run)
        return self

    def _check_refit(self):
        multimetric = isinstance(self.scoring, (list, tuple, set, dict))
        if multimetric and self.refit is True:
            raise ValueError(
                "For multi-metric scoring, refit must be the name of the scorer that picks "
                "the best model (a key of scoring), or False; True was passed."
            )
        if isinstance(self.refit, str):
            names = self.scoring.keys() if isinstance(self.scoring, dict) else self.scoring
            if not multimetric or self.refit not in names:
                raise ValueError(
                    f"refit={self.refit!r} must name one of the scorers given in scoring; "
                    f"scoring={self.scoring!r}."
                )

    def _store_search(self, run):
        result, n_models = run.result, run.population.n_models
        not_converged = int(np.sum(~result.converged & ~result.diverged))
        if not_converged:
            warnings.warn(
                f"{not_converged} of {result.converged.size} trained models reached "
                f"max_iter={self.max_iter} without converging; consider increasing max_iter.",
                ConvergenceWarning,
            )
        self.cv_results_ = run.cv_results
        self.n_models_ = n_models
        self.n_splits_ = len(run.folds)
        self.multimetric_ = run.multimetric
        scorers = {n: (s if s is not None else check_scoring(self)) for n, s in run.scorers.items()}
        self.scorer_ = scorers if run.multimetric else scorers["score"]
        metric = self.refit if isinstance(self.refit, str) else "score"
        if not run.multimetric or isinstance(self.refit, str):
            ranks = self.cv_results_[f"rank_test_{metric}"]
            means = self.cv_results_[f"mean_test_{metric}"]
            if np.isnan(means).all():
                raise ValueError(
                    f"All {n_models} models failed (diverged or could not be scored); try "
                    f"smaller learning rates or scale the input features."
                )
            self.best_index_ = int(np.argmin(ranks))
            self.best_params_ = self.cv_results_["params"][self.best_index_]
            self.best_score_ = float(means[self.best_index_])
        holdout = self.cv is None
        # curves: (n_models, n_epochs) with a holdout, (n_models, n_splits, n_epochs) with cv
        squeeze = (lambda a: a[:, 0]) if holdout else (lambda a: a)
        self.loss_curves_ = squeeze(result.loss_curves)
        self.validation_scores_ = None if result.validation_scores is None else squeeze(result.validation_scores)
        self.n_iter_ = squeeze(result.n_iter)
        self._coefs, self._intercepts = result.coefs, result.intercepts
        self._refitted = {}
        self._seed = run.seed

    def _refit_best(self, run):
        """``best_estimator_``: with a holdout, the trained best model itself;
        with cv, the best configuration retrained on all the data (fused)."""
        start = time.perf_counter()
        if self.cv is not None:
            best = self.best_index_
            n = run.X.shape[0]
            refit = train_population(
                run.spec.subset([best]), run.config, run.X, run.y_encoded,
                [(np.arange(n), None)], sample_weight=run.sample_weight, monitor=False,
            )
            self._refitted[best] = (
                refit.coefs[0][0], refit.intercepts[0][0], int(refit.n_iter[0, 0]),
                refit.loss_curves[0, 0],
            )
        self.best_estimator_ = self.export_model(self.best_index_)
        self.refit_time_ = time.perf_counter() - start

    def _report_epoch(self, epoch, info):
        active = info["active"]
        line = f"epoch {epoch + 1}: {int(active.sum())} models training"
        if active.any():
            line += f", mean loss {np.nanmean(info['loss'][active]):.5f}"
        if info["val_score"] is not None:
            line += f", best validation score {np.nanmax(info['val_score']):.4f}"
        print(line)

    # --------------------------------------------------------------- models
    def export_model(self, index, fold=None):
        """Return a trained model (a row of ``cv_results_``) as a standalone estimator.

        Parameters
        ----------
        index : int
            Row of ``cv_results_``.
        fold : int, default=None
            With ``cv``, fold k's replica (trained on fold k's training
            rows). None gives the model trained on the held-out split
            (``cv=None``) or, with ``cv``, the model refitted on all the data
            (available for refitted rows only).

        Returns
        -------
        SingleMLPClassifier or SingleMLPRegressor
            Fitted with that model's trained weights; needs nothing of the
            population, pickles anywhere.
        """
        check_is_fitted(self)
        if not isinstance(index, Integral) or not 0 <= index < self.n_models_:
            raise ValueError(f"index must be an int in [0, {self.n_models_}); got {index!r}.")
        if fold is not None:
            if not isinstance(fold, Integral) or not 0 <= fold < self.n_splits_:
                raise ValueError(f"fold must be an int in [0, {self.n_splits_}); got {fold!r}.")
            weights = (
                self._coefs[fold][index], self._intercepts[fold][index],
                int(self.n_iter_[index] if self.cv is None else self.n_iter_[index, fold]),
                self.loss_curves_[index] if self.cv is None else self.loss_curves_[index, fold],
            )
        elif self.cv is None:
            return self.export_model(index, fold=0)
        elif index in self._refitted:
            weights = self._refitted[index]
        else:
            raise ValueError(
                f"Row {index} was not refitted on all the data (refitted rows: "
                f"{sorted(self._refitted)}); pass fold=k for fold k's replica, "
                f"k in [0, {self.n_splits_})."
            )
        coefs, intercepts, n_iter, curve = weights
        model = self._single_class(
            **self.cv_results_["params"][index],
            repeat=int(self.cv_results_["param_repeat"][index]),
            random_state=self._seed,
            **{name: getattr(self, name) for name in TRAINING_PARAMS},
        )
        model.coefs_ = [c.copy() for c in coefs]
        model.intercepts_ = [b.copy() for b in intercepts]
        model.n_iter_ = n_iter
        model.loss_curve_ = list(curve[:n_iter])
        model.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            model.feature_names_in_ = self.feature_names_in_
        if hasattr(self, "classes_"):
            model.classes_ = self.classes_
        return model

    @available_if(_refitted)
    def predict(self, X):
        """Predict with the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)
