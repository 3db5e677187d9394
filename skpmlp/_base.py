"""What ParallelMLPClassifier and ParallelMLPRegressor share: the search.

The estimator only orchestrates: validate, expand the hyperparameters into a
population, hold out validation data, train the population fused, score it,
build ``cv_results_`` and pick the best model. The numerics live in the
engine, the table logic in ``_population`` / ``_scoring`` / ``_results``.
"""

import dataclasses
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import get_scorer_names
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._compat import Interval, StrOptions, _fit_context
from ._engine import ACTIVATION_NAMES
from ._ensemble import select_members
from ._params import TRAINING_CONSTRAINTS, TRAINING_PARAMS, uses_early_stopping
from ._scoring import warn_halted
from ._search import fitted_scorers, run_search, train_fused
from ._splits import validation_split


def _refitted(search):
    """``available_if`` check: prediction needs ``refit=True``, as GridSearchCV."""
    if not search.refit:
        raise AttributeError(
            f"This {type(search).__name__} instance was initialized with refit=False; "
            f"prediction is available only with refit=True. Use export_model(i) to get "
            f"any trained model."
        )
    return True


class SearchScoreMixin:
    """``score`` with the search's own scorer, as GridSearchCV's.

    Placed left of ``ClassifierMixin`` / ``RegressorMixin``, whose ``score``
    (accuracy / R^2 whatever ``scoring`` says) it replaces.
    """

    @available_if(_refitted)
    def score(self, X, y, sample_weight=None):
        """Score the best model (or ensemble) with the search's ``scoring``.

        As ``GridSearchCV.score``: the scorer that ranked the models (with
        multi-metric scoring, the one ``refit`` names), so ``score`` on
        held-out data is comparable with ``best_score_``. With
        ``scoring=None``, the best model's own ``score``: accuracy (subset
        accuracy for multilabel targets) or R^2.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the scorer.

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        scorer = self.scorer_[self.refit] if self.multimetric_ else self.scorer_
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        return scorer(self.best_estimator_, X, y, **kwargs)


#: Attributes that data validation sets on the estimator, before training starts.
_DATA_ATTRIBUTES = ("n_features_in_", "feature_names_in_", "classes_", "out_activation_")


class BaseParallelMLP(BaseEstimator):
    """Base class of the population estimators; see ParallelMLPClassifier."""

    #: Parameters an exported model takes from the search it came from.
    _exported_params = TRAINING_PARAMS

    _parameter_constraints = {
        # a list or an array-like of values to search, wherever one value goes
        "hidden_layer_sizes": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
        "activation": [StrOptions(set(ACTIVATION_NAMES)), "array-like"],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither"), "array-like"],
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "cv": ["cv_object", None],
        "scoring": [StrOptions(set(get_scorer_names())), callable, list, tuple, set, dict, None],
        "refit": ["boolean", str],
        "error_score": [StrOptions({"raise"}), Real],
        "return_train_score": ["boolean"],
        "verbose": ["verbose"],
        "pruning": [None, StrOptions({"halving"})],
        "halving_factor": [Interval(Real, 1, None, closed="neither")],
        "min_iter": [Interval(Integral, 1, None, closed="left")],
        "ensemble_size": [Interval(Integral, 1, None, closed="left")],
        # 0 means nothing to joblib: refused here, not deep inside Parallel
        "n_jobs": [Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left"), None],
        "max_memory": [Interval(Real, 0, None, closed="neither"), None],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
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
        max_fun=15000,
        n_repeats=1,
        early_stopping=False,
        validation_fraction=0.1,
        monitor="score",
        n_iter_no_change=10,
        tol=1e-4,
        momentum=0.9,
        nesterovs_momentum=True,
        pruning=None,
        halving_factor=3,
        min_iter=5,
        cv=None,
        scoring=None,
        refit=True,
        ensemble_size=1,
        error_score=np.nan,
        return_train_score=False,
        dtype="float32",
        device="auto",
        n_jobs=None,
        max_memory=None,
        max_time=None,
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
        self.max_fun = max_fun
        self.n_repeats = n_repeats
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.monitor = monitor
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.pruning = pruning
        self.halving_factor = halving_factor
        self.min_iter = min_iter
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.ensemble_size = ensemble_size
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.dtype = dtype
        self.device = device
        self.n_jobs = n_jobs
        self.max_memory = max_memory
        self.max_time = max_time
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
    def fit(self, X, y, sample_weight=None, groups=None):
        """Train every model of the search space, on every fold, as one fused network.

        With ``cv=None``, ``validation_fraction`` of the rows (stratified for
        single-label classifiers; with ``groups``, that fraction of the
        groups, whole) is held out; every model trains on the rest and is
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
        groups : array-like of shape (n_samples,), default=None
            Group labels of the rows, passed to the ``cv`` splitter's
            ``split`` as GridSearchCV does (``GroupKFold``,
            ``LeaveOneGroupOut``, ``GroupShuffleSplit``, ...; splitters
            without groups ignore them). With ``cv=None`` the held-out
            validation part is drawn by group
            (:class:`~sklearn.model_selection.GroupShuffleSplit`), so no
            group has rows on both sides. The validation part that early
            stopping carves out of each fold's training rows (``cv`` given)
            ignores groups, as scikit-learn's MLP does.

        Returns
        -------
        self : object
        """
        self._check_refit()
        if self.solver == "lbfgs" and self.pruning is not None:
            raise ValueError(
                f"pruning={self.pruning!r} needs a minibatch solver: it ranks models on their "
                f"validation scores epoch after epoch, and solver='lbfgs' trains full-batch "
                f"without monitoring. Use pruning=None with lbfgs, or solver='adam' / 'sgd'."
            )
        # validation sets the data attributes first: put them back if the fit
        # is interrupted, so a failed fit never leaves the estimator half-fitted
        previous = {name: vars(self)[name] for name in _DATA_ATTRIBUTES if name in vars(self)}
        try:
            run = run_search(self, X, y, sample_weight, groups)
            fitted = self._search_attributes(run)
            if self.refit:
                fitted.update(self._refit_attributes(run, fitted))
        except BaseException:
            for name in _DATA_ATTRIBUTES:
                vars(self).pop(name, None)
            vars(self).update(previous)
            raise
        # set together, only once everything is computed
        vars(self).update(fitted)
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

    def _ranking_metric(self):
        return self.refit if isinstance(self.refit, str) else "score"

    def _search_attributes(self, run):
        """The fitted attributes of a search (no refit), as a dict."""
        result, n_models = run.result, run.population.n_models
        not_converged = int(np.sum(~result.converged & ~result.diverged & ~result.pruned))
        if not_converged and result.halted is None:
            warnings.warn(
                f"{not_converged} of {result.converged.size} trained models reached "
                f"max_iter={self.max_iter} without converging; consider increasing max_iter.",
                ConvergenceWarning,
            )
        scorers = fitted_scorers(self, run.scorers)
        holdout = self.cv is None
        # curves: (n_models, n_epochs) with a holdout, (n_models, n_splits, n_epochs) with cv
        squeeze = (lambda a: a[:, 0]) if holdout else (lambda a: a)
        fitted = {
            "cv_results_": run.cv_results,
            "n_models_": n_models,
            "n_splits_": len(run.folds),
            "multimetric_": run.multimetric,
            "scorer_": scorers if run.multimetric else scorers["score"],
            "loss_curves_": squeeze(result.loss_curves),
            "validation_scores_": None if result.validation_scores is None else squeeze(result.validation_scores),
            "n_iter_": squeeze(result.n_iter),
            "shards_": run.shards,
            "_coefs": result.coefs,
            "_intercepts": result.intercepts,
            "_refitted": {},
            "_seed": run.seed,
        }
        metric = self._ranking_metric()
        if not run.multimetric or isinstance(self.refit, str):
            ranks = run.cv_results[f"rank_test_{metric}"]
            means = run.cv_results[f"mean_test_{metric}"]
            if np.isnan(means).all() or run.failed.all():
                raise ValueError(
                    f"All {n_models} models failed (diverged or could not be scored); try "
                    f"smaller learning rates or scale the input features."
                )
            # ties by row order, as GridSearchCV's best_index_
            fitted["best_index_"] = int(np.argmin(ranks))
            fitted["best_params_"] = run.cv_results["params"][fitted["best_index_"]]
            fitted["best_score_"] = float(means[fitted["best_index_"]])
        return fitted

    def _refit_attributes(self, run, fitted):
        """``best_estimator_`` (and ``ensemble_indices_``, ``refit_time_``).

        The top ``ensemble_size`` models by rank (ties by row order; pruned
        models only when too few others trained to the end, see
        :func:`select_members`): with a holdout, the trained models
        themselves; with cv, their configurations retrained on all the data
        in one fused run.
        """
        start = time.perf_counter()
        best_index = fitted["best_index_"]
        ranks = run.cv_results[f"rank_test_{self._ranking_metric()}"]
        means = run.cv_results[f"mean_test_{self._ranking_metric()}"]
        members = select_members(
            ranks, self.ensemble_size, best=best_index, usable=np.isfinite(means) & ~run.failed,
            pruned=run.cv_results.get("pruned"),
        ).tolist()
        refitted = {}
        if self.cv is not None:
            rows = np.arange(run.X.shape[0])
            early = uses_early_stopping(self)
            folds = [validation_split(self, rows, run.y_encoded, run.seed) if early else (rows, None)]
            # a refit trains the chosen configurations to completion: no halving
            config = dataclasses.replace(run.config, pruning=None)
            # the same path as the search: n_jobs, device and verbose apply
            result, _ = train_fused(
                self, run.spec.subset(members), config, run.X, run.y_encoded, folds, name="refit run",
                sample_weight=run.train_weight, monitor=early, deadline=run.deadline,
            )
            warn_halted(result, "the refit of the best configuration")
            for j, row in enumerate(members):
                refitted[row] = (
                    result.coefs[0][j], result.intercepts[0][j], int(result.n_iter[j, 0]),
                    result.loss_curves[j, 0],
                )
        data = {name: vars(self)[name] for name in _DATA_ATTRIBUTES if name in vars(self)}
        state = {**fitted, **data, "_refitted": refitted}
        models = [self._single_model(state, row, None) for row in members]
        best = models[0] if len(models) == 1 else self._ensemble_class.from_fitted(models)
        return {
            "_refitted": refitted,
            "best_estimator_": best,
            "ensemble_indices_": np.array(members),
            "refit_time_": time.perf_counter() - start,
        }

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
        if fold is not None and (not isinstance(fold, Integral) or not 0 <= fold < self.n_splits_):
            raise ValueError(f"fold must be an int in [0, {self.n_splits_}); got {fold!r}.")
        if fold is None and self.cv is not None and index not in self._refitted:
            raise ValueError(
                f"Row {index} was not refitted on all the data (refitted rows: "
                f"{sorted(self._refitted)}); pass fold=k for fold k's replica, "
                f"k in [0, {self.n_splits_})."
            )
        return self._single_model(vars(self), index, fold)

    def _single_model(self, state, index, fold):
        """Model ``index`` (fold ``fold``'s replica, or the refitted /
        held-out-trained model for None) from the fitted ``state``."""
        if fold is None and self.cv is not None:
            coefs, intercepts, n_iter, curve = state["_refitted"][index]
        else:
            fold = fold or 0
            holdout = self.cv is None
            n_iter = int(state["n_iter_"][index] if holdout else state["n_iter_"][index, fold])
            curve = state["loss_curves_"][index] if holdout else state["loss_curves_"][index, fold]
            coefs, intercepts = state["_coefs"][fold][index], state["_intercepts"][fold][index]
        results = state["cv_results_"]
        model = self._single_class(
            **results["params"][index],
            repeat=int(results["param_repeat"][index]),
            random_state=state["_seed"],
            **{name: getattr(self, name) for name in self._exported_params},
        )
        model.coefs_ = [c.copy() for c in coefs]
        model.intercepts_ = [b.copy() for b in intercepts]
        model.n_iter_ = n_iter
        model.loss_curve_ = list(curve[:n_iter])
        for name in _DATA_ATTRIBUTES:
            if name in state:
                setattr(model, name, state[name])
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
