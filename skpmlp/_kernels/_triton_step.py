"""Triton kernels of the fused training step: a whole epoch of every model,
one program per model (GPU; CPU only through Triton's interpreter).

Importing this module imports triton: the engine imports it only when a
run trains on it (:mod:`skpmlp._engine._backends._triton`). Like ``mlp_step.cpp``,
whose design it follows, it knows nothing of populations, folds or
scikit-learn: buffers and offsets in, buffers out; the torch engine is the
reference it is tested against (``tests/kernels/test_triton.py``).

Layout (T is float32 or float64; every tile is padded to a power of two of
at least 16, the smallest ``tl.dot`` operand):

    X        (n_rows, F)                the run's rows, row-major
    y        (n_rows,) int64            class index              (loss 0)
             (n_rows, C) T              targets                  (loss 1, 2)
    rows     (n_steps, K, B) int64      each step's rows of each fold
    weights  (n_steps, K, B) T          row weights, summing to 1 per batch
    counts   (n_steps, K) T             real rows per batch
    wsums    (n_steps, K) float64       sum of sample weights (L2 divisor)
    stepping (n_steps, K) int8          whether a fold has a batch
    step0    (K) float32                optimizer steps the fold took before
    params, state1, state2              flat buffers of one layout: model m's
        layer l weight (k, j) sits at w_off[l] + k * ld[l] + j, its bias j at
        b_off[l] + j; state1 is Adam's first moment or SGD's momentum
        buffer, state2 Adam's second moment (state1 again where no model
        is Adam: it is never read then)
    meta     (n_models, META_WIDTH) int64    the META_FIELDS columns below
    hyper    (n_models, HYPER_WIDTH) float64 the HYPER_FIELDS columns below
    loss_sums (n_slots) T               += each step's batch loss x counts
    scratch  (n_programs, scratch_stride) T  the deep kernel's working tiles

Two kernels, both a whole epoch per launch, each program looping over its
models (``pid, pid + n_programs, ...``) and each model over its fold's
steps:

* :func:`epoch_one_hidden`: models of one hidden layer whose first-layer
  weight tile (``F_PAD x H``) is small enough (the engine decides), the
  paper's case. Per batch tile of ``BB`` rows: forward, loss gradient and
  backward, with the hidden tile and all four gradient accumulators on
  chip; nothing but the batch rows, the parameters and the optimizer
  state touches memory.
* :func:`epoch_deep`: any depth up to ``MAX_DEPTH`` and any number of
  features. Layer by layer over the batch tiles: each layer's
  activations and derivatives go to the program's scratch (stays in
  L1/L2 on a GPU), so one layer's weights and gradient accumulator are
  the only large register tiles; the features are read in chunks of ``BF``.

Every hidden layer of a launch shares one padded width ``H`` (the launch's
width class, 16/32/64/128); a model loops to its own widths through
masks: units beyond them load zeros, give exact zeros to the next layer
and are never stored, so padding (in the flat buffers or in the tiles)
costs time, never correctness. Each layer's update (L2 as coupled weight
decay ``alpha / wsum``, then torch's Adam or SGD with momentum / Nesterov)
follows as soon as its gradient is complete: its weights are not read
again in the step.

Both kernels are loops over models, steps and layers around the same
helpers: a layer's tiles are found from the model's ``meta`` row
(:func:`_weights_at`, :func:`_bias_at`); every layer of either kernel, its
weights and its bias, is updated by :func:`_update_layer` (the L2 term,
then :func:`_adam` or :func:`_sgd`); the deep kernel runs each hidden layer
through :func:`_forward_layer` and :func:`_backward_layer`, and both find
the loss gradient with :func:`_loss_grad`.

The arithmetic follows torch, as ``mlp_step.cpp``: softmax cross-entropy /
half squared error (mean over outputs) / binary log-loss (sum over
outputs), each model's weighted batch mean (the classification losses with
the model's label smoothing); float32 matmuls in IEEE
precision (no TF32), as torch's default.
"""

import triton
import triton.language as tl

from ._solvers import kernel_code
from ._tables import HYPER_FIELDS, HYPER_WIDTH, META_FIELDS, META_WIDTH

