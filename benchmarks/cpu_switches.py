"""Do glibc's heap-only allocation and flush-to-zero still pay on the CPU?

Up to 6f3a6e8, every CPU fit switched two process-wide settings for its
duration (``skpmlp/_engine/_cpu.py``):

* ``mallopt(M_MMAP_MAX, 0)`` and ``mallopt(M_TRIM_THRESHOLD, 1 GiB)``, so
  that activation tensors of tens of MB were reused from the heap instead
  of being served as fresh ``mmap`` pages (first-touch page faults every
  step);
* ``torch.set_flush_denormal(True)``, against slow arithmetic on denormal
  floats.

Neither can be scoped to a fit: glibc's settings cannot be read back, and
setting either one turns off glibc's dynamic mmap threshold for the rest of
the process; flush-to-zero is a per-thread CPU flag, which the OpenMP
workers that already exist never get and the ones created during the fit
keep. So both were dropped once this benchmark showed they no longer pay
more than 10%. Measured on a shared 2-core AMD EPYC, ``OMP_NUM_THREADS=1``,
float32, Adam, each run a fresh process, runs with and without the switches
alternating; the figure is the median over pairs of the ratio of
whole-process CPU seconds (this script reports the fit's own seconds)::

    workload                                            off / on (CPU s)
    digits, 72 models (4 archs x 3 act. x 2 lr x 3 alpha),
        30 epochs                                       1.00  (6 pairs)
    1,000 models (widths 1..100 x ten activations),
        10,000 x 50, batch 128, 2 epochs                1.04  (5 pairs;
                                                        heap-only alone
                                                        1.03)
    10,000 models (the same x 10 repeats),
        10,000 x 50, batch 256, 2 epochs                1.08  (4 pairs)

The gain appears only where one activation tensor outgrows glibc's dynamic
mmap threshold (32 MiB): the 10,000-model run spent 10.4 s instead of 3.0 s
in the kernel (page faults) out of about 140 s, while its user time changed
by 1.4%. Heap-only allocation of that size is an application-wide choice
that glibc leaves to the user, without any code:
``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1073741824 python train.py``
(or ``GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=1073741824``).
This script sets the same switches from inside a fresh process for each
run, so it can measure them again after later engine work.

Usage::

    python benchmarks/cpu_switches.py --quick         # digits only
    python benchmarks/cpu_switches.py                 # digits and 1,000 models
    python benchmarks/cpu_switches.py --cases paper10000 --repeats 4
    python benchmarks/cpu_switches.py --variants both,none,malloc,denormal

Writes ``benchmarks/results/cpu_switches.json``.
"""

import argparse
import contextlib
import ctypes
import ctypes.util
import json
import resource
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import torch

CASES = ("digits", "paper1000", "paper10000")
VARIANTS = {
    "both": (True, True),  # (heap-only allocation, flush-to-zero): as up to 6f3a6e8
    "none": (False, False),  # as now
    "malloc": (True, False),
    "denormal": (False, True),
}
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4


@contextlib.contextmanager
def switches(heap_only, flush_denormal):
    """The two removed settings, in a process of its own (nothing restored)."""
    if heap_only:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_M_MMAP_MAX, 0)
        libc.mallopt(_M_TRIM_THRESHOLD, 2**30)
    if flush_denormal:
        torch.set_flush_denormal(True)
    yield


def estimator(case):
    """The search and its data for ``case``."""
    from sklearn.datasets import load_digits, make_classification

    from skpmlp import ParallelMLPClassifier
    from skpmlp._engine import ACTIVATIONS

    full = dict(random_state=0, early_stopping=False, n_iter_no_change=10**6)
    if case == "digits":
        X, y = load_digits(return_X_y=True)
        search = ParallelMLPClassifier(
            hidden_layer_sizes=[(32,), (64,), (128,), (64, 64)], activation=("relu", "tanh", "logistic"),
            learning_rate_init=(1e-3, 1e-2), alpha=(1e-4, 1e-3, 1e-2), max_iter=30, **full,
        )
        return search, X / 16.0, y
    X, y = make_classification(10000, 50, random_state=0)
    repeats, batch = (1, 128) if case == "paper1000" else (10, 256)
    search = ParallelMLPClassifier(
        hidden_layer_sizes=[(w,) for w in range(1, 101)], activation=tuple(ACTIVATIONS),
        n_repeats=repeats, batch_size=batch, max_iter=2, **full,
    )
    return search, X, y


def child(variant, case):
    """One fit in this (fresh) process; prints its seconds as JSON."""
    search, X, y = estimator(case)
    with switches(*VARIANTS[variant]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        usage = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        search.fit(X, y)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "wall": wall, "user": after.ru_utime - usage.ru_utime, "sys": after.ru_stime - usage.ru_stime,
        "models": int(search.n_models_), "threads": torch.get_num_threads(),
    }))


def run_child(variant, case):
    out = subprocess.run(
        [sys.executable, __file__, "--child", variant, case], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(case, variants, repeats):
    """Runs alternating between variants (the order flipped every round, so
    drift of a shared machine falls on each alike)."""
    runs = {v: [] for v in variants}
    for r in range(repeats):
        for variant in variants if r % 2 == 0 else variants[::-1]:
            runs[variant].append(run_child(variant, case))
            last = runs[variant][-1]
            print(f"  {case:<10} {variant:<9} wall {last['wall']:8.2f} s  cpu "
                  f"{last['user'] + last['sys']:8.2f} s  (sys {last['sys']:.2f} s)", flush=True)
    return runs


def summary(runs, baseline):
    """Per variant: median wall / user / sys seconds and the median of the
    paired CPU-time ratios to ``baseline``."""
    cpu = {v: [r["user"] + r["sys"] for r in rs] for v, rs in runs.items()}
    rows = {}
    for variant, rs in runs.items():
        rows[variant] = {
            "models": rs[0]["models"], "threads": rs[0]["threads"],
            **{k: statistics.median(r[k] for r in rs) for k in ("wall", "user", "sys")},
            f"cpu_vs_{baseline}": statistics.median(a / b for a, b in zip(cpu[variant], cpu[baseline])),
        }
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", nargs=2, metavar=("VARIANT", "CASE"), help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="digits only")
    parser.add_argument("--cases", default="digits,paper1000")
    parser.add_argument("--variants", default="both,none")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return
    cases = ["digits"] if args.quick else args.cases.split(",")
    variants = args.variants.split(",")
    assert set(cases) <= set(CASES) and set(variants) <= set(VARIANTS), "unknown case or variant"
    results = {case: summary(measure(case, variants, args.repeats), variants[0]) for case in cases}
    print()
    print(f"{'case':<11} {'variant':<9} {'models':>6} {'wall s':>8} {'user s':>8} {'sys s':>7} "
          f"{'cpu / ' + variants[0]:>12}")
    for case, rows in results.items():
        for variant, row in rows.items():
            print(f"{case:<11} {variant:<9} {row['models']:>6} {row['wall']:>8.2f} {row['user']:>8.2f} "
                  f"{row['sys']:>7.2f} {row['cpu_vs_' + variants[0]]:>12.3f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cpu_switches.json").write_text(json.dumps(results, indent=2))
    print(f"wrote {out / 'cpu_switches.json'}")


if __name__ == "__main__":
    main()
