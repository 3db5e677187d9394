"""Where a fit's time goes on the GPU: what to change first, measured in one
short command (a lent GPU has 15 minutes in all).

For each workload of ``device_choice.py`` asked for (default: the
400-model narrow search and the paper cell's first 2,000 models), on
``--device``:

* the warm-up fit of one epoch, timed, with Triton's cache pointed at a
  fresh folder: how many kernels it compiled and how long the first fit
  took (the compile a user's first CUDA fit pays);
* fits of ``--epochs`` and of twice as many epochs under
  ``torch.profiler``: their wall times, the device's busy time (the sum of
  the kernels' own device times), the kernel launches and host-device
  copies and synchronisations; the difference of the two fits is what an
  epoch costs once the run is built (``per_epoch``: wall, device busy and
  its share of the wall, launches, copies, syncs), the rest of the shorter
  fit what building the run costs once (``setup``: network, batch plans,
  kernel tables and their uploads). The ops with the most self device time
  and the most self CPU time (the host's Python and torch glue) are the
  longer fit's.

A device busy a small share of the wall points at the host (launches,
syncs, the Python between epochs); a device busy most of it, at the
kernels themselves (then ``ncu`` on the top kernel). ``--device cpu``
runs the same on the CPU's native kernel (CPU time only), which is how the
test suite checks the script.

Usage::

    python benchmarks/gpu_profile.py --out "$OUT"                # on a GPU host
    python benchmarks/gpu_profile.py --device cpu --workloads iris --epochs 2

Writes ``gpu_profile.json`` in ``--out`` (default benchmarks/results).
"""

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))

from device_choice import WORKLOADS  # noqa: E402

from skpmlp._engine import TrainConfig, train_population  # noqa: E402
from skpmlp._engine._backends._choice import choose_trainer  # noqa: E402

#: ops of the host that move data between the host and the device or wait for it
TRANSFERS = ("cudaMemcpy", "cudaMemcpyAsync", "Memcpy", "aten::copy_", "aten::_to_copy")
SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "aten::item", "aten::_local_scalar_dense")
#: rows of each top list
TOP = 12


def problem(name, device):
    """The workload's population, data, holdout folds and config."""
    build, rows, features, classes, batch = WORKLOADS[name]
    rng = np.random.default_rng(1)
    X = rng.normal(size=(rows, features)).astype(np.float32)
    y = rng.integers(0, classes, rows)
    index = np.arange(rows)
    folds = [(index[index % 10 != 0], index[index % 10 == 0])]
    config = TrainConfig(task="classification", n_outputs=classes, batch_size=batch, device=device,
                         n_iter_no_change=10**6)
    return build(), X, y, folds, config


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def warm_up(spec, X, y, folds, config):
    """The first fit of one epoch: seconds, and the Triton kernels it
    compiled into a fresh cache folder (None where nothing was cached)."""
    with tempfile.TemporaryDirectory() as cache:
        before = os.environ.get("TRITON_CACHE_DIR")
        os.environ["TRITON_CACHE_DIR"] = cache
        try:
            start = time.perf_counter()
            train_population(spec, dataclasses.replace(config, max_iter=1), X, y, folds)
            synchronize(config.device)
            seconds = time.perf_counter() - start
        finally:
            if before is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = before
        binaries = [p for p in Path(cache).rglob("*") if p.suffix in (".cubin", ".hsaco")]
    return seconds, (len(binaries) if binaries else None)


def top(events, key, n=TOP):
    """The ``n`` events with the largest ``key`` (microseconds), as rows."""
    rows = sorted(events, key=lambda e: getattr(e, key), reverse=True)[:n]
    return [{"op": e.key, "calls": e.count, "us": getattr(e, key)} for e in rows if getattr(e, key) > 0]


def profiled(spec, X, y, folds, config, epochs):
    """One fit of ``epochs`` epochs under the profiler: its totals and events."""
    cuda = torch.device(config.device).type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        train_population(spec, dataclasses.replace(config, max_iter=epochs), X, y, folds)
        synchronize(config.device)
        wall = time.perf_counter() - start
    events = prof.key_averages()
    return events, {
        "wall_s": wall,
        "device_busy_s": sum(e.self_device_time_total for e in events) / 1e6 if cuda else None,
        "launches": sum(e.count for e in events if "LaunchKernel" in e.key or e.key == "cuLaunchKernel"),
        "transfers": sum(e.count for e in events if e.key in TRANSFERS),
        "syncs": sum(e.count for e in events if e.key in SYNCS),
    }


def measure(name, device, epochs):
    spec, X, y, folds, config = problem(name, device)
    trainer = choose_trainer(spec, dataclasses.replace(config, device=device)).__name__
    first_fit, compiled = warm_up(spec, X, y, folds, config)
    _, short = profiled(spec, X, y, folds, config, epochs)
    events, long = profiled(spec, X, y, folds, config, 2 * epochs)
    # the longer fit trains `epochs` more epochs on a run built the same way
    per_epoch = {key: None if long[key] is None else (long[key] - short[key]) / epochs for key in long}
    setup = {key: None if short[key] is None else short[key] - epochs * per_epoch[key] for key in short}
    if per_epoch["device_busy_s"] is not None:
        per_epoch["device_busy_share"] = per_epoch["device_busy_s"] / per_epoch["wall_s"]
    cuda = torch.device(device).type == "cuda"
    return {
        "trainer": trainer, "models": spec.n_models, "first_fit_s": first_fit,
        "triton_kernels_compiled": compiled, "epochs": epochs,
        # the longer fit's (2 x epochs) totals
        "wall_s": long["wall_s"],
        "device_busy_s": long["device_busy_s"],
        "device_busy_share": long["device_busy_s"] / long["wall_s"] if cuda else None,
        "per_epoch": per_epoch, "setup": setup,
        "top_device": top(events, "self_device_time_total") if cuda else [],
        "top_cpu": top(events, "self_cpu_time_total"),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--workloads", nargs="+", default=["search400_narrow", "paper2000"],
                        choices=list(WORKLOADS))
    parser.add_argument("--epochs", type=int, default=5,
                        help="epochs of the shorter fit (the longer trains twice as many)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = parser.parse_args(argv)
    if torch.device(args.device).type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: nothing to profile (--device cpu profiles the CPU kernel)")
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"device": args.device, "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "workloads": {}}
    for name in args.workloads:
        found = measure(name, args.device, args.epochs)
        report["workloads"][name] = found
        epoch, setup = found["per_epoch"], found["setup"]
        busy = epoch.get("device_busy_share")
        print(f"{name}: {found['trainer']}, first fit {found['first_fit_s']:.1f} s "
              f"({found['triton_kernels_compiled']} Triton kernels compiled); an epoch "
              f"{epoch['wall_s'] * 1e3:.1f} ms" + ("" if busy is None else f", device busy {busy:.0%}")
              + f", {epoch['launches']:.0f} launches, {epoch['transfers']:.0f} copies, "
              f"{epoch['syncs']:.0f} syncs; building the run {setup['wall_s'] * 1e3:.1f} ms, "
              f"{setup['launches']:.0f} launches, {setup['transfers']:.0f} copies, "
              f"{setup['syncs']:.0f} syncs", flush=True)
        for kind in ("top_device", "top_cpu"):
            for row in found[kind][:5]:
                print(f"    {kind[4:]:>6} {row['us'] / 1e3:9.2f} ms {row['calls']:7d}x  {row['op'][:70]}")
        (out / "gpu_profile.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
