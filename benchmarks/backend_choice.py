"""Where torch's batched GEMM trains a population faster than the native
kernel: the measurement behind ``backend="auto"``'s rule
(``skpmlp._engine._backends._choice.torch_is_faster``, ``WIDE_LAYER``).

Each population is 8 models of one architecture (relu, Adam, float32),
trained on one thread by the torch engine (``PopulationTrainer``, one
batched matmul per layer over the models) and by the kernel
(``NativeTrainer``), a whole epoch per call, for each batch size and number
of features. Printed per case: ms a step of each, the kernel's time over
torch's (above 1: torch is faster), and the path
``backend="auto"`` picks for it.

Usage::

    python benchmarks/backend_choice.py
    python benchmarks/backend_choice.py --widths 128 256 512 --batches 200

Writes ``benchmarks/results/backend_choice.json``.
"""

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import seconds_per_call, write_results  # noqa: E402

from skpmlp._engine import PopulationSpec, TrainConfig  # noqa: E402
from skpmlp._engine._backends._choice import torch_is_faster  # noqa: E402
from skpmlp._engine._backends._native import NativeTrainer  # noqa: E402
from skpmlp._engine._backends._torch import PopulationTrainer  # noqa: E402
from skpmlp._engine._minibatch._batches import BatchPlanner  # noqa: E402
from skpmlp._kernels import build_info, kernel_available  # noqa: E402

N_MODELS, N_CLASSES, N_BATCHES = 8, 5, 5


def population(width, depth):
    return PopulationSpec(
        hidden_layer_sizes=[(width,) * depth] * N_MODELS, activations=["relu"] * N_MODELS,
        learning_rates=np.full(N_MODELS, 1e-3), alphas=np.full(N_MODELS, 1e-4),
        init_seeds=[(0, i) for i in range(N_MODELS)],
    )


def ms_per_step(trainer_class, spec, n_features, batch, repeats):
    """Median CPU ms a step of epochs of N_BATCHES steps (``repeats``
    samples, _harness.seconds_per_call)."""
    rng = np.random.default_rng(0)
    n_rows = batch * N_BATCHES
    X = torch.tensor(rng.normal(size=(n_rows, n_features)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, N_CLASSES, n_rows))
    plan = BatchPlanner([np.arange(n_rows)], batch, 0, None, dtype=torch.float32, device="cpu").next_epoch()
    config = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=batch)
    trainer = trainer_class(spec, config, n_features, 1)
    epoch = seconds_per_call(lambda: trainer.run_epoch(X, y, plan), warmup=1, repeats=repeats,
                             clock=time.process_time)
    return 1e3 * epoch / plan.n_steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[128, 256, 512, 1024])
    parser.add_argument("--depth", type=int, default=2, help="hidden layers of each network")
    parser.add_argument("--features", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--batches", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--repeats", type=int, default=5, help="timed samples of each case (median)")
    args = parser.parse_args()
    if not kernel_available():
        raise SystemExit(f"the native kernel is unavailable: {build_info()['error']}")
    torch.set_num_threads(1)
    info = build_info()
    print(f"{platform.processor() or platform.machine()}, kernel {info['isa']} ({info['vector_bytes']}-byte "
          f"vectors), one thread, {N_MODELS} models a population, float32")
    print(f"{'network':>14} {'features':>8} {'batch':>6} {'torch ms':>9} {'kernel ms':>9} {'kernel/torch':>12}  auto")
    rows = []
    for width in args.widths:
        spec = population(width, args.depth)
        auto = "torch" if torch_is_faster(spec) else "kernel"
        for n_features in args.features:
            for batch in args.batches:
                torch_ms = ms_per_step(PopulationTrainer, spec, n_features, batch, args.repeats)
                kernel_ms = ms_per_step(NativeTrainer, spec, n_features, batch, args.repeats)
                rows.append({"width": width, "depth": args.depth, "features": n_features, "batch": batch,
                             "torch_ms": torch_ms, "kernel_ms": kernel_ms, "auto": auto})
                network = str((width,) * args.depth)
                print(f"{network:>14} {n_features:>8} {batch:>6} {torch_ms:9.2f} {kernel_ms:9.2f} "
                      f"{kernel_ms / torch_ms:11.2f}x  {auto}", flush=True)
    write_results(Path(__file__).resolve().parent / "results", "backend_choice",
                  {"kernel": info["isa"], "models": N_MODELS, "rows": rows})


if __name__ == "__main__":
    main()
