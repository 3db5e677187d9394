"""ctypes binding of ``mlp_step.cpp``: argument checks and the call.

The layout of every buffer is stated at the top of ``mlp_step.cpp``; this
module mirrors its ``meta`` / ``hyper`` field indices so the engine can fill
them by name.
"""

import ctypes

import numpy as np
import torch

from ._build import build_info, load_library
from ._checks import Bounds, check_batches, check_tables, check_tensors, host_array
from ._solvers import AMSGRAD_CODES, KERNEL_CODES, MOMENT_CODES
from ._tables import HYPER_FIELDS, HYPER_WIDTH, LOSS_CODES, MAX_DEPTH, META_FIELDS, META_WIDTH

MODES = {"epoch": 0, "gradients": 1, "update": 2, "gradients_vector_math": 3}

_ENTRY = {torch.float32: "skp_run_f32", torch.float64: "skp_run_f64"}
_FORWARD_ENTRY = {torch.float32: "skp_forward_f32", torch.float64: "skp_forward_f64"}
_p = ctypes.c_void_p
_i = ctypes.c_int
_ARGTYPES = [
    _i,
    _i,
    _p,
    _p,
    _i,
    _i,
    _i,
    _i,
    _i,
    _i,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _p,
    _i,
    _i,  # epoch
]


def kernel_available(verbose=False):
    """Whether the native kernel runs on this machine (builds it if needed)."""
    return load_library(verbose) is not None


def lanes(dtype):
    """Samples per vector of the loaded kernel (its target's vector bytes
    over the element size): batches are padded to a multiple of it."""
    vector_bytes = build_info()["vector_bytes"] if kernel_available() else None
    return (vector_bytes or 64) // torch.empty((), dtype=dtype).element_size()


def kernel_entry(name, argtypes, check_layout):
    """The native library's function ``name``, its argument types declared
    (after ``check_layout(library)`` confirmed the library's table layout
    is the one these bindings write) on first use."""
    library = load_library()
    if library is None:
        raise RuntimeError(f"the native kernel is not available ({build_info()['error']})")
    entry = getattr(library, name)
    if entry.argtypes is None:
        check_layout(library)
        entry.argtypes, entry.restype = argtypes, ctypes.c_int
    return entry


def _checked_layout(library):
    max_depth, meta, hyper = _i(), _i(), _i()
    library.skp_layout(ctypes.byref(max_depth), ctypes.byref(meta), ctypes.byref(hyper))
    if (max_depth.value, meta.value, hyper.value) != (MAX_DEPTH, META_WIDTH, HYPER_WIDTH):
        raise RuntimeError("the native kernel's table layout differs from its Python bindings'")


def _ptr(tensor):
    return None if tensor is None else ctypes.c_void_p(tensor.data_ptr())


class _ValidatedTables:
    """The tables a run passed last, by content: a run hands the kernel the
    same ``meta`` every epoch (it changes only when models retire or join),
    and checking it again was an eighth of a small search's fit. A table
    equal byte for byte to one checked against the same bounds and buffers
    is the same table; anything else is checked again."""

    def __init__(self, size=8):
        self.size = size
        self.keys = []

    def __contains__(self, key):
        return key in self.keys

    def add(self, key):
        self.keys = [key, *self.keys[: self.size - 1]]


_validated = _ValidatedTables()


def checked_tables(meta, hyper, params, loss_sums, batch_shape, n_outputs):
    """``meta`` and ``hyper`` checked against the buffers and batches they
    will index (:func:`~._checks.check_tables`)."""
    _, K, F, _ = batch_shape
    bounds = Bounds(n_params=params.numel(), n_slots=loss_sums.numel(), n_folds=K,
                    n_features=F, n_outputs=n_outputs)
    return check_tables(meta, hyper, bounds)


def _validated_tables(mode, meta, hyper, params, buffers, batch_shape, n_outputs):
    """``meta`` and ``hyper`` as C-contiguous arrays, checked against the
    buffers and batches (:func:`checked_tables`, and the optimizer state an
    update needs), or found equal to tables that were."""
    meta = np.ascontiguousarray(meta, dtype=np.int64)
    hyper = np.ascontiguousarray(hyper, dtype=np.float64)
    # of hyper, only which models have momentum is checked (the rates change every epoch)
    well_formed = hyper.ndim == 2 and hyper.shape[1] == HYPER_WIDTH
    momentum = hyper[:, HYPER_FIELDS["momentum"]] != 0 if well_formed else hyper
    key = (
        mode in ("epoch", "update"), meta.shape, meta.tobytes(), hyper.shape, momentum.tobytes(),
        params.numel(), buffers["loss_sums"].numel(), tuple(batch_shape), n_outputs,
        tuple(buffers.get(name) is not None for name in ("state1", "state2", "state3")),
    )
    if key in _validated:
        return meta, hyper
    meta, hyper = checked_tables(meta, hyper, params, buffers["loss_sums"], batch_shape, n_outputs)
    if key[0]:
        _check_optimizer_state(meta, hyper, buffers)
    _validated.add(key)
    return meta, hyper


