"""Fitted MLPs and their ensembles as scikit-learn estimators or plain torch modules.

:func:`to_sklearn` hands a standalone model's weights to a fitted
:class:`~sklearn.neural_network.MLPClassifier` / ``MLPRegressor`` (after
its fitted input transform in a ``Pipeline``, where it has one), so code
that only knows scikit-learn can use it; :func:`to_torch` builds an
``nn.Sequential`` computing the same outputs (its input transform as a
first module), for deployment or further training in PyTorch. Both need
only the model's weights, activation and input transform.
An ensemble (:func:`ensemble_to_sklearn`, :func:`ensemble_to_torch`)
becomes a soft-voting ``VotingClassifier`` / ``VotingRegressor`` of its
members' conversions, or a :class:`WeightedAverage` module of them.
"""

import copy

import numpy as np
import torch
from sklearn.base import clone, is_classifier
from sklearn.ensemble import VotingClassifier, VotingRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import LabelEncoder, QuantileTransformer, StandardScaler
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from .._core._compat import get_param_names, set_mlp_fitted_private_state
from .._core._transforms import LIMIT, RobustSmoothClipScaler
from .._engine import TORCH_MODULES, canonical_activation

#: Hidden activations scikit-learn's MLP implements (its own names).
SKLEARN_ACTIVATIONS = ("identity", "logistic", "tanh", "relu")

#: Parameters both estimators have by name whose values do not carry over:
#: the architecture and activation are set from the weights, and a seed
#: draws different initial weights in scikit-learn.
UNMAPPED_PARAMS = ("hidden_layer_sizes", "activation", "random_state")


def _weights(model):
    """The model's layers as float64 copies: scikit-learn's MLP then
    predicts in float64 (its own dtype for float64 X) whatever X's dtype."""
    coefs = [np.array(W, dtype=np.float64) for W in model.coefs_]
    intercepts = [np.array(b, dtype=np.float64) for b in model.intercepts_]
    return coefs, intercepts


def _binary_output_layer(W, b):
    """Two softmax units as one logistic unit: ``sigmoid(z1 - z0) == softmax(z)[1]``."""
    return (W[:, 1] - W[:, 0])[:, None], np.array([b[1] - b[0]])


def _one_class_output_layer(W, b):
    """A one-class softmax (probability 1) as scikit-learn's one-class MLP
    has it: one logistic unit for the absent "other" label, whose
    probability is 0 (``predict_proba`` is then ``[[1, 0], ...]``)."""
    return np.zeros((W.shape[0], 1)), np.array([-np.inf])


def to_sklearn(model):
    """Return ``model`` as a fitted scikit-learn MLP predicting the same.

    Parameters
    ----------
    model : SingleMLPClassifier or SingleMLPRegressor
        A fitted standalone model whose activation scikit-learn implements
        (identity, logistic / sigmoid, tanh or relu).

    Returns
    -------
    MLPClassifier, MLPRegressor or Pipeline
        A model with an ``input_transform`` gives a fitted
        ``Pipeline([("input_transform", transform), ("mlp", mlp)])``: a
        copy of its fitted transform (which holds ``feature_names_in_``
        where the model does), then the MLP described here. The MLP:
        with the model's hyperparameters where scikit-learn has them and
        its trained weights (as float64). A binary classifier gets one
        logistic output unit, as scikit-learn's, whose probability equals
        the model's softmax (a one-class classifier, scikit-learn's
        one-class layout: a logistic unit of probability 0 for the absent
        label, so ``predict_proba``'s first column is the model's 1); a
        multilabel one keeps its logistic unit per
        label. The training record (``n_iter_``, ``loss_curve_``, ``loss_``,
        ``best_loss_``, ``t_``, ``validation_scores_``,
        ``best_validation_score_``) is the model's.

    Raises
    ------
    ValueError
        If the activation is one scikit-learn's MLP does not have.
    sklearn.exceptions.NotFittedError
        If ``model`` is not fitted.
    """
    check_is_fitted(model)
    activation = canonical_activation(model.activation)
    if activation not in SKLEARN_ACTIVATIONS:
        raise ValueError(
            f"scikit-learn's MLP has no {model.activation!r} activation; to_sklearn supports "
            f"{', '.join(map(repr, SKLEARN_ACTIVATIONS))} (and the alias 'sigmoid'). "
            f"Use to_torch() for this model."
        )
    classifier = is_classifier(model)
    coefs, intercepts = _weights(model)
    sk_class = MLPClassifier if classifier else MLPRegressor
    # every other parameter of the same name has the same meaning (solver,
    # alpha, learning_rate_init, batch_size, max_iter, tol, momentum, ...)
    shared = set(get_param_names(sk_class)) - set(UNMAPPED_PARAMS)
    sk_model = sk_class(
        hidden_layer_sizes=tuple(W.shape[1] for W in coefs[:-1]),
        activation=activation,
        **{name: value for name, value in model.get_params(deep=False).items() if name in shared},
    )
    multilabel = classifier and model._multilabel()
    if multilabel:
        # one logistic unit per label already, as scikit-learn's
        sk_model.classes_ = np.asarray(model.classes_)
        sk_model.out_activation_ = "logistic"
    elif classifier:
        sk_model.classes_ = np.asarray(model.classes_)
        if len(model.classes_) == 2:
            coefs[-1], intercepts[-1] = _binary_output_layer(coefs[-1], intercepts[-1])
        elif len(model.classes_) == 1:
            coefs[-1], intercepts[-1] = _one_class_output_layer(coefs[-1], intercepts[-1])
        sk_model.out_activation_ = "softmax" if len(model.classes_) > 2 else "logistic"
    else:
        if model.out_activation_ == "exp" and "loss" not in shared:
            raise ValueError(
                "A loss='poisson' model needs scikit-learn >= 1.7 (MLPRegressor's loss parameter) "
                "to be converted; use to_torch() and apply exp to its output."
            )
        sk_model.out_activation_ = model.out_activation_
    _set_fitted_state(sk_model, model, coefs, intercepts, multilabel=multilabel)
    transform = getattr(model, "input_transform_", None)
    if transform is None:
        return sk_model
    # the names are checked once, by the pipeline's first step: the MLP
    # then gets the transform's array
    transform = copy.deepcopy(transform)
    if hasattr(model, "feature_names_in_"):
        transform.feature_names_in_ = np.array(model.feature_names_in_, dtype=object)
        del sk_model.feature_names_in_
    return Pipeline([("input_transform", transform), ("mlp", sk_model)])


