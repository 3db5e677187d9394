"""The paper's headline cell on one device: skpmlp against the paper's M3.

Seed 000's GPU headline: 10,000 models (hidden widths 1..100 x the ten
activations x 10 repeats, one hidden layer), 10,000 samples, 100
features, batch 32, 2 classes, Adam; the paper reports 4.44 s per epoch
for its ParallelMLPs (M3) on its GPU. Measured here, in one process on
one device, per epoch of ``ceil(10,000 / 32)`` steps:

* ``skpmlp``: what ``device="cuda"`` trains with (the Triton kernels where
  triton is installed; on the CPU the native kernel);
* ``skpmlp_torch``: skpmlp's torch engine, the reference and fallback;
* ``m3``: the paper's Modified Matrix Multiplication
  (``_baselines.M3Population``).

Issue #31's target: ``skpmlp`` at 20x ``m3`` or more on the same GPU. The
limits are those of ``paper_grid.py`` (FLOP-bound at the device's measured
matmul rate, memory-bound at its measured copy bandwidth).

Usage::

    python benchmarks/paper_cell.py                      # CUDA; a note where there is none
    python benchmarks/paper_cell.py --device cpu --models 1000

Writes ``benchmarks/results/paper_cell_<device>.json``.
"""

import argparse
import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine_limits  # noqa: E402
from paper_grid import measure, model_flops_and_bytes, paper_population  # noqa: E402

METHODS = ("skpmlp", "skpmlp_torch", "m3")
TARGET_VS_M3 = 20.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--models", type=int, default=10000)
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    if torch.device(args.device).type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: nothing to measure (the GPU figures need a machine with one)")
        return
    torch.manual_seed(0)
    widths, activations, repeats = paper_population(args.models)
    steps = math.ceil(args.samples / args.batch)
    limits = machine_limits(args.device)
    name = torch.cuda.get_device_name(args.device) if torch.device(args.device).type == "cuda" else "cpu"
    print(f"{name}: {len(widths)} models, {args.samples} samples, {args.features} features, "
          f"batch {args.batch} ({steps} steps per epoch)")
    report = {"device": name, "torch": torch.__version__, "models": len(widths), "samples": args.samples,
              "features": args.features, "batch": args.batch, "limits": limits, "seconds_per_epoch": {}}
    for method in METHODS:
        result = measure(method, widths, activations, repeats, args.features, args.batch, 2, args.device, 0)
        epoch = result["seconds_per_step"] * steps
        report["seconds_per_epoch"][method] = epoch
        peak = result["peak_bytes"]
        print(f"  {method:<13} {epoch:9.3f} s/epoch" + (f"  peak {peak / 2**20:8.1f} MiB" if peak else ""),
              flush=True)
    flops, moved = model_flops_and_bytes(widths, args.features, 2, args.batch)
    report["flop_bound"] = flops / (limits["matmul_gflops"] * 1e9) * steps
    report["memory_bound"] = moved / (limits["copy_gbytes_per_s"] * 1e9) * steps
    times = report["seconds_per_epoch"]
    report["skpmlp_vs_m3"] = times["m3"] / times["skpmlp"]
    report["skpmlp_vs_torch"] = times["skpmlp_torch"] / times["skpmlp"]
    verdict = "meets" if report["skpmlp_vs_m3"] >= TARGET_VS_M3 else "misses"
    print(f"skpmlp: {report['skpmlp_vs_m3']:.1f}x M3 ({verdict} the {TARGET_VS_M3:.0f}x target), "
          f"{report['skpmlp_vs_torch']:.1f}x skpmlp's torch engine; flop-bound {report['flop_bound']:.3f} s, "
          f"memory-bound {report['memory_bound']:.3f} s per epoch")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"paper_cell_{torch.device(args.device).type}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
