"""The float32 (or float64) multiply-add peak of one core at each kernel build's vector width.

``step.py``'s limit is a large ``torch.mm``: the widest vectors this CPU
has. A kernel built for a narrower target (``x86-64-v3``: AVX2 and FMA,
``x86-64-v2``: SSE4.2, no FMA) cannot reach it, and what its build can
reach is this script's figure: a harness that includes the kernel's source
(``skpmlp/_kernels/mlp_step.cpp``, as ``vector_math.py`` does), compiled
for the target with the kernel's flags, runs ``a = a * m + b`` on
independent vectors of the kernel's own type (``VT<float>::V``, its
``VBYTES``), as many as its registers hold less four, so that neither
latency nor spills bound it. The compiler contracts each update into one
FMA where the target has one and leaves a multiply and an add where it
has none (SSE4.2), as it does in the kernel. A multiply-add counts 2 FLOPs.
Reported: GFLOP/s of one thread, the best of ``--rounds`` runs of each
build, the builds in turn. ``--dtype float64`` times the same chains of
doubles (``VT<double>::V``), the L-BFGS kernel's type: the limit
``lbfgs.py --limits`` sets beside ``torch.mm``'s float64 rate, which on
some CPUs is far below it (AMD Zen 5: 51 of 117 GFLOP/s a thread).

Usage::

    python benchmarks/arithmetic_peak.py
    python benchmarks/arithmetic_peak.py --targets native,x86-64-v3,x86-64-v2
    python benchmarks/arithmetic_peak.py --dtype float64

Writes ``benchmarks/results/arithmetic_peak.json``.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(HERE.parent))
from _harness import compile_harness, kernel_source, write_results  # noqa: E402

KERNEL = kernel_source()

HARNESS = r"""
#include "{source}"
#include <chrono>
#include <cstdio>

typedef {ctype} T;
typedef VT<T>::V V;
constexpr int N = VREGS - 4;  // independent chains: the rest hold m, b and spare

// seconds of `iterations` rounds of a = a * m + b on every chain; a whole
// function, so that the chains live in registers across the loop
__attribute__((noinline)) double chains(V* out, long iterations) {{
    V a[N];
    for (int i = 0; i < N; ++i) a[i] = vsplat<T>(T(1e-3) * T(i));
    const V m = vsplat<T>(T(0.999)), b = vsplat<T>(T(1e-7));
    const auto start = std::chrono::steady_clock::now();
    for (long it = 0; it < iterations; ++it) {{
#pragma GCC unroll 32
        for (int i = 0; i < N; ++i) a[i] = a[i] * m + b;
    }}
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (int i = 0; i < N; ++i) out[i] = a[i];  // every chain's result is used
    return seconds;
}}

int main() {{
    const long iterations = 5000000;
    V a[N];
    double best = 1e30;
    for (int run = 0; run < 5; ++run) best = std::min(best, chains(a, iterations));
    T check = 0;
    for (int i = 0; i < N; ++i) check += vsum<T>(a[i]);
    std::printf("%.3f %d %d %g\n", 2.0 * N * VT<T>::L * iterations / best * 1e-9, VBYTES, N, double(check));
}}
"""


# GB/s at which one thread reads two vectors of `values` T each (argv[1])
# through a dot product: as many independent chains of the kernel's vector
# type as its registers hold less four, each vector read once a pass, the
# best of many passes. Sized to stay in L2 (see read_rate), this is the
# rate at which the L-BFGS kernel can stream a model's curvature pairs.
READ_HARNESS = r"""
#include "{source}"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

typedef {ctype} T;
typedef VT<T>::V V;
constexpr int N = VREGS - 4;
constexpr int L = VT<T>::L;

// noipa: a pure function of unchanged vectors, its passes would be folded
__attribute__((noipa)) T dot(const T* a, const T* b, long n) {{
    V acc[N] = {{}};
    for (long e = 0; e + N * L <= n; e += N * L)
#pragma GCC unroll 32
        for (int i = 0; i < N; ++i) acc[i] += vload(a + e + i * L) * vload(b + e + i * L);
    T sum = 0;
    for (int i = 0; i < N; ++i) sum += vsum<T>(acc[i]);
    return sum;
}}

