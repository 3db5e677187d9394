"""The Triton kernels against the torch engine.

On a machine with CUDA they run on the GPU; elsewhere through Triton's
interpreter on the CPU (the repository's ``conftest.py`` sets
``TRITON_INTERPRET=1`` before triton is imported). On the same
population, folds, batches and sample weights, they must give the torch
engine's weights, losses and scores: in float64 to rounding (1e-12), in
float32 within 1e-5 after a few steps. The interpreter runs a few
thousand tile operations per model and step, so the populations are small
and the runs a few steps long.
"""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from triton_compile import UNAVAILABLE

from skpmlp._engine import (
    ACTIVATIONS,
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    _memory,
    train_population,
)
from skpmlp._engine._backends import _choice, _triton
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._minibatch._batches import BatchPlanner

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _why_not_triton():
    """Why the kernels cannot run here, or None."""
    if not _triton.triton_installed():
        return "triton is not installed (pip install skpmlp[gpu])"
    if DEVICE == "cpu" and _triton.triton_version() < (3, 7):
        # older interpreters convert 1-element arrays to int, which numpy 2.4 refuses
        return "Triton's interpreter runs these tests from triton 3.7"
    if _triton.triton_version() < (3, 5):
        return "the tests train in float64, which the kernels need triton 3.5 for"
    return None


needs_triton = pytest.mark.skipif(_why_not_triton() is not None, reason=str(_why_not_triton()))
pytestmark = pytest.mark.triton

OPTIMIZERS = [
    OptimizerSettings(solver="adam"),
    OptimizerSettings(solver="sgd", momentum=0.9, nesterovs_momentum=True),
    OptimizerSettings(solver="sgd", momentum=0.8, nesterovs_momentum=False),
    OptimizerSettings(solver="sgd", momentum=0.0),
    OptimizerSettings(solver="adamw", beta_2=0.99),
]
TASKS = {"classification": 3, "regression": 2, "multilabel": 3}


