"""Which device trains a search faster: the CUDA path against the native CPU
kernel on all of the host's cores, per workload (the measurements behind
``device="auto"``).

Each workload is a population trained by the engine's whole fit
(``train_population``: network builds, batch plans, validation scoring on
a 10 % holdout, stopping bookkeeping), on each device, in one process:

* a warm-up fit of one epoch (Triton compiles its kernels, the native
  kernel loads);
* timed fits of 1 and ``1 + --epochs`` epochs: the seconds per epoch are
  their difference over ``--epochs``, the fixed cost the 1-epoch fit less
  one epoch.

Each workload also records what ``device="auto"`` picks for a fit of
``--fit-epochs`` epochs (:func:`~skpmlp._engine._backends._choice.auto_device`)
and which device would train such a fit faster, first in its process:
``warmup_s + (fit_epochs - 1) * epoch_s`` on each.

The workloads run from small to large (a small data set's default-like
search up to the paper's 10,000-model cell) so that the crossing, where
the GPU starts to win, is bracketed. ``--workloads`` picks some; each
prints a line as it finishes and the JSON is rewritten after each, so a
run cut short by its time limit keeps what it measured.

Usage::

    python benchmarks/device_choice.py --out "$OUT"          # on a GPU host
    python benchmarks/device_choice.py --devices cpu --workloads iris step240

Writes ``device_choice.json`` in ``--out`` (default benchmarks/results).
"""

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from skpmlp._engine import ACTIVATIONS as ENGINE_ACTIVATIONS  # noqa: E402
from skpmlp._engine import PopulationSpec, TrainConfig, train_population  # noqa: E402
from skpmlp._engine._backends._choice import auto_device, choose_trainer  # noqa: E402

ACTIVATIONS = ["relu", "tanh", "logistic", "gelu"]


def sampled(n_models, depths, widths, seed=0):
    """``n_models`` random architectures: depth and each layer's width drawn
    from ``depths`` and ``widths``, with activations, learning rates and L2
    penalties drawn too (a random search's population)."""
    rng = np.random.default_rng(seed)
    archs = [tuple(int(rng.choice(widths)) for _ in range(int(rng.choice(depths))))
             for _ in range(n_models)]
    return PopulationSpec(
        hidden_layer_sizes=archs,
        activations=[ACTIVATIONS[i] for i in rng.integers(0, len(ACTIVATIONS), n_models)],
        learning_rates=10.0 ** rng.uniform(-4, -2, n_models),
        alphas=10.0 ** rng.uniform(-6, -2, n_models),
        init_seeds=[(0, i) for i in range(n_models)],
    )


def paper_population(n_models):
    """The paper's cell: one hidden layer of 1..100 units x 10 activations x
    repeats (the first ``n_models``)."""
    models = [(w, a) for _ in range(10) for a in ENGINE_ACTIVATIONS for w in range(1, 101)][:n_models]
    return PopulationSpec(
        hidden_layer_sizes=[(w,) for w, _ in models], activations=[a for _, a in models],
        learning_rates=np.full(len(models), 1e-3), alphas=np.full(len(models), 1e-4),
        init_seeds=[(0, i) for i in range(len(models))],
    )


#: name: (population builder, rows, features, classes, batch). Small to large.
WORKLOADS = {
    "iris": (lambda: sampled(48, [1, 2], [8, 16, 32, 64]), 150, 4, 3, 200),
    "csv500": (lambda: sampled(96, [1, 2], [16, 32, 64, 128, 256]), 500, 8, 2, 200),
    "step240": (lambda: sampled(240, [1, 2], [16, 32, 64, 128]), 4000, 10, 5, 200),
    "search100": (lambda: sampled(100, [1, 2, 3], [16, 32, 64, 128, 256]), 15000, 40, 4, 256),
    "search400": (lambda: sampled(400, [1, 2, 3], [16, 32, 64, 128, 256]), 15000, 40, 4, 256),
    "search400_narrow": (lambda: sampled(400, [1, 2], [16, 32, 64]), 15000, 40, 4, 256),
    "wide64": (lambda: sampled(64, [2, 3], [512, 1024]), 5000, 50, 10, 512),
    "paper2000": (lambda: paper_population(2000), 10000, 100, 2, 32),
    "search2000": (lambda: sampled(2000, [1, 2, 3], [16, 32, 64, 128, 256]), 20000, 40, 4, 256),
    "paper10000": (lambda: paper_population(10000), 10000, 100, 2, 32),
}