def host_tables(batches, n_steps, K):
    """The per-step host tables of ``batches`` as the kernel reads them."""
    return {
        name: host_array(batches[name], dtype, shape, name)
        for name, dtype, shape in (
            ("counts", np.float64, (n_steps, K)),
            ("weight_sums", np.float64, (n_steps, K)),
            ("stepping", np.uint8, (n_steps, K)),
            ("step0", np.float64, (K,)),
        )
    }


def _check_optimizer_state(meta, hyper, buffers):
    """The optimizer state buffers the models' solvers update (their codes:
    :mod:`._solvers`) are there."""
    solver = meta[:, META_FIELDS["solver"]]
    adam = np.isin(solver, list(MOMENT_CODES))
    momentum = ~adam & (hyper[:, HYPER_FIELDS["momentum"]] != 0)
    if (adam.any() or momentum.any()) and buffers.get("state1") is None:
        raise ValueError("Adam and SGD with momentum need the first optimizer state buffer")
    if adam.any() and buffers.get("state2") is None:
        raise ValueError("Adam needs the second optimizer state buffer")
    if np.isin(solver, list(AMSGRAD_CODES)).any() and buffers.get("state3") is None:
        raise ValueError("Adam with amsgrad needs the third optimizer state buffer")
    if not np.isin(solver, list(KERNEL_CODES)).all():
        raise ValueError(f"a model's solver code is none of the kernels' {sorted(KERNEL_CODES)}")


class _Epochs(ctypes.Structure):
    """``struct Epochs`` of ``mlp_step.cpp``."""

    _fields_ = [
        ("n_epochs", ctypes.c_int64), ("first_epoch", ctypes.c_int64), ("n_slots", ctypes.c_int64),
        ("ends", _p), ("fold_sizes", _p), ("fold_batches", _p), ("loss_alpha", _p),
        ("best", _p), ("count", _p), ("tol", ctypes.c_double), ("patience", ctypes.c_int64),
        ("losses", _p), ("epochs_done", _p),
        ("eval_X", _p), ("eval_blocks", ctypes.c_int64), ("eval_block", ctypes.c_int64),
        ("eval_rows", ctypes.c_int64), ("eval_fold_first", _p), ("eval_fold_rows", _p),
        ("eval_out", _p), ("score", ctypes.c_int64), ("eval_y", _p), ("eval_w", _p),
        ("eval_total", _p), ("scores", _p),
        ("n_groups", ctypes.c_int64), ("group_first", _p), ("group_rows", _p), ("group_best", _p),
        ("group_count", _p), ("best_params", _p), ("best_epochs", _p),
        ("val_losses", _p), ("best_loss", _p),
    ]


_EPOCHS_ENTRY = {torch.float32: "skp_run_epochs_f32", torch.float64: "skp_run_epochs_f64"}
_EPOCHS_ARGTYPES = [_i, _p, _p, *[_i] * 6, *[_p] * 12, ctypes.POINTER(_Epochs), _i]


def _epoch_tables(epochs, n_steps, K, n_slots):
    """The host arrays of ``run_models``' ``epochs`` argument, checked."""
    ends = host_array(epochs["ends"], np.int64, (len(epochs["ends"]),), "ends")
    if len(ends) < 2 or ends[0] != 0 or ends[-1] != n_steps or (np.diff(ends) < 0).any():
        raise ValueError(f"ends must rise from 0 to the {n_steps} steps, not {ends.tolist()}")
    tables = {"ends": ends}
    for name, dtype, length in (
        ("fold_sizes", np.float64, K), ("fold_batches", np.float64, K),
        ("loss_alpha", np.float64, n_slots), ("best", np.float64, n_slots),
        ("count", np.int64, n_slots),
    ):
        tables[name] = host_array(epochs[name], dtype, (length,), name)
    if (tables["fold_sizes"] <= 0).any():
        raise ValueError("every fold needs training rows")
    return tables


