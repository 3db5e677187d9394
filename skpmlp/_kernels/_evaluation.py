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

from ._checks import check_fold_rows
from ._step import FORWARD_BLOCK, lanes
from ._tables import SCORE_CODES


@dataclass
class EvalBlocks:
    """Evaluation rows in fold blocks, as the kernel reads them.

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
    widest = max(1, int(rows.max(initial=0)))
    n_blocks = -(-widest // FORWARD_BLOCK)
    step = lanes(X_eval.dtype)
    block = -(-(-(-widest // n_blocks)) // step) * step
    n_pad = n_blocks * block
    K = len(rows)
    X = X_eval.new_zeros((K, n_pad, n_features))
    for k in range(K):  # once a run, a few folds
        X[k, : rows[k]] = X_eval[first[k] : first[k] + rows[k]]
    X = X.view(K, n_blocks, block, n_features).transpose(2, 3).contiguous()
    blocks = EvalBlocks(X, n_blocks, block, first, rows, n_eval, score)
    if score is None:
        return blocks
    y = y_eval.to(X_eval.dtype).reshape(n_eval, -1)
    blocks.y = X_eval.new_zeros((K, n_pad, y.shape[1]))
    blocks.weights = X_eval.new_zeros((K, n_pad))
    for k in range(K):
        own = slice(first[k], first[k] + rows[k])
        blocks.y[k, : rows[k]] = y[own]
        blocks.weights[k, : rows[k]] = eval_weights[k, own]
    if score == "r2":  # as _losses.r2 forms it from the targets and weights
        w = blocks.weights.unsqueeze(2)
        mean = (w * blocks.y).sum(1, keepdim=True) / w.sum(1, keepdim=True)
        blocks.total = (w * (blocks.y - mean).square()).sum(1).contiguous()
    return blocks
