"""Reproduce the paper's Table 1/2 workloads: skpmlp vs M3, a padded pack and
sequential training.

10,000 models (hidden widths 1..100 x the ten activations x 10 repeats) on
synthetic 2-class data, samples {100, 1000, 10000} x features {5, 10, 50,
100} x batch {32, 128, 256}; plus a 10-class case and seed 001's
learning-rate grid on a 784-1024-10 sigmoid net. Reports time per epoch of

(a) skpmlp (the native per-model kernel on the CPU, where it builds; the
Triton kernels on CUDA, where triton is installed), (b) skpmlp's
torch engine, (c) the paper's M3, (d) a padded pack, (e) sequential training (a
sample of models, extrapolated),

with, for every cell, the limit: FLOP-bound time (the models' FLOPs / the
measured matmul GFLOP/s) and memory-bound time (bytes that must move / the
measured copy bandwidth).

Per-step cost does not depend on the number of samples, so each (features,
batch) pair is measured once per method, per step, and an epoch is
``ceil(n_samples / batch)`` steps (a batch larger than the data is clipped,
as in training).

Usage::

    python benchmarks/paper_grid.py            # the full grid
    python benchmarks/paper_grid.py --quick    # a few cells
    python benchmarks/paper_grid.py --models 2000 --device cuda

Writes ``benchmarks/results/paper_grid_<device>.json`` and ``.png``.
"""

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _baselines import M3Population, PaddedPopulation, SequentialModel  # noqa: E402
from _harness import PeakMemory, machine_limits, seconds_per_call  # noqa: E402

from skpmlp._engine import ACTIVATIONS, PopulationSpec, TrainConfig  # noqa: E402
from skpmlp._engine._backends import choose_trainer  # noqa: E402
from skpmlp._engine._backends._torch import PopulationTrainer  # noqa: E402
from skpmlp._engine._minibatch._batches import BatchPlanner  # noqa: E402

SAMPLES = (100, 1000, 10000)
FEATURES = (5, 10, 50, 100)
BATCHES = (32, 128, 256)
METHODS = ("skpmlp", "skpmlp_torch", "m3", "padded", "sequential")


