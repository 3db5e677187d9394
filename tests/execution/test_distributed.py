"""Data-parallel fits over torch.distributed ranks (gloo on 127.0.0.1).

Every test starts its ranks with ``torch.multiprocessing`` (spawn) inside
the test, runs several fits in them (process start-up dominates the time)
and compares what each rank returns with the same fit in this process,
alone, in float64.
"""

import contextlib
import dataclasses
import datetime
import os
import pickle
import socket
import time

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from sklearn.datasets import load_iris, make_regression
from sklearn.preprocessing import StandardScaler

import skpmlp
import skpmlp._search._plan
from skpmlp import (
    DataParallelError,
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    sklearn_mlp_params,
)

#: seconds any collective waits before failing; and the most a whole
#: spawned world may take before the test kills it
_TIMEOUT, _WORLD_LIMIT = 30, 150


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _backend(backend):
    """Train every run of the search estimators on ``backend`` inside."""
    original = skpmlp._search._plan.train_config
    skpmlp._search._plan.train_config = lambda *a, **kw: dataclasses.replace(original(*a, **kw), backend=backend)
    try:
        yield
    finally:
        skpmlp._search._plan.train_config = original


def _data():
    X, y = load_iris(return_X_y=True)
    Xr, yr = make_regression(n_samples=90, n_features=5, noise=5.0, random_state=0)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, len(yr))
    return StandardScaler().fit_transform(X), y, StandardScaler().fit_transform(Xr), yr / 50, weight


def _fit(case):
    """The fit of one named case (the same in every rank and alone)."""
    X, y, Xr, yr, weight = _data()
    with _backend("native" if case.startswith("native") else "torch"):
        return _fit_case(case, X, y, Xr, yr, weight)


def _fit_case(case, X, y, Xr, yr, weight):
    common = dict(dtype="float64", random_state=0, batch_size=15)
    if case.startswith("cuda"):
        common["device"] = "cuda"
    if case.endswith("cv_early_stopping"):
        # the native case trains as several memory chunks (each rank plans with
        # the least memory of any), and each replica restores its own best
        # epoch (rank 0's validation losses decide on every rank)
        native = case.startswith("native")
        search = ParallelMLPClassifier(
            [(6,), (4, 3)], "tanh", learning_rate_init=[0.01, 0.1], cv=3, ensemble="best", early_stopping=True,
            n_iter_no_change=2, tol=0.1, max_iter=8, max_memory=80_000 if native else None,
            restore_best_weights=native, **common,
            # no masks and no transformed copy of X per fold: one model fits in 80 kB
            **sklearn_mlp_params(),
        )
        return search.fit(X, y)
    if case.endswith("batch_sizes"):
        # models of two batch sizes: one data-parallel run per batch size
        search = ParallelMLPClassifier(
            [(6,)], "tanh", learning_rate_init=0.05, max_iter=4, cv=None,
            **{**common, "batch_size": [15, 10]},
        )
        return search.fit(X, y)
    if case.endswith("dropout"):
        # masks hash a row's position in the global batch: a rank's share
        # starts past 0 (native: alone the kernel draws them, data-parallel
        # its epochs with dropout take torch's ops)
        search = ParallelMLPClassifier(
            [(6,), (4, 3)], "tanh", learning_rate_init=0.05, dropout=[0.0, 0.3], max_iter=4, cv=3,
            ensemble="best", early_stopping=True, n_iter_no_change=100, **common,
        )
        return search.fit(X, y)
    assert case.endswith("halving")
    search = ParallelMLPRegressor(
        [(5,), (8,)], ("relu", "tanh"), solver="sgd", learning_rate_init=[0.01, 0.05],
        pruning="halving", max_iter=9, cv=None, **common,
    )
    return search.fit(Xr, yr, sample_weight=weight)


def _rank_main(rank, world_size, port, out, cases, backend):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(
        backend, rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=_TIMEOUT)
    )
    try:
        for case in cases:
            start = time.perf_counter()
            try:
                with skpmlp.data_parallel(timeout=_TIMEOUT):
                    outcome = _RANK_CASES[case](rank) if case in _RANK_CASES else _fit(case)
            except Exception as error:  # what each rank saw is the test's to judge
                outcome = {"error": type(error).__name__, "message": str(error)}
            seconds = time.perf_counter() - start
            with open(os.path.join(out, f"{case}-{rank}.pkl"), "wb") as f:
                pickle.dump((outcome, seconds), f)
    finally:
        if "dies_mid_run" not in cases:  # a dead peer would not answer
            dist.destroy_process_group()


def _different_data(rank):
    """Rank 1 fits other rows than rank 0."""
    X, y, *_ = _data()
    rows = slice(None) if rank == 0 else slice(None, None, -1)
    return ParallelMLPClassifier((4,), max_iter=2, random_state=0, dtype="float64").fit(X[rows], y[rows])


