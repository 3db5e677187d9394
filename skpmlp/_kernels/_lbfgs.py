"""ctypes binding of ``lbfgs.cpp``: argument checks and the call.

The layout of every buffer is stated at the top of ``lbfgs.cpp``; this
module mirrors its ``state`` column indices so the engine can read and
fill them by name.
"""

import ctypes

import numpy as np
import torch

from ._step import HYPER_WIDTH, LOSS_CODES, META_WIDTH, kernel_entry

#: Curvature pairs each model keeps (scipy's ``maxcor`` under
#: scikit-learn); must match HISTORY in C++.
HISTORY = 10

#: Columns of the float64 ``state`` table, one row per model (``St`` in C++).
STATE_FIELDS = {
    name: i for i, name in enumerate((
        "stp", "stage", "brackt", "finit", "ginit", "gtest", "width", "width1",
        "stx", "fx", "gx", "sty", "fy", "gy", "stmin", "stmax",
        "f", "gd0", "n_iter", "n_fun", "ifun", "reason", "col", "head", "h0", "l2", "count", "rho",
    ))
}
STATE_WIDTH = STATE_FIELDS["rho"] + HISTORY

_INT_MAX = 2**31 - 1

OPS = {"run": 0, "restore": 1}

_ENTRY = {torch.float32: "skp_lbfgs_f32", torch.float64: "skp_lbfgs_f64"}
_p = ctypes.c_void_p
_i = ctypes.c_int
_d = ctypes.c_double
_ARGTYPES = [
    _i, _i, _p, _p, _p, _p, _p,  # op, n_rows, rows, meta, hyper, state, packed
    _i, _i, _i, _i, _i,  # n_folds, bp, n_features, n_outputs, loss
    _p, _p, _p, _p, _p, _p, _p,  # Xb, Yb, Wb, counts, weight_sums, stepping, step0
    _d, _d, _i, _i, _i, _i,  # tol, ftol, max_iter, max_fun, max_ls, max_evals
    _p, _p, _p, _p, _p, _p, _p, _p, _p,  # params, grads, loss_sums, x, g, d, S, Y, curves
    _i,  # n_threads
]


def _checked_layout(library):
    meta, hyper, state, history = _i(), _i(), _i(), _i()
    library.skp_lbfgs_layout(ctypes.byref(meta), ctypes.byref(hyper), ctypes.byref(state), ctypes.byref(history))
    assert (meta.value, hyper.value, state.value, history.value) == (META_WIDTH, HYPER_WIDTH, STATE_WIDTH, HISTORY)


def _ptr(array):
    if isinstance(array, torch.Tensor):
        return ctypes.c_void_p(array.data_ptr())
    return ctypes.c_void_p(array.ctypes.data)


def lbfgs_step(op, rows, meta, hyper, batches, state, packed, buffers, curves, *, n_outputs, loss, tol, ftol,
               max_iter, max_fun, max_ls, max_evals, n_threads=1):
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
        ``params``, ``grads`` (flat), ``loss_sums`` (n_slots,), ``x``,
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
    params = buffers["params"]
    entry = kernel_entry(_ENTRY[params.dtype], _ARGTYPES, _checked_layout)
    names = ("params", "grads", "loss_sums", "x", "g", "d", "S", "Y")
    X, Y, W = batches["X"], batches["Y"], batches["W"]
    n_steps, K, F, bp = X.shape
    assert n_steps == 1
    for t in (X, Y, W, *(buffers[name] for name in names)):
        assert t.is_contiguous() and t.dtype == params.dtype and t.device.type == "cpu"
    host = {
        name: np.ascontiguousarray(batches[name], dtype=dtype)
        for name, dtype in (("counts", np.float64), ("weight_sums", np.float64),
                            ("stepping", np.uint8), ("step0", np.float64))
    }
    for array, dtype in ((rows, np.int64), (meta, np.int64), (hyper, np.float64), (state, np.float64),
                         (packed, np.int64), (curves, np.float64)):
        assert array.dtype == dtype and array.flags.c_contiguous
    assert meta.shape[1] == META_WIDTH and hyper.shape == (len(meta), HYPER_WIDTH)
    assert state.shape == (len(meta), STATE_WIDTH) and len(packed) == len(meta) and curves.shape[1] == max_iter
    code = entry(
        OPS[op], len(rows), _ptr(rows), _ptr(meta), _ptr(hyper), _ptr(state), _ptr(packed),
        K, bp, F, int(n_outputs), LOSS_CODES[loss], _ptr(X), _ptr(Y), _ptr(W),
        *(_ptr(host[name]) for name in ("counts", "weight_sums", "stepping", "step0")),
        float(tol), float(ftol), int(max_iter), min(int(max_fun), _INT_MAX), int(max_ls), int(max_evals),
        *(_ptr(buffers[name]) for name in names), _ptr(curves), int(n_threads),
    )
    if code != 0:
        raise RuntimeError(f"native L-BFGS kernel failed with code {code}")
