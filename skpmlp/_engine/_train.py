"""The training loop: every model of a population, one fused step at a time.

Per step: one gather of the minibatch rows (the data lives on the device and
batches come from an on-device index permutation), one forward per group,
one backward of the summed per-model losses and one fused optimizer update.
Nothing in a step synchronises with the host; per-model bookkeeping (loss
curves, stopping rules, divergence) happens once per epoch.
"""

import gc
import math
import time
import warnings

import numpy as np
import torch

from ._batches import BatchPlanner
from ._chunks import merge_results
from ._init import population_initial_weights
from ._layout import plan_groups
from ._losses import LOSSES, monitor_function
from ._native import choose_trainer
from ._memory import data_bytes, is_out_of_memory, memory_budget, model_bytes, plan_chunks
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
        coefs, intercepts = population_initial_weights(spec, n_features, config.n_outputs)
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
    return FusedNetwork.from_weights(
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

    Replica ``r = k * n_models + i`` is fold k's copy of model i; the
    network's slots hold replicas (``net.slot_models``), and shrink when
    stopped replicas are compacted away.

    Parameters
    ----------
    spec : PopulationSpec
    config : TrainConfig
    n_features : int
    n_folds : int, default=1

    Attributes
    ----------
    net : FusedNetwork
    frozen : ndarray of bool of shape (n_slots,)
        Slots no longer updated.
    best_flat : Tensor or None
        With early stopping, every slot's best weights so far.
    loss_sums : Tensor of shape (n_slots,)
        Per-slot sum over the epoch's batches of (batch loss x batch rows).
    """

    def __init__(self, spec, config, n_features, n_folds=1):
        self.config, self.n_folds = config, n_folds
        replicas = spec.replicate(n_folds)
        self._replica_fold = np.repeat(np.arange(n_folds), spec.n_models)
        self._replica_lr = np.asarray(replicas.learning_rates, float)
        self._replica_alpha = np.asarray(replicas.alphas, float)
        net = build_network(replicas, config, n_features, folds=self._replica_fold)
        self.optimizer = make_optimizer(config, net.flat, net.grad, n_folds)
        self.loss_fn = LOSSES[config.task]
        self.best_flat = net.flat.clone() if config.early_stopping else None
        self._bind(net)

    def _bind(self, net):
        """Derive every per-slot tensor from ``net``."""
        self.net = net
        to = lambda a, dt: torch.as_tensor(a, dtype=dt, device=net.device)  # noqa: E731
        self.slot_fold = self._replica_fold[net.slot_models]
        self.group_folds = [
            to(self.slot_fold[net.group_offsets[g] : net.group_offsets[g + 1]], torch.int64)
            for g in range(len(net.groups))
        ]
        self.slot_fold_t = to(self.slot_fold, torch.int64)
        self.alphas = to(self._replica_alpha[net.slot_models], net.dtype)
        self.loss_sums = torch.zeros(len(net.slot_models), dtype=net.dtype, device=net.device)
        self.frozen = np.zeros(len(net.slot_models), dtype=bool)
        self._update_partitions()

    def _update_partitions(self):
        """Partition the active slots by (learning rate, alpha, fold) for the
        fused optimizer; runs of equal keys are contiguous in each group."""
        replica = self.net.slot_models
        key_of = lambda s: (  # noqa: E731
            self._replica_lr[replica[s]], self._replica_alpha[replica[s]], self.slot_fold[s]
        )
        partitions = {}
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
        """Each slot's monitored value (score, or negated loss) on its own
        fold's evaluation rows (numpy).

        ``eval_weights`` (K, n_eval) is zero outside a fold's rows."""
        outputs = self.net.outputs(X_eval)
        weights = eval_weights.index_select(0, self.slot_fold_t)
        score = monitor_function(self.config.task, self.config.monitor)
        return score(outputs, y_eval, weights).cpu().numpy()

    @torch.no_grad()
    def keep_best(self, improved):
        """Copy the current weights of the slots where ``improved`` is True
        into :attr:`best_flat`."""
        net = self.net
        for gi, (best, current) in enumerate(zip(net.layer_views(self.best_flat), net.params)):
            mask = improved[net.group_offsets[gi] : net.group_offsets[gi + 1]]
            if mask.any():
                rows = torch.as_tensor(mask, device=net.device).view(-1, 1, 1)
                for b, c in zip(best, current):
                    b.copy_(torch.where(rows, c, b))

    def freeze(self, slot_mask):
        """Stop updating the slots where ``slot_mask`` is True; their
        parameters stay bit-for-bit as they are."""
        self.frozen |= slot_mask
        self._update_partitions()

    def kept_weights(self, slots=None):
        """``{replica: (coefs, intercepts)}`` of ``slots`` (default all): the
        best weights with early stopping, else the current ones."""
        return self.net.export(self.best_flat, slots)

    def compact(self):
        """Drop the frozen slots: their parameters and optimizer state leave
        the device, so they stop costing compute."""
        net, carry = self.net.compact(~self.frozen)
        self.optimizer.rebind(net.flat, net.grad, carry)
        if self.best_flat is not None:
            self.best_flat = carry(self.best_flat)
        self._bind(net)


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
            no_gain = ~(values >= self.best + self.tol)  # NaN never gains
            improved = values > self.best
        else:
            no_gain = ~(values <= self.best - self.tol)
            improved = values < self.best
        self.count = np.where(active, np.where(no_gain, self.count + 1, 0), self.count)
        improved &= active
        self.best = np.where(improved, values, self.best)
        return improved, active & (self.count > self.patience)


def _fold_mean(values, valid, K):
    """Per-model mean over the folds where ``valid`` (replica arrays, fold
    major) of ``values``; NaN where no fold is valid."""
    values = np.where(valid, values, 0.0).reshape(K, -1)
    counts = valid.reshape(K, -1).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, values.sum(0) / counts, np.nan)