def _set_fitted_state(sk_model, model, coefs, intercepts, *, multilabel=False):
    """The attributes scikit-learn's predict, score and partial_fit read."""
    classes = sk_model.classes_ if is_classifier(sk_model) else None
    set_mlp_fitted_private_state(
        sk_model, classes=classes, coefs=coefs, intercepts=intercepts, multilabel=multilabel
    )
    sk_model.coefs_, sk_model.intercepts_ = coefs, intercepts
    sk_model.n_layers_ = len(coefs) + 1
    sk_model.n_outputs_ = coefs[-1].shape[1]
    sk_model.n_features_in_ = model.n_features_in_
    if hasattr(model, "feature_names_in_"):
        sk_model.feature_names_in_ = model.feature_names_in_
    sk_model.n_iter_ = int(model.n_iter_)
    sk_model.loss_curve_ = [float(v) for v in model.loss_curve_]
    for name in ("loss_", "best_loss_", "t_", "validation_scores_", "best_validation_score_"):
        setattr(sk_model, name, getattr(model, name))


class Standardize(torch.nn.Module):
    """``(x - mean) / scale``: a fitted ``StandardScaler`` as a module
    (what ``to_torch()`` of a model with ``input_transform="standard"``
    starts with).

    Parameters
    ----------
    mean, scale : torch.Tensor of shape (n_features,)
        The scaler's ``mean_`` and ``scale_`` (0 and 1 where it has none),
        kept as buffers (they move with ``.to()``, are not trained).
    """

    def __init__(self, mean, scale):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("scale", scale)

    def forward(self, x):
        return (x - self.mean) / self.scale


class RobustSmoothClip(torch.nn.Module):
    """``z / sqrt(1 + (z / bound)^2)`` with ``z = factor * (x - center)``:
    a fitted :class:`~skpmlp.RobustSmoothClipScaler` as a module (what
    ``to_torch()`` of a model with ``input_transform="robust-smooth-clip"``
    starts with).

    Parameters
    ----------
    center, factor : torch.Tensor of shape (n_features,)
        The scaler's ``center_`` and ``factor_``, kept as buffers.
    bound : float
        Its ``clip_bound``.
    """

    def __init__(self, center, factor, bound):
        super().__init__()
        self.register_buffer("center", center)
        self.register_buffer("factor", factor)
        self.bound = float(bound)

    def forward(self, x):
        z = self.factor * (x - self.center)
        # where the square would overflow, x' is the bound; float32's limit
        # is far below float64's (LIMIT), and clamp refuses a bound it cannot hold
        limit = self.bound * min(LIMIT, torch.finfo(z.dtype).max ** 0.5 / 2)
        z = torch.clamp(z, -limit, limit)
        return z / torch.sqrt(1 + (z / self.bound) ** 2)


