"""What it costs to give each vector lane its own fold's rows (issue 39).

``benchmarks/models_in_lanes.py`` times one model per vector lane with every
lane reading the same batch row (a broadcast): the L models of a vector
share one fold and one architecture. A search has fewer such models than a
vector has lanes (the default space: 6 per fold and architecture; AVX2 has
8 lanes, AVX-512 16), so a vector would hold models of several folds, and
each lane must read its own fold's row. This script times the first
layer's forward pass (F = 4 inputs, H hidden units, every lane its own
weights) over a batch of 96 rows for a vector of models whose inputs come
three ways:

- ``broadcast``: every lane the same fold (models_in_lanes' case): one
  broadcast an input value;
- ``two folds``: lanes ``[0, 6)`` from one fold and the rest from another
  (models ordered fold-major within an architecture, so a vector spans at
  most two folds where 6 models share a fold): two broadcasts and a blend;
- ``per-lane copy``: each lane any fold (lane l of fold ``l % 5``): the
  step first copies every lane's rows into a lane-interleaved buffer (F
  values a model-row, scalar), which the product then loads.

It compiles a small C++ harness around the kernel's source (``#include`` of
``mlp_step.cpp``: its vector type), per target, and prints nanoseconds a
model-row (the best of 30 runs of 400 passes), the first layer's product
included, so the difference to ``broadcast`` is the packing's cost.

Usage::

    python benchmarks/lane_packing.py
    python benchmarks/lane_packing.py --targets native,x86-64-v2 --hidden 16 64

Writes ``benchmarks/results/lane_packing.json``.
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

constexpr int F = 4, B = 96, K = 5, H = {hidden}, SPLIT = 6;
typedef VT<float>::V V;
constexpr int L = VT<float>::L;

// the first layer of L models (weights W[f][h] a vector each) over the
// batch, relu(z) stored for each row and unit as the forward stores it
template <class Input> SKP_FORCE_INLINE void layer(const V* W, const V* bias, Input input, V* out) {{
    for (int b = 0; b < B; ++b) {{
        V x[F];
        for (int f = 0; f < F; ++f) x[f] = input(b, f);
        for (int h = 0; h < H; ++h) {{
            V z = bias[h];
            for (int f = 0; f < F; ++f) z += W[f * H + h] * x[f];
            out[b * H + h] = vmax(z, V{{}});
        }}
    }}
}}

template <class Pass> void time_pass(const char* name, Pass pass) {{
    double best = 1e30;
    for (int run = 0; run < 30; ++run) {{
        const auto start = std::chrono::steady_clock::now();
        for (int p = 0; p < 400; ++p) pass();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::min(best, s / (400.0 * B * L));
    }}
    std::printf("%s %.4f\n", name, best * 1e9);
}}

int main() {{
    std::vector<float> X(K * B * F);  // fold k's batch: X[(k * B + b) * F + f]
    for (size_t i = 0; i < X.size(); ++i) X[i] = float(int(i * 2654435761u % 1000)) / 500.0f - 1.0f;
    std::vector<V> W(F * H), bias(H);
    for (int i = 0; i < F * H; ++i)
        for (int l = 0; l < L; ++l) W[i][l] = float((i * 7 + l * 3) % 11) / 11.0f - 0.5f;
    for (int h = 0; h < H; ++h) bias[h] = vsplat(0.01f * h);
    std::vector<float> packed(B * F * L);
    int lane_fold[L];
    for (int l = 0; l < L; ++l) lane_fold[l] = l % K;
    V first{{}};
    for (int l = 0; l < L; ++l) first[l] = l < SPLIT ? 1.0f : 0.0f;
    const auto in_first = first > V{{}};
    std::vector<V> Z(B * H);
    time_pass("broadcast", [&] {{
        layer(W.data(), bias.data(), [&](int b, int f) {{ return vsplat(X[b * F + f]); }}, Z.data());
    }});
    time_pass("two_folds", [&] {{
        layer(W.data(), bias.data(), [&](int b, int f) {{
            return in_first ? vsplat(X[b * F + f]) : vsplat(X[(B + b) * F + f]);
        }}, Z.data());
    }});
    time_pass("per_lane_copy", [&] {{
        for (int b = 0; b < B; ++b)
            for (int f = 0; f < F; ++f)
                for (int l = 0; l < L; ++l) packed[(b * F + f) * L + l] = X[(lane_fold[l] * B + b) * F + f];
        layer(W.data(), bias.data(), [&](int b, int f) {{ return vload(packed.data() + (b * F + f) * L); }}, Z.data());
    }});
    float s = 0;
    for (int l = 0; l < L; ++l) s += Z[B * H / 2][l];
    std::fprintf(stderr, "%g\n", s);  // the outputs are used
}}
"""


def build(target, hidden, workdir):
    """The harness for ``hidden`` units, compiled for ``target``: its path."""
    return compile_harness(HARNESS.format(source=KERNEL.resolve(), hidden=hidden), target, workdir,
                           f"lane_packing_{target}_{hidden}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="native", help="comma-separated -march values")
    parser.add_argument("--hidden", type=int, nargs="+", default=[16, 64], help="hidden units")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every build, interleaved")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as workdir:
        builds = [(target, hidden, build(target, hidden, workdir))
                  for target in args.targets.split(",") for hidden in args.hidden]
        best = {}
        for _ in range(args.rounds):  # in turn: a noisy spell falls on every build alike
            for target, hidden, binary in builds:
                out = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
                for line in out.splitlines():
                    name, ns = line.split()
                    key = (target, hidden, name)
                    best[key] = min(best.get(key, float("inf")), float(ns))
    print("ns a model-row of the first layer's forward (F = 4), packing included; best of the runs")
    print(f"{'target':<12} {'hidden':>6} {'broadcast':>10} {'two folds':>10} {'per-lane copy':>14}")
    rows = []
    for target, hidden, _ in builds:
        ns = {name: best[(target, hidden, name)] for name in ("broadcast", "two_folds", "per_lane_copy")}
        rows.append({"target": target, "hidden": hidden, "ns_per_model_row": ns})
        print(f"{target:<12} {hidden:>6} {ns['broadcast']:>10.2f} {ns['two_folds']:>10.2f} "
              f"{ns['per_lane_copy']:>14.2f}")
    write_results(args.out, "lane_packing", {"argv": sys.argv[1:], "rows": rows})


if __name__ == "__main__":
    main()
