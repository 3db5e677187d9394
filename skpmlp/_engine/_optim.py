"""Fused optimizers: one update of every model's parameters at once.

They work on the flat parameter and gradient buffers of a
:class:`~._network.FusedNetwork` with a per-element learning-rate tensor, so
each model keeps its own learning rate in a fixed number of elementwise
kernels, whatever the population size. The arithmetic follows
``torch.optim.Adam`` and ``torch.optim.SGD`` (which equals scikit-learn's
momentum / Nesterov update for a constant learning rate). A model whose
learning rate is set to zero is frozen: its parameters stay bit-for-bit
unchanged.
"""

import math

import torch


class FusedAdam:
    """Adam over a flat buffer with per-element learning rates.

    Parameters
    ----------
    params, grads : Tensor of shape (n,)
    lr : Tensor of shape (n,)
    beta_1, beta_2, epsilon : float
    """

    def __init__(self, params, grads, lr, *, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
        self.params, self.grads, self.lr = params, grads, lr
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exp_avg = torch.zeros_like(params)
        self.exp_avg_sq = torch.zeros_like(params)
        self._work = torch.empty_like(params)
        self.t = 0  # a host counter: bias corrections need no device sync

    @torch.no_grad()
    def step(self):
        self.t += 1
        g, work = self.grads, self._work
        self.exp_avg.lerp_(g, 1 - self.beta_1)
        self.exp_avg_sq.mul_(self.beta_2).addcmul_(g, g, value=1 - self.beta_2)
        bias_correction_1 = 1 - self.beta_1**self.t
        bias_correction_2 = 1 - self.beta_2**self.t
        torch.sqrt(self.exp_avg_sq, out=work)
        work.div_(math.sqrt(bias_correction_2)).add_(self.epsilon)
        torch.div(self.exp_avg, work, out=work)
        work.mul_(self.lr)
        self.params.add_(work, alpha=-1.0 / bias_correction_1)


class FusedSGD:
    """SGD with (Nesterov) momentum over a flat buffer, per-element rates.

    Parameters
    ----------
    params, grads : Tensor of shape (n,)
    lr : Tensor of shape (n,)
    momentum : float
    nesterov : bool
    """

    def __init__(self, params, grads, lr, *, momentum=0.9, nesterov=True):
        self.params, self.grads, self.lr = params, grads, lr
        self.momentum, self.nesterov = momentum, nesterov
        self.buf = torch.zeros_like(params)
        self._work = torch.empty_like(params)

    @torch.no_grad()
    def step(self):
        g, work = self.grads, self._work
        if self.momentum == 0:
            work.copy_(g)
        else:
            # buf starts at zero, so the first step sets buf = g as torch does
            self.buf.mul_(self.momentum).add_(g)
            if self.nesterov:
                torch.add(g, self.buf, alpha=self.momentum, out=work)
            else:
                work.copy_(self.buf)
        work.mul_(self.lr)
        self.params.sub_(work)


def make_optimizer(config, params, grads, lr):
    """Build the fused optimizer named by ``config.solver``."""
    if config.solver == "adam":
        return FusedAdam(
            params, grads, lr, beta_1=config.beta_1, beta_2=config.beta_2, epsilon=config.epsilon
        )
    return FusedSGD(
        params, grads, lr, momentum=config.momentum, nesterov=config.nesterovs_momentum
    )
