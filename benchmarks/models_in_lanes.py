"""Models in vector lanes against the native kernel, timed on the same small networks.

The native kernel (``skpmlp/_kernels/mlp_step.cpp``) puts a batch's rows in
the vector lanes and trains one model after another. A different layout
puts one model in each lane instead: every vector holds ``VT<float>::L``
models (4 for SSE, 8 for AVX2, 16 for AVX-512), all lanes read the same
broadcast rows, and each has its own weights, learning rate and L2 alpha.
``benchmarks/models_in_lanes.cpp`` is that layout for one or two hidden
layers (forward and backward R rows at a time into buffers, R = 2 for one
hidden layer and 8 for two, so that each load of the 64 x 32 layer's 64 KB
of weights serves 8 rows; the weight gradients in register tiles summing
over the batch; then Adam), written with the kernel's own
vector type, ``exp``, ``tanh`` and division (an ``#include`` of
``mlp_step.cpp``): the target a models-in-lanes path of the kernel should
reach.

Five networks, 4-16-3 relu, 4-64-3 relu, 4-16-3 tanh, 4-128-3 relu and
4-64-32-3 relu (relu after both hidden layers), softmax cross-entropy,
Adam, batch 96, 3,840 random rows (4 uniform features in [-2, 2], 3
random classes; drawn alike on both sides, not the same rows),
one thread, and the same 8 (learning rate, alpha) pairs on both sides
(1e-3 .. 8e-3 by 1e-3; 1e-4, 1e-3, 1e-2, 1e-1 in turn), repeated over
wider vectors. Both report nanoseconds of thread CPU time per model-row
(one model's forward, backward and share of the update for one training
row):

* lanes: the best of 20 runs of 6 epochs, in each of ``--lanes-runs``
  runs of the binary (default 5: a run takes a fraction of a second, which
  one busy moment of a shared machine would spoil); before them, the
  parameters of every lane after one epoch (40 steps) are checked against
  a scalar double reference (largest absolute difference, must be below
  1e-4: the binary fails, and this script with it, otherwise);
* kernel: ``train_population`` of the 8 models on one fold of the 3,840
  rows (no held-out rows, so no evaluation after each epoch, which the
  lanes side has none of either), 6 epochs, no stopping, the time inside
  the kernel's calls (``_harness.kernel_clock(time.thread_time)``, so not
  the Python around them), best of 10 fits after a warm-up fit, divided by
  8 x 3,840 x 6.

For each ``--targets`` entry the .cpp is compiled with the kernel's own
flags and that ``-march`` (about 25 s: the whole kernel source is
compiled with it), and the kernel is measured in a child process whose
``SKPMLP_KERNEL_TARGET`` is that target, so both sides run at the same
vector width.

Measured (2026-11-28, a shared 2-core AMD EPYC, Zen 4 without AVX-512,
while a test suite ran on the other core, load average 2-4: each figure the
better of two invocations), kernel / lanes ns a model-row: AVX2 (8 models a
vector) 19.5 / 11.2 (1.74x) 4-16-3 relu, 56.6 / 38.8 (1.46x) 4-64-3 relu,
26.4 / 19.1 (1.38x) 4-16-3 tanh, 105.3 / 81.6 (1.29x) 4-128-3 relu,
275.4 / 226.5 (1.22x) 4-64-32-3 relu; SSE4.2 (x86-64-v2, 4 a vector)
41.6 / 29.1 (1.43x), 120.0 / 92.6 (1.30x), 57.0 / 52.9 (1.08x),
224.3 / 187.5 (1.20x), 581.0 / 450.1 (1.29x); every lane within 5e-7 of
the reference. A model-row is 3 sum(fan_in x fan_out) - F x H1
multiply-adds (forward, the input deltas of every layer but the first,
every weight gradient): 272 for 4-16-3, 1,088 for 4-64-3, 2,176 for
4-128-3, 6,944 for 4-64-32-3. At 2.85 GHz and AVX2's 16 multiply-adds a
cycle, lanes / kernel reach 53 % / 31 % of that peak on 4-16-3 relu,
61 % / 42 % on 4-64-3, 58 % / 45 % on 4-128-3 and 67 % / 55 % on
4-64-32-3.

Usage::

    python benchmarks/models_in_lanes.py
    python benchmarks/models_in_lanes.py --targets native,x86-64-v3,x86-64-v2

Writes ``benchmarks/results/models_in_lanes.json``.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(HERE.parent))
from _harness import executable_flags, kernel_source, write_results  # noqa: E402
from _real_data import machine  # noqa: E402

from skpmlp._kernels import _build  # noqa: E402

KERNEL = kernel_source()
LANES = HERE / "models_in_lanes.cpp"
#: the networks as the .cpp names them: hidden widths, activation
NETWORKS = {"4-16-3_relu": ((16,), "relu"), "4-64-3_relu": ((64,), "relu"), "4-16-3_tanh": ((16,), "tanh"),
            "4-128-3_relu": ((128,), "relu"), "4-64-32-3_relu": ((64, 32), "relu")}
N_ROWS, N_FEATURES, N_CLASSES, BATCH, EPOCHS, N_MODELS = 3840, 4, 3, 96, 6, 8


def build(target, workdir):
    """``models_in_lanes.cpp`` compiled for ``target``: its path."""
    binary = Path(workdir) / f"models_in_lanes_{target}"
    subprocess.run(["g++", *executable_flags(target), f'-DSKP_KERNEL_SOURCE="{KERNEL}"', str(LANES), "-o", str(binary)],
                   check=True)
    return binary


def lanes_times(binary, runs):
    """``(isa, lanes, {network: (ns a model-row, max abs error)})``: the best
    of ``runs`` runs of ``binary``."""
    best = {}
    for _ in range(runs):
        done = subprocess.run([str(binary)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{binary.name} failed:\n{done.stdout}{done.stderr}")
        header, *lines = done.stdout.splitlines()
        _, lanes, isa = header.split()
        for name, ns, error in (line.split() for line in lines):
            previous = best.get(name, (float("inf"), 0.0))
            best[name] = (min(previous[0], float(ns)), max(previous[1], float(error)))
    return isa, int(lanes), best


def kernel_times(fits):
    """``{network: ns a model-row}`` of the kernel built for ``$SKPMLP_KERNEL_TARGET``,
    and its ISA and vector bytes (the child process's work)."""
    import numpy as np
    import torch
    from _harness import kernel_clock

    from skpmlp import _kernels
    from skpmlp._engine import PopulationSpec, TrainConfig, train_population

    torch.set_num_threads(1)
    target = _build.kernel_target()
    if not _kernels.kernel_available() or _kernels.build_info()["built_for"] != target:
        raise SystemExit(f"no kernel for {target}: {_kernels.build_info()}")
    rng = np.random.default_rng(42)
    X = rng.uniform(-2, 2, size=(N_ROWS, N_FEATURES)).astype(np.float32)
    y = rng.integers(0, N_CLASSES, N_ROWS)
    folds = [(np.arange(N_ROWS), None)]  # nothing to evaluate after each epoch
    models = range(N_MODELS)
    config = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH, max_iter=EPOCHS,
                         n_iter_no_change=10**6, backend="native", early_stopping=False)
    times = {}
    for network, (hidden, activation) in NETWORKS.items():
        spec = PopulationSpec([hidden] * N_MODELS, [activation] * N_MODELS,
                              np.array([1e-3 * (1 + m) for m in models]),
                              np.array([1e-4 * 10 ** (m % 4) for m in models]), [(0, m) for m in models])
        train_population(spec, dataclasses.replace(config, max_iter=1), X, y, folds)  # warm-up
        best = float("inf")
        for _ in range(fits):
            with kernel_clock(time.thread_time) as inside:
                train_population(spec, config, X, y, folds)
            best = min(best, inside[0])
        times[network] = best * 1e9 / (N_MODELS * N_ROWS * EPOCHS)
    info = _kernels.build_info()
    return {"isa": info["isa"], "vector_bytes": info["vector_bytes"], "ns": times}


