"""The fused network: every model's parameters in one flat buffer.

Layout of a :class:`~._layout.Group` of ``G`` models with padded hidden
widths ``w1, ..., wD``, ``F`` input features and ``C`` outputs:

* layer 0 weight ``(F, G, w1)`` and bias ``(G, w1)``: the input is shared by
  all models, so layer 0 of a group is ONE ``(B, F) @ (F, G*w1)`` GEMM;
* layer l >= 1 weight ``(G, w_l, w_{l+1})`` and bias ``(G, 1, w_{l+1})``:
  one batched matmul over the group's models.

Activations run on ``(G, B, w)`` tensors, one call per contiguous activation
slice. Memory per step is O(batch x total hidden units); the paper's
``(batch, total_hidden, n_outputs)`` tensor is never built.

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
        self._views = []  # per group: list of (offset, shape)
        offset = 0
        for gi, (group, group_shapes) in enumerate(zip(groups, shapes)):
            views = []
            for layer_param, shape in enumerate(group_shapes):
                size = int(np.prod(shape))
                block = flat[offset : offset + size].reshape(shape)
                self._fill(block, group, layer_param, coefs, intercepts)
                slots = self.group_offsets[gi] + np.arange(group.size)
                slot_axis = 1 if layer_param == 0 else 0
                slot_shape = [1] * len(shape)
                slot_shape[slot_axis] = group.size
                element_slot[offset : offset + size] = np.broadcast_to(
                    slots.reshape(slot_shape), shape
                ).ravel()
                views.append((offset, shape))
                offset += size
            self._views.append(views)

        self.flat = torch.from_numpy(flat).to(device=device, dtype=dtype)
        self.grad = torch.zeros_like(self.flat)
        self.element_slot = torch.from_numpy(element_slot).to(device)
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
        self.masks = [self._unit_masks(g) for g in groups]

    # ------------------------------------------------------------------ layout
    def _param_shapes(self, group):
        G, widths = group.size, group.widths
        shapes = [(self.n_features, G, widths[0]), (G, widths[0])]
        sizes = list(widths) + [self.n_outputs]
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            shapes += [(G, fan_in, fan_out), (G, 1, fan_out)]
        return shapes

    @staticmethod
    def _fill(block, group, layer_param, coefs, intercepts):
        layer, is_bias = divmod(layer_param, 2)
        for slot, model in enumerate(group.models):
            if is_bias:
                values = intercepts[model][layer]
                if layer == 0:
                    block[slot, : values.shape[0]] = values
                else:
                    block[slot, 0, : values.shape[0]] = values
            else:
                values = coefs[model][layer]
                if layer == 0:
                    block[:, slot, : values.shape[1]] = values
                else:
                    block[slot, : values.shape[0], : values.shape[1]] = values

    def _unit_masks(self, group):
        """Per hidden layer, a (G, 1, w) 0/1 mask of real units, or None."""
        masks = []
        for layer, width in enumerate(group.widths):
            real = np.array([self._archs[m][layer] for m in group.models])
            if np.all(real == width):
                masks.append(None)
                continue
            mask = (np.arange(width)[None, :] < real[:, None]).astype(np.float64)
            masks.append(
                torch.from_numpy(mask[:, None, :]).to(device=self.device, dtype=self.dtype)
            )
        return masks

    # ----------------------------------------------------------------- forward
    def _activate(self, z, group, mask):
        """Apply each activation slice of ``z`` (G, B, w); returns contiguous."""
        slices = group.activation_slices
        if len(slices) == 1:
            h = ACTIVATIONS[slices[0][0]](z).contiguous()
        else:
            # split (not indexing) so the backward is one cat, not a
            # zero-filled full-size gradient per slice
            chunks = torch.split(z, [stop - start for _, start, stop in slices], dim=0)
            h = torch.cat([ACTIVATIONS[name](c) for (name, _, _), c in zip(slices, chunks)], 0)
        return h if mask is None else h * mask

    def group_forward(self, gi, X):
        """Outputs of group ``gi`` for input ``X`` (B, F): shape (G, B, C)."""
        group, params, masks = self.groups[gi], self.params[gi], self.masks[gi]
        G, w1 = group.size, group.widths[0]
        W0, b0 = params[0], params[1]
        z = torch.addmm(b0.reshape(-1), X, W0.reshape(self.n_features, G * w1))
        h = self._activate(z.view(-1, G, w1).transpose(0, 1), group, masks[0])
        depth = len(group.widths)
        for layer in range(1, depth + 1):
            W, b = params[2 * layer], params[2 * layer + 1]
            z = torch.baddbmm(b, h, W)
            if layer < depth:
                h = self._activate(z, group, masks[layer])
        return z

    def group_l2(self, gi):
        """Sum of squared weights (biases excluded) per model: shape (G,)."""
        params = self.params[gi]
        total = params[0].square().sum((0, 2))
        for W in params[2::2]:
            total = total + W.square().sum((1, 2))
        return total

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
                model_coefs, model_intercepts = [], []
                for layer, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
                    W, b = blocks[2 * layer], blocks[2 * layer + 1]
                    if layer == 0:
                        model_coefs.append(W[:, slot, :fan_out].copy())
                        model_intercepts.append(b[slot, :fan_out].copy())
                    else:
                        model_coefs.append(W[slot, :fan_in, :fan_out].copy())
                        model_intercepts.append(b[slot, 0, :fan_out].copy())
                coefs[model], intercepts[model] = model_coefs, model_intercepts
        return coefs, intercepts

    def slot_values(self, per_model):
        """Reorder a per-model array into slot order."""
        return np.asarray(per_model)[self.slot_models]