def _best_params(epochs, params):
    """``run_models``' ``epochs["best_params"]``, checked against ``params``."""
    best_params = epochs.get("best_params")
    if best_params is None:
        raise ValueError("keeping best weights needs best_params")
    check_tensors({"best_params": best_params}, params.dtype)
    if best_params.numel() != params.numel():
        raise ValueError("best_params must have as many values as params")
    return best_params


def _group_tables(epochs, meta):
    """The early-stopping groups of ``run_models``' ``epochs`` (its
    ``groups``, ``group_best`` and ``group_count``) as the kernel reads
    them: each group's meta rows in fold order, checked."""
    n_models = len(meta)
    groups = host_array(epochs["groups"], np.int64, (n_models,), "groups")
    n_groups = len(np.unique(groups))
    if n_models and (groups.min() != 0 or groups.max() != n_groups - 1):
        raise ValueError(f"groups must number the {n_models} models' groups 0, 1, ... "
                         "without gaps")
    folds = meta[:, META_FIELDS["fold"]]
    rows = np.lexsort((folds, groups)).astype(np.int64)  # group by group, in fold order
    first = np.searchsorted(groups[rows], np.arange(n_groups + 1)).astype(np.int64)
    return {
        "n_groups": n_groups, "group_first": first, "group_rows": rows,
        "group_best": host_array(epochs["group_best"], np.float64, (n_groups,), "group_best"),
        "group_count": host_array(epochs["group_count"], np.int64, (n_groups,), "group_count"),
    }


def run_models(mode, meta, hyper, batches, buffers, *, n_outputs, loss, n_threads=1, epoch=0,
               epochs=None):
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
    epoch : int, default=0
        The run's epoch (0-based) of these steps: a dropout mask hashes it
        with the step's index in ``batches`` (the models whose ``meta`` row
        has a ``dropout_threshold``; see :mod:`skpmlp._engine._dropout`).
    epochs : dict, optional
        Mode ``"epoch"`` only: train several epochs in one call, each
        ending with its loss and scikit-learn's stopping rule (a model the
        rule stops trains no further epoch). ``ends`` (n_epochs + 1,) step
        offsets of the epochs into the batches; ``fold_sizes`` and
        ``fold_batches`` (K,) each fold's training rows and batches an
        epoch; ``loss_alpha``, ``best`` and ``count`` (n_slots,) the L2
        term's alpha and the rule's state per slot; ``tol``, ``patience``;
        ``first_epoch`` the run's epoch the call starts at; optionally
        ``evaluation``, an :class:`~._evaluation.EvalBlocks`: rows each
        model evaluates (its own fold's) after every epoch it trains.
        Early stopping: ``groups`` (n_models,) int64, each model's group
        (0, 1, ...: one model's fold replicas) whose mean score the rule
        watches, maximised, instead of each model's loss; its state
        ``group_best`` and ``group_count`` (n_groups,); and ``best_params``
        (a buffer like ``params``) where each group's members keep the
        weights of its best epoch. Needs an ``evaluation`` with a score.
        ``with_loss``: each model's validation loss on the same rows too
        (the training loss without label smoothing or the L2 term).
        ``best_loss`` (n_slots,) (``restore_best_weights``): each model's
        lowest validation loss so far; it keeps its weights in
        ``best_params`` at every epoch below it (instead of its group's
        best scores).

    Returns
    -------
    None, or with ``epochs`` a tuple
        ``losses`` (n_epochs, n_slots) float64, each epoch's loss of every
        model of ``meta`` (NaN elsewhere and after a model stopped);
        ``epochs_done`` (n_slots,) int64, the epochs each trained (-1 for
        slots not in ``meta``); and with ``evaluation``, what each model
        made of its fold's evaluation rows after each epoch (NaN where it
        did not train the epoch): its ``score`` (n_epochs, n_slots) float64,
        or without one its outputs, a Tensor (n_epochs, n_slots, n_eval,
        n_outputs) of the buffers' dtype (zero outside its fold's rows);
        None without ``evaluation``; with validation losses, the pair
        (scores, losses), each (n_epochs, n_slots); and ``kept`` (n_slots,)
        int64 with ``groups`` or ``best_loss``, the call's last epoch
        (1-based) whose weights each model kept in ``best_params`` (0:
        none; -1 for slots not in ``meta``), else None.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {sorted(MODES)}, not {mode!r}")
    params = buffers["params"]
    if params.dtype not in _ENTRY:
        raise TypeError(f"the native kernel trains float32 or float64, not {params.dtype}")
    check_tensors({**{name: batches[name] for name in "XYW"}, **buffers}, params.dtype)
    n_steps, K, F, bp = check_batches(batches, n_outputs, classification=loss == "softmax")
    if bp % lanes(params.dtype):
        raise ValueError(f"the padded batch ({bp}) must be a multiple of the kernel's lanes")
    if mode != "epoch" and buffers.get("grads") is None:
        raise ValueError(f"mode {mode!r} needs the gradient buffer")
    for name in ("grads", "state1", "state2", "state3"):
        if buffers.get(name) is not None and buffers[name].numel() != params.numel():
            raise ValueError(f"{name} must have as many values as params")
    meta, hyper = _validated_tables(
        mode, meta, hyper, params, buffers, (n_steps, K, F, bp), n_outputs
    )
    host = host_tables(batches, n_steps, K)
    if epochs is not None:
        if mode != "epoch":
            raise ValueError(f"epochs is for mode 'epoch', not {mode!r}")
        return _run_epochs(meta, hyper, batches, buffers, host, epochs, (n_steps, K, F, bp),
                           n_outputs, loss, n_threads)
    entry = kernel_entry(_ENTRY[params.dtype], _ARGTYPES, _checked_layout)
    code = entry(
        MODES[mode],
        len(meta),
        meta.ctypes.data,
        hyper.ctypes.data,
        n_steps,
        K,
        bp,
        F,
        n_outputs,
        LOSS_CODES[loss],
        _ptr(batches["X"]),
        _ptr(batches["Y"]),
        _ptr(batches["W"]),
        host["counts"].ctypes.data,
        host["weight_sums"].ctypes.data,
        host["stepping"].ctypes.data,
        host["step0"].ctypes.data,
        _ptr(params),
        _ptr(buffers.get("grads")),
        _ptr(buffers.get("state1")),
        _ptr(buffers.get("state2")),
        _ptr(buffers.get("state3")),
        _ptr(buffers["loss_sums"]),
        int(n_threads),
        int(epoch),
    )
    if code != 0:
        raise RuntimeError(f"native kernel failed with code {code}")


