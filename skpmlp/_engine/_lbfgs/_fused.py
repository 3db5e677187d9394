"""Fused L-BFGS: every model of a population minimised by its own L-BFGS.

What scikit-learn's ``solver="lbfgs"`` does for one MLP (scipy's L-BFGS-B
with no bounds, ``maxcor=10``, ``gtol=tol``, ``ftol`` its default, ``maxiter``
and ``maxfun``), done for a whole population at once on the fused network:

* **One full-batch evaluation per round.** Every model still training is
  evaluated at its own trial point in one fused forward / backward (torch
  autograd over :class:`~._network.FusedNetwork`): value and gradient of
  its loss on its fold's training rows, with the L2 term
  ``alpha / (2 sum(w)) ||W||^2``.
* **Per-model scalars from segment sums.** Each flat parameter knows its
  slot (``param_slot``, built once from the network's layout), so a dot
  product per model is one ``index_add_`` over the flat buffers, and a
  per-model scalar reaches its parameters by one gather. No Python loop
  over models, anywhere in a round.
* **Each model its own curvature history, direction and line search.**
  The last ``m = 10`` pairs ``(s, y)`` of every model are kept newest first
  in ``(m, n_parameters)`` buffers; the two-loop recursion runs for every
  model at once with per-model ``rho`` and ``H0 = s'y / y'y``, as
  L-BFGS-B's compact form gives for unbounded problems. The line search is
  L-BFGS-B's own (Moré-Thuente, :mod:`skpmlp._engine._lbfgs._linesearch`), one per model: every
  model tries its own step, accepts its own, and starts its next iteration
  in the same round, so models never wait for each other.
* **scipy's stopping rules per model.** A model stops when its largest
  absolute gradient entry is ``<= tol`` (L-BFGS-B's projected gradient
  norm, no bounds), when its relative loss decrease is ``<= ftol``, after
  ``max_iter`` iterations or once it used more than ``max_fun``
  evaluations (checked at the end of an iteration, as scipy), or when its
  line search fails twice (L-BFGS-B's restart, then abnormal termination).
  A stopped model's parameters are never written again.

The differences from scipy are of rounding only (the two-loop recursion
instead of the compact matrices, torch's reductions), plus one guard: a
trial point where a model's loss is not finite halves that model's step
instead of feeding NaN to the line search.

This is the torch path (any device) and the reference. On the CPU with the
native kernel, :mod:`skpmlp._engine._lbfgs._native` runs the same algorithm with no
framework op: each model on its own, in ``skpmlp/_kernels/lbfgs.cpp``.
"""

from dataclasses import dataclass

import numpy as np
import torch

from ... import _kernels
from .._backends._kernel_tables import kernel_tables
from .._backends._native import _LOSS_OF_TASK, native_supported
from .._build import as_tensor, build_network, targets_tensor
from .._losses import LOSSES, group_smoothing, training_loss
from .._run_state import tensor_state, to_device
from .._spec import OptimizerSettings, TrainResult
from ._linesearch import STATE_FIELDS as SEARCH_FIELDS
from ._linesearch import STPMAX, LineSearches
from ._native import NativeLbfgsRun
from ._rules import (
    ABNORMAL,
    CONVERGED,
    DIVERGED,
    EPS,
    FTOL,
    HISTORY,
    MAX_FUN,
    MAX_ITER,
    MAX_LINE_SEARCH,
    RUNNING,
)


def param_slots(net):
    """The slot of every entry of ``net``'s flat buffers: int64 Tensor of
    shape (n_parameters,)."""
    parts = []
    for gi, group in enumerate(net.groups):
        first = int(net.group_offsets[gi])
        for view in net.layer_views(net.flat)[gi]:
            per_slot = view[0].numel()
            slots = torch.arange(group.size, device=net.device)
            parts.append(slots.repeat_interleave(per_slot) + first)
    if not parts:
        return torch.zeros(0, dtype=torch.int64, device=net.device)
    return torch.cat(parts)