# the same indices, as constants the kernels can read
_M_SLOT = tl.constexpr(META_FIELDS["slot"])
_M_DEPTH = tl.constexpr(META_FIELDS["depth"])
_M_ACT = tl.constexpr(META_FIELDS["activation"])
_M_FOLD = tl.constexpr(META_FIELDS["fold"])
_M_SOLVER = tl.constexpr(META_FIELDS["solver"])
_M_NESTEROV = tl.constexpr(META_FIELDS["nesterov"])
_M_DROP_KEY = tl.constexpr(META_FIELDS["dropout_key"])
_M_DROP_THRESHOLD = tl.constexpr(META_FIELDS["dropout_threshold"])
#: The update codes these kernels implement (the Solver table's): Adam,
#: AdamW (decoupled decay) and SGD; no amsgrad. The trainer refuses others.
UPDATE_CODES = frozenset(kernel_code(name) for name in ("adam", "adamw", "sgd"))
_ADAM = tl.constexpr(kernel_code("adam"))
_ADAMW = tl.constexpr(kernel_code("adamw"))
_M_SIZES = tl.constexpr(META_FIELDS["sizes"])
_M_WOFF = tl.constexpr(META_FIELDS["w_off"])
_M_BOFF = tl.constexpr(META_FIELDS["b_off"])
_M_LD = tl.constexpr(META_FIELDS["ld"])
_META = tl.constexpr(META_WIDTH)
_H_LR = tl.constexpr(HYPER_FIELDS["lr"])
_H_ALPHA = tl.constexpr(HYPER_FIELDS["alpha"])
_H_BETA1 = tl.constexpr(HYPER_FIELDS["beta_1"])
_H_BETA2 = tl.constexpr(HYPER_FIELDS["beta_2"])
_H_EPS = tl.constexpr(HYPER_FIELDS["epsilon"])
_H_MOMENTUM = tl.constexpr(HYPER_FIELDS["momentum"])
_H_STEP_OFFSET = tl.constexpr(HYPER_FIELDS["step_offset"])
_H_SMOOTHING = tl.constexpr(HYPER_FIELDS["label_smoothing"])
_H_DROP_SCALE = tl.constexpr(HYPER_FIELDS["dropout_scale"])
_HYPER = tl.constexpr(HYPER_WIDTH)

_SELU_ALPHA = tl.constexpr(1.6732632423543772848170429916717)
_SELU_SCALE = tl.constexpr(1.0507009873554804934193349852946)
_SQRT1_2 = tl.constexpr(0.70710678118654752440)
_INV_SQRT_2PI = tl.constexpr(0.39894228040143267794)
# the dropout hash's (skpmlp/_engine/_dropout.py): its multipliers and 32-bit mask
_MIX_1 = tl.constexpr(0x7FEB352D)
_MIX_2 = tl.constexpr(0x2C1B3C6D)
_LOW32 = tl.constexpr(0xFFFFFFFF)


# ------------------------------------------------------------------ math
@triton.jit
def _activate(z, act):
    """``(f(z), f'(z))`` of activation code ``act`` (the engine's
    ``ACTIVATION_CODES``: identity, logistic, tanh, relu, elu, selu, gelu,
    leaky_relu, hardshrink, mish). ``act`` is the model's own, read at run
    time: one compiled kernel serves every activation."""
    zero = tl.zeros(z.shape, z.dtype)
    one = zero + 1.0
    a = z
    d = one
    if act == 1:  # logistic
        a = 1.0 / (1.0 + tl.exp(-z))
        d = a * (1.0 - a)
    elif act == 2:  # tanh, from exp: tl has no tanh that the interpreter runs
        e = tl.exp(-2.0 * tl.abs(z))
        t = (1.0 - e) / (1.0 + e)
        a = tl.where(z < 0, -t, t)
        d = 1.0 - a * a
    elif act == 3:  # relu
        a = tl.where(z > 0, z, zero)
        d = tl.where(z > 0, one, zero)
    elif act == 4:  # elu
        a = tl.where(z > 0, z, tl.exp(tl.minimum(z, zero)) - 1.0)
        d = tl.where(z > 0, one, a + 1.0)
    elif act == 5:  # selu
        a = _SELU_SCALE * tl.where(z > 0, z, _SELU_ALPHA * (tl.exp(tl.minimum(z, zero)) - 1.0))
        d = tl.where(z > 0, one * _SELU_SCALE, a + _SELU_SCALE * _SELU_ALPHA)
    elif act == 6:  # gelu (exact, erf)
        pdf_exp = tl.exp(-0.5 * z * z)
        cdf = 0.5 * (1.0 + tl.math.erf(z * _SQRT1_2))
        a = z * cdf
        d = cdf + z * _INV_SQRT_2PI * pdf_exp
    elif act == 7:  # leaky_relu, slope 0.01
        a = tl.where(z > 0, z, 0.01 * z)
        d = tl.where(z > 0, one, one * 0.01)
    elif act == 8:  # hardshrink, 0.5
        keep = (z > 0.5) | (z < -0.5)
        a = tl.where(keep, z, zero)
        d = tl.where(keep, one, zero)
    elif act == 9:  # mish: tanh(softplus(z)) = e (e + 2) / (e (e + 2) + 2), e = exp(z)
        big = z >= 20.0
        e = tl.exp(tl.minimum(z, zero + 20.0))
        q = e * (e + 2.0)
        tsp = q / (q + 2.0)
        a = tl.where(big, z, z * tsp)
        d = tl.where(big, one, tsp + z * (1.0 - tsp * tsp) * (e / (1.0 + e)))
    return a, d