def _run_epochs(meta, hyper, batches, buffers, host, epochs, shape, n_outputs, loss, n_threads):
    """:func:`run_models`' call over several epochs (``epochs``)."""
    n_steps, K, F, bp = shape
    params, n_slots = buffers["params"], buffers["loss_sums"].numel()
    tables = _epoch_tables(epochs, n_steps, K, n_slots)
    n_epochs = len(tables["ends"]) - 1
    losses = np.full((n_epochs, n_slots), np.nan)
    epochs_done = np.full(n_slots, -1, dtype=np.int64)
    evaluation, evaluated = epochs.get("evaluation"), None
    eval_fields = {} if evaluation is None else evaluation.kernel_fields(
        meta, K, F, n_outputs, params.dtype)
    if evaluation is not None and evaluation.score is None:
        evaluated = torch.full((n_epochs, n_slots, evaluation.n_eval, n_outputs), float("nan"),
                               dtype=params.dtype)
        eval_fields["eval_out"] = _ptr(evaluated)
    elif evaluation is not None:
        evaluated = np.full((n_epochs, n_slots), np.nan)
        eval_fields["scores"] = evaluated.ctypes.data
    val_losses = kept = groups = best_loss = None
    scored = evaluation is not None and evaluation.score is not None
    if epochs.get("with_loss") or epochs.get("best_loss") is not None:
        if not scored:
            raise ValueError("validation losses need an evaluation with a score")
        val_losses = np.full((n_epochs, n_slots), np.nan)
        eval_fields["val_losses"] = val_losses.ctypes.data
        evaluated = (evaluated, val_losses)
    if epochs.get("groups") is not None or epochs.get("best_loss") is not None:
        if not scored:
            raise ValueError("early stopping's groups need an evaluation with a score")
        kept = np.full(n_slots, -1, dtype=np.int64)
        kept[meta[:, META_FIELDS["slot"]]] = 0
        eval_fields.update(best_params=_ptr(_best_params(epochs, params)),
                           best_epochs=kept.ctypes.data)
    if epochs.get("best_loss") is not None:
        best_loss = host_array(epochs["best_loss"], np.float64, (n_slots,), "best_loss")
        eval_fields["best_loss"] = best_loss.ctypes.data
    if epochs.get("groups") is not None:
        groups = _group_tables(epochs, meta)
        eval_fields.update(
            {name: groups[name].ctypes.data
             for name in ("group_first", "group_rows", "group_best", "group_count")},
            n_groups=groups["n_groups"])
    argument = _Epochs(
        n_epochs, int(epochs.get("first_epoch", 0)), n_slots,
        *(tables[name].ctypes.data for name in ("ends", "fold_sizes", "fold_batches", "loss_alpha",
                                                 "best", "count")),
        float(epochs["tol"]), int(epochs["patience"]), losses.ctypes.data, epochs_done.ctypes.data,
        **eval_fields,
    )
    entry = kernel_entry(_EPOCHS_ENTRY[params.dtype], _EPOCHS_ARGTYPES, _checked_layout)
    code = entry(
        len(meta), meta.ctypes.data, hyper.ctypes.data, n_steps, K, bp, F, n_outputs,
        LOSS_CODES[loss],
        _ptr(batches["X"]), _ptr(batches["Y"]), _ptr(batches["W"]), host["counts"].ctypes.data,
        host["weight_sums"].ctypes.data, host["stepping"].ctypes.data, host["step0"].ctypes.data,
        _ptr(params), _ptr(buffers.get("state1")), _ptr(buffers.get("state2")),
        _ptr(buffers.get("state3")), _ptr(buffers["loss_sums"]), ctypes.byref(argument),
        int(n_threads),
    )
    if code != 0:
        raise RuntimeError(f"native kernel failed with code {code}")
    return losses, epochs_done, evaluated, kept


