"""Cost of one training step of a whole population: the native kernel
against torch, on the small tabular case of the per-model kernel issue.

The population: 240 models (hidden widths 16, 32, 64, 128 and one 2-layer
(64, 32) net x relu / tanh / gelu x 2 learning rates x 2 L2 penalties x 4
repeats), batch 200, 10 features, 5 classes, softmax cross-entropy, Adam.
``--population narrow``: the small-data case, 4 features, 3 classes and
widths 8, 16, 32, 64 and (32, 16), otherwise the same; ``--population
csv``: the default search's networks on a 500 x 8 CSV of 3 classes (8
features, widths 32, 64, 128 and (64, 64)). ``--activations
relu`` (or any others) trains the same 240 models with those activations
only: what an activation's math costs beside the products, which the
FLOP count leaves out.
Per step, in one process and one run:

* ``plain torch``: the textbook fused step, one ``baddbmm`` per layer over
  all models of a depth (padded to the widest), autograd, and
  ``torch.optim.Adam(fused=True)``;
* ``plain torch, by width``: the same with one group per architecture (no
  padding, more and smaller matmuls), the baseline the kernel's targets are
  set against (``vs width``);
* ``skpmlp torch``: skpmlp's torch engine (activation-split groups, flat
  buffers, fused Adam partitions per learning rate and penalty);
* ``skpmlp native``: the per-model kernel (skpmlp._kernels), a whole epoch per
  call, built for each ``--targets`` entry (``SKPMLP_KERNEL_TARGET``:
  ``native``, ``x86-64-v3`` for AVX2, ``x86-64-v2`` for SSE4.2, ...), its
  ISA and vector bytes printed beside it;
* ``native, whole fit``: a whole fused training run on the kernel (network
  build, batch plans, per-epoch validation scoring on a 10 % holdout and
  stopping bookkeeping included), divided by its number of steps (the
  median of three fits): what a search pays per step.

With ``--device cuda`` the same population on the GPU: ``plain torch``
and ``plain torch, by width`` (CUDA), ``skpmlp torch`` (the torch engine on
CUDA, the reference and fallback), ``skpmlp triton`` (the Triton kernels, a
whole epoch per launch) and ``triton, whole fit`` (what ``device="cuda"``
trains with); the issue #31 target is ``skpmlp triton`` at 10x ``plain
torch`` or more.

Each figure is the median over several epochs; FLOPs count the real (not
padded) widths, 3 matmuls per layer (forward, input gradient, weight
gradient) but the first layer's input gradient, which no one computes
(``_harness.training_flops``); the limit is the measured float32 matmul rate of this machine
(a large ``torch.mm``, which runs near the FMA peak) on the CPU, the GPU's
float32 FMA peak (SMs x FP32 lanes x 2 x clock) on CUDA. On the CPU,
``of b+act`` sets the time against a bound that counts the activations too:
the products at the limit plus every tanh, logistic and GELU value of the
step (forward, with its derivative) at the rate the kernel's own float32
activation pass reaches on this machine (``vector_math.py``'s harness,
native build, values in L1), spread over the threads. The line above the
table gives the bound and the share of the limit no step can exceed.
``of own`` sets a kernel build against its own bound: the products at the
float32 multiply-add peak of its vector width (``arithmetic_peak.py``: FMA
on AVX-512 and AVX2, a multiply and an add on SSE4.2) and the activations
at that build's pass rate. A narrower build's step cannot be shorter, and
after the table each build's bound is set against the native build's
measured step: the most it could reach of native's speed.

Usage::

    python benchmarks/step.py               # 1 thread, then all cores
    python benchmarks/step.py --threads 1 --targets native,x86-64-v3,x86-64-v2
    python benchmarks/step.py --threads 1 --clock cpu    # on a loaded machine
    python benchmarks/step.py --device cuda # says so and exits where there is no CUDA
    python benchmarks/step.py --population narrow --threads 1

Writes ``benchmarks/results/step.json`` (``step_narrow.json`` for the narrow
population, ``step_cuda.json`` on CUDA; other ``--activations`` append
their names, ``step_narrow_relu.json``).
"""

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import gpu_fma_peak, machine_limits, synchronize, training_flops  # noqa: E402
from arithmetic_peak import peaks as fma_peaks  # noqa: E402

from skpmlp._engine import (  # noqa: E402
    ACTIVATIONS,
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    train_population,
)
from skpmlp._engine._backends._native import NativeTrainer  # noqa: E402
from skpmlp._engine._backends._torch import PopulationTrainer  # noqa: E402
from skpmlp._engine._backends._triton import TritonTrainer  # noqa: E402
from skpmlp._engine._minibatch._batches import BatchPlanner  # noqa: E402
from skpmlp._kernels import build_info, executable_targets, kernel_available  # noqa: E402

