"""Register tiles and vector widths of the native kernel, timed side by side.

For each compile target, the kernel is built once per variant (compiler
defines: ``SKP_TILE_SHAPE=rows,vectors,rows,columns`` for the matmul's and
the weight gradient's register tiles, ``SKP_VECTOR_BYTES`` for a narrower
vector than the target's widest) and
times one epoch of the step benchmark's 240-model population
(``benchmarks/step.py``; ``--population``, ``--activations`` and every
model's ``--dropout`` rate as there) on one thread. Each variant runs in a child
process of its own (the kernel is loaded once per process); the time is the
child's thread CPU time per step, which other processes on a busy machine
disturb far less than wall time. This is how the tiles of
``skpmlp/_kernels/vector_target.h`` were chosen.

Usage::

    python benchmarks/tiles.py --targets native,x86-64-v3,x86-64-v2 \\
        --variants "" "SKP_TILE_SHAPE=6,2,3,3" "SKP_VECTOR_BYTES=32"
    python benchmarks/tiles.py --population csv --activations relu --dropout 0.15

Writes ``benchmarks/results/tiles.json``.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, statistics, sys, time
sys.path.insert(0, {here!r})
import numpy as np, torch
torch.set_num_threads(1)
from skpmlp._kernels import _build
_build._FLAGS = _build._FLAGS + {defines!r}
from skpmlp import _kernels
from skpmlp._engine import TrainConfig
from skpmlp._engine._minibatch._batches import BatchPlanner
from skpmlp._engine._backends._native import NativeTrainer
import step
step.use_population({population!r}, dropout={dropout!r})
step.ACTS[:] = {activations!r}
from step import BATCH, N_CLASSES, N_FEATURES, N_ROWS, population, step_flops
assert _kernels.kernel_available(), _kernels.build_info()["error"]
assert _kernels.build_info()["built_for"] == os.environ["SKPMLP_KERNEL_TARGET"], _kernels.build_info()
rng = np.random.default_rng(0)
dtype = getattr(torch, {dtype!r})
X = torch.tensor(rng.normal(size=(N_ROWS, N_FEATURES)), dtype=dtype)
y = torch.tensor(rng.integers(0, N_CLASSES, N_ROWS))
spec = population()
cfg = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH, dtype={dtype!r})
plan = BatchPlanner([np.arange(N_ROWS)], BATCH, 0, None, dtype=dtype, device="cpu").next_epoch()
trainer = NativeTrainer(spec, cfg, N_FEATURES, 1)
trainer.n_threads = 1
trainer.run_epoch(X, y, plan)
samples = []
for _ in range({epochs}):
    start = time.thread_time()
    trainer.run_epoch(X, y, plan)
    samples.append((time.thread_time() - start) / plan.n_steps)
info = _kernels.build_info()
print(json.dumps({{"seconds": statistics.median(samples), "gflop": step_flops(spec, BATCH) / 1e9,
                  "isa": info["isa"], "vector_bytes": info["vector_bytes"], "tiles": info["tiles"]}}))
"""


def run_variant(target, variant, dtype, epochs, population="wide", activations=("relu", "tanh", "gelu"),
                dropout=0.0):
    defines = [f"-D{d}" for d in variant.split()]
    env = dict(os.environ, SKPMLP_KERNEL_TARGET=target, OMP_NUM_THREADS="1")
    code = CHILD.format(here=str(HERE), defines=defines, dtype=dtype, epochs=epochs,
                       population=population, activations=list(activations), dropout=dropout)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="native")
    parser.add_argument("--variants", nargs="*", default=[""])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--epochs", type=int, default=7)
    parser.add_argument("--population", default="wide", choices=["wide", "narrow", "csv"],
                        help="step.py's population (--population there)")
    parser.add_argument("--activations", nargs="+", default=["relu", "tanh", "gelu"],
                        help="the population's activations (--activations of step.py)")
    parser.add_argument("--dropout", type=float, default=0.0, help="every model's dropout rate")
    args = parser.parse_args()
    rows = []
    print(f"{'target':>10} {'variant':>40} {'isa':>9} {'bytes':>5} {'tiles':>12} {'ms/step':>8} {'GFLOP/s':>8}")
    for target in args.targets.split(","):
        for variant in args.variants:
            result = run_variant(target, variant, args.dtype, args.epochs, args.population,
                                 args.activations, args.dropout)
            rows.append({"target": target, "variant": variant, **result})
            if "error" in result:
                print(f"{target:>10} {variant or '(default)':>40} failed: {result['error']}")
                continue
            tiles = result["tiles"]
            shape = f"{tiles['matmul'][0]}x{tiles['matmul'][1]},{tiles['outer'][0]}x{tiles['outer'][1]}"
            print(f"{target:>10} {variant or '(default)':>40} {result['isa']:>9} {result['vector_bytes']:>5} "
                  f"{shape:>12} {1e3 * result['seconds']:8.2f} {result['gflop'] / result['seconds']:8.1f}",
                  flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    name = "tiles" + ("" if args.population == "wide" else f"_{args.population}")
    name += "" if args.activations == ["relu", "tanh", "gelu"] else "_" + "_".join(args.activations)
    name += f"_dropout{args.dropout:g}" if args.dropout else ""
    (out / f"{name}.json").write_text(json.dumps({
        "dtype": args.dtype, "population": args.population, "activations": args.activations,
        "dropout": args.dropout, "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