def population(archs, activations, seed=0):
    """Every arch x activation; learning rates, penalties and the five
    optimizers vary along the population."""
    models = [(arch, act) for arch in archs for act in activations]
    n = len(models)
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([(1e-2, 3e-3)[i % 2] for i in range(n)]),
        alphas=np.array([(0.0, 1e-2)[i // 2 % 2] for i in range(n)]),
        init_seeds=[(seed, i) for i in range(n)],
        optimizers=[OPTIMIZERS[i % len(OPTIMIZERS)] for i in range(n)],
    )


def data(task, n=90, n_features=7, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = {
        "classification": lambda: rng.integers(0, 3, n),
        "regression": lambda: rng.normal(size=(n, 2)),
        "multilabel": lambda: rng.integers(0, 2, (n, 3)).astype(float),
    }[task]()
    return X, y, rng.uniform(0.5, 2.0, n)


def two_folds(n):
    rows = np.arange(n)
    return [(rows[rows % 3 != 0], rows[rows % 3 == 0]), (rows[rows % 3 != 1], rows[rows % 3 == 1])]


def config(task, **kwargs):
    kwargs = {"batch_size": 25, "max_iter": 2, "n_iter_no_change": 1000, "dtype": "float64", "device": DEVICE,
              **kwargs}
    return TrainConfig(task=task, n_outputs=TASKS[task], **kwargs)


def max_weight_difference(a, b):
    """Largest absolute difference between two results' weights."""
    return max(
        float(np.abs(x - y).max())
        for k in range(len(a.coefs))
        for model_a, model_b in zip(a.coefs[k] + a.intercepts[k], b.coefs[k] + b.intercepts[k])
        for x, y in zip(model_a, model_b)
    )


def both(spec, cfg, X, y, folds, **kwargs):
    """The torch engine's result and the Triton kernels'."""
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds, **kwargs)
    triton = train_population(spec, dataclasses.replace(cfg, backend="triton"), X, y, folds, **kwargs)
    return reference, triton


def assert_agree(reference, triton, atol=1e-12, rtol=1e-12):
    assert max_weight_difference(reference, triton) <= atol
    np.testing.assert_allclose(triton.loss_curves, reference.loss_curves, rtol=rtol)
    if reference.validation_scores is not None:
        np.testing.assert_allclose(triton.validation_scores, reference.validation_scores, rtol=rtol, atol=rtol)


# ---------------------------------------------------------------- numerics
@needs_triton
@pytest.mark.parametrize("archs", [[(5,), (20,)], [(9, 3), (4, 6, 5)]], ids=["one_hidden", "deep"])
def test_every_activation_equals_torch(archs):
    """Every activation in both kernels (one hidden layer in registers;
    two and three layers through scratch), every optimizer, widths of two
    classes in one run, a short last batch: float64 to rounding."""
    X, y, sw = data("classification", n=45)
    spec = population(archs, sorted(ACTIVATIONS))
    reference, triton = both(spec, config("classification", max_iter=1), X, y, [(np.arange(len(X)), None)],
                             sample_weight=sw)
    assert_agree(reference, triton)


@needs_triton
@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_loss_and_optimizer_equals_torch(task):
    """Each loss with Adam, SGD with Nesterov, with plain momentum and
    without, two folds (each model trains on its fold's batches), sample
    weights, L2 on and off: float64 to rounding, loss curves and
    validation scores included."""
    X, y, sw = data(task, n=60)
    spec = population([(7,), (6, 4)], ["tanh", "relu", "gelu", "logistic"])
    reference, triton = both(spec, config(task), X, y, two_folds(len(X)), sample_weight=sw)
    assert_agree(reference, triton)


@needs_triton
@pytest.mark.parametrize("task", ["classification", "multilabel"])
def test_label_smoothing_equals_torch(task):
    """Each model's label smoothing (0 among them) in both kernels, two
    folds, sample weights: float64 to rounding."""
    X, y, sw = data(task, n=60)
    spec = population([(7,), (6, 4)], ["tanh", "relu"])
    smoothing = [0.1, 0.0, 0.3, 0.05]
    spec = dataclasses.replace(spec, optimizers=[
        dataclasses.replace(o, label_smoothing=e) for o, e in zip(spec.optimizers, smoothing)])
    reference, triton = both(spec, config(task), X, y, two_folds(len(X)), sample_weight=sw)
    assert_agree(reference, triton)


@needs_triton
@pytest.mark.parametrize("archs, dtype", [
    ([(7,), (20,)], "float64"), ([(6, 4), (5, 3, 4)], "float64"), ([(7,), (20,)], "float32"),
], ids=["one_hidden", "deep", "one_hidden-float32"])
def test_dropout_equals_torch(archs, dtype):
    """Each model's dropout rate (0 among them) in both kernels, every
    activation kind of backward (relu's selection, tanh's product), two
    folds, sample weights, three epochs (the masks hash the epoch):
    float64 to rounding (float32 within 1e-5), and the rates change what
    the models learn."""
    X, y, sw = data("classification", n=60)
    spec = population(archs, ["tanh", "relu", "gelu"])
    rates = [0.15, 0.0, 0.5, 0.3, 0.15, 0.2]
    spec = dataclasses.replace(spec, optimizers=[
        dataclasses.replace(o, dropout=p) for o, p in zip(spec.optimizers, rates)])
    cfg = config("classification", max_iter=3, dtype=dtype)
    reference, triton = both(spec, cfg, X, y, two_folds(len(X)), sample_weight=sw)
    tolerance = 1e-12 if dtype == "float64" else 1e-5
    assert_agree(reference, triton, atol=tolerance, rtol=tolerance)
    plain = train_population(dataclasses.replace(spec, optimizers=population(archs, [
        "tanh", "relu", "gelu"]).optimizers), dataclasses.replace(cfg, backend="triton"), X, y,
        two_folds(len(X)), sample_weight=sw)
    assert max_weight_difference(plain, triton) > 1e-4


@needs_triton
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_float32_stays_close_to_torch(task):
    """float32 rounds differently (exp, tanh and erf, summation order of
    the tiles); after four steps over two epochs the weights agree within
    1e-5 (measured below 3e-7) and the losses to a relative 1e-5."""
    X, y, sw = data(task, n=60)
    spec = population([(7,), (6, 4)], sorted(ACTIVATIONS)[::2])
    reference, triton = both(spec, config(task, dtype="float32"), X, y, two_folds(len(X))[:1], sample_weight=sw)
    assert_agree(reference, triton, atol=1e-5, rtol=1e-5)


@needs_triton
def test_wide_inputs_and_several_models_per_program(monkeypatch):
    """150 features: the one-hidden-layer models go to the layer-by-layer
    kernel, which reads the features in chunks; two programs each train
    several models one after another (their scratch reused)."""
    monkeypatch.setattr(_triton, "max_programs", 2)
    X, y, _ = data("regression", n=40, n_features=150)
    spec = population([(6,), (5, 3)], ["elu", "mish", "selu"])
    reference, triton = both(spec, config("regression", batch_size=20, max_iter=1), X, y,
                             [(np.arange(len(X)), None)])
    assert_agree(reference, triton)


@needs_triton
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_gpu_equals_cpu():
    """Seed 003's check: the GPU run (the Triton kernels, what
    ``device="cuda"`` trains with) equals the CPU run in float64."""
    X, y, sw = data("classification", n=60)
    spec = population([(7,), (6, 4)], ["tanh", "gelu"])
    gpu = train_population(spec, config("classification", device="cuda"), X, y, two_folds(len(X)), sample_weight=sw)
    cpu = train_population(spec, config("classification", device="cpu", backend="torch"), X, y, two_folds(len(X)),
                           sample_weight=sw)
    assert_agree(cpu, gpu, atol=1e-12, rtol=1e-10)


@needs_triton
def test_a_search_on_the_kernels_equals_one_on_torch(monkeypatch, iris):
    """The estimator's whole path (folds, scoring, refit, export) around the
    kernels: a cross-validated search gives the torch engine's table and
    best model."""
    import skpmlp._estimators._single
    import skpmlp._search._plan
    from skpmlp import ParallelMLPClassifier

    originals = {module: module.train_config for module in (skpmlp._search._plan, skpmlp._estimators._single)}

    def fit(backend):
        for module, original in originals.items():
            monkeypatch.setattr(module, "train_config", lambda *a, _o=original, **kw: dataclasses.replace(
                _o(*a, **kw), backend=backend, device=DEVICE))
        return ParallelMLPClassifier(hidden_layer_sizes=[(4,), (3,)], activation="tanh", cv=2,
                                     ensemble="best",  # the refit trains on the backend too
                                     max_iter=2, batch_size=50, dtype="float64", random_state=0,
                                     ).fit(*iris)  # the default space: dropout on the kernels

    reference, triton = fit("torch"), fit("triton")
    np.testing.assert_allclose(triton.cv_results_["mean_test_score"], reference.cv_results_["mean_test_score"])
    for a, b in zip(triton.best_estimator_.coefs_, reference.best_estimator_.coefs_):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def _trainers(spec, cfg, n_features):
    return (PopulationTrainer(spec, dataclasses.replace(cfg, backend="torch"), n_features, 1),
            _triton.TritonTrainer(spec, dataclasses.replace(cfg, backend="triton"), n_features, 1))


@needs_triton
def test_frozen_models_are_left_untouched():
    """A frozen slot (early stopping, halving) is in no launch: its
    parameters and optimizer state stay bit for bit; the others train as on
    torch."""
    X, y, _ = data("classification", n=40)
    spec = population([(5,), (4, 3)], ["tanh", "relu"])
    cfg = config("classification")
    torch_trainer, triton_trainer = _trainers(spec, cfg, X.shape[1])
    frozen = np.arange(len(torch_trainer.frozen)) % 3 == 0
    for trainer in (torch_trainer, triton_trainer):
        trainer.freeze(frozen)
    before = triton_trainer.net.flat.detach().clone()
    plan = BatchPlanner([np.arange(len(X))], 20, 0, None, dtype=torch.float64, device=DEVICE).next_epoch()
    X_t = torch.as_tensor(X, device=DEVICE)
    y_t = torch.as_tensor(y, device=DEVICE)
    for trainer in (torch_trainer, triton_trainer):
        trainer.run_epoch(X_t, y_t, plan)
    after = triton_trainer.net.flat.detach()
    frozen_ranges = [r for gi in range(len(triton_trainer.net.groups))
                     for s in range(triton_trainer.net.group_offsets[gi], triton_trainer.net.group_offsets[gi + 1])
                     if frozen[s]
                     for r in triton_trainer.net.parameter_ranges(gi, s - triton_trainer.net.group_offsets[gi],
                                                                  s - triton_trainer.net.group_offsets[gi] + 1)]
    for offset, length, _ in frozen_ranges:
        assert torch.equal(after[offset : offset + length], before[offset : offset + length])
        for state in triton_trainer.optimizer.state:
            assert not state[offset : offset + length].any()
    assert not torch.equal(after, before)
    torch.testing.assert_close(after, torch_trainer.net.flat.detach(), rtol=0, atol=1e-12)
    # a frozen slot's loss is no longer recorded (the torch path computes it, the kernels skip it)
    active = torch.as_tensor(~frozen, device=DEVICE)
    torch.testing.assert_close(triton_trainer.loss_sums[active], torch_trainer.loss_sums[active], rtol=1e-12, atol=0)


@needs_triton
def test_early_stopping_halving_and_compaction_around_the_kernels():
    """Early stopping, successive halving and compaction (which freeze and
    drop slots between epochs) give what they give around the torch path."""
    X, y, _ = data("classification", n=60)
    cfg = config("classification", batch_size=40, max_iter=6, early_stopping=True, n_iter_no_change=2,
                 pruning="halving", min_iter=2, halving_factor=2.0, compact_fraction=0.1)
    spec = population([(5,), (4, 3)], ["tanh", "relu", "identity"])
    reference, triton = both(spec, cfg, X, y, two_folds(len(X)))
    np.testing.assert_array_equal(triton.n_iter, reference.n_iter)
    np.testing.assert_array_equal(triton.pruned, reference.pruned)
    assert triton.pruned.any()
    assert max_weight_difference(reference, triton) <= 1e-12


@needs_triton
def test_each_replica_restores_its_own_best_epoch_around_the_kernels():
    """``restore_best_weights`` (the trainers' common bookkeeping, the best
    weights buffer) keeps the torch path's epochs and weights."""
    X, y, _ = data("classification", n=60)
    cfg = config("classification", batch_size=20, max_iter=6, restore_best_weights=True)
    spec = dataclasses.replace(population([(5,), (4, 3)], ["tanh", "relu"]),
                               learning_rates=np.array([0.1, 0.03, 0.1, 0.03]))
    reference, triton = both(spec, cfg, X, y, two_folds(len(X)))
    np.testing.assert_array_equal(triton.best_epoch, reference.best_epoch)
    assert (reference.best_epoch < cfg.max_iter).any()
    assert max_weight_difference(reference, triton) <= 1e-12


@needs_triton
def test_models_of_different_widths_share_a_launch():
    """Launches are width classes: widths 3 to 16 in one, 17 to 32 in the
    next; one-hidden-layer models apart from deeper ones, and from those
    whose first layer is too large a tile (128 units x 64 features in
    float64)."""
    spec = population([(3,), (9,), (16,), (17,), (30,), (9, 3), (40, 2), (100,)], ["relu"])
    trainer = _triton.TritonTrainer(spec, config("classification", backend="triton"), 40, 1)
    assert trainer.describe().startswith("Triton kernels")  # what verbose prints for the run
    launches = trainer._plan_launches(25)
    assert [(launch["kernel"], launch["H"], launch["n_models"]) for launch in launches] == [
        ("one_hidden", 16, 3), ("one_hidden", 32, 2), ("deep", 16, 1), ("deep", 64, 1), ("deep", 128, 1),
    ]


@needs_triton
def test_on_cuda_every_launch_compiles_at_once(monkeypatch):
    """On CUDA every launch's kernel is compiled before any is loaded, each
    submitted under triton's AsyncCompileMode to one pool of threads (the
    compiles run side by side: 48 s one after another for a narrow search's
    six kernels, 27 s on two threads); a compile that fails there is left
    to the launch, which raises it where it always did; on the CPU (the
    interpreter) nothing is compiled ahead."""
    from triton.runtime import _async_compile

    spec = population([(3,), (17,), (9, 3)], ["relu"])
    launches = _triton.TritonTrainer(spec, config("classification", backend="triton"), 4, 1)._plan_launches(25)
    seen = []

    def launch(launch, args, n_programs, n_models, warmup=False):
        seen.append((launch["kernel"], launch["H"], n_programs, n_models, warmup,
                     _async_compile.active_mode.get() is not None))

    trainer = SimpleNamespace(net=SimpleNamespace(device=torch.device("cuda")), _launches=launches,
                              _launch=launch)
    _triton.TritonTrainer._compile_launches(trainer, {})
    assert seen == [(one["kernel"], one["H"], 1, 0, True, True) for one in launches]
    assert _async_compile.active_mode.get() is None

    def failing(*args, **kwargs):
        raise RuntimeError("a compile error")

    trainer._launch = failing
    _triton.TritonTrainer._compile_launches(trainer, {})  # left to the launches
    seen.clear()
    trainer._launch, trainer.net.device = launch, torch.device("cpu")
    _triton.TritonTrainer._compile_launches(trainer, {})
    assert seen == []


def _out_of_resources_above(monkeypatch, rows):
    """Fake a GPU whose shared memory takes batch tiles of at most ``rows``
    rows: loading a kernel with larger tiles raises OutOfResources."""
    from triton.runtime.errors import OutOfResources

    original = _triton.TritonTrainer._launch
    tiles = []

    def launch(self, launch, args, n_programs, n_models, warmup=False):
        if warmup:  # a compile (on CUDA, of every launch at once) loads nothing
            return original(self, launch, args, n_programs, n_models, warmup=True)
        tiles.append(launch["BB"])
        if launch["BB"] > rows:
            raise OutOfResources(launch["BB"] * 4096, rows * 4096, "shared memory")
        original(self, launch, args, n_programs, n_models)

    monkeypatch.setattr(_triton.TritonTrainer, "_launch", launch)
    return tiles


@needs_triton
@pytest.mark.parametrize("rows", [16, 8])
def test_kernels_that_do_not_fit_the_gpu(monkeypatch, rows):
    """Every launch is loaded before any trains; one that asks for more
    shared memory than the GPU has halves its batch tile (down to 16 rows),
    and where that does not fit either, the run warns and trains on torch:
    the results are the torch engine's either way."""
    tiles = _out_of_resources_above(monkeypatch, rows)
    X, y, _ = data("classification", n=40)
    spec = population([(5,)], ["tanh", "relu"])
    cfg = config("classification", batch_size=40)
    folds = [(np.arange(len(X)), None)]
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds)
    if rows == 16:
        triton = train_population(spec, dataclasses.replace(cfg, backend="triton"), X, y, folds)
        assert tiles[:2] == [32, 16] and set(tiles[2:]) == {16}
    else:
        with pytest.warns(UserWarning, match="do not fit this GPU"):
            triton = train_population(spec, dataclasses.replace(cfg, backend="triton"), X, y, folds)
        assert tiles == [32, 16]
    assert_agree(reference, triton)


# ------------------------------------------------------- choice and fallback
def test_cuda_chooses_triton_where_installed_and_torch_otherwise(monkeypatch):
    spec = population([(5,)], ["relu"])
    cuda = config("classification", device="cuda")
    monkeypatch.setattr(_triton, "triton_installed", lambda: True)
    monkeypatch.setattr(_triton, "triton_version", lambda: (3, 9))
    assert _choice.choose_trainer(spec, cuda) is _triton.TritonTrainer
    assert _choice.choose_trainer(spec, dataclasses.replace(cuda, backend="torch")) is PopulationTrainer
    wide = population([(129,)], ["relu"])
    assert _choice.choose_trainer(wide, cuda) is PopulationTrainer  # too wide for the tiles
    with pytest.raises(ValueError, match="wider than 128"):
        _choice.choose_trainer(wide, dataclasses.replace(cuda, backend="triton"))
    # Adam and SGD only: a population with an amsgrad model trains on torch
    amsgrad = dataclasses.replace(
        spec, optimizers=[dataclasses.replace(o, amsgrad=True) for o in spec.optimizers_of(cuda)]
    )
    assert _choice.choose_trainer(amsgrad, cuda) is PopulationTrainer
    with pytest.raises(ValueError, match="amsgrad"):
        _choice.choose_trainer(amsgrad, dataclasses.replace(cuda, backend="triton"))
    # dropout: the kernels draw the torch path's masks
    dropout = dataclasses.replace(
        spec, optimizers=[dataclasses.replace(o, dropout=0.1) for o in spec.optimizers_of(cuda)]
    )
    assert _choice.choose_trainer(dropout, cuda) is _triton.TritonTrainer
    poisson = dataclasses.replace(config("regression", device="cuda"), loss="poisson")
    assert _choice.choose_trainer(spec, poisson) is PopulationTrainer
    with pytest.raises(ValueError, match="CPU only"):  # the native kernel stays CPU only
        _choice.choose_trainer(spec, dataclasses.replace(cuda, backend="native"))
    monkeypatch.setattr(_triton, "triton_version", lambda: (3, 4))  # no float64 tl.dot before 3.5
    assert _choice.choose_trainer(spec, cuda) is PopulationTrainer
    assert _choice.choose_trainer(spec, dataclasses.replace(cuda, dtype="float32")) is _triton.TritonTrainer
    monkeypatch.setattr(_triton, "triton_version", lambda: (3, 1))
    assert _choice.choose_trainer(spec, dataclasses.replace(cuda, dtype="float32")) is PopulationTrainer
    monkeypatch.setattr(_triton, "triton_installed", lambda: False)
    assert _choice.choose_trainer(spec, cuda) is PopulationTrainer
    with pytest.raises(ValueError, match="triton is not installed"):
        _choice.choose_trainer(spec, dataclasses.replace(cuda, backend="triton"))


def test_cpu_runs_ask_for_triton_explicitly(monkeypatch):
    """On the CPU, ``backend="auto"`` never picks Triton; ``"triton"``
    needs the interpreter."""
    spec = population([(5,)], ["relu"])
    cpu = config("classification", device="cpu")
    assert _choice.choose_trainer(spec, cpu) is not _triton.TritonTrainer
    monkeypatch.setattr(_triton, "triton_installed", lambda: True)
    monkeypatch.setattr(_triton, "triton_version", lambda: (3, 9))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(ValueError, match="interpreter"):
        _choice.choose_trainer(spec, dataclasses.replace(cpu, backend="triton"))


@pytest.mark.parametrize("installed", [True, False])
def test_verbose_says_which_gpu_path(monkeypatch, capsys, installed):
    monkeypatch.setattr(_triton, "triton_installed", lambda: installed)
    monkeypatch.setattr(_triton, "triton_version", lambda: (3, 9) if installed else (0, 0))
    _choice.prepare_kernel(config("classification", device="cuda"), verbose=True)
    err = capsys.readouterr().err
    expected = "with the Triton kernels" if installed else "with torch: triton is not installed"
    assert f"training on cuda {expected}" in err
    _choice.prepare_kernel(config("classification", device="cuda", backend="torch"), verbose=True)
    assert "with torch (backend='torch')" in capsys.readouterr().err


# ------------------------------------------------------------ device memory
def test_chunk_plan_reads_free_device_memory(monkeypatch):
    """The planner budgets 80 % of what ``torch.cuda.mem_get_info`` says
    is free (faked here: an 80 GiB device with 64 MiB free)."""
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (64 * 2**20, 80 * 2**30))
    budget = _memory.memory_budget("cuda")
    assert budget == pytest.approx(0.8 * 64 * 2**20)
    assert _memory.memory_budget("cuda", max_memory=2**20) == 2**20
    spec = population([(64,), (128,)], sorted(ACTIVATIONS))
    cfg = config("classification", device="cuda", batch_size=200)
    per_model = _memory.model_bytes(spec, cfg, 100, n_folds=5, n_eval=500)
    chunks = _memory.plan_chunks(spec, per_model, _memory.data_bytes(cfg, 2000, 100), budget)
    assert len(chunks) > 1
    assert all(per_model[c].sum() <= budget for c in chunks)
    np.testing.assert_array_equal(np.sort(np.concatenate(chunks)), np.arange(spec.n_models))


