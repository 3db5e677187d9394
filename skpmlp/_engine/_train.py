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
from ._batches import BatchPlanner
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


def build_network(spec, config, n_features, coefs=None, intercepts=None, *, folds=None):
    """Plan the groups of ``spec`` and build its fused network.

    Initial weights are drawn from each model's own seed unless ``coefs`` and
    ``intercepts`` are given. ``folds`` (one fold index per model) keeps
    replicas of one fold next to each other inside a group.
    """
    if coefs is None:
        drawn = [
            initial_weights(arch, act, seed, n_features, config.n_outputs)
            for arch, act, seed in zip(spec.hidden_layer_sizes, spec.activations, spec.init_seeds)
        ]
        coefs = [c for c, _ in drawn]
        intercepts = [b for _, b in drawn]
    # slots of equal (learning rate, alpha, fold) side by side: one optimizer
    # partition per run
    folds = np.zeros(spec.n_models, dtype=int) if folds is None else np.asarray(folds)
    keys = list(zip(folds, np.asarray(spec.learning_rates, float), np.asarray(spec.alphas, float)))
    codes = {key: code for code, key in enumerate(sorted(set(keys)))}
    groups = plan_groups(
        spec.hidden_layer_sizes,
        spec.activations,
        config.max_padding,
        split_elements=_SPLIT_ELEMENTS // config.batch_size,
        sort_codes=[codes[key] for key in keys],
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
    """A fused network of model replicas with its optimizer, trained one
    step at a time.

    Replica ``r = k * n_models + i`` is fold k's copy of model i.

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
    n_features : int
    n_folds : int, default=1

    Attributes
    ----------
    net : FusedNetwork
    loss_sums : Tensor of shape (n_replicas,)
        Per-slot sum over the epoch's batches of (batch loss x batch rows).
    """

    def __init__(self, spec, config, n_features, n_folds=1):
        self.config, self.n_folds = config, n_folds
        replica_folds = np.repeat(np.arange(n_folds), spec.n_models)
        self.net = net = build_network(spec.replicate(n_folds), config, n_features, folds=replica_folds)
        to = lambda a, dt: torch.as_tensor(a, dtype=dt, device=net.device)  # noqa: E731
        self.slot_fold = net.slot_values(replica_folds)
        self.group_folds = [
            to(self.slot_fold[net.group_offsets[g] : net.group_offsets[g + 1]], torch.int64)
            for g in range(len(net.groups))
        ]
        self.slot_fold_t = to(self.slot_fold, torch.int64)
        replicas = spec.replicate(n_folds)
        self.alphas = to(net.slot_values(replicas.alphas), net.dtype)
        self._slot_lr = net.slot_values(replicas.learning_rates)
        self._slot_alpha = net.slot_values(replicas.alphas)
        self.optimizer = make_optimizer(config, net.flat, net.grad, n_folds)
        self.loss_fn = LOSSES[config.task]
        self.loss_sums = torch.zeros(len(net.slot_models), dtype=net.dtype, device=net.device)
        self.frozen = np.zeros(len(net.slot_models), dtype=bool)
        self._update_partitions()

    def _update_partitions(self):
        """Partition the active slots by (learning rate, alpha, fold) for the
        fused optimizer; runs of equal keys are contiguous in each group."""
        partitions = {}
        key_of = lambda s: (self._slot_lr[s], self._slot_alpha[s], self.slot_fold[s])  # noqa: E731
        for gi in range(len(self.net.groups)):
            start, stop = self.net.group_offsets[gi], self.net.group_offsets[gi + 1]
            slot = start
            while slot < stop:
                if self.frozen[slot]:
                    slot += 1
                    continue
                key, end = key_of(slot), slot + 1
                while end < stop and not self.frozen[end] and key_of(end) == key:
                    end += 1
                ranges = self.net.parameter_ranges(gi, slot - start, end - start)
                partitions.setdefault(key, []).extend(ranges)
                slot = end
        self.optimizer.set_partitions([(*key, r) for key, r in partitions.items()])

    def _per_slot(self, gi, tensor):
        """Rows of a per-fold tensor (K, ...) for the slots of group ``gi``."""
        if self.n_folds == 1:
            return tensor  # (1, ...) broadcasts over the group
        return tensor.index_select(0, self.group_folds[gi])

    def train_step(self, xb, yb, weights, counts, weight_sums, stepping):
        """One fused forward / backward / update.

        Parameters
        ----------
        xb : Tensor (K, B, F)
            Every fold's batch.
        yb : Tensor (K, B) or (K, B, C)
        weights : Tensor (K, B)
            Row weights summing to 1 per fold (0 for padding rows).
        counts : Tensor (K,)
            Real rows per fold's batch.
        weight_sums, stepping : ndarray (K,)
            Host copies: sum of sample weights, and whether each fold steps.
        """
        net = self.net
        net.grad.zero_()
        total = 0
        for gi in range(len(net.groups)):
            x = xb[0] if self.n_folds == 1 else xb.index_select(0, self.group_folds[gi])
            losses = self.loss_fn(
                net.group_forward(gi, x), self._per_slot(gi, yb), self._per_slot(gi, weights)
            )
            a, b = net.group_offsets[gi], net.group_offsets[gi + 1]
            self.loss_sums[a:b] += losses.detach() * self._per_slot(gi, counts)
            total = total + losses.sum()
        total.backward()
        self.optimizer.step(weight_sums, stepping)

    def run_epoch(self, X, y, plan):
        """Train on every step of an :class:`EpochPlan`."""
        self.loss_sums.zero_()
        for s in range(plan.n_steps):
            rows = plan.rows[s]
            self.train_step(
                X[rows], y[rows], plan.weights[s], plan.counts[s],
                plan.weight_sums[s], plan.stepping[s],
            )

    def epoch_losses(self, fold_sizes, fold_batches):
        """Per-slot mean training loss of the epoch, L2 term included (numpy).

        The L2 term uses the end-of-epoch weights for every batch, a close
        approximation of scikit-learn's per-batch term.
        """
        per_slot = lambda v: torch.as_tensor(  # noqa: E731
            np.asarray(v, float)[self.slot_fold], dtype=self.net.dtype, device=self.net.device
        )
        sizes = per_slot(fold_sizes)
        l2 = 0.5 * self.alphas * self.net.squared_weight_norms() * per_slot(fold_batches) / sizes
        return (self.loss_sums / sizes + l2).cpu().numpy()

    @torch.no_grad()
    def monitor_scores(self, X_eval, y_eval, eval_weights):
        """Each slot's score on its own fold's evaluation rows (numpy).

        ``eval_weights`` (K, n_eval) is zero outside a fold's rows."""
        outputs = self.net.outputs(X_eval)
        weights = eval_weights.index_select(0, self.slot_fold_t)
        return MONITOR_SCORES[self.config.task](outputs, y_eval, weights).cpu().numpy()

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


def train_population(
    spec, config, X, y, folds, *, sample_weight=None, monitor=True, epoch_callback=None
):
    """Train every model of ``spec`` on every fold as one fused network.

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Class indices in ``[0, n_outputs)`` or regression targets.
    folds : list of (train_rows, eval_rows)
        Row indices per fold; ``eval_rows`` may be None (no monitoring).
    sample_weight : ndarray of shape (n_samples,), optional
        Row weights in every model's loss (and in the L2 divisor, as
        scikit-learn's MLP) and in the monitoring scores.
    monitor : bool, default=True
        Score every replica on its fold's evaluation rows every epoch
        (needed by early stopping; gives ``validation_scores``).
    epoch_callback : callable, optional
        Called after every epoch as ``epoch_callback(epoch, info)`` with a
        dict of per-replica numpy arrays (``loss``, ``val_score``,
        ``active``), of shape (n_folds * n_models,), fold-major.

    Returns
    -------
    TrainResult
    """
    has_eval = all(e is not None and len(e) > 0 for _, e in folds)
    assert not (config.early_stopping and not has_eval), "early stopping needs evaluation rows"
    with fast_cpu_training(config.device):
        return _train(spec, config, X, y, folds, sample_weight, monitor and has_eval, epoch_callback)


def _train(spec, config, X, y, folds, sample_weight, monitor, epoch_callback):
    start_time = time.perf_counter()
    K, M = len(folds), spec.n_models
    trainer = PopulationTrainer(spec, config, X.shape[1], K)
    net = trainer.net
    dtype, device = net.dtype, net.device
    n_replicas = K * M
    slot_models = net.slot_models  # slot -> replica

    X_t = as_tensor(X, dtype=dtype, device=device)
    y_t = targets_tensor(y, config.task, dtype=dtype, device=device)
    fold_sizes = [len(train) for train, _ in folds]
    batch_size = min(config.batch_size, max(fold_sizes))
    planner = BatchPlanner(
        [train for train, _ in folds], batch_size, config.shuffle_seed, sample_weight,
        dtype=dtype, device=device,
    )
    if monitor:
        eval_rows = np.unique(np.concatenate([np.asarray(e) for _, e in folds]))
        position = np.full(X.shape[0], -1)
        position[eval_rows] = np.arange(len(eval_rows))
        eval_weights = np.zeros((K, len(eval_rows)))
        sw = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        for k, (_, rows) in enumerate(folds):
            eval_weights[k, position[rows]] = sw[rows]
        eval_index = as_tensor(eval_rows, dtype=torch.int64, device=device)
        X_eval, y_eval = X_t[eval_index], y_t[eval_index]
        eval_weights = as_tensor(eval_weights, dtype=dtype, device=device)
    best_flat = net.flat.clone() if config.early_stopping else None

    active = np.ones(n_replicas, dtype=bool)  # replica order
    diverged = np.zeros(n_replicas, dtype=bool)
    converged = np.zeros(n_replicas, dtype=bool)
    n_iter = np.zeros(n_replicas, dtype=int)
    rule = _StoppingRule(n_replicas, config)
    loss_curves, val_curves = [], []
    fold_batches = [-(-n // batch_size) for n in fold_sizes]

    for epoch in range(config.max_iter):
        plan = planner.next_epoch()
        trainer.run_epoch(X_t, y_t, plan)

        # -------- once per epoch: host bookkeeping
        epoch_loss = np.empty(n_replicas)
        epoch_loss[slot_models] = trainer.epoch_losses(fold_sizes, fold_batches)
        val_score = None
        if monitor:
            val_score = np.empty(n_replicas)
            val_score[slot_models] = trainer.monitor_scores(X_eval, y_eval, eval_weights)
        n_iter[active] = epoch + 1
        loss_curves.append(np.where(active, epoch_loss, np.nan))
        if monitor:
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
    per_fold = lambda a: a.reshape(K, M, *a.shape[1:]).swapaxes(0, 1)  # noqa: E731
    return TrainResult(
        coefs=[coefs[k * M : (k + 1) * M] for k in range(K)],
        intercepts=[intercepts[k * M : (k + 1) * M] for k in range(K)],
        loss_curves=per_fold(np.stack(loss_curves, axis=1)),
        validation_scores=per_fold(np.stack(val_curves, axis=1)) if monitor else None,
        n_iter=per_fold(n_iter),
        converged=per_fold(converged),
        diverged=per_fold(diverged),
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