@triton.jit
def _activation_backward(g, d, act):
    """``g * f'(z)`` from the ``f'(z)`` the forward kept (times the
    unit's dropout mask, where the model drops units). ReLU and hardshrink
    select, as torch's backward, so that a non-finite gradient stays masked
    where the unit is off (their ``d`` is 1, or the mask's scale)."""
    out = g * d
    if (act == 3) | (act == 8):
        out = tl.where(d != 0, out, tl.zeros(g.shape, g.dtype))
    return out


@triton.jit
def _mix32(x):
    """The dropout hash's mixing round (``_dropout.mix32``) on int64
    values in ``[0, 2**32)``: each product stays below ``2**63``."""
    x = x ^ (x >> 16)
    x = (x * _MIX_1) & _LOW32
    x = x ^ (x >> 15)
    x = (x * _MIX_2) & _LOW32
    return x ^ (x >> 16)


@triton.jit
def _dropout_step_key(meta, epoch, s):
    """A model's key after absorbing the epoch and the step within it
    (``_dropout.step_keys``; unused for a model without dropout)."""
    key = tl.load(meta + _M_DROP_KEY)
    return _mix32(_mix32(key ^ (tl.cast(epoch, tl.int64) & _LOW32)) ^ tl.cast(s, tl.int64))


@triton.jit
def _drop(a, d, meta, hyper, step_key, layer, rb):
    """``(a * mask, d * mask)`` for a batch tile (rows ``rb``, their
    positions in the batch) of hidden layer ``layer``: the mask of
    ``_dropout.unit_hashes``, 0 where the unit is dropped and ``1 / (1 -
    p)`` where kept; ``(a, d)`` as they are for a model without dropout."""
    threshold = tl.load(meta + _M_DROP_THRESHOLD)
    if threshold != 0:
        state = _mix32(step_key ^ layer)
        state = _mix32(state ^ rb.to(tl.int64))
        units = tl.arange(0, a.shape[1]).to(tl.int64)
        hashed = _mix32(state[:, None] ^ units[None, :])
        scale = tl.load(hyper + _H_DROP_SCALE).to(a.dtype)
        mask = tl.where(hashed >= threshold, scale, tl.zeros(a.shape, a.dtype))
        a = a * mask
        d = d * mask
    return a, d


@triton.jit
def _loss_grad(logits, rows, bmask, w, y_ptr, C, hyper, LOSS: tl.constexpr, C_PAD: tl.constexpr):
    """Loss gradient on the logits of one batch tile, weighted per row,
    and the tile's weighted loss.

    logits (BB, C_PAD); rows, bmask, w (BB,): the tile's data rows, which
    of them are real and their weights; ``hyper``: the model's row (its
    label smoothing ``eps``: softmax targets ``(1 - eps) onehot + eps / C``,
    logistic ones ``y (1 - eps) + eps / 2``). Returns ``(delta, loss)``."""
    c = tl.arange(0, C_PAD)
    cmask = c < C
    valid = bmask[:, None] & cmask[None, :]
    zero = tl.zeros(logits.shape, logits.dtype)
    eps = tl.load(hyper + _H_SMOOTHING).to(logits.dtype)
    if LOSS == 0:  # softmax cross-entropy
        label = tl.load(y_ptr + rows, mask=bmask, other=0)
        z = tl.where(cmask[None, :], logits, float("-inf"))
        zmax = tl.max(z, 1)
        e = tl.where(cmask[None, :], tl.exp(z - zmax[:, None]), zero)
        total = tl.sum(e, 1)
        onehot = c[None, :] == label[:, None]
        target = onehot.to(logits.dtype) * (1 - eps) + eps / C
        delta = tl.where(cmask[None, :], (e / total[:, None] - target) * w[:, None], zero)
        # the smoothed target's logit: (1 - eps) z_y + eps / C sum_c z_c
        picked = tl.sum(tl.where(onehot, z, zero), 1) * (1 - eps)
        picked += eps / C * tl.sum(tl.where(cmask[None, :], logits, zero), 1)
        row_loss = tl.log(total) + zmax - picked
        loss = tl.sum(tl.where(w != 0, w * row_loss, 0.0), 0)
    elif LOSS == 1:  # half squared error, mean over the outputs
        target = tl.load(y_ptr + rows[:, None] * C + c[None, :], mask=valid, other=0.0)
        r = tl.where(cmask[None, :], logits - target, zero)
        delta = r / C * w[:, None]
        loss = tl.sum(0.5 * w * tl.sum(r * r, 1) / C, 0)
    else:  # binary log-loss summed over the outputs: sigmoid - y, softplus(z) - y z
        target = tl.load(y_ptr + rows[:, None] * C + c[None, :], mask=valid, other=0.0)
        target = target * (1 - eps) + eps / 2
        sigmoid = 1.0 / (1.0 + tl.exp(-logits))
        delta = tl.where(cmask[None, :], (sigmoid - target) * w[:, None], zero)
        softplus = tl.maximum(logits, zero) + tl.log(1.0 + tl.exp(-tl.abs(logits)))
        term = tl.where(cmask[None, :], softplus - target * logits, zero)
        loss = tl.sum(tl.where(w != 0, w * tl.sum(term, 1), 0.0), 0)
    return delta, loss


