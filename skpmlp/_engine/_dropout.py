"""Per-model inverted dropout from a counter-based hash (issue 40, item 1).

A model's dropout masks must not depend on the other models of its run,
their order or their slots, so they are not drawn from a shared generator:
each mask entry is a pure function of

    (the model's own seed, the epoch, the step within the epoch,
     the hidden layer, the row's position in its batch, the unit)

hashed to a 32-bit integer ``h``; the unit is kept where
``h / 2**32 >= p`` (``h >= ceil(p * 2**32)``, compared as integers, so no
float rounding enters) and a kept unit is scaled by ``1 / (1 - p)``. The
model's seed is the entropy of its initial weights
(:attr:`~._spec.PopulationSpec.init_seeds`: the search's random state, its
architecture, activation and repeat index), folded into a 32-bit key by
:func:`model_key`.

The hash absorbs one counter at a time into a 32-bit state, each followed
by :func:`mix32` (a xorshift-multiply finaliser, as splitmix's): the key
with the epoch, then the step, the layer, the row and the unit. Its
multipliers are odd and below ``2**31``, so a product of a 32-bit state and
a multiplier stays below ``2**63``: int64 tensors compute it exactly, on
any device, and a C ``uint32_t`` would give the same bits. Only the last
round runs over the whole ``(models, rows, units)`` tensor; the others run
over ``(models,)`` or ``(models, rows)``.

:func:`dropout_mask` is one model's mask, for tests and references; the
trainer builds a population's masks with :class:`GroupDropout`, one step at
a time, with no loop over models.
"""

import math

import numpy as np
import torch

_MASK = 0xFFFFFFFF
#: odd and below 2**31: ``state * multiplier`` is exact in int64
_MULTIPLIERS = (0x7FEB352D, 0x2C1B3C6D)
#: the state a model's key starts from (the golden ratio's 32 bits)
_START = 0x9E3779B9


def mix32(x):
    """The 32-bit mixing round: a Python int or an int64 tensor (or numpy
    array) of values in ``[0, 2**32)``, mapped to the same range."""
    x = x ^ (x >> 16)
    x = (x * _MULTIPLIERS[0]) & _MASK
    x = x ^ (x >> 15)
    x = (x * _MULTIPLIERS[1]) & _MASK
    return x ^ (x >> 16)


def _mix32_(x):
    """:func:`mix32` in place on an int64 tensor (same bits, no temporaries
    but the shifts)."""
    x.bitwise_xor_(x >> 16)
    x.mul_(_MULTIPLIERS[0]).bitwise_and_(_MASK)
    x.bitwise_xor_(x >> 15)
    x.mul_(_MULTIPLIERS[1]).bitwise_and_(_MASK)
    x.bitwise_xor_(x >> 16)
    return x


def model_key(seed):
    """A model's 32-bit dropout key from its seed (a tuple of ints, as
    :attr:`~._spec.PopulationSpec.init_seeds` gives it); its length is
    hashed too, so ``(1, 2)`` and ``(1, 2, 0)`` differ."""
    key = mix32(_START ^ len(seed))
    for value in seed:
        value = int(value) % 2**64
        key = mix32(key ^ (value & _MASK))
        key = mix32(key ^ (value >> 32))
    return key


def threshold(p):
    """The integer threshold of rate ``p``: ``h`` is kept where
    ``h >= ceil(p * 2**32)``, i.e. ``h / 2**32 >= p`` (exact: scaling by a
    power of two is exact in float64)."""
    return math.ceil(float(p) * 2**32)


def unit_hashes(step_keys, layer, rows, width):
    """The hashes of a step: ``(G, len(rows), width)`` int64.

    Parameters
    ----------
    step_keys : Tensor of int64, shape (G,)
        Every model's key after absorbing the epoch and the step
        (:func:`step_keys`).
    layer : int
        The hidden layer (0-based).
    rows : Tensor of int64, shape (B,)
        The rows' positions in their batch.
    width : int
        Units of the layer (a group's padded width: a model's real units
        come first, so their hashes do not depend on the padding).
    """
    state = mix32(step_keys ^ layer)
    state = mix32(state[:, None] ^ rows)
    units = torch.arange(width, dtype=torch.int64, device=rows.device)
    return _mix32_(state[:, :, None] ^ units)


