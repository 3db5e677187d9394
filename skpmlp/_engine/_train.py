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

from ._cpu import fast_cpu_training
from ._init import initial_weights
from ._layout import plan_groups
from ._losses import LOSSES, MONITOR_SCORES
from ._network import FusedNetwork
from ._optim import make_optimizer
from ._spec import PopulationSpec, TrainResult

_DTYPES = {"float32": torch.float32, "float64": torch.float64}

# Above this many hidden-activation elements per step, a group is split by
# activation (measured on the paper grid, CPU: the cat of activation slices
# then costs more than the extra launches).
_SPLIT_ELEMENTS = 2**20


def as_tensor(array, *, dtype, device):
    """Copy a numpy array to a torch tensor on ``device`` (never aliased)."""
    return torch.tensor(np.asarray(array), dtype=dtype, device=device)


def targets_tensor(y, task, *, dtype, device):
    """Class indices (int64) or 2-D float targets on ``device``."""
    if task == "classification":
        return as_tensor(y, dtype=torch.int64, device=device)
    y = np.asarray(y)
    return as_tensor(y.reshape(len(y), -1), dtype=dtype, device=device)


def build_network(spec, config, n_features, coefs=None, intercepts=None):
    """Plan the groups of ``spec`` and build its fused network.

    Initial weights are drawn from each model's own seed unless ``coefs`` and
    ``intercepts`` are given.
    """
    if coefs is None:
        drawn = [
            initial_weights(arch, act, seed, n_features, config.n_outputs)
            for arch, act, seed in zip(spec.hidden_layer_sizes, spec.activations, spec.init_seeds)
        ]
        coefs = [c for c, _ in drawn]
        intercepts = [b for _, b in drawn]
    # slots of equal (learning rate, alpha) side by side: fewer optimizer calls
    pairs = list(zip(np.asarray(spec.learning_rates, float), np.asarray(spec.alphas, float)))
    codes = {pair: code for code, pair in enumerate(sorted(set(pairs)))}
    groups = plan_groups(
        spec.hidden_layer_sizes,
        spec.activations,
        config.max_padding,
        split_elements=_SPLIT_ELEMENTS // config.batch_size,
        sort_codes=[codes[pair] for pair in pairs],
    )
    return FusedNetwork(
        groups,
        coefs,
        intercepts,
        n_features,
        config.n_outputs,
        dtype=_DTYPES[config.dtype],
        device=torch.device(config.device),
    )