# ------------------------------------------------------------- addressing
# Triton 3.2, the oldest the engine compiles for, takes no tuple arguments:
# the helpers receive the buffers and scalars they need one by one, and find
# a layer's offsets themselves in the model's ``meta`` row.
@triton.jit
def _weights_at(meta, layer, k, j):
    """Offsets of layer ``layer``'s weights, rows ``k`` x columns ``j``, in
    the flat buffers, and the mask of those within the model's widths."""
    k_mask = k < tl.load(meta + _M_SIZES + layer)
    j_mask = j < tl.load(meta + _M_SIZES + layer + 1)
    at = tl.load(meta + _M_WOFF + layer) + k[:, None] * tl.load(meta + _M_LD + layer) + j[None, :]
    return at, k_mask[:, None] & j_mask[None, :]


@triton.jit
def _bias_at(meta, layer, j):
    """Offsets of layer ``layer``'s bias ``j`` in the flat buffers, and the
    mask of those within the model's width."""
    return tl.load(meta + _M_BOFF + layer) + j, j < tl.load(meta + _M_SIZES + layer + 1)


@triton.jit
def _weights(params_ptr, meta, layer, k, j):
    """Layer ``layer``'s weight tile, rows ``k`` x columns ``j`` (zeros
    beyond the model's widths)."""
    at, mask = _weights_at(meta, layer, k, j)
    return tl.load(params_ptr + at, mask=mask, other=0.0)


@triton.jit
def _bias(params_ptr, meta, layer, j):
    """Layer ``layer``'s bias ``j`` (zeros beyond the model's width)."""
    at, mask = _bias_at(meta, layer, j)
    return tl.load(params_ptr + at, mask=mask, other=0.0)


@triton.jit
def _layer(params_ptr, meta, layer, k, j):
    """Layer ``layer``'s weight tile (rows ``k`` x columns ``j``) and bias."""
    w_at, w_mask = _weights_at(meta, layer, k, j)
    b_at, b_mask = _bias_at(meta, layer, j)
    weights = tl.load(params_ptr + w_at, mask=w_mask, other=0.0)
    return weights, tl.load(params_ptr + b_at, mask=b_mask, other=0.0)


@triton.jit
def _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB: tl.constexpr):
    """Rows, real-row mask and weights of batch tile ``bt`` of step-fold ``sk``."""
    rb = bt * BB + tl.arange(0, BB)
    bmask = rb < B
    rows = tl.load(rows_ptr + sk * B + rb, mask=bmask, other=0)
    w = tl.load(weights_ptr + sk * B + rb, mask=bmask, other=0.0)
    return rb, bmask, rows, w


@triton.jit
def _features(X_ptr, F, rows, bmask, f):
    """Features ``f`` of data rows ``rows`` (zeros where a row or a feature
    is not real)."""
    mask = bmask[:, None] & (f < F)[None, :]
    return tl.load(X_ptr + rows[:, None] * F + f[None, :], mask=mask, other=0.0)


# -------------------------------------------------------------- optimizer
@triton.jit
def _step_scalars(hyper, step0_ptr, wsum_ptr, fold, sk, taken, dt: tl.constexpr):
    """A model's optimizer step ``t`` (float64: its fold's steps before the
    epoch, less those it did not take, plus this epoch's) and its L2 term
    as a coupled weight decay, in dtype ``dt``."""
    t = tl.load(step0_ptr + fold).to(tl.float64) - tl.load(hyper + _H_STEP_OFFSET) + taken + 1
    alpha = tl.load(hyper + _H_ALPHA)
    # scikit-learn's L2 gradient: alpha * W / (sum of the batch's weights)
    return t, tl.where(alpha != 0, alpha / tl.load(wsum_ptr + sk), 0.0).to(dt)


