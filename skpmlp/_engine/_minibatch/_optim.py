"""The fused optimizer: one update of every model's parameters at once.

Models sharing a learning rate, an L2 penalty, a fold and an optimizer
(:class:`~._spec.OptimizerSettings`: Adam or SGD and their coefficients)
form a *partition*: the flat ranges of their parameters (contiguous, as
slots are sorted by those keys inside each group). A step calls torch's
fused multi-tensor kernels (``torch._fused_adam_`` / ``torch._fused_sgd_``,
one pass over memory) once per partition for weights (with the L2 term as
Adam's / SGD's coupled weight decay, ``alpha / batch`` as scikit-learn's
MLP) and once for biases: a handful of calls per step whatever the
population size, and models with different solvers in one network.
Per-model stopping rebuilds the partitions without the stopped models, whose
parameters are then left untouched bit for bit; compaction (dropping stopped
models from the network) carries the state of the others along.

The arithmetic is that of ``torch.optim.Adam`` / ``torch.optim.SGD`` (the
latter equals scikit-learn's momentum / Nesterov update for a constant
learning rate).
"""

import torch

from ..._kernels import SOLVERS, n_state_buffers


class FusedOptimizer:
    """Adam and SGD (momentum, Nesterov) with coupled L2 as scikit-learn's
    MLP, over partitions of flat buffers.

    Parameters
    ----------
    params, grads : Tensor of shape (n,)
    n_folds : int
    n_state_buffers : {1, 2, 3}
        State buffers laid out as ``params``: Adam's two moments (SGD's
        momentum buffer is the first) and amsgrad's maximum of the second;
        one where every model is SGD.

    Attributes
    ----------
    state : list of Tensor
    step_counts : Tensor of shape (n_folds,)
        Steps each fold has taken (Adam's bias correction); float32 as
        torch.optim keeps it, read by the kernel: no host sync.
    """

    def __init__(self, params, grads, n_folds, n_state_buffers=2):
        self.params, self.grads = params, grads
        self.state = [torch.zeros_like(params) for _ in range(n_state_buffers)]
        self.partitions = []
        self.step_counts = torch.zeros(n_folds, dtype=torch.float32, device=params.device)
        self._increments = {}

    def rebind(self, params, grads, carry):
        """Follow a compacted network: new flat buffers, and the optimizer
        state carried into their layout by ``carry``."""
        self.params, self.grads = params, grads
        self.state = [carry(state) for state in self.state]
        self.partitions = []

    def set_partitions(self, partitions):
        """``partitions``: list of ``(lr, alpha, fold, settings, step_offset,
        ranges)``, ranges being flat ``(offset, length, is_weight)`` triples,
        settings an :class:`~._spec.OptimizerSettings` and ``step_offset``
        the fold's steps the models did not take (they joined the run later:
        Adam's bias correction counts their own steps)."""
        self.partitions = []
        for lr, alpha, fold, settings, step_offset, ranges in partitions:
            n_buffers = 2 + n_state_buffers([settings])
            buffers = [self.params, self.grads, *self.state][:n_buffers]
            for is_weight in (True, False):
                spans = [(o, n) for o, n, w in ranges if w == is_weight and n > 0]
                if spans:
                    views = [[b[o : o + n] for o, n in spans] for b in buffers]
                    alpha_w = float(alpha) if is_weight else 0.0
                    partition = (
                        float(lr), alpha_w, int(fold), settings, float(step_offset), views
                    )
                    self.partitions.append(partition)

    def _increment(self, stepping):
        """``stepping`` as a device tensor, made once per pattern (all folds
        step, or some sit out an epoch's last steps): no host-to-device copy
        per step."""
        key = stepping.tobytes()
        if key not in self._increments:
            increment = torch.as_tensor(stepping, dtype=torch.float32)
            self._increments[key] = increment.to(self.step_counts.device)
        return self._increments[key]

    @torch.no_grad()
    def step(self, weight_sums, stepping):
        """One update of the partitions of the folds that step."""
        self.step_counts += self._increment(stepping)
        for lr, alpha, fold, settings, step_offset, views in self.partitions:
            if not stepping[fold]:
                continue
            steps = self.step_counts[fold] - step_offset if step_offset else self.step_counts[fold]
            solver = SOLVERS[settings.solver]
            # scikit-learn's L2 gradient: alpha * W / (sum of the batch's
            # weights); AdamW's decoupled decay: W *= 1 - lr * alpha
            decay = alpha if solver.decoupled else alpha / weight_sums[fold] if alpha else 0.0
            if solver.moments:
                p, g, m, v, *v_max = views  # v_max: amsgrad's running maximum
                getattr(torch, solver.torch_update)(
                    p, g, m, v, v_max[0] if v_max else [], [steps] * len(p),
                    lr=lr, beta1=settings.beta_1, beta2=settings.beta_2, weight_decay=decay,
                    eps=settings.epsilon, amsgrad=settings.amsgrad, maximize=False,
                )
            else:
                p, g, buf = views
                # zero-initialised buffers: momentum * 0 + g = g, as torch's
                # first step
                getattr(torch, solver.torch_update)(
                    p, g, buf if settings.momentum else [],
                    weight_decay=decay, momentum=settings.momentum, lr=lr, dampening=0.0,
                    nesterov=settings.nesterovs_momentum and settings.momentum > 0, maximize=False,
                    is_first_step=False,
                )


def make_optimizer(settings, params, grads, n_folds):
    """The fused optimizer of models with these :class:`~._spec.OptimizerSettings`
    (one per slot), with the state buffers they need."""
    return FusedOptimizer(params, grads, n_folds, n_state_buffers(settings))
