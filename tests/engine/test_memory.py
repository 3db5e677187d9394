"""The memory plan: chunked training and out-of-memory retries give the
results of one fused run."""

import weakref

import numpy as np
import pytest
import torch

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params
from skpmlp._engine import _memory, _train
from skpmlp._engine._memory import plan_chunks
from skpmlp._engine._minibatch._run import FusedRun

#: Without dropout, whose masks would make one model larger than the budgets below.
SEARCH = dict(
    **sklearn_mlp_params(),
    hidden_layer_sizes=[(4,), (16,), (8, 8)], activation=("relu", "tanh"),
    learning_rate_init=(0.01, 0.03), max_iter=12, dtype="float64", random_state=0,
)


@pytest.fixture(scope="module")
def one_run(iris):
    return ParallelMLPClassifier(**SEARCH, cv=None).fit(*iris)


def _assert_same_search(a, b):
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(a.n_iter_per_model_, b.n_iter_per_model_)
    np.testing.assert_allclose(a.loss_curves_, b.loss_curves_, atol=1e-12)
    for i in range(a.n_models_):
        for wa, wb in zip(a.export_model(i).coefs_, b.export_model(i).coefs_):
            np.testing.assert_allclose(wa, wb, atol=1e-12, rtol=0)


def test_population_over_max_memory_trains_in_chunks(iris, one_run):
    with pytest.warns(ResourceWarning, match="as [0-9]+ chunks"):
        chunked = ParallelMLPClassifier(max_memory=2e5, **SEARCH, cv=None).fit(*iris)
    _assert_same_search(chunked, one_run)


def test_out_of_memory_is_retried_in_smaller_chunks(iris, one_run, monitor_calls):
    """A device that cannot hold more than 3 models: the run is re-split
    until every chunk fits, with a warning, and nothing changes."""
    with pytest.warns(ResourceWarning, match="Out of memory training 12 models"):
        retried = ParallelMLPClassifier(**SEARCH, cv=None).fit(*iris)
    _assert_same_search(retried, one_run)
    assert max(monitor_calls) <= 3


@pytest.fixture
def monitor_calls(monkeypatch):
    """Make a minibatch run fail with torch's OOM error above 3 models."""
    sizes, real_advance = [], FusedRun.advance

    def small_device(run, *args, **kwargs):
        if run.M > 3:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        sizes.append(run.M)
        return real_advance(run, *args, **kwargs)

    monkeypatch.setattr(FusedRun, "advance", small_device)
    return sizes


_CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=_CUDA)])
def test_out_of_memory_retry_first_frees_the_failed_runs_tensors(iris, monkeypatch, device):
    """When the retry collects garbage, nothing holds the failed run's
    tensors any more (the exception's traceback did, through its frames)."""
    failed, after_release = [], []
    real_advance, real_release = FusedRun.advance, _train._release_device_memory

    def out_of_memory_once(run, *args, **kwargs):
        if failed:
            return real_advance(run, *args, **kwargs)
        held = torch.ones(2**22, device=device)  # 16 MiB, referenced from this frame only
        failed.append((weakref.ref(held), torch.cuda.memory_reserved() if device == "cuda" else 0))
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def release(device_name):
        real_release(device_name)
        reference, reserved_before = failed[0]
        reserved = torch.cuda.memory_reserved() if device == "cuda" else 0
        after_release.append((reference() is None, reserved <= reserved_before))

    monkeypatch.setattr(FusedRun, "advance", out_of_memory_once)
    monkeypatch.setattr(_train, "_release_device_memory", release)
    with pytest.warns(ResourceWarning, match="Out of memory training 12 models"):
        ParallelMLPClassifier(**SEARCH, device=device, cv=None).fit(*iris)
    assert after_release == [(True, True)]


def test_a_model_larger_than_the_budget_is_a_clear_error(iris):
    with pytest.raises(MemoryError, match="Training even one model needs"):
        ParallelMLPClassifier(max_memory=1000, **SEARCH, cv=None).fit(*iris)


