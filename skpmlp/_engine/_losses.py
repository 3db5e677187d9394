"""Per-model losses and monitoring scores on ``(G, B, C)`` output tensors.

Losses reduce over the batch separately for each model, with per-row
weights that sum to one per model (sample weights, and zeros for padding
rows), so summing them over models and calling ``backward`` once gives each
model exactly the gradient of its own loss.

The classification losses take each model's label smoothing (a ``(G,)``
tensor, or None for none): a model of smoothing 0 beside smoothed ones gets
exactly its unsmoothed loss and gradient (``1 * x + 0 * s`` is ``x``).
"""

import numpy as np
import torch


def cross_entropy(logits, y, weights, smoothing=None):
    """Softmax cross-entropy, each model's weighted batch mean.

    With ``smoothing`` (each model's ``eps``) the targets are
    ``(1 - eps) * onehot + eps / C``, as
    ``torch.nn.functional.cross_entropy(label_smoothing=eps)``: a row's loss
    is ``-(1 - eps) log p_y - eps / C * sum_c log p_c``.

    Parameters
    ----------
    logits : Tensor of shape (G, B, C)
    y : Tensor of int64 of shape (G, B) or (1, B)
    weights : Tensor of shape (G, B) or (1, B), summing to 1 over B
    smoothing : Tensor of shape (G,), optional

    Returns
    -------
    Tensor of shape (G,)
    """
    G, B, C = logits.shape
    log_p = torch.log_softmax(logits, dim=2)
    picked = log_p.gather(2, y.unsqueeze(2).expand(G, B, 1)).squeeze(2)
    if smoothing is not None:
        eps = smoothing.view(G, 1)
        picked = (1 - eps) * picked + eps / C * log_p.sum(2)
    return -(picked * weights).sum(1)


def squared_error(outputs, y, weights):
    """Half squared error as scikit-learn's MLP (mean over outputs), each
    model's weighted batch mean.

    Parameters
    ----------
    outputs : Tensor of shape (G, B, C)
    y : Tensor of shape (G, B, C) or (1, B, C)
    weights : Tensor of shape (G, B) or (1, B)

    Returns
    -------
    Tensor of shape (G,)
    """
    return 0.5 * ((outputs - y).square().mean(2) * weights).sum(1)


def binary_log_loss(logits, y, weights, smoothing=None):
    """Sigmoid binary log-loss summed over the outputs (labels), as
    scikit-learn's MLP for multilabel targets, each model's weighted batch
    mean.

    With ``smoothing`` (each model's ``eps``) the targets are
    ``y * (1 - eps) + eps / 2``: each label's two classes smoothed as a
    two-class softmax's would be.

    Parameters
    ----------
    logits : Tensor of shape (G, B, C)
    y : Tensor of 0/1 floats of shape (G, B, C) or (1, B, C)
    weights : Tensor of shape (G, B) or (1, B)
    smoothing : Tensor of shape (G,), optional

    Returns
    -------
    Tensor of shape (G,)
    """
    if smoothing is not None:
        eps = smoothing.view(-1, 1, 1)
        y = y * (1 - eps) + eps / 2
    per_label = torch.nn.functional.binary_cross_entropy_with_logits(
        logits, y.expand_as(logits), reduction="none"
    )
    return (per_label.sum(2) * weights).sum(1)


#: The training loss of each task: softmax cross-entropy over classes,
#: squared error, or one sigmoid log-loss per label (multilabel).
LOSSES = {"classification": cross_entropy, "regression": squared_error,
          "multilabel": binary_log_loss}


def accuracy(outputs, y, weights=None):
    """Accuracy per model: (n_slots, n, C) outputs against (n,) labels.

    ``weights`` (n_slots or 1, n) weight the rows (zero excludes a row)."""
    correct = (outputs.argmax(2) == y.unsqueeze(0)).to(outputs.dtype)
    if weights is None:
        return correct.mean(1)
    return (correct * weights).sum(1) / weights.sum(1)


def r2(outputs, y, weights=None):
    """R^2 per model, averaged uniformly over outputs as scikit-learn does.

    ``weights`` (n_slots or 1, n) weight the rows. A constant target scores
    1 when predicted exactly, else 0 (sklearn's ``force_finite``).
    """
    if weights is None:
        weights = torch.ones((1, y.shape[0]), dtype=outputs.dtype, device=outputs.device)
    w = weights.unsqueeze(2)
    mean = (w * y.unsqueeze(0)).sum(1, keepdim=True) / w.sum(1, keepdim=True)
    residual = (w * (outputs - y.unsqueeze(0)).square()).sum(1)
    total = (w * (y.unsqueeze(0) - mean).square()).sum(1).expand_as(residual)
    perfect = (residual == 0).to(outputs.dtype)
    per_output = torch.where(total > 0, 1 - residual / total, perfect)
    return per_output.mean(1)


