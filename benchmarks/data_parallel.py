"""A data-parallel fit on 2 gloo ranks (127.0.0.1) against the same fit in
one process, and the share of each step spent in the gradient all-reduce.

Two ranks are spawned once; inside them, repeat after repeat and
interleaved, the search is fitted

- by rank 0 alone, 1 torch thread (rank 1 waits): the 1-process baseline;
- by rank 0 alone, 2 torch threads: what one process gets from 2 cores;
- by rank 0 alone, 1 thread, through the data-parallel code path with a
  single rank and no communication (per-step kernel calls, the gradient
  buffer zeroed per step): the cost of the path itself;
- by both ranks, data-parallel, 1 thread each;

and the time inside ``DataParallel.all_reduce`` (the per-step gradient sum
and the small per-epoch ones, waiting for the slower rank included) is
summed on each rank. A bare all-reduce of the gradient buffer's size is
timed apart: the communication model's cost per step on this machine.

Usage::

    python benchmarks/data_parallel.py            # 20,000 rows, 24 models
    python benchmarks/data_parallel.py --quick    # 4,000 rows

Writes ``benchmarks/results/data_parallel.json``.
"""

import argparse
import contextlib
import datetime
import json
import os
import socket
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from sklearn.datasets import make_classification

import skpmlp
import skpmlp._execution._shards
from skpmlp import ParallelMLPClassifier
from skpmlp._engine._distributed import DataParallel


def search(batch_size):
    return ParallelMLPClassifier(
        hidden_layer_sizes=[(16,), (32,), (64,), (32, 32)], activation=("relu", "tanh", "logistic"),
        learning_rate_init=(0.001, 0.01), batch_size=batch_size, max_iter=5, tol=0, random_state=0,
    )


def data(n_rows):
    X, y = make_classification(n_samples=n_rows, n_features=32, n_informative=16, n_classes=4, random_state=0)
    return X.astype(np.float32), y


class OneRank(DataParallel):
    """A data-parallel run of this process alone: the data-parallel code
    path (stepwise epochs), with no collective."""

    def __init__(self):
        self.rank, self.world_size, self.rows_per_rank = 0, 1, None
        self._device = torch.device("cpu")

    @contextlib.contextmanager
    def session(self, device):
        yield self

    def check_same(self, **fingerprint):
        pass

    def all_reduce(self, tensor):
        return tensor

    def from_rank0(self, array):
        return array

    def any(self, flag):
        return bool(flag)

    def minimum(self, value):
        return value


class CommTimer:
    """Seconds, calls and bytes of :meth:`DataParallel.all_reduce` in this
    process (patched in place)."""

    def __init__(self):
        self.reset()
        original = DataParallel.all_reduce

        def timed(dp, tensor):
            start = time.perf_counter()
            out = original(dp, tensor)
            self.seconds += time.perf_counter() - start
            self.calls += 1
            self.bytes = max(self.bytes, tensor.numel() * tensor.element_size())
            return out

        DataParallel.all_reduce = timed

    def reset(self):
        self.seconds = self.calls = self.bytes = 0  # bytes: the largest call's


def fit_seconds(backend, X, y, batch_size):
    import dataclasses

    import skpmlp._search._plan

    original = skpmlp._search._plan.train_config
    skpmlp._search._plan.train_config = lambda *a, **kw: dataclasses.replace(original(*a, **kw), backend=backend)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            est = search(batch_size).fit(X, y)
            return time.perf_counter() - start, est
    finally:
        skpmlp._search._plan.train_config = original


