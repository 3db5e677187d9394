"""Fuzz skpmlp.io.load with mutated files: every one is refused cleanly or loads a working model.

Saves a few fitted estimators (a lone classifier and regressor, a search
with cross-validation, a search whose best estimator is an ensemble, a
compressed file), then loads ``--files`` mutations of them (see
``tests/persistence/file_mutations.py``: flipped, inserted, deleted bytes, truncation,
grown ``.npy`` headers up to 10^12 elements, edited JSON documents, flipped
weights, members dropped or renamed). Each load runs under a 10 s alarm
(a hang) with :mod:`tracemalloc` measuring its peak allocation (numpy
reports its buffers to it); the process's peak RSS is read before and
after. A crash (segfault) would end the run: ``faulthandler`` prints where.

The outcome of every file is one of:

* ``refused``: :class:`skpmlp.io.InvalidFileError`, by mutation kind;
* ``unchanged``: a raw-byte mutation that zip's CRC cannot see (a date,
  an attribute byte of the zip directory) loads the same model;
* ``loaded``: a rebuilt archive (fresh CRCs) loads a model that predicts
  (finite probabilities for classifiers) on the training data;
* ``FAILED``: any other exception, a raw mutation loading another model, a
  loaded model that cannot predict, a hang, or a load allocating more than
  100 MB. The run exits with status 1 when any file failed.

Writes ``benchmarks/results/fuzz_io.json`` (counts, and the seed and
mutation of each failure to replay it).

    PYTHONPATH=. python benchmarks/fuzz_io.py --files 10000
"""

import argparse
import collections
import faulthandler
import io
import json
import random
import resource
import signal
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "persistence"))

from file_mutations import RAW_MUTATIONS, REBUILT_MUTATIONS  # noqa: E402

import skpmlp.io  # noqa: E402
from skpmlp import ParallelMLPClassifier, SingleMLPClassifier, SingleMLPRegressor  # noqa: E402

#: A load allocating more than this fails the run (the issue's target).
MAX_BYTES = 100 * 2**20
#: A load taking longer than this is a hang.
TIMEOUT_S = 10


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def base_files():
    """``{name: (file bytes, X, reference predictions)}`` of valid files."""
    from sklearn.datasets import load_iris, make_regression
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    Xr, yr = make_regression(n_samples=60, n_features=3, random_state=0)
    fast = dict(max_iter=5, random_state=0)
    estimators = {
        "single_classifier": (SingleMLPClassifier((4,), "relu", **fast).fit(X, y), X, False),
        "single_regressor": (
            SingleMLPRegressor((3, 2), "tanh", **fast).fit(Xr, yr / 100), Xr, False,
        ),
        "search_cv": (ParallelMLPClassifier([(4,), (3, 3)], "relu", alpha=(1e-4, 1e-2), cv=2,
                                            **fast).fit(X, y), X, False),
        "search_ensemble": (ParallelMLPClassifier([(4,), (5,)], ("relu", "tanh"), ensemble_size=2,
                                                  **fast).fit(X, y), X, False),
        "compressed": (SingleMLPClassifier((4,), "relu", **fast).fit(X, y), X, True),
    }
    files = {}
    for name, (estimator, data, compress) in estimators.items():
        out = io.BytesIO()
        skpmlp.io.save(estimator, out, compress=compress)
        files[name] = (out.getvalue(), data, _predictions(estimator, data))
    return files


def _predictions(estimator, X):
    if hasattr(estimator, "predict_proba"):
        return np.asarray(estimator.predict_proba(X))
    return np.asarray(estimator.predict(X))


def _name(cls):
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def check_usable(estimator, X):
    """Raise AssertionError unless a loaded ``estimator`` predicts on ``X``."""
    predictions = _predictions(estimator, X)
    assert predictions.shape[0] == X.shape[0], f"{len(predictions)} predictions, {len(X)} rows"
    if hasattr(estimator, "predict_proba"):
        assert np.isfinite(predictions).all(), "non-finite probabilities"
        estimator.predict(X)
    return predictions


