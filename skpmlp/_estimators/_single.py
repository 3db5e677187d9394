"""Standalone fitted MLPs: what ``best_estimator_`` and ``export_model`` return.

A :class:`SingleMLPClassifier` or :class:`SingleMLPRegressor` holds one
model's weights as numpy arrays and needs nothing of the population it came
from. Its parameters are that model's hyperparameters, so ``fit`` retrains
exactly that model alone (same initial weights, same batch order) on the
data it is given: a population of one, trained through the search's own
training entry (:func:`~skpmlp._search._inputs.train_by_input`).
"""

import dataclasses

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._core._attributes import (
    MLP_ATTRIBUTES,
    continued_attributes,
    mlp_attributes,
    warm_start_weights,
)
from .._core._checks import architectures
from .._core._compat import _fit_context, validate_data
from .._core._data import SPARSE, SparseInputMixin, dense, validated_data
from .._core._params import (
    OPTIMIZER_DEFAULTS,
    OPTIMIZER_PARAMS,
    parameter_constraints,
    parameter_entries,
    store_params,
)
from .._core._targets import ClassifierTargetsMixin, RegressorTargetsMixin
from .._core._transforms import fit_input_transform, transformed
from .._core._values import resolve_seed, uses_early_stopping
from .._engine import canonical_activation, mlp_forward
from .._execution._training import Execution
from .._search._failures import lone_model_divergence, warn_halted
from .._search._inputs import train_by_input
from .._search._population import Population
from .._search._settings import check_dropout, train_config, warn_batch_size
from .._search._splits import SplitSettings, validation_split
from . import _export
from ._docstrings import class_docstring, single_attributes

#: Everything ``fit`` sets: validating the data sets the last four before
#: training, so a failed fit puts all of them back as they were.
_FITTED_ATTRIBUTES = (*MLP_ATTRIBUTES, "input_transform_", "n_features_in_", "feature_names_in_",
                      "classes_")

#: A standalone model trains alone in its process, one in-process run.
_ALONE = Execution(data_parallel=False)


