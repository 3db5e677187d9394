"""The native kernel's widths the float64 invariant tests train at.

``native`` is the CPU's own width (AVX-512 where it has it); besides it,
every narrower x86-64 level the CPU executes: ``x86-64-v3`` (AVX2 + FMA,
32-byte vectors) and ``x86-64-v2`` (SSE4.2, 16-byte vectors, no FMA). A
backend parameter ``"native:<target>"`` trains on the kernel built for that
target (conftest sets ``SKPMLP_KERNEL_TARGET`` for the test), so a kernel
bug at any width fails here, whatever CPU runs the suite.
"""

from skpmlp._kernels import executable_targets

#: The targets besides ``native``: the x86-64 levels narrower than AVX-512
#: that this CPU executes (none on other CPUs, where ``native`` is all).
NARROWER_TARGETS = [level for level in executable_targets() if level != "x86-64-v4"]
#: Every target the width tests build for.
KERNEL_TARGETS = ["native", *NARROWER_TARGETS]
#: The native backend at every width, for ``@pytest.mark.parametrize("backend", ...)``.
NATIVE_BACKENDS = ["native", *(f"native:{target}" for target in NARROWER_TARGETS)]


def backend_name(backend):
    """The engine's backend of a test backend parameter (``native:x86-64-v2`` -> ``native``)."""
    return backend.split(":", 1)[0]