def paper_population(n_models):
    """Widths 1..100 x ten activations x repeats (10,000 models by default)."""
    activations = list(ACTIVATIONS)
    if n_models >= 1000:
        widths, repeats = range(1, 101), n_models // 1000
    else:
        widths, repeats = np.unique(np.linspace(1, 100, max(1, n_models // 10)).astype(int)), 1
    rows = [(int(w), a, r) for w in widths for a in activations for r in range(repeats)]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def skpmlp_trainer(widths, activations, repeats, n_features, n_outputs, device, lr=1e-3, backend="auto"):
    n = len(widths)
    spec = PopulationSpec(
        hidden_layer_sizes=[(w,) for w in widths],
        activations=activations,
        learning_rates=np.full(n, lr),
        alphas=np.zeros(n),
        init_seeds=[(0, r, i) for i, r in enumerate(repeats)],
    )
    config = TrainConfig(task="classification", n_outputs=n_outputs, device=device, backend=backend)
    return choose_trainer(spec, config)(spec, config, n_features)


def epoch_step(trainer, X, y, batch):
    """``step()``: seconds are per epoch of ``ceil(len(X) / batch)`` steps
    (the native kernel's unit of work); returns the step count."""
    plan = BatchPlanner([np.arange(X.shape[0])], batch, 0, None, dtype=X.dtype, device=X.device).next_epoch()
    return (lambda: trainer.run_epoch(X, y, plan)), plan.n_steps


def single_fold_step(trainer):
    """``step(xb, yb)``: one fused training step on an unweighted batch, the
    one-fold arguments of :meth:`PopulationTrainer.train_step` built once."""
    cache = {}

    def step(xb, yb):
        B = xb.shape[0]
        if B not in cache:
            net = trainer.net
            cache[B] = (
                torch.full((1, B), 1.0 / B, dtype=net.dtype, device=net.device),
                torch.full((1,), float(B), dtype=net.dtype, device=net.device),
                np.array([float(B)]),
                np.array([True]),
            )
        trainer.train_step(xb[None], yb[None], *cache[B])

    return step


def model_flops_and_bytes(widths, n_features, n_outputs, batch, itemsize=4):
    """FLOPs and minimum bytes moved by one training step of the real models.

    FLOPs: forward 2 * B * (F*h + h*C) per model, backward twice that.
    Bytes: Adam reads p, g, m, v and writes p, m, v, and the gradient is
    cleared (8 accesses per parameter); hidden activations are written and
    read at least twice each way (4 accesses per unit and sample).
    """
    hidden = float(np.sum(widths))
    params = hidden * (n_features + 1 + n_outputs) + len(widths) * n_outputs
    flops = 6 * batch * hidden * (n_features + n_outputs)
    moved = itemsize * (8 * params + 4 * batch * hidden + batch * n_features)
    return flops, moved


def measure(method, widths, activations, repeats, n_features, batch, n_outputs, device, seq_sample):
    """Seconds per training step (all models) and peak memory of ``method``."""
    gen = torch.Generator(device="cpu").manual_seed(0)
    X = torch.randn(max(batch, 1000), n_features, generator=gen).to(device)
    y = torch.randint(0, n_outputs, (X.shape[0],), generator=gen).to(device)
    batches = [torch.randperm(X.shape[0], generator=gen)[:batch].to(device) for _ in range(8)]
    cursor = {"i": 0}

    def next_batch():
        cursor["i"] = (cursor["i"] + 1) % len(batches)
        index = batches[cursor["i"]]
        return X[index], y[index]

    setup = time.perf_counter()
    with PeakMemory(device) as peak:
        if method == "sequential":
            picks = np.linspace(0, len(widths) - 1, seq_sample).astype(int)
            per_model = []
            for i in picks:
                model = SequentialModel(widths[i], activations[i], n_features, n_outputs, device=device)
                per_model.append(
                    seconds_per_call(lambda: model.step(*next_batch()), device=device, warmup=1,
                                     target_seconds=0.05, repeats=1)
                )
            step = float(np.mean(per_model)) * len(widths)
            setup = None
        else:
            steps_per_call = 1
            if method in ("skpmlp", "skpmlp_torch"):
                backend = "auto" if method == "skpmlp" else "torch"
                trainer = skpmlp_trainer(widths, activations, repeats, n_features, n_outputs, device,
                                         backend=backend)
                if trainer.backend in ("native", "triton"):  # kernels: a whole epoch per call
                    fn, steps_per_call = epoch_step(trainer, X, y, batch)
                else:
                    train = single_fold_step(trainer)
                    fn = lambda: train(*next_batch())  # noqa: E731
            else:
                cls = M3Population if method == "m3" else PaddedPopulation
                pop = cls(widths, activations, n_features, n_outputs, device=device)
                fn = lambda: pop.step(*next_batch())  # noqa: E731
            setup = time.perf_counter() - setup
            step = seconds_per_call(fn, device=device, warmup=2, target_seconds=0.5, repeats=3) / steps_per_call
    return {"seconds_per_step": step, "peak_bytes": peak.bytes, "setup_seconds": setup}


def run_pairs(pairs, widths, activations, repeats, n_outputs, device, seq_sample, methods):
    measured = {}
    for n_features, batch in pairs:
        for method in methods:
            result = measure(method, widths, activations, repeats, n_features, batch, n_outputs, device, seq_sample)
            measured[(n_features, batch, method)] = result
            mem = result["peak_bytes"]
            print(
                f"  measured F={n_features:<4} B={batch:<4} {method:<10} "
                f"{result['seconds_per_step'] * 1e3:10.2f} ms/step"
                + (f"  peak {mem / 2**20:8.1f} MiB" if mem is not None else ""),
                flush=True,
            )
    return measured


def seed001_case(device, limits):
    """Seed 001: lr grid [0.001 .. 1.0] on 784-1024-10 sigmoid, 60,000 samples."""
    lrs = [0.001, 0.002, 0.01, 0.1, 0.5, 1.0]
    n, F, C, B = 60000, 784, 10, 256
    spec = PopulationSpec([(1024,)] * 6, ["logistic"] * 6, np.array(lrs), np.zeros(6),
                          [(0, i) for i in range(6)])
    config = TrainConfig(task="classification", n_outputs=C, solver="sgd", momentum=0.0, device=device)
    step_fn = single_fold_step(PopulationTrainer(spec, config, F))
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(4096, F, generator=gen).to(device)
    y = torch.randint(0, C, (4096,), generator=gen).to(device)
    index = torch.randperm(4096, generator=gen)[:B].to(device)
    step = seconds_per_call(lambda: step_fn(X[index], y[index]), device=device)
    flops, moved = model_flops_and_bytes([1024] * 6, F, C, B)
    epoch = step * math.ceil(n / B)
    return {
        "models": 6, "samples": n, "features": F, "classes": C, "batch": B,
        "seconds_per_epoch": epoch, "achieved_gflops": flops / step / 1e9,
        "flop_bound_seconds_per_epoch": flops / (limits["matmul_gflops"] * 1e9) * math.ceil(n / B),
        "memory_bound_seconds_per_epoch": moved / (limits["copy_gbytes_per_s"] * 1e9) * math.ceil(n / B),
    }


def build_rows(cells, measured, widths, n_outputs, limits, methods):
    rows = []
    for n_samples, n_features, batch in cells:
        b = min(batch, n_samples)
        steps = math.ceil(n_samples / b)
        flops, moved = model_flops_and_bytes(widths, n_features, n_outputs, b)
        row = {
            "samples": n_samples, "features": n_features, "batch": batch, "classes": n_outputs,
            "steps_per_epoch": steps,
            "flop_bound": flops / (limits["matmul_gflops"] * 1e9) * steps,
            "memory_bound": moved / (limits["copy_gbytes_per_s"] * 1e9) * steps,
        }
        for method in methods:
            m = measured[(n_features, b, method)]
            row[method] = m["seconds_per_step"] * steps
            row[f"{method}_peak_mib"] = None if m["peak_bytes"] is None else m["peak_bytes"] / 2**20
        row["limit"] = max(row["flop_bound"], row["memory_bound"])
        row["of_limit"] = row["skpmlp"] / row["limit"]
        for method in methods[1:]:
            row[f"vs_{method}"] = row[method] / row["skpmlp"]
        rows.append(row)
    return rows


def print_table(rows, methods):
    head = f"{'N':>6} {'F':>4} {'B':>4} {'C':>3} | " + " ".join(f"{m:>10}" for m in methods)
    head += " | " + " ".join(f"{'x ' + m:>12}" for m in methods[1:])
    head += f" | {'flop-bound':>10} {'mem-bound':>10} {'x limit':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        line = f"{r['samples']:>6} {r['features']:>4} {r['batch']:>4} {r['classes']:>3} | "
        line += " ".join(f"{r[m]:>9.3f}s" for m in methods)
        line += " | " + " ".join(f"{r['vs_' + m]:>11.1f}x" for m in methods[1:])
        line += f" | {r['flop_bound']:>9.3f}s {r['memory_bound']:>9.3f}s {r['of_limit']:>7.1f}x"
        print(line)


def plot(rows, methods, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG written")
        return
    labels = [f"{r['samples']}/{r['features']}/{r['batch']}/{r['classes']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.35 * len(rows)), 4.5))
    x = np.arange(len(rows))
    width = 0.8 / (len(methods) - 1)
    for k, method in enumerate(methods[1:]):
        ax.bar(x + k * width, [r[f"vs_{method}"] for r in rows], width, label=f"vs {method}")
    ax.set_yscale("log")
    ax.axhline(1, color="k", lw=0.8)
    ax.set_xticks(x + width * (len(methods) - 2) / 2, labels, rotation=90, fontsize=7)
    ax.set_xlabel("samples / features / batch / classes")
    ax.set_ylabel("skpmlp speedup (epoch time ratio)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few cells only")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models", type=int, default=10000)
    parser.add_argument("--sequential-sample", type=int, default=10,
                        help="models timed for the sequential baseline (then extrapolated)")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    methods = tuple(m for m in METHODS if m in args.methods.split(","))
    assert methods[0] == "skpmlp", "skpmlp must be measured"
    torch.manual_seed(0)

    limits = machine_limits(args.device)
    print(f"device {args.device}: matmul {limits['matmul_gflops']:.1f} GFLOP/s, "
          f"copy {limits['copy_gbytes_per_s']:.1f} GB/s, torch threads {torch.get_num_threads()}")
    widths, activations, repeats = paper_population(args.models)
    print(f"{len(widths)} models, {sum(widths)} hidden units")

    if args.quick:
        cells = [(1000, 10, 32), (1000, 100, 256), (10000, 50, 128)]
    else:
        cells = [(n, f, b) for f in FEATURES for n in SAMPLES for b in BATCHES]
    pairs = sorted({(f, min(b, n)) for n, f, b in cells})
    measured = run_pairs(pairs, widths, activations, repeats, 2, args.device, args.sequential_sample, methods)
    rows = build_rows(cells, measured, widths, 2, limits, methods)
    ten_class = run_pairs([(100, 256)], widths, activations, repeats, 10, args.device, args.sequential_sample, methods)
    rows += build_rows([(1000, 100, 256)], ten_class, widths, 10, limits, methods)

    print()
    print("time per epoch (seconds), speedup of skpmlp, and the machine's limit")
    print_table(rows, methods)
    seed001 = seed001_case(args.device, limits)
    print()
    print(f"seed 001 (6 learning rates, 784-1024-10 sigmoid, 60,000 samples, batch 256): "
          f"{seed001['seconds_per_epoch']:.2f} s/epoch, {seed001['achieved_gflops']:.1f} GFLOP/s "
          f"(flop-bound {seed001['flop_bound_seconds_per_epoch']:.2f} s, memory-bound "
          f"{seed001['memory_bound_seconds_per_epoch']:.2f} s)")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tag = torch.device(args.device).type
    report = {
        "device": args.device, "machine": platform.processor() or platform.machine(),
        "torch": torch.__version__, "threads": torch.get_num_threads(), "limits": limits,
        "models": len(widths), "rows": rows, "seed001": seed001,
    }
    (out / f"paper_grid_{tag}.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {out / f'paper_grid_{tag}.json'}")
    plot(rows, methods, out / f"paper_grid_{tag}.png")


if __name__ == "__main__":
    main()