def subset_accuracy(outputs, y, weights=None):
    """Subset accuracy per model (a row counts when every label is right, as
    scikit-learn's ``accuracy_score`` on indicator matrices): (n_slots, n, C)
    logits against (n, C) 0/1 targets; a label is predicted where its logit
    is positive (probability above 0.5).

    ``weights`` (n_slots or 1, n) weight the rows (zero excludes a row)."""
    correct = ((outputs > 0) == (y.unsqueeze(0) > 0.5)).all(2).to(outputs.dtype)
    if weights is None:
        return correct.mean(1)
    return (correct * weights).sum(1) / weights.sum(1)


MONITOR_SCORES = {"classification": accuracy, "regression": r2, "multilabel": subset_accuracy}


def negated_loss(loss):
    """The monitoring function ``-loss``: each model's weighted mean
    ``loss`` (a training loss of this module) on the evaluation rows,
    negated so that higher is better (as scikit-learn's ``neg_log_loss`` /
    ``neg_mean_squared_error``).

    Without the L2 term: it scores predictions, not weights."""

    def score(outputs, y, weights=None):
        if weights is None:
            weights = torch.ones((1, outputs.shape[1]), dtype=outputs.dtype, device=outputs.device)
        weights = weights / weights.sum(1, keepdim=True)
        return -loss(outputs, y.unsqueeze(0), weights)

    return score


def validation_loss_function(config):
    """Each model's validation loss on its evaluation rows, a function of
    the raw outputs: the training loss without label smoothing or the L2
    term (what ``restore_best_weights`` watches, lower is better)."""
    negated = negated_loss(training_loss(config))
    return lambda outputs, y, weights=None: -negated(outputs, y, weights)


def monitor_function(config):
    """What a run watches on its evaluation rows each epoch, a function of
    the raw outputs: the default score of the predictions
    (``monitor="score"``) or the negated training loss (``"loss"``)."""
    if config.monitor == "loss":
        return negated_loss(training_loss(config))
    default = MONITOR_SCORES[config.task]
    return lambda outputs, y, weights=None: default(predictions(outputs, config), y, weights)



def half_poisson_deviance(outputs, y, weights):
    """Half Poisson deviance with a log link, as scikit-learn's MLPRegressor
    with ``loss="poisson"`` (summed over the outputs, each model's weighted
    batch mean); the prediction is ``exp(outputs)``.

    Per element ``y log(y / mu) - y + mu`` with ``mu = exp(z)``, i.e.
    ``xlogy(y, y) - y z - y + exp(z)``: its gradient in the raw output ``z``
    is ``mu - y``, scikit-learn's output delta.

    Parameters
    ----------
    outputs : Tensor of shape (G, B, C)
        Raw outputs ``z`` (log of the predicted means).
    y : Tensor of shape (G, B, C) or (1, B, C)
        Non-negative targets.
    weights : Tensor of shape (G, B) or (1, B)

    Returns
    -------
    Tensor of shape (G,)
    """
    per_output = torch.xlogy(y, y) - y * outputs - y + torch.exp(outputs)
    return (per_output.sum(2) * weights).sum(1)


#: Regression losses by ``TrainConfig.loss``, and the output activation
#: that turns raw outputs into predictions for each.
REGRESSION_LOSSES = {"squared_error": squared_error, "poisson": half_poisson_deviance}
OUTPUT_ACTIVATIONS = {"squared_error": "identity", "poisson": "exp"}


def training_loss(config):
    """The loss a run trains with: its task's, or its regression ``loss``."""
    if config.task == "regression":
        return REGRESSION_LOSSES[config.loss]
    return LOSSES[config.task]


def output_activation(config):
    """Name of the function from raw outputs to predictions of a regression
    run ("identity" or "exp"); "identity" for other tasks, whose raw
    outputs are logits."""
    return OUTPUT_ACTIVATIONS[config.loss] if config.task == "regression" else "identity"


def predictions(outputs, config):
    """Raw outputs (any shape) as a regression run's predictions (``exp``
    for ``loss="poisson"``); unchanged for other tasks and losses."""
    return torch.exp(outputs) if output_activation(config) == "exp" else outputs


def group_smoothing(task, per_slot, group_offsets, *, dtype, device):
    """Each group's label smoothing for the classification losses: a
    ``(G,)`` tensor of its slots' values, or None where none of them smooths
    (and for regression, whose losses have none).

    Parameters
    ----------
    task : str
    per_slot : ndarray of shape (n_slots,)
    group_offsets : sequence of int
        The first slot of every group, then the slot count.
    """
    per_slot = np.asarray(per_slot, dtype=float)
    out = []
    for a, b in zip(group_offsets[:-1], group_offsets[1:]):
        values = per_slot[a:b]
        smooths = task != "regression" and bool((values != 0).any())
        out.append(torch.as_tensor(values, dtype=dtype, device=device) if smooths else None)
    return out
