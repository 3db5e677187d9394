"""Minibatch plans: which rows every fold trains on at every step.

Each fold draws its own permutation of its own training rows from a
generator seeded by the shuffle seed alone, so a fold's batches depend only
on the seed and its rows: never on its position among the folds, nor on the
other folds. All folds step together; a fold's short last batch is padded to
the batch size with zero-weight rows (so every step has one shape), and a
fold with fewer batches sits out the last steps of an epoch.
"""

from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class EpochPlan:
    """Batches of one epoch for K folds.

    Attributes
    ----------
    rows : Tensor of int64, shape (n_steps, K, batch)
        Row indices into the training data (padding rows point at row 0).
    weights : Tensor, shape (n_steps, K, batch)
        Each row's weight in its batch's loss, normalised to sum to 1 per
        (step, fold); zero for padding.
    counts : Tensor, shape (n_steps, K)
        Real rows per batch (to accumulate epoch losses as sklearn does).
    weight_sums : ndarray, shape (n_steps, K)
        Sum of sample weights per batch (divides the L2 term), on the host.
    stepping : ndarray of bool, shape (n_steps, K)
        Whether each fold has a batch at each step, on the host.
    epoch : int
        The run's epoch it trains (0-based; dropout masks hash it).
    row_start : int
        Position of its first batch column in the whole batch (a
        data-parallel rank's share starts past 0; dropout masks hash the
        position).
    fold_sizes, fold_batches : ndarray of shape (K,)
        Every fold's training rows and batches an epoch (what the epoch's
        loss divides by).
    """

    rows: torch.Tensor
    weights: torch.Tensor
    counts: torch.Tensor
    weight_sums: np.ndarray
    stepping: np.ndarray
    epoch: int = 0
    row_start: int = 0
    fold_sizes: np.ndarray = None
    fold_batches: np.ndarray = None

    @property
    def n_steps(self):
        return self.stepping.shape[0]


class BatchPlanner:
    """Draws :class:`EpochPlan` s epoch after epoch.

    Parameters
    ----------
    fold_rows : list of ndarray of int
        Training rows of every fold.
    batch_size : int
    seed : int
    sample_weight : ndarray of shape (n_samples,) or None
    dtype, device : where the plans live.
    shuffle : bool, default=True
        Draw a new permutation every epoch; False keeps each fold's rows in
        the order given (scikit-learn's ``shuffle=False``).
    """

    def __init__(self, fold_rows, batch_size, seed, sample_weight, *, dtype, device, shuffle=True):
        self.fold_rows = [np.asarray(r, dtype=np.int64) for r in fold_rows]
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.generators = [torch.Generator().manual_seed(int(seed)) for _ in fold_rows]
        self.sample_weight = sample_weight
        self.dtype, self.device = dtype, device

    def next_epoch(self, epoch=0):
        """The plan of the next epoch, the run's ``epoch`` (0-based)."""
        K, B = len(self.fold_rows), self.batch_size
        orders = self.fold_rows
        if self.shuffle:
            orders = [
                rows[torch.randperm(len(rows), generator=g).numpy()]
                for rows, g in zip(self.fold_rows, self.generators)
            ]
        n_steps = max(-(-len(o) // B) for o in orders)
        rows = np.zeros((n_steps, K, B), dtype=np.int64)
        real = np.zeros((n_steps, K, B), dtype=bool)
        for k, order in enumerate(orders):
            padded = np.zeros(n_steps * B, dtype=np.int64)
            padded[: len(order)] = order
            rows[:, k] = padded.reshape(n_steps, B)
            real[:, k] = (np.arange(n_steps * B) < len(order)).reshape(n_steps, B)
        sw = 1.0 if self.sample_weight is None else self.sample_weight[rows]
        weights = np.where(real, sw, 0.0)
        weight_sums = weights.sum(2)
        normalised = weights / np.where(weight_sums > 0, weight_sums, 1.0)[..., None]
        to = lambda a, dt: torch.from_numpy(a).to(device=self.device, dtype=dt)  # noqa: E731
        return EpochPlan(
            rows=to(rows, torch.int64),
            weights=to(normalised, self.dtype),
            counts=to(real.sum(2).astype(np.float64), self.dtype),
            weight_sums=weight_sums,
            # a batch whose weights are all zero teaches nothing: skip it
            stepping=weight_sums > 0,
            epoch=int(epoch),
            fold_sizes=np.array([len(r) for r in self.fold_rows], dtype=np.float64),
            fold_batches=np.array([-(-len(r) // B) for r in self.fold_rows], dtype=np.float64),
        )
