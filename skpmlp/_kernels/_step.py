"""ctypes binding of ``mlp_step.cpp``: argument checks and the call.

The layout of every buffer is stated at the top of ``mlp_step.cpp``; this
module mirrors its ``meta`` / ``hyper`` field indices so the engine can fill
them by name.
"""

import ctypes

import numpy as np
import torch

from ._build import load_library

#: Deepest supported network (hidden layers); must match MAX_DEPTH in C++.
MAX_DEPTH = 8

#: Columns of the int64 ``meta`` table, one row per model.
META_FIELDS = {
    "slot": 0, "depth": 1, "activation": 2, "fold": 3, "solver": 4, "nesterov": 5,
    "sizes": 6,                                # MAX_DEPTH + 2 layer sizes
    "w_off": 6 + MAX_DEPTH + 2,                # MAX_DEPTH + 1 weight offsets
    "b_off": 6 + 2 * MAX_DEPTH + 3,            # bias offsets
    "ld": 6 + 3 * MAX_DEPTH + 4,               # weight row strides
}
META_WIDTH = 6 + 4 * MAX_DEPTH + 5

#: Columns of the float64 ``hyper`` table, one row per model.
#: ``step_offset``: the fold's optimizer steps a model did not take (it
#: joined the run later, or took over another model's optimizer state)
HYPER_FIELDS = {
    "lr": 0, "alpha": 1, "beta_1": 2, "beta_2": 3, "epsilon": 4, "momentum": 5, "step_offset": 6,
}
HYPER_WIDTH = 8

LOSS_CODES = {"softmax": 0, "squared": 1, "logistic": 2}
MODES = {"epoch": 0, "gradients": 1, "update": 2, "gradients_vector_math": 3}

_ENTRY = {torch.float32: "skp_run_f32", torch.float64: "skp_run_f64"}
_p = ctypes.c_void_p
_i = ctypes.c_int
_ARGTYPES = [_i, _i, _p, _p, _i, _i, _i, _i, _i, _i, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _p, _i]


def kernel_available(verbose=False):
    """Whether the native kernel runs on this machine (builds it if needed)."""
    return load_library(verbose) is not None


def lanes(dtype):
    """Samples per vector in the kernel: batches are padded to a multiple."""
    return 64 // torch.empty((), dtype=dtype).element_size()


def kernel_entry(name, argtypes, check_layout):
    """The native library's function ``name``, its argument types declared
    (after ``check_layout(library)`` confirmed the library's table layout
    is the one these bindings write) on first use."""
    library = load_library()
    assert library is not None, "the native kernel is not available"
    entry = getattr(library, name)
    if entry.argtypes is None:
        check_layout(library)
        entry.argtypes, entry.restype = argtypes, ctypes.c_int
    return entry


def _checked_layout(library):
    max_depth, meta, hyper = _i(), _i(), _i()
    library.skp_layout(ctypes.byref(max_depth), ctypes.byref(meta), ctypes.byref(hyper))
    assert (max_depth.value, meta.value, hyper.value) == (MAX_DEPTH, META_WIDTH, HYPER_WIDTH)


def _ptr(tensor):
    return None if tensor is None else ctypes.c_void_p(tensor.data_ptr())


def run_models(mode, meta, hyper, batches, buffers, *, n_outputs, loss, n_threads=1):
    """Run the kernel over every model of ``meta``.

    Parameters
    ----------
    mode : {"epoch", "gradients", "update", "gradients_vector_math"}
        A whole epoch of steps; the gradients of step 0 written to
        ``buffers["grads"]``; or the update of step 0 from them; or the
        gradients with float64's transcendentals in vector lanes (a few ulp
        from the C library's; what the fused L-BFGS evaluates with).
    meta : ndarray of int64 of shape (n_models, META_WIDTH)
    hyper : ndarray of float64 of shape (n_models, HYPER_WIDTH)
    batches : dict
        ``X`` (n_steps, K, F, B_pad), ``Y`` (n_steps, K, B_pad) class
        indices or (n_steps, K, C, B_pad) targets, ``W`` (n_steps, K, B_pad)
        row weights: contiguous CPU tensors of the buffers' dtype;
        ``counts``, ``weight_sums`` (n_steps, K) and ``step0`` (K,) float64
        and ``stepping`` (n_steps, K) bool numpy arrays.
    buffers : dict of Tensor
        ``params``, ``grads``, ``state1``, ``state2``, ``state3`` (flat,
        one layout; ``state3`` only for Adam with amsgrad, solver 2) and
        ``loss_sums`` (n_slots,), updated in place.
    n_outputs : int
    loss : {"softmax", "squared", "logistic"}
    n_threads : int
    """
    params = buffers["params"]
    entry = kernel_entry(_ENTRY[params.dtype], _ARGTYPES, _checked_layout)
    X, Y, W = batches["X"], batches["Y"], batches["W"]
    n_steps, K, F, bp = X.shape
    for t in (X, Y, W, *buffers.values()):
        assert t is None or (t.is_contiguous() and t.dtype == params.dtype and t.device.type == "cpu")
    meta = np.ascontiguousarray(meta, dtype=np.int64)
    hyper = np.ascontiguousarray(hyper, dtype=np.float64)
    assert meta.shape[1] == META_WIDTH and hyper.shape[1] == HYPER_WIDTH and len(meta) == len(hyper)
    host = {
        name: np.ascontiguousarray(batches[name], dtype=dtype)
        for name, dtype in (("counts", np.float64), ("weight_sums", np.float64),
                            ("stepping", np.uint8), ("step0", np.float64))
    }
    code = entry(
        MODES[mode], len(meta), meta.ctypes.data, hyper.ctypes.data, n_steps, K, bp, F, n_outputs,
        LOSS_CODES[loss], _ptr(X), _ptr(Y), _ptr(W), host["counts"].ctypes.data,
        host["weight_sums"].ctypes.data, host["stepping"].ctypes.data, host["step0"].ctypes.data,
        _ptr(params), _ptr(buffers.get("grads")), _ptr(buffers.get("state1")),
        _ptr(buffers.get("state2")), _ptr(buffers.get("state3")), _ptr(buffers["loss_sums"]), int(n_threads),
    )
    if code != 0:
        raise RuntimeError(f"native kernel failed with code {code}")
