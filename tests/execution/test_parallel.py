"""Shards of a search as joblib tasks: loky processes and a real Dask cluster
on 127.0.0.1 give the results of one in-process run."""

import os

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.utils.parallel import Parallel

from skpmlp import ParallelMLPClassifier
from skpmlp._engine import split_models
from skpmlp._search._space import build_population

SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (16,), (8, 8)], activation=("relu", "tanh"),
    learning_rate_init=(0.01, 0.03), max_iter=10, dtype="float64", random_state=0,
)


@pytest.fixture(scope="module")
def in_process(iris):
    return ParallelMLPClassifier(**SEARCH).fit(*iris)


def _assert_same_search(a, b):
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(a.n_iter_per_model_, b.n_iter_per_model_)
    np.testing.assert_allclose(a.predict_proba(np.eye(4)), b.predict_proba(np.eye(4)), atol=1e-12)


def test_shards_balance_cost_and_cover_every_model():
    spec = build_population([(4,), (64,), (8, 8)], ("relu", "tanh"), (0.01, 0.1), 0.0, 2).spec(0)
    parts = split_models(spec, 3, n_features=10, n_outputs=2)
    assert len(parts) == 3
    np.testing.assert_array_equal(np.sort(np.concatenate(parts)), np.arange(spec.n_models))
    costs = [sum(sum(spec.hidden_layer_sizes[i]) for i in p) for p in parts]
    assert max(costs) <= 1.5 * min(costs)


def test_loky_shards_match_one_run(iris, in_process):
    sharded = ParallelMLPClassifier(n_jobs=2, **SEARCH).fit(*iris)
    _assert_same_search(sharded, in_process)
    assert len(sharded.shards_) == 2
    assert sum(s["models"] for s in sharded.shards_) == sharded.n_models_
    # the two shards share this machine's cores
    cores = os.cpu_count() or 1
    threads = max(1, cores // min(2, cores))
    assert all(s["pid"] != os.getpid() and s["threads"] == threads for s in sharded.shards_)


def _one_worker(n_jobs=None):
    """A ``Parallel`` that runs the tasks one after another in this
    process, as a cluster with a single free worker would."""
    return Parallel(n_jobs=1)


def test_max_time_counts_from_the_start_of_fit_for_queued_shards(iris, monkeypatch):
    """The second shard waits for the first, which trains until max_time:
    it starts past the fit-wide deadline, so it trains nothing (it used to
    train for max_time of its own)."""
    import skpmlp._execution._shards as parallel

    monkeypatch.setattr(parallel, "Parallel", _one_worker)
    search = ParallelMLPClassifier(**{**SEARCH, "max_iter": 10**6}, tol=0, n_iter_no_change=10**6, n_jobs=2,
                                   max_time=0.5)
    with pytest.warns(UserWarning, match="reached max_time"):
        search.fit(*iris)
    first, second = search.shards_
    n_iter = search.cv_results_["n_iter"]
    assert (n_iter > 0).sum() == first["models"] and (n_iter == 0).sum() == second["models"]


def test_the_cv_refit_runs_as_shards_too(iris, monkeypatch):
    """n_jobs applies to the refit: its configurations train in joblib
    tasks, as the search's models do."""
    import skpmlp._execution._shards as parallel

    monkeypatch.setattr(parallel, "Parallel", _one_worker)
    shards, train_shard = [], parallel.train_shard

    def recorded(spec, *args, **kwargs):
        shards.append(spec.n_models)
        return train_shard(spec, *args, **kwargs)

    monkeypatch.setattr(parallel, "train_shard", recorded)
    search = ParallelMLPClassifier(**SEARCH, cv=2, ensemble="best", ensemble_size=3,
                                   n_jobs=2).fit(*iris)
    assert len(search.shards_) == 2 and sum(shards[:2]) == search.n_models_
    assert len(shards) == 4 and sum(shards[2:]) == 3  # the refit's three, as two shards


def test_a_client_without_cuda_can_send_shards_to_gpu_workers(iris, in_process, monkeypatch):
    """device="cuda" is resolved where each shard runs, never in the client:
    a client without CUDA fits (and scores, on its CPU) a search whose
    shards train on workers with GPUs, here a stand-in worker whose "GPU"
    is its CPU."""
    import skpmlp._execution._shards as parallel

    monkeypatch.setattr(parallel, "Parallel", _one_worker)
    requested = []

    def worker_device(device, shard):
        requested.append(device)
        return "cpu"

    monkeypatch.setattr(parallel, "shard_device", worker_device)
    monkeypatch.setattr(parallel.torch.cuda, "is_available", lambda: False)
    search = ParallelMLPClassifier(n_jobs=2, device="cuda", ensemble="best", **SEARCH).fit(*iris)
    # the search's two shards, then the refit of the chosen configuration
    assert requested == ["cuda", "cuda", "cuda"]
    _assert_same_search(search, ParallelMLPClassifier(ensemble="best", **SEARCH).fit(*iris))


def test_cuda_is_checked_where_the_shard_runs(iris, monkeypatch):
    import skpmlp._execution._shards as parallel

    monkeypatch.setattr(parallel, "Parallel", _one_worker)
    monkeypatch.setattr(parallel.torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="device='cuda' was requested but CUDA is not available on"):
        ParallelMLPClassifier(n_jobs=2, device="cuda", **SEARCH).fit(*iris)
    # without n_jobs, where the run trains is the client
    with pytest.raises(ValueError, match="device='cuda:0' was requested but CUDA is not available on"):
        ParallelMLPClassifier(device="cuda:0", **SEARCH).fit(*iris)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def test_dask_shards_run_on_the_workers(iris, in_process, dask_client):
    workers = set(dask_client.scheduler_info()["workers"])
    assert len(workers) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in workers)
    with parallel_config(backend="dask"):
        sharded = ParallelMLPClassifier(n_jobs=2, **SEARCH).fit(*iris)
    _assert_same_search(sharded, in_process)
    assert {s["worker"] for s in sharded.shards_} <= workers
    assert all(s["worker"] is not None and s["pid"] != os.getpid() for s in sharded.shards_)


