"""Checks of the arguments handed to the native kernels.

The kernels read and write raw memory at the offsets they are given, so
every buffer's dtype, device, contiguity and shape, and every model's
offsets, are checked here before a call, with real exceptions: an
``assert`` would vanish under ``python -O`` and leave a bad offset to
corrupt memory.
"""

from dataclasses import dataclass

import numpy as np
import torch

from ._tables import HYPER_WIDTH, MAX_DEPTH, META_FIELDS, META_WIDTH


def check_tensors(tensors, dtype):
    """Every tensor of ``tensors`` (name -> tensor or None) is a contiguous
    CPU tensor of ``dtype``."""
    for name, tensor in tensors.items():
        if tensor is None:
            continue
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"{name} must be a torch tensor, got {type(tensor).__name__}")
        if tensor.device.type != "cpu":
            raise ValueError(f"{name} must be on the CPU, not {tensor.device}")
        if tensor.dtype != dtype:
            raise TypeError(f"{name} must be {dtype}, not {tensor.dtype}")
        if not tensor.is_contiguous():
            raise ValueError(f"{name} must be contiguous")


def host_array(value, dtype, shape, name):
    """``value`` as a C-contiguous numpy array of ``dtype`` and ``shape``."""
    array = np.ascontiguousarray(value, dtype=dtype)
    if array.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, not {array.shape}")
    return array


def check_fold_rows(first, rows, n_eval, n_pad=None):
    """Each fold's evaluation rows ``[first[k], first[k] + rows[k])`` lie
    within the ``n_eval`` rows (and ``rows[k]`` within a fold's block of
    ``n_pad``)."""
    if (np.shape(first) != np.shape(rows) or (rows < 0).any() or (first < 0).any()
            or (first + rows > n_eval).any() or (n_pad is not None and (rows > n_pad).any())):
        raise ValueError(f"the folds' evaluation rows {list(zip(first, rows))} lie outside "
                         f"the {n_eval} rows or their blocks")


def check_batches(batches, n_outputs, classification):
    """The shapes of one call's batches; returns (n_steps, K, F, B_pad)."""
    X, Y, W = batches["X"], batches["Y"], batches["W"]
    if X.dim() != 4:
        raise ValueError(f"X must be (n_steps, K, F, B_pad), not {tuple(X.shape)}")
    n_steps, K, F, bp = X.shape
    want_y = (n_steps, K, bp) if classification else (n_steps, K, n_outputs, bp)
    if tuple(Y.shape) != want_y:
        raise ValueError(f"Y must have shape {want_y}, not {tuple(Y.shape)}")
    if tuple(W.shape) != (n_steps, K, bp):
        raise ValueError(f"W must have shape {(n_steps, K, bp)}, not {tuple(W.shape)}")
    return n_steps, K, F, bp


@dataclass(frozen=True)
class Bounds:
    """What the ``meta`` table's offsets and indices must stay within.

    Attributes
    ----------
    n_params : int
        Length of the flat parameter buffer (weights and biases).
    n_slots : int or None
        Slots of the per-slot buffers (None: not read by the call).
    n_folds : int or None
        Folds of the batches (None: not read by the call).
    n_features, n_outputs : int
        The layer sizes every model must start and end with.
    """

    n_params: int
    n_slots: int
    n_folds: int
    n_features: int
    n_outputs: int


def check_tables(meta, hyper, bounds):
    """``meta`` / ``hyper`` rows that describe models lying inside the
    buffers: depth in range, layer sizes chaining from ``n_features`` to
    ``n_outputs``, every weight and bias range inside ``n_params``, slot
    and fold indices in range (:class:`Bounds`); the layout is
    :mod:`._tables`'. Returns both as C-contiguous arrays."""
    fields, max_depth = META_FIELDS, MAX_DEPTH
    meta_width, hyper_width = META_WIDTH, HYPER_WIDTH
    n_params, n_features, n_outputs = bounds.n_params, bounds.n_features, bounds.n_outputs
    meta = np.ascontiguousarray(meta, dtype=np.int64)
    hyper = np.ascontiguousarray(hyper, dtype=np.float64)
    if meta.ndim != 2 or meta.shape[1] != meta_width:
        raise ValueError(f"meta must be (n_models, {meta_width}), not {meta.shape}")
    if hyper.shape != (len(meta), hyper_width):
        raise ValueError(f"hyper must be ({len(meta)}, {hyper_width}), not {hyper.shape}")
    depth = meta[:, fields["depth"]]
    if ((depth < 0) | (depth > max_depth)).any():
        raise ValueError(f"model depths must lie in [0, {max_depth}]")
    for column, bound in (("slot", bounds.n_slots), ("fold", bounds.n_folds)):
        if bound is None:  # not read by this call
            continue
        values = meta[:, fields[column]]
        if ((values < 0) | (values >= bound)).any():
            raise ValueError(f"a model's {column} lies outside [0, {bound})")
    key, threshold = meta[:, fields["dropout_key"]], meta[:, fields["dropout_threshold"]]
    if ((key < 0) | (key >= 2**32) | (threshold < 0) | (threshold > 2**32)).any():
        raise ValueError("dropout keys must lie in [0, 2**32) and thresholds in [0, 2**32]")
    sizes = meta[:, fields["sizes"] : fields["sizes"] + max_depth + 2]
    rows = np.arange(len(meta))
    if (sizes[:, 0] != n_features).any() or (sizes[rows, depth + 1] != n_outputs).any():
        raise ValueError("a model's input or output size disagrees with the batches")
    # every layer at once (a loop over layers cost 0.2 ms a call: a
    # fifth of scoring a fold of iris), the first bad layer reported
    on = np.arange(max_depth + 1) <= depth[:, None]
    n_in, n_out = sizes[:, :-1], sizes[:, 1:]
    w_off = meta[:, fields["w_off"] : fields["w_off"] + max_depth + 1]
    b_off = meta[:, fields["b_off"] : fields["b_off"] + max_depth + 1]
    ld = meta[:, fields["ld"] : fields["ld"] + max_depth + 1]
    bad_sizes = (on & ((n_in < 1) | (n_out < 1) | (ld < n_out))).any(axis=0)
    outside = (on & (
        (w_off < 0) | (b_off < 0) | (w_off + (n_in - 1) * ld + n_out > n_params)
        | (b_off + n_out > n_params)
    )).any(axis=0)
    if bad_sizes.any() or outside.any():
        layer = int(np.argmax(bad_sizes | outside))
        if bad_sizes[layer]:
            raise ValueError(
                f"layer {layer}: sizes must be positive and row strides at least the width"
            )
        raise ValueError(
            f"layer {layer}: a weight or bias range lies outside the parameter buffer"
        )
    return meta, hyper
