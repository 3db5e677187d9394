"""The training loop: every model of a population, one fused step at a time.

Per step: one gather of the minibatch rows (the data lives on the device and
batches come from an on-device index permutation), one forward per group,
one backward of the summed per-model losses and one fused optimizer update.
Nothing in a step synchronises with the host; per-model bookkeeping (loss
curves, stopping rules, divergence) happens once per epoch.
"""

import time

import numpy as np
import torch

from ._init import initial_weights
from ._layout import plan_groups
from ._losses import LOSSES, MONITOR_SCORES
from ._network import FusedNetwork
from ._optim import make_optimizer
from ._spec import PopulationSpec, TrainResult

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def as_tensor(array, *, dtype, device):
    """Copy a numpy array to a torch tensor on ``device`` (never aliased)."""
    return torch.tensor(np.asarray(array), dtype=dtype, device=device)


def _targets(y, config, dtype, device):
    if config.task == "classification":
        return as_tensor(y, dtype=torch.int64, device=device)
    y = np.asarray(y)
    return as_tensor(y.reshape(len(y), -1), dtype=dtype, device=device)


class _StoppingRule:
    """scikit-learn MLP's per-model ``tol`` / ``n_iter_no_change`` rule,
    vectorised over models (host side, once per epoch)."""

    def __init__(self, n_models, config):
        self.maximize = config.early_stopping
        self.tol, self.patience = config.tol, config.n_iter_no_change
        self.best = np.full(n_models, -np.inf if self.maximize else np.inf)
        self.count = np.zeros(n_models, dtype=int)

    def update(self, values, active):
        """Feed this epoch's monitored values; return (improved, stop) masks."""
        if self.maximize:
            no_gain = values < self.best + self.tol
            improved = values > self.best
        else:
            no_gain = values > self.best - self.tol
            improved = values < self.best
        self.count = np.where(active, np.where(no_gain, self.count + 1, 0), self.count)
        improved &= active
        self.best = np.where(improved, values, self.best)
        return improved, active & (self.count > self.patience)


def build_network(spec, config, n_features, coefs=None, intercepts=None):
    """Plan the groups of ``spec`` and build its fused network.

    Initial weights are drawn from each model's own seed unless ``coefs`` and
    ``intercepts`` are given.
    """
    if coefs is None:
        drawn = [
            initial_weights(arch, act, seed, n_features, config.n_outputs)
            for arch, act, seed in zip(
                spec.hidden_layer_sizes, spec.activations, spec.init_seeds
            )
        ]
        coefs = [c for c, _ in drawn]
        intercepts = [b for _, b in drawn]
    groups = plan_groups(spec.hidden_layer_sizes, spec.activations, config.max_padding)
    return FusedNetwork(
        groups,
        coefs,
        intercepts,
        n_features,
        config.n_outputs,
        dtype=_DTYPES[config.dtype],
        device=torch.device(config.device),
    )