@triton.jit
def _adam(p, grad, moment1_at, moment2_at, mask, hyper, t):
    """torch's Adam on a tile ``p`` of parameters of gradient ``grad``:
    updates the moments at ``moment1_at`` / ``moment2_at`` and returns the
    new parameters; the bias corrections of step ``t``."""
    dt = p.dtype
    beta1 = tl.load(hyper + _H_BETA1).to(dt)
    beta2 = tl.load(hyper + _H_BETA2).to(dt)
    # beta ** t in float64 from the dtype's beta, as mlp_step.cpp
    bias1 = 1.0 - tl.exp(t * tl.log(beta1.to(tl.float64))).to(dt)
    bias2 = 1.0 - tl.exp(t * tl.log(beta2.to(tl.float64))).to(dt)
    step_size = tl.load(hyper + _H_LR).to(dt) / bias1
    m = tl.load(moment1_at, mask=mask, other=0.0)
    v = tl.load(moment2_at, mask=mask, other=0.0)
    m = m + (grad - m) * (1.0 - beta1)  # lerp, as torch
    v = beta2 * v + (1.0 - beta2) * grad * grad
    tl.store(moment1_at, m, mask=mask)
    tl.store(moment2_at, v, mask=mask)
    eps = tl.load(hyper + _H_EPS).to(dt)
    return p - step_size * m / (tl.sqrt(v) / tl.sqrt(bias2) + eps)


@triton.jit
def _sgd(p, grad, momentum_at, mask, hyper, nesterov):
    """torch's SGD, with momentum (its buffer at ``momentum_at``) and
    Nesterov's where the model has them, on a tile ``p`` of parameters of
    gradient ``grad``: returns the new parameters."""
    dt = p.dtype
    momentum = tl.load(hyper + _H_MOMENTUM).to(dt)
    g = grad
    if momentum != 0:
        buf = momentum * tl.load(momentum_at, mask=mask, other=0.0) + g
        tl.store(momentum_at, buf, mask=mask)
        g = tl.where(nesterov != 0, g + momentum * buf, buf)
    return p - tl.load(hyper + _H_LR).to(dt) * g


@triton.jit
def _update(params_ptr, state1_ptr, state2_ptr, at, mask, grad, decay, meta, hyper, t):
    """The update of one tile of parameters (offsets ``at``): the weight
    decay (``decay``: scikit-learn's L2 gradient, 0 for a bias) coupled,
    or AdamW's decoupled ``W *= 1 - lr * alpha``, then the model's
    optimizer (its ``meta`` and ``hyper`` rows) at step ``t``."""
    p = tl.load(params_ptr + at, mask=mask, other=0.0)
    solver = tl.load(meta + _M_SOLVER)
    if solver == _ADAMW:
        if decay != 0:  # a weight, alpha > 0: as torch's fused AdamW, first
            lr_alpha = tl.load(hyper + _H_LR) * tl.load(hyper + _H_ALPHA)
            p = p * (1.0 - lr_alpha.to(p.dtype))
        p = _adam(p, grad, state1_ptr + at, state2_ptr + at, mask, hyper, t)
    elif solver == _ADAM:
        p = _adam(p, grad + decay * p, state1_ptr + at, state2_ptr + at, mask, hyper, t)
    else:
        p = _sgd(p, grad + decay * p, state1_ptr + at, mask, hyper, tl.load(meta + _M_NESTEROV))
    tl.store(params_ptr + at, p, mask=mask)


@triton.jit
def _update_layer(
    params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, layer, gw, gb, row0=0
):
    """The update of layer ``layer`` from its gradients: weights ``gw``
    (rows ``row0`` on), with the weight decay, and bias ``gb``, without.
    Either may be None: the deep kernel's first layer comes in chunks of
    features, its bias apart."""
    if gw is not None:
        k = row0 + tl.arange(0, gw.shape[0])
        at, mask = _weights_at(meta, layer, k, tl.arange(0, gw.shape[1]))
        _update(params_ptr, state1_ptr, state2_ptr, at, mask, gw, decay, meta, hyper, t)
    if gb is not None:
        at, mask = _bias_at(meta, layer, tl.arange(0, gb.shape[0]))
        _update(params_ptr, state1_ptr, state2_ptr, at, mask, gb, 0.0, meta, hyper, t)