def halve(scores, alive, factor):
    """Successive halving's cut: of the ``alive`` models, those outside the
    best ``ceil(n_alive / factor)`` by ``scores`` (NaN worst, ties by
    position), as a bool mask."""
    candidates = np.flatnonzero(alive)
    n_keep = max(1, math.ceil(len(candidates) / factor))
    filled = np.where(np.isnan(scores[candidates]), -np.inf, scores[candidates])
    ranked = candidates[np.argsort(-filled, kind="stable")]
    pruned = np.zeros(len(alive), dtype=bool)
    pruned[ranked[n_keep:]] = True
    return pruned


def train_population(
    spec, config, X, y, folds, *, sample_weight=None, monitor=True, epoch_callback=None,
    max_memory=None, max_time=None,
):
    """Train every model of ``spec`` on every fold as one fused network.

    A population whose estimated needs exceed the device's free memory (or
    ``max_memory``) trains as chunks, one fused run after another; a chunk
    that still runs out of memory is split in two and retried, with a
    warning. Models are independent, so chunks give the results of one run
    (successive halving then ranks within each chunk).

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
        (needed by early stopping and pruning; gives ``validation_scores``).
    epoch_callback : callable, optional
        Called after every epoch as ``epoch_callback(epoch, info)`` with a
        dict of per-replica numpy arrays (``loss``, ``val_score``,
        ``active``), of shape (n_folds * n_models,), fold-major.
    max_memory : float, optional
        Bytes the run may use on its device.
    max_time : float, optional
        Seconds after which training ends at the end of an epoch, keeping
        what was trained (``halted="max_time"``).

    Returns
    -------
    TrainResult
        ``halted="interrupted"`` when a KeyboardInterrupt ended training
        after at least one epoch (one before that propagates).
    """
    has_eval = all(e is not None and len(e) > 0 for _, e in folds)
    assert has_eval or not (config.early_stopping or config.pruning), "monitoring needs evaluation rows"
    monitor = monitor and has_eval
    deadline = None if max_time is None else time.perf_counter() + max_time
    n_eval = len(np.unique(np.concatenate([np.asarray(e) for _, e in folds]))) if monitor else 0
    per_model = model_bytes(spec, config, X.shape[1], n_folds=len(folds), n_eval=n_eval)
    budget = memory_budget(config.device, max_memory)
    pending = plan_chunks(spec, per_model, data_bytes(config, X.shape[0], X.shape[1]), budget)
    if len(pending) > 1:
        warnings.warn(
            f"The population needs about {per_model.sum() / 2**20:.0f} MiB on {config.device}, more "
            f"than the {budget / 2**20:.0f} MiB available: training it as {len(pending)} chunks "
            f"one after another.",
            ResourceWarning, stacklevel=2,
        )
    parts, halted = [], None
    while pending:
        chunk = pending.pop(0)
        if halted is not None:  # nothing more to train: keep the chunk untrained
            parts.append((chunk, _untrained(spec.subset(chunk), config, X.shape[1], len(folds), monitor)))
            continue
        try:
            result = _train(spec.subset(chunk), config, X, y, folds, sample_weight, monitor,
                            epoch_callback, deadline)
        except Exception as error:
            if not is_out_of_memory(error) or len(chunk) == 1:
                raise
            _release_device_memory(config.device)
            half = len(chunk) // 2
            warnings.warn(
                f"Out of memory training {len(chunk)} models on {config.device}; retrying them "
                f"as two chunks of {half} and {len(chunk) - half} models.",
                ResourceWarning, stacklevel=2,
            )
            pending[:0] = [chunk[:half], chunk[half:]]
            continue
        halted = result.halted
        parts.append((chunk, result))
    return merge_results(parts, spec.n_models)


def _release_device_memory(device):
    gc.collect()
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()


