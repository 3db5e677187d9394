"""Standalone fitted MLPs: what ``best_estimator_`` and ``export_model`` return.

A :class:`SingleMLPClassifier` or :class:`SingleMLPRegressor` holds one
model's weights as numpy arrays and needs nothing of the population it came
from. Its parameters are that model's hyperparameters, so ``fit`` retrains
exactly that model alone (same initial weights, same batch order) on the
data it is given.
"""

import dataclasses
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _export
from ._attributes import MLP_ATTRIBUTES, continued_attributes, mlp_attributes, warm_start_weights
from ._compat import Interval, StrOptions, _fit_context, check_sample_weight, validate_data
from ._divergence import lone_model_divergence
from ._engine import ACTIVATION_NAMES, canonical_activation, mlp_forward, train_population
from ._params import TRAINING_CONSTRAINTS, resolve_seed, train_config, uses_early_stopping, warn_batch_size
from ._population import OPTIMIZER_PARAMS, Population, architectures
from ._scoring import warn_halted
from ._splits import SplitSettings, validation_split
from ._targets import CLASS_WEIGHT_CONSTRAINTS, CLASS_WEIGHT_DOC, ClassifierTargetsMixin, RegressorTargetsMixin

_SPARSE = ["csr", "csc", "coo"]

#: Everything ``fit`` sets: validating the data sets the last four before
#: training, so a failed fit puts all of them back as they were.
_FITTED_ATTRIBUTES = (*MLP_ATTRIBUTES, "n_features_in_", "feature_names_in_", "classes_")


def dense(X):
    """Sparse input is accepted and densified, as the fused engine is dense."""
    return X.toarray() if hasattr(X, "toarray") else X