class _BaseSingleMLP(SparseInputMixin, BaseEstimator):
    """Base class of the standalone models; see SingleMLPClassifier.

    Subclasses give ``_parameter_constraints`` (from the parameter table)
    and an ``__init__`` whose signature follows the table.
    """

    def __sklearn_is_fitted__(self):
        # validation sets n_features_in_ (and classes_) before training:
        # only trained weights make a model that can predict
        return hasattr(self, "coefs_")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train this one model alone on all of ``(X, y)``.

        A fit that raises (or is interrupted in its first epoch) leaves the
        model as it was before: unfitted, or with its previous fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is densified.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Class labels (a 2-D 0/1 indicator matrix for multilabel
            classification) or regression targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in the loss (and the L2 divisor), as scikit-learn's
            MLP.

        Returns
        -------
        self : object
            The fitted model.
        """
        previous = {name: vars(self)[name] for name in _FITTED_ATTRIBUTES if name in vars(self)}
        try:
            return self._fit(X, y, sample_weight)
        except BaseException:
            for name in _FITTED_ATTRIBUTES:
                vars(self).pop(name, None)
            vars(self).update(previous)
            raise

    def _fit(self, X, y, sample_weight):
        """:meth:`fit`'s work: validate, train, set the fitted attributes."""
        X, y, y_encoded, sample_weight, n_outputs, task = validated_data(self, X, y, sample_weight)
        arch = self._architecture()
        check_dropout([{"solver": [self.solver], "dropout": [self.dropout]}])
        seed = resolve_seed(self.random_state)
        config = train_config(self, task=task, n_outputs=n_outputs, seed=seed, X_dtype=X.dtype)
        rows = np.arange(X.shape[0])
        # with early stopping, a validation part watched as the search does
        early = uses_early_stopping(self)
        folds = [(rows, None)]
        if early:
            folds = [validation_split(SplitSettings.of(self), rows, y_encoded, seed)]
        warn_batch_size(self.batch_size, len(folds[0][0]))
        spec = self._population(arch).spec(seed)
        # warm_start: the previous fit's weights instead of fresh ones; the
        # optimizer and the stopping rule start afresh, as scikit-learn's fit
        warm = warm_start_weights(self, arch, X.shape[1], n_outputs)
        if warm is not None:
            spec = dataclasses.replace(spec, initial_weights=[warm])
        # fitted on every row given, as a Pipeline's step (an early-stopping
        # part included: it is the model's own)
        transform = fit_input_transform(self.input_transform, X)
        # the targets' scaling too: trained scaled, folded back into the weights
        weight = self._training_weight(y, sample_weight)
        targets = self._target_scaling(y_encoded, weight)
        result, _ = train_by_input(
            spec, [self.input_transform], lambda value: [transformed(transform, X)], config, X,
            y_encoded, folds, _ALONE, sample_weight=weight,
            targets=None if targets is None else [targets],
        )
        warn_halted(result, "the model")
        lone_model_divergence(result)  # as scikit-learn's MLP: non-finite weights raise
        n_iter = int(result.n_iter[0, 0])
        scores = result.validation_scores
        fitted = mlp_attributes(
            result.coefs[0][0], result.intercepts[0][0],
            loss_curve=result.loss_curves[0, 0, :n_iter],
            validation_curve=None if scores is None else scores[0, 0, :n_iter],
            n_train=len(folds[0][0]),
            out_activation=self._out_activation(), early_stopping=self.early_stopping,
        )
        if warm is not None:
            fitted = continued_attributes(vars(self), fitted)
        vars(self).update(fitted, input_transform_=transform)
        return self

    def _architecture(self):
        """The one architecture ``hidden_layer_sizes`` describes.

        Raises
        ------
        ValueError
            If it describes several.
        """
        archs = architectures(self.hidden_layer_sizes)
        if len(archs) != 1:
            raise ValueError(
                f"hidden_layer_sizes must be one architecture (an int or a sequence of ints, "
                f"e.g. (100, 50)); got {self.hidden_layer_sizes!r}."
            )
        return archs[0]

    def _population(self, arch):
        """The population of this one model (its own optimizer, as the
        search gave it to the model)."""
        params = {
            "hidden_layer_sizes": arch,
            "activation": self.activation,
            "learning_rate_init": self.learning_rate_init,
            "alpha": self.alpha,
            # an optimizer parameter of the other task (label_smoothing) has its default
            **{name: getattr(self, name, OPTIMIZER_DEFAULTS[name]) for name in OPTIMIZER_PARAMS},
        }
        return Population(params=[params], repeats=np.array([self.repeat]))

    def _outputs(self, X):
        check_is_fitted(self)
        X = dense(validate_data(self, X, accept_sparse=SPARSE, reset=False))
        # a model saved before input_transform existed has none
        X = transformed(getattr(self, "input_transform_", None), X)
        return mlp_forward(
            self.coefs_, self.intercepts_, canonical_activation(self.activation), X,
            out_activation="exp" if self._out_activation() == "exp" else "identity",
        )

    def predict(self, X):
        """Predict with this model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to predict; sparse input is densified.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Predicted labels (an indicator matrix for a multilabel model) or
            values.
        """
        return self._labels_from_outputs(self._outputs(X))

    def to_sklearn(self):
        """Return this model as a fitted scikit-learn MLP predicting the same.

        Only the activations scikit-learn's MLP has can be converted:
        identity, logistic (sigmoid), tanh and relu. A binary classifier's
        two softmax outputs become scikit-learn's single logistic output
        (same probabilities). A fitted MLP is its weights: what
        scikit-learn's parameters cannot say of the training
        (``label_smoothing``, ``warmup_fraction``, ``dropout``, which acts
        while training only; a ``learning_rate`` of ``"cosine"`` or
        ``"coslog4"``, kept, which scikit-learn's own ``fit`` refuses)
        changes nothing it predicts. A ``diagonal_scaling`` model's scale
        is already folded into ``coefs_[0]``: the MLP has the same weights.

        Returns
        -------
        sklearn.neural_network.MLPClassifier, MLPRegressor or Pipeline
            Fitted: ``predict``, ``predict_proba`` and ``score`` give this
            model's results. With an ``input_transform``, a fitted
            ``Pipeline([("input_transform", transform), ("mlp", mlp)])``
            of a copy of the model's fitted transform and the MLP (a
            model with ``input_transform="none"`` gives the MLP alone).

        Raises
        ------
        ValueError
            If the activation is not one of scikit-learn's.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from skpmlp import SingleMLPClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = SingleMLPClassifier((8,), "tanh", max_iter=20, random_state=0).fit(X, y)
        >>> mlp = clf.to_sklearn()
        >>> type(mlp).__name__
        'MLPClassifier'
        >>> bool((mlp.predict(X) == clf.predict(X)).all())
        True
        """
        return _export.to_sklearn(self)

    def to_torch(self, dtype=torch.float32):
        """Return this model as a ``torch.nn.Sequential``.

        Parameters
        ----------
        dtype : torch.dtype, default=torch.float32
            Dtype of the module's parameters.

        Returns
        -------
        torch.nn.Sequential
            ``Linear, activation, ..., Linear`` with copies of the trained
            weights; with an ``input_transform``, a first module computes
            it on the raw input (``Standardize``: ``(x - mean) / scale``,
            or ``RobustSmoothClip``: ``z / sqrt(1 + (z / 3) ** 2)`` with
            ``z = factor * (x - center)``; the fitted statistics are
            buffers, not folded into the first layer's weights), so the
            module takes what ``predict`` takes (a ``diagonal_scaling``
            model's scale is in the first Linear's weights, as in
            ``coefs_``). Its output is the model's
            raw output: class logits (one
            per class, also for two classes; apply a softmax for
            probabilities) or the regression predictions (for
            ``loss="poisson"``, their log: apply ``exp``), of shape
            ``(n_samples, n_outputs)``. It holds no ``nn.Dropout``
            module, whatever the model's ``dropout`` (which acted while it
            trained only): train and eval mode compute the same; insert
            ``torch.nn.Dropout(model.dropout)`` after each activation to
            fine-tune it as it trained.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the model is not fitted.

        Examples
        --------
        >>> import torch
        >>> from sklearn.datasets import load_iris
        >>> from skpmlp import SingleMLPClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> clf = SingleMLPClassifier((8,), "gelu", max_iter=20, random_state=0).fit(X, y)
        >>> net = clf.to_torch(dtype=torch.float64)
        >>> net(torch.as_tensor(X)).shape
        torch.Size([150, 3])
        """
        return _export.to_torch(self, dtype=dtype)



