"""Predictions of trained models: many at once, fused, or one standalone MLP."""

import contextlib

import numpy as np
import torch

from .. import _kernels
from ._activations import ACTIVATION_CODES, ACTIVATIONS
from ._backends._choice import choose_trainer
from ._backends._native import NativeTrainer
from ._build import DTYPES, as_tensor, build_network
from ._losses import predictions
from ._spec import PopulationSpec
from ._threads import torch_threads


@torch.no_grad()
def mlp_forward(coefs, intercepts, activation, X, *, out_activation="identity"):
    """Outputs (logits or regression predictions) of one MLP.

    Computed in the wider of ``X``'s and the weights' dtypes, as
    scikit-learn's MLP (numpy's promotion): float32 only when both are
    float32, else float64.

    Parameters
    ----------
    coefs : list of ndarray of shape (fan_in, fan_out)
    intercepts : list of ndarray of shape (fan_out,)
    activation : str
        Canonical activation name of the hidden layers.
    X : ndarray of shape (n_samples, n_features)
    out_activation : {"identity", "exp"}, default="identity"
        Applied to the last layer ("exp": a Poisson regressor's log link).

    Returns
    -------
    ndarray of shape (n_samples, n_outputs)
        Of that dtype.
    """
    act = ACTIVATIONS[activation]
    arrays = [X, *coefs, *intercepts]
    single = all(np.asarray(a).dtype == np.float32 for a in arrays)
    dtype = np.float32 if single else np.float64
    flops = 2 * len(X) * sum(np.asarray(W).size for W in coefs)
    # a small forward on one thread: OpenMP's barriers cost more than its
    # work, and on a busy CPU they stall (digits, (64, 64), 450 rows at load
    # 5: 45 ms with 2 threads, 7 ms with 1)
    threads = torch_threads(1) if flops < _SMALL_FORWARD_FLOPS else contextlib.nullcontext()
    with threads:
        h = torch.from_numpy(np.array(X, dtype=dtype))  # a private, writable copy
        for layer, (W, b) in enumerate(zip(coefs, intercepts)):
            h = torch.addmm(torch.as_tensor(np.asarray(b, dtype=dtype)), h,
                            torch.as_tensor(np.asarray(W, dtype=dtype)))
            if layer < len(coefs) - 1:
                h = act(h)
        return (torch.exp(h) if out_activation == "exp" else h).numpy()


#: Below this many floating-point operations a standalone model's forward
#: runs on one thread.
_SMALL_FORWARD_FLOPS = 5e7


def population_outputs(coefs, intercepts, activations, config, X):
    """Outputs of many trained models on ``X``, computed fused.

    Parameters
    ----------
    coefs, intercepts : list of list of ndarray
        Per-model weights, as :class:`TrainResult` holds them.
    activations : list of str
    config : TrainConfig
        Only ``task`` and ``loss`` (``exp`` of a Poisson regressor's
        outputs), ``n_outputs``, ``dtype``, ``device`` (resolved: no
        "auto"), ``max_padding`` and ``batch_size`` (which sets how groups
        split) are used.
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_models, n_samples, n_outputs)
        Logits (classification) or predictions (regression).
    """
    archs = [tuple(c.shape[1] for c in model[:-1]) for model in coefs]
    n = len(coefs)
    spec = PopulationSpec(archs, list(activations), np.zeros(n), np.zeros(n), [()] * n)
    if _kernel_forward_runs(spec, config):
        outputs = _kernel_outputs(coefs, intercepts, activations, config, X)
        return predictions(outputs, config).numpy().astype(np.float64, copy=False)
    net = build_network(spec, config, X.shape[1], coefs, intercepts)
    X_t = as_tensor(X, dtype=net.dtype, device=net.device)
    out = np.empty((n, X.shape[0], config.n_outputs))
    out[net.slot_models] = predictions(net.outputs(X_t), config).cpu().numpy()
    return out


def _kernel_forward_runs(spec, config):
    """Whether :func:`population_outputs` runs on the native kernel's
    forward: where a run of these models would train on it
    (:func:`~._backends._choice.choose_trainer`'s choice)."""
    return choose_trainer(spec, config) is NativeTrainer


def _kernel_outputs(coefs, intercepts, activations, config, X):
    """:func:`population_outputs`' raw outputs by the native kernel's
    forward, as a tensor.

    The models' weights are packed one after another, each layer's matrix
    at its real widths (its row stride its fan-out): no fused network is
    built. Building one took 0.6 of the 0.85 ms that scoring 16 models on
    a fold of iris took, and a search scores every fold of every input
    transform apart.
    """
    dtype = DTYPES[config.dtype]
    fields = _kernels.META_FIELDS
    meta = np.zeros((len(coefs), _kernels.META_WIDTH), dtype=np.int64)
    parts, offset = [], 0
    for i, (weights, biases) in enumerate(zip(coefs, intercepts)):
        depth = len(weights) - 1
        meta[i, fields["slot"]], meta[i, fields["depth"]] = i, depth
        meta[i, fields["activation"]] = ACTIVATION_CODES[activations[i]]
        meta[i, fields["sizes"]] = X.shape[1]
        for layer, (W, b) in enumerate(zip(weights, biases)):
            meta[i, fields["sizes"] + layer + 1] = W.shape[1]
            meta[i, fields["w_off"] + layer] = offset
            meta[i, fields["b_off"] + layer] = offset + W.size
            meta[i, fields["ld"] + layer] = W.shape[1]
            parts += [np.ravel(W), np.ravel(b)]
            offset += W.size + b.size
    params = torch.as_tensor(np.concatenate(parts), dtype=dtype)
    out = torch.empty((len(coefs), X.shape[0], config.n_outputs), dtype=dtype)
    # a small forward on one thread, as a standalone model's: starting and
    # joining a second one costs more than its share of the work (scoring
    # a fold of iris, 36 models on 30 rows, about a million multiply-adds)
    flops = 2 * X.shape[0] * offset
    n_threads = 1 if flops < _SMALL_FORWARD_FLOPS else torch.get_num_threads()
    _kernels.forward_models(meta, torch.as_tensor(X, dtype=dtype), params, out,
                            n_threads=n_threads)
    return out