class _BaseSingleMLP(BaseEstimator):
    _parameter_constraints = {
        "hidden_layer_sizes": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "activation": [StrOptions(set(ACTIVATION_NAMES))],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "repeat": [Interval(Integral, 0, None, closed="left")],
        **TRAINING_CONSTRAINTS,
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        learning_rate_init=0.001,
        alpha=0.0001,
        batch_size="auto",
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        tol=1e-4,
        n_iter_no_change=10,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        early_stopping=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        repeat=0,
        dtype="float32",
        device="auto",
        random_state=None,
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
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.early_stopping = early_stopping
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.monitor = monitor
        self.repeat = repeat
        self.dtype = dtype
        self.device = device
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

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
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in the loss (and the L2 divisor), as scikit-learn's
            MLP.

        Returns
        -------
        self : object
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
        X, y = validate_data(
            self, X, y, accept_sparse=_SPARSE, dtype=(np.float64, np.float32),
            # classifiers take multilabel indicator matrices, as MLPClassifier
            multi_output=True, y_numeric=self._task == "regression",
        )
        X = dense(X)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        archs = architectures(self.hidden_layer_sizes)
        if len(archs) != 1:
            raise ValueError(
                f"hidden_layer_sizes must be one architecture (an int or a sequence of ints, "
                f"e.g. (100, 50)); got {self.hidden_layer_sizes!r}."
            )
        arch = archs[0]
        y, y_encoded, n_outputs, task = self._encode_targets(y)
        seed = resolve_seed(self.random_state)
        population = Population(
            params=[{
                "hidden_layer_sizes": arch,
                "activation": self.activation,
                "learning_rate_init": self.learning_rate_init,
                "alpha": self.alpha,
                # its own optimizer, as the search gave it to the model
                **{name: getattr(self, name) for name in OPTIMIZER_PARAMS},
            }],
            repeats=np.array([self.repeat]),
        )
        config = train_config(self, task=task, n_outputs=n_outputs, seed=seed, X_dtype=X.dtype)
        rows = np.arange(X.shape[0])
        # with early stopping, a validation part watched as the search does
        early = uses_early_stopping(self)
        folds = [validation_split(SplitSettings.of(self), rows, y_encoded, seed) if early else (rows, None)]
        warn_batch_size(self.batch_size, len(folds[0][0]))
        spec = population.spec(seed)
        # warm_start: the previous fit's weights instead of fresh ones; the
        # optimizer and the stopping rule start afresh, as scikit-learn's fit
        warm = warm_start_weights(self, arch, X.shape[1], n_outputs)
        if warm is not None:
            spec = dataclasses.replace(spec, initial_weights=[warm])
        result = train_population(
            spec, config, X, y_encoded, folds, sample_weight=self._training_weight(y, sample_weight),
        )
        warn_halted(result, "the model")
        lone_model_divergence(result)  # as scikit-learn's MLP: non-finite weights raise
        n_iter = int(result.n_iter[0, 0])
        scores = result.validation_scores
        fitted = mlp_attributes(
            result.coefs[0][0], result.intercepts[0][0], loss_curve=result.loss_curves[0, 0, :n_iter],
            validation_curve=None if scores is None else scores[0, 0, :n_iter], n_train=len(folds[0][0]),
            out_activation=self._out_activation(), early_stopping=self.early_stopping,
        )
        if warm is not None:
            fitted = continued_attributes(vars(self), fitted)
        vars(self).update(fitted)
        return self

    def _outputs(self, X):
        check_is_fitted(self)
        X = dense(validate_data(self, X, accept_sparse=_SPARSE, reset=False))
        return mlp_forward(
            self.coefs_, self.intercepts_, canonical_activation(self.activation), X,
            out_activation="exp" if self._out_activation() == "exp" else "identity",
        )

    def predict(self, X):
        """Predict with this model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        return self._labels_from_outputs(self._outputs(X))

    def to_sklearn(self):
        """Return this model as a fitted scikit-learn MLP predicting the same.

        Only the activations scikit-learn's MLP has can be converted:
        identity, logistic (sigmoid), tanh and relu. A binary classifier's
        two softmax outputs become scikit-learn's single logistic output
        (same probabilities).

        Returns
        -------
        sklearn.neural_network.MLPClassifier or MLPRegressor
            Fitted: ``predict``, ``predict_proba`` and ``score`` give this
            model's results.

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
            weights; it outputs the logits (classifiers, one per class) or
            the predictions (regressors), of shape ``(n_samples, n_outputs)``.

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


class SingleMLPClassifier(ClassifierTargetsMixin, ClassifierMixin, _BaseSingleMLP):
    __doc__ = """One fitted MLP classifier, standalone.

    Returned by :meth:`ParallelMLPClassifier.export_model` and as
    ``best_estimator_``. Its parameters are the model's hyperparameters and
    the training settings of the search it came from; ``fit`` retrains the
    same model alone (same initial weights and batch order for the same
    ``random_state`` and ``repeat``).

    Parameters
    ----------
    hidden_layer_sizes : int or array-like of int, default=(100,)
        Widths of the hidden layers: ``(100, 50)`` or ``[100, 50]`` is two
        hidden layers, as in scikit-learn's MLP.
    activation : str, default="relu"
        Hidden activation, one of identity, logistic (sigmoid), tanh, relu,
        elu, selu, gelu, leaky_relu, hardshrink, mish.
    solver : {"adam", "sgd", "lbfgs"}, default="adam"
        ``"lbfgs"`` is full-batch L-BFGS as scikit-learn's MLP (scipy's
        L-BFGS-B): ``max_iter`` counts iterations, ``tol`` is the gradient
        tolerance, ``early_stopping`` is ignored.
    learning_rate_init : float, default=0.001
    alpha : float, default=0.0001
        L2 penalty, as in scikit-learn's MLP.
    batch_size : int or "auto", default="auto"
        ``"auto"`` is ``min(200, n_samples)``; a larger int is clipped to
        the training rows, with scikit-learn's warning.
    shuffle : bool, default=True
        Shuffle the training rows every epoch (else batches take them in
        order), as scikit-learn's MLP.
    max_iter : int, default=200
        Maximum number of epochs (iterations with ``solver="lbfgs"``).
    max_fun : int, default=15000
        ``solver="lbfgs"`` only: most loss evaluations, as scikit-learn's MLP.
    tol : float, default=1e-4
    n_iter_no_change : int or np.inf, default=10
        Training stops when the loss has not improved by ``tol`` for more
        than ``n_iter_no_change`` epochs (``np.inf``: never, it trains
        ``max_iter`` epochs).
    momentum : float, default=0.9
        SGD momentum.
    nesterovs_momentum : bool, default=True
    beta_1, beta_2 : float, default=0.9 and 0.999
        Adam's decay rates of the first and second moment estimates.
    epsilon : float, default=1e-8
        Adam's numerical stability term.
    learning_rate : {"constant", "invscaling", "adaptive"}, default="constant"
        SGD's learning-rate schedule, as scikit-learn's MLP.
    power_t : float, default=0.5
        The ``"invscaling"`` exponent.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows (stratified for
        classifiers), stop when the validation score has not improved by
        ``tol`` for more than ``n_iter_no_change`` epochs, and keep the best
        weights.
    warm_start : bool, default=False
        Reuse the solution of the previous call to fit as initialization,
        as scikit-learn's MLP: training starts from the previous fit's
        ``coefs_`` and ``intercepts_`` instead of fresh initial weights; the
        optimizer and the stopping rule start afresh, ``n_iter_`` counts
        this fit's epochs, ``loss_curve_`` and ``validation_scores_`` go on
        from the previous fit's. The layer sizes and the classes must be the
        previous fit's.
    validation_fraction : float, default=0.1
    monitor : {"score", "loss"}, default="score"
        What early stopping watches: the validation accuracy / R^2, or the
        validation loss.
    repeat : int, default=0
        Repeat index; with ``random_state`` it selects the initial weights.
    dtype : {"float32", "float64", "auto"}, default="float32"
        Training precision and the dtype of the trained weights; ``"auto"``
        is X's dtype, as scikit-learn's MLP. Predictions are computed in
        the wider of X's and the weights' dtypes, as scikit-learn's MLP.
    device : str, default="auto"
        Torch device for training; ``"auto"`` picks CUDA when available.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels; for a multilabel model, ``arange(n_labels)`` (the
        columns of the indicator matrix), as scikit-learn's MLP.
    out_activation_ : {"softmax", "logistic"}
        Output activation: softmax over the classes (binary and multiclass
        ``y``) or one sigmoid per label (a multilabel indicator ``y``, whose
        predictions are indicator matrices).
    coefs_ : list of ndarray of shape (fan_in, fan_out)
    intercepts_ : list of ndarray of shape (fan_out,)
    n_iter_ : int
        Epochs trained.
    loss_ : float
        Training loss (L2 term included) of the last epoch.
    loss_curve_ : list of float
        Training loss of every epoch.
    best_loss_ : float or None
        Lowest training loss; None with ``early_stopping``, as
        scikit-learn.
    validation_scores_ : list of float or None
        Per-epoch validation score (accuracy / R^2, or the negated loss
        with ``monitor="loss"``) with ``early_stopping``, else None.
    best_validation_score_ : float or None
        The best of ``validation_scores_`` (its weights are the model's),
        None without ``early_stopping``.
    t_ : int
        Training samples seen: ``n_iter_`` times the training rows.
    n_layers_ : int
        Layers, input and output included.
    n_outputs_ : int
        Output units: one per class (also for two classes, where
        scikit-learn's MLP has a single logistic unit) or per target.
    out_activation_ : str
        "softmax" (classifiers), "identity" or "exp" (regressors).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has string feature names.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import SingleMLPClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SingleMLPClassifier((16,), "tanh", learning_rate_init=0.01,
    ...                           random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """.replace(
        "    batch_size : int", CLASS_WEIGHT_DOC + "    batch_size : int", 1
    )

    _parameter_constraints = {**_BaseSingleMLP._parameter_constraints, **CLASS_WEIGHT_CONSTRAINTS}

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        learning_rate_init=0.001,
        alpha=1e-4,
        class_weight=None,
        batch_size="auto",
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        tol=1e-4,
        n_iter_no_change=10,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        early_stopping=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        repeat=0,
        dtype="float32",
        device="auto",
        random_state=None,
    ):
        super().__init__(
            hidden_layer_sizes=hidden_layer_sizes, activation=activation, solver=solver,
            learning_rate_init=learning_rate_init, alpha=alpha, batch_size=batch_size,
            shuffle=shuffle, max_iter=max_iter, max_fun=max_fun, tol=tol, n_iter_no_change=n_iter_no_change,
            momentum=momentum,
            nesterovs_momentum=nesterovs_momentum, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
            learning_rate=learning_rate, power_t=power_t, early_stopping=early_stopping, warm_start=warm_start,
            validation_fraction=validation_fraction, monitor=monitor, repeat=repeat, dtype=dtype,
            device=device, random_state=random_state,
        )
        self.class_weight = class_weight

    def predict_proba(self, X):
        """Class probabilities (softmax of the outputs), or for a multilabel
        model each label's probability (sigmoid of its output).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples, n_labels)
        """
        return self._proba_from_outputs(self._outputs(X))

    def predict_log_proba(self, X):
        """Log of the class probabilities (log-softmax of the outputs, exact
        where the probabilities underflow; log-sigmoid per label for a
        multilabel model), as ``MLPClassifier``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._log_proba_from_outputs(self._outputs(X))


class SingleMLPRegressor(RegressorTargetsMixin, RegressorMixin, _BaseSingleMLP):
    """One fitted MLP regressor, standalone.

    Returned by :meth:`ParallelMLPRegressor.export_model` and as
    ``best_estimator_``. Parameters and attributes are those of
    :class:`SingleMLPClassifier`, without ``classes_``, plus ``loss``: half
    the mean squared error, or the half Poisson deviance with an
    exponential output, as in scikit-learn's MLPRegressor.

    Parameters
    ----------
    loss : {"squared_error", "poisson"}, default="squared_error"
        ``"poisson"`` predicts ``exp`` of the last layer and needs
        non-negative targets; it trains on the torch path (the native
        kernel has squared error only).
    **others :
        As :class:`SingleMLPClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from skpmlp import SingleMLPRegressor
    >>> X = np.linspace(-1, 1, 50).reshape(-1, 1)
    >>> reg = SingleMLPRegressor((8,), "tanh", random_state=0).fit(X, X[:, 0] ** 2)
    >>> reg.predict(X).shape
    (50,)
    """

    _parameter_constraints = {
        **_BaseSingleMLP._parameter_constraints,
        "loss": [StrOptions({"squared_error", "poisson"})],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        loss="squared_error",
        solver="adam",
        learning_rate_init=0.001,
        alpha=0.0001,
        batch_size="auto",
        shuffle=True,
        max_iter=200,
        max_fun=15000,
        tol=1e-4,
        n_iter_no_change=10,
        momentum=0.9,
        nesterovs_momentum=True,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        learning_rate="constant",
        power_t=0.5,
        early_stopping=False,
        warm_start=False,
        validation_fraction=0.1,
        monitor="score",
        repeat=0,
        dtype="float32",
        device="auto",
        random_state=None,
    ):
        super().__init__(
            hidden_layer_sizes, activation, solver=solver, learning_rate_init=learning_rate_init,
            alpha=alpha, batch_size=batch_size, shuffle=shuffle, max_iter=max_iter, max_fun=max_fun, tol=tol,
            n_iter_no_change=n_iter_no_change, momentum=momentum,
            nesterovs_momentum=nesterovs_momentum, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
            learning_rate=learning_rate, power_t=power_t, early_stopping=early_stopping, warm_start=warm_start,
            validation_fraction=validation_fraction, monitor=monitor, repeat=repeat, dtype=dtype,
            device=device, random_state=random_state,
        )
        self.loss = loss

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
