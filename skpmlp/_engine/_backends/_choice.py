"""Which trainer trains a run: the dispatcher over the backends.

:func:`choose_trainer` picks the class that trains a run's epochs: torch's
fused ops (:class:`~skpmlp._engine._backends._torch.PopulationTrainer`, the
reference), the native CPU kernel
(:class:`~skpmlp._engine._backends._native.NativeTrainer`) or the Triton
kernels on CUDA (:class:`~skpmlp._engine._backends._triton.TritonTrainer`),
by the config's ``backend``, the device and measured rules;
:func:`run_device` resolves ``device="auto"`` for a run (the CPU unless
the GPU is measured to win on such a run); :func:`prepare_kernel` builds
the native kernel before a CPU run.
"""

import dataclasses
import os
import sys

import torch

from ... import _kernels
from .._device import resolve_device
from ._native import NativeTrainer, native_supported
from ._torch import PopulationTrainer
from ._triton import describe_gpu_backend, gpu_trainer, triton_installed, triton_unsupported

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


#: ``device="auto"`` trains a run on CUDA only where its epochs would keep
#: the native CPU kernel busy at least this long (estimated by
#: :func:`cpu_seconds`). Measured on one H100 with a 16-core host
#: (``benchmarks/device_choice.py``): the Triton kernels compiled 17-50 s at a
#: process's first CUDA fit, then train an epoch 1.9-3.8x faster than the
#: native kernel on all 16 cores (240 models on 4,000 rows, 400 on 15,000),
#: so the GPU repaid its compile from about a minute of CPU work on. Since
#: a run's kernels compile side by side (``TritonTrainer._compile_launches``) the two
#: largest first fits took 20-21 s instead of 42-49 s; the threshold has not
#: been derived again from ``device_choice.py`` since, so it errs towards
#: the CPU.
AUTO_CUDA_SECONDS = 60.0
#: The native kernel's float32 rate per thread assumed by the estimate
#: (GFLOP/s): 22-29 measured per thread of the 16-core H100 host, 72 per
#: core of a 2-core AMD Zen 4.
CPU_GFLOPS_PER_THREAD = 30.0


def cpu_seconds(spec, config, n_features, fold_rows, threads=None):
    """Estimated seconds of a run's epochs on the native CPU kernel: every
    model's multiply-adds per row at its real widths, x 6 (forward, input
    and weight gradients), x every fold's training rows, x ``max_iter``
    epochs (an upper bound: early stopping and halving end models sooner),
    at :data:`CPU_GFLOPS_PER_THREAD` on ``threads`` (torch's count)."""
    row_macs = 0
    for arch in spec.hidden_layer_sizes:
        sizes = [n_features, *arch, config.n_outputs]
        row_macs += sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    flops = 6.0 * row_macs * sum(fold_rows) * config.max_iter
    threads = threads or torch.get_num_threads() or os.cpu_count() or 1
    return flops / (threads * CPU_GFLOPS_PER_THREAD * 1e9)


def auto_device(spec, config, n_features, fold_rows):
    """Where ``device="auto"`` trains this run, and why: ``("cuda", reason)``
    or ``("cpu", reason)``.

    CUDA only where a GPU is visible, a fast path on it trains the
    population (the Triton kernels, or torch's GEMMs for a population
    whose work lies mostly in hidden layers of :data:`WIDE_LAYER` units or
    more) and the epochs would keep the CPU busy :data:`AUTO_CUDA_SECONDS`
    or longer; else the CPU. A population the Triton kernels cannot train
    (a hidden layer wider than they take, say) would train on torch's
    CUDA ops, measured 8-9x slower per epoch than the native kernel on
    widths up to 256, so it stays on the CPU.
    """
    if not torch.cuda.is_available():
        return "cpu", "no CUDA device here"
    on_cuda = dataclasses.replace(config, device="cuda")
    if torch_is_faster(spec) is not None:
        path = "torch's CUDA matmuls (wide hidden layers)"
    elif not triton_installed():
        return "cpu", "triton is not installed (torch's CUDA ops train such a population slower)"
    else:
        reason = triton_unsupported(on_cuda, spec)
        if reason is None and any(o.solver == "lbfgs" for o in spec.optimizers_of(config)):
            reason = "L-BFGS trains on the CPU kernel"
        if reason is not None:  # torch's CUDA ops would train it, slower
            return "cpu", f"the Triton kernels cannot train it ({reason})"
        path = "the Triton kernels"
    seconds = cpu_seconds(spec, config, n_features, fold_rows)
    if seconds < AUTO_CUDA_SECONDS:
        return "cpu", (f"its epochs are about {seconds:.2g} s of CPU work, under the "
                       f"{AUTO_CUDA_SECONDS:.0f} s from which the GPU repays its start")
    return "cuda", (f"its epochs are about {seconds:.0f} s of CPU work: the GPU trains them "
                    f"faster on {path}")


def _auto_device_of(spec, config, X, folds):
    """:func:`auto_device` for a run on ``X`` (n_samples, n_features) and
    ``folds`` (training rows, evaluation rows)."""
    return auto_device(spec, config, X.shape[1], [len(train) for train, _ in folds])


def run_device(spec, config, X, folds):
    """The device this run trains on, on this machine: ``config.device``
    resolved (:func:`~skpmlp._engine._device.resolve_device`), with
    ``"auto"`` decided by :func:`auto_device` for this population and
    data."""
    if config.device != "auto" or not torch.cuda.is_available():
        return resolve_device(config.device)
    return _auto_device_of(spec, config, X, folds)[0]


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


def prepare_kernel(config, *, verbose=False, workload=None):
    """Build (or load from the cache) the native kernel before a CPU run,
    announcing a first-use compile and its time when ``verbose``; whether it
    will train the run's epochs. ``workload``: the run's ``(spec, X,
    folds)``, which decide ``device="auto"`` where CUDA is there (verbose
    says where it trains and why)."""
    device = config.device
    if device == "auto" and torch.cuda.is_available():
        if workload is None:
            device = "cuda"
        else:
            spec, X, folds = workload
            device, why = _auto_device_of(spec, config, X, folds)
            if verbose:
                print(f"[skpmlp] device='auto' trains on {device}: {why}", file=sys.stderr)
    on_cpu = device == "auto" or torch.device(device).type == "cpu"
    if verbose and not on_cpu:
        print(describe_gpu_backend(dataclasses.replace(config, device=device)), file=sys.stderr)
    if config.backend == "torch" or not on_cpu:
        return False
    return _kernels.kernel_available(verbose=verbose)
