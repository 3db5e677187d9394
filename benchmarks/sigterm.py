"""SIGTERM at random moments of 1,000-model searches: exit time, checkpoint, resume (issue 41).

Four searches of 1,000 models (a random search of widths 4-64, depths 1-2,
four activations, learning rates and penalties; 600 rows of 12 features,
3 classes; float64, the native kernel): with a holdout and with 3 folds,
in one process and with ``n_jobs=2``. Each is fitted once uninterrupted
(the reference), then ``--searches / 4`` times in a child process that
gets SIGTERM at a random moment of its training; the child must exit with
SIGTERM's status within ``--grace`` seconds, leave no worker running 5 s
later, and the fit resumed from its checkpoint must equal the reference,
every array of ``tests/persistence/checkpoint_child.fitted_arrays``, bit
for bit.

Prints one line per SIGTERM (seconds from the signal to the exit) and the
median and maximum; writes ``benchmarks/results/sigterm.json``. Exits with
status 1 when any search failed.

    PYTHONPATH=. python benchmarks/sigterm.py --searches 20
"""

import argparse
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

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "persistence"), str(HERE.parent / "tests")]

from checkpoint_child import estimator, fitted_arrays, training_backend  # noqa: E402
from test_sigterm import _children, _running  # noqa: E402

DATA = dict(n_samples=600, n_features=12, n_informative=8, n_classes=3, random_state=0)
SEARCH = dict(
    hidden_layer_sizes=[[w] for w in (4, 8, 16, 32, 64)] + [[w, w] for w in (8, 16, 32)],
    activation=["relu", "tanh", "logistic", "gelu"], learning_rate_init=[1e-3, 3e-3, 1e-2, 3e-2],
    alpha=[1e-5, 1e-4, 1e-3, 1e-2], n_models=1000, max_iter=15, n_iter_no_change=1000,
    batch_size=64, dtype="float64", random_state=0,
)
KINDS = {
    "holdout": dict(SEARCH, cv=None),
    "folds": dict(SEARCH, cv=3),
    "holdout, n_jobs=2": dict(SEARCH, cv=None, n_jobs=2),
    "folds, n_jobs=2": dict(SEARCH, cv=3, n_jobs=2),
}
CHILD = HERE.parent / "tests" / "persistence" / "checkpoint_child.py"


def _fit(params):
    from sklearn.datasets import make_classification

    X, y = make_classification(**DATA)
    with warnings.catch_warnings(), training_backend("native"):
        warnings.simplefilter("ignore")
        return estimator(params).fit(X, y)


def _reference(params):
    start = time.perf_counter()
    arrays = fitted_arrays(_fit(params))
    return arrays, time.perf_counter() - start


def _terminated(params, directory, delay, grace):
    """Fit in a child, SIGTERM it ``delay`` s after its checkpoint first
    appears; ``(seconds to exit, status, stderr, workers left)``."""
    path = str(directory / "search.ckpt")
    config = dict(params=dict(params, checkpoint=path, checkpoint_every=1.0), backend="native",
                  data=DATA, out=str(directory / "out.npz"))
    (directory / "config.json").write_text(json.dumps(config))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent),
                                                        os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, str(CHILD), str(directory / "config.json")],
                             env=env, stderr=subprocess.PIPE, text=True)
    while not os.path.exists(path) and child.poll() is None:
        time.sleep(0.01)
    time.sleep(delay)
    workers = _children(child.pid)
    sent = time.perf_counter()
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(grace)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    took = time.perf_counter() - sent
    time.sleep(5)
    left = [pid for pid in workers if _running(pid)]
    return took, child.returncode, child.stderr.read(), left, path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--searches", type=int, default=20)
    parser.add_argument("--grace", type=float, default=30.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    lines, failed = [], 0
    for kind, params in KINDS.items():
        reference, seconds = _reference(params)
        print(f"{kind}: uninterrupted fit {seconds:.1f} s", flush=True)
        for _ in range(args.searches // len(KINDS)):
            delay = float(rng.uniform(0.1, 0.8 * seconds))
            with tempfile.TemporaryDirectory() as tmp:
                took, status, stderr, left, path = _terminated(params, Path(tmp), delay,
                                                               args.grace)
                resumed = fitted_arrays(_fit(dict(params, checkpoint=path)))
            same = resumed.keys() == reference.keys() and all(
                np.array_equal(resumed[n], reference[n], equal_nan=True) for n in reference)
            ok = status == -signal.SIGTERM and took < args.grace and not left and same
            failed += not ok
            line = dict(kind=kind, delay=delay, exit_seconds=took, status=status,
                        workers_left=len(left), resumed_equal=same, ok=ok,
                        message=stderr.strip().splitlines()[-1] if stderr.strip() else "")
            lines.append(line)
            print(f"  SIGTERM at {delay:5.1f} s: exit after {took:5.2f} s, status {status}, "
                  f"{len(left)} workers left, resumed equal: {same}", flush=True)
    exits = [line["exit_seconds"] for line in lines]
    print(f"{len(lines)} searches: exit after SIGTERM median {np.median(exits):.2f} s, "
          f"max {max(exits):.2f} s; {failed} failed")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "sigterm.json").write_text(json.dumps({"searches": lines}, indent=2))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