class PopulationTrainer:
    """A fused network with its optimizer, trained one step at a time.

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
    n_features : int

    Attributes
    ----------
    net : FusedNetwork
    loss_sums : Tensor of shape (n_models,)
        Per-slot sum over the epoch's samples of the batch-mean data loss.
    """

    def __init__(self, spec, config, n_features):
        self.config = config
        self.net = net = build_network(spec, config, n_features)
        self.alphas = torch.as_tensor(net.slot_values(spec.alphas), dtype=net.dtype, device=net.device)
        self._slot_lr = net.slot_values(spec.learning_rates)
        self._slot_alpha = net.slot_values(spec.alphas)
        self.optimizer = make_optimizer(config, net.flat, net.grad)
        self.loss_fn = LOSSES[config.task]
        self.loss_sums = torch.zeros(len(net.slot_models), dtype=net.dtype, device=net.device)
        self.frozen = np.zeros(len(net.slot_models), dtype=bool)
        self._update_partitions()

    def _update_partitions(self):
        """Partition the active slots by (learning rate, alpha) for the
        fused optimizer; runs of equal values are contiguous in each group."""
        partitions = {}
        for gi in range(len(self.net.groups)):
            start, stop = self.net.group_offsets[gi], self.net.group_offsets[gi + 1]
            slot = start
            while slot < stop:
                if self.frozen[slot]:
                    slot += 1
                    continue
                key = (self._slot_lr[slot], self._slot_alpha[slot])
                end = slot + 1
                while end < stop and not self.frozen[end] and (self._slot_lr[end], self._slot_alpha[end]) == key:
                    end += 1
                ranges = self.net.parameter_ranges(gi, slot - start, end - start)
                partitions.setdefault(key, []).extend(ranges)
                slot = end
        self.optimizer.set_partitions([(lr, alpha, r) for (lr, alpha), r in partitions.items()])

    def train_step(self, xb, yb):
        """One fused forward / backward / update on the batch ``(xb, yb)``."""
        net, n_batch = self.net, xb.shape[0]
        net.grad.zero_()
        total = 0
        for gi in range(len(net.groups)):
            losses = self.loss_fn(net.group_forward(gi, xb), yb)
            a, b = net.group_offsets[gi], net.group_offsets[gi + 1]
            self.loss_sums[a:b] += losses.detach() * n_batch
            total = total + losses.sum()
        total.backward()
        self.optimizer.step(n_batch)

    def run_epoch(self, X, y, order, batch_size):
        """Train on ``X[order]`` batch by batch; return the number of batches."""
        self.loss_sums.zero_()
        n = order.shape[0]
        for begin in range(0, n, batch_size):
            index = order[begin : begin + batch_size]
            self.train_step(X[index], y[index])
        return -(-n // batch_size)

    def epoch_losses(self, n_samples, n_batches):
        """Per-slot mean training loss of the epoch, L2 term included (numpy).

        The L2 term uses the end-of-epoch weights for every batch, a close
        approximation of scikit-learn's per-batch term.
        """
        l2 = 0.5 * self.alphas * self.net.squared_weight_norms() * (n_batches / n_samples)
        return (self.loss_sums / n_samples + l2).cpu().numpy()

    def freeze(self, slot_mask):
        """Stop updating the slots where ``slot_mask`` is True; their
        parameters stay bit-for-bit as they are."""
        self.frozen |= slot_mask
        self._update_partitions()


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
    with fast_cpu_training(config.device):
        return _train(spec, config, X, y, X_val, y_val, epoch_callback)


def _train(spec, config, X, y, X_val, y_val, epoch_callback):
    start_time = time.perf_counter()
    trainer = PopulationTrainer(spec, config, X.shape[1])
    net = trainer.net
    dtype, device = net.dtype, net.device
    n_models, n_samples = spec.n_models, X.shape[0]
    slot_models = net.slot_models

    X_t = as_tensor(X, dtype=dtype, device=device)
    y_t = targets_tensor(y, config.task, dtype=dtype, device=device)
    has_val = X_val is not None
    if has_val:
        X_vt = as_tensor(X_val, dtype=dtype, device=device)
        y_vt = targets_tensor(y_val, config.task, dtype=dtype, device=device)
    score_fn = MONITOR_SCORES[config.task]
    best_flat = net.flat.detach().clone() if config.early_stopping else None

    generator = torch.Generator().manual_seed(int(config.shuffle_seed))
    batch_size = min(config.batch_size, n_samples)
    active = np.ones(n_models, dtype=bool)  # population order
    diverged = np.zeros(n_models, dtype=bool)
    converged = np.zeros(n_models, dtype=bool)
    n_iter = np.zeros(n_models, dtype=int)
    rule = _StoppingRule(n_models, config)
    loss_curves, val_curves = [], []

    for epoch in range(config.max_iter):
        order = torch.randperm(n_samples, generator=generator).to(device)
        n_batches = trainer.run_epoch(X_t, y_t, order, batch_size)

        # -------- once per epoch: host bookkeeping
        epoch_loss = np.empty(n_models)
        epoch_loss[slot_models] = trainer.epoch_losses(n_samples, n_batches)
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
            torch.where(improved_elements, net.flat, best_flat, out=best_flat)
        if epoch_callback is not None:
            epoch_callback(epoch, {"loss": epoch_loss, "val_score": val_score, "active": active.copy()})
        finished = stop | newly_diverged
        if finished.any():
            active &= ~finished
            trainer.freeze(finished[slot_models])
        if not active.any():
            break

    if config.early_stopping:
        net.flat.copy_(best_flat)
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