ACTS = ["relu", "tanh", "gelu"]
BATCH, N_ROWS = 200, 4000

#: the populations: hidden layer sizes, features and classes. ``wide`` is the
#: per-model kernel issue's case; ``narrow`` an iris-like set (4 features,
#: 3 classes, widths 8 to 64), where every layer has few inputs or outputs;
#: ``csv`` the default search's networks on the issue's common case, a
#: 500-row CSV of 8 columns and 3 classes.
POPULATIONS = {
    "wide": ([(16,), (32,), (64,), (128,), (64, 32)], 10, 5),
    "narrow": ([(8,), (16,), (32,), (64,), (32, 16)], 4, 3),
    "csv": ([(32,), (64,), (128,), (64, 64)], 8, 3),
}
ARCHS, N_FEATURES, N_CLASSES = POPULATIONS["wide"]
#: every model's dropout rate (``benchmarks/tiles.py --dropout``; the torch
#: baselines here train without it)
DROPOUT = 0.0


def use_population(name, dropout=0.0):
    """Make ``name`` the population every measurement trains, each model
    with ``dropout``."""
    global ARCHS, N_FEATURES, N_CLASSES, DROPOUT
    ARCHS, N_FEATURES, N_CLASSES = POPULATIONS[name]
    DROPOUT = dropout


def population():
    models = [
        (arch, act, lr, alpha, repeat)
        for arch in ARCHS for act in ACTS for lr in (1e-3, 1e-2) for alpha in (1e-4, 1e-2)
        for repeat in range(12 // len(ACTS))  # 240 models for 1 to 4 activations
    ]
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]), alphas=np.array([m[3] for m in models]),
        init_seeds=[(0, i) for i in range(len(models))],
        optimizers=[OptimizerSettings("adam", dropout=DROPOUT)] * len(models) if DROPOUT else None,
    )


#: The activations the kernel computes in a pass of their own (an ``exp``
#: or a division a value), which ``vector_math.py`` times; the others cost
#: a comparison or nothing in the product's epilogue.
PASS_ACTIVATIONS = ("tanh", "logistic", "gelu")


def activation_values(spec, batch):
    """``{activation: values a step}`` of :data:`PASS_ACTIVATIONS` over
    every model of ``spec`` on ``batch`` rows."""
    values = dict.fromkeys(PASS_ACTIVATIONS, 0)
    for arch, activation in zip(spec.hidden_layer_sizes, spec.activations):
        if activation in values:
            values[activation] += sum(arch) * batch
    return values


def activation_seconds(values, target="native"):
    """Seconds one thread takes for ``values`` at the kernel's own float32
    activation pass rate (``vector_math.py``'s harness built for
    ``target``, best of three runs, values in L1): what a step spends
    beside its products at the very least."""
    if not any(values.values()):
        return 0.0
    import vector_math

    per_value = vector_math.activation_seconds([a for a, n in values.items() if n], target=target)
    return sum(n * per_value[a] for a, n in values.items() if n)


def step_flops(spec, batch):
    """FLOPs of one step of every model of ``spec`` on ``batch`` rows."""
    return batch * sum(training_flops([N_FEATURES, *arch, N_CLASSES]) for arch in spec.hidden_layer_sizes)


class PlainTorchStep:
    """One ``baddbmm`` per layer over the models of a group, autograd and
    torch's fused Adam: the plain fused step. ``by="depth"`` groups every
    model of a depth, padded to the widest; ``by="width"`` groups models of
    one architecture (no padding, more and smaller matmuls)."""

    def __init__(self, spec, by="depth", device="cpu"):
        by_group = {}
        for i, arch in enumerate(spec.hidden_layer_sizes):
            by_group.setdefault(len(arch) if by == "depth" else tuple(arch), []).append(i)
        self.groups = []
        params = []
        for _, models in sorted(by_group.items(), key=lambda item: str(item[0])):
            depth = len(spec.hidden_layer_sizes[models[0]])
            widths = [max(spec.hidden_layer_sizes[i][layer] for i in models) for layer in range(depth)]
            sizes = [N_FEATURES, *widths, N_CLASSES]
            layers = []
            for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
                W = (torch.randn(len(models), fan_in, fan_out, device=device) / fan_in**0.5).requires_grad_()
                b = torch.zeros(len(models), 1, fan_out, device=device, requires_grad=True)
                layers.append((W, b))
                params += [W, b]
            acts = sorted(spec.activations[i] for i in models)  # one slice per activation
            slices = [(a, acts.count(a)) for a in dict.fromkeys(acts)]
            self.groups.append((layers, slices, len(models)))
        self.optimizer = torch.optim.Adam(params, lr=1e-3, weight_decay=1e-4, fused=True)

    def step(self, x, y):
        self.optimizer.zero_grad()
        total = 0
        for layers, slices, n_models in self.groups:
            h = x.expand(n_models, *x.shape)
            for i, (W, b) in enumerate(layers):
                h = torch.baddbmm(b, h, W)
                if i < len(layers) - 1:
                    parts = torch.split(h, [n for _, n in slices])
                    h = torch.cat([ACTIVATIONS[a](p) for (a, _), p in zip(slices, parts)])
            loss = torch.nn.functional.cross_entropy(h.reshape(-1, N_CLASSES), y.repeat(n_models))
            total = total + loss * n_models
        total.backward()
        self.optimizer.step()