#: Rows of one forward block at most: samples along the lanes, as a
#: training batch (the rows are cut into even blocks of whole vectors).
FORWARD_BLOCK = 256
_FORWARD_ARGTYPES = [_i, _p, _i, _i, _p, _i, _p, _p, _i]


def block_layout(n_rows, dtype):
    """``(n_blocks, block)``: ``n_rows`` rows in even blocks of whole vectors
    of lanes, at most about :data:`FORWARD_BLOCK` rows each."""
    n_blocks = max(1, -(-n_rows // FORWARD_BLOCK))
    return n_blocks, -(-max(1, -(-n_rows // n_blocks)) // lanes(dtype)) * lanes(dtype)


def forward_blocks(X):
    """``X`` (n_rows, F) as the forward reads it: ``(Xb, n_blocks, block)``,
    Xb (n_blocks, F, block) in even blocks of whole vectors of lanes, zero
    past the rows."""
    n_rows, n_features = X.shape
    n_blocks, block = block_layout(n_rows, X.dtype)
    Xb = X.new_zeros((n_blocks * block, n_features))
    Xb[:n_rows] = X
    return Xb.view(n_blocks, block, n_features).transpose(1, 2).contiguous(), n_blocks, block


def forward_models(meta, X, params, out, *, n_threads=1):
    """The outputs of every model of ``meta`` for the rows of ``X``.

    Parameters
    ----------
    meta : ndarray of int64 of shape (n_models, META_WIDTH)
        The step kernel's table (slot, depth, activation, sizes and
        offsets are read).
    X : Tensor of shape (n_rows, n_features)
    params : Tensor
        The flat parameter buffer the offsets index.
    out : Tensor of shape (n_slots, n_rows, n_outputs)
        Written at each model's slot (other slots are left as they are).
    n_threads : int
    """
    dtype = params.dtype
    if dtype not in _FORWARD_ENTRY:
        raise TypeError(f"the native kernel runs float32 or float64, not {dtype}")
    if X.dim() != 2 or out.dim() != 3 or out.shape[1] != X.shape[0]:
        raise ValueError(
            f"X (n_rows, F) and out (n_slots, n_rows, C) disagree: {tuple(X.shape)}, "
            f"{tuple(out.shape)}"
        )
    check_tensors({"X": X, "params": params, "out": out}, dtype)
    n_rows, n_features = X.shape
    Xb, n_blocks, block = forward_blocks(X)
    bounds = Bounds(n_params=params.numel(), n_slots=out.shape[0], n_folds=None,
                    n_features=n_features, n_outputs=out.shape[2])
    meta, _ = check_tables(meta, np.zeros((len(meta), HYPER_WIDTH)), bounds)
    entry = kernel_entry(_FORWARD_ENTRY[dtype], _FORWARD_ARGTYPES, _checked_layout)
    code = entry(
        len(meta),
        meta.ctypes.data,
        n_blocks,
        block,
        _ptr(Xb),
        n_rows,
        _ptr(params),
        _ptr(out),
        int(n_threads),
    )
    if code != 0:
        raise RuntimeError(f"native forward failed with code {code}")