def _raises_mid_run(rank, die=False):
    """Rank 1's trainer raises at its 5th step (or its process ends there,
    with ``die``)."""
    from skpmlp._engine._backends._torch import PopulationTrainer

    if rank == 1:
        original, calls = PopulationTrainer.train_step, []

        def failing(self, *args):
            calls.append(1)
            if len(calls) == 5:
                if die:
                    os._exit(0)  # no clean-up, no error report: as a killed process
                raise RuntimeError("injected failure")
            return original(self, *args)

        PopulationTrainer.train_step = failing
    try:
        return _fit("torch_cv_early_stopping")
    finally:
        if rank == 1:
            PopulationTrainer.train_step = original


def _with_n_jobs(rank):
    X, y, *_ = _data()
    return ParallelMLPClassifier((4,), max_iter=2, n_jobs=2).fit(X, y)


def _with_lbfgs(rank):
    X, y, *_ = _data()
    return ParallelMLPClassifier((4,), solver="lbfgs", max_iter=2, random_state=0).fit(X, y)


_RANK_CASES = {
    "different_data": _different_data, "raises_mid_run": _raises_mid_run, "n_jobs": _with_n_jobs,
    "lbfgs": _with_lbfgs, "dies_mid_run": lambda rank: _raises_mid_run(rank, die=True),
}


def _run_world(world_size, cases, tmp_path, backend="gloo"):
    """Run ``cases`` on ``world_size`` spawned ranks; ``{case: [(outcome,
    seconds) per rank]}``."""
    context = mp.start_processes(
        _rank_main, args=(world_size, _free_port(), str(tmp_path), cases, backend), nprocs=world_size,
        join=False, start_method="spawn",
    )
    deadline = time.monotonic() + _WORLD_LIMIT
    try:
        while not context.join(timeout=1):
            assert time.monotonic() < deadline, f"the {world_size} ranks did not finish in {_WORLD_LIMIT} s"
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
    results = {}
    for case in cases:
        results[case] = []
        for rank in range(world_size):
            path = tmp_path / f"{case}-{rank}.pkl"
            if not path.exists():  # the rank died
                results[case].append((None, None))
                continue
            with open(path, "rb") as f:
                results[case].append(pickle.load(f))
    return results


def _assert_same_fit(fitted, alone, world_size, batch):
    assert not isinstance(fitted, dict), fitted
    for name in ("loss_curves_", "validation_scores_per_model_", "n_iter_per_model_"):
        np.testing.assert_allclose(getattr(fitted, name), getattr(alone, name), rtol=0, atol=1e-10,
                                   equal_nan=True, err_msg=name)
    if alone.best_epoch_per_model_ is not None:
        np.testing.assert_array_equal(fitted.best_epoch_per_model_, alone.best_epoch_per_model_)
    for k, (coefs, intercepts) in enumerate(zip(alone._coefs, alone._intercepts)):
        for i in range(len(coefs)):
            for a, b in zip(fitted._coefs[k][i] + fitted._intercepts[k][i], coefs[i] + intercepts[i]):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    for a, b in zip(fitted.best_estimator_.coefs_, alone.best_estimator_.coefs_):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(fitted.cv_results_["rank_test_score"], alone.cv_results_["rank_test_score"])
    shard = fitted.shards_[0]
    assert shard["world_size"] == world_size and sum(shard["rows_per_rank"]) in batch
    assert len(shard["rows_per_rank"]) == world_size


_EQUAL_CASES = ["torch_cv_early_stopping", "native_cv_early_stopping", "native_halving", "torch_batch_sizes",
                "torch_dropout", "native_dropout"]


@pytest.fixture(scope="module")
def alone():
    """Every equality case fitted in this process, without a process group."""
    assert not dist.is_initialized()
    with torch.random.fork_rng(), pytest.warns(ResourceWarning, match=r"training it as \d+ chunks"):
        return {case: _fit(case) for case in _EQUAL_CASES}