def _interp(x, xp, fp):
    """``np.interp(x, xp, fp)`` per feature: ``x`` (n, F), ``xp`` (F, q)
    with each row non-decreasing, ``fp`` (q,) shared by the features. As
    numpy, a run of equal ``xp`` takes the last of them, and ``x`` beyond
    the ends the end values."""
    q = xp.shape[1]
    xt = x.T.contiguous()
    j = (torch.searchsorted(xp, xt, right=True) - 1).clamp(0, max(q - 2, 0))
    x0, f0 = torch.gather(xp, 1, j), fp[j]
    if q == 1:
        return f0.T
    x1, f1 = torch.gather(xp, 1, j + 1), fp[j + 1]
    slope = (f1 - f0) / torch.where(x1 > x0, x1 - x0, torch.ones_like(x0))
    inside = f0 + slope * (xt - x0)
    value = torch.where(xt >= xp[:, -1:], fp[-1], inside)
    value = torch.where(xt < xp[:, :1], fp[0], value)
    return value.T


class QuantileNormal(torch.nn.Module):
    """A fitted ``QuantileTransformer(output_distribution="normal")`` as a
    module (what ``to_torch()`` of a model with ``input_transform="quantile"``
    starts with): each feature's value mapped through its quantiles to a
    probability, linearly between them (the mean of the interpolations up
    and down its runs of equal quantiles, as scikit-learn), then to the
    standard normal's quantile, clipped where scikit-learn clips it.

    Parameters
    ----------
    quantiles : torch.Tensor of shape (n_quantiles, n_features)
        The transformer's ``quantiles_``, kept as a buffer. The transform
        runs in its dtype (float64 from ``to_torch`` whatever the network's
        dtype) and returns the input's.
    references : torch.Tensor of shape (n_quantiles,)
        Its ``references_`` (the quantiles' probabilities), a buffer.
    """

    #: scikit-learn's margin of the probabilities' bounds (``BOUNDS_THRESHOLD``)
    BOUND = 1e-7
    #: scikit-learn's clip of the output: the normal quantiles of BOUND - eps
    #: and 1 - (BOUND - eps)
    LOW, HIGH = (float(torch.special.ndtri(torch.tensor(p, dtype=torch.float64)))
                 for p in (BOUND - np.spacing(1), 1 - (BOUND - np.spacing(1))))

    def __init__(self, quantiles, references):
        super().__init__()
        self.register_buffer("quantiles", quantiles.T.contiguous())
        self.register_buffer("references", references)

    def forward(self, x):
        # in the buffers' precision (float64 from transform_module), as
        # scikit-learn computes it: in float32 a feature's steep tails would
        # move the output by up to 1e-2; the result in x's dtype. The
        # quantiles are first rounded to x's precision, so that an input
        # equal to one of them (a run of tied values) is equal in x's dtype too
        xp, fp = self.quantiles.to(x.dtype).to(self.quantiles.dtype), self.references
        xq = x.to(xp.dtype)
        up = _interp(xq, xp, fp)
        down = _interp(-xq, -xp.flip(1), -fp.flip(0))
        p = 0.5 * (up - down)
        p = torch.where(xq + self.BOUND > xp[:, -1], torch.ones_like(p), p)
        p = torch.where(xq - self.BOUND < xp[:, 0], torch.zeros_like(p), p)
        return torch.special.ndtri(p).clamp(self.LOW, self.HIGH).to(x.dtype)


def transform_module(transform, dtype):
    """The torch module computing a fitted input transform (None: none).

    Raises
    ------
    TypeError
        For a transform of another class.
    """
    if transform is None:
        return None
    n = transform.n_features_in_
    as_buffer = lambda a, fill: torch.as_tensor(  # noqa: E731
        np.full(n, fill) if a is None else np.asarray(a, dtype=np.float64), dtype=dtype)
    if isinstance(transform, StandardScaler):
        return Standardize(as_buffer(transform.mean_, 0.0), as_buffer(transform.scale_, 1.0))
    if isinstance(transform, RobustSmoothClipScaler):
        return RobustSmoothClip(as_buffer(transform.center_, 0.0),
                                as_buffer(transform.factor_, 1.0), transform.clip_bound)
    if isinstance(transform, QuantileTransformer):  # float64 whatever dtype (see forward)
        return QuantileNormal(torch.as_tensor(transform.quantiles_, dtype=torch.float64),
                              torch.as_tensor(transform.references_, dtype=torch.float64))
    raise TypeError(f"to_torch has no module for an input transform of type "
                    f"{type(transform).__name__}.")