def compiler():
    """The g++ that built the lanes binaries (its first line of ``--version``)."""
    return subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def kernel_child(target, fits):
    """:func:`kernel_times` in a child process built for ``target`` (the kernel loads once a process)."""
    env = dict(os.environ, SKPMLP_KERNEL_TARGET=target, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--kernel-child", "--fits", str(fits)],
                          capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"the kernel's measurement at {target} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="native", help="comma-separated -march values")
    parser.add_argument("--fits", type=int, default=10, help="timed fits of the kernel, each network")
    parser.add_argument("--lanes-runs", type=int, default=5, help="runs of the lanes binary")
    parser.add_argument("--out", default=str(HERE / "results"))
    parser.add_argument("--kernel-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.kernel_child:
        print(json.dumps(kernel_times(args.fits)))
        return
    rows = []
    print(f"{'target':>10} {'isa':>9} {'network':>14} {'kernel ns':>9} {'lanes ns':>8} {'ratio':>6} "
          f"{'lanes error':>11}")
    with tempfile.TemporaryDirectory() as workdir:
        for target in args.targets.split(","):
            isa, lanes, measured = lanes_times(build(target, workdir), args.lanes_runs)
            kernel = kernel_child(target, args.fits)
            for network, (ns, error) in measured.items():
                row = {"target": target, "network": network, "isa": isa, "models_per_vector": lanes,
                       "kernel_isa": kernel["isa"], "kernel_vector_bytes": kernel["vector_bytes"],
                       "kernel_ns_per_model_row": kernel["ns"][network], "lanes_ns_per_model_row": ns,
                       "ratio": kernel["ns"][network] / ns, "lanes_max_abs_error": error}
                rows.append(row)
                print(f"{target:>10} {isa:>9} {network:>14} {row['kernel_ns_per_model_row']:9.1f} "
                      f"{ns:8.1f} {row['ratio']:6.2f} {error:11.2e}", flush=True)
    write_results(args.out, "models_in_lanes", {"argv": sys.argv[1:], "machine": {**machine(), "compiler": compiler()}, "rows": rows})


if __name__ == "__main__":
    main()
