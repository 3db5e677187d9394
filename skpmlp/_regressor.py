"""ParallelMLPRegressor: a whole MLP search space, trained fused."""

import numpy as np
from sklearn.base import RegressorMixin

from ._base import BaseParallelMLP, SearchScoreMixin
from ._compat import StrOptions
from ._docstrings import ATTRIBUTES, PARAMETERS
from ._ensemble import MLPEnsembleRegressor
from ._single import SingleMLPRegressor
from ._targets import RegressorTargetsMixin


class ParallelMLPRegressor(RegressorTargetsMixin, SearchScoreMixin, RegressorMixin, BaseParallelMLP):
    __doc__ = (
        """Train a whole search space of MLP regressors at once.

    Every combination of ``hidden_layer_sizes`` x ``activation`` x
    ``learning_rate_init`` x ``alpha`` (or ``n_models`` configurations drawn
    from them, any of them a distribution as in RandomizedSearchCV), times
    ``n_repeats``, is trained as one fused PyTorch network (squared error or
    Poisson loss, single or multi-output);
    the best model on held-out validation data predicts.

    Parameters
    ----------
    loss : {"squared_error", "poisson"}, default="squared_error"
        Loss of every model, as scikit-learn's MLPRegressor: half squared
        error, or the half Poisson deviance with an exponential output
        (log link; predictions are positive, targets must be
        non-negative). ``"poisson"`` trains on the torch path: the native
        kernel has squared error only."""
        + PARAMETERS.replace("<default_score>", "R^2")
        + """
    Attributes
    ----------"""
        + ATTRIBUTES.replace("<single>", "SingleMLPRegressor").replace("<default_score>", "R^2")
        + """
    See Also
    --------
    ParallelMLPClassifier : the same search for classification.
    SingleMLPRegressor : one standalone model.

    Examples
    --------
    >>> import numpy as np
    >>> from skpmlp import ParallelMLPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(200, 3))
    >>> y = X[:, 0] ** 2 + X[:, 1]
    >>> search = ParallelMLPRegressor([(16,), (32,)], "tanh", max_iter=50,
    ...                               random_state=0).fit(X, y)
    >>> search.n_models_
    6
    """
    )

    _single_class = SingleMLPRegressor
    _exported_params = (*BaseParallelMLP._exported_params, "loss")
    _ensemble_class = MLPEnsembleRegressor

    _parameter_constraints = {
        **BaseParallelMLP._parameter_constraints,
        "loss": [StrOptions({"squared_error", "poisson"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=None,
        activation=("relu", "tanh", "logistic"),
        *,
        loss="squared_error",
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
        super().__init__(
            hidden_layer_sizes, activation, solver=solver,
            learning_rate_init=learning_rate_init, alpha=alpha, batch_size=batch_size,
            shuffle=shuffle, max_iter=max_iter, max_fun=max_fun, n_repeats=n_repeats, n_models=n_models,
            param_grid=param_grid, early_stopping=early_stopping, warm_start=warm_start,
            validation_fraction=validation_fraction,
            monitor=monitor, n_iter_no_change=n_iter_no_change, tol=tol, momentum=momentum,
            nesterovs_momentum=nesterovs_momentum, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
            learning_rate=learning_rate, power_t=power_t, pruning=pruning,
            halving_factor=halving_factor, min_iter=min_iter, refill=refill, max_models=max_models,
            cv=cv, scoring=scoring,
            refit=refit, holdout_refit=holdout_refit, selection=selection,
            tie_breaker=tie_breaker, ensemble_size=ensemble_size, error_score=error_score,
            return_train_score=return_train_score, dtype=dtype, device=device, n_jobs=n_jobs,
            max_memory=max_memory, max_time=max_time, random_state=random_state, verbose=verbose
        )
        self.loss = loss

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
