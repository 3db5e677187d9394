"""A cv=5 search on a quiet machine and beside competing CPU-bound processes: skpmlp against GridSearchCV.

Users' machines are busy. Issue 19 asks that, with one other CPU-bound
process running, a search with skpmlp's default settings slow down by no
more than GridSearchCV does. This script times, in one run:

* ``skpmlp default``: ParallelMLPClassifier with its default settings
  (``n_jobs=None``: one fused run in this process, on the native kernel
  where it builds, with torch's default thread count);
* ``skpmlp n_jobs=2``: the same search cut into 2 process shards (loky),
  one thread each;
* ``skpmlp 1 thread``: the default search with ``torch.set_num_threads(1)``
  (a diagnostic: threads against processes);
* ``GridSearchCV``: ``GridSearchCV(MLPClassifier(), grid, cv=5, n_jobs=-1)``.

Each is timed quiet, then with ``--load`` competing processes (each a
``multiprocessing.Process`` spinning ``while True: pass``), started just
before and terminated just after that one timing, in a ``try/finally``; the
spinners also exit by themselves if this script dies. Reported: each wall
time (median over ``--repeats``), and each slowdown, loaded / quiet.
"Quiet" means no spinner of ours: the load average printed beside each
figure says how busy the shared machine was anyway.

Data: scikit-learn's breast_cancer, the 75 % training part of
vs_gridsearch.py's split (standardised on it). Grid: vs_gridsearch.py's 48
configurations (4 architectures x 3 activations x 2 learning rates x 2
alphas), ``max_iter=100``, ``random_state=0``.

Usage::

    python benchmarks/under_load.py             # max_iter=100, 1 spinner
    python benchmarks/under_load.py --quick     # max_iter=30
    python benchmarks/under_load.py --load 2 --repeats 3

Writes ``benchmarks/results/under_load.json``.
"""

import argparse
import contextlib
import json
import multiprocessing
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_data import CV, GRID, SEED, machine, prepare  # noqa: E402

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params  # noqa: E402

#: every skpmlp model scikit-learn's MLP with the same hyperparameters (the
#: searches' own defaults of input_transform, dropout and beta_2 are not)
SKLEARN = sklearn_mlp_params()


def spin(parent):
    """A CPU-bound loop (``while True: pass``) that ends when its parent has gone."""
    while True:
        for _ in range(1_000_000):
            pass
        if os.getppid() != parent:
            return


@contextlib.contextmanager
def competing_load(n):
    """``n`` spinning processes for the duration of the block (none for n=0)."""
    context = multiprocessing.get_context("fork")
    spinners = []
    try:
        for _ in range(n):
            p = context.Process(target=spin, args=(os.getpid(),), daemon=True)
            p.start()
            spinners.append(p)
        if spinners:
            time.sleep(0.2)  # let them reach the scheduler
        yield
    finally:
        for p in spinners:
            p.terminate()
        for p in spinners:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()


@contextlib.contextmanager
def torch_threads(n):
    previous = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def contenders(max_iter):
    """name -> (estimator factory, torch threads or None for the default)."""
    return {
        "skpmlp default": (lambda: ParallelMLPClassifier(**GRID, **SKLEARN, cv=CV, max_iter=max_iter, random_state=SEED), None),
        "skpmlp n_jobs=2": (
            lambda: ParallelMLPClassifier(**GRID, **SKLEARN, cv=CV, max_iter=max_iter, random_state=SEED, n_jobs=2), None),
        "skpmlp 1 thread": (lambda: ParallelMLPClassifier(**GRID, **SKLEARN, cv=CV, max_iter=max_iter, random_state=SEED), 1),
        "GridSearchCV": (
            lambda: GridSearchCV(MLPClassifier(max_iter=max_iter, random_state=SEED), GRID, cv=CV, n_jobs=-1),
            None),
    }


