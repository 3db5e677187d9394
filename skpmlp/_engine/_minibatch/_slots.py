"""One model's tensors in a slot of a fused network: read a copy, write one in.

A group's layer views (:meth:`~._network.FusedNetwork.layer_views`) hold
every slot's padded weights and biases, interleaved ``W0, b0, W1, b1, ...``;
these helpers move one model's unpadded tensors in and out of a slot, for
the parameters and for any buffer laid out as them (optimizer state, best
weights). Refills (:mod:`skpmlp._engine._minibatch._refill`) use them through
:meth:`~skpmlp._engine._backends._torch.PopulationTrainer.replace_slots`.
"""

import dataclasses

import numpy as np

from .._spec import OptimizerSettings


@dataclasses.dataclass(frozen=True)
class Newcomer:
    """A model that takes over slots of a running network (one per fold).

    Parameters
    ----------
    slots : ndarray of int
        The slot it takes on every fold, fold-major.
    replicas : ndarray of int
        Its replica number on every fold.
    arch : tuple of int
        Its hidden widths (within the slots' group's padded ones).
    learning_rate, alpha : float
    optimizer : OptimizerSettings
    weights : list of Tensor or None
        Fresh initial weights, interleaved ``W0, b0, W1, b1, ...``; None
        copies ``parents``' weights and optimizer state.
    parents : ndarray of int or None
        With ``weights=None``: the replica it copies on every fold.
    seed : tuple of int
        Its init seed (:attr:`~skpmlp._engine.PopulationSpec.init_seeds`),
        which its dropout masks hash.
    """

    slots: np.ndarray
    replicas: np.ndarray
    arch: tuple
    learning_rate: float
    alpha: float
    optimizer: OptimizerSettings
    weights: list = None
    parents: np.ndarray = None
    seed: tuple = ()


def read_slot(views, pos, arch):
    """Slot ``pos``'s unpadded layer tensors (weights then biases per layer,
    interleaved as the views; then a scaled group's scale) of one group's
    ``views``, copied."""
    out = []
    for layer in range(len(views) // 2):
        W, b = views[2 * layer][pos], views[2 * layer + 1][pos, 0]
        n_in = W.shape[0] if layer == 0 else arch[layer - 1]
        n_out = W.shape[1] if layer == len(arch) else arch[layer]
        out += [W[:n_in, :n_out].clone(), b[:n_out].clone()]
    if len(views) % 2:  # a diagonal scale (see _network)
        out.append(views[-1][pos, 0].clone())
    return out


def write_slot(views, pos, values, arch, group):
    """Write a model's layer tensors (``values`` interleaved as
    :func:`read_slot` gives them, or None for zeros) into slot ``pos`` of one
    group's ``views``, its padding switched off (zero weights; zero biases,
    -inf under the logistic activation). A scaled group's scale is the last
    value (zero with ``values=None``)."""
    depth = len(arch)
    if len(views) % 2:
        views[-1][pos, 0] = 0.0 if values is None else values[-1]
    padded_off = -np.inf if group.activation_of(pos) == "logistic" else 0.0
    for layer in range(depth + 1):
        W, b = views[2 * layer][pos], views[2 * layer + 1][pos, 0]
        W.zero_()
        b.fill_(padded_off if (values is not None and layer < depth) else 0.0)
        if values is None:
            continue
        w, bias = values[2 * layer], values[2 * layer + 1]
        W[: w.shape[0], : w.shape[1]] = w
        b[: bias.shape[0]] = bias