#: the clock of every timing: wall time, or this process's CPU time (all
#: its threads; on a machine other processes load, it counts only the time
#: this process ran)
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCK["wall"]


def time_epochs(run_epoch, n_steps, epochs, device="cpu"):
    run_epoch()
    synchronize(device)
    samples = []
    for _ in range(epochs):
        start = clock()
        run_epoch()
        synchronize(device)
        samples.append((clock() - start) / n_steps)
    return statistics.median(samples)


def time_whole_fit(spec, fit_cfg, X, y, repeats=3):
    """Seconds per step of a whole fused run of ``fit_cfg.max_iter`` epochs
    on 90 % of the rows (the rest its validation rows): the median of
    ``repeats`` fits after a one-epoch warm-up fit, as the epochs' figures
    are medians (one fit alone swung by 10-15 % on a shared machine)."""
    rows = np.arange(len(X))
    folds = [(rows[rows % 10 != 0], rows[rows % 10 == 0])]
    train_population(spec, dataclasses.replace(fit_cfg, max_iter=1), X, y, folds)  # warm
    samples = []
    for _ in range(repeats):
        start = clock()
        train_population(spec, fit_cfg, X, y, folds)
        samples.append(clock() - start)
    return statistics.median(samples) / (fit_cfg.max_iter * -(-len(folds[0][0]) // BATCH))


def problem():
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.normal(size=(N_ROWS, N_FEATURES)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, N_CLASSES, N_ROWS))
    plan = BatchPlanner([np.arange(N_ROWS)], BATCH, 0, None, dtype=torch.float32, device="cpu").next_epoch()
    return X, y, plan


def measure_torch(threads, epochs):
    """The plain fused torch steps (padded by depth, and by width) and
    skpmlp's torch engine."""
    torch.set_num_threads(threads)
    X, y, plan = problem()
    spec = population()
    results = {}
    for name, by in (("plain torch", "depth"), ("plain torch, by width", "width")):
        plain = PlainTorchStep(spec, by=by)

        def plain_epoch():
            for s in range(plan.n_steps):
                rows = plan.rows[s, 0]
                plain.step(X[rows], y[rows])

        results[name] = time_epochs(plain_epoch, plan.n_steps, epochs)
    cfg = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH)
    trainer = PopulationTrainer(spec, cfg, N_FEATURES, 1)
    results["skpmlp torch"] = time_epochs(lambda: trainer.run_epoch(X, y, plan), plan.n_steps, epochs)
    return results


def measure_native(threads, epochs, target):
    """The kernel built for ``target``: its epochs alone, and a whole fit
    per step."""
    os.environ["SKPMLP_KERNEL_TARGET"] = target
    if not kernel_available():
        raise SystemExit(f"the kernel for {target} is unavailable: {build_info()['error']}")
    if build_info()["built_for"] != target:
        raise SystemExit(f"the kernel for {target} fell back to {build_info()['built_for']}")
    torch.set_num_threads(threads)
    X, y, plan = problem()
    spec = population()
    cfg = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH)
    trainer = NativeTrainer(spec, cfg, N_FEATURES, 1)
    results = {"skpmlp native": time_epochs(lambda: trainer.run_epoch(X, y, plan), plan.n_steps, epochs)}
    fit_cfg = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH, max_iter=epochs,
                          n_iter_no_change=10**6, backend="native")
    results["native, whole fit"] = time_whole_fit(spec, fit_cfg, X.numpy(), y.numpy())
    return results


