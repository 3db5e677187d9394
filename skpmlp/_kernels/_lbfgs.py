"""ctypes binding of ``lbfgs.cpp``: argument checks and the call.

The layout of every buffer is stated at the top of ``lbfgs.cpp``; this
module mirrors its ``state`` column indices so the engine can read and
fill them by name.
"""

import ctypes

import numpy as np
import torch

from ._checks import check_batches, check_tensors, host_array
from ._step import checked_tables, host_tables, kernel_entry
from ._tables import HYPER_WIDTH, LOSS_CODES, MAX_DEPTH, META_FIELDS, META_WIDTH

#: Curvature pairs each model keeps (scipy's ``maxcor`` under
#: scikit-learn); must match HISTORY in C++.
HISTORY = 10

#: A model's curvature pairs are ``pack_stride`` values apart: its
#: parameters rounded up to whole 64-byte lines (PACK_BYTES in C++).
PACK_BYTES = 64

#: Columns of the float64 ``state`` table, one row per model (``St`` in C++).
STATE_FIELDS = {
    name: i
    for i, name in enumerate(
        (
            "stp",
            "stage",
            "brackt",
            "finit",
            "ginit",
            "gtest",
            "width",
            "width1",
            "stx",
            "fx",
            "gx",
            "sty",
            "fy",
            "gy",
            "stmin",
            "stmax",
            "f",
            "gd0",
            "n_iter",
            "n_fun",
            "ifun",
            "reason",
            "col",
            "head",
            "h0",
            "l2",
            "count",
            "rho",
        )
    )
}
STATE_WIDTH = STATE_FIELDS["rho"] + HISTORY

_INT_MAX = 2**31 - 1

OPS = {"run": 0, "restore": 1}

_ENTRY = {torch.float32: "skp_lbfgs_f32", torch.float64: "skp_lbfgs_f64"}
_p = ctypes.c_void_p
_i = ctypes.c_int
_d = ctypes.c_double
_ARGTYPES = [
    _i,
    _i,
    _p,
    _p,
    _p,
    _p,
    _p,  # op, n_rows, rows, meta, hyper, state, packed
    _i,
    _i,
    _i,
    _i,
    _i,  # n_folds, bp, n_features, n_outputs, loss
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,  # Xb, Yb, Wb, counts, weight_sums, stepping, step0
    _d,
    _d,
    _i,
    _i,
    _i,
    _i,  # tol, ftol, max_iter, max_fun, max_ls, max_evals
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,  # params, loss_sums, x, g, d, S, Y, curves
    _i,  # n_threads
]


