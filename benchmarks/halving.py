"""Early stopping with compaction and in-network successive halving, on digits.

A search of 2,000 models (10 widths x the ten activations x 4 learning rates
x 5 repeats) on scikit-learn's digits data, trained

* plainly (each model stops on its training-loss plateau or at max_iter),
* with ``pruning="halving"`` (factor 3, first halving after ``min_iter``),
* with ``early_stopping=True`` under several compaction rules: stopped
  models are dropped from the fused network once a fraction ``f`` of its
  slots has stopped (``f=0``: at every stop; ``never``: stopped models stay,
  frozen, in the network).

Reports wall time, best validation score and the ratio to the plain run,
and checks that the compaction rule changes no result (same scores, same
epoch counts). Medians of ``--repeats`` runs.

Usage::

    python benchmarks/halving.py               # 2,000 models, max_iter=100
    python benchmarks/halving.py --quick       # 200 models, max_iter=40

Writes ``benchmarks/results/halving.json``.
"""

import argparse
import dataclasses
import json
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import MinMaxScaler

import skpmlp._search._plan
from skpmlp import ParallelMLPClassifier
from skpmlp._engine import ACTIVATIONS

WIDTHS = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128]
LEARNING_RATES = [0.001, 0.003, 0.01, 0.03]
NEVER = 2.0  # a compaction fraction above 1: never compact


def search(quick, max_iter, **extra):
    widths, repeats = (WIDTHS[::3], 1) if quick else (WIDTHS, 5)
    return ParallelMLPClassifier(
        hidden_layer_sizes=[(w,) for w in widths], activation=tuple(ACTIVATIONS), learning_rate_init=LEARNING_RATES,
        n_repeats=repeats, max_iter=max_iter, random_state=0, **extra,
    )


def timed_fit(estimator, X, y, compact_fraction):
    """Fit with the engine's compaction rule set to ``compact_fraction``."""
    original = skpmlp._search._plan.train_config

    def with_rule(*args, **kwargs):
        return dataclasses.replace(original(*args, **kwargs), compact_fraction=compact_fraction)

    skpmlp._search._plan.train_config = with_rule
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            estimator.fit(X, y)
            return time.perf_counter() - start
    finally:
        skpmlp._search._plan.train_config = original


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    max_iter = 40 if args.quick else 100
    X, y = load_digits(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)

    cases = [("plain", {}, 0.25), ("halving", {"pruning": "halving"}, 0.25)]
    cases += [(f"early stopping, compact at {f}", {"early_stopping": True}, f) for f in (0.0, 0.1, 0.25, 0.5)]
    cases += [("early stopping, never compact", {"early_stopping": True}, NEVER)]
    rows, fitted = [], {}
    for name, extra, fraction in cases:
        seconds = []
        for _ in range(args.repeats):
            est = search(args.quick, max_iter, **extra)
            seconds.append(timed_fit(est, X, y, fraction))
        fitted[name] = est
        row = {
            "case": name, "models": est.n_models_, "seconds": statistics.median(seconds),
            "best_score": float(est.best_score_), "model_epochs": int(est.cv_results_["n_iter"].sum()),
        }
        rows.append(row)
        print(f"{name:<34} {row['seconds']:8.1f} s  best {row['best_score']:.4f}  "
              f"model-epochs {row['model_epochs']}", flush=True)

    plain = rows[0]
    for row in rows:
        row["speedup_vs_plain"] = plain["seconds"] / row["seconds"]
        row["score_gap_vs_plain"] = plain["best_score"] - row["best_score"]
    reference = fitted["early stopping, never compact"].cv_results_
    identical = {
        name: bool(
            np.array_equal(est.cv_results_["mean_test_score"], reference["mean_test_score"], equal_nan=True)
            and np.array_equal(est.cv_results_["n_iter"], reference["n_iter"])
        )
        for name, est in fitted.items() if name.startswith("early stopping")
    }
    print()
    print(f"{'case':<34} {'seconds':>8} {'x plain':>8} {'best':>7} {'gap':>7} {'model-epochs':>13}")
    for row in rows:
        print(f"{row['case']:<34} {row['seconds']:>8.1f} {row['speedup_vs_plain']:>7.2f}x "
              f"{row['best_score']:>7.4f} {row['score_gap_vs_plain']:>7.4f} {row['model_epochs']:>13}")
    print("early-stopping results identical to never compacting:", identical)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "halving.json").write_text(json.dumps({"rows": rows, "identical": identical}, indent=2))
    print(f"wrote {out / 'halving.json'}")


if __name__ == "__main__":
    main()
