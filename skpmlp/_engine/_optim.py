"""Fused optimizers: one update of every model's parameters at once.

Models sharing a learning rate and an L2 penalty form a *partition*: the
flat ranges of their parameters (contiguous, as slots are sorted by those
hyperparameters inside each group). A step calls torch's fused multi-tensor
kernels (``torch._fused_adam_`` / ``torch._fused_sgd_``, one pass over
memory) once per partition for weights (with the L2 term as Adam's / SGD's
coupled weight decay, ``alpha / batch`` as scikit-learn's MLP) and once for
biases: a handful of calls per step whatever the population size.
Per-model stopping rebuilds the partitions without the stopped models, whose
parameters are then left untouched bit for bit; compaction (dropping stopped
models from the network) carries the state of the others along.

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

    def rebind(self, params, grads, carry):
        """Follow a compacted network: new flat buffers, and the optimizer
        state carried into their layout by ``carry``."""
        self.params, self.grads = params, grads
        self.state = [carry(state) for state in self.state]
        self.partitions = []

    def set_partitions(self, partitions):
        """``partitions``: list of ``(lr, alpha, fold, ranges)``, ranges being
        flat ``(offset, length, is_weight)`` triples."""
        self.partitions = []
        buffers = [self.params, self.grads, *self.state]
        for lr, alpha, fold, ranges in partitions:
            for is_weight in (True, False):
                spans = [(o, n) for o, n, w in ranges if w == is_weight and n > 0]
                if spans:
                    views = [[b[o : o + n] for o, n in spans] for b in buffers]
                    alpha_w = float(alpha) if is_weight else 0.0
                    self.partitions.append((float(lr), alpha_w, int(fold), views))

    def _decay(self, alpha, fold, weight_sums):
        # scikit-learn's L2 gradient: alpha * W / (sum of the batch's weights)
        return alpha / weight_sums[fold] if alpha else 0.0


class FusedAdam(_FusedOptimizer):
    """Adam, coupled L2 as scikit-learn's MLP, over partitions of a flat buffer."""

    n_state_buffers = 2

    def __init__(self, params, grads, n_folds, *, beta_1=0.9, beta_2=0.999, epsilon=1e-8):
        super().__init__(params, grads)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        # one step count per fold (a fold may sit out a step); float32 as
        # torch.optim keeps it, read by the kernel: no host sync
        self.step_counts = torch.zeros(n_folds, dtype=torch.float32, device=params.device)
        self._increments = {}

    def _increment(self, stepping):
        """``stepping`` as a device tensor, made once per pattern (all folds
        step, or some sit out an epoch's last steps): no host-to-device copy
        per step."""
        key = stepping.tobytes()
        if key not in self._increments:
            self._increments[key] = torch.as_tensor(stepping, dtype=torch.float32).to(self.step_counts.device)
        return self._increments[key]

    @torch.no_grad()
    def step(self, weight_sums, stepping):
        """One update of the partitions of the folds that step."""
        self.step_counts += self._increment(stepping)
        for lr, alpha, fold, (p, g, m, v) in self.partitions:
            if not stepping[fold]:
                continue
            torch._fused_adam_(
                p, g, m, v, [], [self.step_counts[fold]] * len(p),
                lr=lr, beta1=self.beta_1, beta2=self.beta_2,
                weight_decay=self._decay(alpha, fold, weight_sums),
                eps=self.epsilon, amsgrad=False, maximize=False,
            )


class FusedSGD(_FusedOptimizer):
    """SGD with (Nesterov) momentum, coupled L2, over partitions."""

    n_state_buffers = 1

    def __init__(self, params, grads, n_folds, *, momentum=0.9, nesterov=True):
        super().__init__(params, grads)
        self.momentum, self.nesterov = momentum, nesterov

    @torch.no_grad()
    def step(self, weight_sums, stepping):
        """One update of the partitions of the folds that step."""
        for lr, alpha, fold, (p, g, buf) in self.partitions:
            if not stepping[fold]:
                continue
            # zero-initialised buffers: momentum * 0 + g = g, as torch's
            # first step
            torch._fused_sgd_(
                p, g, buf if self.momentum else [],
                weight_decay=self._decay(alpha, fold, weight_sums),
                momentum=self.momentum, lr=lr, dampening=0.0,
                nesterov=self.nesterov and self.momentum > 0, maximize=False,
                is_first_step=False,
            )


def make_optimizer(config, params, grads, n_folds):
    """Build the fused optimizer named by ``config.solver``."""
    if config.solver == "adam":
        return FusedAdam(
            params, grads, n_folds, beta_1=config.beta_1, beta_2=config.beta_2,
            epsilon=config.epsilon,
        )
    return FusedSGD(params, grads, n_folds, momentum=config.momentum, nesterov=config.nesterovs_momentum)
