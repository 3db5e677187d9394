"""The fused network of a population's replicas, trained one step at a time.

:class:`PopulationTrainer` is the unit the training loop drives: it owns the
fused network and its optimizer, runs an epoch of fused steps
(:meth:`~PopulationTrainer.run_epoch`) and answers the loop's per-epoch
questions (losses, monitored scores) and orders (keep the best weights,
freeze, compact). The loop itself, with the stopping rule and halving,
lives in ``_train`` and ``_stopping``.
"""

import dataclasses

import numpy as np
import torch

from ..._kernels import SOLVERS, n_state_buffers
from .._build import DTYPES, build_network
from .._dropout import group_dropouts, model_key
from .._losses import (
    group_smoothing,
    monitor_function,
    training_loss,
    validation_loss_function,
)
from .._minibatch._optim import make_optimizer
from .._minibatch._slots import read_slot, write_slot
from .._run_state import network_from_state, network_state, tensor_state, to_device
from .._spec import OptimizerSettings


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
    state : dict, optional
        What :meth:`host_state` gave: the trainer goes on from there (its
        network, optimizer, frozen slots and every replica's settings, those
        of refilled slots included), instead of from the initial weights.

    Attributes
    ----------
    net : FusedNetwork
    frozen : ndarray of bool of shape (n_slots,)
        Slots no longer updated.
    best_flat : Tensor or None
        With early stopping or ``restore_best_weights``, every slot's best
        weights so far.
    loss_sums : Tensor of shape (n_slots,)
        Per-slot sum over the epoch's batches of (batch loss x batch rows).
    """

    #: how its epochs run (the native subclass says "native")
    backend = "torch"
    #: a :class:`~._distributed.DataParallel` whose ranks share every
    #: step's rows (the run sets it): their gradients are summed before
    #: the update
    data_parallel = None
    #: why the run trains on torch rather than the native kernel, where
    #: the kernel was an option (the run sets it; ``describe`` says it)
    fallback_reason = None

    @property
    def compaction_pays(self):
        """Whether dropping frozen slots saves work: every op of a torch
        step runs over every slot of its group, frozen or not."""
        return True

    def __init__(self, spec, config, n_features, n_folds=1, state=None):
        self.config, self.n_folds = config, n_folds
        replicas = spec.replicate(n_folds)
        self._replica_fold = np.repeat(np.arange(n_folds), spec.n_models)
        self._replica_lr = np.asarray(replicas.learning_rates, float)
        self._replica_alpha = np.asarray(replicas.alphas, float)
        self._replica_optimizer = replicas.optimizers_of(config)
        self._replica_sgd = _velocity(self._replica_optimizer)
        # the fold's optimizer steps a replica did not take (refills, see _refill)
        self._replica_step_offset = np.zeros(len(self._replica_lr))
        # every replica's dropout key, from its model's seed (fold replicas
        # share it: hashed once a model, in Python)
        self._replica_key = np.tile(np.array([model_key(seed) for seed in spec.init_seeds],
                                             dtype=np.int64), n_folds)
        self.initial_learning_rates = self._replica_lr.copy()
        if state is None:
            net = build_network(replicas, config, n_features, folds=self._replica_fold)
        else:  # a refilled run's replicas are not the spec's
            self._load_settings(state["settings"])
            net = network_from_state(state["network"], dtype=DTYPES[config.dtype],
                                     device=torch.device(config.device))
        self.optimizer = make_optimizer(self._replica_optimizer, net.flat, net.grad, n_folds)
        self.loss_fn = training_loss(config)
        keeps_best = config.early_stopping or config.restore_best_weights
        self.best_flat = net.flat.clone() if keeps_best else None
        self._bind(net)
        if state is not None:
            self._load(state)

    def host_state(self):
        """What the trainer needs to go on from here, as host arrays (see
        :mod:`._run_state`): the network's layout and weights, the
        optimizer's state buffers and per-fold step counts, the frozen
        slots, the best weights and the current learning rates."""
        return {
            "network": network_state(self.net), "frozen": self.frozen.copy(),
            "best": tensor_state(self.best_flat),
            "optimizer": [tensor_state(state) for state in self.optimizer.state],
            "step_counts": tensor_state(self.optimizer.step_counts),
            "replica_lr": self._replica_lr.copy(),
            "step_offset": self._replica_step_offset.copy(),
            "settings": self._settings_state(),
        }

    def _settings_state(self):
        """Every replica's fixed settings (a refill changes them): its L2
        penalty, initial learning rate and optimizer, the optimizers as a
        table of distinct settings and one index per replica."""
        table = sorted(set(self._replica_optimizer))
        position = {settings: i for i, settings in enumerate(table)}
        return {
            "alpha": self._replica_alpha.copy(),
            "initial_lr": np.asarray(self.initial_learning_rates, dtype=float).copy(),
            "optimizers": [dataclasses.asdict(settings) for settings in table],
            "optimizer_of": np.array([position[o] for o in self._replica_optimizer],
                                     dtype=np.int64),
            "dropout_key": self._replica_key.copy(),
        }

    def _load_settings(self, state):
        """Every replica's settings from :meth:`_settings_state`."""
        table = [OptimizerSettings(**fields) for fields in state["optimizers"]]
        self._replica_optimizer = [table[i] for i in state["optimizer_of"]]
        self._replica_alpha = np.array(state["alpha"], dtype=float)
        self.initial_learning_rates = np.array(state["initial_lr"], dtype=float)
        self._replica_lr = self.initial_learning_rates.copy()  # _load puts the current back
        self._replica_sgd = _velocity(self._replica_optimizer)
        self._replica_step_offset = np.zeros(len(self._replica_alpha))
        self._replica_fold = np.repeat(np.arange(self.n_folds),
                                       len(self._replica_alpha) // self.n_folds)
        # a state saved before dropout existed: no replica drops units
        keys = state.get("dropout_key", np.zeros(len(self._replica_alpha)))
        self._replica_key = np.array(keys, dtype=np.int64)

    def _load(self, state):
        """Everything of :meth:`host_state` but the network (built already)."""
        flat = self.net.flat
        self.optimizer.state = [to_device(buffer, flat) for buffer in state["optimizer"]]
        counts = self.optimizer.step_counts
        self.optimizer.step_counts = to_device(state["step_counts"], counts)
        if self.best_flat is not None:
            self.best_flat = to_device(state["best"], flat)
        self.frozen = np.array(state["frozen"], dtype=bool)
        # as saved, not through set_learning_rates: its momentum rescaling
        # happened when the rates changed
        self._replica_lr = np.array(state["replica_lr"], dtype=float)
        self._replica_step_offset = np.array(state["step_offset"], dtype=float)
        self._slots_changed()

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
        # the L2 term of the loss (none where the weights decay decoupled)
        coupled = ~np.array([SOLVERS[o.solver].decoupled for o in self._replica_optimizer])
        self.alphas = to((self._replica_alpha * coupled)[net.slot_models], net.dtype)
        self.loss_sums = torch.zeros(len(net.slot_models), dtype=net.dtype, device=net.device)
        self.frozen = np.zeros(len(net.slot_models), dtype=bool)
        self._smoothing_changed()
        self._dropout_changed()
        self._slots_changed()

    def _dropout_changed(self):
        """Each group's :class:`~.._dropout.GroupDropout` (None where no
        slot of it drops units: its steps run as without dropout)."""
        rates = np.array([o.dropout for o in self._replica_optimizer], dtype=float)
        self.group_dropout = group_dropouts(self.net, self._replica_key, rates)

    def _smoothing_changed(self):
        """Each group's label smoothing for the loss (None where no slot of
        it smooths), from its slots' settings."""
        net = self.net
        per_slot = [self._replica_optimizer[r].label_smoothing for r in net.slot_models]
        self.group_smoothing = group_smoothing(self.config.task, per_slot, net.group_offsets,
                                               dtype=net.dtype, device=net.device)

    def _slots_changed(self):
        """Rebuild what a step reads of the slots and their settings, after
        slots were frozen, compacted, replaced or their rates changed.

        The torch trainer partitions the active slots by (learning rate,
        alpha, fold, optimizer, step offset) for the fused optimizer (runs of
        equal keys are contiguous in each group); a subclass whose steps run
        elsewhere (the native kernel) builds its own tables instead.
        """
        replica = self.net.slot_models
        key_of = lambda s: (  # noqa: E731
            self._replica_lr[replica[s]], self._replica_alpha[replica[s]], self.slot_fold[s],
            self._replica_optimizer[replica[s]], self._replica_step_offset[replica[s]],
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

    @property
    def replica_optimizers(self):
        """Every replica's :class:`~._spec.OptimizerSettings` (fold-major)."""
        return self._replica_optimizer

    @property
    def learning_rates(self):
        """Every replica's current learning rate (fold-major), a copy."""
        return self._replica_lr.copy()

    def reserve(self, capacity):
        """Make room for ``capacity`` models per fold (refills, see
        :mod:`skpmlp._engine._minibatch._refill`): replica
        ``k * n_models + i`` becomes ``k * capacity + i``, and every
        per-replica setting grows to ``n_folds * capacity`` replicas, the
        new ones idle until :meth:`replace_slots` places them."""
        K = self.n_folds
        M = len(self._replica_lr) // K
        old = np.arange(K * M)
        new = (old // M) * capacity + old % M
        remap = np.zeros(K * M, dtype=np.int64)
        remap[old] = new

        def grown(array, fill):
            out = np.full(K * capacity, fill, dtype=np.asarray(array).dtype)
            out[new] = array
            return out

        self._replica_fold = np.repeat(np.arange(K), capacity)
        self._replica_lr = grown(self._replica_lr, 1.0)
        self._replica_alpha = grown(self._replica_alpha, 0.0)
        self._replica_sgd = grown(self._replica_sgd, False)
        self._replica_step_offset = grown(self._replica_step_offset, 0.0)
        self._replica_key = grown(self._replica_key, 0)
        self.initial_learning_rates = grown(self.initial_learning_rates, 1.0)
        settings = [self.config.optimizer_settings()] * (K * capacity)
        for o, n in zip(old, new):
            settings[n] = self._replica_optimizer[o]
        self._replica_optimizer = settings
        net = self.net
        for group in net.groups:
            group.models[:] = remap[group.models]
        net.slot_models = remap[net.slot_models]
        net.archs = {int(remap[m]): arch for m, arch in net.archs.items()}
        self._slots_changed()

    def replace_slots(self, newcomers):
        """Give slots to new models: each :class:`~skpmlp._engine._minibatch._slots.Newcomer` takes
        its slots (one per fold) with its settings and fresh weights and
        optimizer state, or a copy of its parents' (whose optimizer steps it
        inherits). Nothing of another slot changes."""
        self._grow_state(max(n_state_buffers([n.optimizer]) for n in newcomers))
        net = self.net
        # the views once per call: building them costs more than a copy
        views = {
            "params": net.layer_views(net.flat.detach()),
            "states": [net.layer_views(state) for state in self.optimizer.state],
            "best": None if self.best_flat is None else net.layer_views(self.best_flat),
            "steps": self.optimizer.step_counts.cpu().numpy(),
        }
        with torch.no_grad():
            for newcomer in newcomers:
                for k in range(len(newcomer.slots)):
                    self._place(newcomer, k, views)
        self._smoothing_changed()
        self._dropout_changed()
        self._slots_changed()

    def _grow_state(self, n_buffers):
        """Zero optimizer state buffers up to ``n_buffers`` (an Adam
        newcomer in a network of SGD models needs Adam's second moment)."""
        while len(self.optimizer.state) < n_buffers:
            self.optimizer.state.append(torch.zeros_like(self.net.flat))

    def _place(self, newcomer, k, views):
        """Fold ``k``'s replica of ``newcomer`` into its slot (see
        :meth:`replace_slots`; ``views`` from there)."""
        net, n = self.net, newcomer
        slot, r = int(n.slots[k]), int(n.replicas[k])
        gi, pos = self._position(slot)
        group = net.groups[gi]
        assert group.scaled == n.optimizer.diagonal_scaling  # check_refill
        params, states = views["params"], views["states"]
        if n.parents is None:
            coefs, intercepts = n.weights
            fresh = [  # interleaved as read_slot gives them: W0, b0, W1, b1, ...
                torch.as_tensor(a, dtype=net.dtype, device=net.device)
                for pair in zip(coefs, intercepts) for a in pair
            ]
            if group.scaled:  # a fresh scale is the identity
                fresh.append(torch.ones(net.n_features, dtype=net.dtype, device=net.device))
            write_slot(params[gi], pos, fresh, n.arch, group)
            for state in states:
                write_slot(state[gi], pos, None, n.arch, group)
            step_offset = float(views["steps"][k])  # its own steps start now
        else:
            parent = int(n.parents[k])
            p_gi, p_pos = self._position(int(np.flatnonzero(net.slot_models == parent)[0]))
            write_slot(params[gi], pos, read_slot(params[p_gi], p_pos, n.arch), n.arch, group)
            p_lr = self._replica_lr[parent]
            for i, state in enumerate(states):
                values = read_slot(state[p_gi], p_pos, n.arch)
                if i == 0 and SOLVERS[n.optimizer.solver].velocity and p_lr != n.learning_rate:
                    # the velocity convention of set_learning_rates
                    values = [v * (p_lr / n.learning_rate) for v in values]
                write_slot(state[gi], pos, values, n.arch, group)
            step_offset = float(self._replica_step_offset[parent])
        if views["best"] is not None:
            write_slot(views["best"][gi], pos, read_slot(params[gi], pos, n.arch), n.arch, group)
        net.slot_models[slot] = r
        group.models[pos] = r
        net.archs[r] = tuple(n.arch)
        self._replica_lr[r], self._replica_alpha[r] = n.learning_rate, n.alpha
        self._replica_optimizer[r] = n.optimizer
        self._replica_sgd[r] = SOLVERS[n.optimizer.solver].velocity
        self._replica_step_offset[r] = step_offset
        self._replica_key[r] = model_key(n.seed)
        self.initial_learning_rates[r] = n.learning_rate
        self.alphas[slot] = 0.0 if SOLVERS[n.optimizer.solver].decoupled else n.alpha
        self.frozen[slot] = False

    def _position(self, slot):
        """``(group index, position in the group)`` of ``slot``."""
        gi = int(np.searchsorted(self.net.group_offsets, slot, side="right") - 1)
        return gi, int(slot - self.net.group_offsets[gi])

    def set_learning_rates(self, replica_lr):
        """Train on with these per-replica learning rates (a schedule's);
        the optimizer's partitions follow where any rate changed.

        SGD keeps torch's momentum buffer ``b`` (step ``lr * b``), scikit-learn
        a velocity ``v = -lr * b`` that keeps the rates of the steps it
        summed. Scaling ``b`` by ``old / new`` rate where a rate changes makes
        the two the same, with or without Nesterov."""
        replica_lr = np.asarray(replica_lr, dtype=float)
        if np.array_equal(replica_lr, self._replica_lr):
            return
        replica = self.net.slot_models
        scale = self._replica_lr[replica] / replica_lr[replica]
        scale = np.where(self._replica_sgd[replica] & (scale != 1), scale, 1.0)
        if (scale != 1).any():
            per_slot = torch.as_tensor(scale, dtype=self.net.dtype, device=self.net.device)
            with torch.no_grad():
                for gi, views in enumerate(self.net.layer_views(self.optimizer.state[0])):
                    factor = per_slot[self.net.group_offsets[gi] : self.net.group_offsets[gi + 1]]
                    for view in views:
                        view.mul_(factor.view(-1, 1, 1))
        self._replica_lr = replica_lr.copy()
        self._slots_changed()

    def _per_slot(self, gi, tensor):
        """Rows of a per-fold tensor (K, ...) for the slots of group ``gi``."""
        if self.n_folds == 1:
            return tensor  # (1, ...) broadcasts over the group
        return tensor.index_select(0, self.group_folds[gi])

    def train_step(self, xb, yb, weights, counts, weight_sums, stepping, at=(0, 0, 0)):
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
        at : (int, int, int)
            The epoch, the step within it and the position of the batch's
            first row in the whole batch (a data-parallel rank's share):
            what a dropout mask hashes besides the model, layer, row and unit.
        """
        net = self.net
        net.grad.zero_()
        total = 0
        for gi in range(len(net.groups)):
            x = xb[0] if self.n_folds == 1 else xb.index_select(0, self.group_folds[gi])
            smoothing, dropout = self.group_smoothing[gi], self.group_dropout[gi]
            if dropout is not None:
                epoch, step, row_start = at
                dropout = dropout.at(epoch, step, x.shape[-2], row_start)
            losses = self.loss_fn(
                net.group_forward(gi, x, dropout), self._per_slot(gi, yb),
                self._per_slot(gi, weights),
                **({} if smoothing is None else {"smoothing": smoothing}),
            )
            a, b = net.group_offsets[gi], net.group_offsets[gi + 1]
            self.loss_sums[a:b] += losses.detach() * self._per_slot(gi, counts)
            total = total + losses.sum()
        total.backward()
        if self.data_parallel is not None:
            self.data_parallel.all_reduce(net.grad)
        self.optimizer.step(weight_sums, stepping)

    #: GFLOP/s of the last epoch where the trainer measures it (the native one)
    last_gflops = None

    def describe(self):
        """Which path trains, in words (``verbose`` shows it)."""
        if self.fallback_reason:
            return f"torch ({self.net.device}; not the native kernel: {self.fallback_reason})"
        return f"torch ({self.net.device})"

    def run_epoch(self, X, y, plan):
        """Train on every step of an :class:`EpochPlan`."""
        self.loss_sums.zero_()
        for s in range(plan.n_steps):
            rows = plan.rows[s]
            self.train_step(
                X[rows], y[rows], plan.weights[s], plan.counts[s],
                plan.weight_sums[s], plan.stepping[s], (plan.epoch, s, plan.row_start),
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
    def scores_of_outputs(self, outputs, y_eval, eval_weights, with_loss=False):
        """Each slot's monitored value (score, or negated loss) on its own
        fold's evaluation rows (numpy), from every slot's ``outputs``
        (n_slots, n_eval, C) for the evaluation rows (:meth:`outputs`).

        ``eval_weights`` (K, n_eval) is zero outside a fold's rows. With
        ``with_loss``, ``(score, validation loss)`` from the same outputs
        (``restore_best_weights`` watches the loss): with ``monitor="loss"``
        the loss is the negated score itself."""
        weights = eval_weights.index_select(0, self.slot_fold_t)
        score = monitor_function(self.config)(outputs, y_eval, weights)
        # a model whose outputs overflowed on its own rows scores NaN,
        # whatever they overflowed to (inf or NaN depends on the order a
        # backend sums in)
        finite = (torch.isfinite(outputs).all(2) | (weights == 0)).all(1)
        score = torch.where(finite, score, torch.nan).cpu().numpy()
        if not with_loss:
            return score
        if self.config.monitor == "loss":
            return score, -score
        loss = validation_loss_function(self.config)(outputs, y_eval, weights)
        return score, torch.where(finite, loss, torch.nan).cpu().numpy()

    @torch.no_grad()
    def outputs(self, X):
        """Every slot's outputs for ``X``: Tensor of shape (n_slots, n, C)."""
        return self.net.outputs(X)

    @torch.no_grad()
    def keep_best(self, improved):
        """Copy the current weights of the slots where ``improved`` is True
        into :attr:`best_flat`."""
        net = self.net
        for gi, (best, current) in enumerate(zip(self._best_views(), net.params)):
            slots = np.flatnonzero(improved[net.group_offsets[gi] : net.group_offsets[gi + 1]])
            if len(slots):
                index = torch.as_tensor(slots, device=net.device)
                for b, c in zip(best, current):
                    b.index_copy_(0, index, c.index_select(0, index))

    def _best_views(self):
        """:attr:`best_flat`'s layer views, built again only when it or the
        network is another (every epoch may keep best weights)."""
        net, best, views = getattr(self, "_best_views_of", (None, None, None))
        if net is not self.net or best is not self.best_flat:
            views = self.net.layer_views(self.best_flat)
            self._best_views_of = (self.net, self.best_flat, views)
        return views

    def freeze(self, slot_mask):
        """Stop updating the slots where ``slot_mask`` is True; their
        parameters stay bit-for-bit as they are."""
        self.frozen |= slot_mask
        self._frozen_changed()

    def _frozen_changed(self):
        """Rebuild what a step reads after slots were frozen (nothing else
        changed): by default all of :meth:`_slots_changed`."""
        self._slots_changed()

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


def _velocity(settings):
    """Which replicas keep a momentum buffer as a velocity (see
    :meth:`PopulationTrainer.set_learning_rates`)."""
    return np.array([SOLVERS[o.solver].velocity for o in settings], dtype=bool)
