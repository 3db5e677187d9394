"""Which trainer trains a run: the dispatcher over the backends.

:func:`choose_trainer` picks the class that trains a run's epochs: torch's
fused ops (:class:`~skpmlp._engine._backends._torch.PopulationTrainer`, the
reference), the native CPU kernel
(:class:`~skpmlp._engine._backends._native.NativeTrainer`) or the Triton
kernels on CUDA (:class:`~skpmlp._engine._backends._triton.TritonTrainer`),
by the config's ``backend``, the device and measured rules;
:func:`prepare_kernel` builds the native kernel before a CPU run.
"""

import sys

import torch

from ... import _kernels
from ._native import NativeTrainer, native_supported
from ._torch import PopulationTrainer
from ._triton import describe_gpu_backend, gpu_trainer

#: Hidden-to-hidden layers at least this wide on both sides are where
#: torch's GEMM beats the kernel's register tiles (measured on one thread,
#: float32, batch 200-1000, AMD Zen 4: torch 1.07x the kernel with 256 units,
#: 1.06x with 512, 1.16-1.23x with 1024; the kernel 1.1-2.2x torch below,
#: 4x on the step benchmark's mix of 16-128 units; docs/performance.rst).
WIDE_LAYER = 256


def torch_is_faster(spec):
    """Why torch would train this population faster than the kernel (the
    measured rule behind ``backend="auto"``), or None where the kernel is
    the faster path: most of its multiply-adds in hidden-to-hidden layers
    of :data:`WIDE_LAYER` units or more on both sides."""
    wide = total = 0
    for arch in spec.hidden_layer_sizes:
        for n_in, n_out in zip(arch[:-1], arch[1:]):
            total += n_in * n_out
            if min(n_in, n_out) >= WIDE_LAYER:
                wide += n_in * n_out
        total += sum(arch)  # the input and output layers, per feature and output
    if total and wide / total > 0.5:
        return f"hidden layers of {WIDE_LAYER}+ units on both sides hold most of the work"
    return None


def choose_trainer(spec, config):
    """The trainer class for this run: the native one unless the config asks
    for torch, the kernel cannot run here (``backend="native"`` then raises
    with the reason), or, with ``backend="auto"``, torch is measured to be
    faster for such a population (:func:`torch_is_faster`)."""
    if config.backend == "torch":
        return PopulationTrainer
    gpu = gpu_trainer(spec, config)  # CUDA, or backend="triton": the Triton kernels or torch
    if gpu is not None:
        return gpu
    reason = native_supported(config, spec)
    if reason is None and not _kernels.kernel_available():
        reason = f"the kernel could not be built ({_kernels.build_info()['error']})"
    if reason is None and (config.backend == "native" or torch_is_faster(spec) is None):
        return NativeTrainer
    if config.backend == "native":
        raise ValueError(f"backend='native' cannot train this run: {reason}.")
    return PopulationTrainer


def fallback_reason(spec, config):
    """Why a CPU run with ``backend="auto"`` trains on torch rather than the
    native kernel (``verbose`` says it), or None where it does not."""
    if config.backend != "auto" or choose_trainer(spec, config) is not PopulationTrainer:
        return None
    if gpu_trainer(spec, config) is not None:
        return None  # a CUDA run: describe_gpu_backend says why
    reason = native_supported(config, spec)
    if reason is None and not _kernels.kernel_available():
        reason = "the kernel could not be built"
    return reason or torch_is_faster(spec)


def prepare_kernel(config, *, verbose=False):
    """Build (or load from the cache) the native kernel before a CPU run,
    announcing a first-use compile and its time when ``verbose``; whether it
    will train the run's epochs."""
    try:
        on_cpu = torch.device(config.device).type == "cpu"
    except (RuntimeError, TypeError):  # "auto", resolved where the run happens
        on_cpu = not torch.cuda.is_available()
    if verbose and not on_cpu:
        print(describe_gpu_backend(config), file=sys.stderr)
    if config.backend == "torch" or not on_cpu:
        return False
    return _kernels.kernel_available(verbose=verbose)
