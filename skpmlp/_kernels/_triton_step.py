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

The arithmetic follows torch, as ``mlp_step.cpp``: softmax cross-entropy /
half squared error (mean over outputs) / binary log-loss (sum over
outputs), each model's weighted batch mean; float32 matmuls in IEEE
precision (no TF32), as torch's default.
"""

import triton
import triton.language as tl

from ._tables import HYPER_FIELDS, HYPER_WIDTH, META_FIELDS, META_WIDTH

# the same indices, as constants the kernels can read
_M_SLOT = tl.constexpr(META_FIELDS["slot"])
_M_DEPTH = tl.constexpr(META_FIELDS["depth"])
_M_ACT = tl.constexpr(META_FIELDS["activation"])
_M_FOLD = tl.constexpr(META_FIELDS["fold"])
_M_SOLVER = tl.constexpr(META_FIELDS["solver"])
_M_NESTEROV = tl.constexpr(META_FIELDS["nesterov"])
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
_HYPER = tl.constexpr(HYPER_WIDTH)

_SELU_ALPHA = tl.constexpr(1.6732632423543772848170429916717)
_SELU_SCALE = tl.constexpr(1.0507009873554804934193349852946)
_SQRT1_2 = tl.constexpr(0.70710678118654752440)
_INV_SQRT_2PI = tl.constexpr(0.39894228040143267794)


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
    """``g * f'(z)`` from the ``f'(z)`` the forward kept. ReLU and
    hardshrink select, as torch's backward, so that a non-finite gradient
    stays masked where the unit is off."""
    out = g * d
    if (act == 3) | (act == 8):
        out = tl.where(d != 0, g, tl.zeros(g.shape, g.dtype))
    return out


@triton.jit
def _loss_grad(logits, rows, bmask, w, y_ptr, C, LOSS: tl.constexpr, C_PAD: tl.constexpr):
    """Loss gradient on the logits of one batch tile, weighted per row,
    and the tile's weighted loss.

    logits (BB, C_PAD); rows, bmask, w (BB,): the tile's data rows, which
    of them are real and their weights. Returns ``(delta, loss)``."""
    c = tl.arange(0, C_PAD)
    cmask = c < C
    valid = bmask[:, None] & cmask[None, :]
    zero = tl.zeros(logits.shape, logits.dtype)
    if LOSS == 0:  # softmax cross-entropy
        label = tl.load(y_ptr + rows, mask=bmask, other=0)
        z = tl.where(cmask[None, :], logits, float("-inf"))
        zmax = tl.max(z, 1)
        e = tl.where(cmask[None, :], tl.exp(z - zmax[:, None]), zero)
        total = tl.sum(e, 1)
        onehot = c[None, :] == label[:, None]
        delta = tl.where(
            cmask[None, :], (e / total[:, None] - onehot.to(logits.dtype)) * w[:, None], zero
        )
        picked = tl.sum(tl.where(onehot, z, zero), 1)
        row_loss = tl.log(total) + zmax - picked
        loss = tl.sum(tl.where(w != 0, w * row_loss, 0.0), 0)
    elif LOSS == 1:  # half squared error, mean over the outputs
        target = tl.load(y_ptr + rows[:, None] * C + c[None, :], mask=valid, other=0.0)
        r = tl.where(cmask[None, :], logits - target, zero)
        delta = r / C * w[:, None]
        loss = tl.sum(0.5 * w * tl.sum(r * r, 1) / C, 0)
    else:  # binary log-loss summed over the outputs: sigmoid - y, softplus(z) - y z
        target = tl.load(y_ptr + rows[:, None] * C + c[None, :], mask=valid, other=0.0)
        sigmoid = 1.0 / (1.0 + tl.exp(-logits))
        delta = tl.where(cmask[None, :], (sigmoid - target) * w[:, None], zero)
        softplus = tl.maximum(logits, zero) + tl.log(1.0 + tl.exp(-tl.abs(logits)))
        term = tl.where(cmask[None, :], softplus - target * logits, zero)
        loss = tl.sum(tl.where(w != 0, w * tl.sum(term, 1), 0.0), 0)
    return delta, loss


@triton.jit
def _update(
    params_ptr,
    state1_ptr,
    state2_ptr,
    offsets,
    mask,
    grad,
    decay,
    solver,
    nesterov,
    lr,
    beta1,
    beta2,
    eps,
    momentum,
    step_size,
    bias2_sqrt,
):
    """torch's Adam / SGD update of one tile of parameters, coupled weight
    decay ``decay`` (scalars already in the parameters' dtype)."""
    p = tl.load(params_ptr + offsets, mask=mask, other=0.0)
    g = grad + decay * p
    if solver == 0:
        m = tl.load(state1_ptr + offsets, mask=mask, other=0.0)
        v = tl.load(state2_ptr + offsets, mask=mask, other=0.0)
        m = m + (g - m) * (1.0 - beta1)  # lerp, as torch
        v = beta2 * v + (1.0 - beta2) * g * g
        p = p - step_size * m / (tl.sqrt(v) / bias2_sqrt + eps)
        tl.store(state1_ptr + offsets, m, mask=mask)
        tl.store(state2_ptr + offsets, v, mask=mask)
    else:
        if momentum != 0:
            buf = momentum * tl.load(state1_ptr + offsets, mask=mask, other=0.0) + g
            tl.store(state1_ptr + offsets, buf, mask=mask)
            g = tl.where(nesterov != 0, g + momentum * buf, buf)
        p = p - lr * g
    tl.store(params_ptr + offsets, p, mask=mask)


@triton.jit
def _step_scalars(hyper, step0_ptr, wsum_ptr, fold, sk, taken, dt: tl.constexpr):
    """The optimizer's per-step scalars of one model, in dtype ``dt``:
    ``(decay, lr, beta1, beta2, eps, momentum, step_size, bias2_sqrt)``.
    The bias corrections use the model's own step count: its fold's steps
    before the epoch, less those it did not take, plus this epoch's."""
    lr = tl.load(hyper + _H_LR)
    alpha = tl.load(hyper + _H_ALPHA)
    beta1 = tl.load(hyper + _H_BETA1).to(dt)
    beta2 = tl.load(hyper + _H_BETA2).to(dt)
    t = tl.load(step0_ptr + fold).to(tl.float64) - tl.load(hyper + _H_STEP_OFFSET) + taken + 1
    # beta ** t in float64 from the dtype's beta, as mlp_step.cpp
    bias1 = 1.0 - tl.exp(t * tl.log(beta1.to(tl.float64))).to(dt)
    bias2 = 1.0 - tl.exp(t * tl.log(beta2.to(tl.float64))).to(dt)
    # scikit-learn's L2 gradient: alpha * W / (sum of the batch's weights)
    decay = tl.where(alpha != 0, alpha / tl.load(wsum_ptr + sk), 0.0).to(dt)
    lr_t = lr.to(dt)
    return (
        decay,
        lr_t,
        beta1,
        beta2,
        tl.load(hyper + _H_EPS).to(dt),
        tl.load(hyper + _H_MOMENTUM).to(dt),
        lr_t / bias1,
        tl.sqrt(bias2),
    )


@triton.jit
def _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB: tl.constexpr):
    """Rows, real-row mask and weights of batch tile ``bt`` of step-fold ``sk``."""
    rb = bt * BB + tl.arange(0, BB)
    bmask = rb < B
    rows = tl.load(rows_ptr + sk * B + rb, mask=bmask, other=0)
    w = tl.load(weights_ptr + sk * B + rb, mask=bmask, other=0.0)
    return rb, bmask, rows, w


