"""ParallelMLPRegressor: a whole MLP search space, trained fused."""

import numpy as np
from sklearn.base import RegressorMixin

from .._core._params import parameter_constraints, parameter_entries, store_params
from .._core._targets import RegressorTargetsMixin
from ._base import BaseParallelMLP, SearchScoreMixin
from ._docstrings import class_docstring, search_attributes
from ._ensemble import MLPEnsembleRegressor
from ._single import SingleMLPRegressor


class ParallelMLPRegressor(RegressorTargetsMixin, SearchScoreMixin, RegressorMixin,
                           BaseParallelMLP):
    __doc__ = class_docstring(
        "Train a whole search space of MLP regressors at once.",
        """\
    Every combination of ``hidden_layer_sizes`` x ``activation`` x
    ``learning_rate_init`` x ``alpha`` (and of any other searchable
    parameter given a list, see ``param_grid``), or ``n_models``
    configurations drawn from them (any of them a distribution, as in
    RandomizedSearchCV), times ``n_repeats``, is trained as one fused
    PyTorch network (squared error or Poisson loss, single or
    multi-output); the best model on held-out validation data predicts.""",
        parameters=parameter_entries("search", "regressor"),
        attributes=search_attributes("regressor", "SingleMLPRegressor"),
        see_also=[("ParallelMLPClassifier", "The same search for classification."),
                  ("SingleMLPRegressor", "One standalone model.")],
        examples="""\
    >>> import numpy as np
    >>> from skpmlp import ParallelMLPRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(200, 3))
    >>> y = X[:, 0] ** 2 + X[:, 1]
    >>> search = ParallelMLPRegressor([(16,), (32,)], "tanh", max_iter=50,
    ...                               random_state=0).fit(X, y)
    >>> search.n_models_  # 2 learning rates x 2 input transforms (the defaults)
    8""",
    )

    _single_class = SingleMLPRegressor
    _ensemble_class = MLPEnsembleRegressor
    _parameter_constraints = parameter_constraints("search", "regressor")

    def __init__(
        self,
        hidden_layer_sizes=None,
        activation=("relu", "tanh"),
        *,
        loss="squared_error",
        target_transform="standard",
        solver="adam",
        learning_rate_init=(0.003, 0.01),
        alpha=0.0001,
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