_EXAMPLE_CLASSIFIER = """\
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import SingleMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SingleMLPClassifier((16,), "tanh", learning_rate_init=0.01,
    ...                           random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)"""

_EXAMPLE_REGRESSOR = """\
    >>> import numpy as np
    >>> from skpmlp import SingleMLPRegressor
    >>> X = np.linspace(-1, 1, 50).reshape(-1, 1)
    >>> reg = SingleMLPRegressor((8,), "tanh", random_state=0).fit(X, X[:, 0] ** 2)
    >>> reg.predict(X).shape
    (50,)"""

_RETRAINS = """\
    Returned by ``export_model`` and as ``best_estimator_`` of a search.
    Its parameters are the model's hyperparameters and the training
    settings of the search it came from; ``fit`` retrains the same model
    alone (same initial weights and batch order for the same
    ``random_state`` and ``repeat``)."""


class SingleMLPClassifier(ClassifierTargetsMixin, ClassifierMixin, _BaseSingleMLP):
    __doc__ = class_docstring(
        "One fitted MLP classifier, standalone.", _RETRAINS,
        parameters=parameter_entries("single", "classifier"),
        attributes=single_attributes("classifier"),
        see_also=[("ParallelMLPClassifier", "The search whose models these are.")],
        examples=_EXAMPLE_CLASSIFIER,
    )

    _parameter_constraints = parameter_constraints("single", "classifier")

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        learning_rate_init=0.001,
        alpha=0.0001,
        class_weight=None,
        batch_size="auto",
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        early_stopping=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        n_iter_no_change=10,
        tol=0.0001,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        amsgrad=False,
        warmup_fraction=0.0,
        label_smoothing=0.0,
        diagonal_scaling=False,
        dropout=0.0,
        input_transform="none",
        repeat=0,
        dtype="float32",
        device="auto",
        random_state=None,
    ):
        store_params(self, locals())

    def predict_proba(self, X):
        """Predict class probabilities: the softmax of the outputs.

        For a multilabel model, each label's probability (the sigmoid of its output).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples whose class probabilities are computed.

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
            The probability of every class (every label), rows in ``X``'s order.
        """
        return self._proba_from_outputs(self._outputs(X))

    def predict_log_proba(self, X):
        """Predict the log of the class probabilities: the log-softmax of the outputs.

        Exact where the probabilities underflow; for a multilabel model the
        log of :meth:`predict_proba`, as ``MLPClassifier``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples whose class log-probabilities are computed.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The log-probability of every class.
        """
        return self._log_proba_from_outputs(self._outputs(X))



class SingleMLPRegressor(RegressorTargetsMixin, RegressorMixin, _BaseSingleMLP):
    __doc__ = class_docstring(
        "One fitted MLP regressor, standalone.", _RETRAINS,
        parameters=parameter_entries("single", "regressor"),
        attributes=single_attributes("regressor"),
        see_also=[("ParallelMLPRegressor", "The search whose models these are.")],
        examples=_EXAMPLE_REGRESSOR,
    )

    _parameter_constraints = parameter_constraints("single", "regressor")

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        loss="squared_error",
        target_transform="none",
        solver="adam",
        learning_rate_init=0.001,
        alpha=0.0001,
        batch_size="auto",
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        early_stopping=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        n_iter_no_change=10,
        tol=0.0001,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        amsgrad=False,
        warmup_fraction=0.0,
        diagonal_scaling=False,
        dropout=0.0,
        input_transform="none",
        repeat=0,
        dtype="float32",
        device="auto",
        random_state=None,
    ):
        store_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