# Run-time sizes that change between runs, chunks and compactions: not
# specialised on (Triton would compile a kernel for a value of 1 and for
# multiples of 16), so one compiled kernel serves them all.
_SIZES = ["n_models", "n_steps", "n_folds", "B", "max_depth", "scratch_stride"]


# --------------------------------------------------------- one hidden layer
@triton.jit(do_not_specialize=_SIZES[:4])
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
    F,
    C,
    LOSS: tl.constexpr,
    F_PAD: tl.constexpr,
    H: tl.constexpr,
    C_PAD: tl.constexpr,
    BB: tl.constexpr,
):
    """A whole epoch of models with one hidden layer of at most ``H`` units
    and at most ``F_PAD`` features: every tile in registers."""
    dt = params_ptr.dtype.element_ty
    pid = tl.program_id(0)
    f = tl.arange(0, F_PAD)
    h = tl.arange(0, H)
    c = tl.arange(0, C_PAD)
    fmask = f < F
    cmask = c < C
    for i in range(pid, n_models, tl.num_programs(0)):
        meta = meta_ptr + i * _META
        hyper = hyper_ptr + i * _HYPER
        slot = tl.load(meta + _M_SLOT)
        act = tl.load(meta + _M_ACT)
        fold = tl.load(meta + _M_FOLD)
        solver = tl.load(meta + _M_SOLVER)
        nesterov = tl.load(meta + _M_NESTEROV)
        hmask = h < tl.load(meta + _M_SIZES + 1)
        mask0 = fmask[:, None] & hmask[None, :]
        offsets0 = tl.load(meta + _M_WOFF) + f[:, None] * tl.load(meta + _M_LD) + h[None, :]
        bias0 = tl.load(meta + _M_BOFF) + h
        mask1 = hmask[:, None] & cmask[None, :]
        offsets1 = (
            tl.load(meta + _M_WOFF + 1) + h[:, None] * tl.load(meta + _M_LD + 1) + c[None, :]
        )
        bias1 = tl.load(meta + _M_BOFF + 1) + c
        taken = 0
        loss_sum = tl.zeros((), tl.float64)
        for s in range(n_steps):
            sk = s * n_folds + fold
            if tl.load(stepping_ptr + sk) != 0:
                # the previous step's updates, stored by other threads of
                # the program, are visible to this step's loads
                tl.debug_barrier()
                W0 = tl.load(params_ptr + offsets0, mask=mask0, other=0.0)
                b0 = tl.load(params_ptr + bias0, mask=hmask, other=0.0)
                W1 = tl.load(params_ptr + offsets1, mask=mask1, other=0.0)
                b1 = tl.load(params_ptr + bias1, mask=cmask, other=0.0)
                gW0 = tl.zeros((F_PAD, H), dt)
                gb0 = tl.zeros((H,), dt)
                gW1 = tl.zeros((H, C_PAD), dt)
                gb1 = tl.zeros((C_PAD,), dt)
                loss = tl.zeros((), dt)
                for bt in range(tl.cdiv(B, BB)):
                    rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                    x = tl.load(
                        X_ptr + rows[:, None] * F + f[None, :],
                        mask=bmask[:, None] & fmask[None, :],
                        other=0.0,
                    )
                    z = tl.dot(x, W0, input_precision="ieee") + b0[None, :]
                    a, d = _activate(z, act)
                    logits = tl.dot(a, W1, input_precision="ieee") + b1[None, :]
                    delta, tile_loss = _loss_grad(logits, rows, bmask, w, y_ptr, C, LOSS, C_PAD)
                    loss += tile_loss
                    gW1 += tl.dot(tl.trans(a), delta, input_precision="ieee")
                    gb1 += tl.sum(delta, 0)
                    dh = _activation_backward(
                        tl.dot(delta, tl.trans(W1), input_precision="ieee"), d, act
                    )
                    gW0 += tl.dot(tl.trans(x), dh, input_precision="ieee")
                    gb0 += tl.sum(dh, 0)
                decay, lr, beta1, beta2, eps, momentum, step_size, bias2_sqrt = _step_scalars(
                    hyper, step0_ptr, wsum_ptr, fold, sk, taken, dt
                )
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    offsets0,
                    mask0,
                    gW0,
                    decay,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    bias0,
                    hmask,
                    gb0,
                    0.0,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    offsets1,
                    mask1,
                    gW1,
                    decay,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    bias1,
                    cmask,
                    gb1,
                    0.0,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                taken += 1
                loss_sum += loss.to(tl.float64) * tl.load(counts_ptr + sk).to(tl.float64)
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
    b_pad = n_tiles * BB
    act_base = scratch_ptr + tl.cast(pid, tl.int64) * scratch_stride
    der_base = act_base + max_depth * b_pad * H
    delta_base = der_base + max_depth * b_pad * H
    r = tl.arange(0, BB)
    h = tl.arange(0, H)
    c = tl.arange(0, C_PAD)
    cmask = c < C
    for i in range(pid, n_models, tl.num_programs(0)):
        meta = meta_ptr + i * _META
        hyper = hyper_ptr + i * _HYPER
        slot = tl.load(meta + _M_SLOT)
        depth = tl.load(meta + _M_DEPTH)
        act = tl.load(meta + _M_ACT)
        fold = tl.load(meta + _M_FOLD)
        solver = tl.load(meta + _M_SOLVER)
        nesterov = tl.load(meta + _M_NESTEROV)
        taken = 0
        loss_sum = tl.zeros((), tl.float64)
        for s in range(n_steps):
            sk = s * n_folds + fold
            if tl.load(stepping_ptr + sk) != 0:
                tl.debug_barrier()  # the previous step's updates and reads of scratch are done
                # ---- forward, layer 0: features in chunks of BF
                hmask = h < tl.load(meta + _M_SIZES + 1)
                w_off = tl.load(meta + _M_WOFF)
                ld = tl.load(meta + _M_LD)
                b0 = tl.load(params_ptr + tl.load(meta + _M_BOFF) + h, mask=hmask, other=0.0)
                for bt in range(n_tiles):
                    rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                    z = tl.zeros((BB, H), dt) + b0[None, :]
                    for f0 in range(0, F, BF):
                        fo = f0 + tl.arange(0, BF)
                        fmask = fo < F
                        x = tl.load(
                            X_ptr + rows[:, None] * F + fo[None, :],
                            mask=bmask[:, None] & fmask[None, :],
                            other=0.0,
                        )
                        W0 = tl.load(
                            params_ptr + w_off + fo[:, None] * ld + h[None, :],
                            mask=fmask[:, None] & hmask[None, :],
                            other=0.0,
                        )
                        z += tl.dot(x, W0, input_precision="ieee")
                    a, d = _activate(z, act)
                    tile = (bt * BB + r)[:, None] * H + h[None, :]
                    tl.store(act_base + tile, a)
                    tl.store(der_base + tile, d)
                tl.debug_barrier()
                # ---- forward, hidden layers 1 .. depth - 1
                for layer in range(1, depth):
                    kmask = h < tl.load(meta + _M_SIZES + layer)
                    hmask = h < tl.load(meta + _M_SIZES + layer + 1)
                    Wh = tl.load(
                        params_ptr
                        + tl.load(meta + _M_WOFF + layer)
                        + h[:, None] * tl.load(meta + _M_LD + layer)
                        + h[None, :],
                        mask=kmask[:, None] & hmask[None, :],
                        other=0.0,
                    )
                    bh = tl.load(
                        params_ptr + tl.load(meta + _M_BOFF + layer) + h, mask=hmask, other=0.0
                    )
                    for bt in range(n_tiles):
                        tile = (bt * BB + r)[:, None] * H + h[None, :]
                        a_in = tl.load(act_base + (layer - 1) * b_pad * H + tile)
                        z = tl.dot(a_in, Wh, input_precision="ieee") + bh[None, :]
                        a, d = _activate(z, act)
                        tl.store(act_base + layer * b_pad * H + tile, a)
                        tl.store(der_base + layer * b_pad * H + tile, d)
                    tl.debug_barrier()
                # ---- output layer, loss and its gradient
                kmask = h < tl.load(meta + _M_SIZES + depth)
                out_w = (
                    tl.load(meta + _M_WOFF + depth)
                    + h[:, None] * tl.load(meta + _M_LD + depth)
                    + c[None, :]
                )
                out_mask = kmask[:, None] & cmask[None, :]
                out_b = tl.load(meta + _M_BOFF + depth) + c
                Wo = tl.load(params_ptr + out_w, mask=out_mask, other=0.0)
                bo = tl.load(params_ptr + out_b, mask=cmask, other=0.0)
                loss = tl.zeros((), dt)
                for bt in range(n_tiles):
                    rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                    a_in = tl.load(
                        act_base
                        + (depth - 1) * b_pad * H
                        + (bt * BB + r)[:, None] * H
                        + h[None, :]
                    )
                    logits = tl.dot(a_in, Wo, input_precision="ieee") + bo[None, :]
                    delta, tile_loss = _loss_grad(logits, rows, bmask, w, y_ptr, C, LOSS, C_PAD)
                    loss += tile_loss
                    tl.store(delta_base + (bt * BB + r)[:, None] * DW + c[None, :], delta)
                tl.debug_barrier()
                decay, lr, beta1, beta2, eps, momentum, step_size, bias2_sqrt = _step_scalars(
                    hyper, step0_ptr, wsum_ptr, fold, sk, taken, dt
                )
                # ---- backward of the output layer, then its update
                gWo = tl.zeros((H, C_PAD), dt)
                gbo = tl.zeros((C_PAD,), dt)
                for bt in range(n_tiles):
                    rows_at = (bt * BB + r)[:, None]
                    delta_o = tl.load(delta_base + rows_at * DW + c[None, :])
                    tile = rows_at * H + h[None, :]
                    a_in = tl.load(act_base + (depth - 1) * b_pad * H + tile)
                    gWo += tl.dot(tl.trans(a_in), delta_o, input_precision="ieee")
                    gbo += tl.sum(delta_o, 0)
                    back = tl.dot(delta_o, tl.trans(Wo), input_precision="ieee")
                    back = _activation_backward(
                        back, tl.load(der_base + (depth - 1) * b_pad * H + tile), act
                    )
                    tl.store(delta_base + b_pad * DW + rows_at * DW + h[None, :], back)
                tl.debug_barrier()
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    out_w,
                    out_mask,
                    gWo,
                    decay,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    out_b,
                    cmask,
                    gbo,
                    0.0,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                # ---- backward of hidden layers depth - 1 .. 1, each then updated
                current = 1  # the delta buffer holding this layer's delta
                for k in range(1, depth):
                    layer = depth - k
                    kmask = h < tl.load(meta + _M_SIZES + layer)
                    hmask = h < tl.load(meta + _M_SIZES + layer + 1)
                    w_at = (
                        tl.load(meta + _M_WOFF + layer)
                        + h[:, None] * tl.load(meta + _M_LD + layer)
                        + h[None, :]
                    )
                    w_mask = kmask[:, None] & hmask[None, :]
                    b_at = tl.load(meta + _M_BOFF + layer) + h
                    Wb = tl.load(params_ptr + w_at, mask=w_mask, other=0.0)
                    gWh = tl.zeros((H, H), dt)
                    gbh = tl.zeros((H,), dt)
                    for bt in range(n_tiles):
                        rows_at = (bt * BB + r)[:, None]
                        delta_h = tl.load(
                            delta_base + current * b_pad * DW + rows_at * DW + h[None, :]
                        )
                        tile = rows_at * H + h[None, :]
                        a_in = tl.load(act_base + (layer - 1) * b_pad * H + tile)
                        gWh += tl.dot(tl.trans(a_in), delta_h, input_precision="ieee")
                        gbh += tl.sum(delta_h, 0)
                        back = tl.dot(delta_h, tl.trans(Wb), input_precision="ieee")
                        back = _activation_backward(
                            back, tl.load(der_base + (layer - 1) * b_pad * H + tile), act
                        )
                        tl.store(
                            delta_base + (1 - current) * b_pad * DW + rows_at * DW + h[None, :],
                            back,
                        )
                    tl.debug_barrier()
                    _update(
                        params_ptr,
                        state1_ptr,
                        state2_ptr,
                        w_at,
                        w_mask,
                        gWh,
                        decay,
                        solver,
                        nesterov,
                        lr,
                        beta1,
                        beta2,
                        eps,
                        momentum,
                        step_size,
                        bias2_sqrt,
                    )
                    _update(
                        params_ptr,
                        state1_ptr,
                        state2_ptr,
                        b_at,
                        hmask,
                        gbh,
                        0.0,
                        solver,
                        nesterov,
                        lr,
                        beta1,
                        beta2,
                        eps,
                        momentum,
                        step_size,
                        bias2_sqrt,
                    )
                    current = 1 - current
                # ---- backward of layer 0, chunk by chunk of features
                hmask = h < tl.load(meta + _M_SIZES + 1)
                w_off = tl.load(meta + _M_WOFF)
                ld = tl.load(meta + _M_LD)
                deltas = delta_base + current * b_pad * DW
                gb0 = tl.zeros((H,), dt)
                for bt in range(n_tiles):
                    gb0 += tl.sum(tl.load(deltas + (bt * BB + r)[:, None] * DW + h[None, :]), 0)
                for f0 in range(0, F, BF):
                    fo = f0 + tl.arange(0, BF)
                    fmask = fo < F
                    gW0 = tl.zeros((BF, H), dt)
                    for bt in range(n_tiles):
                        rb, bmask, rows, w = _batch_tile(rows_ptr, weights_ptr, sk, B, bt, BB)
                        x = tl.load(
                            X_ptr + rows[:, None] * F + fo[None, :],
                            mask=bmask[:, None] & fmask[None, :],
                            other=0.0,
                        )
                        delta0 = tl.load(deltas + (bt * BB + r)[:, None] * DW + h[None, :])
                        gW0 += tl.dot(tl.trans(x), delta0, input_precision="ieee")
                    _update(
                        params_ptr,
                        state1_ptr,
                        state2_ptr,
                        w_off + fo[:, None] * ld + h[None, :],
                        fmask[:, None] & hmask[None, :],
                        gW0,
                        decay,
                        solver,
                        nesterov,
                        lr,
                        beta1,
                        beta2,
                        eps,
                        momentum,
                        step_size,
                        bias2_sqrt,
                    )
                _update(
                    params_ptr,
                    state1_ptr,
                    state2_ptr,
                    tl.load(meta + _M_BOFF) + h,
                    hmask,
                    gb0,
                    0.0,
                    solver,
                    nesterov,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    step_size,
                    bias2_sqrt,
                )
                taken += 1
                loss_sum += loss.to(tl.float64) * tl.load(counts_ptr + sk).to(tl.float64)
        tl.store(loss_ptr + slot, tl.load(loss_ptr + slot) + loss_sum.to(dt))