class Segments:
    """Per-slot reductions over flat buffers, and per-slot values spread
    back over them.

    Parameters
    ----------
    param_slot : Tensor of int64 of shape (n,)
    n_slots : int
    """

    def __init__(self, param_slot, n_slots):
        self.param_slot, self.n_slots = param_slot, n_slots

    def dot(self, a, b):
        """Per-slot dot products of ``a`` and ``b``: shape (n_slots,), or
        (k, n_slots) for (k, n) buffers."""
        product = a * b
        out = product.new_zeros((*product.shape[:-1], self.n_slots))
        return out.index_add_(product.dim() - 1, self.param_slot, product)

    def max_abs(self, a):
        """Per-slot largest absolute entry (0 for a slot of no entries)."""
        out = a.new_zeros(self.n_slots)
        return out.scatter_reduce_(0, self.param_slot, a.abs(), reduce="amax", include_self=True)

    def spread(self, values):
        """A per-slot Tensor (n_slots,) as a per-entry one (n,)."""
        return values.index_select(0, self.param_slot)  # 4x faster than values[param_slot]


@dataclass(frozen=True)
class FoldRows:
    """The data a full-batch evaluation reads: ``X``, ``y`` (classes or
    targets), every fold's training rows and the row weights (or None)."""

    X: np.ndarray
    y: np.ndarray
    train_rows: list
    sample_weight: np.ndarray = None


@dataclass(frozen=True)
class SlotSettings:
    """Every slot's fold, L2 penalty and label smoothing (None: none),
    arrays of shape (n_slots,)."""

    fold: np.ndarray
    alpha: np.ndarray
    smoothing: np.ndarray = None


