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

from ._attributes import MLP_ATTRIBUTES, continued_attributes, mlp_attributes
from ._compat import HasMethods, Interval, StrOptions, _fit_context, get_param_names
from ._engine import ACTIVATION_NAMES
from ._ensemble import select_members
from ._params import TRAINING_CONSTRAINTS, TRAINING_PARAMS, one_value, uses_early_stopping
from ._population import OPTIMIZER_PARAMS
from ._scoring import warn_halted
from ._search import fitted_scorers, run_search, train_fused
from ._splits import SplitSettings, validation_split


def _needs_refit(method):
    """``available_if`` check of ``method``: prediction needs ``refit``, with
    GridSearchCV's message (whose ``_check_refit`` it follows)."""

    def check(search):
        if not search.refit:
            raise AttributeError(
                f"This {type(search).__name__} instance was initialized with `refit=False`. "
                f"{method} is available only after refitting on the best parameters. You can "
                f"refit an estimator manually using the `best_params_` attribute, or get any "
                f"trained model with export_model(i)."
            )
        return True

    return check


class SearchScoreMixin:
    """``score`` with the search's own scorer, as GridSearchCV's.

    Placed left of ``ClassifierMixin`` / ``RegressorMixin``, whose ``score``
    (accuracy / R^2 whatever ``scoring`` says) it replaces.
    """

    @available_if(_needs_refit("score"))
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
        scorer = self.scorer_[self.refit] if isinstance(self.scorer_, dict) else self.scorer_
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        score = scorer(self.best_estimator_, X, y, **kwargs)
        # a callable scoring may return a dict of metrics: refit names one
        return score[self.refit] if isinstance(score, dict) else score


#: Attributes that data validation sets on the estimator, before training starts.
_DATA_ATTRIBUTES = ("n_features_in_", "feature_names_in_", "classes_", "out_activation_")


