"""Fused optimizers: one update of every model's parameters at once.

Models sharing a learning rate and an L2 penalty form a *partition*: the
flat ranges of their parameters (contiguous, as slots are sorted by those
hyperparameters inside each group). A step calls torch's fused multi-tensor
kernels (``torch._fused_adam_`` / ``torch._fused_sgd_``, one pass over
memory) once per partition for weights (with the L2 term as Adam's / SGD's
coupled weight decay, ``alpha / batch`` as scikit-learn's MLP) and once for
biases: a handful of calls per step whatever the population size.
Per-model stopping rebuilds the partitions without the stopped models, whose
parameters are then left untouched bit for bit.

The arithmetic is that of ``torch.optim.Adam`` / ``torch.optim.SGD`` (the
latter equals scikit-learn's momentum / Nesterov update for a constant
learning rate).
"""

import torch


class _FusedOptimizer:
    """Views of the flat buffers for every partition.

    Parameters
    ----------
    params, grads : Tensor of shape (n,)
    """

    n_state_buffers = 0

    def __init__(self, params, grads):
        self.params, self.grads = params, grads
        self.state = [torch.zeros_like(params) for _ in range(self.n_state_buffers)]
        self.partitions = []

    def set_partitions(self, partitions):
        """``partitions``: list of ``(lr, alpha, ranges)``, ranges being flat
        ``(offset, length, is_weight)`` triples."""
        self.partitions = []
        buffers = [self.params, self.grads, *self.state]
        for lr, alpha, ranges in partitions:
            for is_weight in (True, False):
                spans = [(o, n) for o, n, w in ranges if w == is_weight and n > 0]
                if spans:
                    views = [[b[o : o + n] for o, n in spans] for b in buffers]
                    self.partitions.append((float(lr), float(alpha) if is_weight else 0.0, views))


class FusedAdam(_FusedOptimizer):
    """Adam, coupled L2 as scikit-learn's MLP, over partitions of a flat buffer."""

    n_state_buffers = 2

    def __init__(self, params, grads, *, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
        super().__init__(params, grads)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        # float32 as torch.optim keeps it; read by the kernel, no host sync
        self.step_count = torch.zeros((), dtype=torch.float32, device=params.device)

    @torch.no_grad()
    def step(self, n_batch):
        self.step_count += 1
        for lr, alpha, (p, g, m, v) in self.partitions:
            torch._fused_adam_(
                p, g, m, v, [], [self.step_count] * len(p),
                lr=lr, beta1=self.beta_1, beta2=self.beta_2, weight_decay=alpha / n_batch,
                eps=self.epsilon, amsgrad=False, maximize=False,
            )


class FusedSGD(_FusedOptimizer):
    """SGD with (Nesterov) momentum, coupled L2, over partitions."""

    n_state_buffers = 1

    def __init__(self, params, grads, *, momentum=0.9, nesterov=True):
        super().__init__(params, grads)
        self.momentum, self.nesterov = momentum, nesterov

    @torch.no_grad()
    def step(self, n_batch):
        for lr, alpha, (p, g, buf) in self.partitions:
            # zero-initialised buffers: momentum * 0 + g = g, as torch's
            # first step
            torch._fused_sgd_(
                p, g, buf if self.momentum else [], weight_decay=alpha / n_batch,
                momentum=self.momentum, lr=lr, dampening=0.0,
                nesterov=self.nesterov and self.momentum > 0, maximize=False,
                is_first_step=False,
            )


def make_optimizer(config, params, grads):
    """Build the fused optimizer named by ``config.solver``."""
    if config.solver == "adam":
        return FusedAdam(params, grads, beta_1=config.beta_1, beta_2=config.beta_2, epsilon=config.epsilon)
    return FusedSGD(params, grads, momentum=config.momentum, nesterov=config.nesterovs_momentum)
