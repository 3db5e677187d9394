"""The fused L-BFGS on the native kernels: each model run to its end in cache.

The same algorithm as :class:`~skpmlp._engine._lbfgs._fused.LbfgsRun` (scipy's L-BFGS-B per
model: Moré-Thuente line search, two-loop direction, scipy's stopping
rules), with no framework op and no round over the whole population:
``lbfgs.cpp`` takes each model in turn on each thread and runs it on its
own, evaluation after evaluation: the step kernel's gradients of that one
model at its trial point, its L2 term, its line search, and where the
search ends its iteration, the stopping tests, the curvature pair, the
two-loop direction and the next trial point.

Why one model at a time: L-BFGS reads every curvature pair of a model
twice per iteration (the two-loop recursion), which for a whole population
is tens of MB per round, streamed from memory; one model's pairs (hundreds
of KB) stay in the core's cache from one iteration to the next, as they do
for scipy. Models are independent, so running them one after another
instead of side by side changes nothing in any model's arithmetic.

Each model's vectors (iterate, gradient, direction, 10 curvature pairs) are
packed: its real parameters contiguous, so a model's arithmetic is the same
whatever population it is in, and its reductions are plain loops in a
fixed order. Each vector starts on a 64-byte line (its model's parameters
rounded up to whole lines, :func:`~skpmlp._kernels.pack_stride`, apart):
vector loads that straddle two lines made the two-loop recursion 1.6x
slower; the padding is never read.
"""

import numpy as np
import torch

from ... import _kernels
from .._run_state import tensor_state, to_device
from ._rules import FTOL, MAX_LINE_SEARCH, RUNNING


def _packed_sizes(meta):
    """Real parameters of every model of the step kernel's ``meta`` table."""
    fields = _kernels.META_FIELDS
    depth = meta[:, fields["depth"]]
    sizes = meta[:, fields["sizes"] : fields["sizes"] + _kernels.MAX_DEPTH + 2]
    layer = np.arange(_kernels.MAX_DEPTH + 1)[None, :]
    per_layer = (sizes[:, :-1] + 1) * sizes[:, 1:]  # (n_in + 1) * n_out
    return np.where(layer <= depth[:, None], per_layer, 0).sum(1)


class NativeLbfgsRun:
    """Every slot of a fused network minimised by its own L-BFGS, natively.

    Parameters
    ----------
    net : FusedNetwork
        On the CPU. Starts at the initial weights; ends holding every
        slot's result.
    evaluate : FullBatch
        With ``backend="native"``: its batches, kernel tables and loss sums
        are used.
    tol : float
        L-BFGS-B's ``gtol``.
    max_iter, max_fun : int

    Attributes
    ----------
    n_iter, n_fun, reason, curves, f :
        As :class:`~skpmlp._engine._lbfgs._fused.LbfgsRun`.
    """

    def __init__(self, net, evaluate, *, tol, max_iter, max_fun):
        self.net, self.evaluate = net, evaluate
        self.settings = {"tol": tol, "ftol": FTOL, "max_iter": max_iter, "max_fun": max_fun,
                         "max_ls": MAX_LINE_SEARCH}
        meta = np.ascontiguousarray(evaluate.meta)
        S = len(meta)
        assert np.array_equal(meta[:, _kernels.META_FIELDS["slot"]], np.arange(S))
        self.meta, self.hyper = meta, np.ascontiguousarray(evaluate.hyper)
        # the largest models first: the threads' last models are then small
        self.sizes = sizes = _packed_sizes(meta)
        strides = _kernels.pack_stride(sizes, net.flat.element_size())
        self.packed = np.ascontiguousarray(np.concatenate([[0], np.cumsum(strides)[:-1]]),
                                           dtype=np.int64)
        n = int(strides.sum())
        zeros = lambda *shape: torch.zeros(shape, dtype=net.dtype)  # noqa: E731
        self.buffers = {
            "params": net.flat.detach(), "loss_sums": evaluate.loss_sums,
            "x": zeros(n), "g": zeros(n), "d": zeros(n),
            "S": zeros(_kernels.HISTORY * n), "Y": zeros(_kernels.HISTORY * n),
        }
        fields = _kernels.STATE_FIELDS
        self.state = np.zeros((S, _kernels.STATE_WIDTH))
        self.state[:, fields["h0"]] = 1.0
        self.state[:, fields["l2"]] = evaluate.slot_l2
        self.state[:, fields["count"]] = evaluate.counts[evaluate.slot_fold]
        self.curves = np.full((S, max_iter), np.nan)
        self.n_threads = evaluate.n_threads

    def _column(self, name):
        return self.state[:, _kernels.STATE_FIELDS[name]]

    @property
    def active(self):
        return self._column("reason") == RUNNING

    @property
    def reason(self):
        return self._column("reason").astype(int)

    @property
    def n_iter(self):
        return self._column("n_iter").astype(int)

    @property
    def n_fun(self):
        return self._column("n_fun").astype(int)

    @property
    def f(self):
        return self._column("f").copy()

    def _step(self, op, rows, max_evals=0):
        evaluate = self.evaluate
        _kernels.lbfgs_step(
            op, rows, self.meta, self.hyper, evaluate.batches, self.state, self.packed,
            self.buffers,
            self.curves, n_outputs=self.net.n_outputs, loss=evaluate.kernel_loss,
            max_evals=max_evals,
            n_threads=self.n_threads, **self.settings,
        )

    def round(self, max_evals=1):
        """Up to ``max_evals`` evaluations of every training slot, each
        followed by its line-search step (the first evaluates the initial
        weights)."""
        active = np.flatnonzero(self.active)
        self._step("run", active[np.argsort(-self.sizes[active], kind="stable")], max_evals)

    start = round

    def halt(self):
        """Every unfinished slot back to its last iterate."""
        self._step("restore", np.flatnonzero(self.active))

    def host_state(self):
        """Everything the run needs to go on from the end of a call, as host
        arrays: the kernel's per-slot state, the curves and every buffer
        (weights, packed iterates, gradients, directions, curvature pairs)."""
        state = {"state": self.state.copy(), "curves": self.curves.copy()}
        state.update({name: tensor_state(b) for name, b in self.buffers.items()})
        return state

    def load_host_state(self, state):
        """Go on from a :meth:`host_state`."""
        self.state[:] = state["state"]
        self.curves[:] = state["curves"]
        with torch.no_grad():
            for name, buffer in self.buffers.items():
                saved = to_device(state[name], buffer)
                if saved.shape != buffer.shape:  # another layout's (an earlier version's)
                    raise ValueError(
                        f"the saved L-BFGS state's {name!r} holds {saved.numel()} values where "
                        f"this run's layout holds {buffer.numel()}: it was written by another "
                        "skpmlp build and cannot be resumed here; start the fit afresh.")
                buffer.copy_(saved)