def step_keys(keys, epoch, step):
    """Every model's key after absorbing ``epoch`` and ``step``."""
    return mix32(mix32(keys ^ (int(epoch) & _MASK)) ^ (int(step) & _MASK))


def dropout_mask(seed, p, epoch, step, layer, n_rows, width, *, row_start=0,
                 dtype=torch.float64):
    """One model's mask of one hidden layer at one step: ``(n_rows, width)``
    of 0 (dropped) and ``1 / (1 - p)`` (kept).

    Parameters
    ----------
    seed : tuple of int
        The model's init seed (:attr:`~._spec.PopulationSpec.init_seeds`).
    p : float
        Its dropout rate, in [0, 1).
    epoch, step : int
        The run's epoch (0-based) and the step within it.
    layer : int
        The hidden layer (0-based).
    n_rows, width : int
        The batch's rows and the layer's units.
    row_start : int, default=0
        The position of the first row in the whole batch (a data-parallel
        rank's share starts there).
    """
    keys = torch.tensor([model_key(seed)], dtype=torch.int64)
    rows = torch.arange(row_start, row_start + n_rows, dtype=torch.int64)
    h = unit_hashes(step_keys(keys, epoch, step), layer, rows, width)[0]
    scale = torch.tensor(1.0 / (1.0 - p), dtype=dtype)
    return torch.where(h >= threshold(p), scale, torch.zeros((), dtype=dtype))


class GroupDropout:
    """The dropout of one group of the fused network: every slot's key, rate
    threshold and scale (a slot of rate 0 keeps every unit, scaled by 1:
    its activations are multiplied by exactly 1).

    Parameters
    ----------
    keys : sequence of int
        Every slot's :func:`model_key`.
    rates : sequence of float
        Every slot's rate, in [0, 1).
    dtype, device : where the masks are built.
    """

    def __init__(self, keys, rates, *, dtype, device):
        self.keys = torch.as_tensor(np.asarray(keys, dtype=np.int64), device=device)
        thresholds = [threshold(p) for p in rates]
        self.thresholds = torch.tensor(thresholds, dtype=torch.int64, device=device).view(-1, 1, 1)
        scales = [1.0 / (1.0 - float(p)) for p in rates]
        self.scales = torch.tensor(scales, dtype=dtype, device=device).view(-1, 1, 1)
        self.zero = torch.zeros((), dtype=dtype, device=device)

    def at(self, epoch, step, n_rows, row_start=0):
        """The masks of a step: a function ``(layer, width) -> (G, n_rows,
        width)`` tensor, as :meth:`~._network.FusedNetwork.group_forward`
        takes it."""
        keys = step_keys(self.keys, epoch, step)
        rows = torch.arange(row_start, row_start + n_rows, dtype=torch.int64,
                            device=self.keys.device)

        def masks(layer, width):
            h = unit_hashes(keys, layer, rows, width)
            return torch.where(h >= self.thresholds, self.scales, self.zero)

        return masks


def group_dropouts(net, replica_keys, replica_rates):
    """Each group's :class:`GroupDropout`, None where none of its slots
    drops units (those groups' steps run as without dropout, bit for bit).

    Parameters
    ----------
    net : FusedNetwork
    replica_keys, replica_rates : ndarray, indexed by replica
    """
    keys = np.asarray(replica_keys)[net.slot_models]
    rates = np.asarray(replica_rates)[net.slot_models]
    dropouts = []
    for gi in range(len(net.groups)):
        a, b = net.group_offsets[gi], net.group_offsets[gi + 1]
        if not (rates[a:b] > 0).any():
            dropouts.append(None)
            continue
        dropouts.append(GroupDropout(keys[a:b], rates[a:b], dtype=net.dtype, device=net.device))
    return dropouts


def uses_dropout(spec, config):
    """Whether any model of ``spec`` (config's optimizer where it gives
    none) drops units."""
    return any(o.dropout > 0 for o in spec.optimizers_of(config))

