"""Per-model losses and monitoring scores on ``(G, B, C)`` output tensors.

Every function reduces over the batch separately for each model, so summing
the results over models and calling ``backward`` once gives each model
exactly the gradient of its own loss.
"""

import torch


def cross_entropy(logits, y):
    """Softmax cross-entropy, each model's batch mean.

    Parameters
    ----------
    logits : Tensor of shape (G, B, C)
    y : Tensor of int64 of shape (B,)

    Returns
    -------
    Tensor of shape (G,)
    """
    G, B, _ = logits.shape
    log_p = torch.log_softmax(logits, dim=2)
    picked = log_p.gather(2, y.view(1, B, 1).expand(G, B, 1))
    return -picked.view(G, B).mean(1)


def squared_error(outputs, y):
    """Half mean squared error as scikit-learn's MLP: ``mean((y - p)**2) / 2``.

    Parameters
    ----------
    outputs : Tensor of shape (G, B, C)
    y : Tensor of shape (B, C)

    Returns
    -------
    Tensor of shape (G,)
    """
    return 0.5 * (outputs - y.unsqueeze(0)).square().mean((1, 2))


LOSSES = {"classification": cross_entropy, "regression": squared_error}


def accuracy(outputs, y):
    """Accuracy per model: (n_slots, n, C) outputs against (n,) labels."""
    return (outputs.argmax(2) == y.unsqueeze(0)).to(outputs.dtype).mean(1)


def r2(outputs, y):
    """R^2 per model, averaged uniformly over outputs as scikit-learn does.

    A constant target scores 1 when predicted exactly, else 0 (sklearn's
    ``force_finite`` convention).
    """
    residual = (outputs - y.unsqueeze(0)).square().sum(1)
    total = (y - y.mean(0)).square().sum(0).unsqueeze(0).expand_as(residual)
    perfect = (residual == 0).to(outputs.dtype)
    per_output = torch.where(total > 0, 1 - residual / total.clamp_min(1e-300), perfect)
    return per_output.mean(1)


MONITOR_SCORES = {"classification": accuracy, "regression": r2}
