"""What ParallelMLPClassifier and ParallelMLPRegressor share: the search estimator.

:class:`BaseParallelMLP` only orchestrates ``fit``: the search
(:func:`~skpmlp._search._run.search`: plan, train, score), the choice of
the best model (:mod:`skpmlp._selection._choice`), its refit
(:mod:`skpmlp._selection._refit`), and the fitted attributes, set together
once everything is computed. Its parameters, their
constraints and documentation come from the parameter table
(:mod:`skpmlp._core._params`); the subclasses give their signatures.
"""

import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._core._attributes import MLP_ATTRIBUTES, PER_MODEL_ATTRIBUTES, continued_attributes
from .._core._compat import _fit_context
from .._core._data import SparseInputMixin
from .._core._values import full_batch
from .._search._run import search
from .._search._scorers import fitted_scorers
from .._selection._choice import Selection
from .._selection._kinds import ENSEMBLE_KINDS, checked_ensemble_kind
from .._selection._refit import DATA_ATTRIBUTES, fitted_cv, fold_ensemble, refit, single_model
from ._changed_defaults import warn_default_ensemble


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
            Test samples, scored by the best model (or ensemble).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True labels (a 2-D indicator matrix for multilabel
            classification) or targets for ``X``.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the scorer.

        Returns
        -------
        score : float
            The scorer's value for the best model (or ensemble) on ``(X, y)``.
        """
        check_is_fitted(self)
        scorer = self.scorer_[self.refit] if isinstance(self.scorer_, dict) else self.scorer_
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        score = scorer(self.best_estimator_, X, y, **kwargs)
        # a callable scoring may return a dict of metrics: refit names one
        return score[self.refit] if isinstance(score, dict) else score


class BaseParallelMLP(SparseInputMixin, BaseEstimator):
    """Base class of the population estimators; see ParallelMLPClassifier.

    Subclasses set ``_single_class`` and ``_ensemble_class`` (what
    ``best_estimator_`` is), ``_parameter_constraints`` (from the parameter
    table) and an ``__init__`` whose signature follows the table.
    """

    def __sklearn_is_fitted__(self):
        return hasattr(self, "cv_results_")

    def __getattr__(self, name):
        # only reached for attributes the search does not have: with a fold
        # ensemble as best_estimator_, one model's own say where to read them
        state = vars(self)
        if name in PER_MODEL_ATTRIBUTES and "best_estimator_" in state:
            raise AttributeError(
                f"{type(self).__name__} has no {name} here: best_estimator_ is an "
                f"{type(state['best_estimator_']).__name__} that predicts through fold models "
                f"(no model was refitted on all the data), so no single model has the "
                f"attributes of the best one. Read export_model(best_index_, fold=k).{name} "
                f"for the best configuration's model of fold k, or best_estimator_.estimators_; "
                f"fit with ensemble='best' to refit the best configuration on all the data, "
                f"whose attributes these are."
            )
        # anything else fails as without this method: a descriptor that
        # declined (available_if's predict) raises its own error again
        return object.__getattribute__(self, name)

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
        ``holdout_refit``, else the trained model itself is kept), or
        ``ensemble`` builds an ensemble of the trained models.
        ``cv="auto"`` (the default) is one of the two, chosen by the data
        (5 folds on small data, else the holdout; ``cv_`` says which).

        One configuration (one value per parameter, ``n_repeats=1``) with
        ``cv=None`` (or ``"auto"``, which is then None) and neither
        ``early_stopping``, ``pruning`` nor ``restore_best_weights`` is
        scikit-learn's MLP: the one
        model trains on every row, nothing is held out, and its test scores
        (``best_score_``) are NaN. With
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
            Class labels (a 2-D 0/1 indicator matrix for multilabel
            classification) or regression targets.
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
            The fitted search.
        """
        self._check_settings()
        # validation sets the data attributes first: put them back if the fit
        # is interrupted, so a failed fit never leaves the estimator half-fitted
        previous = {name: vars(self)[name] for name in DATA_ATTRIBUTES if name in vars(self)}
        try:
            fitted = self._fitted(X, y, sample_weight, groups)
        except BaseException:
            for name in DATA_ATTRIBUTES:
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

    def _check_settings(self):
        """Refuse, before anything trains, settings no search can honour."""
        if isinstance(self.scoring, (list, tuple, set, dict)):
            self._check_refit(self.scoring)
        if self.ensemble != "auto":  # "auto" is decided by the folds, once known
            ENSEMBLE_KINDS[self.ensemble].check(self, self.cv)
        if full_batch(self) and self.pruning is not None:
            raise ValueError(
                f"pruning={self.pruning!r} needs a minibatch solver: it ranks models on their "
                f"validation scores epoch after epoch, and solver='lbfgs' trains full-batch "
                f"without monitoring. Use pruning=None with lbfgs, or solver='adam' / 'sgd'."
            )

    def _fitted(self, X, y, sample_weight, groups):
        """:meth:`fit`'s work: the search, the choice and the refit; the
        fitted attributes, as a dict (the data attributes are set on the
        estimator by validation)."""
        run = search(self, X, y, sample_weight, groups)
        if run.multimetric:  # a callable scoring may turn out multi-metric
            self._check_refit(run.cv_results)
        fitted = self._search_attributes(run)
        if not self.refit:
            return fitted
        selection = Selection.of(self, run.plan.cv)
        members = selection.members(run, fitted["best_index_"])
        fitted.update(refit(self, run, fitted, members))
        warn_default_ensemble(self, selection.kind, run.plan.cv,
                              n_samples=run.plan.data.X.shape[0])
        # the curves go on from the previous fit's (a fold ensemble has none)
        if run.plan.warm_started and "loss_curve_" in fitted:
            continued = continued_attributes(vars(self), fitted)
            fitted.update({name: continued[name] for name in MLP_ATTRIBUTES})
            best = fitted["best_estimator_"]
            if not hasattr(best, "estimators_"):
                vars(best).update(continued_attributes(vars(self), {
                    name: getattr(best, name) for name in MLP_ATTRIBUTES
                }))
        return fitted

    def _ensemble_kind(self, cv):
        """The :class:`~skpmlp._selection._kinds.EnsembleKind` a fit with
        ``cv`` (``"auto"`` resolved: None for a holdout) builds: asked by the
        search plan once the folds are known (whether it keeps every
        model's held-out predictions).

        Raises
        ------
        ValueError
            For an ensemble the folds cannot give.
        """
        return checked_ensemble_kind(self, cv)

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
        named = isinstance(self.refit, str) and self.refit in names
        if self.refit is False or callable(self.refit) or named:
            return
        raise ValueError(
            "For multi-metric scoring, the parameter refit must be set to a scorer key or a "
            "callable to refit an estimator with the best parameter setting on the whole data and "
            "make the best_* attributes available for that metric. If this is not needed, refit "
            f"should be set to False explicitly. {self.refit!r} was passed (scorer keys: "
            f"{sorted(names)})."
        )

    def _warn_not_converged(self, run):
        """scikit-learn's ConvergenceWarning for the models that reached
        ``max_iter`` without converging (a lone model in its MLP's words)."""
        result = run.result
        not_converged = int(np.sum(~result.converged & ~result.diverged & ~result.pruned))
        if not not_converged or result.halted is not None:
            return
        lone_minibatch = run.plan.lone and not full_batch(self)
        warnings.warn(
            # a lone model is scikit-learn's MLP: its words
            f"Stochastic Optimizer: Maximum iterations ({self.max_iter}) reached and the "
            f"optimization hasn't converged yet." if lone_minibatch else
            f"{not_converged} of {result.converged.size} trained models reached "
            f"max_iter={self.max_iter} without converging; consider increasing max_iter.",
            ConvergenceWarning,
        )

    def _search_attributes(self, run):
        """The fitted attributes of a search (no refit), as a dict."""
        self._warn_not_converged(run)
        result, plan = run.result, run.plan
        scorers = fitted_scorers(self, plan.scorers)
        # curves: (n_models, n_epochs) with a holdout, (n_models, n_splits, n_epochs) with cv
        squeeze = (lambda a: a[:, 0]) if plan.cv is None else (lambda a: a)  # noqa: E731
        fitted = {
            "cv_": plan.cv,
            "cv_results_": run.cv_results,
            "n_models_": run.population.n_models,
            "n_splits_": len(plan.folds),
            "multimetric_": run.multimetric,
            # a dict of scorers, or one scorer (a callable returning a dict
            # of metrics included, as GridSearchCV's scorer_)
            "scorer_": scorers if len(scorers) > 1 or "score" not in scorers else scorers["score"],
            "loss_curves_": squeeze(result.loss_curves),
            "validation_scores_per_model_": (
                None if result.validation_scores is None else squeeze(result.validation_scores)
            ),
            "n_iter_per_model_": squeeze(result.n_iter),
            "best_epoch_per_model_": (
                None if result.best_epoch is None else squeeze(result.best_epoch)
            ),
            "validation_loss_": run.test_loss,
            "shards_": run.shards,
            "_train_sizes": plan.train_sizes,
            "_coefs": result.coefs,
            "_intercepts": result.intercepts,
            "_refitted": {},
            "_refit_input_transforms": {},
            # every fold's fitted input transforms, by value (none: empty)
            "_input_transforms": plan.inputs.per_fold(len(plan.folds)),
            "_seed": plan.seed,
            # what a warm-started fit checks and continues (see _resume)
            "_n_samples_fit": int(plan.data.X.shape[0]),
            "_folds_digest": run.folds_digest,
            "_converged": np.asarray(result.converged, dtype=bool),
            "_diverged": np.asarray(result.diverged, dtype=bool),
            "_pruned": np.asarray(result.pruned, dtype=bool),
        }
        if run.schedules is not None:  # an adaptive search (refill)
            fitted["hyperparameter_schedules_"] = run.schedules
        if self.refit or not run.multimetric:
            fitted.update(self._best(run))
        return fitted

    def _best(self, run):
        """``best_index_``, ``best_params_`` and (unless ``refit`` is a
        callable, as GridSearchCV) ``best_score_``."""
        selection = Selection.of(self, run.plan.cv)
        metric = selection.ranking_metric(run)
        index = selection.best_index(run, metric)
        best = {"best_index_": index, "best_params_": run.cv_results["params"][index]}
        if not callable(self.refit):
            best["best_score_"] = float(run.cv_results[f"mean_test_{metric}"][index])
        return best

    # --------------------------------------------------------------- models
    def export_model(self, index, fold=None):
        """Return a trained model (a row of ``cv_results_``) as a standalone estimator.

        What comes back is what the row's scores measured:

        - with a holdout (``cv=None``), the model trained on the training
          part and scored on the held-out rows (``best_estimator_`` is the
          best configuration retrained on all the rows, ``holdout_refit``);
        - with k folds, the model refitted on all the data where the row
          was refitted (the best configuration with ``ensemble="best"``),
          else the row's fold ensemble: an ``MLPEnsembleClassifier`` /
          ``MLPEnsembleRegressor`` averaging its k fold models, the models
          whose out-of-fold predictions gave its ``split{k}_test_score``.
          Under the defaults (``cv="auto"``, ``ensemble="auto"``) on data
          of up to 2,000 rows nothing is refitted, so every row gives its
          fold ensemble.

        Parameters
        ----------
        index : int
            Row of ``cv_results_``.
        fold : int or "all", default=None
            With ``cv``, fold k's replica (trained on fold k's training
            rows), or ``"all"`` for the row's fold ensemble (the average
            of its k fold replicas, also for a refitted row). None gives
            the model described above.

        Returns
        -------
        SingleMLPClassifier, SingleMLPRegressor or an MLPEnsemble*
            Fitted with that model's trained weights; needs nothing of the
            population, pickles anywhere, converts with ``to_sklearn()``
            and ``to_torch()``, saves with :func:`skpmlp.io.save`.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from skpmlp import ParallelMLPClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> search = ParallelMLPClassifier([(8,), (16,)], max_iter=20, cv=3,
        ...                                random_state=0).fit(X, y)
        >>> type(search.export_model(1)).__name__     # row 1's 3 fold models
        'MLPEnsembleClassifier'
        >>> type(search.export_model(1, fold=2)).__name__
        'SingleMLPClassifier'
        """
        check_is_fitted(self)
        cv = fitted_cv(self, vars(self))
        if not isinstance(index, Integral) or not 0 <= index < self.n_models_:
            raise ValueError(f"index must be an int in [0, {self.n_models_}); got {index!r}.")
        if fold is not None and cv is not None and isinstance(fold, str) and fold == "all":
            return fold_ensemble(self, vars(self), index)
        if fold is not None and (not isinstance(fold, Integral) or not 0 <= fold < self.n_splits_):
            allowed = " or 'all'" if cv is not None else ""
            raise ValueError(
                f"fold must be an int in [0, {self.n_splits_}){allowed}; got {fold!r}."
            )
        if fold is None and cv is not None and index not in self._refitted:
            # not refitted on all the data: what its cross-validated score measured
            return fold_ensemble(self, vars(self), index)
        return single_model(self, vars(self), index, fold)

    @available_if(_needs_refit("predict"))
    def predict(self, X):
        """Predict with the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples the best model (or ensemble) predicts.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The best model's (or ensemble's) predicted labels or values.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)