def test_an_error_in_a_dask_task_reaches_the_caller(iris, dask_client):
    # the memory plan runs inside the task, so this fails on the worker
    with parallel_config(backend="dask"), pytest.raises(MemoryError, match="Training even one model needs"):
        ParallelMLPClassifier(n_jobs=2, max_memory=1000, **SEARCH).fit(*iris)


def test_cuda_shards_spread_over_the_visible_gpus(monkeypatch):
    import skpmlp._execution._shards as parallel

    monkeypatch.setattr(parallel, "resolve_device", lambda device: "cuda" if device in ("auto", "cuda") else device)
    monkeypatch.setattr(parallel.torch.cuda, "device_count", lambda: 2)
    assert [parallel.shard_device("cuda", s) for s in range(4)] == ["cuda:0", "cuda:1", "cuda:0", "cuda:1"]
    assert parallel.shard_device("auto", 1) == "cuda:1"
    assert parallel.shard_device("cuda:0", 1) == "cuda:0"
    assert parallel.shard_device("cpu", 1) == "cpu"


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_shards_match_one_cpu_run_in_float64(iris, in_process):
    sharded = ParallelMLPClassifier(n_jobs=2, device="cuda", **SEARCH).fit(*iris)
    assert all(s["device"].startswith("cuda:") for s in sharded.shards_)
    np.testing.assert_allclose(
        sharded.predict_proba(np.eye(4)), in_process.predict_proba(np.eye(4)), atol=1e-6
    )


# ------------------------------------------------------------- halving
HALVING = dict(SEARCH, batch_size=(16, 32), pruning="halving", min_iter=2, halving_factor=3,
               n_iter_no_change=1000, cv=2)


def _assert_same_halving(a, b):
    """The same survivors, scores and weights, bit for bit (float64)."""
    np.testing.assert_array_equal(a.cv_results_["pruned"], b.cv_results_["pruned"])
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(a.n_iter_per_model_, b.n_iter_per_model_)
    for fa, fb in zip(a._coefs, b._coefs):
        for ma, mb in zip(fa, fb):
            for wa, wb in zip(ma, mb):
                np.testing.assert_array_equal(wa, wb)


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_halving_over_shards_keeps_the_survivors_of_one_run(iris, backend):
    """Shards train rung by rung; each rung ranks the models of every shard
    together (per batch size), as one in-process run does."""
    one_run = ParallelMLPClassifier(**HALVING).fit(*iris)
    pruned = one_run.cv_results_["pruned"]
    assert pruned.sum() > 0 and (~pruned).sum() >= 2
    with parallel_config(backend=backend):
        sharded = ParallelMLPClassifier(n_jobs=3, **HALVING).fit(*iris)
    assert len(sharded.shards_) == 3
    _assert_same_halving(sharded, one_run)