def test_chunks_cover_every_model_once():
    from skpmlp._search._space import build_population

    spec = build_population([(4,), (64,), (8, 8)], ("relu", "tanh"), (0.01, 0.1), 0.0, 2).spec(0)
    per_model = np.array([sum(a) for a in spec.hidden_layer_sizes], float)
    chunks = plan_chunks(spec, per_model, shared=10.0, budget=200.0)
    assert len(chunks) > 1
    np.testing.assert_array_equal(np.sort(np.concatenate(chunks)), np.arange(spec.n_models))
    assert all(10 + per_model[c].sum() <= 200 for c in chunks)


# ------------------------------------------------- halving and free memory
HALVING = dict(SEARCH, pruning="halving", min_iter=2, halving_factor=2, n_iter_no_change=1000)


@pytest.fixture
def free_memory(monkeypatch):
    """``free_memory(n)``: every device reports ``n`` free bytes from now on."""

    def report(n_bytes):
        monkeypatch.setattr(_memory, "available_bytes", lambda device: n_bytes)

    return report


def test_halving_chunks_do_not_depend_on_free_memory(iris, free_memory):
    """Halving ranks the models of every chunk together, so a search gives
    the same results whatever the memory free, chunked or not."""
    fits = []
    for free in (1e12, 3e5):  # 80% of 3e5 bytes is below max_memory
        free_memory(free)
        with pytest.warns(ResourceWarning, match="as [0-9]+ chunks"):
            fits.append(ParallelMLPClassifier(max_memory=4e5, **HALVING, cv=None).fit(*iris))
    assert fits[0].cv_results_["pruned"].any()
    _assert_same_search(*fits)


def test_halving_splits_by_free_memory_into_chunks_ranked_together(iris, free_memory):
    one_run = ParallelMLPClassifier(**HALVING, cv=None).fit(*iris)
    free_memory(1e6)  # the 12 models need about 1.4e6 bytes
    with pytest.warns(ResourceWarning, match="as [0-9]+ chunks"):
        chunked = ParallelMLPClassifier(**HALVING, cv=None).fit(*iris)
    assert one_run.cv_results_["pruned"].any()
    np.testing.assert_array_equal(chunked.cv_results_["pruned"], one_run.cv_results_["pruned"])
    _assert_same_search(chunked, one_run)


def test_halving_out_of_memory_is_retried_in_chunks_ranked_together(iris, monitor_calls):
    one_run = ParallelMLPClassifier(**HALVING, cv=None).fit(*iris)
    monitor_calls.clear()
    with pytest.warns(ResourceWarning, match="Out of memory training 12 models"):
        retried = ParallelMLPClassifier(**HALVING, cv=None).fit(*iris)
    assert max(monitor_calls) <= 3
    np.testing.assert_array_equal(retried.cv_results_["pruned"], one_run.cv_results_["pruned"])
    _assert_same_search(retried, one_run)


def test_halving_whose_held_chunks_exceed_memory_is_a_clear_error(iris, free_memory):
    free_memory(1e4)  # less than the population's weights and optimizer state
    with pytest.raises(MemoryError, match=r"pruning='halving'.*rung by rung"):
        ParallelMLPClassifier(**HALVING, cv=None).fit(*iris)


@pytest.mark.parametrize("max_memory", [4e5, 6e5])
def test_halving_ranks_across_max_memory_chunks(iris, max_memory):
    """float64: chunks planned from max_memory train rung by rung and are
    ranked together; the survivors, scores and weights are one run's, bit
    for bit."""
    one_run = ParallelMLPClassifier(**HALVING, cv=None).fit(*iris)
    with pytest.warns(ResourceWarning, match="as [0-9]+ chunks"):
        chunked = ParallelMLPClassifier(max_memory=max_memory, **HALVING, cv=None).fit(*iris)
    pruned = one_run.cv_results_["pruned"]
    assert 0 < pruned.sum() < len(pruned)
    np.testing.assert_array_equal(chunked.cv_results_["pruned"], pruned)
    np.testing.assert_array_equal(chunked.cv_results_["mean_test_score"],
                                  one_run.cv_results_["mean_test_score"])
    for i in range(one_run.n_models_):
        for wa, wb in zip(chunked.export_model(i).coefs_, one_run.export_model(i).coefs_):
            np.testing.assert_array_equal(wa, wb)