# ------------------------------------------------------------ deep layers
@triton.jit
def _first_layer(X_ptr, F, rows, bmask, params_ptr, meta, bias, BF: tl.constexpr):
    """Pre-activations of the first layer (bias ``bias``) for one batch tile
    (data rows ``rows``), the features read in chunks of ``BF``."""
    h = tl.arange(0, bias.shape[0])
    z = tl.zeros((rows.shape[0], bias.shape[0]), bias.dtype) + bias[None, :]
    for f0 in range(0, F, BF):
        f = f0 + tl.arange(0, BF)
        x = _features(X_ptr, F, rows, bmask, f)
        z += tl.dot(x, _weights(params_ptr, meta, 0, f, h), input_precision="ieee")
    return z


@triton.jit
def _activate_into(z, act, acts, ders, rb, meta, hyper, step_key, layer):
    """Store ``f(z)`` and ``f'(z)`` of a batch tile (rows ``rb``) of
    hidden layer ``layer`` in the layer's slabs of activations and
    derivatives, both times the model's dropout mask (:func:`_drop`)."""
    a, d = _activate(z, act)
    a, d = _drop(a, d, meta, hyper, step_key, layer, rb)
    at = rb[:, None] * z.shape[1] + tl.arange(0, z.shape[1])[None, :]
    tl.store(acts + at, a)
    tl.store(ders + at, d)


@triton.jit
def _forward_layer(weights, bias, act, acts, ders, n_tiles, meta, hyper, step_key, layer,
                   BB: tl.constexpr):
    """Hidden layer ``layer`` over every batch tile: from the activations
    of the layer below (the slab before ``acts``) to its own, in slabs
    ``acts`` and ``ders``."""
    h = tl.arange(0, weights.shape[0])
    below = acts - n_tiles * BB * weights.shape[0]
    for bt in range(n_tiles):
        rb = bt * BB + tl.arange(0, BB)
        a_in = tl.load(below + rb[:, None] * weights.shape[0] + h[None, :])
        z = tl.dot(a_in, weights, input_precision="ieee") + bias[None, :]
        _activate_into(z, act, acts, ders, rb, meta, hyper, step_key, layer)


@triton.jit
def _backward_layer(
    weights, act, acts, ders, deltas, current, n_tiles, BB: tl.constexpr, DW: tl.constexpr
):
    """The gradients of a layer's weights and bias over every batch tile,
    from its deltas (delta buffer ``current`` of the two from ``deltas``),
    and the deltas of the layer below (to the other buffer), from that
    layer's activations and derivatives (slabs ``acts``, ``ders``)."""
    h = tl.arange(0, weights.shape[0])
    cols = tl.arange(0, weights.shape[1])
    delta_in = deltas + current * n_tiles * BB * DW
    delta_out = deltas + (1 - current) * n_tiles * BB * DW
    grad_w = tl.zeros(weights.shape, weights.dtype)
    grad_b = tl.zeros((weights.shape[1],), weights.dtype)
    for bt in range(n_tiles):
        rb = bt * BB + tl.arange(0, BB)
        delta = tl.load(delta_in + rb[:, None] * DW + cols[None, :])
        a_in = tl.load(acts + rb[:, None] * weights.shape[0] + h[None, :])
        grad_w += tl.dot(tl.trans(a_in), delta, input_precision="ieee")
        grad_b += tl.sum(delta, 0)
        back = tl.dot(delta, tl.trans(weights), input_precision="ieee")
        der = tl.load(ders + rb[:, None] * weights.shape[0] + h[None, :])
        back = _activation_backward(back, der, act)
        tl.store(delta_out + rb[:, None] * DW + h[None, :], back)
    return grad_w, grad_b


# Run-time sizes that change between runs, chunks and compactions: not
# specialised on (Triton would compile a kernel for a value of 1 and for
# multiples of 16), so one compiled kernel serves them all.
_SIZES = ["n_models", "n_steps", "n_folds", "B", "epoch", "max_depth", "scratch_stride"]