def flops_per_epoch(spec, rows, features, classes):
    """Multiply-adds of an epoch x 6 (forward, input and weight gradients),
    at the models' real widths."""
    total = 0
    for arch in spec.hidden_layer_sizes:
        sizes = [features, *arch, classes]
        total += sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    return 6.0 * rows * total


def timed_fit(spec, config, X, y, folds, epochs):
    start = time.perf_counter()
    train_population(spec, dataclasses.replace(config, max_iter=epochs), X, y, folds)
    if torch.device(config.device).type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def measure(name, device, epochs):
    build, rows, features, classes, batch = WORKLOADS[name]
    spec = build()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(rows, features)).astype(np.float32)
    y = (X[:, : min(features, 3)].sum(axis=1) > 0).astype(np.int64) if classes == 2 else \
        rng.integers(0, classes, rows)
    index = np.arange(rows)
    folds = [(index[index % 10 != 0], index[index % 10 == 0])]
    config = TrainConfig(task="classification", n_outputs=classes, batch_size=batch, device=device,
                         n_iter_no_change=10**6)
    trainer = choose_trainer(spec, config).__name__
    start = time.perf_counter()
    timed_fit(spec, config, X, y, folds, 1)  # warm-up: compiles and loads
    warm = time.perf_counter() - start
    one = timed_fit(spec, config, X, y, folds, 1)
    more = timed_fit(spec, config, X, y, folds, 1 + epochs)
    per_epoch = max((more - one) / epochs, 1e-9)
    gflop = flops_per_epoch(spec, len(folds[0][0]), features, classes) / 1e9
    return {"trainer": trainer, "warmup_s": warm, "epoch_s": per_epoch, "fixed_s": max(one - per_epoch, 0.0),
            "gflops": gflop / per_epoch}


def cpu_model():
    """The host CPU's model name (``/proc/cpuinfo``), else the platform's."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--devices", nargs="+", default=["cuda", "cpu"])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--fit-epochs", type=int, default=200, help="the fit auto decides for")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    devices = [d for d in args.devices if d != "cuda" or torch.cuda.is_available()]
    report = {"cpu": cpu_model(), "cpu_count": os.cpu_count(),
              "threads": args.threads, "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
              "epochs": args.epochs, "workloads": {}}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{report['gpu']} / {report['cpu']}, {report['cpu_count']} cores ({args.threads} threads)", flush=True)
    for name in args.workloads:
        build, rows, features, classes, batch = WORKLOADS[name]
        spec = build()
        entry = {"models": spec.n_models, "rows": rows, "features": features, "classes": classes,
                 "batch": batch, "gflop_per_epoch": flops_per_epoch(spec, int(rows * 0.9), features, classes) / 1e9}
        for device in devices:
            try:
                entry[device] = measure(name, device, args.epochs)
            except Exception as exc:  # a failing device is a finding, not the end of the run
                entry[device] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            print(f"{name:>16} {device:>4}: {json.dumps(entry[device])}", flush=True)
        config = TrainConfig(task="classification", n_outputs=classes, max_iter=args.fit_epochs)
        entry["auto"], entry["auto_why"] = auto_device(spec, config, features, [int(rows * 0.9)])
        if all("epoch_s" in entry.get(d, {}) for d in ("cuda", "cpu")):
            entry["cpu_over_cuda"] = entry["cpu"]["epoch_s"] / entry["cuda"]["epoch_s"]
            fit = {d: entry[d]["warmup_s"] + (args.fit_epochs - 1) * entry[d]["epoch_s"] for d in ("cuda", "cpu")}
            entry["fit_first_s"] = fit
            entry["faster"] = min(fit, key=fit.get)
            print(f"{name:>16}: cpu / cuda per epoch {entry['cpu_over_cuda']:.2f}; a {args.fit_epochs}-epoch "
                  f"fit, first in its process: cuda {fit['cuda']:.1f} s, cpu {fit['cpu']:.1f} s", flush=True)
        print(f"{name:>16}: auto picks {entry['auto']} ({entry['auto_why']})", flush=True)
        report["workloads"][name] = entry
        (out / "device_choice.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
