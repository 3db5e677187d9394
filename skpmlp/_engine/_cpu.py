"""CPU settings that make fused training memory-friendly, scoped to a fit.

Measured on the paper grid (2-core x86 CPU, profiled with torch.profiler):

* every step allocates and frees activation tensors of tens of MB; glibc
  serves those with fresh ``mmap`` pages, so each step pays first-touch page
  faults (elementwise ops ran 2-3x slower than copy bandwidth allows).
  Keeping large blocks on the heap lets them be reused;
* denormal floats, which appear in near-converged weights and gradients,
  slowed some activations (hardshrink) by 40x; flushing them to zero
  changes results only below 1e-38.

Both are process-wide switches, so :func:`fast_cpu_training` sets them for
the duration of a fit only and restores glibc's defaults afterwards.
"""

import contextlib
import ctypes
import ctypes.util
import sys

import torch

_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536


def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


@contextlib.contextmanager
def fast_cpu_training(device):
    """Heap-reused allocations and flush-to-zero while training on the CPU."""
    if torch.device(device).type != "cpu":
        yield
        return
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_MMAP_MAX, 0)
        libc.mallopt(_M_TRIM_THRESHOLD, 2**30)
    flushed = torch.set_flush_denormal(True)
    try:
        yield
    finally:
        if flushed:
            torch.set_flush_denormal(False)
        if libc is not None:
            libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
            libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
            libc.malloc_trim(0)
