"""Kill and resume: 20 searches, each SIGKILLed at a random moment and resumed.

Issue #28's target for checkpoints. For each of ``--searches`` different
searches (their own data seed, space, solver, training backend, halving
or not, holdout or cv), this script

1. fits the search uninterrupted, in this process (the reference);
2. starts the same fit with ``checkpoint=path`` in a process of its own
   and, once that process trains (its checkpoint file was written again
   after start-up), sends it SIGKILL after a random delay drawn between 0
   and the reference fit's duration (a kill that comes after the child
   finished is retried with a shorter delay);
3. fits it again, in a new process, with the same path: the resumed fit;
4. compares every fitted array (``cv_results_`` but times, curves, epochs,
   every model's weights on every fold, the best model's) with the
   reference, bit for bit (float64).

It prints one line per search and the count of resumed fits equal to their
reference, and writes ``benchmarks/results/kill_resume.json``.

Usage::

    python benchmarks/kill_resume.py               # 20 searches
    python benchmarks/kill_resume.py --searches 4  # a quick look
"""

import argparse
import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results"


# --------------------------------------------------------------- searches
def search_config(i):
    """The ``i``-th search: its data, parameters and backend (JSON)."""
    rng = np.random.default_rng(1000 + i)
    solver = ("adam", "sgd", "lbfgs")[i % 3]
    data = dict(n_samples=int(rng.integers(300, 700)), n_features=int(rng.integers(8, 16)),
                n_informative=5, n_classes=int(rng.integers(2, 4)), random_state=i)
    params = dict(
        hidden_layer_sizes=[[int(rng.integers(4, 24))], [int(rng.integers(4, 24))],
                            [8, int(rng.integers(4, 12))]],
        alpha=[1e-4, 1e-2], solver=solver, max_iter=int(rng.integers(15, 30)),
        dtype="float64", random_state=i, cv=None if (i // 2) % 2 else 2,
    )
    if solver != "lbfgs":
        # torch's fused steps cost ~10 ms each here: fewer of them
        params.update(learning_rate_init=[0.003, 0.01, 0.03],
                      batch_size=16 if i % 2 == 0 else 64, n_iter_no_change=1000)
        if i % 4 != 3:
            params.update(pruning="halving", min_iter=2, halving_factor=2)
    return {"data": data, "params": params, "backend": ("native", "torch")[i % 2]}


def fitted_arrays(search):
    """Every array of a fitted search that an uninterrupted fit fixes."""
    arrays = {}
    for name, value in search.cv_results_.items():
        if "time" in name or name.startswith("param") or not isinstance(value, np.ndarray):
            continue
        arrays[f"cv_results_.{name}"] = np.asarray(value)
    for name in ("loss_curves_", "validation_scores_per_model_", "n_iter_per_model_",
                 "validation_loss_"):
        if getattr(search, name, None) is not None:
            arrays[name] = np.asarray(getattr(search, name))
    for name in ("_coefs", "_intercepts"):
        arrays[name] = np.concatenate([np.ravel(w) for fold in getattr(search, name)
                                       for model in fold for w in model])
    arrays["coefs_"] = np.concatenate([np.ravel(w) for w in search.coefs_])
    return arrays


@contextlib.contextmanager
def training_backend(backend):
    import skpmlp._search._plan

    original = skpmlp._search._plan.train_config
    skpmlp._search._plan.train_config = lambda *a, **kw: dataclasses.replace(
        original(*a, **kw), backend=backend)
    try:
        yield
    finally:
        skpmlp._search._plan.train_config = original


def fit(config, **extra):
    """Fit the search of ``config`` (with ``extra`` parameters)."""
    from sklearn.datasets import make_classification

    from skpmlp import ParallelMLPClassifier

    X, y = make_classification(**config["data"])
    params = dict(config["params"], **extra)
    params["hidden_layer_sizes"] = [tuple(h) for h in params["hidden_layer_sizes"]]
    with warnings.catch_warnings(), training_backend(config["backend"]):
        warnings.simplefilter("ignore")
        return ParallelMLPClassifier(**params).fit(X, y)


def child(config_path):
    """What a child process runs: the checkpointed fit, its arrays saved."""
    with open(config_path) as handle:
        config = json.load(handle)
    search = fit(config, checkpoint=config["checkpoint"], checkpoint_every=1e-3)
    np.savez(config["out"], **fitted_arrays(search))


# ------------------------------------------------------------- the kills
def _stamp(path):
    try:
        stat = os.stat(path)
        return stat.st_ino, stat.st_mtime_ns
    except FileNotFoundError:
        return None


def _start(config_path):
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    return subprocess.Popen([sys.executable, __file__, "--child", config_path], env=env)


def kill_once(config_path, checkpoint, delay):
    """Start the child, SIGKILL it ``delay`` seconds after it trains.
    Returns whether the kill came before the child finished."""
    before = _stamp(checkpoint)
    process = _start(config_path)
    while _stamp(checkpoint) in (None, before):
        if process.poll() is not None:
            return False
        time.sleep(0.002)
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return process.returncode == -signal.SIGKILL


def run_search(i, rng, directory):
    """Reference, a kill, a resume; the comparison."""
    config = search_config(i)
    start = time.perf_counter()
    reference = fitted_arrays(fit(config))
    seconds = time.perf_counter() - start
    checkpoint = os.path.join(directory, f"search{i}.ckpt")
    out = os.path.join(directory, f"search{i}.npz")
    config_path = os.path.join(directory, f"search{i}.json")
    with open(config_path, "w") as handle:
        json.dump(dict(config, checkpoint=checkpoint, out=out), handle)
    delay, killed = rng.uniform(0, seconds), False
    for _ in range(6):
        if kill_once(config_path, checkpoint, delay):
            killed = True
            break
        os.remove(checkpoint)  # the child finished first: again, killed sooner
        delay /= 3
    resumed_process = _start(config_path)
    resumed_process.wait()
    resumed = dict(np.load(out))
    differing = [k for k in reference if k not in resumed
                 or not np.array_equal(reference[k], resumed[k], equal_nan=True)]
    same = reference.keys() == resumed.keys() and not differing
    return {"search": i, "backend": config["backend"], "solver": config["params"]["solver"],
            "pruning": config["params"].get("pruning"), "cv": config["params"]["cv"],
            "fit_seconds": seconds, "kill_delay": delay, "killed": killed,
            "resumed_rc": resumed_process.returncode, "same": bool(same), "differing": differing}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--searches", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    rng = np.random.default_rng(args.seed)
    rows = []
    print(f"{'search':>6} {'backend':>7} {'solver':>6} {'pruning':>8} {'cv':>4} "
          f"{'fit s':>6} {'kill at s':>9} {'killed':>6} {'equal':>5}")
    with tempfile.TemporaryDirectory() as directory:
        for i in range(args.searches):
            row = run_search(i, rng, directory)
            rows.append(row)
            print(f"{i:>6} {row['backend']:>7} {row['solver']:>6} {str(row['pruning']):>8} "
                  f"{str(row['cv']):>4} {row['fit_seconds']:>6.2f} {row['kill_delay']:>9.3f} "
                  f"{str(row['killed']):>6} {str(row['same']):>5}", flush=True)
    killed = sum(r["killed"] for r in rows)
    same = sum(r["same"] and r["killed"] for r in rows)
    print(f"\n{killed} of {len(rows)} searches SIGKILLed mid-fit; {same} of those resumed to the "
          f"uninterrupted result bit for bit (float64).")
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "kill_resume.json", "w") as handle:
        json.dump({"searches": rows, "killed": killed, "equal": same}, handle, indent=1)


if __name__ == "__main__":
    main()
