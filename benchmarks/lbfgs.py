"""skpmlp's fused ``solver="lbfgs"`` search against GridSearchCV(MLPClassifier(solver="lbfgs")).

Issue 20, item 1: on small real data sets that ship with scikit-learn
(iris, wine, breast_cancer, digits: classification; diabetes: regression),
the test scores of an lbfgs search are to be within 0.01 of scikit-learn's
lbfgs MLPs on the same configurations, and the search >= 10x faster than
``GridSearchCV(MLPClassifier(solver="lbfgs"), grid, cv=5, n_jobs=-1)``.

Each data set is split once (25 % test, stratified for classifiers,
``random_state=0``) and scaled on its training part, as in
``vs_gridsearch.py`` (whose ``prepare`` this script uses). Grid (27
configurations): hidden_layer_sizes (16,), (64,), (64, 32) x activation
relu, tanh, logistic x alpha 1e-4, 1e-2, 1; 5-fold CV, ``max_iter=200``,
``tol=1e-4``, ``max_fun=15000`` (scikit-learn's defaults). skpmlp runs in
float64 (scikit-learn's lbfgs works in float64) with one
``learning_rate_init`` (lbfgs ignores it); everything else at its defaults
(the native kernel's gradients on CPU). Both searches refit their best
configuration on the whole training part inside the timed ``fit``.

Initial weights differ between the libraries (different random streams),
so single configurations differ by their initialisation; the parity
figures are therefore the test scores of the two refitted best models, the
mean over configurations of ``mean_test_score`` (CV) on both sides, and
``sk@ours``: scikit-learn's lbfgs MLP trained with skpmlp's best
configuration.

Times: medians over ``--repeats`` runs, the two searches interleaved, in one
process: ratios, on a shared machine. ``OMP_NUM_THREADS`` is pinned to 1
before numpy loads (GridSearchCV's workers then use one BLAS thread each,
``n_jobs=-1`` uses every core); skpmlp's native kernel uses
``--torch-threads`` threads (default: the number of cores).

``--limits`` adds, per data set, where the time goes, on one thread and
in CPU seconds (``time.thread_time`` / ``process_time``, robust to other
jobs on the machine): the function evaluations per model of skpmlp's fused
run and of scikit-learn's lbfgs fits on the same configurations and folds
(serial, scipy's ``nfev``), the CPU time per model evaluation on both
sides, the fused run's achieved GFLOP/s (rows x ``_harness.training_flops``
per model evaluation: forward, backward) against the float64 matrix-multiply rate
measured with torch on the search's own layer shapes, and against the
machine's float64 matmul limit (a large ``torch.mm`` on one thread, which
runs near the FMA peak): ``of limit``. ``bound s`` is the time the fused
run's evaluations would take at that limit on every core, and ``max
speedup`` GridSearchCV's seconds (the timed run above) over it: the
speedup no implementation of the same evaluations could beat, where the
target asks more. The products are not all an iteration reads: the
two-loop recursion streams every curvature pair a model holds twice (its
s and y, 10 pairs of the model's parameters, float64), which for the
small sets' models costs about as much as their evaluation. ``pairs
GB/s`` is the rate one core streams data from its L2 cache, where a
model's pairs stay from one iteration to the next (``arithmetic_peak.py``'s
``read_rate``: a float64 dot of two vectors filling half of one core's
L2, in independent chains of the native build's vectors, one thread; a
numpy dot of two 512 KB vectors, timed before, read 95-113 GB/s on AMD
Zen 5 where this reads 200-230: numpy's loop and, with 1 MB in all, L3),
``b+pairs s`` the bound plus every pair the
models' iterations read at that rate on every core, ``of b+pairs`` the
fused run's CPU time against it, and the second ``max speedup``
GridSearchCV's seconds over it. Nor are the products all an evaluation
computes: each of its tanh and logistic units takes the kernel's float64
activation pass (``vector_math.py``'s, about as long a value as a dozen
multiply-adds of the products). ``full s`` adds them at that pass's rate
on every core (the whole bound: products, pairs and activations), ``of
full`` is the fused run's CPU time against it, and the last ``max
speedup`` GridSearchCV's seconds over it; the summary line gives their
geometric mean, and the share of the whole bound every set would need to
reach for the target's geometric mean. ``torch.mm``'s float64 rate is not
the machine's limit everywhere (AMD Zen 5: 51 of the 117 GFLOP/s a thread
that its FMA units reach): ``of peak`` sets the fused run's GFLOP/s against
the native build's float64 multiply-add peak of one thread
(``arithmetic_peak.py --dtype float64``).

Usage::

    python benchmarks/lbfgs.py                      # five data sets
    python benchmarks/lbfgs.py --datasets iris wine --repeats 3
    python benchmarks/lbfgs.py --datasets iris diabetes --limits
    python benchmarks/lbfgs.py --targets native,x86-64-v3,x86-64-v2   # every kernel width

``--targets`` runs skpmlp's search with the kernels built for each target
(``SKPMLP_KERNEL_TARGET``), interleaved with the others and GridSearchCV in
every repeat, and prints each build's time, speedup and test score and
each build's geometric mean; the first target's search is the one the
table and ``--limits`` describe.

Writes ``benchmarks/results/lbfgs.json``.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy / torch load

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.optimize  # noqa: E402
import torch  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid, StratifiedKFold  # noqa: E402
from sklearn.neural_network import MLPClassifier, MLPRegressor  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import vector_math  # noqa: E402
from _harness import machine_limits, network_outputs, training_flops, warm_gridsearch  # noqa: E402
from arithmetic_peak import peaks, read_rate  # noqa: E402
from vs_gridsearch import (  # noqa: E402
    DATASETS,
    TRANSCENDENTAL,
    fit_on_target,
    geomean_by_target,
    machine,
    prepare,
    target_line,
    target_results,
    timed,
    use_target,
)

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, _kernels, sklearn_mlp_params  # noqa: E402
from skpmlp._engine._lbfgs import _fused as _lbfgs  # noqa: E402

GRID = {
    "hidden_layer_sizes": [(16,), (64,), (64, 32)],
    "activation": ["relu", "tanh", "logistic"],
    "alpha": [1e-4, 1e-2, 1.0],
}
CV = 5
SEED = 0
MAX_ITER = 200
TARGET_SPEEDUP = 10.0
#: issue 39's geometric mean
TARGET_GEOMEAN = 8.0
TARGET_GAP = 0.01


def key(params):
    return tuple(sorted((k, v) for k, v in params.items() if k in GRID))


def fit_ours(ours_class, X_train, y_train, torch_threads, target, max_iter=MAX_ITER):
    """skpmlp's lbfgs search with the kernels built for ``target``
    (``vs_gridsearch.fit_on_target``)."""
    return fit_on_target(lambda: ours_class(
        **GRID, **sklearn_mlp_params(ours_class), solver="lbfgs", learning_rate_init=1e-3, cv=CV,
        max_iter=max_iter, dtype="float64", random_state=SEED), X_train, y_train, torch_threads, target)


def run(name, repeats, n_jobs, torch_threads, targets=("native",)):
    task, X_train, X_test, y_train, y_test = prepare(name)
    ours_class, single = (
        (ParallelMLPClassifier, MLPClassifier) if task == "classification"
        else (ParallelMLPRegressor, MLPRegressor)
    )
    grid_seconds = []
    by_target = {target: [] for target in targets}
    for _ in range(repeats):  # interleaved: all see the same machine load
        for target in targets:
            by_target[target].append(fit_ours(ours_class, X_train, y_train, torch_threads, target))
        grid, seconds = timed(lambda: GridSearchCV(
            single(solver="lbfgs", max_iter=MAX_ITER, random_state=SEED), GRID, cv=CV, n_jobs=n_jobs,
        ).fit(X_train, y_train))
        grid_seconds.append(seconds)
    use_target(targets[0])  # the first target's kernels for what follows (--limits)
    ours = by_target[targets[0]][-1][0]  # the search described in detail
    ours_seconds = [seconds for _, seconds, _ in by_target[targets[0]]]
    crossed, _ = timed(lambda: single(solver="lbfgs", max_iter=MAX_ITER, random_state=SEED,
                                      **{k: ours.best_params_[k] for k in GRID}).fit(X_train, y_train))
    ours_cv = {key(p): s for p, s in zip(ours.cv_results_["params"], ours.cv_results_["mean_test_score"])}
    grid_cv = {key(p): s for p, s in zip(grid.cv_results_["params"], grid.cv_results_["mean_test_score"])}
    keys = sorted(grid_cv)
    diffs = np.array([ours_cv[k] - grid_cv[k] for k in keys])
    ours_test = float(ours.score(X_test, y_test))
    grid_test = float(grid.best_estimator_.score(X_test, y_test))
    grid_time, ours_time = statistics.median(grid_seconds), statistics.median(ours_seconds)
    n_iter = np.asarray(ours.cv_results_["n_iter"])
    return {
        "dataset": name, "task": task, "n_train": X_train.shape[0], "n_features": X_train.shape[1],
        "configurations": len(keys), "folds": CV, "max_iter": MAX_ITER, "repeats": repeats,
        "score": "accuracy" if task == "classification" else "r2",
        "gridsearch_seconds": grid_time, "skpmlp_seconds": ours_time,
        "gridsearch_seconds_all": grid_seconds, "skpmlp_seconds_all": ours_seconds,
        "speedup": grid_time / ours_time,
        "gridsearch_test": grid_test, "skpmlp_test": ours_test, "test_gap": ours_test - grid_test,
        "sklearn_test_with_skpmlp_best_params": float(crossed.score(X_test, y_test)),
        "gridsearch_mean_cv": float(np.mean(list(grid_cv.values()))),
        "skpmlp_mean_cv": float(np.mean(list(ours_cv.values()))),
        "mean_cv_gap": float(diffs.mean()), "mean_abs_config_cv_gap": float(np.abs(diffs).mean()),
        "max_abs_config_cv_gap": float(np.abs(diffs).max()),
        "gridsearch_best_cv": float(grid.best_score_), "skpmlp_best_cv": float(ours.best_score_),
        "gridsearch_best_params": grid.best_params_, "skpmlp_best_params": ours.best_params_,
        "skpmlp_n_iter_mean": float(n_iter.mean()), "skpmlp_n_iter_max": int(n_iter.max()),
        "skpmlp_backend": "native" if ours.shards_ else None,
        "targets": target_results(by_target, grid_time, X_test, y_test),
    }


def _matmul_gflops(rows, widths, repeats=20):
    """float64 torch.mm GFLOP/s on one thread over (rows, a) @ (a, b) for
    the consecutive ``widths`` (the best of ``repeats``)."""
    flops, seconds = 0.0, 0.0
    for a, b in zip(widths[:-1], widths[1:]):
        x = torch.randn(rows, a, dtype=torch.float64)
        w = torch.randn(a, b, dtype=torch.float64)
        best = np.inf
        for _ in range(repeats):
            start = time.thread_time()
            for _ in range(10):
                torch.mm(x, w)
            best = min(best, (time.thread_time() - start) / 10)
        flops, seconds = flops + 2 * rows * a * b, seconds + best
    return flops / seconds / 1e9


def _machine_matmul_gflops():
    """The machine's float64 matmul limit on one thread, GFLOP/s
    (:func:`_harness.machine_limits`' large ``torch.mm``)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return machine_limits(dtype=torch.float64)["matmul_gflops"]
    finally:
        torch.set_num_threads(previous)


def _history_bytes(n_iter, n_params):
    """Bytes the two-loop recursion reads over a model's run: at its
    iteration i it holds min(i - 1, HISTORY) pairs and reads each pair's s
    and y twice (once a loop), float64."""
    pairs = sum(min(i - 1, _kernels.HISTORY) for i in range(1, int(n_iter) + 1))
    return 4 * 8 * n_params * pairs


def limits(name):
    """Where the time goes on ``name``, one thread, CPU seconds (see the
    module docstring)."""
    task, X_train, _, y_train, _ = prepare(name)
    ours_class, single = (
        (ParallelMLPClassifier, MLPClassifier) if task == "classification"
        else (ParallelMLPRegressor, MLPRegressor)
    )
    runs, original = [], _lbfgs._result

    def spy(*args, **kwargs):  # the fused run's result (its function evaluations)
        result = original(*args, **kwargs)
        runs.append(result)
        return result

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    _lbfgs._result = spy
    try:
        # the search's CPU time on this thread (the kernel runs on it with
        # one thread): the fused run and the scoring of its folds, no refit
        start = time.thread_time()
        ours = ours_class(**GRID, **sklearn_mlp_params(ours_class), solver="lbfgs", learning_rate_init=1e-3, cv=CV, max_iter=MAX_ITER,
                          dtype="float64", random_state=SEED, refit=False).fit(X_train, y_train)
        ours_cpu = time.thread_time() - start
    finally:
        _lbfgs._result = original
        torch.set_num_threads(previous)
    result, = runs
    n_fun = result.extra["n_fun"]  # (configurations, folds), in cv_results_'s order
    assert np.array_equal(result.n_iter.max(1), np.asarray(ours.cv_results_["n_iter"]))
    splitter = (StratifiedKFold if task == "classification" else KFold)(CV)
    folds = list(splitter.split(X_train, y_train))
    rows = np.array([len(train) for train, _ in folds])
    n_outputs_ours = network_outputs(task, y_train)
    configs = [dict(zip(("hidden_layer_sizes", "activation", "alpha"), values)) for values in zip(
        *(ours.cv_results_[f"param_{k}"] for k in ("hidden_layer_sizes", "activation", "alpha")))]
    row_flops = np.array([training_flops([X_train.shape[1], *c["hidden_layer_sizes"], n_outputs_ours])
                          for c in configs])
    flops = float((n_fun * row_flops[:, None] * rows[None, :]).sum())

    nfev, original_minimize = [], scipy.optimize.minimize

    def spy_minimize(*args, **kwargs):
        found = original_minimize(*args, **kwargs)
        nfev.append(found.nfev)
        return found

    scipy.optimize.minimize = spy_minimize
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for params in ParameterGrid(GRID):
                for train, _ in folds:
                    single(solver="lbfgs", max_iter=MAX_ITER, random_state=SEED, **params).fit(
                        X_train[train], y_train[train])
    finally:
        scipy.optimize.minimize = original_minimize
    sklearn_cpu = time.process_time() - start
    widest = [X_train.shape[1], 64, 32, n_outputs_ours]
    n_params = np.array([sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:])) for sizes in (
        [X_train.shape[1], *c["hidden_layer_sizes"], n_outputs_ours] for c in configs)])
    history = float(sum(_history_bytes(it, n) for its, n in zip(result.n_iter, n_params) for it in its))
    # each evaluation's forward computes f once per hidden unit and row
    # (the backward's f' is a multiply-add of f)
    activations = dict.fromkeys(TRANSCENDENTAL, 0.0)
    for c, evals in zip(configs, n_fun):
        if c["activation"] in activations:
            activations[c["activation"]] += float(sum(c["hidden_layer_sizes"]) * (evals * rows).sum())
    return {
        "dataset": name, "skpmlp_evals_per_model": float(n_fun.mean()),
        "sklearn_evals_per_model": float(np.mean(nfev)), "skpmlp_cpu_s": ours_cpu,
        "sklearn_cpu_s": sklearn_cpu, "skpmlp_us_per_eval": 1e6 * ours_cpu / n_fun.sum(),
        "sklearn_us_per_eval": 1e6 * sklearn_cpu / np.sum(nfev), "skpmlp_gflops": flops / ours_cpu / 1e9,
        "matmul_gflops_on_shapes": _matmul_gflops(int(rows.mean()), widest),
        "cpu_ratio": sklearn_cpu / ours_cpu, "skpmlp_gflop": flops / 1e9,
        "history_gb": history / 1e9, "activation_values": activations,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", choices=sorted(DATASETS), default=sorted(DATASETS))
    parser.add_argument("--repeats", type=int, default=1, help="timed runs of each search (median)")
    parser.add_argument("--n-jobs", type=int, default=-1, help="GridSearchCV's n_jobs")
    parser.add_argument("--torch-threads", type=int, default=os.cpu_count(), help="skpmlp's threads")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--limits", action="store_true", help="also where the time goes (see the docstring)")
    parser.add_argument("--targets", default="native",
                        help="kernel targets of skpmlp's searches, comma-separated (e.g. native,x86-64-v3,"
                             "x86-64-v2); the first one's search is the one described in detail")
    args = parser.parse_args(argv)
    targets = tuple(args.targets.split(","))
    rows = []
    header = (f"{'data set':14} {'GSCV s':>8} {'skpmlp s':>9} {'speedup':>8} {'test GSCV':>9} "
              f"{'test ours':>9} {'gap':>7} {'sk@ours':>8} {'meanCV GSCV':>11} {'meanCV ours':>11}")
    print(header)
    for target in targets:  # warm: the kernels' load and first calls are no data set's time
        _, X_warm, _, y_warm, _ = prepare("iris")
        fit_ours(ParallelMLPClassifier, X_warm, y_warm, args.torch_threads, target, max_iter=1)
    warm_gridsearch(args.n_jobs)  # ... nor GridSearchCV's worker start
    for name in args.datasets:
        row = run(name, args.repeats, args.n_jobs, args.torch_threads, targets)
        rows.append(row)
        print(f"{name:14} {row['gridsearch_seconds']:8.2f} {row['skpmlp_seconds']:9.2f} "
              f"{row['speedup']:7.1f}x {row['gridsearch_test']:9.4f} {row['skpmlp_test']:9.4f} "
              f"{row['test_gap']:+7.4f} {row['sklearn_test_with_skpmlp_best_params']:8.4f} "
              f"{row['gridsearch_mean_cv']:11.4f} {row['skpmlp_mean_cv']:11.4f}", flush=True)
        if len(targets) > 1:
            print(target_line(row["targets"]), flush=True)
    speedups = [r["speedup"] for r in rows]
    geo = float(np.exp(np.mean(np.log(speedups))))
    within = [abs(r["test_gap"]) <= TARGET_GAP for r in rows]
    within_cv = [abs(r["mean_cv_gap"]) <= TARGET_GAP for r in rows]
    summary = {
        "geometric_mean_speedup": geo, "min_speedup": min(speedups),
        "datasets_within_test_gap": int(sum(within)), "datasets_within_mean_cv_gap": int(sum(within_cv)),
        "target_speedup": TARGET_SPEEDUP, "target_gap": TARGET_GAP,
    }
    print(f"speedup: geometric mean {geo:.1f}x, min {min(speedups):.1f}x (target >= {TARGET_SPEEDUP:.0f}x); "
          f"|test gap| <= {TARGET_GAP}: {sum(within)}/{len(rows)}; |mean CV gap| <= {TARGET_GAP}: "
          f"{sum(within_cv)}/{len(rows)}")
    summary["geometric_mean_speedup_by_target"] = geomean_by_target(rows, targets)
    if len(targets) > 1:
        print("geometric mean speedup by kernel target: "
              + ", ".join(f"{t} {v:.1f}x" for t, v in summary["geometric_mean_speedup_by_target"].items()))
    limit_rows = []
    if args.limits:
        peak = _machine_matmul_gflops()
        fma_peak = peaks(["native"], dtype="float64")["native"]
        pairs_rate = read_rate("native", "float64")
        per_value = vector_math.activation_seconds(TRANSCENDENTAL, "float64")
        print(f"machine float64 matmul limit: {peak:.1f} GFLOP/s a thread (FMA peak {fma_peak:.1f}), "
              f"{os.cpu_count()} cores; "
              f"L2 read rate {pairs_rate:.0f} GB/s a thread; float64 activation pass "
              + ", ".join(f"{a} {t * 1e9:.3f} ns" for a, t in per_value.items()) + " a value")
        print(f"{'data set':14} {'evals ours':>10} {'evals sk':>8} {'CPU ours':>8} {'CPU sk':>7} "
              f"{'us/eval ours':>12} {'us/eval sk':>10} {'GFLOP/s':>7} {'mm GFLOP/s':>10} {'CPU ratio':>9} "
              f"{'of limit':>8} {'of peak':>7} {'bound s':>7} {'max speedup':>11} {'pairs GB/s':>10} {'b+pairs s':>9} "
              f"{'of b+pairs':>10} {'max speedup':>11} {'full s':>7} {'of full':>7} {'max speedup':>11}")
        gridsearch = {r["dataset"]: r["gridsearch_seconds"] for r in rows}
        for name in args.datasets:
            row = limits(name)
            row["machine_gflops"], row["history_read_gbs"] = peak, pairs_rate
            row["of_machine_limit"] = row["skpmlp_gflops"] / peak
            row["fma_peak_gflops"] = fma_peak
            row["of_fma_peak"] = row["skpmlp_gflops"] / fma_peak
            row["bound_seconds"] = row["skpmlp_gflop"] / (peak * os.cpu_count())
            row["max_speedup"] = gridsearch[name] / row["bound_seconds"]
            row["bound_with_pairs_seconds"] = row["bound_seconds"] + (
                row["history_gb"] / row["history_read_gbs"] / os.cpu_count())
            row["of_bound_with_pairs"] = (row["bound_with_pairs_seconds"] * os.cpu_count()
                                          / row["skpmlp_cpu_s"])
            row["max_speedup_with_pairs"] = gridsearch[name] / row["bound_with_pairs_seconds"]
            row["activation_seconds_per_value"] = per_value
            row["full_bound_seconds"] = row["bound_with_pairs_seconds"] + sum(
                n * per_value[a] for a, n in row["activation_values"].items()) / os.cpu_count()
            row["of_full_bound"] = row["full_bound_seconds"] * os.cpu_count() / row["skpmlp_cpu_s"]
            row["max_speedup_full"] = gridsearch[name] / row["full_bound_seconds"]
            limit_rows.append(row)
            print(f"{name:14} {row['skpmlp_evals_per_model']:10.1f} {row['sklearn_evals_per_model']:8.1f} "
                  f"{row['skpmlp_cpu_s']:8.2f} {row['sklearn_cpu_s']:7.2f} {row['skpmlp_us_per_eval']:12.1f} "
                  f"{row['sklearn_us_per_eval']:10.1f} {row['skpmlp_gflops']:7.1f} "
                  f"{row['matmul_gflops_on_shapes']:10.1f} {row['cpu_ratio']:8.1f}x "
                  f"{row['of_machine_limit']:8.0%} {row['of_fma_peak']:7.0%} {row['bound_seconds']:7.2f} {row['max_speedup']:10.1f}x "
                  f"{row['history_read_gbs']:10.0f} {row['bound_with_pairs_seconds']:9.3f} "
                  f"{row['of_bound_with_pairs']:10.0%} {row['max_speedup_with_pairs']:10.1f}x "
                  f"{row['full_bound_seconds']:7.3f} {row['of_full_bound']:7.0%} "
                  f"{row['max_speedup_full']:10.1f}x", flush=True)
        best = float(np.exp(np.mean(np.log([r["max_speedup_full"] for r in limit_rows]))))
        summary.update(geometric_mean_max_speedup_full=best,
                       full_bound_share_for_target=TARGET_GEOMEAN / best)
        print(f"at the whole bound: geometric mean {best:.1f}x; {TARGET_GEOMEAN:.0f}x needs every set at "
              f"{TARGET_GEOMEAN / best:.0%} of its whole bound (the fused run's CPU time against its "
              f"bound's, all sets: {sum(r['full_bound_seconds'] for r in limit_rows) * os.cpu_count() / sum(r['skpmlp_cpu_s'] for r in limit_rows):.0%})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine(), "grid": {k: [list(v) if isinstance(v, tuple) else v for v in vs]
                                               for k, vs in GRID.items()},
               "cv": CV, "rows": rows, "summary": summary, "limits": limit_rows}
    (out / "lbfgs.json").write_text(json.dumps(payload, indent=2, default=str))
    print(f"wrote {out / 'lbfgs.json'}")


if __name__ == "__main__":
    main()