def measure_gpu(epochs, device="cuda"):
    """Seconds per step of the plain fused torch steps, skpmlp's torch
    engine, the Triton kernels and a whole fit on them, all on ``device``."""
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.normal(size=(N_ROWS, N_FEATURES)), dtype=torch.float32, device=device)
    y = torch.tensor(rng.integers(0, N_CLASSES, N_ROWS), device=device)
    spec = population()
    cfg = TrainConfig(task="classification", n_outputs=N_CLASSES, batch_size=BATCH, device=device)
    plan = BatchPlanner([np.arange(N_ROWS)], BATCH, 0, None, dtype=torch.float32, device=device).next_epoch()
    results = {}
    for name, by in (("plain torch", "depth"), ("plain torch, by width", "width")):
        plain = PlainTorchStep(spec, by=by, device=device)

        def plain_epoch():
            for s in range(plan.n_steps):
                rows = plan.rows[s, 0]
                plain.step(X[rows], y[rows])

        results[name] = time_epochs(plain_epoch, plan.n_steps, epochs, device)
    for name, cls, backend in (("skpmlp torch", PopulationTrainer, "torch"),
                               ("skpmlp triton", TritonTrainer, "triton")):
        trainer = cls(spec, dataclasses.replace(cfg, backend=backend), N_FEATURES, 1)
        results[name] = time_epochs(lambda: trainer.run_epoch(X, y, plan), plan.n_steps, epochs, device)
    fit_cfg = dataclasses.replace(cfg, max_iter=epochs, n_iter_no_change=10**6, backend="triton")
    results["triton, whole fit"] = time_whole_fit(spec, fit_cfg, X.cpu().numpy(), y.cpu().numpy())
    return results


def main_gpu(epochs):
    """The ``--device cuda`` table: ratios to the plain fused torch steps
    and shares of the GPU's float32 FMA peak."""
    if not torch.cuda.is_available():
        print("no CUDA device here: nothing to measure (the GPU figures need a machine with one)")
        return
    peak = gpu_fma_peak("cuda")
    flops = step_flops(population(), BATCH)
    name = torch.cuda.get_device_name()
    report = {"device": name, "torch": torch.__version__, "models": population().n_models, "batch": BATCH,
              "step_gflop": flops / 1e9, "fp32_fma_peak_gflops": peak, "runs": []}
    print(f"{name}: {report['models']} models, batch {BATCH}: {flops / 1e9:.3f} GFLOP per step; "
          f"float32 FMA peak {peak:.0f} GFLOP/s")
    print(f"{'method':>22} {'ms/step':>8} {'vs plain':>8} {'vs width':>8} {'GFLOP/s':>8} {'of peak':>8}")
    timings = measure_gpu(epochs)
    for method, seconds in timings.items():
        gflops = flops / seconds / 1e9
        ratio, ratio_width = timings["plain torch"] / seconds, timings["plain torch, by width"] / seconds
        print(f"{method:>22} {1e3 * seconds:8.3f} {ratio:7.1f}x {ratio_width:7.1f}x {gflops:8.1f} "
              f"{gflops / peak:8.2%}")
        report["runs"].append({"method": method, "ms_per_step": 1e3 * seconds, "speedup_vs_plain": ratio,
                               "speedup_vs_plain_by_width": ratio_width, "gflops": gflops,
                               "of_fp32_fma_peak": gflops / peak})
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "step_cuda.json").write_text(json.dumps(report, indent=1))


def default_targets():
    """``native`` and every narrower x86-64 level this CPU executes."""
    return ["native", *(level for level in executable_targets() if level != "x86-64-v4")]