def fuzz_one(data, X, reference, mutation, rng):
    """Load one mutation: ``(kind, outcome, detail, peak bytes, seconds)``."""
    kind, mutated = mutation(data, rng)
    raw = mutation in RAW_MUTATIONS
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    signal.alarm(TIMEOUT_S)
    try:
        loaded = skpmlp.io.load(io.BytesIO(mutated))
    except skpmlp.io.InvalidFileError as exc:
        outcome, detail = "refused", _name(type(exc.__cause__)) if exc.__cause__ else ""
        loaded = None
    except _Hang:
        outcome, detail, loaded = "FAILED", f"hang: load took over {TIMEOUT_S} s", None
    except Exception as exc:  # noqa: BLE001 - any other exception is what is counted
        outcome, detail, loaded = "FAILED", f"{type(exc).__name__}: {str(exc)[:300]}", None
    finally:
        signal.alarm(0)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - base
    if loaded is not None:
        try:
            predictions = check_usable(loaded, X)
            if raw and not np.array_equal(predictions, reference):
                outcome, detail = "FAILED", "raw mutation loaded another model"
            else:
                same = np.array_equal(predictions, reference)
                outcome, detail = ("unchanged" if same else "loaded"), ""
        except Exception as exc:  # noqa: BLE001
            detail = f"loaded but unusable: {type(exc).__name__}: {str(exc)[:300]}"
            outcome = "FAILED"
    if peak > MAX_BYTES:
        outcome, detail = "FAILED", f"allocated {peak / 2**20:.0f} MiB"
    return kind, outcome, detail, peak, seconds


def _row(kind, counts):
    return (f"{kind:<20} {counts['refused']:>8} {counts['unchanged']:>10} {counts['loaded']:>8} "
            f"{counts['FAILED']:>8}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    faulthandler.enable()
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")
    files = base_files()
    names = sorted(files)
    mutations = RAW_MUTATIONS + REBUILT_MUTATIONS
    counts = collections.Counter()
    refusals = collections.Counter()
    failures = []
    peaks, times, slowest = [], [], None
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    started = time.perf_counter()
    for i in range(args.files):
        rng = random.Random(args.seed * 1_000_003 + i)
        name = rng.choice(names)
        mutation = rng.choice(mutations)
        data, X, reference = files[name]
        kind, outcome, detail, peak, seconds = fuzz_one(data, X, reference, mutation, rng)
        counts[(kind, outcome)] += 1
        if outcome == "refused":
            refusals[detail or "InvalidFileError"] += 1
        if outcome == "FAILED":
            failures.append(
                {"i": i, "seed": args.seed, "file": name, "mutation": kind, "detail": detail}
            )
            print(f"FAILED #{i} {name} {kind}: {detail}", flush=True)
        peaks.append(peak)
        times.append(seconds)
        if slowest is None or seconds > slowest["seconds"]:
            slowest = {"i": i, "file": name, "mutation": kind, "outcome": outcome,
                       "seconds": seconds}
        if (i + 1) % 1000 == 0:
            elapsed = time.perf_counter() - started
            print(f"{i + 1} files, {len(failures)} failed, {elapsed:.0f} s", flush=True)
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    outcomes = collections.Counter()
    print(f"\n{'mutation':<20} {'refused':>8} {'unchanged':>10} {'loaded':>8} {'FAILED':>8}")
    for kind in sorted({k for k, _ in counts}):
        row = {o: counts[(kind, o)] for o in ("refused", "unchanged", "loaded", "FAILED")}
        outcomes.update(row)
        print(_row(kind, row))
    print(_row("total", outcomes))
    print("\nrefusals by the cause InvalidFileError chains (none: skpmlp's own check):")
    for cause, n in refusals.most_common():
        print(f"  {cause:<40} {n}")
    summary = {
        "files": args.files, "seed": args.seed, "outcomes": dict(outcomes),
        "by_mutation": {f"{k}/{o}": n for (k, o), n in sorted(counts.items())},
        "refusal_causes": dict(refusals), "failures": failures[:200],
        "max_load_peak_bytes": int(max(peaks)), "median_load_peak_bytes": int(np.median(peaks)),
        "max_load_seconds": max(times), "slowest": slowest,
        "median_load_seconds": float(np.median(times)),
        "maxrss_kib_before": rss_before, "maxrss_kib_after": rss_after,
    }
    print(f"\npeak allocation of one load: max {max(peaks) / 2**20:.2f} MiB, median "
          f"{np.median(peaks) / 2**10:.0f} KiB; slowest load {max(times) * 1e3:.0f} ms (median "
          f"{np.median(times) * 1e3:.1f} ms); peak RSS {rss_before / 1024:.0f} -> "
          f"{rss_after / 1024:.0f} MiB over the run; {len(failures)} failed")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuzz_io.json").write_text(json.dumps(summary, indent=2))
    print(f"slowest load: {slowest}")
    print(f"wrote {out / 'fuzz_io.json'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
