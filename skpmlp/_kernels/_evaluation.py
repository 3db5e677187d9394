"""A monitored run's evaluation rows in the kernel's layout, one block per fold.

After each epoch of a call (``run_models(..., epochs=...)``) every model
evaluates the evaluation rows of its own fold only: at ``cv=5`` a fifth of
the rows that the union of the folds' rows would cost. It then either gives
its outputs for the host to score, or scores them itself (``score``): the
engine's monitored score of the outputs (``_engine._losses.MONITOR_SCORES``)
in the same arithmetic, so that the host needs no pass over the outputs.
"""

from dataclasses import dataclass

import numpy as np
import torch

from ._checks import check_fold_rows, check_tensors
from ._step import _ptr, block_layout, lanes
from ._tables import META_FIELDS, SCORE_CODES


@dataclass
class EvalBlocks:
    """Evaluation rows in fold blocks, as the kernel reads them
    (:func:`eval_blocks` lays them out).

    Attributes
    ----------
    X : Tensor of shape (K, n_blocks, n_features, block)
        Fold k's rows, samples along the lanes, zero past its rows.
    n_blocks, block : int
    first, rows : ndarray of int64 of shape (K,)
        Fold k's rows are rows ``[first[k], first[k] + rows[k])`` of the
        evaluation rows (and of the outputs the kernel writes).
    n_eval : int
        The evaluation rows of all folds.
    score : str or None
        A key of :data:`SCORE_CODES`: what the kernel computes of them.
    y : Tensor of shape (K, n_blocks * block, 1 or n_outputs) or None
        Each fold's targets (class indices for ``"accuracy"``).
    weights : Tensor of shape (K, n_blocks * block) or None
        Each fold's row weights (zero past its rows).
    total : Tensor of shape (K, n_outputs) or None
        ``"r2"``: each fold's weighted total sum of squares of every output.
    """

    X: torch.Tensor
    n_blocks: int
    block: int
    first: np.ndarray
    rows: np.ndarray
    n_eval: int
    score: str = None
    y: torch.Tensor = None
    weights: torch.Tensor = None
    total: torch.Tensor = None

    def __post_init__(self):
        # the kernel reads them in place: int64, contiguous, owned here
        self.first = np.ascontiguousarray(self.first, dtype=np.int64)
        self.rows = np.ascontiguousarray(self.rows, dtype=np.int64)

    def kernel_fields(self, meta, K, F, n_outputs, dtype):
        """``struct Epochs``' evaluation fields, checked against a call of
        ``meta`` models, K folds, F features, ``n_outputs`` and ``dtype``;
        the outputs or scores the call writes are the caller's."""
        n_pad = self.n_blocks * self.block
        if tuple(self.X.shape) != (K, self.n_blocks, F, self.block):
            raise ValueError(f"the evaluation blocks must be {(K, self.n_blocks, F, self.block)}, "
                             f"not {tuple(self.X.shape)}")
        if self.block % lanes(dtype) or self.score not in SCORE_CODES:
            raise ValueError("the evaluation blocks are not in the kernel's layout")
        if self.first.shape != (K,):
            raise ValueError(f"the evaluation blocks must describe {K} folds")
        check_fold_rows(self.first, self.rows, self.n_eval, n_pad)
        folds = meta[:, META_FIELDS["fold"]]
        if len(folds) and (folds.min() < 0 or folds.max() >= K):
            raise ValueError("a model's fold has no evaluation rows")
        tensors = {"X": self.X}
        if self.score is not None:
            width = 1 if self.score == "accuracy" else n_outputs
            shapes = {"y": (K, n_pad, width), "weights": (K, n_pad)}
            if self.score == "r2":
                shapes["total"] = (K, n_outputs)
            for name, shape in shapes.items():
                value = getattr(self, name)
                if value is None or tuple(value.shape) != shape:
                    raise ValueError(f"the evaluation {name} must have shape {shape}")
                tensors[name] = value
        check_tensors(tensors, dtype)
        return {
            "eval_X": _ptr(self.X), "eval_blocks": self.n_blocks, "eval_block": self.block,
            "eval_rows": self.n_eval, "eval_fold_first": self.first.ctypes.data,
            "eval_fold_rows": self.rows.ctypes.data, "score": SCORE_CODES[self.score],
            "eval_y": _ptr(self.y), "eval_w": _ptr(self.weights), "eval_total": _ptr(self.total),
        }


def eval_blocks(X_eval, first, rows, *, score=None, y_eval=None, eval_weights=None):
    """Lay out ``X_eval`` in fold blocks for the kernel.

    Parameters
    ----------
    X_eval : Tensor of shape (n_eval, n_features)
        Every fold's evaluation rows, fold after fold.
    first, rows : array-like of int of shape (K,)
        Where each fold's rows start in ``X_eval`` and how many there are.
    score : str, optional
        A key of :data:`SCORE_CODES`; with it, ``y_eval`` and ``eval_weights``.
    y_eval : Tensor of shape (n_eval,) or (n_eval, n_outputs), optional
        The targets of ``X_eval`` (class indices for ``"accuracy"``).
    eval_weights : Tensor of shape (K, n_eval), optional
        Each fold's weights of the rows (zero outside its own).

    Returns
    -------
    EvalBlocks
    """
    if score not in SCORE_CODES:
        raise ValueError(f"score must be one of {sorted(map(str, SCORE_CODES))}, not {score!r}")
    first, rows = np.asarray(first, dtype=np.int64), np.asarray(rows, dtype=np.int64)
    n_eval, n_features = X_eval.shape
    check_fold_rows(first, rows, n_eval)
    K = len(rows)
    n_blocks, block = block_layout(int(rows.max(initial=0)), X_eval.dtype)
    # fold k's block: its own rows, then zero padding (gathered from row 0)
    position = np.arange(n_blocks * block)
    own = torch.as_tensor(position < rows[:, None])
    index = torch.as_tensor(np.where(position < rows[:, None], first[:, None] + position, 0))

    def gathered(values):  # (n_eval, ...) -> (K, n_pad, ...), zero past each fold's rows
        mask = own.view(*own.shape, *[1] * (values.dim() - 1))
        return torch.where(mask, values[index], torch.zeros((), dtype=values.dtype))

    X = gathered(X_eval).view(K, n_blocks, block, n_features).transpose(2, 3).contiguous()
    blocks = EvalBlocks(X, n_blocks, block, first, rows, n_eval, score)
    if score is not None:
        blocks.y = gathered(y_eval.to(X_eval.dtype).reshape(n_eval, -1))
        blocks.weights = torch.where(own, eval_weights.gather(1, index), 0).to(X_eval.dtype)
    if score == "r2":  # as _losses.r2 forms it from the targets and weights
        w = blocks.weights.unsqueeze(2)
        mean = (w * blocks.y).sum(1, keepdim=True) / w.sum(1, keepdim=True)
        blocks.total = (w * (blocks.y - mean).square()).sum(1).contiguous()
    return blocks
