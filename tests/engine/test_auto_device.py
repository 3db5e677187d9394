"""``device="auto"``: the CPU unless the GPU is measured to win on the run.

These tests stand in a visible GPU (``torch.cuda.is_available`` patched):
the rule only reads the population, the data's size and what the Triton
kernels take, so no GPU is needed to check which device it picks.
"""

import numpy as np
import pytest
import torch

from skpmlp import ParallelMLPClassifier
from skpmlp._engine import PopulationSpec, TrainConfig, run_device
from skpmlp._engine._backends import _choice
from skpmlp._engine._backends._choice import AUTO_CUDA_SECONDS, auto_device, cpu_seconds
from skpmlp._engine._backends._triton import triton_installed

needs_triton = pytest.mark.skipif(not triton_installed(), reason="the rule asks the Triton kernels")


def _spec(archs, solver=None):
    n = len(archs)
    optimizers = None
    if solver is not None:
        optimizers = [TrainConfig(task="classification", n_outputs=3, solver=solver).optimizer_settings()] * n
    return PopulationSpec(hidden_layer_sizes=archs, activations=["relu"] * n,
                          learning_rates=np.full(n, 1e-3), alphas=np.full(n, 1e-4),
                          init_seeds=[(0, i) for i in range(n)], optimizers=optimizers)


CONFIG = TrainConfig(task="classification", n_outputs=3, max_iter=200)


@pytest.fixture
def visible_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


def test_the_estimate_counts_every_models_multiply_adds_rows_and_epochs():
    spec = _spec([(10,), (20, 5)])
    macs = (4 * 10 + 10 * 3) + (4 * 20 + 20 * 5 + 5 * 3)
    expected = 6 * macs * (100 + 120) * 200 / (2 * _choice.CPU_GFLOPS_PER_THREAD * 1e9)
    assert cpu_seconds(spec, CONFIG, 4, [100, 120], threads=2) == pytest.approx(expected)


def test_without_a_gpu_auto_is_the_cpu():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert auto_device(_spec([(64,)] * 10_000), CONFIG, 100, [10**6])[0] == "cpu"
    assert run_device(_spec([(8,)]), CONFIG, np.zeros((10, 4)), [(np.arange(8), None)]) == "cpu"


@needs_triton
def test_a_small_search_stays_on_the_cpu(visible_gpu):
    device, why = auto_device(_spec([(16,), (32,), (64, 32)] * 16), CONFIG, 4, [120] * 5)
    assert device == "cpu"
    assert f"under the {AUTO_CUDA_SECONDS:.0f} s" in why


@needs_triton
def test_a_large_search_the_triton_kernels_take_goes_to_the_gpu(visible_gpu):
    device, why = auto_device(_spec([(64,), (128, 64), (32, 32, 32)] * 700), CONFIG, 40, [16_000] * 5)
    assert device == "cuda", why
    assert "Triton kernels" in why


@needs_triton
def test_a_large_search_the_kernels_cannot_take_stays_on_the_cpu(visible_gpu):
    # widths of 256 train on torch's CUDA ops: measured slower than the native kernel
    device, why = auto_device(_spec([(256, 64), (64,)] * 700), CONFIG, 40, [16_000] * 5)
    assert device == "cpu"
    assert "cannot train it" in why and "128" in why


@needs_triton
def test_lbfgs_stays_on_the_cpu(visible_gpu):
    device, why = auto_device(_spec([(64,)] * 2000, solver="lbfgs"), CONFIG, 40, [16_000] * 5)
    assert (device, "L-BFGS" in why) == ("cpu", True)


def test_a_large_population_of_wide_layers_goes_to_torchs_gemms_on_the_gpu(visible_gpu):
    device, why = auto_device(_spec([(1024, 1024)] * 64), CONFIG, 50, [20_000] * 5)
    assert device == "cuda" and "wide hidden layers" in why


def test_an_explicit_device_is_kept(visible_gpu):
    spec, X, folds = _spec([(8,)]), np.zeros((10, 4)), [(np.arange(8), None)]
    assert run_device(spec, TrainConfig(task="classification", n_outputs=3, device="cpu"), X, folds) == "cpu"
    assert run_device(spec, TrainConfig(task="classification", n_outputs=3, device="cuda:1"), X, folds) == "cuda:1"


@needs_triton
def test_a_search_on_a_gpu_host_trains_a_small_data_set_on_the_cpu_and_says_why(iris, visible_gpu, capsys):
    search = ParallelMLPClassifier(hidden_layer_sizes=[(8,), (16,)], max_iter=5, cv=2, ensemble="best",
                                   verbose=True, random_state=0).fit(*iris)
    assert {shard["device"] for shard in search.shards_} == {"cpu"}
    assert "device='auto' trains on cpu: its epochs are about" in capsys.readouterr().err


@needs_triton
def test_each_shard_decides_auto_by_its_own_size_where_it_runs(iris, visible_gpu, monkeypatch):
    """With ``n_jobs`` the shards resolve ``"auto"`` on their worker (here
    this process, whose "GPU" is patched in): small shards train on the CPU."""
    from sklearn.utils.parallel import Parallel

    import skpmlp._execution._shards as shards

    monkeypatch.setattr(shards, "Parallel", lambda n_jobs=None: Parallel(n_jobs=1))
    search = ParallelMLPClassifier(hidden_layer_sizes=[(8,), (16,)], max_iter=5, cv=2, ensemble="best",
                                   n_jobs=2, random_state=0).fit(*iris)
    assert len(search.shards_) >= 2
    assert {shard["device"] for shard in search.shards_} == {"cpu"}
