"""The population trainer on the native kernel (CPU).

:class:`NativeTrainer` is a :class:`PopulationTrainer` whose epoch is one
call of the per-model kernel (``skpmlp._kernels``): each model runs every
step of its fold's batches (forward, loss gradient, backward, L2 and the
optimizer update) in one native pass, reading and writing the same flat
parameter and optimizer-state buffers as the torch path. Everything around
the epoch (monitoring, early stopping, halving, compaction, export) is the
torch trainer's, so both paths share one layout and one set of invariants.

The kernel loops over each model's own widths: the padding of a group
costs memory, never time.
"""

import numpy as np
import torch

from .. import _kernels
from ._activations import ACTIVATION_CODES
from ._trainer import PopulationTrainer

_LOSS_OF_TASK = {"classification": "softmax", "regression": "squared"}


def native_supported(config, spec):
    """Why the kernel cannot train this run, or None when it can."""
    if torch.device(config.device).type != "cpu":
        return "the native kernel runs on the CPU only"
    if config.dtype not in ("float32", "float64"):
        return f"dtype {config.dtype!r}"
    if max(len(arch) for arch in spec.hidden_layer_sizes) > _kernels.MAX_DEPTH:
        return f"networks deeper than {_kernels.MAX_DEPTH} hidden layers"
    if config.task == "regression" and config.loss != "squared_error":
        # the kernel's regression loss is squared error: such runs train on torch
        return f"loss={config.loss!r} (the kernel has squared error only)"
    return None


def kernel_tables(net, slots, *, slot_fold, slot_lr, slot_alpha, config):
    """The kernel's ``meta`` and ``hyper`` rows of ``slots`` of ``net``.

    Parameters
    ----------
    net : FusedNetwork
    slots : ndarray of int
        Slots to train (the frozen ones are left out).
    slot_fold, slot_lr, slot_alpha : ndarray of shape (n_slots,)
    config : TrainConfig

    Returns
    -------
    meta : ndarray of int64 of shape (len(slots), META_WIDTH)
    hyper : ndarray of float64 of shape (len(slots), HYPER_WIDTH)
    """
    fields = _kernels.META_FIELDS
    h = _kernels.HYPER_FIELDS
    meta = np.zeros((len(slots), _kernels.META_WIDTH), dtype=np.int64)
    hyper = np.zeros((len(slots), _kernels.HYPER_WIDTH))
    group_of_slot = np.searchsorted(net.group_offsets, slots, side="right") - 1
    for row, (slot, gi) in enumerate(zip(slots, group_of_slot)):
        group = net.groups[gi]
        position = int(slot - net.group_offsets[gi])
        arch = net.archs[int(net.slot_models[slot])]
        depth = len(arch)
        meta[row, fields["slot"]] = slot
        meta[row, fields["depth"]] = depth
        meta[row, fields["activation"]] = ACTIVATION_CODES[group.activation_of(position)]
        meta[row, fields["fold"]] = slot_fold[slot]
        meta[row, fields["solver"]] = 0 if config.solver == "adam" else 1
        meta[row, fields["nesterov"]] = int(config.nesterovs_momentum)
        meta[row, fields["sizes"] : fields["sizes"] + depth + 2] = [net.n_features, *arch, net.n_outputs]
        # the slot's (weight, bias) flat ranges, layer by layer; a bias's
        # length is the layer's padded width, the weight's row stride
        ranges = net.parameter_ranges(gi, position, position + 1)
        for layer, ((w_off, _, _), (b_off, width, _)) in enumerate(zip(ranges[0::2], ranges[1::2])):
            meta[row, fields["w_off"] + layer] = w_off
            meta[row, fields["b_off"] + layer] = b_off
            meta[row, fields["ld"] + layer] = width
        hyper[row, h["lr"]] = slot_lr[slot]
        hyper[row, h["alpha"]] = slot_alpha[slot]
        hyper[row, h["beta_1"]], hyper[row, h["beta_2"]] = config.beta_1, config.beta_2
        hyper[row, h["epsilon"]], hyper[row, h["momentum"]] = config.epsilon, config.momentum
    return meta, hyper


