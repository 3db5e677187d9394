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

Padded units are switched off without a mask in the hot path: their
weights are zero and their bias is zero, or minus infinity under the
logistic activation, so every padded unit outputs exactly 0 (every other
activation maps 0 to 0). They then add exact zeros to the next layer and
receive exactly zero gradient, so any optimizer leaves them as they are.
Padding costs time, never correctness.

All parameters (and their gradients) are views into two flat buffers, so the
optimizer updates the whole population with a handful of elementwise ops
over per-element learning-rate tensors.
"""

import numpy as np
import torch

from ._activations import ACTIVATIONS


class FusedNetwork:
    """A population of independent MLPs stored as flat buffers.

    Parameters
    ----------
    groups : list of Group
    coefs, intercepts : list of list of ndarray
        Per-model weights in scikit-learn layout, indexed by population
        index.
    n_features, n_outputs : int
    dtype : torch.dtype
    device : torch.device

    Attributes
    ----------
    flat : Tensor of shape (n_parameters,)
        All parameters, padded units included (held at exactly zero).
    grad : Tensor of shape (n_parameters,)
        Gradients; each parameter's ``.grad`` is a view into it.
    slot_models : ndarray of shape (n_models,)
        Population index of every slot; slots are numbered group by group.
    element_slot : Tensor of shape (n_parameters,)
        Slot owning each parameter element, for per-model element masks.
    is_weight : Tensor of shape (n_parameters,)
        1 for weight elements, 0 for biases (L2 applies to weights only).
    """

    def __init__(self, groups, coefs, intercepts, n_features, n_outputs, *, dtype, device):
        self.groups = groups
        self.n_features = n_features
        self.n_outputs = n_outputs
        self.dtype, self.device = dtype, device
        self._archs = [tuple(c.shape[1] for c in model_coefs[:-1]) for model_coefs in coefs]
        self.slot_models = np.concatenate([g.models for g in groups])
        self.group_offsets = np.cumsum([0] + [g.size for g in groups])

        shapes = [self._param_shapes(g) for g in groups]
        total = sum(int(np.prod(s)) for group_shapes in shapes for s in group_shapes)
        flat = np.zeros(total, dtype=np.float64)
        element_slot = np.empty(total, dtype=np.int64)
        is_weight = np.zeros(total, dtype=bool)
        self._views = []  # per group: list of (offset, shape)
        offset = 0
        for gi, (group, group_shapes) in enumerate(zip(groups, shapes)):
            views = []
            slots = self.group_offsets[gi] + np.arange(group.size)
            for layer_param, shape in enumerate(group_shapes):
                size = int(np.prod(shape))
                span = slice(offset, offset + size)
                self._fill(flat[span].reshape(shape), group, layer_param, coefs, intercepts)
                element_slot[span] = np.repeat(slots, size // group.size)
                is_weight[span] = layer_param % 2 == 0
                views.append((offset, shape))
                offset += size
            self._views.append(views)

        as_device = lambda a, dt: torch.from_numpy(a).to(device=device, dtype=dt)  # noqa: E731
        self.flat = as_device(flat, dtype)
        self.grad = torch.zeros_like(self.flat)
        self.element_slot = as_device(element_slot, torch.int64)
        self.is_weight = as_device(is_weight, dtype)
        self._is_weight_mask = self.is_weight.bool()
        self.params = []
        for views in self._views:
            group_params = []
            for offset, shape in views:
                size = int(np.prod(shape))
                p = self.flat[offset : offset + size].view(shape).requires_grad_()
                # autograd accumulates in place into a preset .grad, so every
                # gradient lands in the flat buffer the optimizer works on
                p.grad = self.grad[offset : offset + size].view(shape)
                group_params.append(p)
            self.params.append(group_params)

    # ------------------------------------------------------------------ layout
    def _param_shapes(self, group):
        sizes = [self.n_features, *group.widths, self.n_outputs]
        shapes = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            shapes += [(group.size, fan_in, fan_out), (group.size, 1, fan_out)]
        return shapes

    def _fill(self, block, group, layer_param, coefs, intercepts):
        layer, is_bias = divmod(layer_param, 2)
        hidden = layer < len(group.widths)
        for slot, model in enumerate(group.models):
            if is_bias:
                values = intercepts[model][layer]
                block[slot, 0, : values.shape[0]] = values
                if hidden and self._activation_of_slot(group, slot) == "logistic":
                    block[slot, 0, values.shape[0] :] = -np.inf  # sigmoid(-inf) = 0
            else:
                values = coefs[model][layer]
                block[slot, : values.shape[0], : values.shape[1]] = values

    @staticmethod
    def _activation_of_slot(group, slot):
        for name, start, stop in group.activation_slices:
            if start <= slot < stop:
                return name
        raise AssertionError(slot)

    def parameter_ranges(self, gi, start, stop):
        """Flat ``(offset, length, is_weight)`` ranges holding the parameters
        of slots ``start:stop`` of group ``gi`` (one range per layer tensor)."""
        ranges = []
        for k, (offset, shape) in enumerate(self._views[gi]):
            per_slot = int(np.prod(shape[1:]))
            ranges.append((offset + start * per_slot, (stop - start) * per_slot, k % 2 == 0))
        return ranges

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

    def group_forward(self, gi, X):
        """Outputs of group ``gi``: shape (G, B, C).

        ``X`` is (B, F), shared by the group's models, or (G, B, F), one
        input per model (K-fold replicas see their own fold's batch)."""
        group, params = self.groups[gi], self.params[gi]
        h = X.expand(group.size, *X.shape) if X.dim() == 2 else X  # shared: no copy
        depth = len(group.widths)
        for layer in range(depth + 1):
            z = torch.baddbmm(params[2 * layer + 1], h, params[2 * layer])
            h = self._activate(z, group) if layer < depth else z
        return z

    @torch.no_grad()
    def squared_weight_norms(self):
        """Sum of squared weights (biases excluded) per slot: Tensor (n_slots,)."""
        # where, not a product: padded logistic biases are -inf
        squares = torch.where(self._is_weight_mask, self.flat, 0).square_()
        norms = torch.zeros(len(self.slot_models), dtype=self.dtype, device=self.device)
        return norms.index_add_(0, self.element_slot, squares)

    @torch.no_grad()
    def outputs(self, X, *, chunk_rows=4096):
        """Outputs of every slot for ``X``: Tensor of shape (n_slots, n, C)."""
        out = torch.empty(
            (len(self.slot_models), X.shape[0], self.n_outputs), dtype=self.dtype, device=self.device
        )
        for start in range(0, X.shape[0], chunk_rows):
            xb = X[start : start + chunk_rows]
            for gi in range(len(self.groups)):
                a, b = self.group_offsets[gi], self.group_offsets[gi + 1]
                out[a:b, start : start + xb.shape[0]] = self.group_forward(gi, xb)
        return out

    # ------------------------------------------------------------------ export
    def export(self, flat=None):
        """Per-model weights, unpadded, in population order (numpy)."""
        flat = (self.flat if flat is None else flat).detach().cpu().numpy()
        n_models = len(self.slot_models)
        coefs, intercepts = [None] * n_models, [None] * n_models
        for group, views in zip(self.groups, self._views):
            blocks = [flat[o : o + int(np.prod(s))].reshape(s) for o, s in views]
            for slot, model in enumerate(group.models):
                sizes = [self.n_features, *self._archs[model], self.n_outputs]
                coefs[model] = [
                    blocks[2 * layer][slot, :fan_in, :fan_out].copy()
                    for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:]))
                ]
                intercepts[model] = [
                    blocks[2 * layer + 1][slot, 0, :fan_out].copy()
                    for layer, fan_out in enumerate(sizes[1:])
                ]
        return coefs, intercepts

    def slot_values(self, per_model):
        """Reorder a per-model array into slot order."""
        return np.asarray(per_model)[self.slot_models]