class FullBatch:
    """Each slot's loss and gradient on its fold's training rows, full batch.

    With ``backend="torch"``, ``__call__`` evaluates the network at its
    current :attr:`net.flat` and leaves the gradients in ``net.grad``; the
    L2 term is ``0.5 * alpha * ||W||^2 / sum(w)`` with ``sum(w)`` the fold's
    total sample weight (its row count without weights), as scikit-learn's
    MLP. With ``backend="native"`` it holds what the native run evaluates
    with: the step kernel's ``batches`` (one step: every fold's rows),
    ``meta`` / ``hyper`` tables and ``loss_sums``, and ``slot_l2``.

    Parameters
    ----------
    net : FusedNetwork
    task : str
    slots : SlotSettings
        Every slot's fold, L2 penalty and label smoothing.
    data : FoldRows
        ``X``, ``y``, every fold's training rows and the row weights.
    backend : {"torch", "native"}
    n_threads : int
        The native kernel's threads.
    loss_fn : callable, optional
        The torch loss (see :func:`~._losses.training_loss`); default: the
        task's (squared error for regression).
    """

    def __init__(self, net, task, slots, data, backend, n_threads=1, loss_fn=None):
        self.net, self.task, self.backend, self.n_threads = net, task, backend, n_threads
        X, y, train_rows, sample_weight = data.X, data.y, data.train_rows, data.sample_weight
        dtype, device = net.dtype, net.device
        K = len(train_rows)
        n_max = max(len(r) for r in train_rows)
        rows = np.zeros((K, n_max), dtype=np.int64)
        weights = np.zeros((K, n_max))
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
        for k, r in enumerate(train_rows):
            rows[k, : len(r)] = r
            weights[k, : len(r)] = sw[r]
        weight_sums = weights.sum(1)
        self.counts = np.array([len(r) for r in train_rows], dtype=float)
        X_t = as_tensor(X, dtype=dtype, device=device)
        y_t = targets_tensor(y, task, dtype=dtype, device=device)
        rows_t = torch.as_tensor(rows, device=device)
        self.X, self.y = X_t[rows_t], y_t[rows_t]  # (K, n_max, F), (K, n_max[, C])
        self.w = as_tensor(weights / weight_sums[:, None], dtype=dtype, device=device)
        self.K = K
        to = lambda a, dt: torch.as_tensor(a, dtype=dt, device=device)  # noqa: E731
        self.slot_fold = np.asarray(slots.fold)
        self.group_folds = [
            to(self.slot_fold[net.group_offsets[g] : net.group_offsets[g + 1]], torch.int64)
            for g in range(len(net.groups))
        ]
        self.slot_l2 = np.asarray(slots.alpha, float) / weight_sums[self.slot_fold]
        self.l2 = to(self.slot_l2, dtype)
        self.slot_smoothing = (np.zeros(len(self.slot_fold)) if slots.smoothing is None
                               else np.asarray(slots.smoothing, float))
        self.group_smoothing = group_smoothing(task, self.slot_smoothing, net.group_offsets,
                                               dtype=dtype, device=device)
        self.loss_fn = loss_fn or LOSSES[task]
        self.kernel_loss = _LOSS_OF_TASK[task]
        if backend == "native":
            self._native_setup()

    # ------------------------------------------------------------ torch
    def _per_slot(self, gi, tensor):
        return tensor if self.K == 1 else tensor.index_select(0, self.group_folds[gi])

    def _torch_losses(self):
        net = self.net
        net.grad.zero_()
        losses, total = [], 0
        for gi in range(len(net.groups)):
            x = self.X[0] if self.K == 1 else self.X.index_select(0, self.group_folds[gi])
            smoothing = self.group_smoothing[gi]
            loss = self.loss_fn(net.group_forward(gi, x), self._per_slot(gi, self.y),
                                self._per_slot(gi, self.w),
                                **({} if smoothing is None else {"smoothing": smoothing}))
            losses.append(loss.detach())
            total = total + loss.sum()
        total.backward()
        return torch.cat(losses)

    # ----------------------------------------------------------- native
    def _native_setup(self):
        net = self.net
        lanes = _kernels.lanes(net.dtype)
        K, n_max, F = self.X.shape
        bp = -(-n_max // lanes) * lanes
        Xb = self.X.new_zeros((1, K, F, bp))
        Xb[0, ..., :n_max] = self.X.transpose(1, 2)
        if self.task == "classification":
            Yb = self.X.new_zeros((1, K, bp))
            Yb[0, :, :n_max] = self.y.to(self.X.dtype)
        else:
            Yb = self.X.new_zeros((1, K, self.y.shape[2], bp))
            Yb[0, ..., :n_max] = self.y.transpose(1, 2)
        Wb = self.X.new_zeros((1, K, bp))
        Wb[0, :, :n_max] = self.w
        self.batches = {
            "X": Xb.contiguous(), "Y": Yb.contiguous(), "W": Wb.contiguous(),
            "counts": self.counts[None, :], "weight_sums": np.ones((1, K)),
            "stepping": np.ones((1, K), dtype=bool), "step0": np.zeros(K),
        }
        n_slots = len(net.slot_models)
        self.loss_sums = torch.zeros(n_slots, dtype=net.dtype)
        zeros = np.zeros(n_slots)
        # only the loss's settings matter to the gradients the kernel evaluates
        losses = [OptimizerSettings(label_smoothing=float(e)) for e in self.slot_smoothing]
        self.meta, self.hyper = kernel_tables(
            net, np.arange(n_slots), slot_fold=self.slot_fold, slot_lr=zeros, slot_alpha=zeros,
            slot_optimizer=losses,
        )

    # --------------------------------------------------------------- call
    def bind(self, seg):
        """Use ``seg``'s per-slot sums: the squared weight norms are summed
        entry by entry in flat order, whatever the padding, so a model's L2
        term is bit for bit the same in any population."""
        net = self.net
        self.seg = seg
        is_weight = torch.zeros(net.n_parameters, dtype=torch.bool, device=net.device)
        for gi, views in enumerate(net.layer_views(is_weight)):
            for W in net.weight_views(gi, views):  # a diagonal scale is not penalised
                W.fill_(True)
        self.is_weight = is_weight

    def __call__(self, active):
        """Every slot's loss (Tensor (n_slots,), L2 term included) at
        :attr:`net.flat`; gradients in ``net.grad``. Slots not ``active``
        may be skipped (their values are then meaningless)."""
        net = self.net
        assert self.backend == "torch", "native runs evaluate inside the L-BFGS kernel"
        losses = self._torch_losses()
        with torch.no_grad():
            for gi, (params, grads) in enumerate(zip(net.params, net.layer_views(net.grad))):
                coef = self.l2[net.group_offsets[gi] : net.group_offsets[gi + 1]].view(-1, 1, 1)
                for W, gW in zip(net.weight_views(gi, params), net.weight_views(gi, grads)):
                    gW.add_(coef * W)
            weights = torch.where(self.is_weight, net.flat, 0.0)
            return losses + 0.5 * self.l2 * self.seg.dot(weights, weights)


class LbfgsRun:
    """Every slot of a fused network minimised by its own L-BFGS.

    Parameters
    ----------
    net : FusedNetwork
        Starts at the initial weights; ends holding every slot's result.
    evaluate : FullBatch
    tol : float
        L-BFGS-B's ``gtol``.
    max_iter, max_fun : int

    Attributes
    ----------
    n_iter, n_fun : ndarray of int of shape (n_slots,)
        Iterations and function evaluations of every slot.
    reason : ndarray of int of shape (n_slots,)
        Why each slot stopped (``RUNNING`` while it trains).
    curves : ndarray of shape (n_slots, max_iter)
        The loss after every iteration; NaN after a slot stopped.
    """

    def __init__(self, net, evaluate, *, tol, max_iter, max_fun):
        self.net, self.evaluate = net, evaluate
        self.tol, self.max_iter, self.max_fun = tol, max_iter, max_fun
        S, n = len(net.slot_models), net.n_parameters
        self.S = S
        self.seg = Segments(param_slots(net), S)
        evaluate.bind(self.seg)
        dt, dev = net.dtype, net.device
        self.x = net.flat.detach().clone()  # each slot's current iterate
        self.g = torch.zeros_like(self.x)  # its gradient
        self.d = torch.zeros_like(self.x)  # its search direction
        self.s_hist = torch.zeros((HISTORY, n), dtype=dt, device=dev)  # newest first
        self.y_hist = torch.zeros((HISTORY, n), dtype=dt, device=dev)
        self.rho = np.zeros((S, HISTORY))  # 0 for unused pairs
        self.h0 = np.ones(S)  # s'y / y'y of the newest pair
        self.col = np.zeros(S, dtype=int)
        self.f = np.zeros(S)  # value at x
        self.gd0 = np.zeros(S)  # g . d at x
        self.n_iter = np.zeros(S, dtype=int)
        self.n_fun = np.zeros(S, dtype=int)
        self.ifun = np.zeros(S, dtype=int)  # evaluations of the current line search
        self.reason = np.zeros(S, dtype=int)
        self.curves = np.full((S, max_iter), np.nan)
        self.search = LineSearches(S)

    @property
    def active(self):
        return self.reason == RUNNING

    def halt(self):
        """Every unfinished slot back to its last iterate."""
        with torch.no_grad():
            self.net.flat.copy_(self._select(self.active, self.x, self.net.flat))

    #: The per-slot host arrays and the flat tensors of the run's state.
    _HOST_FIELDS = ("rho", "h0", "col", "f", "gd0", "n_iter", "n_fun", "ifun", "reason", "curves")
    _TENSOR_FIELDS = ("x", "g", "d", "s_hist", "y_hist")

    def host_state(self):
        """Everything the run needs to go on from the end of a round, as
        host arrays: every slot's iterate, gradient, direction, curvature
        pairs, counters and line search, and the network's weights (each
        slot's trial point)."""
        state = {name: getattr(self, name).copy() for name in self._HOST_FIELDS}
        state.update({name: tensor_state(getattr(self, name)) for name in self._TENSOR_FIELDS})
        state["search"] = {name: getattr(self.search, name).copy() for name in SEARCH_FIELDS}
        state.update(flat=tensor_state(self.net.flat), grad=tensor_state(self.net.grad))
        return state

    def load_host_state(self, state):
        """Go on from a :meth:`host_state`."""
        for name in self._HOST_FIELDS:
            setattr(self, name, np.array(state[name], dtype=getattr(self, name).dtype))
        for name in self._TENSOR_FIELDS:
            setattr(self, name, to_device(state[name], getattr(self, name)))
        for name in SEARCH_FIELDS:
            array = getattr(self.search, name)
            setattr(self.search, name, np.array(state["search"][name], dtype=array.dtype))
        with torch.no_grad():
            self.net.flat.copy_(to_device(state["flat"], self.net.flat))
            self.net.grad.copy_(to_device(state["grad"], self.net.grad))

    # ----------------------------------------------------------- helpers
    def _tensor(self, values):
        return torch.as_tensor(values, dtype=self.net.dtype, device=self.net.device)

    def _host(self, tensor):
        return tensor.detach().to(torch.float64).cpu().numpy()

    def _select(self, mask, new, old):
        """Per-entry ``where``: ``new`` on the slots of ``mask``."""
        if mask.all():  # a copy: ``new`` may be the network's own buffers
            return new.clone()
        entries = self.seg.spread(torch.as_tensor(mask, device=self.net.device))
        return torch.where(entries, new, old)

    def _write_trials(self, mask):
        """``net.flat = x + stp * d`` on the slots of ``mask``."""
        stp = self.seg.spread(self._tensor(np.where(mask, self.search.stp, 0.0)))
        with torch.no_grad():
            trial = torch.where(stp == 1, self.x + self.d, self.x + stp * self.d)
            self.net.flat.copy_(self._select(mask, trial, self.net.flat))

    def _directions(self, mask):
        """``d = -H g`` for the slots of ``mask`` (two-loop recursion, all
        slots at once; pairs with ``rho = 0`` are no-ops)."""
        rho = self._tensor(self.rho)
        q = self.g.clone()
        alphas = []
        # pairs no slot holds are skipped (their rho is 0 everywhere)
        used = int(self.col[mask].max()) if mask.any() else 0
        for t in range(used):
            a = rho[:, t] * self.seg.dot(self.s_hist[t], q)
            q -= self.seg.spread(a) * self.y_hist[t]
            alphas.append(a)
        r = self.seg.spread(self._tensor(self.h0)) * q
        for t in reversed(range(used)):
            b = rho[:, t] * self.seg.dot(self.y_hist[t], r)
            r += self.seg.spread(alphas[t] - b) * self.s_hist[t]
        self.d = self._select(mask, -r, self.d)

    def _start_searches(self, mask):
        """Start a line search along ``d`` for the slots of ``mask``, as
        L-BFGS-B's ``lnsrlb``: first step ``1 / ||d||`` at iteration 0, else
        1. A direction that is not a descent direction fails at once."""
        gd = self._host(self.seg.dot(self.g, self.d))
        dnorm = np.sqrt(self._host(self.seg.dot(self.d, self.d)))
        with np.errstate(divide="ignore"):
            first = np.minimum(1.0 / dnorm, STPMAX)
        stp = np.where(self.n_iter == 0, first, 1.0)
        self.gd0 = np.where(mask, gd, self.gd0)
        ascent = mask & ~(gd < 0)
        ok = mask & ~ascent
        self.search.start(ok, stp, self.f, gd)
        self.ifun[ok] = 1
        self._write_trials(ok)
        if ascent.any():
            self._line_search_failed(ascent)

    def _line_search_failed(self, mask):
        """L-BFGS-B after a failed line search: back to the iterate; with
        curvature pairs, forget them and restart along ``-g``; without,
        stop (``ABNORMAL_TERMINATION_IN_LNSRCH``)."""
        with torch.no_grad():
            self.net.flat.copy_(self._select(mask, self.x, self.net.flat))
        abnormal = mask & (self.col == 0)
        self.reason[abnormal] = ABNORMAL
        restart = mask & ~abnormal
        if restart.any():
            self.col[restart] = 0
            self.rho[restart] = 0.0
            self.h0[restart] = 1.0
            self.d = self._select(restart, -self.g, self.d)
            self._start_searches(restart)

    def _push_pairs(self, mask, s, y, sy, yy):
        """Add ``(s, y)`` newest first to the history of the slots of
        ``mask``, dropping their oldest pair."""
        rolled_s = torch.cat([s[None], self.s_hist[:-1]])
        rolled_y = torch.cat([y[None], self.y_hist[:-1]])
        entries = self.seg.spread(torch.as_tensor(mask, device=self.net.device))[None]
        self.s_hist = torch.where(entries, rolled_s, self.s_hist)
        self.y_hist = torch.where(entries, rolled_y, self.y_hist)
        rolled_rho = np.concatenate([(1.0 / np.where(mask, sy, 1.0))[:, None], self.rho[:, :-1]],
                                    axis=1)
        self.rho = np.where(mask[:, None], rolled_rho, self.rho)
        self.h0 = np.where(mask, sy / np.where(mask, yy, 1.0), self.h0)
        self.col = np.where(mask, np.minimum(self.col + 1, HISTORY), self.col)

    # -------------------------------------------------------------- run
    def start(self):
        """Evaluate the initial weights; slots already at a point with a
        gradient within ``tol`` stop with 0 iterations."""
        active = np.ones(self.S, dtype=bool)
        f = self._host(self.evaluate(active))
        self.n_fun += 1
        grad = self.net.grad
        self.f = f
        self.g = grad.clone()
        gmax = self._host(self.seg.max_abs(grad))
        finite = np.isfinite(f) & np.isfinite(gmax)
        self.reason[~finite] = DIVERGED
        self.reason[finite & (gmax <= self.tol)] = CONVERGED
        mask = self.active
        self.d = self._select(mask, -self.g, self.d)
        self._start_searches(mask)

    def round(self):
        """One fused evaluation: every training slot at its trial point,
        then each slot's line search, and the iterations that ended."""
        active = self.active
        f = self._host(self.evaluate(active))
        self.n_fun[active] += 1
        grad = self.net.grad
        gd = self._host(self.seg.dot(grad, self.d))
        finite = np.isfinite(f) & np.isfinite(gd)
        broken = active & ~finite
        if broken.any():
            self.search.backtrack(broken)
        done = self.search.iterate(active & finite, f, gd)
        go = active & ~done
        # L-BFGS-B evaluates at most MAX_LINE_SEARCH points per search
        self.ifun[go] += 1
        exhausted = go & (self.ifun - 1 >= MAX_LINE_SEARCH)
        go &= ~exhausted
        if go.any():
            self._write_trials(go)
        if exhausted.any():
            self._line_search_failed(exhausted)
        if done.any():
            self._end_iterations(done, f, gd, grad)

    def _end_iterations(self, done, f, gd, grad):
        """The slots of ``done`` accepted their trial point: a new iterate,
        scipy's stopping tests, the curvature pair and the next direction."""
        self.n_iter[done] += 1
        self.curves[done, self.n_iter[done] - 1] = f[done]
        f_old, self.f = self.f.copy(), np.where(done, f, self.f)
        stp = self.search.stp
        # scipy's driver first: max_iter, then max_fun (strictly more)
        stop_iter = done & (self.n_iter >= self.max_iter)
        stop_fun = done & ~stop_iter & (self.n_fun > self.max_fun)
        gmax = self._host(self.seg.max_abs(grad))
        scale = np.maximum(np.maximum(np.abs(f_old), np.abs(f)), 1.0)
        met = (gmax <= self.tol) | (f_old - f <= FTOL * scale)
        converged = done & ~stop_iter & ~stop_fun & met
        self.reason[stop_iter] = MAX_ITER
        self.reason[stop_fun] = MAX_FUN
        self.reason[converged] = CONVERGED
        going = done & self.active
        if going.any():
            unit = stp == 1
            y = grad - self.g
            yy = self._host(self.seg.dot(y, y))
            sy = np.where(unit, gd - self.gd0, (gd - self.gd0) * stp)
            ddum = np.where(unit, -self.gd0, -self.gd0 * stp)
            update = going & (sy > EPS * ddum)
            if update.any():
                step = self.seg.spread(self._tensor(np.where(update & ~unit, stp, 1.0)))
                self._push_pairs(update, step * self.d, y, sy, yy)
        # every slot that accepted keeps its point (net.flat already holds it)
        self.x = self._select(done, self.net.flat.detach(), self.x)
        self.g = self._select(done, grad, self.g)
        if going.any():
            self._directions(going)
            self._start_searches(going)


def open_lbfgs(spec, config, X, y, folds, *, sample_weight=None):
    """The fused L-BFGS of every model of ``spec`` on every fold (see the
    module docstring), at its initial weights, ready to run.

    Parameters
    ----------
    spec : PopulationSpec
        Every model's solver is ``"lbfgs"``.
    config : TrainConfig
        ``tol``, ``max_iter``, ``max_fun``, ``task``, ``dtype``, ``device``
        and ``backend`` apply; minibatch settings, early stopping and
        pruning do not.
    X, y, folds, sample_weight :
        As :func:`~._train.train_population`; the evaluation rows of
        ``folds`` are not used.

    Returns
    -------
    LbfgsRun or NativeLbfgsRun
        The kernel's where it can train (:func:`_backend`); its ``net``
        holds the weights, replica ``k * n_models + i`` in slot order.
    """
    K, M = len(folds), spec.n_models
    replicas = spec.replicate(K)
    replica_fold = np.repeat(np.arange(K), M)
    net = build_network(replicas, config, X.shape[1], folds=replica_fold)
    backend = _backend(config, spec)
    smoothing = np.array([o.label_smoothing for o in replicas.optimizers_of(config)])
    slots = SlotSettings(replica_fold[net.slot_models],
                         np.asarray(replicas.alphas, float)[net.slot_models],
                         smoothing[net.slot_models])
    data = FoldRows(X, y, [train for train, _ in folds], sample_weight)
    evaluate = FullBatch(net, config.task, slots, data, backend,
                         n_threads=torch.get_num_threads(), loss_fn=training_loss(config))
    # natively, each model on its own in the kernel; torch ops over the
    # flat buffers elsewhere (GPU, or torch's gradients)
    settings = {"tol": config.tol, "max_iter": config.max_iter, "max_fun": config.max_fun}
    run_class = NativeLbfgsRun if backend == "native" else LbfgsRun
    return run_class(net, evaluate, **settings)


def _backend(config, spec):
    """``"native"`` where the kernel's gradients can serve (CPU), else torch."""
    if config.backend == "torch":
        return "torch"
    reason = native_supported(config, spec)
    if reason is None and not _kernels.kernel_available():
        reason = "the kernel could not be built"
    if reason is None:
        return "native"
    if config.backend == "native":
        raise ValueError(f"backend='native' cannot train this run: {reason}.")
    return "torch"


def _result(net, run, K, M, halted, train_time, backend):
    """The :class:`TrainResult` of a fused L-BFGS ``run`` (of ``M`` models
    on ``K`` folds, on ``net``), per model and fold.

    ``loss_curves`` hold the loss after every iteration; ``n_iter``
    counts iterations as scipy's ``nit`` (scikit-learn's ``n_iter_``);
    ``converged`` is scipy's success (gradient or decrease tolerance
    met); ``extra["n_fun"]`` the function evaluations.
    """
    weights = net.export()
    order = np.argsort(net.slot_models)  # slot of every replica
    per_fold = lambda a: a[order].reshape(K, M, *a.shape[1:]).swapaxes(0, 1)  # noqa: E731
    n_iter = run.n_iter[order]
    n_epochs = int(n_iter.max()) if len(n_iter) else 0
    return TrainResult(
        coefs=[[weights[k * M + i][0] for i in range(M)] for k in range(K)],
        intercepts=[[weights[k * M + i][1] for i in range(M)] for k in range(K)],
        loss_curves=per_fold(run.curves[:, :n_epochs]),
        validation_scores=None,
        n_iter=per_fold(run.n_iter),
        converged=per_fold(run.reason == CONVERGED),
        diverged=per_fold(run.reason == DIVERGED),
        pruned=np.zeros((M, K), dtype=bool),
        train_time=train_time,
        halted=halted,
        extra={"backend": backend, "n_fun": per_fold(run.n_fun),
               "stop_reason": per_fold(run.reason)},
    )