@needs_triton
def test_device_out_of_memory_halves_the_chunk(monkeypatch):
    """A faked allocator limit: a Triton run of more than three models
    raises torch's OutOfMemoryError, as a full GPU would. The run halves
    its chunk until it fits, warns, and gives the results of one run."""
    X, y, _ = data("classification", n=30)
    spec = population([(4,), (3, 2)], ["tanh", "relu", "gelu"])
    cfg = config("classification", backend="triton", batch_size=30, max_iter=1)
    folds = [(np.arange(len(X)), None)]
    whole = train_population(spec, cfg, X, y, folds)
    original = _triton.TritonTrainer.__init__
    sizes = []

    def limited(self, spec, *args, **kwargs):
        sizes.append(spec.n_models)
        if spec.n_models > 3:
            raise torch.OutOfMemoryError("CUDA out of memory (faked allocator limit)")
        original(self, spec, *args, **kwargs)

    monkeypatch.setattr(_triton.TritonTrainer, "__init__", limited)
    with pytest.warns(ResourceWarning, match="Out of memory training 6 models"):
        chunked = train_population(spec, cfg, X, y, folds)
    assert sizes == [6, 3, 3]
    assert max_weight_difference(whole, chunked) == 0


# -------------------------------------------------------- GPU compilation
#: the most shared memory a block may have: sm_80 (A100) 163 KB, sm_90 (H100) 227 KB
SHARED_PER_BLOCK = {80: 163 * 1024, 90: 227 * 1024}
KERNELS = ("epoch_one_hidden", "epoch_deep")


