"""The per-model ``meta`` and ``hyper`` table rows the step kernels read
(their layout: ``skpmlp._kernels._tables``), built from a fused network and
its slots' settings; shared by the native trainers and the Triton one."""

import numpy as np

from ... import _kernels
from .._activations import ACTIVATION_CODES
from .._dropout import threshold


def kernel_tables(net, slots, *, slot_fold, slot_lr, slot_alpha, slot_optimizer,
                  slot_step_offset=None, slot_dropout_key=None):
    """The kernel's ``meta`` and ``hyper`` rows of ``slots`` of ``net``.

    Parameters
    ----------
    net : FusedNetwork
    slots : ndarray of int
        Slots to train (the frozen ones are left out).
    slot_fold, slot_lr, slot_alpha : ndarray of shape (n_slots,)
    slot_optimizer : sequence of OptimizerSettings, one per slot
    slot_step_offset : ndarray of shape (n_slots,), optional
        The fold's optimizer steps each slot's model did not take (it joined
        the run later); zeros by default.
    slot_dropout_key : ndarray of int64 of shape (n_slots,), optional
        Each slot's dropout key (:func:`~.._dropout.model_key`); with it,
        the rows of models with dropout get their key, rate threshold and
        scale (the kernels draw their masks), without it none drops
        units.

    Returns
    -------
    meta : ndarray of int64 of shape (len(slots), META_WIDTH)
    hyper : ndarray of float64 of shape (len(slots), HYPER_WIDTH)
    """
    fields = _kernels.META_FIELDS
    h = _kernels.HYPER_FIELDS
    slots = np.asarray(slots, dtype=np.int64)
    meta = np.zeros((len(slots), _kernels.META_WIDTH), dtype=np.int64)
    hyper = np.zeros((len(slots), _kernels.HYPER_WIDTH))
    meta[:, fields["slot"]] = slots
    meta[:, fields["fold"]] = slot_fold[slots]
    hyper[:, h["lr"]], hyper[:, h["alpha"]] = slot_lr[slots], slot_alpha[slots]
    if slot_step_offset is not None:
        hyper[:, h["step_offset"]] = slot_step_offset[slots]
    settings = [slot_optimizer[s] for s in slots]
    meta[:, fields["solver"]] = [_kernels.kernel_code(o.solver, o.amsgrad) for o in settings]
    meta[:, fields["nesterov"]] = [int(o.nesterovs_momentum) for o in settings]
    hyper[:, h["beta_1"]] = [o.beta_1 for o in settings]
    hyper[:, h["beta_2"]] = [o.beta_2 for o in settings]
    hyper[:, h["epsilon"]] = [o.epsilon for o in settings]
    hyper[:, h["momentum"]] = [o.momentum for o in settings]
    hyper[:, h["label_smoothing"]] = [o.label_smoothing for o in settings]
    if slot_dropout_key is not None:
        rates = [o.dropout for o in settings]
        meta[:, fields["dropout_key"]] = slot_dropout_key[slots]
        meta[:, fields["dropout_threshold"]] = [threshold(p) for p in rates]
        hyper[:, h["dropout_scale"]] = [1.0 / (1.0 - float(p)) for p in rates]
    group_of_row = np.searchsorted(net.group_offsets, slots, side="right") - 1
    for gi in np.unique(group_of_row):  # a group at a time: its slots share one layout
        rows = np.flatnonzero(group_of_row == gi)
        group = net.groups[gi]
        positions = slots[rows] - net.group_offsets[gi]
        depth = len(group.widths)
        meta[rows, fields["depth"]] = depth
        activations = [group.activation_of(int(p)) for p in positions]
        meta[rows, fields["activation"]] = [ACTIVATION_CODES[a] for a in activations]
        archs = [net.archs[int(net.slot_models[s])] for s in slots[rows]]
        archs = np.array(archs, dtype=np.int64).reshape(len(rows), depth)
        sizes = fields["sizes"]
        meta[rows, sizes] = net.n_features
        meta[rows, sizes + 1 : sizes + depth + 1] = archs
        meta[rows, sizes + depth + 1] = net.n_outputs
        # each layer's (weight, bias) flat ranges for slot 0 of the group,
        # shifted by the slot's position; a bias's length is the layer's
        # padded width, the weight's row stride
        # the kernels have no diagonal scale: such runs train on torch
        # (native_supported, triton_unsupported)
        assert not net.groups[gi].scaled
        ranges = net.parameter_ranges(gi, 0, 1)
        weights, biases = ranges[0::2], ranges[1::2]
        for layer, ((w_off, w_len, _), (b_off, width, _)) in enumerate(zip(weights, biases)):
            meta[rows, fields["w_off"] + layer] = w_off + positions * w_len
            meta[rows, fields["b_off"] + layer] = b_off + positions * width
            meta[rows, fields["ld"] + layer] = width
    return meta, hyper