class BaseParallelMLP(BaseEstimator):
    """Base class of the population estimators; see ParallelMLPClassifier."""

    #: Parameters an exported model takes from the search it came from.
    _exported_params = TRAINING_PARAMS

    _parameter_constraints = {
        # a list or an array-like of values to search, wherever one value goes,
        # or a distribution (an object with rvs) as in RandomizedSearchCV,
        # whose draws the search space checks
        "hidden_layer_sizes": [None, Interval(Integral, 1, None, closed="left"), "array-like",
                               HasMethods(["rvs"])],
        "activation": [StrOptions(set(ACTIVATION_NAMES)), "array-like", HasMethods(["rvs"])],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither"), "array-like",
                               HasMethods(["rvs"])],
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like", HasMethods(["rvs"])],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "n_models": [Interval(Integral, 1, None, closed="left"), None],
        "param_grid": [dict, list, None],
        "cv": ["cv_object", None],
        "scoring": [StrOptions(set(get_scorer_names())), callable, list, tuple, set, dict, None],
        "refit": ["boolean", str, callable],
        "holdout_refit": ["boolean"],
        "selection": [StrOptions({"auto", "score", "loss"})],
        "tie_breaker": [StrOptions({"loss"}), None],
        "error_score": [StrOptions({"raise"}), Real],
        "return_train_score": ["boolean"],
        "verbose": ["verbose"],
        "pruning": [None, StrOptions({"halving"})],
        "halving_factor": [Interval(Real, 1, None, closed="neither")],
        "min_iter": [Interval(Integral, 1, None, closed="left")],
        "refill": [None, StrOptions({"sample", "perturb"})],
        "max_models": [Interval(Integral, 1, None, closed="left"), None],
        "ensemble_size": [Interval(Integral, 1, None, closed="left")],
        # 0 means nothing to joblib: refused here, not deep inside Parallel
        "n_jobs": [Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left"), None],
        "max_memory": [Interval(Real, 0, None, closed="neither"), None],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        **TRAINING_CONSTRAINTS,
        # the optimizer may vary per model: lists and distributions too
        **{
            name: [*TRAINING_CONSTRAINTS[name], "array-like", HasMethods(["rvs"])]
            for name in OPTIMIZER_PARAMS
        },
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
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        n_repeats=1,
        n_models=None,
        param_grid=None,
        early_stopping=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        n_iter_no_change=10,
        tol=1e-4,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        pruning=None,
        halving_factor=3,
        min_iter=5,
        refill=None,
        max_models=None,
        cv=None,
        scoring=None,
        refit=True,
        holdout_refit=True,
        selection="auto",
        tie_breaker="loss",
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
        self.shuffle = shuffle
        self.max_iter = max_iter
        self.max_fun = max_fun
        self.n_repeats = n_repeats
        self.n_models = n_models
        self.param_grid = param_grid
        self.early_stopping = early_stopping
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.monitor = monitor
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.pruning = pruning
        self.halving_factor = halving_factor
        self.min_iter = min_iter
        self.refill = refill
        self.max_models = max_models
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.holdout_refit = holdout_refit
        self.selection = selection
        self.tie_breaker = tie_breaker
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
        scored on it. With ``cv``, every model trains once per fold inside
        the same fused run and is scored on each fold's test rows. The
        best model has the lowest mean validation loss or the best mean
        validation score (``selection``); with ``refit`` its configuration
        is then retrained on all the data (with ``cv=None`` only if
        ``holdout_refit``, else the trained model itself is kept).

        One configuration (one value per parameter, ``n_repeats=1``) with
        ``cv=None`` and neither ``early_stopping`` nor ``pruning`` is
        scikit-learn's MLP: the one model trains on every row, nothing is
        held out, and its test scores (``best_score_``) are NaN. With
        ``early_stopping`` it trains on the rows scikit-learn's MLP would
        train on, the rest being its validation set. With ``cv=None`` a
        lone model also fails and talks as scikit-learn's MLP: non-finite
        weights raise its ``ValueError`` (in a search, a diverged model is
        a failed fit instead), and ``verbose`` prints its
        ``Iteration N, loss = ...`` lines.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is densified.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in every model's loss (and L2 divisor, as
            scikit-learn's MLP) and in the scorers that take
            ``sample_weight`` (the others score unweighted, with
            GridSearchCV's warning).
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
        if isinstance(self.scoring, (list, tuple, set, dict)):  # fail before training
            self._check_refit(self.scoring)
        if one_value(self.solver) == "lbfgs" and self.pruning is not None:
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
            if run.multimetric:  # a callable scoring may turn out multi-metric
                self._check_refit(run.cv_results)
            fitted = self._search_attributes(run)
            if self.refit:
                fitted.update(self._refit_attributes(run, fitted))
                if run.warm_started:  # the curves go on from the previous fit's
                    continued = continued_attributes(vars(self), fitted)
                    fitted.update({name: continued[name] for name in MLP_ATTRIBUTES})
                    if not hasattr(fitted["best_estimator_"], "estimators_"):
                        vars(fitted["best_estimator_"]).update(continued_attributes(vars(self), {
                            name: getattr(fitted["best_estimator_"], name) for name in MLP_ATTRIBUTES
                        }))
        except BaseException:
            for name in _DATA_ATTRIBUTES:
                vars(self).pop(name, None)
            vars(self).update(previous)
            raise
        # set together, only once everything is computed; as GridSearchCV,
        # classes_ only with a refitted best model (export_model keeps them)
        fitted["_classes"] = vars(self).get("classes_")
        if not self.refit:
            vars(self).pop("classes_", None)
        for name in MLP_ATTRIBUTES:  # a previous refit's, when this one has none
            vars(self).pop(name, None)
        vars(self).update(fitted)
        return self

    def _check_refit(self, scorers):
        """GridSearchCV's rule (and message) for multi-metric scoring:
        ``refit`` names one of the scorers (``scorers``: their names, or
        ``cv_results_`` with ``mean_test_<name>`` columns), is a callable, or
        is False. With one metric any string refits as True does, as
        GridSearchCV."""
        if isinstance(scorers, dict) and "params" in scorers:  # cv_results_
            names = [key[len("mean_test_"):] for key in scorers if key.startswith("mean_test_")]
        else:
            names = list(scorers)
        if self.refit is False or callable(self.refit) or (isinstance(self.refit, str) and self.refit in names):
            return
        raise ValueError(
            "For multi-metric scoring, the parameter refit must be set to a scorer key or a "
            "callable to refit an estimator with the best parameter setting on the whole data and "
            "make the best_* attributes available for that metric. If this is not needed, refit "
            f"should be set to False explicitly. {self.refit!r} was passed (scorer keys: "
            f"{sorted(names)})."
        )

    @staticmethod
    def _ranking_metric(run, refit):
        """The ``*_test_<metric>`` columns that rank models: ``score`` with one
        metric, the one ``refit`` names with several (None with a callable
        ``refit`` or ``refit=False``)."""
        if not run.multimetric:
            return "score"
        return refit if isinstance(refit, str) else None

    def _select_best_index(self, run, metric):
        """``best_index_``, as GridSearchCV's ``_select_best_index``: what a
        callable ``refit`` returns, else the top rank of ``metric`` (ties by
        row order).

        Raises
        ------
        TypeError, IndexError
            With GridSearchCV's messages, for a callable returning a
            non-integer or an index out of range.
        """
        results = run.cv_results
        if callable(self.refit):
            best = self.refit(results)
            if not isinstance(best, Integral):
                raise TypeError("best_index_ returned is not an integer")
            if best < 0 or best >= len(results["params"]):
                raise IndexError("best_index_ index out of range")
            return int(best)
        # (every fit failing raised already, as GridSearchCV)
        # by the held-out loss or the score (selection), then by row order
        return int(np.argmin(self._selection_order(run, metric)))

    def _selection_criterion(self):
        """``selection`` resolved: "auto" is "loss" with the default score
        (``scoring=None``), else "score" (the scorer the user asked for)."""
        if self.selection == "auto":
            return "loss" if self.scoring is None else "score"
        return self.selection

    def _selection_order(self, run, metric):
        """Positions of the rows in the order the search prefers them
        (0 is the best), then by row order as GridSearchCV's ``best_index_``:

        - ``selection="loss"``: by the mean held-out loss (NaN last), failed
          and pruned models and those without a finite score after all
          others;
        - ``selection="score"``: by ``rank_test_<metric>`` (which already
          ranks failed and pruned models last), ties by the mean held-out
          loss with ``tie_breaker="loss"``.
        """
        rows = np.arange(len(run.test_loss))
        loss = np.nan_to_num(run.test_loss, nan=np.inf)
        if self._selection_criterion() == "loss":
            means = run.cv_results[f"mean_test_{metric}"]
            demoted = run.failed | ~np.isfinite(means) | np.asarray(run.cv_results.get("pruned", False), dtype=bool)
            keys = (rows, loss, demoted)
        else:
            ranks = run.cv_results[f"rank_test_{metric}"]
            keys = (rows, loss, ranks) if self.tie_breaker == "loss" else (rows, ranks)
        order = np.lexsort(keys)  # the last key is the primary one
        positions = np.empty(len(order), dtype=int)
        positions[order] = rows
        return positions

    def _search_attributes(self, run):
        """The fitted attributes of a search (no refit), as a dict."""
        result, n_models = run.result, run.population.n_models
        not_converged = int(np.sum(~result.converged & ~result.diverged & ~result.pruned))
        if not_converged and result.halted is None:
            lone_minibatch = SplitSettings.of(self).is_lone(n_models) and one_value(self.solver) != "lbfgs"
            warnings.warn(
                # a lone model is scikit-learn's MLP: its words
                f"Stochastic Optimizer: Maximum iterations ({self.max_iter}) reached and the "
                f"optimization hasn't converged yet." if lone_minibatch else
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
            # a dict of scorers, or one scorer (a callable returning a dict
            # of metrics included, as GridSearchCV's scorer_)
            "scorer_": scorers if len(scorers) > 1 or "score" not in scorers else scorers["score"],
            "loss_curves_": squeeze(result.loss_curves),
            "validation_scores_per_model_": (
                None if result.validation_scores is None else squeeze(result.validation_scores)
            ),
            "n_iter_per_model_": squeeze(result.n_iter),
            "validation_loss_": run.test_loss,
            "shards_": run.shards,
            "_train_sizes": list(run.train_sizes),
            "_coefs": result.coefs,
            "_intercepts": result.intercepts,
            "_refitted": {},
            "_seed": run.seed,
            # what a warm-started fit checks and continues (see _resume)
            "_n_samples_fit": int(run.X.shape[0]),
            "_folds_digest": run.folds_digest,
            "_converged": np.asarray(result.converged, dtype=bool),
            "_diverged": np.asarray(result.diverged, dtype=bool),
            "_pruned": (
                np.zeros(result.n_iter.shape, dtype=bool) if result.pruned is None
                else np.asarray(result.pruned, dtype=bool)
            ),
        }
        if run.schedules is not None:  # an adaptive search (refill)
            fitted["hyperparameter_schedules_"] = run.schedules
        metric = self._ranking_metric(run, self.refit)
        if self.refit or not run.multimetric:
            fitted["best_index_"] = self._select_best_index(run, metric)
            fitted["best_params_"] = run.cv_results["params"][fitted["best_index_"]]
            if not callable(self.refit):  # as GridSearchCV: no score for a custom choice
                fitted["best_score_"] = float(run.cv_results[f"mean_test_{metric}"][fitted["best_index_"]])
        return fitted

    def _refit_attributes(self, run, fitted):
        """``best_estimator_`` (and ``ensemble_indices_``, ``refit_time_``).

        The top ``ensemble_size`` models as ``selection`` orders them (see
        :meth:`_selection_order`;
        pruned models only when too few others trained to the end, see
        :func:`select_members`): with cv, their configurations retrained on
        all the data in one fused run; with a holdout, the same for the
        epochs they trained (``holdout_refit``) or the trained models
        themselves.
        """
        start = time.perf_counter()
        members = self._members(run, fitted["best_index_"])
        refitted, overrides = {}, {}
        # a lone configuration is scikit-learn's MLP (its early-stopping
        # validation part its own): nothing was chosen, nothing to retrain
        if self.cv is None and self.holdout_refit and run.held_out and run.population.n_models > 1:
            refitted, overrides = self._holdout_refit(run, fitted, members)
        elif self.cv is not None:
            rows = np.arange(run.X.shape[0])
            early = uses_early_stopping(self)
            folds = [validation_split(SplitSettings.of(self), rows, run.y_encoded, run.seed) if early else (rows, None)]
            # a refit trains the chosen configurations to completion: no halving
            config = dataclasses.replace(run.config, pruning=None, refill=None)
            # the same path as the search: n_jobs, device and verbose apply
            result, _ = train_fused(
                self, run.spec.subset(members), config, run.X, run.y_encoded, folds, name="refit run",
                sample_weight=run.train_weight, monitor=early, deadline=run.deadline,
            )
            warn_halted(result, "the refit of the best configuration")
            for j, row in enumerate(members):
                n_iter = int(result.n_iter[j, 0])
                scores = result.validation_scores
                refitted[row] = (
                    result.coefs[0][j], result.intercepts[0][j], result.loss_curves[j, 0, :n_iter],
                    None if scores is None else scores[j, 0, :n_iter], len(folds[0][0]),
                )
        data = {name: vars(self)[name] for name in _DATA_ATTRIBUTES if name in vars(self)}
        state = {**fitted, **data, "_refitted": refitted}
        models = [
            self._single_model(state, row, None, refitted=bool(refitted), training=overrides.get(row))
            for row in members
        ]
        best = models[0] if len(models) == 1 else self._ensemble_class.from_fitted(models)
        return {
            "_refitted": refitted,
            "best_estimator_": best,
            "ensemble_indices_": np.array(members),
            "refit_time_": time.perf_counter() - start,
            # MLPClassifier's fitted attributes, those of the best model
            **{name: getattr(models[0], name) for name in MLP_ATTRIBUTES},
        }

    def _members(self, run, best_index):
        """Rows of ``best_estimator_``: ``best_index`` and, with
        ``ensemble_size > 1``, the next models as ``selection`` orders them
        (see :func:`select_members`)."""
        metric = self._ranking_metric(run, self.refit)
        if metric is None:  # a callable refit with several metrics: no ranking
            if self.ensemble_size > 1:
                raise ValueError(
                    f"ensemble_size={self.ensemble_size} ranks models by one metric; with "
                    f"multi-metric scoring and a callable refit there is none. Pass refit=<scorer "
                    f"name> or ensemble_size=1."
                )
            return [best_index]
        means = run.cv_results[f"mean_test_{metric}"]
        usable = ~run.failed & (np.isfinite(means) if run.held_out else True)
        return select_members(
            self._selection_order(run, metric), self.ensemble_size, best=best_index, usable=usable,
            pruned=run.cv_results.get("pruned"),
        ).tolist()

    def _holdout_refit(self, run, fitted, members):
        """Retrain the configurations of ``members`` on all the rows
        (training and validation part), each for as many epochs as it
        trained on the training part: ``n_iter_``, or its best epoch with
        ``early_stopping`` (whose weights it kept). A fixed epoch count, as
        nothing is left to watch; models of the same count train in one
        fused run.

        Returns
        -------
        refitted : dict of int to tuple
            ``row: (coefs, intercepts, loss_curve, None, n_train)``, as the
            cv refit's entries.
        overrides : dict of int to dict
            ``row: training parameters`` that make the returned model's
            ``fit`` retrain exactly it (``max_iter`` the epoch count,
            ``n_iter_no_change`` too so it never stops before, no
            ``early_stopping``).
        """
        epochs = {}
        for row in members:
            n = int(fitted["n_iter_per_model_"][row])
            if self.early_stopping:
                curve = fitted["validation_scores_per_model_"][row, :n]
                if np.isfinite(curve).any():
                    # the first best epoch, as the stopping rule keeps it
                    n = int(np.nanargmax(curve)) + 1
            epochs[row] = max(n, 1)
        rows = np.arange(run.X.shape[0])
        refitted, overrides = {}, {}
        for n in sorted(set(epochs.values())):
            group = [row for row in members if epochs[row] == n]
            training = {"max_iter": n, "n_iter_no_change": n, "early_stopping": False}
            config = dataclasses.replace(run.config, pruning=None, refill=None, **training)
            result, _ = train_fused(
                self, run.spec.subset(group), config, run.X, run.y_encoded, [(rows, None)],
                name="refit run", sample_weight=run.train_weight, monitor=False,
                deadline=run.deadline,
            )
            warn_halted(result, "the refit of the best configuration")
            for j, row in enumerate(group):
                n_iter = int(result.n_iter[j, 0])
                refitted[row] = (
                    result.coefs[0][j], result.intercepts[0][j], result.loss_curves[j, 0, :n_iter], None,
                    len(rows),
                )
                overrides[row] = training
        return refitted, overrides

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

    def _single_model(self, state, index, fold, *, refitted=None, training=None):
        """Model ``index`` from the fitted ``state``: fold ``fold``'s replica,
        or for None the refitted model (``refitted``; by default with
        ``cv``) or the held-out-trained one. ``training`` overrides the
        search's training parameters on the returned model."""
        if refitted is None:
            refitted = fold is None and self.cv is not None
        if refitted:
            coefs, intercepts, loss_curve, validation_curve, n_train = state["_refitted"][index]
        else:
            fold = fold or 0
            # per model (cv=None) or per model and fold
            at = (lambda a: a[index]) if self.cv is None else (lambda a: a[index, fold])  # noqa: E731
            n_iter = int(at(state["n_iter_per_model_"]))
            loss_curve = at(state["loss_curves_"])[:n_iter]
            scores = state["validation_scores_per_model_"]
            validation_curve = None if scores is None else at(scores)[:n_iter]
            coefs, intercepts = state["_coefs"][fold][index], state["_intercepts"][fold][index]
            n_train = state["_train_sizes"][fold]
        results = state["cv_results_"]
        names = get_param_names(self._single_class)
        # the search's training parameters, then the model's own values (its
        # searched optimizer settings among them), then ``training``
        params = {
            **{name: getattr(self, name) for name in self._exported_params if name in names},
            # an optimizer setting not shown was not searched: one value
            **{name: one_value(getattr(self, name)) for name in OPTIMIZER_PARAMS if name in names},
            **results["params"][index],
            **(training or {}),
        }
        model = self._single_class(
            **params, repeat=int(results["param_repeat"][index]), random_state=state["_seed"],
        )
        vars(model).update(mlp_attributes(
            coefs, intercepts, loss_curve=loss_curve, validation_curve=validation_curve,
            n_train=n_train, out_activation=self._out_activation(),
            early_stopping=(training or {}).get("early_stopping", self.early_stopping),
        ))
        for name in _DATA_ATTRIBUTES:
            if name in state:
                setattr(model, name, state[name])
        if state.get("_classes") is not None:  # refit=False: the search itself has no classes_
            model.classes_ = state["_classes"]
        return model

    @available_if(_needs_refit("predict"))
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