def test_two_ranks_equal_one_process_and_fail_together(alone, tmp_path):
    cases = [
        *_EQUAL_CASES, "different_data", "raises_mid_run", "after_failure_torch_cv_early_stopping", "n_jobs",
        "lbfgs", "dies_mid_run",  # the last: rank 1 leaves for good
    ]
    results = _run_world(2, cases, tmp_path)
    for case in _EQUAL_CASES:
        for fitted, _ in results[case]:
            _assert_same_fit(fitted, alone[case], 2, {15, 10})
    assert alone["native_halving"].cv_results_["pruned"].any()  # halving decided something
    assert (alone["torch_cv_early_stopping"].n_iter_per_model_ < 8).any()  # so did early stopping
    # each replica kept an epoch of its own (here its last: the losses still fall)
    assert (alone["native_cv_early_stopping"].best_epoch_per_model_ >= 1).all()
    assert results["torch_cv_early_stopping"][0][0].shards_[0]["rows_per_rank"] == [8, 7]

    # different data on one rank: the same clear error on every rank
    for outcome, _ in results["different_data"]:
        assert outcome["error"] == "ValueError"
        assert "rank 1 differs from rank 0 in X, y" in outcome["message"]

    # a rank that raises mid-run: its own error there, the others name it,
    # long before the collectives' timeout
    (first, first_seconds), (failing, failing_seconds) = results["raises_mid_run"]
    assert failing == {"error": "RuntimeError", "message": "injected failure"}
    assert first["error"] == DataParallelError.__name__
    assert "failed on rank 1: RuntimeError: injected failure" in first["message"]
    assert max(first_seconds, failing_seconds) < _TIMEOUT / 2

    # what cannot split its rows says so, on every rank
    for case, words in (("n_jobs", "n_jobs=2 shards the models"), ("lbfgs", "solver='lbfgs' trains full-batch")):
        for outcome, _ in results[case]:
            assert outcome["error"] == "ValueError" and words in outcome["message"], outcome

    # a rank whose process ends mid-run: the others notice at once
    (first, first_seconds), (dead, _) = results["dies_mid_run"]
    assert dead is None and first["error"] == DataParallelError.__name__
    assert "another rank left the run" in first["message"] and first_seconds < _TIMEOUT / 2

    # the process group is still usable: the next fit trains and equals
    # the fit alone
    for fitted, _ in results["after_failure_torch_cv_early_stopping"]:
        _assert_same_fit(fitted, alone["torch_cv_early_stopping"], 2, {15})


def test_four_ranks_equal_one_process(alone, tmp_path):
    cases = ["torch_cv_early_stopping", "native_cv_early_stopping", "torch_dropout"]
    results = _run_world(4, cases, tmp_path)
    for case in cases:
        for fitted, _ in results[case]:
            _assert_same_fit(fitted, alone[case], 4, {15})
    assert results[cases[0]][3][0].shards_[0]["rows_per_rank"] == [4, 4, 3, 4]


@pytest.mark.skipif(
    not (torch.cuda.is_available() and torch.cuda.device_count() >= 2 and dist.is_nccl_available()),
    reason="needs two CUDA GPUs and NCCL",
)
def test_two_gpus_with_nccl_equal_one_gpu(tmp_path):
    alone = _fit("cuda_cv_early_stopping")
    results = _run_world(2, ["cuda_cv_early_stopping"], tmp_path, backend="nccl")
    for rank, (fitted, _) in enumerate(results["cuda_cv_early_stopping"]):
        _assert_same_fit(fitted, alone, 2, {15})
        assert fitted.shards_[0]["device"] == f"cuda:{rank}"


def test_data_parallel_true_needs_a_process_group(iris):
    X, y = iris
    with skpmlp.data_parallel(True), pytest.raises(ValueError, match="needs an initialised torch.distributed"):
        ParallelMLPClassifier((4,), max_iter=1).fit(X, y)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"enabled": "yes"}, "enabled must be True, False or 'auto'"), ({"timeout": 0}, "timeout must be a positive")],
)
def test_data_parallel_checks_its_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        with skpmlp.data_parallel(**kwargs):
            pass


@pytest.mark.parametrize("world_size, batch", [(2, 15), (3, 7), (4, 16)])
def test_the_ranks_shares_make_up_the_global_batch(world_size, batch):
    from skpmlp._engine._distributed import DataParallel
    from skpmlp._engine._minibatch._batches import BatchPlanner

    weight = np.random.default_rng(0).uniform(0.5, 2, 40)
    planner = BatchPlanner([np.arange(30), np.arange(10, 40)], batch, seed=3, sample_weight=weight,
                           dtype=torch.float64, device="cpu")
    plan = planner.next_epoch()
    shares = []
    for rank in range(world_size):
        dp = DataParallel.__new__(DataParallel)  # no process group needed to cut a plan
        dp.rank, dp.world_size = rank, world_size
        shares.append(dp.shard_plan(plan))
    dp.plan_rows(batch)
    assert [s.rows.shape[2] for s in shares] == dp.rows_per_rank and sum(dp.rows_per_rank) == batch
    torch.testing.assert_close(torch.cat([s.rows for s in shares], 2), plan.rows, rtol=0, atol=0)
    torch.testing.assert_close(torch.cat([s.weights for s in shares], 2), plan.weights, rtol=0, atol=0)
    # every rank keeps the global counts, weight sums and stepping flags
    for share in shares:
        assert share.counts is plan.counts and share.stepping is plan.stepping