@needs_triton
@pytest.mark.parametrize("arch, mode, kernels", [
    (90, "front", [f"{name}:{dtype}:{loss}:32" for name in KERNELS for dtype in ("fp32", "fp64") for loss in (0, 1, 2)]),
    (80, "full", ["epoch_one_hidden:fp32:0:64", "epoch_deep:fp64:2:32"]),
    (90, "full", ["epoch_one_hidden:fp64:0:128", "epoch_deep:fp64:1:128"]),
], ids=["front-end", "cubin", "sm_90-cubin"])
def test_kernels_compile_for_the_gpu(arch, mode, kernels, tmp_path):
    """What the interpreter does not check: the compiler's rules (one type
    per loop-carried variable, ``tl.dot`` shapes and dtypes). Every kernel,
    dtype and loss through Triton's front end (for sm_90); each kernel to an
    sm_80 cubin, and to sm_90 cubins at the widest class in float64, whose
    shared memory is the largest a launch asks for: it must fit the GPU's.
    Triton compiles for a GPU without one (tests/kernels/triton_compile.py),
    in a process that does not interpret."""
    env = {name: value for name, value in os.environ.items() if name != "TRITON_INTERPRET"}
    env.update(TRITON_CACHE_DIR=str(tmp_path), TRITON_DEFAULT_FP_FUSION="1")
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("triton_compile.py")), str(arch), mode,
                           *kernels], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode == UNAVAILABLE:
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = [json.loads(line) for line in done.stdout.splitlines()]
    assert [kernel["kernel"] for kernel in compiled] == kernels
    if mode == "full":  # each launch fits the GPU's shared memory
        assert all(kernel["shared"] <= SHARED_PER_BLOCK[arch] for kernel in compiled), compiled
