"""ParallelMLPRegressor: a whole MLP search space, trained fused."""

from sklearn.base import RegressorMixin

from ._base import BaseParallelMLP, SearchScoreMixin
from ._docstrings import ATTRIBUTES, PARAMETERS
from ._ensemble import MLPEnsembleRegressor
from ._single import SingleMLPRegressor
from ._targets import RegressorTargetsMixin


class ParallelMLPRegressor(RegressorTargetsMixin, SearchScoreMixin, RegressorMixin, BaseParallelMLP):
    __doc__ = (
        """Train a whole search space of MLP regressors at once.

    Every combination of ``hidden_layer_sizes`` x ``activation`` x
    ``learning_rate_init`` x ``alpha``, times ``n_repeats``, is trained as
    one fused PyTorch network (squared-error loss, single or multi-output);
    the best model on held-out validation data predicts.

    Parameters
    ----------"""
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
    _ensemble_class = MLPEnsembleRegressor

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