def epoch_batches(X, y, plan, task):
    """The kernel's per-epoch batch tensors: every fold's batches gathered
    once and transposed so that samples lie along the vector lanes.

    Returns
    -------
    dict
        ``X`` (n_steps, K, F, B_pad), ``Y`` (n_steps, K, B_pad) or
        (n_steps, K, C, B_pad), ``W`` (n_steps, K, B_pad); zero in the
        padding columns.
    """
    S, K, B = plan.rows.shape
    lanes = _kernels.lanes(X.dtype)
    bp = -(-B // lanes) * lanes
    rows = plan.rows
    Xb = X.new_zeros((S, K, X.shape[1], bp))
    Xb[..., :B] = X[rows].transpose(2, 3)
    if task == "classification":
        Yb = X.new_zeros((S, K, bp))
        Yb[..., :B] = y[rows].to(X.dtype)
    else:
        Yb = X.new_zeros((S, K, y.shape[1], bp))
        Yb[..., :B] = y[rows].transpose(2, 3)
    Wb = X.new_zeros((S, K, bp))
    Wb[..., :B] = plan.weights
    return {"X": Xb, "Y": Yb, "W": Wb}


class NativeTrainer(PopulationTrainer):
    """:class:`PopulationTrainer` whose epochs run on the native kernel."""

    backend = "native"
    #: threads of the kernel's epochs (the run sets it; torch's count
    #: where it is not set)
    n_threads = None

    def _update_partitions(self):
        super()._update_partitions()
        slots = np.flatnonzero(~self.frozen)
        replica = self.net.slot_models
        self._meta, self._hyper = kernel_tables(
            self.net, slots, slot_fold=self.slot_fold, slot_lr=self._replica_lr[replica],
            slot_alpha=self._replica_alpha[replica], config=self.config,
        )

    def run_epoch(self, X, y, plan):
        self.loss_sums.zero_()
        if len(self._meta) == 0:
            return
        optimizer = self.optimizer
        counts = getattr(optimizer, "step_counts", None)
        step0 = np.zeros(self.n_folds) if counts is None else counts.cpu().numpy().astype(np.float64)
        batches = epoch_batches(X, y, plan, self.config.task)
        batches.update(
            counts=plan.counts.cpu().numpy(), weight_sums=plan.weight_sums,
            stepping=plan.stepping, step0=step0,
        )
        state = optimizer.state
        _kernels.run_models(
            "epoch", self._meta, self._hyper, batches,
            {
                "params": self.net.flat.detach(), "grads": None,
                "state1": state[0] if state else None,
                "state2": state[1] if len(state) > 1 else None,
                "loss_sums": self.loss_sums,
            },
            n_outputs=self.net.n_outputs, loss=_LOSS_OF_TASK[self.config.task],
            n_threads=self.n_threads or torch.get_num_threads(),
        )
        if counts is not None:
            counts += torch.as_tensor(plan.stepping.sum(0), dtype=counts.dtype, device=counts.device)



def choose_trainer(spec, config):
    """The trainer class for this run: the native one unless the config asks
    for torch, or the kernel cannot run here (``backend="native"`` then
    raises with the reason)."""
    if config.backend == "torch":
        return PopulationTrainer
    reason = native_supported(config, spec)
    if reason is None and not _kernels.kernel_available():
        reason = f"the kernel could not be built ({_kernels.build_info()['error']})"
    if reason is None:
        return NativeTrainer
    if config.backend == "native":
        raise ValueError(f"backend='native' cannot train this run: {reason}.")
    return PopulationTrainer


def prepare_kernel(config, *, verbose=False):
    """Build (or load from the cache) the native kernel before a CPU run,
    announcing a first-use compile and its time when ``verbose``; whether it
    will train the run's epochs."""
    try:
        on_cpu = torch.device(config.device).type == "cpu"
    except (RuntimeError, TypeError):  # "auto", resolved where the run happens
        on_cpu = not torch.cuda.is_available()
    if config.backend == "torch" or not on_cpu:
        return False
    return _kernels.kernel_available(verbose=verbose)
