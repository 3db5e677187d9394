"""The kernel's time per network of a narrow search, one architecture and activation at a time.

Issue 39 asks every set of ``vs_gridsearch.py`` to reach half of its bound,
and the narrow sets (4 to 10 features, 1 to 3 outputs) do not. This script
splits such a search by network: for each architecture and activation of
``vs_gridsearch.py``'s grid it runs the search of that network alone (its
4 configurations of learning rate and L2 penalty, 5 folds, ``max_iter=200``,
no refit), on ``--threads`` threads, and times the native kernel's calls
apart from the Python around them (``_harness.kernel_clock``, CPU time of
the calling thread, which is the kernel's own on one thread). Per network
it prints the model-epochs trained, the kernel's microseconds per
model-epoch (on iris one epoch is one step of 90 rows) and the kernel's
FLOPs (``_harness.training_flops``) per second against the machine's float32
matmul limit (a large ``torch.mm`` on as many threads): ``of limit``. The
whole search's time is printed too; the difference is the host's.

Each figure is the best of ``--repeats`` fits after a warm-up fit. To
compare two checkouts, run each one's script in turn, a few times,
alternating: this host's noise is larger than most single changes.

Usage::

    python benchmarks/narrow_networks.py
    python benchmarks/narrow_networks.py --dataset penguins --activations relu tanh

Writes ``benchmarks/results/narrow_networks.json``.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the skpmlp of this checkout, whatever an editable install points at
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import kernel_clock, machine_limits, network_outputs  # noqa: E402
from _real_data import CV, DATASETS, GRID, SEED, prepare  # noqa: E402
from vs_gridsearch import search_flops, trained_rows  # noqa: E402

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, sklearn_mlp_params  # noqa: E402


def network_search(ours_class, architecture, activation):
    """The search of ``vs_gridsearch.py``'s grid narrowed to one network."""
    grid = {**GRID, "hidden_layer_sizes": [architecture], "activation": [activation]}
    return ours_class(**grid, **sklearn_mlp_params(ours_class), cv=CV, ensemble="best", refit=False,
                      max_iter=200, random_state=SEED)


def measure(ours_class, X, y, architecture, activation, repeats):
    """(whole fit's CPU seconds, kernel's CPU seconds, the last fit): the
    best of ``repeats`` fits each, after a warm-up fit."""
    network_search(ours_class, architecture, activation).fit(X, y)
    best_fit = best_kernel = float("inf")
    for _ in range(repeats):
        with kernel_clock(time.thread_time) as inside:
            start = time.thread_time()
            search = network_search(ours_class, architecture, activation).fit(X, y)
            best_fit = min(best_fit, time.thread_time() - start)
        best_kernel = min(best_kernel, inside[0])
    return best_fit, best_kernel, search


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="iris")
    parser.add_argument("--activations", nargs="+", default=GRID["activation"])
    parser.add_argument("--threads", type=int, default=1, help="torch's (and the kernel's) threads")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"
                                             / "narrow_networks.json"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    torch.set_num_threads(args.threads)
    task, X, _, y, _ = prepare(args.dataset)
    classifier = task == "classification"
    ours_class = ParallelMLPClassifier if classifier else ParallelMLPRegressor
    n_outputs = network_outputs(task, y)
    limit = machine_limits("cpu")["matmul_gflops"] * args.threads
    print(f"{args.dataset}: {len(X)} training rows, {X.shape[1]} features, {n_outputs} outputs; "
          f"{args.threads} thread(s), float32 matmul limit {limit:.1f} GFLOP/s; best of {args.repeats} fits")
    print(f"{'network':>10} {'units':>9} {'model-epochs':>12} {'fit s':>7} {'kernel s':>8} "
          f"{'us/model-epoch':>14} {'of limit':>8}")
    rows = []
    for architecture in GRID["hidden_layer_sizes"]:
        for activation in args.activations:
            fit_s, kernel_s, search = measure(ours_class, X, y, architecture, activation, args.repeats)
            model_epochs = int(np.sum(search.n_iter_per_model_))
            flops = search_flops(trained_rows(search, X, y, classifier), X.shape[1], n_outputs)
            row = {"architecture": list(architecture), "activation": activation,
                   "model_epochs": model_epochs, "fit_seconds": fit_s, "kernel_seconds": kernel_s,
                   "us_per_model_epoch": 1e6 * kernel_s / model_epochs,
                   "of_limit": flops / kernel_s / 1e9 / limit}
            rows.append(row)
            print(f"{str(architecture):>10} {activation:>9} {row['model_epochs']:>12} {fit_s:>7.3f} "
                  f"{kernel_s:>8.3f} {row['us_per_model_epoch']:>14.1f} {row['of_limit']:>8.0%}", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"dataset": args.dataset, "threads": args.threads,
                                          "matmul_gflops": limit, "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
