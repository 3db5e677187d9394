"""Timing, peak memory and machine limits shared by the benchmark scripts."""

import contextlib
import gc
import importlib
import statistics
import time

import numpy as np
import torch


def synchronize(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def seconds_per_call(fn, *, device="cpu", warmup=2, target_seconds=0.4, repeats=3, max_calls=50,
                     clock=time.perf_counter, statistic=statistics.median):
    """Seconds of one call of ``fn`` (after ``warmup`` calls), by ``clock``
    (wall time; ``time.process_time`` counts only this process's CPU time,
    for one thread on a machine other processes load): ``statistic`` (the
    median, or ``min`` for the fastest) of ``repeats`` samples."""
    for _ in range(warmup):
        fn()
    synchronize(device)
    start = clock()
    fn()
    synchronize(device)
    one = max(clock() - start, 1e-6)
    calls = int(min(max_calls, max(1, target_seconds / one)))
    samples = []
    for _ in range(repeats):
        start = clock()
        for _ in range(calls):
            fn()
        synchronize(device)
        samples.append((clock() - start) / calls)
    return statistic(samples)


#: the native kernel's calls: (module, name) of each, timed by
#: :func:`kernel_clock` (``_run_epochs`` is the training epochs' call,
#: inside ``run_models``)
KERNEL_CALLS = (("skpmlp._kernels._step", "_run_epochs"), ("skpmlp._kernels", "forward_models"),
                ("skpmlp._kernels", "lbfgs_step"))


@contextlib.contextmanager
def kernel_clock(clock=time.perf_counter):
    """A list whose one number is the ``clock`` seconds spent inside the
    native kernel's calls while the block runs, each call timed by a
    wrapper (a few hundred calls a fit: the wrappers cost nothing that
    shows). ``time.thread_time`` counts the calling thread's CPU time,
    which is the kernel's on one thread."""
    inside = [0.0]
    with part_clocks({"kernel": KERNEL_CALLS}, clock) as seconds:
        yield inside
        inside[0] = seconds["kernel"]


@contextlib.contextmanager
def part_clocks(parts, clock=time.perf_counter):
    """``{label: seconds}`` spent inside each part's functions while the
    block runs (filled in as the block leaves).

    ``parts`` maps a label to ``(module, attribute)`` pairs, an attribute
    a module's function (patched where its callers look it up) or a
    class's method (``"Class.method"``). Each call is timed by a wrapper,
    inclusive: a part called inside another counts in both.
    """
    seconds = dict.fromkeys(parts, 0.0)
    patched = []

    def timed(call, label):
        def wrapper(*args, **kwargs):
            start = clock()
            try:
                return call(*args, **kwargs)
            finally:
                seconds[label] += clock() - start
        return wrapper

    for label, targets in parts.items():
        for module, attribute in targets:
            owner = importlib.import_module(module)
            *path, name = attribute.split(".")
            for step in path:
                owner = getattr(owner, step)
            patched.append((owner, name, vars(owner)[name]))  # as defined: a classmethod stays one
            setattr(owner, name, timed(getattr(owner, name), label))
    try:
        yield seconds
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)


