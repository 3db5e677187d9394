"""The native kernel's activation pass, timed per value at each compile target.

The kernel applies tanh, logistic and the other activations whose
``exp`` or division would not fit the matmul's registers in a pass of
their own over each block of rows (``activate_as`` in
``skpmlp/_kernels/mlp_step.cpp``): float32 through ``VMath<float>``, and
float64 through ``VMathF64`` for L-BFGS's full-batch evaluations. This
script compiles a small C++ harness around that source (``#include`` of
the file itself, so it times exactly the kernel's functions), once per
target, and reports nanoseconds per value: the best of 30 runs of 200
passes over 4,096 values in L1, spread over [-6, 6] (the range of
pre-activations; the clamps at +-9 and beyond are then never taken, as
in training), with the largest error against the C library's double
``tanh`` / ``1 / (1 + exp(-x))`` / ``0.5 x (1 + erf(x / sqrt 2))``
(GELU, float32 only: float64 GELU is the C library's ``erf`` lane by
lane).

Every build runs ``--rounds`` times (default 5), the builds in turn, and
the best of its runs is reported, so that a noisy spell of a shared
machine falls on all of them alike. ``--source`` times another copy of ``mlp_step.cpp`` beside this one (a
worktree of an earlier commit), for before / after ratios in one run.

Usage::

    python benchmarks/vector_math.py
    python benchmarks/vector_math.py --targets native,x86-64-v3,x86-64-v2
    python benchmarks/vector_math.py --source /tmp/old/skpmlp/_kernels/mlp_step.cpp

Writes ``benchmarks/results/vector_math.json``.
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

template <class T, int act, class M> void time_pass(const char* name, double (*reference)(double)) {{
    const long n = 4096;
    std::vector<T> z(n), a(n);
    for (long i = 0; i < n; ++i) z[i] = T(-6.0 + 12.0 * double(i % 1000) / 1000.0);
    double best = 1e30;
    for (int run = 0; run < 30; ++run) {{
        const auto start = std::chrono::steady_clock::now();
        for (int pass = 0; pass < 200; ++pass) activate_as<T, act, M>(z.data(), a.data(), n);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::min(best, seconds / (200.0 * n));
    }}
    double error = 0;
    for (long i = 0; i < n; ++i) error = std::max(error, std::abs(double(a[i]) - reference(double(z[i]))));
    std::printf("%s %.4f %.3g\n", name, best * 1e9, error);
}}

double tanh_reference(double x) {{ return std::tanh(x); }}
double logistic_reference(double x) {{ return 1.0 / (1.0 + std::exp(-x)); }}
double gelu_reference(double x) {{ return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }}

int main() {{
    time_pass<float, A_TANH, VMath<float>>("float32_tanh", tanh_reference);
    time_pass<float, A_LOGISTIC, VMath<float>>("float32_logistic", logistic_reference);
    time_pass<float, A_GELU, VMath<float>>("float32_gelu", gelu_reference);
    time_pass<double, A_TANH, VMathF64>("float64_tanh", tanh_reference);
    time_pass<double, A_LOGISTIC, VMathF64>("float64_logistic", logistic_reference);
}}
"""


def build(source, target, workdir, name):
    """The harness around ``source``, compiled for ``target``: its path."""
    return compile_harness(HARNESS.format(source=Path(source).resolve()), target, workdir, name)


def run(binary):
    """``{function: (ns a value, max abs error)}`` of one run of ``binary``."""
    out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    return {name: (float(ns), float(err)) for name, ns, err in (line.split() for line in out.splitlines())}


def activation_seconds(activations, dtype="float32", target="native", runs=3):
    """``{activation: seconds a value}`` of the kernel's ``dtype``
    activation pass for ``activations`` (float32: ``tanh``, ``logistic``,
    ``gelu``; float64: ``tanh``, ``logistic``) built for ``target``, one
    thread, values in L1: the best of ``runs`` runs (what the benchmarks'
    bounds count beside the products)."""
    with tempfile.TemporaryDirectory() as workdir:
        binary = build(KERNEL, target, workdir, "harness")
        results = [run(binary) for _ in range(runs)]
    return {name: min(r[f"{dtype}_{name}"][0] for r in results) * 1e-9 for name in activations}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="native", help="comma-separated -march values")
    parser.add_argument("--source", help="another mlp_step.cpp, timed beside this checkout's")
    parser.add_argument("--rounds", type=int, default=5, help="runs of every build, interleaved")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args(argv)
    sources = {"this": KERNEL, **({"other": Path(args.source)} if args.source else {})}
    builds = [(target, label, source) for target in args.targets.split(",") for label, source in sources.items()]
    best = {}
    with tempfile.TemporaryDirectory() as workdir:
        binaries = [build(source, target, workdir, f"harness{i}") for i, (target, _, source) in enumerate(builds)]
        # the builds run in turn, --rounds times: a noisy spell of the
        # machine falls on every build alike, and the best run is kept
        for _ in range(args.rounds):
            for key, binary in zip(builds, binaries):
                for function, (ns, error) in run(binary).items():
                    previous = best.get((key, function), (float("inf"), error))
                    best[(key, function)] = (min(previous[0], ns), error)
    rows = [{"target": target, "source": label, "path": str(source), "function": function,
             "ns_per_value": ns, "max_abs_error": error}
            for ((target, label, source), function), (ns, error) in best.items()]
    print(f"{'target':>10} {'source':>6} {'function':>17} {'ns/value':>9} {'max error':>10}")
    for r in rows:
        print(f"{r['target']:>10} {r['source']:>6} {r['function']:>17} {r['ns_per_value']:>9.3f} "
              f"{r['max_abs_error']:>10.2e}")
    write_results(args.out, "vector_math", {"argv": sys.argv[1:], "rows": rows})


if __name__ == "__main__":
    main()