int main(int argc, char** argv) {{
    const long n = std::atol(argv[1]) / (N * L) * (N * L);
    std::vector<T> a(n, T(1e-3)), b(n, T(2e-3));
    const long passes = 200000000 / n + 1;
    double best = 1e30;
    T check = 0;
    for (int run = 0; run < 20; ++run) {{
        const auto start = std::chrono::steady_clock::now();
        for (long p = 0; p < passes; ++p) check += dot(a.data(), b.data(), n);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }}
    std::printf("%.3f %g\n", 2.0 * n * sizeof(T) * passes / best * 1e-9, double(check));
}}
"""


def l2_bytes(default=512 * 1024):
    """One core's L2 cache in bytes (Linux's sysfs), or ``default``."""
    try:
        text = Path("/sys/devices/system/cpu/cpu0/cache/index2/size").read_text().strip()
    except OSError:
        return default
    units = {"K": 1024, "M": 1024**2}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def read_rate(target="native", dtype="float64", total_bytes=None, rounds=3):
    """GB/s at which one thread streams two vectors of ``dtype`` from L2
    (:data:`READ_HARNESS`, compiled for ``target``): the vectors together
    half of the core's L2 by default (more than L1 holds, with room left
    for what else L2 keeps), the best of ``rounds`` runs."""
    total_bytes = total_bytes or l2_bytes() // 2
    values = total_bytes // 2 // (4 if dtype == "float32" else 8)
    with tempfile.TemporaryDirectory() as workdir:
        binary = build(target, workdir, "read", dtype, READ_HARNESS)
        return max(float(subprocess.run([str(binary), str(values)], check=True, capture_output=True,
                                        text=True).stdout.split()[0]) for _ in range(rounds))


#: the harness's C++ type of each dtype
CTYPES = {"float32": "float", "float64": "double"}


def build(target, workdir, name="peak", dtype="float32", harness=HARNESS):
    """``harness`` (the peak harness by default) of ``dtype`` compiled for
    ``target``: its path."""
    return compile_harness(harness.format(source=KERNEL.resolve(), ctype=CTYPES[dtype]), target, workdir, name)


def run(binary):
    """``(GFLOP/s, vector bytes, chains)`` of one run of ``binary``."""
    gflops, vector_bytes, chains, _ = subprocess.run(
        [str(binary)], check=True, capture_output=True, text=True).stdout.split()
    return float(gflops), int(vector_bytes), int(chains)


def measure(targets, rounds=3, dtype="float32"):
    """``{target: (GFLOP/s, vector bytes, chains)}`` in ``dtype``: the best
    of ``rounds`` runs of each target's build, the builds in turn (a noisy
    spell of a shared machine falls on all of them alike)."""
    best = {}
    with tempfile.TemporaryDirectory() as workdir:
        binaries = {target: build(target, workdir, f"peak{i}", dtype) for i, target in enumerate(targets)}
        for _ in range(rounds):
            for target, binary in binaries.items():
                result = run(binary)
                if target not in best or result[0] > best[target][0]:
                    best[target] = result
    return best


def peaks(targets, rounds=3, dtype="float32"):
    """``{target: GFLOP/s}``: one thread's multiply-add peak in ``dtype``
    at each target's vector width (:func:`measure`)."""
    return {target: gflops for target, (gflops, _, _) in measure(targets, rounds, dtype).items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="native,x86-64-v3,x86-64-v2", help="comma-separated -march values")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every build, interleaved")
    parser.add_argument("--dtype", choices=sorted(CTYPES), default="float32")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args(argv)
    results = measure(args.targets.split(","), args.rounds, args.dtype)
    widest = max(gflops for gflops, _, _ in results.values())
    rows = []
    print(f"{'target':>10} {'bytes':>5} {'chains':>6} {'GFLOP/s':>8} {'of widest':>9}")
    for target, (gflops, vector_bytes, chains) in results.items():
        rows.append({"target": target, "vector_bytes": vector_bytes, "chains": chains, "gflops": gflops,
                     "of_widest": gflops / widest})
        print(f"{target:>10} {vector_bytes:>5} {chains:>6} {gflops:8.1f} {gflops / widest:9.0%}")
    name = "arithmetic_peak" if args.dtype == "float32" else f"arithmetic_peak_{args.dtype}"
    write_results(args.out, name, {"argv": sys.argv[1:], "dtype": args.dtype, "rows": rows})


if __name__ == "__main__":
    main()