def timed_fit(make, threads, X, y, load):
    with warnings.catch_warnings(), torch_threads(threads):
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator = make()
        with competing_load(load):
            start = time.perf_counter()
            estimator.fit(X, y)
            seconds = time.perf_counter() - start
    return seconds, estimator


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="max_iter=30")
    parser.add_argument("--max-iter", type=int, help="default: 100 (30 with --quick)")
    parser.add_argument("--load", type=int, default=1, help="competing CPU-bound processes")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs of each (median)")
    parser.add_argument("--only", nargs="+", help="contenders to run (default: all)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    max_iter = args.max_iter or (30 if args.quick else 100)
    _, X, X_test, y, y_test = prepare("breast_cancer")
    runs = contenders(max_iter)
    if args.only:
        runs = {name: runs[name] for name in args.only}
    info = machine()
    print(f"breast_cancer ({X.shape[0]} training rows), cv={CV}, 48 configurations, max_iter={max_iter}, "
          f"{info['cpu_count']} CPUs, native kernel: {info['native_kernel']}, "
          f"load: {args.load} spinning process(es)")

    # warm-up (imports, kernel load, loky workers), untimed
    for name, (make, threads) in contenders(2).items():
        if name in runs:
            with warnings.catch_warnings(), torch_threads(threads):
                warnings.simplefilter("ignore")
                make().fit(X, y)

    times = {name: {"quiet": [], "loaded": []} for name in runs}
    loads = {name: {"quiet": [], "loaded": []} for name in runs}
    scores = {}
    for _ in range(args.repeats):
        for name, (make, threads) in runs.items():
            for condition, n in (("quiet", 0), ("loaded", args.load)):
                seconds, estimator = timed_fit(make, threads, X, y, n)
                times[name][condition].append(seconds)
                loads[name][condition].append(os.getloadavg()[0])
                scores[name] = (float(estimator.best_score_), float(estimator.score(X_test, y_test)))
                print(f"  {name:<16} {condition:<6} {seconds:7.2f}s  (1-min load average {loads[name][condition][-1]:.2f})",
                      flush=True)

    rows = []
    for name in runs:
        quiet, loaded = statistics.median(times[name]["quiet"]), statistics.median(times[name]["loaded"])
        rows.append({
            "contender": name, "quiet_seconds": quiet, "loaded_seconds": loaded, "slowdown": loaded / quiet,
            "quiet_seconds_all": times[name]["quiet"], "loaded_seconds_all": times[name]["loaded"],
            "load_average_quiet": loads[name]["quiet"], "load_average_loaded": loads[name]["loaded"],
            "best_cv": scores[name][0], "test": scores[name][1],
        })
    head = f"{'contender':<17} {'quiet':>8} {'loaded':>8} {'slowdown':>9} {'vs GSCV quiet':>14} {'vs GSCV loaded':>15}"
    print()
    print(head)
    print("-" * len(head))
    by_name = {r["contender"]: r for r in rows}
    grid = by_name.get("GridSearchCV")
    for r in rows:
        ratio_q = f"{grid['quiet_seconds'] / r['quiet_seconds']:.2f}x" if grid else "-"
        ratio_l = f"{grid['loaded_seconds'] / r['loaded_seconds']:.2f}x" if grid else "-"
        print(f"{r['contender']:<17} {r['quiet_seconds']:>7.2f}s {r['loaded_seconds']:>7.2f}s "
              f"{r['slowdown']:>8.2f}x {ratio_q:>14} {ratio_l:>15}")
    print("-" * len(head))
    print("slowdown = loaded / quiet; vs GSCV = GridSearchCV's time / this one's (speedup)")
    if grid and "skpmlp default" in by_name:
        ours = by_name["skpmlp default"]
        verdict = "met" if ours["slowdown"] <= grid["slowdown"] else "missed"
        print(f"target (skpmlp default slows no more than GridSearchCV): {ours['slowdown']:.2f}x "
              f"vs {grid['slowdown']:.2f}x: {verdict}")
    busy = [a for r in rows for a in r["load_average_quiet"] if a > info["cpu_count"] + 1]
    if busy:
        print(f"warning: the machine was busy during the 'quiet' timings (1-min load average up to "
              f"{max(busy):.1f} on {info['cpu_count']} CPUs, from processes not ours): the quiet times are "
              f"inflated and the slowdowns understated; rerun on an idle machine to judge the target")
    info["load_average_end"] = os.getloadavg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    payload = {"machine": info, "dataset": "breast_cancer", "n_train": X.shape[0], "grid": GRID, "cv": CV,
               "max_iter": max_iter, "load_processes": args.load, "repeats": args.repeats, "rows": rows}
    (out / "under_load.json").write_text(json.dumps(payload, indent=2, default=str))
    print(f"wrote {out / 'under_load.json'}")


if __name__ == "__main__":
    main()
