"""One search in-process against the same search sharded over a local Dask
cluster (2 worker processes on 127.0.0.1, started and stopped here).

Reports wall times (cluster start-up excluded, reported apart), their ratio,
where each shard ran, and whether the results are identical.

Usage::

    python benchmarks/dask_shards.py            # 400 models on digits
    python benchmarks/dask_shards.py --quick    # 80 models

Writes ``benchmarks/results/dask_shards.json``.
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from distributed import Client, LocalCluster
from joblib import parallel_config
from sklearn.datasets import load_digits
from sklearn.preprocessing import MinMaxScaler

from skpmlp import ParallelMLPClassifier
from skpmlp._engine import ACTIVATIONS


def search(quick, **extra):
    widths = [16, 64] if quick else [8, 16, 32, 64, 128]
    return ParallelMLPClassifier(
        hidden_layer_sizes=[(w,) for w in widths], activation=tuple(ACTIVATIONS), learning_rate_init=(0.001, 0.01),
        n_repeats=2 if quick else 4, max_iter=30, random_state=0, **extra,
    )


def timed(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        estimator.fit(X, y)
        return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    X, y = load_digits(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)

    in_process = search(args.quick)
    in_process_seconds = timed(in_process, X, y)
    start = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0") as cluster, Client(cluster):
        startup_seconds = time.perf_counter() - start
        with parallel_config(backend="dask"):
            sharded = search(args.quick, n_jobs=2)
            dask_seconds = timed(sharded, X, y)
    report = {
        "models": in_process.n_models_, "in_process_seconds": in_process_seconds,
        "dask_seconds": dask_seconds, "cluster_startup_seconds": startup_seconds,
        "ratio": in_process_seconds / dask_seconds, "shards": sharded.shards_,
        "identical_scores": bool(np.array_equal(in_process.cv_results_["mean_test_score"],
                                                sharded.cv_results_["mean_test_score"])),
    }
    print(f"{report['models']} models: in-process {in_process_seconds:.1f} s, 2-worker Dask cluster "
          f"{dask_seconds:.1f} s ({report['ratio']:.2f}x; cluster start-up {startup_seconds:.1f} s); "
          f"identical scores: {report['identical_scores']}")
    for shard in sharded.shards_:
        print(f"  shard {shard['shard']}: {shard['models']} models on {shard['worker']} "
              f"(pid {shard['pid']}, {shard['threads']} thread) in {shard['seconds']:.1f} s")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "dask_shards.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {out / 'dask_shards.json'}")


if __name__ == "__main__":
    main()