def _read_status(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return None


class PeakMemory:
    """Peak memory of a block: CUDA allocator peak, or peak RSS on the CPU
    (``/proc/self/clear_refs`` resets the high-water mark), above the level
    at entry. ``bytes`` is None where it cannot be measured."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.bytes = None

    def __enter__(self):
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(self.device)
            self._start = torch.cuda.memory_allocated(self.device)
        else:
            try:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")
                self._start = _read_status("VmRSS:")
            except OSError:
                self._start = None
        return self

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            self.bytes = torch.cuda.max_memory_allocated(self.device) - self._start
        elif self._start is not None:
            self.bytes = _read_status("VmHWM:") - self._start
        return False


def matmul_gflops(device="cpu", dtype=torch.float32, *, clock=time.perf_counter, repeats=7,
                  target_seconds=0.4):
    """GFLOP/s of a large square ``torch.mm`` on ``device`` (2048 on the
    CPU, 8192 on a GPU): the fastest of ``repeats`` samples of about
    ``target_seconds`` each (see :func:`seconds_per_call`)."""
    n = 2048 if torch.device(device).type == "cpu" else 8192
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    t = seconds_per_call(lambda: torch.mm(a, b), device=device, warmup=1, repeats=repeats,
                         target_seconds=target_seconds, clock=clock, statistic=min)
    return 2 * n**3 / t / 1e9


def machine_limits(device="cpu", dtype=torch.float32, clock=time.perf_counter):
    """Measured matmul GFLOP/s and copy bandwidth (GB/s) of ``device``, by
    ``clock`` (see :func:`seconds_per_call`).

    Each is the fastest of seven samples: a limit is what the machine can
    do, and on a shared host (a virtual machine's neighbours) a median
    understates it, which overstates every share of it a benchmark prints
    (2-thread matmul samples of 128 to 178 GFLOP/s a few seconds apart on
    one quiet 2-core AMD Zen 4 VM)."""
    gflops = matmul_gflops(device, dtype, clock=clock)
    fastest = {"device": device, "warmup": 1, "repeats": 7, "clock": clock, "statistic": min}
    src = torch.empty(64 * 2**20, device=device, dtype=dtype).uniform_()
    dst = torch.empty_like(src)
    t = seconds_per_call(lambda: dst.copy_(src), **fastest)
    bandwidth = 2 * src.numel() * src.element_size() / t / 1e9  # read + write
    return {"matmul_gflops": gflops, "copy_gbytes_per_s": bandwidth}


#: FP32 lanes (FMA units) per streaming multiprocessor, by compute
#: capability major version (and minor where it differs): V100, T4 and A100
#: have 64; the 8.6/8.9 parts, H100 and later 128.
_FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, 8: 128, 9: 128, 10: 128, 12: 128}


def gpu_fma_peak(device="cuda"):
    """Theoretical float32 FMA peak of a CUDA device in GFLOP/s (an FMA is
    two FLOPs): SMs x FP32 lanes per SM x 2 x its clock. A 132-SM H100 SXM
    at 1.98 GHz: 66.9 TFLOP/s."""
    props = torch.cuda.get_device_properties(device)
    lanes = _FP32_LANES.get((props.major, props.minor), _FP32_LANES.get(props.major, 128))
    return props.multi_processor_count * lanes * 2 * props.clock_rate * 1e3 / 1e9


def kernel_source():
    """Path of the native kernel's source, ``mlp_step.cpp``, of the skpmlp
    imported (the checkout's, where the script put it first on the path):
    what the C++ harnesses ``#include``."""
    from pathlib import Path

    from skpmlp._kernels import _build

    return Path(_build.__file__).parent / "mlp_step.cpp"


def executable_flags(target):
    """g++ flags that build a stand-alone program around the native
    kernel's source (an ``#include`` of ``mlp_step.cpp``): the kernel's own
    flags and ``-march`` for ``target``, for an executable instead of a
    shared library."""
    from skpmlp._kernels import _build

    return [f for f in _build._FLAGS if f not in ("-shared", "-fPIC")] + _build.target_flags(target)


def compile_harness(text, target, workdir, name):
    """Write the C++ ``text`` (a harness that includes the kernel's
    source) to ``workdir/name.cpp`` and compile it for ``target`` with
    :func:`executable_flags`: the binary's path."""
    import subprocess
    from pathlib import Path

    harness = Path(workdir) / f"{name}.cpp"
    harness.write_text(text)
    binary = Path(workdir) / name
    subprocess.run(["g++", *executable_flags(target), str(harness), "-o", str(binary)], check=True)
    return binary


def write_results(out, name, payload):
    """``payload`` as JSON to ``out/name.json`` (the folder made if need
    be), announced; the path."""
    import json
    from pathlib import Path

    Path(out).mkdir(parents=True, exist_ok=True)
    path = Path(out) / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2))
    print(f"wrote {path}")
    return path


def training_flops(sizes):
    """FLOPs one training row costs an MLP of layer ``sizes`` (inputs,
    hidden widths..., outputs) in one forward and backward pass: every
    weight's multiply-add in the forward product and in its gradient (4),
    in the input gradient of every layer but the first (2; no one needs the
    inputs' gradient, and neither skpmlp's kernel nor scikit-learn computes
    it), and every bias's add in the forward and in its gradient (2).

    Counting 6 per weight everywhere, as the benchmarks did before, counted
    the first layer's input gradient too: up to a fifth of a narrow
    network's FLOPs (4 inputs, one hidden layer), which made every fraction
    of a bound that much higher than the work done."""
    products = [a * b for a, b in zip(sizes[:-1], sizes[1:])]
    return 4 * sum(products) + 2 * sum(products[1:]) + 2 * sum(sizes[1:])


def network_outputs(task, y):
    """Output units of skpmlp's network for the targets ``y``: one per class
    (a binary softmax has two), one per target column in regression."""
    if task == "classification":
        return max(len(np.unique(y)), 2)
    return 1 if np.ndim(y) == 1 else np.shape(y)[1]


def warm_gridsearch(n_jobs):
    """Start the worker processes of ``GridSearchCV(n_jobs=n_jobs)`` before
    any timed search. A process's first parallel search spends about 2 s
    (a 2-core AMD EPYC) starting joblib's loky workers and importing
    scikit-learn's MLP in them; later searches reuse them. Untouched, that
    time falls on the first data set's GridSearchCV alone and inflates its
    speedup: ``lbfgs.py``'s iris search took GridSearchCV 8.2 s as the
    first set of a run, 3.8 s as a later one and 3.4 s after this warm-up."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV
    from sklearn.neural_network import MLPClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.arange(40) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        GridSearchCV(MLPClassifier(max_iter=1), {"alpha": [1e-4, 1e-2]}, cv=2, n_jobs=n_jobs).fit(X, y)
