"""The fused network: every model's parameters in one flat buffer.

A :class:`~._layout.Group` of ``G`` models with padded hidden widths
``w1, ..., wD``, ``F`` input features and ``C`` outputs stores, for every
layer, a weight ``(G, fan_in, fan_out)`` and a bias ``(G, 1, fan_out)``; each
layer of the group is ONE ``baddbmm`` over its models. The input of layer 0
is shared, so it enters as a stride-0 expansion of ``X`` (no copy); the
hidden tensors stay contiguous ``(G, B, w)`` from layer to layer, forward
and backward, so no transposes are needed.

Activations run once per contiguous activation slice of a group. Memory per
step is O(batch x total hidden units); the paper's
``(batch, total_hidden, n_outputs)`` tensor is never built.

A group of models with a first diagonal scaling layer (``Group.scaled``,
``diagonal_scaling``) stores one more tensor after its layers' ones: the
scale ``(G, 1, F)``, every model's per-feature factor ``s`` (initialised to
1); its first layer then reads ``X * s`` (``(G, B, F)``, one product per
step). Its gradient is ``sum_rows(x * dL/d(x s))``, torch's autograd of
that product; it is a bias to the L2 penalty (never penalised). The layer
tensors keep their places (``W0, b0, W1, b1, ...``) in every group, so
code that walks a group's layers reads ``2 * (depth + 1)`` tensors
(:meth:`FusedNetwork.layer_count`) and finds the scale last.
:meth:`FusedNetwork.export` folds ``s`` into the first layer's weights
(rows of ``W0`` times ``s``): an exported model is a plain MLP.

Padded units are switched off without a mask in the hot path: their
weights are zero and their bias is zero, or minus infinity under the
logistic activation, so every padded unit outputs exactly 0 (every other
activation maps 0 to 0). They then add exact zeros to the next layer and
receive exactly zero gradient, so any optimizer leaves them as they are.
Padding costs time, never correctness.

All parameters (and their gradients) are views into two flat buffers, so the
optimizer updates the whole population with a handful of fused kernels.
Every layer tensor is slot-major ``(G, ...)``, so dropping models
(:meth:`FusedNetwork.compact`) is one ``index_select`` per layer tensor of
each flat buffer, on the device.
"""

import math

import numpy as np
import torch

from ._activations import ACTIVATIONS
from ._layout import Group


