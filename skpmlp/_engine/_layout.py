"""How a population is cut into groups of same-shaped (padded) models.

Every group holds models of one depth; their hidden widths are padded to the
group's widest per layer, so each layer of the group is one batched matmul
over stacked weights. Padded units need no mask: their weights and biases
are exact zeros (a -inf bias under the logistic activation), so they
neither contribute to the outputs nor receive gradient (see ``_network``):
padding costs time, never correctness. Inside a group models are sorted by activation so that
each activation applies to one contiguous slice.

Grouping is a trade-off between padding waste and the number of groups (each
group costs a few kernel launches per step); :func:`plan_groups` merges
architectures of equal depth greedily while the padding stays below
``max_padding``.
"""

from dataclasses import dataclass

import numpy as np

from ._activations import ACTIVATION_CODES

# Per-model cost, in hidden-unit equivalents, that does not depend on width
# (output bias, loss, bookkeeping). It lets tiny widths share a group.
_FIXED_COST = 8


@dataclass(frozen=True)
class Group:
    """A set of models trained as stacked, padded weights.

    Attributes
    ----------
    models : ndarray of int
        Population indices of the group's models, sorted by activation;
        position ``s`` in this array is the model's *slot* in the group.
    widths : tuple of int
        Padded hidden widths of the group, one per hidden layer.
    activation_slices : tuple of (str, int, int)
        ``(activation, start, stop)`` slot ranges sharing one activation.
    scaled : bool, default=False
        Whether the group's models start with a learnable diagonal scaling
        of their inputs (``diagonal_scaling``): one more parameter tensor,
        a scale per model and feature, after the layers' (see
        :class:`~._network.FusedNetwork`). Scaled and unscaled models never
        share a group, so an unscaled group is laid out as ever.
    """

    models: np.ndarray
    widths: tuple
    activation_slices: tuple
    scaled: bool = False

    @property
    def size(self):
        return len(self.models)

    def activation_of(self, slot):
        """Activation of the model at position ``slot`` of the group."""
        for name, start, stop in self.activation_slices:
            if start <= slot < stop:
                return name
        raise AssertionError(slot)


def _cost(widths, count):
    return count * (sum(widths) + _FIXED_COST)


def _bucket_architectures(archs_with_counts, max_padding):
    """Greedy merge of same-depth architectures, sorted by total width."""
    buckets = []
    current, padded = [], None
    for arch, count in archs_with_counts:
        if not current:
            current, padded = [(arch, count)], arch
            continue
        merged = tuple(max(a, b) for a, b in zip(padded, arch))
        n = sum(c for _, c in current) + count
        actual = sum(_cost(a, c) for a, c in current) + _cost(arch, count)
        if _cost(merged, n) <= (1.0 + max_padding) * actual:
            current.append((arch, count))
            padded = merged
        else:
            buckets.append((current, padded))
            current, padded = [(arch, count)], arch
    if current:
        buckets.append((current, padded))
    return buckets


def _split_by_activation(group):
    return [
        Group(group.models[start:stop], group.widths, ((name, 0, stop - start),), group.scaled)
        for name, start, stop in group.activation_slices
    ]


def plan_groups(hidden_layer_sizes, activations, max_padding=0.25, split_elements=None,
                sort_codes=None, scaled=None):
    """Cut a population into groups of stacked, padded models.

    Parameters
    ----------
    hidden_layer_sizes : list of tuple of int
    activations : list of str
        Canonical activation names.
    max_padding : float, default=0.25
        Largest accepted fraction of padded cost in a group; 0 puts every
        distinct architecture in its own group.
    sort_codes : array-like of int, optional
        Secondary sort key inside an activation slice (the optimizer wants
        models of equal learning rate and alpha next to each other).
    split_elements : int, optional
        A group whose hidden activations hold at least this many elements
        per step (batch x models x units) is split into one group per
        activation: for big groups, concatenating activation slices costs
        more than the extra kernel launches of more groups.
    scaled : array-like of bool, optional
        Which models start with a diagonal scaling layer; they are grouped
        apart from the others (default: none).

    Returns
    -------
    groups : list of Group
        Every model appears in exactly one group.
    """
    if scaled is None or not np.any(scaled):
        return _plan(hidden_layer_sizes, activations, max_padding, split_elements, sort_codes,
                     np.arange(len(hidden_layer_sizes)), False)
    scaled = np.asarray(scaled, dtype=bool)
    return [
        group
        for flag in (False, True)
        for group in _plan(hidden_layer_sizes, activations, max_padding, split_elements,
                           sort_codes, np.flatnonzero(scaled == flag), flag)
    ]


def _plan(hidden_layer_sizes, activations, max_padding, split_elements, sort_codes, members,
          scaled):
    """:func:`plan_groups` of the models ``members`` (population indices),
    every group ``scaled`` or not."""
    by_arch = {}
    for index in members:
        by_arch.setdefault(tuple(hidden_layer_sizes[index]), []).append(int(index))
    by_depth = {}
    for arch in by_arch:
        by_depth.setdefault(len(arch), []).append(arch)

    groups = []
    for depth in sorted(by_depth):
        archs = sorted(by_depth[depth], key=lambda a: (sum(a), a))
        counted = [(a, len(by_arch[a])) for a in archs]
        for members, padded in _bucket_architectures(counted, max_padding):
            models = np.concatenate([by_arch[a] for a, _ in members])
            # stable sort by activation keeps the population order inside
            # each activation slice
            codes = np.array([ACTIVATION_CODES[activations[m]] for m in models])
            if sort_codes is None:
                secondary = np.zeros(len(models))
            else:
                secondary = np.asarray(sort_codes)[models]
            order = np.lexsort((secondary, codes))  # stable: population order breaks ties
            models, codes = models[order], codes[order]
            slices = []
            starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
            stops = np.r_[starts[1:], len(codes)]
            for start, stop in zip(starts, stops):
                slices.append((activations[models[start]], int(start), int(stop)))
            group = Group(models, tuple(int(w) for w in padded), tuple(slices), scaled)
            elements = group.size * sum(group.widths)
            if split_elements is not None and len(slices) > 1 and elements >= split_elements:
                groups.extend(_split_by_activation(group))
            else:
                groups.append(group)
    return groups
