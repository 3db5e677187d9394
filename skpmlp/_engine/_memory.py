"""The memory plan: what a population needs on its device, and chunks that fit.

Models are independent, so a population too large for its device trains as
chunks, one fused run after another, with the same results as one run. The
estimate counts what a fused run keeps on the device:

* per parameter: the parameters, their gradients, the optimizer state (two
  buffers for Adam, one for SGD) and, with early stopping, the best weights;
* per step: every hidden unit's pre- and post-activation values and their
  gradients for the batch, the outputs likewise and, with K folds, a copy of
  each fold's batch per model; with dropout, the masks, the masked values
  and their gradients, and the int64 hashes of the masks;
* per epoch: every model's outputs on the evaluation rows (monitoring);
* once: the data.

Padding is counted at its worst (``1 + max_padding`` times the real units).

Successive halving ranks the models of every chunk together, so chunks
train rung by rung: at each rung every chunk waits, suspended, while the
others catch up. On the CPU their weights and optimizer state then wait in
the same memory (:func:`held_bytes`), which the plan sets aside.
"""

import numpy as np
import torch

from ._host_memory import host_available_bytes
from ._minibatch._optim import n_state_buffers

#: Share of the free device memory a fit plans to use; the rest is headroom
#: for the allocator's fragmentation and for other tensors.
FREE_MEMORY_SHARE = 0.8

_EVAL_CHUNK_ROWS = 4096


def model_parameters(hidden_layer_sizes, n_features, n_outputs):
    """Number of parameters of one MLP."""
    sizes = [n_features, *hidden_layer_sizes, n_outputs]
    return sum((fan_in + 1) * fan_out for fan_in, fan_out in zip(sizes[:-1], sizes[1:]))


def keeps_best(config):
    """Whether a run keeps a second copy of every slot's weights (the best
    so far: ``early_stopping``, ``restore_best_weights``)."""
    return bool(config.early_stopping or config.restore_best_weights)


def model_bytes(spec, config, n_features, *, n_folds, n_eval):
    """Device bytes each model of ``spec`` needs in a fused run (all its
    fold replicas included): ndarray of shape (n_models,)."""
    itemsize = torch.finfo(getattr(torch, config.dtype)).bits // 8
    padding = 1.0 + config.max_padding
    # parameters, gradients, optimizer state (for the whole run), best weights
    n_buffers = 2 + n_state_buffers(spec.optimizers_of(config)) + keeps_best(config)
    C, B = config.n_outputs, config.batch_size
    out = np.empty(spec.n_models)
    optimizers = spec.optimizers_of(config)
    for i, arch in enumerate(spec.hidden_layer_sizes):
        hidden = sum(arch)
        params = model_parameters(arch, n_features, C) * padding
        step = B * (4 * hidden * padding + 3 * C + (n_features if n_folds > 1 else 0))
        if optimizers[i].dropout > 0:  # masks, masked values, their gradients; 3 int64 hashes
            step += B * hidden * padding * (3 + 3 * 8 / itemsize)
        monitor = n_eval * C + min(n_eval, _EVAL_CHUNK_ROWS) * 2 * hidden * padding
        out[i] = n_folds * (n_buffers * params + step + monitor) * itemsize
    return out


def held_bytes(spec, config, n_features, *, n_folds):
    """Host bytes each model of ``spec`` holds while its run is suspended
    (its weights, optimizer state and best weights; no gradients, no
    activations): ndarray of shape (n_models,)."""
    itemsize = torch.finfo(getattr(torch, config.dtype)).bits // 8
    padding = 1.0 + config.max_padding
    n_buffers = 1 + n_state_buffers(spec.optimizers_of(config)) + keeps_best(config)
    params = np.array([model_parameters(arch, n_features, config.n_outputs)
                       for arch in spec.hidden_layer_sizes], float)
    return n_folds * n_buffers * params * padding * itemsize