class FusedNetwork:
    """A population of independent MLPs stored as flat buffers.

    Build one with :meth:`from_weights`; :meth:`compact` derives a smaller
    one holding a subset of the models.

    Parameters
    ----------
    groups : list of Group
    flat : Tensor of shape (n_parameters,)
        All parameters in the layout of ``groups``.
    archs : dict of int to tuple of int
        Real (unpadded) hidden widths of every model id in ``groups``.
    n_features, n_outputs : int

    Attributes
    ----------
    flat : Tensor of shape (n_parameters,)
        All parameters, padded units included (exact zeros; -inf biases of padded logistic units).
    grad : Tensor of shape (n_parameters,)
        Gradients; each parameter's ``.grad`` is a view into it.
    params : list of list of Tensor
        Per group, the layer tensors ``W0, b0, W1, b1, ...``, each of shape
        ``(G, fan_in, fan_out)`` or ``(G, 1, fan_out)``, views into ``flat``;
        then, in a scaled group, the scale ``(G, 1, n_features)``.
    slot_models : ndarray of shape (n_slots,)
        Model id of every slot; slots are numbered group by group.
    group_offsets : ndarray of shape (n_groups + 1,)
        First slot of every group.
    """

    def __init__(self, groups, flat, archs, n_features, n_outputs):
        self.groups, self.archs = groups, archs
        self.n_features, self.n_outputs = n_features, n_outputs
        self.dtype, self.device = flat.dtype, flat.device
        self.slot_models = np.concatenate([g.models for g in groups])
        self.group_offsets = np.cumsum([0] + [g.size for g in groups])
        self._shapes = [self._shapes_of(g, n_features, n_outputs) for g in groups]
        sizes = [[int(math.prod(s)) for s in shapes] for shapes in self._shapes]
        # flat offset of every layer tensor of every group (the optimizer's
        # partitions and the kernel's tables ask for them on every freeze)
        starts = np.cumsum([0] + [n for group_sizes in sizes for n in group_sizes])
        self._tensor_offsets, k = [], 0
        for group_sizes in sizes:
            self._tensor_offsets.append(starts[k : k + len(group_sizes)].tolist())
            k += len(group_sizes)
        self.n_parameters = int(starts[-1])
        assert flat.shape == (self.n_parameters,)
        self.flat = flat
        self.grad = torch.zeros_like(flat)
        self.params = self.layer_views(flat)
        for group_params, group_grads in zip(self.params, self.layer_views(self.grad)):
            for p, g in zip(group_params, group_grads):
                # autograd accumulates in place into a preset .grad, so every
                # gradient lands in the flat buffer the optimizer works on
                p.requires_grad_()
                p.grad = g

    @classmethod
    def from_weights(cls, groups, coefs, intercepts, n_features, n_outputs, *, dtype, device):
        """Build the network from per-model weights in scikit-learn layout.

        Parameters
        ----------
        coefs, intercepts : sequence of list of ndarray
            Indexed by model id (the ids found in ``groups``).
        """
        archs = {
            int(m): tuple(c.shape[1] for c in coefs[m][:-1]) for g in groups for m in g.models
        }
        shapes = [cls._shapes_of(g, n_features, n_outputs) for g in groups]
        flat = np.zeros(sum(int(math.prod(s)) for group_shapes in shapes for s in group_shapes))
        offset = 0
        for group, group_shapes in zip(groups, shapes):
            for layer_param, shape in enumerate(group_shapes):
                size = int(math.prod(shape))
                block = flat[offset : offset + size].reshape(shape)
                if layer_param < cls.layer_count(group):
                    _fill(block, group, layer_param, coefs, intercepts)
                else:
                    block.fill(1.0)  # the scale starts as the identity
                offset += size
        flat = torch.from_numpy(flat).to(device=device, dtype=dtype)
        return cls(groups, flat, archs, n_features, n_outputs)

    # ------------------------------------------------------------------ layout
    @staticmethod
    def _shapes_of(group, n_features, n_outputs):
        sizes = [n_features, *group.widths, n_outputs]
        shapes = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            shapes += [(group.size, fan_in, fan_out), (group.size, 1, fan_out)]
        if group.scaled:
            shapes.append((group.size, 1, n_features))
        return shapes

    @staticmethod
    def layer_count(group):
        """How many of a group's tensors are its layers' (``W0, b0, ...``):
        all of them but a scaled group's last, its scale."""
        return 2 * (len(group.widths) + 1)

    def weight_views(self, gi, views):
        """The weight matrices of group ``gi`` among its ``views`` (as
        :meth:`layer_views` gives them): what ``alpha`` penalises."""
        return views[0 : self.layer_count(self.groups[gi]) : 2]

    def layer_views(self, buffer):
        """Per group, the layer tensors of a flat ``buffer`` laid out as
        :attr:`flat` (parameters, gradients or optimizer state)."""
        views, offset = [], 0
        for shapes in self._shapes:
            group_views = []
            for shape in shapes:
                size = int(math.prod(shape))
                group_views.append(buffer[offset : offset + size].view(shape))
                offset += size
            views.append(group_views)
        return views

    def parameter_ranges(self, gi, start, stop):
        """Flat ``(offset, length, is_weight)`` ranges holding the parameters
        of slots ``start:stop`` of group ``gi`` (one range per layer tensor)."""
        ranges, n_layer = [], self.layer_count(self.groups[gi])
        for k, (shape, offset) in enumerate(zip(self._shapes[gi], self._tensor_offsets[gi])):
            per_slot = shape[1] * shape[2]
            is_weight = k % 2 == 0 and k < n_layer  # a scale is a bias to the penalty
            ranges.append((offset + start * per_slot, (stop - start) * per_slot, is_weight))
        return ranges

    def compact(self, keep):
        """The network of the slots where ``keep`` is True.

        Parameters
        ----------
        keep : ndarray of bool of shape (n_slots,)

        Returns
        -------
        network : FusedNetwork
            Same groups (minus the emptied ones) and padded widths, fewer
            slots; parameters copied on the device.
        carry : callable
            Maps any flat buffer laid out as this network's (optimizer state,
            kept best weights) to the new layout.
        """
        kept_groups, indices = [], []
        for gi, group in enumerate(self.groups):
            mask = keep[self.group_offsets[gi] : self.group_offsets[gi + 1]]
            if mask.any():
                kept_groups.append(_kept_group(group, mask))
                indices.append(torch.as_tensor(np.flatnonzero(mask), device=self.device))
            else:
                indices.append(None)

        def carry(buffer):
            parts = [
                view.index_select(0, index).reshape(-1)
                for group_views, index in zip(self.layer_views(buffer), indices)
                if index is not None
                for view in group_views
            ]
            return torch.cat(parts) if parts else buffer[:0].clone()

        archs = {int(m): self.archs[int(m)] for g in kept_groups for m in g.models}
        with torch.no_grad():
            flat = carry(self.flat)
        return FusedNetwork(kept_groups, flat, archs, self.n_features, self.n_outputs), carry

    # ----------------------------------------------------------------- forward
    @staticmethod
    def _activate(z, group):
        """Apply each activation slice of ``z`` (G, B, w)."""
        slices = group.activation_slices
        if len(slices) == 1:
            return ACTIVATIONS[slices[0][0]](z)
        # split (not indexing) so the backward is one cat, not a zero-filled
        # full-size gradient per slice
        chunks = torch.split(z, [stop - start for _, start, stop in slices], dim=0)
        return torch.cat([ACTIVATIONS[name](c) for (name, _, _), c in zip(slices, chunks)], 0)

    def group_forward(self, gi, X, dropout=None):
        """Outputs of group ``gi``: shape (G, B, C).

        ``X`` is (B, F), shared by the group's models, or (G, B, F), one
        input per model (K-fold replicas see their own fold's batch).
        ``dropout`` (training only): ``dropout(layer, width)`` gives the
        ``(G, B, width)`` mask every hidden layer's activations are
        multiplied by (:meth:`~._dropout.GroupDropout.at`)."""
        group, params = self.groups[gi], self.params[gi]
        h = X.expand(group.size, *X.shape) if X.dim() == 2 else X  # shared: no copy
        if group.scaled:
            h = h * params[-1]  # (G, 1, F): each model's own scale of every feature
        depth = len(group.widths)
        for layer in range(depth + 1):
            z = torch.baddbmm(params[2 * layer + 1], h, params[2 * layer])
            h = self._activate(z, group) if layer < depth else z
            if dropout is not None and layer < depth:
                h = h * dropout(layer, h.shape[2])
        return z

    @torch.no_grad()
    def squared_weight_norms(self):
        """Sum of squared weights (biases excluded) per slot: Tensor (n_slots,)."""
        # weights only: padded logistic biases are -inf
        norms = [
            sum(W.square().sum((1, 2)) for W in self.weight_views(gi, group_params))
            for gi, group_params in enumerate(self.params)
        ]
        return torch.cat(norms)

    @torch.no_grad()
    def outputs(self, X, *, chunk_rows=4096):
        """Outputs of every slot for ``X``: Tensor of shape (n_slots, n, C)."""
        out = torch.empty(
            (len(self.slot_models), X.shape[0], self.n_outputs), dtype=self.dtype,
            device=self.device
        )
        for start in range(0, X.shape[0], chunk_rows):
            xb = X[start : start + chunk_rows]
            for gi in range(len(self.groups)):
                a, b = self.group_offsets[gi], self.group_offsets[gi + 1]
                out[a:b, start : start + xb.shape[0]] = self.group_forward(gi, xb)
        return out

    # ------------------------------------------------------------------ export
    def export(self, buffer=None, slots=None):
        """Unpadded weights of the models in ``slots`` (default: all), numpy.

        Parameters
        ----------
        buffer : Tensor, optional
            A flat buffer in this network's layout; default :attr:`flat`.
        slots : ndarray of bool of shape (n_slots,), optional

        Returns
        -------
        dict of int to (list of ndarray, list of ndarray)
            ``{model id: (coefs, intercepts)}``; a scaled model's scale is
            folded into its first layer (``coefs[0]`` row ``j`` times
            ``s[j]``), so ``X @ coefs[0]`` is its ``(X * s) @ W0``.
        """
        buffer = self.flat if buffer is None else buffer
        views = self.layer_views(buffer.detach())
        weights = {}
        for gi, group in enumerate(self.groups):
            wanted = np.arange(group.size)
            if slots is not None:
                wanted = np.flatnonzero(slots[self.group_offsets[gi] : self.group_offsets[gi + 1]])
            if len(wanted) == 0:
                continue
            index = torch.as_tensor(wanted, device=self.device)
            blocks = [v.index_select(0, index).cpu().numpy() for v in views[gi]]
            for row, slot in enumerate(wanted):
                model = int(group.models[slot])
                sizes = [self.n_features, *self.archs[model], self.n_outputs]
                fans = list(zip(sizes[:-1], sizes[1:]))
                coefs = [blocks[2 * k][row, :i, :o].copy() for k, (i, o) in enumerate(fans)]
                if group.scaled:
                    coefs[0] *= blocks[-1][row, 0, :, None]
                weights[model] = (
                    coefs, [blocks[2 * k + 1][row, 0, :o].copy() for k, (_, o) in enumerate(fans)],
                )
        return weights


def _fill(block, group, layer_param, coefs, intercepts):
    """Write every model's tensor of one layer into its padded ``block``."""
    layer, is_bias = divmod(layer_param, 2)
    hidden = layer < len(group.widths)
    for slot, model in enumerate(group.models):
        if is_bias:
            values = intercepts[model][layer]
            block[slot, 0, : values.shape[0]] = values
            if hidden and group.activation_of(slot) == "logistic":
                block[slot, 0, values.shape[0] :] = -np.inf  # sigmoid(-inf) = 0
        else:
            values = coefs[model][layer]
            block[slot, : values.shape[0], : values.shape[1]] = values


def _kept_group(group, mask):
    """``group`` without the slots where ``mask`` is False."""
    kept = np.cumsum(np.r_[0, mask])  # kept slots before each slot
    slices = tuple(
        (name, int(kept[start]), int(kept[stop]))
        for name, start, stop in group.activation_slices
        if kept[stop] > kept[start]
    )
    return Group(group.models[mask], group.widths, slices, group.scaled)