def to_torch(model, dtype=torch.float32):
    """``model.to_torch(dtype)`` (see :meth:`SingleMLPClassifier.to_torch`):
    its layers as a ``torch.nn.Sequential``, after its input transform's
    module where it has one (:class:`Standardize`,
    :class:`RobustSmoothClip`, :class:`QuantileNormal`); any activation."""
    check_is_fitted(model)
    activation = TORCH_MODULES[canonical_activation(model.activation)]
    transform = transform_module(getattr(model, "input_transform_", None), dtype)
    layers = []
    for W, b in zip(model.coefs_, model.intercepts_):
        linear = torch.nn.Linear(W.shape[0], W.shape[1], dtype=dtype)
        with torch.no_grad():
            # torch stores (fan_out, fan_in); the model stores (fan_in, fan_out)
            linear.weight.copy_(torch.as_tensor(np.asarray(W).T, dtype=dtype))
            linear.bias.copy_(torch.as_tensor(np.asarray(b), dtype=dtype))
        layers += [linear, activation()]
    first = [] if transform is None else [transform]
    return torch.nn.Sequential(*first, *layers[:-1])


# ----------------------------------------------------------------- ensembles
def ensemble_to_sklearn(ensemble):
    """``ensemble.to_sklearn()`` (see :meth:`MLPEnsembleClassifier.to_sklearn`):
    a fitted soft-voting ``VotingClassifier`` / ``VotingRegressor`` whose
    estimators are the members' own ``to_sklearn()`` (a nested ensemble a
    nested voting estimator), weighted by ``weights_``."""
    check_is_fitted(ensemble)
    classifier = is_classifier(ensemble)
    if classifier:
        supported = ensemble.out_activation_ != "logistic"
    else:
        supported = ensemble.n_outputs_ == 1
    if not supported:
        voting = "VotingClassifier" if classifier else "VotingRegressor"
        kind = "multilabel classification" if classifier else "several regression targets"
        raise ValueError(
            f"scikit-learn's {voting} does not support {kind}, which this ensemble's members "
            f"predict. Use to_torch(), or each member's to_sklearn() (estimators_[i])."
        )
    members = [member.to_sklearn() for member in ensemble.estimators_]
    names = [f"member{i}" for i in range(len(members))]
    weights = [float(w) for w in ensemble._member_weights()]
    if classifier:
        voting = VotingClassifier(list(zip(names, map(clone, members))), voting="soft",
                                  weights=weights)
        voting.le_ = LabelEncoder().fit(ensemble.classes_)
        voting.classes_ = voting.le_.classes_
    else:
        voting = VotingRegressor(list(zip(names, map(clone, members))), weights=weights)
    voting.estimators_ = members
    voting.named_estimators_ = Bunch(**dict(zip(names, members)))
    if hasattr(ensemble, "feature_names_in_"):
        voting.feature_names_in_ = ensemble.feature_names_in_
    return voting


class _Exp(torch.nn.Module):
    """``exp`` of its input: the log link's inverse (``loss="poisson"``)."""

    def forward(self, x):
        return torch.exp(x)


#: What turns a model's raw outputs into its predictions, by ``out_activation_``.
_OUTPUT_MODULES = {
    "softmax": lambda: torch.nn.Softmax(dim=-1),
    "logistic": torch.nn.Sigmoid,
    "exp": _Exp,
    "identity": None,
}


class WeightedAverage(torch.nn.Module):
    """The weighted mean of its members' outputs: what ``to_torch()`` of an
    ensemble returns.

    ``forward(x) = sum_i weights[i] * members[i](x)``, of shape
    ``(n_samples, n_outputs)``: class (or label) probabilities for a
    classifier ensemble, predictions for a regressor ensemble.

    Parameters
    ----------
    members : list of torch.nn.Module
        Each maps ``(n_samples, n_features)`` to ``(n_samples, n_outputs)``
        in prediction space (probabilities or predictions, not logits).
    weights : torch.Tensor of shape (n_members,)
        Summing to 1; kept as a buffer (moves with ``.to()``, not trained).
    """

    def __init__(self, members, weights):
        super().__init__()
        self.members = torch.nn.ModuleList(members)
        self.register_buffer("weights", weights)

    def forward(self, x):
        outputs = torch.stack([member(x) for member in self.members])
        return torch.tensordot(self.weights, outputs, dims=1)


def _member_module(member, dtype):
    """A member as a module of prediction-space outputs: a nested
    ensemble's :class:`WeightedAverage`, or a model's network followed by
    its output activation."""
    if hasattr(member, "estimators_"):
        return member.to_torch(dtype=dtype)
    net = member.to_torch(dtype=dtype)
    output = _OUTPUT_MODULES[member.out_activation_]
    return net if output is None else torch.nn.Sequential(net, output())


def ensemble_to_torch(ensemble, dtype=torch.float32):
    """``ensemble.to_torch(dtype)`` (see :meth:`MLPEnsembleClassifier.to_torch`)."""
    check_is_fitted(ensemble)
    members = [_member_module(member, dtype) for member in ensemble.estimators_]
    return WeightedAverage(members, torch.as_tensor(ensemble._member_weights(), dtype=dtype))
