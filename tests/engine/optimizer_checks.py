"""Checks and plain torch references every per-model optimizer's tests share
(``test_amsgrad.py``, ``test_adamw.py``, ``test_label_smoothing.py``,
``test_schedules.py``, ``test_diagonal_scaling.py``, ``test_dropout.py``)."""

import numpy as np
import torch

from skpmlp._engine import train_population


def assert_kernel_equals_torch(spec, config, X, y):
    """The native kernel trains ``spec`` as the torch path does, on two
    overlapping folds: every weight to 1e-12, the loss curves to 1e-12
    (``config(backend)`` gives each path's ``TrainConfig``)."""
    folds = [(np.arange(60), np.arange(60, 90)), (np.arange(30, 90), np.arange(30))]
    reference = train_population(spec, config("torch"), X, y, folds)
    native = train_population(spec, config("native"), X, y, folds)
    for k in range(2):
        for ours, theirs in zip(native.coefs[k], reference.coefs[k]):
            for a, b in zip(ours, theirs):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(native.loss_curves, reference.loss_curves, rtol=1e-12)


def torch_optimizer(parameters, lr, settings):
    """The ``torch.optim`` optimizer of one model's ``settings``
    (:class:`~skpmlp._engine.OptimizerSettings`): Adam with its betas and
    epsilon, else SGD with its (Nesterov) momentum."""
    if settings.solver == "adam":
        return torch.optim.Adam(parameters, lr=lr, betas=(settings.beta_1, settings.beta_2),
                                eps=settings.epsilon)
    return torch.optim.SGD(parameters, lr=lr, momentum=settings.momentum,
                           nesterov=settings.nesterovs_momentum)


def sequential(coefs, intercepts, activation):
    """A float64 ``nn.Sequential`` with these weights (``coefs[k]`` of shape
    (n_in, n_out), as the engine's) and ``activation()`` between layers."""
    layers = []
    for k, (W, b) in enumerate(zip(coefs, intercepts)):
        linear = torch.nn.Linear(*W.shape).double()
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(W.T))
            linear.bias.copy_(torch.from_numpy(b))
        layers += [linear] + ([activation()] if k < len(coefs) - 1 else [])
    return torch.nn.Sequential(*layers)


def train_minibatches(net, optimizer, X, y, cfg, loss, rates=None):
    """Train ``net`` as the engine batches a fold: each epoch a permutation
    of the rows from ``cfg.shuffle_seed``'s generator, minibatches of
    ``cfg.batch_size``, ``loss(outputs, targets)`` per batch; ``cfg.max_iter``
    epochs, or one per entry of ``rates`` at that learning rate. Returns the
    outputs on ``X`` and the last epoch's mean loss."""
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    generator = torch.Generator().manual_seed(cfg.shuffle_seed)
    total = 0.0
    for epoch in range(cfg.max_iter if rates is None else len(rates)):
        if rates is not None:
            for group in optimizer.param_groups:
                group["lr"] = rates[epoch]
        order, total = torch.randperm(len(X), generator=generator), 0.0
        for begin in range(0, len(X), cfg.batch_size):
            rows = order[begin : begin + cfg.batch_size]
            batch_loss = loss(net(X_t[rows]), y_t[rows])
            optimizer.zero_grad()
            batch_loss.backward()
            optimizer.step()
            total += batch_loss.item() * len(rows)
    with torch.no_grad():
        return net(X_t).numpy(), total / len(X)