def data_bytes(config, n_rows, n_features):
    """Device bytes of the data of a fused run (features, targets, batches)."""
    itemsize = torch.finfo(getattr(torch, config.dtype)).bits // 8
    return n_rows * (2 * n_features + 2 * config.n_outputs + 4) * itemsize


def available_bytes(device):
    """Free memory of ``device`` in bytes, or None when it cannot be told.

    On the CPU, the least of the host's available memory, the container's
    (cgroup) limits and the address-space rlimit leave (see
    :mod:`._host_memory`).
    """
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    return host_available_bytes()


def memory_budget(device, max_memory=None):
    """Bytes a fit may plan to use: ``max_memory``, capped by the free
    memory of the device (None: no known limit)."""
    free = available_bytes(device)
    share = None if free is None else FREE_MEMORY_SHARE * free
    limits = [m for m in (max_memory, share) if m is not None]
    return min(limits) if limits else None


def plan_chunks(spec, per_model, shared, budget, held=None):
    """Cut a population into chunks whose fused runs fit in ``budget`` bytes.

    Models are taken in order of depth and total width, so each chunk holds
    similar architectures (little padding).

    Parameters
    ----------
    spec : PopulationSpec
    per_model : ndarray of shape (n_models,)
        Bytes of every model (:func:`model_bytes`).
    shared : float
        Bytes every chunk needs whatever its models (:func:`data_bytes`).
    budget : float or None
    held : ndarray of shape (n_models,), optional
        Bytes every model holds in the same memory while another chunk
        trains (halving's suspended chunks on the CPU, :func:`held_bytes`):
        set aside from the budget once the population needs chunks.

    Returns
    -------
    list of ndarray of int
        Model indices of every chunk, ascending.

    Raises
    ------
    MemoryError
        If the data and one model alone exceed the budget (what is held
        set aside).
    """
    if budget is None or shared + per_model.sum() <= budget:
        return [np.arange(spec.n_models)]
    if held is not None:
        if held.sum() >= budget:
            raise MemoryError(
                f"With pruning='halving' the population trains as chunks, rung by rung, and "
                f"every chunk's weights and optimizer state wait in memory while the others "
                f"train: about {held.sum() / 2**20:.1f} MiB, more than the "
                f"{budget / 2**20:.1f} MiB available. Raise max_memory or free memory, use "
                f"fewer models or dtype='float32'."
            )
        budget -= held.sum()
    largest = int(np.argmax(per_model))
    if shared + per_model[largest] > budget:
        raise MemoryError(
            f"Training even one model needs about {(shared + per_model[largest]) / 2**20:.1f} MiB "
            f"(model {spec.hidden_layer_sizes[largest]} and the data), more than the "
            f"{budget / 2**20:.1f} MiB available; raise max_memory, use a smaller batch_size or "
            f"dtype='float32', or free device memory."
        )
    archs = spec.hidden_layer_sizes
    order = sorted(range(spec.n_models), key=lambda i: (len(archs[i]), sum(archs[i]), i))
    chunks, current, used = [], [], shared
    for i in order:
        if current and used + per_model[i] > budget:
            chunks.append(np.sort(current))
            current, used = [], shared
        current.append(i)
        used += per_model[i]
    chunks.append(np.sort(current))
    return chunks


#: What the allocators' errors say when memory runs out.
_OOM_WORDS = ("out of memory", "can't allocate memory", "not enough memory")


def is_out_of_memory(error):
    """Whether ``error`` is a device or host allocation failure."""
    oom_types = tuple(
        t for t in (getattr(torch, "OutOfMemoryError", None),
                    getattr(torch.cuda, "OutOfMemoryError", None))
        if t is not None
    )
    if isinstance(error, oom_types + (MemoryError,)):
        return True
    message = str(error).lower()
    return isinstance(error, RuntimeError) and any(words in message for words in _OOM_WORDS)