def pack_stride(n_real, itemsize):
    """Where a model's curvature pair ends and its next starts: its
    ``n_real`` parameters rounded up to whole :data:`PACK_BYTES` of
    ``itemsize``-byte values (elementwise over an array)."""
    per_line = PACK_BYTES // itemsize
    return -(-np.asarray(n_real, dtype=np.int64) // per_line) * per_line


def _checked_layout(library):
    meta, hyper, state, history, pack_bytes = _i(), _i(), _i(), _i(), _i()
    library.skp_lbfgs_layout(
        ctypes.byref(meta), ctypes.byref(hyper), ctypes.byref(state), ctypes.byref(history),
        ctypes.byref(pack_bytes),
    )
    if (meta.value, hyper.value, state.value, history.value, pack_bytes.value) != (
        META_WIDTH,
        HYPER_WIDTH,
        STATE_WIDTH,
        HISTORY,
        PACK_BYTES,
    ):
        raise RuntimeError(
            "the native L-BFGS kernel's table layout differs from its Python bindings'"
        )


def _ptr(array):
    if isinstance(array, torch.Tensor):
        return ctypes.c_void_p(array.data_ptr())
    return ctypes.c_void_p(array.ctypes.data)


def _check_packed(meta, packed, buffers):
    """Each model's packed vectors (its real parameters, to its
    :func:`pack_stride`) inside x, g, d and its HISTORY pairs inside S and
    Y."""
    sizes = meta[:, META_FIELDS["sizes"] : META_FIELDS["sizes"] + MAX_DEPTH + 2]
    depth = meta[:, META_FIELDS["depth"]]
    n_real = np.zeros(len(meta), dtype=np.int64)
    for layer in range(MAX_DEPTH + 1):
        on = depth >= layer
        n_real[on] += sizes[on, layer] * sizes[on, layer + 1] + sizes[on, layer + 1]
    n_packed = buffers["x"].numel()
    if any(buffers[name].numel() != n_packed for name in ("g", "d")):
        raise ValueError("x, g and d must have one length")
    if any(buffers[name].numel() < HISTORY * n_packed for name in ("S", "Y")):
        raise ValueError(f"S and Y must hold {HISTORY} pairs of the packed vectors")
    stride = pack_stride(n_real, buffers["x"].element_size())
    if ((packed < 0) | (packed + stride > n_packed)).any():
        raise ValueError("a model's packed vectors (to their stride) lie outside x")


def _check_written(*arrays):
    """Every ``(array, dtype, shape, name)``: a writeable C-contiguous numpy
    array of that dtype and shape (the kernel writes into it)."""
    for array, dtype, shape, name in arrays:
        if (
            not isinstance(array, np.ndarray)
            or array.dtype != dtype
            or not array.flags.c_contiguous
            or not array.flags.writeable
        ):
            raise TypeError(
                f"{name} must be a writeable C-contiguous {np.dtype(dtype).name} array"
            )
        if array.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, not {array.shape}")


#: The flat and packed buffers the kernel reads and writes, in its argument order.
_BUFFERS = ("params", "loss_sums", "x", "g", "d", "S", "Y")


def _checked_arguments(rows, tables, batches, buffers, written, n_outputs, loss, max_iter):
    """:func:`lbfgs_step`'s arguments checked against each other (``tables``:
    its ``meta`` and ``hyper``; ``written``: its ``state``, ``packed`` and
    ``curves``): ``(rows, meta, hyper, host tables, (K, F, B_pad))``, as the
    kernel takes them."""
    (meta, hyper), (state, packed, curves) = tables, written
    params = buffers["params"]
    if params.dtype not in _ENTRY:
        raise TypeError(f"the native L-BFGS kernel runs float32 or float64, not {params.dtype}")
    check_tensors(
        {**{name: batches[name] for name in "XYW"}, **{name: buffers[name] for name in _BUFFERS}},
        params.dtype,
    )
    n_steps, K, F, bp = check_batches(batches, n_outputs, classification=loss == "softmax")
    if n_steps != 1:
        raise ValueError(f"L-BFGS evaluates one full batch per fold, not {n_steps} steps")
    meta, hyper = checked_tables(
        meta, hyper, params, buffers["loss_sums"], (n_steps, K, F, bp), n_outputs
    )
    host = host_tables(batches, n_steps, K)
    rows = host_array(rows, np.int64, np.shape(rows), "rows")
    if rows.ndim != 1 or ((rows < 0) | (rows >= len(meta))).any():
        raise ValueError("rows must be a 1-d array of row indices of meta")
    _check_written(
        (state, np.float64, (len(meta), STATE_WIDTH), "state"),
        (packed, np.int64, (len(meta),), "packed"),
        (curves, np.float64, (buffers["loss_sums"].numel(), max_iter), "curves"),
    )
    _check_packed(meta, packed, buffers)
    return rows, meta, hyper, host, (K, F, bp)


def lbfgs_step(
    op,
    rows,
    meta,
    hyper,
    batches,
    state,
    packed,
    buffers,
    curves,
    *,
    n_outputs,
    loss,
    tol,
    ftol,
    max_iter,
    max_fun,
    max_ls,
    max_evals,
    n_threads=1,
):
    """Run (or restore) the L-BFGS of every model of ``rows``.

    Parameters
    ----------
    op : {"run", "restore"}
        Up to ``max_evals`` evaluations of each model, each followed by its
        line-search step (next trial point written to ``params``); or
        ``params = x``.
    rows : ndarray of int64 of shape (n_rows,)
        Rows of ``meta`` / ``hyper`` / ``state`` / ``packed`` to work on,
        in the order the threads take them.
    meta : ndarray of int64 of shape (n_models, META_WIDTH)
    hyper : ndarray of float64 of shape (n_models, HYPER_WIDTH)
        The step kernel's tables of the models.
    batches : dict
        The step kernel's batches (see :func:`~._step.run_models`) with one
        step: every fold's training rows.
    state : ndarray of float64 of shape (n_models, STATE_WIDTH)
        Updated in place.
    packed : ndarray of int64 of shape (n_models,)
        Where each model's packed vectors start.
    buffers : dict of Tensor
        ``params`` (flat), ``loss_sums`` (n_slots,), ``x``,
        ``g``, ``d`` (packed) and ``S``, ``Y`` (HISTORY x packed):
        contiguous CPU tensors of one dtype.
    curves : ndarray of float64 of shape (n_slots, max_iter)
    n_outputs : int
    loss : {"softmax", "squared", "logistic"}
    tol, ftol : float
        scipy's ``gtol`` and ``ftol``.
    max_iter, max_fun, max_ls, max_evals : int
    n_threads : int
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {sorted(OPS)}, not {op!r}")
    params = buffers["params"]
    rows, meta, hyper, host, (K, F, bp) = _checked_arguments(
        rows, (meta, hyper), batches, buffers, (state, packed, curves), n_outputs, loss, max_iter
    )
    entry = kernel_entry(_ENTRY[params.dtype], _ARGTYPES, _checked_layout)
    limits = (float(tol), float(ftol), int(max_iter), min(int(max_fun), _INT_MAX), int(max_ls),
              int(max_evals))
    code = entry(
        OPS[op], len(rows), _ptr(rows), _ptr(meta), _ptr(hyper), _ptr(state), _ptr(packed),
        K, bp, F, int(n_outputs), LOSS_CODES[loss],
        *(_ptr(batches[name]) for name in "XYW"),
        *(_ptr(host[name]) for name in ("counts", "weight_sums", "stepping", "step0")),
        *limits,
        *(_ptr(buffers[name]) for name in _BUFFERS),
        _ptr(curves), int(n_threads),
    )
    if code != 0:
        raise RuntimeError(f"native L-BFGS kernel failed with code {code}")
