"""What ParallelMLPClassifier and ParallelMLPRegressor share: the search.

The estimator only orchestrates: validate, expand the hyperparameters into a
population, hold out validation data, train the population fused, score it,
build ``cv_results_`` and pick the best model. The numerics live in the
engine, the table logic in ``_population`` / ``_scoring`` / ``_results``.
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._compat import _fit_context, validate_data
from ._engine import ACTIVATION_NAMES, population_outputs, train_population
from ._params import TRAINING_CONSTRAINTS, TRAINING_PARAMS, resolve_seed, train_config
from ._population import build_population
from ._results import build_cv_results
from ._scoring import score_population, warn_failed
from ._single import _SPARSE, dense


def _refitted(search):
    """``available_if`` check: prediction needs ``refit=True``, as GridSearchCV."""
    if not search.refit:
        raise AttributeError(
            f"This {type(search).__name__} instance was initialized with refit=False; "
            f"prediction is available only with refit=True. Use export_model(i) to get "
            f"any trained model."
        )
    return True


def holdout_split(y_encoded, fraction, seed, *, stratify):
    """Split row indices into training and validation parts.

    The split depends only on ``seed`` and ``y``. It is stratified for
    classifiers when every class has at least two samples and both parts
    can hold every class; otherwise it falls back to a random split with a
    warning.

    Raises
    ------
    ValueError
        If either part would be empty.
    """
    n = len(y_encoded)
    n_val = math.ceil(fraction * n)
    if n_val < 1 or n - n_val < 1:
        raise ValueError(
            f"validation_fraction={fraction} with n_samples={n} leaves {n - n_val} training "
            f"and {n_val} validation samples; at least one of each is needed."
        )
    strata = None
    if stratify:
        counts = np.bincount(y_encoded)
        n_classes = np.count_nonzero(counts)
        if counts[counts > 0].min() >= 2 and min(n_val, n - n_val) >= n_classes:
            strata = y_encoded
        else:
            warnings.warn(
                f"The validation split is not stratified: with n_samples={n} and "
                f"validation_fraction={fraction}, some class is too small to appear in "
                f"both the training and the validation part.",
                UserWarning,
                stacklevel=3,
            )
    return train_test_split(np.arange(n), test_size=n_val, random_state=seed, stratify=strata)


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
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "refit": ["boolean"],
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
        scoring=None,
        refit=True,
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
        self.scoring = scoring
        self.refit = refit
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
    def fit(self, X, y):
        """Train every model of the search space as one fused network.

        ``validation_fraction`` of the rows (stratified for classifiers) is
        held out; every model trains on the rest and is scored on it with
        ``scoring``. The best model is the trained one itself (no retraining),
        so its validation score describes it honestly.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is densified.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self : object
        """
        regression = self._task == "regression"
        X, y = validate_data(
            self, X, y, accept_sparse=_SPARSE, dtype=(np.float64, np.float32),
            multi_output=regression, y_numeric=regression,
        )
        X = dense(X)
        y_encoded, n_outputs = self._encode_targets(y)
        population = build_population(
            self.hidden_layer_sizes, self.activation, self.learning_rate_init, self.alpha,
            self.n_repeats,
        )
        scorer = None if self.scoring is None else check_scoring(self, self.scoring)
        seed = resolve_seed(self.random_state)
        train, val = holdout_split(
            y_encoded if not regression else np.zeros(len(y), dtype=int),
            self.validation_fraction, seed, stratify=not regression,
        )
        config = train_config(
            self, task=self._task, n_outputs=n_outputs, n_samples=len(train), seed=seed,
            early_stopping=self.early_stopping,
        )
        spec = population.spec(seed)
        result = train_population(
            spec, config, X[train], y_encoded[train], X[val], y_encoded[val],
            epoch_callback=self._report_epoch if self.verbose else None,
        )
        outputs = population_outputs(result.coefs, result.intercepts, spec.activations, config, X[val])
        scores, score_time = score_population(
            outputs, X[val], y[val], y_encoded[val], task=self._task, scorer=scorer,
            classes=getattr(self, "classes_", None), failed=result.diverged,
        )
        self._store_search(population, result, scores, score_time, seed)
        return self

    def _store_search(self, population, result, scores, score_time, seed):
        n_models = population.n_models
        failed = np.isnan(scores)
        warn_failed(result.diverged | failed, n_models)
        if failed.all():
            raise ValueError(
                f"All {n_models} models failed (diverged or could not be scored); try "
                f"smaller learning rates or scale the input features."
            )
        not_converged = int(np.sum(~result.converged & ~failed))
        if not_converged:
            warnings.warn(
                f"{not_converged} of {n_models} models reached max_iter={self.max_iter} "
                f"without converging; consider increasing max_iter.",
                ConvergenceWarning,
            )
        self.cv_results_ = build_cv_results(
            population, scores[:, None], fit_time=result.train_time, score_time=score_time
        )
        self.n_models_ = n_models
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = self.cv_results_["params"][self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        self.scorer_ = check_scoring(self, self.scoring)
        self.loss_curves_ = result.loss_curves
        self.validation_scores_ = result.validation_scores
        self.n_iter_ = result.n_iter
        self._coefs, self._intercepts = result.coefs, result.intercepts
        self._seed = seed
        if self.refit:
            self.best_estimator_ = self.export_model(self.best_index_)

    def _report_epoch(self, epoch, info):
        active = info["active"]
        line = f"epoch {epoch + 1}: {int(active.sum())} models training"
        if active.any():
            line += f", mean loss {np.nanmean(info['loss'][active]):.5f}"
        if info["val_score"] is not None:
            line += f", best validation score {np.nanmax(info['val_score']):.4f}"
        print(line)

    # --------------------------------------------------------------- models
    def export_model(self, index):
        """Return model ``index`` (a row of ``cv_results_``) as a standalone estimator.

        Parameters
        ----------
        index : int
            Row of ``cv_results_``.

        Returns
        -------
        SingleMLPClassifier or SingleMLPRegressor
            Fitted with that model's trained weights; needs nothing of the
            population, pickles anywhere.
        """
        check_is_fitted(self)
        if not isinstance(index, Integral) or not 0 <= index < self.n_models_:
            raise ValueError(f"index must be an int in [0, {self.n_models_}); got {index!r}.")
        model = self._single_class(
            **self.cv_results_["params"][index],
            repeat=int(self.cv_results_["param_repeat"][index]),
            random_state=self._seed,
            **{name: getattr(self, name) for name in TRAINING_PARAMS},
        )
        model.coefs_ = [c.copy() for c in self._coefs[index]]
        model.intercepts_ = [b.copy() for b in self._intercepts[index]]
        model.n_iter_ = int(self.n_iter_[index])
        model.loss_curve_ = list(self.loss_curves_[index, : model.n_iter_])
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