def train_population(spec, config, X, y, X_val=None, y_val=None, *, epoch_callback=None):
    """Train every model of ``spec`` as one fused network.

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Class indices in ``[0, n_outputs)`` or regression targets.
    X_val, y_val : ndarray, optional
        Validation data, scored every epoch (required for early stopping).
    epoch_callback : callable, optional
        Called after every epoch as ``epoch_callback(epoch, info)`` with a
        dict of per-model numpy arrays (``loss``, ``val_score``, ``active``).

    Returns
    -------
    TrainResult
    """
    assert not (config.early_stopping and X_val is None), "early stopping needs X_val"
    start_time = time.perf_counter()
    dtype, device = _DTYPES[config.dtype], torch.device(config.device)
    net = build_network(spec, config, X.shape[1])
    n_models, n_samples = spec.n_models, X.shape[0]
    slot_models = net.slot_models

    X_t, y_t = as_tensor(X, dtype=dtype, device=device), _targets(y, config, dtype, device)
    has_val = X_val is not None
    if has_val:
        X_vt, y_vt = as_tensor(X_val, dtype=dtype, device=device), _targets(y_val, config, dtype, device)
    loss_fn, score_fn = LOSSES[config.task], MONITOR_SCORES[config.task]

    lr_slots = torch.as_tensor(net.slot_values(spec.learning_rates), dtype=dtype, device=device)
    alpha_groups = [
        torch.as_tensor(np.asarray(spec.alphas)[g.models], dtype=dtype, device=device)
        for g in net.groups
    ]
    lr = lr_slots[net.element_slot]
    optimizer = make_optimizer(config, net.flat, net.grad, lr)
    best_flat = net.flat.detach().clone() if config.early_stopping else None

    generator = torch.Generator().manual_seed(int(config.shuffle_seed))
    batch_size = min(config.batch_size, n_samples)
    loss_sums = torch.zeros(n_models, dtype=dtype, device=device)

    active = np.ones(n_models, dtype=bool)  # population order
    diverged = np.zeros(n_models, dtype=bool)
    converged = np.zeros(n_models, dtype=bool)
    n_iter = np.zeros(n_models, dtype=int)
    rule = _StoppingRule(n_models, config)
    loss_curves, val_curves = [], []

    for epoch in range(config.max_iter):
        order = torch.randperm(n_samples, generator=generator).to(device)
        loss_sums.zero_()
        for begin in range(0, n_samples, batch_size):
            index = order[begin : begin + batch_size]
            n_batch = index.shape[0]
            xb, yb = X_t[index], y_t[index]
            net.grad.zero_()
            total = 0
            for gi in range(len(net.groups)):
                out = net.group_forward(gi, xb)
                # L2 term as scikit-learn's MLP: 0.5 * alpha * ||W||^2 / batch
                losses = loss_fn(out, yb) + (0.5 / n_batch) * alpha_groups[gi] * net.group_l2(gi)
                a, b = net.group_offsets[gi], net.group_offsets[gi + 1]
                loss_sums[a:b] += losses.detach() * n_batch
                total = total + losses.sum()
            total.backward()
            optimizer.step()

        # -------- once per epoch: host bookkeeping (one sync)
        epoch_loss = np.empty(n_models)
        epoch_loss[slot_models] = (loss_sums / n_samples).cpu().numpy()
        val_score = None
        if has_val:
            val_score = np.empty(n_models)
            val_score[slot_models] = score_fn(net.outputs(X_vt), y_vt).cpu().numpy()
        n_iter[active] = epoch + 1
        loss_curves.append(np.where(active, epoch_loss, np.nan))
        if has_val:
            val_curves.append(np.where(active, val_score, np.nan))

        newly_diverged = active & ~np.isfinite(epoch_loss)
        diverged |= newly_diverged
        monitored = val_score if config.early_stopping else epoch_loss
        improved, stop = rule.update(monitored, active & ~newly_diverged)
        converged |= stop
        if config.early_stopping and improved.any():
            improved_elements = torch.as_tensor(improved[slot_models], device=device)[net.element_slot]
            torch.where(improved_elements, net.flat.detach(), best_flat, out=best_flat)
        if epoch_callback is not None:
            epoch_callback(epoch, {"loss": epoch_loss, "val_score": val_score, "active": active.copy()})
        finished = stop | newly_diverged
        if finished.any():
            active &= ~finished
            # a zero learning rate freezes a model bit for bit
            lr.mul_(torch.as_tensor(active[slot_models], dtype=dtype, device=device)[net.element_slot])
        if not active.any():
            break

    if config.early_stopping:
        net.flat.detach().copy_(best_flat)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    coefs, intercepts = net.export()
    return TrainResult(
        coefs=coefs,
        intercepts=intercepts,
        loss_curves=np.stack(loss_curves, axis=1),
        validation_scores=np.stack(val_curves, axis=1) if has_val else None,
        n_iter=n_iter,
        converged=converged,
        diverged=diverged,
        train_time=time.perf_counter() - start_time,
    )


def population_outputs(coefs, intercepts, activations, config, X):
    """Outputs of many trained models on ``X``, computed fused.

    Parameters
    ----------
    coefs, intercepts : list of list of ndarray
        Per-model weights, as :class:`TrainResult` holds them.
    activations : list of str
    config : TrainConfig
        Only ``n_outputs``, ``dtype``, ``device`` and ``max_padding`` are used.
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
    out[net.slot_models] = net.outputs(X_t).cpu().numpy()
    return out
