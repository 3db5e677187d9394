"""The three ways of training many MLPs that skpmlp is measured against.

* :class:`M3Population`: the paper's Modified Matrix Multiplication, exactly
  as described in seeds/000 section 3: one GEMM to all hidden units,
  activations per contiguous slice, then a broadcast multiply building the
  ``(batch, n_outputs, total_hidden)`` tensor and a scatter-add into
  ``(batch, n_outputs, n_models)``; ``torch.optim.Adam``.
* :class:`PaddedPopulation`: every model padded to the widest, stacked
  weights, one GEMM plus one batched matmul, padded units masked;
  ``torch.optim.Adam``.
* :class:`SequentialModel`: one plain ``torch.nn.Sequential`` with
  ``torch.optim.Adam``, trained on its own.

All take depth-1 populations (the paper's grid) and expose ``step(xb, yb)``.
"""

import numpy as np
import torch
import torch.nn.functional as F

from skpmlp._engine import ACTIVATIONS, TORCH_MODULES


def _sorted_by_activation(widths, activations):
    order = np.argsort([list(ACTIVATIONS).index(a) for a in activations], kind="stable")
    return [widths[i] for i in order], [activations[i] for i in order]


def _runs(values):
    """(value, count) runs of equal consecutive values."""
    runs = []
    for v in values:
        if runs and runs[-1][0] == v:
            runs[-1][1] += 1
        else:
            runs.append([v, 1])
    return runs


def _uniform(shape, bound, device):
    return (torch.rand(shape, device=device) * 2 - 1) * bound


class M3Population:
    """The paper's M3 (broadcast multiply + scatter-add)."""

    def __init__(self, widths, activations, n_features, n_outputs, *, lr=1e-3, device="cpu"):
        widths, activations = _sorted_by_activation(widths, activations)
        n_models, total = len(widths), int(sum(widths))
        unit_model = np.repeat(np.arange(n_models), widths)
        unit_act = np.repeat(activations, widths)
        self.act_runs = [(a, n) for a, n in _runs(list(unit_act))]
        bound = np.sqrt(6 / (n_features + np.mean(widths)))
        self.W1 = _uniform((total, n_features), bound, device).requires_grad_()
        self.b1 = _uniform((total,), bound, device).requires_grad_()
        self.W2 = _uniform((n_outputs, total), bound, device).requires_grad_()
        self.b2 = _uniform((n_models, n_outputs), bound, device).requires_grad_()
        self.index = torch.as_tensor(unit_model, device=device)
        self.n_models, self.n_outputs = n_models, n_outputs
        self.optimizer = torch.optim.Adam([self.W1, self.b1, self.W2, self.b2], lr=lr)

    def forward(self, X):
        H = X @ self.W1.T + self.b1  # (B, hid)
        parts = torch.split(H, [n for _, n in self.act_runs], dim=1)
        H = torch.cat([ACTIVATIONS[a](p) for (a, _), p in zip(self.act_runs, parts)], 1)
        S = H[:, None, :] * self.W2[None, :, :]  # (B, out, hid)
        B = X.shape[0]
        index = self.index.expand(B, self.n_outputs, -1)
        Y = torch.zeros(B, self.n_outputs, self.n_models, device=X.device, dtype=X.dtype)
        Y = Y.scatter_add(2, index, S)  # (B, out, models)
        return Y.permute(0, 2, 1) + self.b2  # (B, models, out)

    def step(self, xb, yb):
        logits = self.forward(xb)
        B = xb.shape[0]
        loss = F.cross_entropy(
            logits.reshape(B * self.n_models, -1), yb.repeat_interleave(self.n_models),
            reduction="sum",
        ) / B  # = sum over models of each model's batch mean
        self.optimizer.zero_grad(set_to_none=False)
        loss.backward()
        self.optimizer.step()


class PaddedPopulation:
    """Every model padded to the widest; stacked weights; masked units."""

    def __init__(self, widths, activations, n_features, n_outputs, *, lr=1e-3, device="cpu"):
        widths, activations = _sorted_by_activation(widths, activations)
        M, P = len(widths), int(max(widths))
        bound = np.sqrt(6 / (n_features + np.mean(widths)))
        mask = torch.as_tensor(np.arange(P)[None, :] < np.array(widths)[:, None], device=device)
        self.mask = mask.float()
        self.W1 = (_uniform((n_features, M, P), bound, device) * self.mask).requires_grad_()
        self.b1 = (_uniform((M, P), bound, device) * self.mask).requires_grad_()
        self.W2 = (_uniform((M, P, n_outputs), bound, device) * self.mask[..., None]).requires_grad_()
        self.b2 = _uniform((M, 1, n_outputs), bound, device).requires_grad_()
        self.act_runs = _runs(activations)
        self.M, self.P, self.F = M, P, n_features
        self.optimizer = torch.optim.Adam([self.W1, self.b1, self.W2, self.b2], lr=lr)

    def forward(self, X):
        B = X.shape[0]
        Z = (X @ self.W1.view(self.F, -1)).view(B, self.M, self.P).transpose(0, 1) + self.b1[:, None, :]
        parts = torch.split(Z, [n for _, n in self.act_runs], dim=0)
        H = torch.cat([ACTIVATIONS[a](p) for (a, _), p in zip(self.act_runs, parts)], 0)
        H = H * self.mask[:, None, :]
        return torch.baddbmm(self.b2, H, self.W2)  # (M, B, out)

    def step(self, xb, yb):
        logits = self.forward(xb)
        M, B, C = logits.shape
        loss = F.cross_entropy(logits.reshape(M * B, C), yb.repeat(M), reduction="sum") / B
        self.optimizer.zero_grad(set_to_none=False)
        loss.backward()
        self.optimizer.step()


class SequentialModel:
    """One plain torch MLP with its own Adam."""

    def __init__(self, width, activation, n_features, n_outputs, *, lr=1e-3, device="cpu"):
        self.net = torch.nn.Sequential(
            torch.nn.Linear(n_features, width),
            TORCH_MODULES[activation](),
            torch.nn.Linear(width, n_outputs),
        ).to(device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=lr)

    def step(self, xb, yb):
        loss = F.cross_entropy(self.net(xb), yb)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
