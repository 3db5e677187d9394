"""From numpy to the device: a run's data and the fused network of a population.

What a training run and a fused prediction need before they start: the
features and targets as tensors, the minibatch planner and evaluation rows
of a run (:func:`run_data`), and a :class:`FusedNetwork` built from a
:class:`PopulationSpec` (its groups planned, its weights drawn or given).
"""

from dataclasses import dataclass

import numpy as np
import torch

from ._init import population_initial_weights
from ._layout import plan_groups
from ._minibatch._batches import BatchPlanner
from ._network import FusedNetwork

#: torch dtypes by the names a :class:`TrainConfig` gives.
DTYPES = {"float32": torch.float32, "float64": torch.float64}

# Above this many hidden-activation elements per step, a group is split by
# activation (measured on the paper grid, CPU: the cat of activation slices
# then costs more than the extra launches).
_SPLIT_ELEMENTS = 2**20


def as_tensor(array, *, dtype, device):
    """Copy a numpy array to a torch tensor on ``device`` (never aliased)."""
    return torch.tensor(np.asarray(array), dtype=dtype, device=device)


def targets_tensor(y, task, *, dtype, device):
    """Class indices (int64) or 2-D float targets (regression, multilabel
    indicators) on ``device``."""
    if task == "classification":
        return as_tensor(y, dtype=torch.int64, device=device)
    y = np.asarray(y)
    return as_tensor(y.reshape(len(y), -1), dtype=dtype, device=device)


def build_network(spec, config, n_features, coefs=None, intercepts=None, *, folds=None):
    """Plan the groups of ``spec`` and build its fused network.

    Initial weights are drawn from each model's own seed unless ``coefs`` and
    ``intercepts`` are given. ``folds`` (one fold index per model) keeps
    replicas of one fold next to each other inside a group.
    """
    if coefs is None:
        coefs, intercepts = population_initial_weights(spec, n_features, config.n_outputs)
    # slots of equal (learning rate, alpha, fold, optimizer) side by side:
    # one optimizer partition per run
    folds = np.zeros(spec.n_models, dtype=int) if folds is None else np.asarray(folds)
    optimizers = spec.optimizers_of(config)
    keys = list(zip(
        folds, np.asarray(spec.learning_rates, float), np.asarray(spec.alphas, float),
        optimizers,
    ))
    codes = {key: code for code, key in enumerate(sorted(set(keys)))}
    groups = plan_groups(
        spec.hidden_layer_sizes,
        spec.activations,
        config.max_padding,
        split_elements=_SPLIT_ELEMENTS // config.batch_size,
        sort_codes=[codes[key] for key in keys],
        scaled=[o.diagonal_scaling for o in optimizers],
    )
    return FusedNetwork.from_weights(
        groups,
        coefs,
        intercepts,
        n_features,
        config.n_outputs,
        dtype=DTYPES[config.dtype],
        device=torch.device(config.device),
    )


@dataclass
class RunData:
    """The data of a fused run, on its device.

    Attributes
    ----------
    X : Tensor of shape (n_samples, n_features)
    y : Tensor of shape (n_samples,) or (n_samples, n_targets)
    planner : BatchPlanner
        Every fold's minibatches, epoch after epoch.
    fold_sizes : list of int
        Training rows per fold.
    fold_batches : list of int
        Batches per fold and epoch.
    X_eval, y_eval : Tensor or None
        Every fold's evaluation rows, fold after fold (None without
        monitoring; a row of several folds' appears in each).
    eval_weights : Tensor of shape (n_folds, n_eval) or None
        Each fold's sample weights on those rows, zero outside its own.
    eval_first, eval_rows : ndarray of int64 of shape (n_folds,) or None
        Fold k's evaluation rows are ``X_eval[eval_first[k]:][:eval_rows[k]]``
        (the native kernel evaluates each model on its own fold's only).
    """

    X: torch.Tensor
    y: torch.Tensor
    planner: BatchPlanner
    fold_sizes: list
    fold_batches: list
    X_eval: torch.Tensor = None
    y_eval: torch.Tensor = None
    eval_weights: torch.Tensor = None
    eval_rows: np.ndarray = None

    @property
    def eval_first(self):
        """Where each fold's evaluation rows start in ``X_eval`` (None
        without monitoring)."""
        if self.eval_rows is None:
            return None
        return np.concatenate([[0], np.cumsum(self.eval_rows)[:-1]]).astype(np.int64)


def run_data(config, X, y, folds, sample_weight, monitor, *, dtype, device):
    """Copy a run's data to its device and plan its batches.

    Parameters
    ----------
    config : TrainConfig
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or (n_samples, n_targets)
    folds : list of (train_rows, eval_rows)
    sample_weight : ndarray of shape (n_samples,) or None
    monitor : bool
        Also set up the evaluation rows and weights.
    dtype, device : where the tensors live.

    Returns
    -------
    RunData
    """
    X_t = as_tensor(X, dtype=dtype, device=device)
    y_t = targets_tensor(y, config.task, dtype=dtype, device=device)
    fold_sizes = [len(train) for train, _ in folds]
    batch_size = min(config.batch_size, max(fold_sizes))
    planner = BatchPlanner(
        [train for train, _ in folds], batch_size, config.shuffle_seed, sample_weight,
        dtype=dtype, device=device, shuffle=config.shuffle,
    )
    data = RunData(X_t, y_t, planner, fold_sizes, [-(-n // batch_size) for n in fold_sizes])
    if monitor:
        # every fold's evaluation rows in a block of their own, weighted by
        # that fold only (K-fold's are disjoint: no row twice)
        blocks = [np.asarray(rows, dtype=np.int64) for _, rows in folds]
        data.eval_rows = np.array([len(rows) for rows in blocks], dtype=np.int64)
        eval_rows = np.concatenate(blocks)
        eval_weights = np.zeros((len(folds), len(eval_rows)))
        sw = np.ones(X.shape[0]) if sample_weight is None else sample_weight
        for k, (first, rows) in enumerate(zip(data.eval_first, blocks)):
            eval_weights[k, first : first + len(rows)] = sw[rows]
        eval_index = as_tensor(eval_rows, dtype=torch.int64, device=device)
        data.X_eval, data.y_eval = X_t[eval_index], y_t[eval_index]
        data.eval_weights = as_tensor(eval_weights, dtype=dtype, device=device)
    return data
