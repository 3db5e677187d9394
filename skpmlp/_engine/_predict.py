"""Forward pass of one standalone MLP, outside any population."""

import numpy as np
import torch

from ._activations import ACTIVATIONS


@torch.no_grad()
def mlp_forward(coefs, intercepts, activation, X):
    """Outputs (logits or regression predictions) of one MLP, in float64.

    Parameters
    ----------
    coefs : list of ndarray of shape (fan_in, fan_out)
    intercepts : list of ndarray of shape (fan_out,)
    activation : str
        Canonical activation name of the hidden layers.
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_outputs)
    """
    act = ACTIVATIONS[activation]
    h = torch.from_numpy(np.array(X, dtype=np.float64))  # a private, writable copy
    for layer, (W, b) in enumerate(zip(coefs, intercepts)):
        h = torch.addmm(torch.as_tensor(b, dtype=torch.float64), h, torch.as_tensor(W, dtype=torch.float64))
        if layer < len(coefs) - 1:
            h = act(h)
    return h.numpy()