def main():
    global clock
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="*", default=None)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--targets", default=",".join(default_targets()),
                        help="kernel targets, comma-separated (default: %(default)s)")
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                        help="wall time, or the process's CPU time (for a loaded machine, one thread)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--population", choices=sorted(POPULATIONS), default="wide",
                        help="wide: 10 features, 5 classes, widths 16-128; narrow: 4 features, 3 classes, "
                             "widths 8-64; csv: 8 features, 3 classes, the default search's widths")
    parser.add_argument("--activations", nargs="+", default=ACTS, choices=sorted(ACTIVATIONS),
                        help="the population's activations (default: %(default)s); one alone shows what "
                             "its math costs beside the products")
    args = parser.parse_args()
    clock = CLOCK[args.clock]
    use_population(args.population)
    ACTS[:] = args.activations
    if args.device == "cuda":
        return main_gpu(args.epochs)
    threads = args.threads or sorted({1, os.cpu_count() or 1})
    torch.set_num_threads(1)
    limit = machine_limits("cpu", clock=clock)["matmul_gflops"]
    flops = step_flops(population(), BATCH)
    report = {"population": args.population, "activations": ACTS, "features": N_FEATURES, "classes": N_CLASSES,
              "machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
              "torch": torch.__version__, "models": population().n_models, "batch": BATCH, "clock": args.clock,
              "step_gflop": flops / 1e9, "matmul_gflops_1_thread": limit, "runs": []}
    print(f"{report['models']} models, batch {BATCH}: {flops / 1e9:.3f} GFLOP per step; "
          f"1-thread float32 matmul limit {limit:.0f} GFLOP/s; {args.clock} clock")
    values = activation_values(population(), BATCH)
    products, activations = flops / (limit * 1e9), activation_seconds(values)
    report.update(activation_values=values, activation_seconds_1_thread=activations,
                  bound_with_activations_seconds_1_thread=products + activations)
    print(f"bound, 1 thread: products at the limit {1e3 * products:.3f} ms + "
          f"{sum(values.values()) / 1e6:.2f} M activations ({', '.join(f'{a} {n / 1e6:.2f} M' for a, n in values.items() if n)}) "
          f"at the kernel's pass rate {1e3 * activations:.3f} ms = {1e3 * (products + activations):.3f} ms "
          f"a step: at most {products / (products + activations):.0%} of the limit")
    targets = args.targets.split(",")
    peaks = fma_peaks(targets)
    # each build's own bound: the products at its width's peak, the
    # activations at its own pass rate
    own_bounds = {target: flops / (peaks[target] * 1e9)
                  + (activations if target == "native" else activation_seconds(values, target))
                  for target in targets}
    report.update(float32_peak_gflops_1_thread=peaks, build_bound_seconds_1_thread=own_bounds)
    print("each build's bound, 1 thread: the products at its float32 multiply-add peak (arithmetic_peak.py) "
          "+ the activations at its pass rate: "
          + ", ".join(f"{target} {peaks[target]:.0f} GFLOP/s, {1e3 * own_bounds[target]:.3f} ms"
                      for target in targets))
    print(f"{'threads':>7} {'method':>22} {'target':>10} {'isa':>8} {'bytes':>5} {'ms/step':>8} "
          f"{'vs plain':>8} {'vs width':>8} {'GFLOP/s':>8} {'of limit':>8} {'of b+act':>8} {'of own':>8}")
    for n in threads:
        base = measure_torch(n, args.epochs)
        rows = [(name, None, seconds) for name, seconds in base.items()]
        for target in targets:
            rows += [(name, target, seconds) for name, seconds in measure_native(n, args.epochs, target).items()]
            info = build_info()
            isa, vector_bytes = info["isa"], info["vector_bytes"]
            rows[-2:] = [(*row, isa, vector_bytes) for row in rows[-2:]]
        for row in rows:
            name, target, seconds = row[:3]
            isa, vector_bytes = row[3:] if len(row) > 3 else ("", "")
            gflops = flops / seconds / 1e9
            ratio, ratio_width = base["plain torch"] / seconds, base["plain torch, by width"] / seconds
            of_bound = (products + activations) / n / seconds
            of_own = own_bounds[target] / n / seconds if target else None
            print(f"{n:>7} {name:>22} {target or '':>10} {isa:>8} {vector_bytes:>5} {1e3 * seconds:8.2f} "
                  f"{ratio:7.1f}x {ratio_width:7.1f}x {gflops:8.1f} {gflops / (limit * n):7.0%} "
                  f"{of_bound:7.0%} {'' if of_own is None else f'{of_own:7.0%}':>8}", flush=True)
            report["runs"].append({"threads": n, "method": name, "target": target, "isa": isa or None,
                                   "vector_bytes": vector_bytes or None, "ms_per_step": 1e3 * seconds,
                                   "speedup_vs_plain": ratio, "speedup_vs_plain_by_width": ratio_width,
                                   "gflops": gflops, "of_limit": gflops / (limit * n),
                                   "of_bound_with_activations": of_bound, "of_build_bound": of_own})
    for n in threads:
        native = [r["ms_per_step"] for r in report["runs"]
                  if r["threads"] == n and r["method"] == "skpmlp native" and r["target"] == targets[0]]
        if native and len(targets) > 1:
            print(f"{n} thread(s), each build's bound against the {targets[0]} build's step "
                  f"({native[0]:.2f} ms): " + ", ".join(
                      f"{target} at most {native[0] / (1e3 * own_bounds[target] / n):.2f}x" for target in targets[1:]))
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    name = "step" + ("" if args.population == "wide" else f"_{args.population}")
    name += "" if ACTS == ["relu", "tanh", "gelu"] else "_" + "_".join(ACTS)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