def _untrained(spec, config, n_features, K, monitor):
    """The result of a chunk that never trained: initial weights, 0 epochs."""
    M = spec.n_models
    coefs, intercepts = population_initial_weights(spec, n_features, config.n_outputs)
    empty = np.zeros((M, K, 0))
    false = np.zeros((M, K), dtype=bool)
    return TrainResult(
        coefs=[coefs] * K,
        intercepts=[intercepts] * K,
        loss_curves=empty, validation_scores=empty.copy() if monitor else None,
        n_iter=np.zeros((M, K), dtype=int), converged=false, diverged=false.copy(),
        pruned=false.copy(),
    )


def _train(spec, config, X, y, folds, sample_weight, monitor, epoch_callback, deadline):
    """One fused run of every model of ``spec`` on every fold."""
    start_time = time.perf_counter()
    K, M = len(folds), spec.n_models
    trainer = choose_trainer(PopulationTrainer, spec, config)(spec, config, X.shape[1], K)
    dtype, device = trainer.net.dtype, trainer.net.device
    R = K * M

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

    active = np.ones(R, dtype=bool)  # replica order
    diverged = np.zeros(R, dtype=bool)
    converged = np.zeros(R, dtype=bool)
    pruned = np.zeros(R, dtype=bool)
    n_iter = np.zeros(R, dtype=int)
    # early stopping watches a model's mean validation score over its folds,
    # so its replicas stop together; the loss rule watches each replica
    rule = _StoppingRule(M if config.early_stopping else R, config)
    halving_epochs = config.halving_epochs()
    loss_curves, val_curves = [], []
    fold_batches = [-(-n // batch_size) for n in fold_sizes]
    kept = {}  # replica -> weights, saved when its slot is compacted away
    halted = None

    for epoch in range(config.max_iter):
        try:
            trainer.run_epoch(X_t, y_t, planner.next_epoch())
        except KeyboardInterrupt:
            if epoch == 0:
                raise
            halted = "interrupted"
            break

        # -------- once per epoch: host bookkeeping
        slot_models = trainer.net.slot_models
        epoch_loss = np.full(R, np.nan)
        epoch_loss[slot_models] = trainer.epoch_losses(fold_sizes, fold_batches)
        val_score = None
        if monitor:
            val_score = np.full(R, np.nan)
            val_score[slot_models] = trainer.monitor_scores(X_eval, y_eval, eval_weights)
        n_iter[active] = epoch + 1
        loss_curves.append(np.where(active, epoch_loss, np.nan))
        if monitor:
            val_curves.append(np.where(active, val_score, np.nan))

        newly_diverged = active & ~np.isfinite(epoch_loss)
        diverged |= newly_diverged
        healthy = active & ~newly_diverged
        if config.early_stopping:
            model_score = _fold_mean(val_score, healthy, K)
            improved, stop = rule.update(model_score, healthy.reshape(K, M).any(0))
            improved, stop = np.tile(improved, K) & healthy, np.tile(stop, K) & healthy
        else:
            improved, stop = rule.update(epoch_loss, healthy)
        converged |= stop
        if config.early_stopping and improved.any():
            trainer.keep_best(improved[slot_models])
        if epoch + 1 in halving_epochs:
            alive = (healthy & ~stop).reshape(K, M).any(0)
            scores = rule.best if config.early_stopping else _fold_mean(val_score, healthy, K)
            cut = np.tile(halve(scores, alive, config.halving_factor), K) & healthy & ~stop
            pruned |= cut
            stop = stop | cut
        if epoch_callback is not None:
            epoch_callback(epoch, {"loss": epoch_loss, "val_score": val_score, "active": active.copy()})
        finished = stop | newly_diverged
        if finished.any():
            active &= ~finished
            trainer.freeze(finished[slot_models])
            if active.any() and trainer.frozen.mean() >= config.compact_fraction:
                kept.update(trainer.kept_weights(trainer.frozen))
                trainer.compact()
        if not active.any():
            break
        if deadline is not None and time.perf_counter() >= deadline:
            halted = "max_time"
            break

    kept.update(trainer.kept_weights())
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    per_fold = lambda a: a.reshape(K, M, *a.shape[1:]).swapaxes(0, 1)  # noqa: E731
    n_epochs = len(loss_curves)
    stack = lambda curves: np.stack(curves, axis=1) if curves else np.zeros((R, 0))  # noqa: E731
    assert n_epochs or halted is None
    return TrainResult(
        coefs=[[kept[k * M + i][0] for i in range(M)] for k in range(K)],
        intercepts=[[kept[k * M + i][1] for i in range(M)] for k in range(K)],
        loss_curves=per_fold(stack(loss_curves)),
        validation_scores=per_fold(stack(val_curves)) if monitor else None,
        n_iter=per_fold(n_iter),
        converged=per_fold(converged),
        diverged=per_fold(diverged),
        pruned=per_fold(pruned),
        train_time=time.perf_counter() - start_time,
        halted=halted,
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