# --------------------------------------------------------- one hidden layer
@triton.jit(do_not_specialize=_SIZES[:5])
def epoch_one_hidden(
    X_ptr,
    y_ptr,
    rows_ptr,
    weights_ptr,
    counts_ptr,
    wsum_ptr,
    stepping_ptr,
    step0_ptr,
    params_ptr,
    state1_ptr,
    state2_ptr,
    loss_ptr,
    meta_ptr,
    hyper_ptr,
    n_models,
    n_steps,
    n_folds,
    B,
    epoch,
    F,
    C,
    LOSS: tl.constexpr,
    F_PAD: tl.constexpr,
    H: tl.constexpr,
    C_PAD: tl.constexpr,
    BB: tl.constexpr,
):
    """A whole epoch of models with one hidden layer of at most ``H`` units
    and at most ``F_PAD`` features: every tile in registers.

    No scratch: per step, the layer tiles ``W0`` (F_PAD, H), ``b0`` (H),
    ``W1`` (H, C_PAD), ``b1`` (C_PAD) and their gradient accumulators; per
    batch tile of ``BB`` rows, its features (BB, F_PAD), hidden layer
    (BB, H) and logits and deltas (BB, C_PAD). The buffers are the
    module's."""
    dt = params_ptr.dtype.element_ty
    pid = tl.program_id(0)
    f = tl.arange(0, F_PAD)
    h = tl.arange(0, H)
    c = tl.arange(0, C_PAD)
    for i in range(pid, n_models, tl.num_programs(0)):
        meta = meta_ptr + i * _META
        hyper = hyper_ptr + i * _HYPER
        act = tl.load(meta + _M_ACT)
        fold = tl.load(meta + _M_FOLD)
        taken = 0
        loss_sum = tl.zeros((), tl.float64)
        for s in range(n_steps):
            sk = s * n_folds + fold
            if tl.load(stepping_ptr + sk) != 0:
                # the previous step's updates, stored by other threads of
                # the program, are visible to this step's loads
                tl.debug_barrier()
                W0, b0 = _layer(params_ptr, meta, 0, f, h)
                W1, b1 = _layer(params_ptr, meta, 1, h, c)
                gW0 = tl.zeros((F_PAD, H), dt)
                gb0 = tl.zeros((H,), dt)
                gW1 = tl.zeros((H, C_PAD), dt)
                gb1 = tl.zeros((C_PAD,), dt)
                loss = tl.zeros((), dt)
                step_key = _dropout_step_key(meta, epoch, s)
                for bt in range(tl.cdiv(B, BB)):
                    rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                    x = _features(X_ptr, F, rows, bmask, f)
                    z = tl.dot(x, W0, input_precision="ieee") + b0[None, :]
                    a, d = _activate(z, act)
                    a, d = _drop(a, d, meta, hyper, step_key, 0, rb)
                    logits = tl.dot(a, W1, input_precision="ieee") + b1[None, :]
                    delta, tile_loss = _loss_grad(
                        logits, rows, bmask, w, y_ptr, C, hyper, LOSS, C_PAD
                    )
                    loss += tile_loss
                    gW1 += tl.dot(tl.trans(a), delta, input_precision="ieee")
                    gb1 += tl.sum(delta, 0)
                    back = tl.dot(delta, tl.trans(W1), input_precision="ieee")
                    dh = _activation_backward(back, d, act)
                    gW0 += tl.dot(tl.trans(x), dh, input_precision="ieee")
                    gb0 += tl.sum(dh, 0)
                t, decay = _step_scalars(hyper, step0_ptr, wsum_ptr, fold, sk, taken, dt)
                _update_layer(
                    params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, 0, gW0, gb0
                )
                _update_layer(
                    params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, 1, gW1, gb1
                )
                taken += 1
                loss_sum += loss.to(tl.float64) * tl.load(counts_ptr + sk).to(tl.float64)
        slot = tl.load(meta + _M_SLOT)
        tl.store(loss_ptr + slot, tl.load(loss_ptr + slot) + loss_sum.to(dt))


