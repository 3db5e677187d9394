"""Predictions of trained models: many at once, fused, or one standalone MLP."""

import contextlib

import numpy as np
import torch

from ._activations import ACTIVATIONS
from ._build import as_tensor, build_network
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
    net = build_network(spec, config, X.shape[1], coefs, intercepts)
    X_t = as_tensor(X, dtype=net.dtype, device=net.device)
    out = np.empty((n, X.shape[0], config.n_outputs))
    out[net.slot_models] = predictions(net.outputs(X_t), config).cpu().numpy()
    return out