def rank_main(rank, port, n_rows, repeats, out, batch_size):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=600))
    X, y = data(n_rows)
    timer = CommTimer()
    rows = []
    for repeat in range(-1, repeats):  # repeat -1 warms up (kernel load, first calls)
        for backend in ("native", "torch"):
            row = {"repeat": repeat, "backend": backend}
            for name, threads in (("alone_1_thread", 1), ("alone_2_threads", 2)):
                dist.barrier()
                if rank == 0:
                    torch.set_num_threads(threads)
                    with skpmlp.data_parallel(False):
                        row[name], _ = fit_seconds(backend, X, y, batch_size)
                dist.barrier()
            if rank == 0:
                torch.set_num_threads(1)
                original = skpmlp._execution._shards.current_data_parallel
                skpmlp._execution._shards.current_data_parallel = OneRank
                try:
                    row["alone_stepwise"], _ = fit_seconds(backend, X, y, batch_size)
                finally:
                    skpmlp._execution._shards.current_data_parallel = original
            dist.barrier()
            torch.set_num_threads(1)
            timer.reset()
            dist.barrier()
            seconds, est = fit_seconds(backend, X, y, batch_size)
            # the search's run and its refit; every epoch of each has
            # n_steps gradient all-reduces and two small ones
            row.update(data_parallel=seconds, comm_seconds=timer.seconds, comm_calls=timer.calls,
                       comm_bytes=timer.bytes, rows_per_rank=est.shards_[0]["rows_per_rank"],
                       train_seconds=est.shards_[0]["seconds"])
            if repeat >= 0:
                rows.append(row)
    # a bare all-reduce of the gradient buffer's size: the communication
    # cost of one step on this machine, without training around it
    sizes = {}
    for numel in (1_000, 10_000, 100_000, 1_000_000):
        t = torch.zeros(numel)
        samples = []
        for _ in range(5):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(20):
                dist.all_reduce(t)
            samples.append((time.perf_counter() - start) / 20)
        sizes[numel * 4] = statistics.median(samples)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"rows": rows, "bare_all_reduce_seconds": sizes}, f)
    dist.destroy_process_group()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--batch-size", type=int, default=512,
                        help="rows per step (more compute per all-reduce as it grows)")
    args = parser.parse_args(argv)
    n_rows = 4_000 if args.quick else 20_000
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(rank_main, args=(port, n_rows, args.repeats, str(out), args.batch_size), nprocs=2)
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    report = {"n_rows": n_rows, "batch_size": args.batch_size, "load_average": os.getloadavg(), "ranks": ranks}
    print(f"{n_rows} rows, 24 models, batch {args.batch_size}, 5 epochs; load average {os.getloadavg()[0]:.2f}")
    print(f"{'backend':8} {'alone 1 thr':>12} {'alone 2 thr':>12} {'stepwise':>9} {'2 ranks':>9} {'1thr/2rk':>9} "
          f"{'comm share r0/r1':>17} {'all-reduces':>12} {'grad MB':>8}")
    for backend in ("native", "torch"):
        mine = [[row for row in r["rows"] if row["backend"] == backend] for r in ranks]
        med = lambda key, rank=0: statistics.median(row[key] for row in mine[rank])  # noqa: E731
        dp = statistics.median(max(a["data_parallel"], b["data_parallel"]) for a, b in zip(*mine))
        shares = [statistics.median(row["comm_seconds"] / row["data_parallel"] for row in mine[r]) for r in range(2)]
        calls = mine[0][0]["comm_calls"]
        per_call = mine[0][0]["comm_bytes"] / 1e6  # the gradient buffer
        summary = {
            "alone_1_thread": med("alone_1_thread"), "alone_2_threads": med("alone_2_threads"),
            "alone_stepwise": med("alone_stepwise"),
            "data_parallel": dp, "speedup_vs_1_thread": med("alone_1_thread") / dp,
            "speedup_vs_2_threads": med("alone_2_threads") / dp, "comm_share": shares,
            "comm_calls": calls, "mb_per_call": per_call,
        }
        report[backend] = summary
        print(f"{backend:8} {summary['alone_1_thread']:11.2f}s {summary['alone_2_threads']:11.2f}s "
              f"{summary['alone_stepwise']:8.2f}s "
              f"{dp:8.2f}s {summary['speedup_vs_1_thread']:8.2f}x {shares[0]:8.0%}/{shares[1]:<8.0%} "
              f"{calls:12d} {per_call:8.3f}")
    print("bare all-reduce (gloo, 2 ranks, 127.0.0.1):")
    for size, seconds in ranks[0]["bare_all_reduce_seconds"].items():
        print(f"  {int(size) / 1e6:8.3f} MB: {seconds * 1e6:8.0f} us")
    (out / "data_parallel.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {out / 'data_parallel.json'}")


if __name__ == "__main__":
    sys.exit(main())
