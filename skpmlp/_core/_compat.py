"""The one place where scikit-learn's private or version-dependent API is used.

Every other skpmlp module takes such names from here, so a change in
scikit-learn's internals is mended in this file alone
(``tests/core/test_compat.py`` checks that no other module imports a private
scikit-learn module or name, or touches the private attributes below).
"""

from functools import lru_cache
from inspect import signature

import numpy as np
from sklearn.base import _fit_context  # noqa: F401  (sklearn >= 1.3)
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions  # noqa: F401
from sklearn.utils.validation import _check_sample_weight as check_sample_weight  # noqa: F401
from sklearn.utils.validation import validate_data  # noqa: F401  (sklearn >= 1.6)


@lru_cache(maxsize=None)
def get_param_names(estimator_class):
    """The constructor parameter names of an estimator class, sorted
    (``BaseEstimator._get_param_names``), as a tuple.

    Cached per class: scikit-learn reads the constructor's signature on
    every call (``inspect.signature``, about 0.25 ms), and a search's refit
    asks it for every model it exports."""
    return tuple(estimator_class._get_param_names())


def scorer_accepts_sample_weight(scorer):
    """Whether GridSearchCV would pass ``sample_weight`` to ``scorer``: a
    scikit-learn scorer says so (``_accept_sample_weight``, from its metric's
    signature), any other callable by its own signature."""
    accept = getattr(scorer, "_accept_sample_weight", None)
    if callable(accept):
        return bool(accept())
    return "sample_weight" in signature(scorer).parameters


def validate_params(estimator):
    """Check ``estimator``'s parameters against its ``_parameter_constraints``
    (``BaseEstimator._validate_params``, what ``_fit_context`` runs)."""
    estimator._validate_params()


def set_mlp_fitted_private_state(mlp, *, classes, coefs, intercepts, multilabel=False):
    """Set the private fitted state scikit-learn's MLP reads besides its
    public attributes.

    Parameters
    ----------
    mlp : MLPClassifier or MLPRegressor
    classes : ndarray or None
        Class labels of a classifier (its ``_label_binarizer`` is fitted on
        them), None for a regressor.
    multilabel : bool, default=False
        The classifier is multilabel: its binarizer is fitted on an
        indicator matrix of ``len(classes)`` labels.
    coefs, intercepts : list of ndarray
        The weights, also kept as the "best" ones ``partial_fit`` and early
        stopping start from.
    """
    if multilabel:
        # an identity indicator matrix has every label: scikit-learn's
        # fitted multilabel binarizer (classes_ = arange(n_labels))
        mlp._label_binarizer = LabelBinarizer().fit(np.eye(len(classes), dtype=int))
    elif classes is not None:
        # fitting the binarizer on the classes alone gives the fitted one
        # scikit-learn would hold (binary or multiclass, same class order)
        mlp._label_binarizer = LabelBinarizer().fit(classes)
    mlp._no_improvement_count = 0
    mlp._best_coefs = [W.copy() for W in coefs]
    mlp._best_intercepts = [b.copy() for b in intercepts]