# ---------------------------------------------------------------- any depth
@triton.jit(do_not_specialize=_SIZES)
def epoch_deep(
    X_ptr,
    y_ptr,
    rows_ptr,
    weights_ptr,
    counts_ptr,
    wsum_ptr,
    stepping_ptr,
    step0_ptr,
    params_ptr,
    state1_ptr,
    state2_ptr,
    loss_ptr,
    meta_ptr,
    hyper_ptr,
    scratch_ptr,
    n_models,
    n_steps,
    n_folds,
    B,
    epoch,
    F,
    C,
    max_depth,
    scratch_stride,
    LOSS: tl.constexpr,
    BF: tl.constexpr,
    H: tl.constexpr,
    C_PAD: tl.constexpr,
    BB: tl.constexpr,
    DW: tl.constexpr,
):
    """A whole epoch of models of any depth (hidden widths at most ``H``),
    layer by layer over batch tiles through the program's scratch.

    Scratch of a program (``scratch_stride`` elements), B_PAD = the batch
    padded to whole tiles:

        act   (max_depth, B_PAD, H)   each hidden layer's f(z)
        der   (max_depth, B_PAD, H)   and f'(z)
        delta (2, B_PAD, DW)          the backward's deltas, ping-pong

    A barrier separates a loop that writes scratch from the next that reads
    it (other threads of the program wrote those elements)."""
    dt = params_ptr.dtype.element_ty
    pid = tl.program_id(0)
    n_tiles = tl.cdiv(B, BB)
    slab = n_tiles * BB * H  # one layer's activations, or derivatives
    act_base = scratch_ptr + tl.cast(pid, tl.int64) * scratch_stride
    der_base = act_base + max_depth * slab
    delta_base = der_base + max_depth * slab
    h = tl.arange(0, H)
    c = tl.arange(0, C_PAD)
    for i in range(pid, n_models, tl.num_programs(0)):
        meta = meta_ptr + i * _META
        hyper = hyper_ptr + i * _HYPER
        depth = tl.load(meta + _M_DEPTH)
        act = tl.load(meta + _M_ACT)
        fold = tl.load(meta + _M_FOLD)
        taken = 0
        loss_sum = tl.zeros((), tl.float64)
        for s in range(n_steps):
            sk = s * n_folds + fold
            if tl.load(stepping_ptr + sk) != 0:
                tl.debug_barrier()  # the previous step's updates and reads of scratch are done
                # ---- forward: layer 0 (the features in chunks of BF), then 1 .. depth - 1
                b0 = _bias(params_ptr, meta, 0, h)
                step_key = _dropout_step_key(meta, epoch, s)
                for bt in range(n_tiles):
                    rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                    z = _first_layer(X_ptr, F, rows, bmask, params_ptr, meta, b0, BF)
                    _activate_into(z, act, act_base, der_base, rb, meta, hyper, step_key, 0)
                tl.debug_barrier()
                for layer in range(1, depth):
                    W, b = _layer(params_ptr, meta, layer, h, h)
                    at = layer * slab
                    _forward_layer(W, b, act, act_base + at, der_base + at, n_tiles, meta, hyper,
                                   step_key, layer, BB)
                    tl.debug_barrier()
                # ---- output layer, loss and its gradient (to the first delta buffer)
                Wo, bo = _layer(params_ptr, meta, depth, h, c)
                last = (depth - 1) * slab
                loss = tl.zeros((), dt)
                for bt in range(n_tiles):
                    rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                    a_in = tl.load(act_base + last + rb[:, None] * H + h[None, :])
                    logits = tl.dot(a_in, Wo, input_precision="ieee") + bo[None, :]
                    delta, tile_loss = _loss_grad(
                        logits, rows, bmask, w, y_ptr, C, hyper, LOSS, C_PAD
                    )
                    loss += tile_loss
                    tl.store(delta_base + rb[:, None] * DW + c[None, :], delta)
                tl.debug_barrier()
                # ---- backward, each layer updated as soon as its gradient is complete
                t, decay = _step_scalars(hyper, step0_ptr, wsum_ptr, fold, sk, taken, dt)
                gWo, gbo = _backward_layer(
                    Wo, act, act_base + last, der_base + last, delta_base, 0, n_tiles, BB, DW
                )
                tl.debug_barrier()
                _update_layer(
                    params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, depth, gWo, gbo
                )
                current = 1  # the delta buffer holding this layer's delta
                for k in range(1, depth):
                    layer = depth - k
                    at = (layer - 1) * slab
                    W = _weights(params_ptr, meta, layer, h, h)
                    gW, gb = _backward_layer(
                        W, act, act_base + at, der_base + at, delta_base, current, n_tiles, BB, DW
                    )
                    tl.debug_barrier()
                    _update_layer(
                        params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, layer, gW, gb
                    )
                    current = 1 - current
                # ---- layer 0: its weights chunk by chunk of features, then its bias
                deltas = delta_base + current * n_tiles * BB * DW
                gb0 = tl.zeros((H,), dt)
                for bt in range(n_tiles):
                    rb = bt * BB + tl.arange(0, BB)
                    gb0 += tl.sum(tl.load(deltas + rb[:, None] * DW + h[None, :]), 0)
                for f0 in range(0, F, BF):
                    f = f0 + tl.arange(0, BF)
                    gW0 = tl.zeros((BF, H), dt)
                    for bt in range(n_tiles):
                        rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                        x = _features(X_ptr, F, rows, bmask, f)
                        delta0 = tl.load(deltas + rb[:, None] * DW + h[None, :])
                        gW0 += tl.dot(tl.trans(x), delta0, input_precision="ieee")
                    _update_layer(
                        params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, 0, gW0, None, f0
                    )
                _update_layer(
                    params_ptr, state1_ptr, state2_ptr, meta, hyper, t, decay, 0, None, gb0
                )
                taken += 1
                loss_sum += loss.to(tl.float64) * tl.load(counts_ptr + sk).to(tl.float64)
        slot = tl.load(meta + _M_SLOT)
        tl.store(loss_ptr + slot, tl.load(loss_ptr + slot) + loss_sum.to(dt))
