"""``dropout``: per-model inverted dropout on the hidden activations, end to
end in the engine (issue 40, item 1).

In float64: a model with dropout equals a plain torch model trained on the
engine's batches with the masks of :mod:`skpmlp._engine._dropout` (built
here one model at a time, by :func:`dropout_mask`), equals itself trained
alone beside models of other rates, solvers and architectures, and fold k's
replica equals the model trained alone on fold k's rows. A model of rate 0
trains bit for bit as without dropout, and a run where no model drops units
never builds a mask. The hash is exact in int64 (no overflow), its masks
keep ``1 - p`` of the units and differ with every counter. The native
kernel draws the same masks (``mlp_step.cpp``): every check above holds on
it at every vector width, it equals the torch path to 1e-12, and a model
trains on it bit for bit alone or beside others (its rate 0 bit for bit as
without dropout). A data-parallel run's epochs with dropout, and the Triton
kernels' runs, train on torch and say so.
"""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from optimizer_checks import assert_kernel_equals_torch, torch_optimizer
from test_engine import BACKENDS, make_data, plain_network

from skpmlp._engine import (
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    _dropout,
    mlp_forward,
    train_population,
)
from skpmlp._engine._backends import _choice
from skpmlp._engine._backends._native import DATA_PARALLEL_DROPOUT, NativeTrainer, native_supported
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._dropout import dropout_mask, mix32, model_key
from skpmlp._engine._minibatch._batches import BatchPlanner
from skpmlp._kernels import kernel_available

#: (hidden_layer_sizes, activation, learning rate, alpha, repeat), each with
#: its optimizer and dropout below
#: (one hidden layer of few inputs and outputs: the kernel's fused tiles,
#: whose forward masks in its pass where the activation is ReLU's)
MODELS = [((5,), "tanh", 3e-2, 0.0, 0), ((4, 3), "relu", 1e-2, 0.0, 1), ((6,), "logistic", 5e-2, 0.0, 2),
          ((5,), "tanh", 3e-2, 0.0, 3), ((5, 4), "tanh", 2e-2, 0.0, 4), ((7,), "relu", 2e-2, 0.0, 5)]
SETTINGS = [
    OptimizerSettings("adam", dropout=0.2),
    OptimizerSettings("adam"),
    OptimizerSettings("sgd", momentum=0.8, dropout=0.3),
    OptimizerSettings("adam", beta_2=0.99, dropout=0.1),
    OptimizerSettings("sgd", momentum=0.5, nesterovs_momentum=False, dropout=0.25),
    OptimizerSettings("adam", dropout=0.35),
]
TORCH_ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu, "logistic": torch.sigmoid}


def _seed(model):
    arch, repeat = model[0], model[4]
    return (0, repeat, len(arch), *arch)


def _spec(models=MODELS, settings=SETTINGS):
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]), alphas=np.array([m[3] for m in models]),
        init_seeds=[_seed(m) for m in models], optimizers=list(settings),
    )


def _config(task="classification", backend="torch", **kwargs):
    """The runs' config; ``backend`` may name a kernel width (``native:x86-64-v2``)."""
    kwargs = {"max_iter": 4, **kwargs}
    return TrainConfig(task=task, n_outputs=3, batch_size=32, dtype="float64", n_iter_no_change=1000,
                       shuffle_seed=7, backend=backend_name(backend), **kwargs)


def _exact_on_the_kernel(backend, atol):
    """The tolerance of a model alone against itself among others: none on
    the kernel (each model runs its own loops), ``atol`` on torch (batched
    matmuls of other widths may round otherwise)."""
    return 0 if backend_name(backend) == "native" else atol


def _loss(out, y, task):
    if task == "classification":
        return torch.nn.functional.cross_entropy(out, y)
    return torch.nn.functional.binary_cross_entropy_with_logits(out, y, reduction="sum") / len(y)


def torch_dropout(model, settings, X, y, task, cfg, rows=None):
    """One model as plain ``nn.Linear`` layers trained by torch.optim on the
    engine's batches (a permutation of ``rows`` a epoch from the shuffle
    seed's generator), each hidden activation multiplied by its
    :func:`dropout_mask`; its outputs on ``X`` and last epoch's mean loss."""
    net = plain_network(model, X.shape[1], 3)
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    act = TORCH_ACTIVATIONS[model[1]]
    optimizer = torch_optimizer(net.parameters(), model[2], settings)
    rows = np.arange(len(X)) if rows is None else np.asarray(rows)
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    generator = torch.Generator().manual_seed(cfg.shuffle_seed)
    for epoch in range(cfg.max_iter):
        order, total = rows[torch.randperm(len(rows), generator=generator).numpy()], 0.0
        for step, begin in enumerate(range(0, len(rows), cfg.batch_size)):
            batch = order[begin : begin + cfg.batch_size]
            h = X_t[batch]
            for layer, linear in enumerate(linears[:-1]):
                h = act(linear(h))
                h = h * dropout_mask(_seed(model), settings.dropout, epoch, step, layer, len(batch),
                                     linear.out_features)
            loss = _loss(linears[-1](h), y_t[batch], task)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
    with torch.no_grad():
        return net(X_t).numpy(), total / len(rows)


def _outputs(result, i, activation, X, fold=0):
    return mlp_forward(result.coefs[fold][i], result.intercepts[fold][i], activation, X)


@pytest.mark.parametrize("backend", ["torch", "auto", *NATIVE_BACKENDS])  # auto: the kernel here
@pytest.mark.parametrize("task", ["classification", "multilabel"])
def test_dropout_models_equal_torch_alone_and_together(task, backend):
    X, y, _ = make_data(task, n=100)
    cfg = _config(task, backend)
    everyone = [(np.arange(len(X)), None)]
    together = train_population(_spec(), cfg, X, y, everyone)
    exact = backend != "torch"
    for i, (model, settings) in enumerate(zip(MODELS, SETTINGS)):
        outputs = _outputs(together, i, model[1], X)
        alone = train_population(_spec().subset([i]), cfg, X, y, everyone)
        np.testing.assert_allclose(outputs, _outputs(alone, 0, model[1], X), rtol=0,
                                   atol=0 if exact else 1e-9)
        np.testing.assert_allclose(together.loss_curves[i], alone.loss_curves[0],
                                   rtol=0 if exact else 1e-12)
        expected, last_loss = torch_dropout(model, settings, X, y, task, cfg)
        np.testing.assert_allclose(outputs, expected, rtol=0, atol=1e-9)
        # the loss curve is the loss with the units dropped (alpha is 0)
        np.testing.assert_allclose(together.loss_curves[i, 0, -1], last_loss, rtol=1e-12)


@pytest.mark.parametrize("task", ["classification", "multilabel"])
@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
def test_the_kernel_equals_the_torch_path(task, backend):
    """Two overlapping folds, models of rates 0 to 0.3: every weight and
    loss to 1e-12 (assert_kernel_equals_torch)."""
    X, y, _ = make_data(task, n=90)
    assert_kernel_equals_torch(_spec(), lambda b: _config(task, b), X, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_alone_equals_it_among_other_rates_and_hyperparameters(backend):
    """The masks are the model's own: alone, or at another slot beside
    models of rates 0, 0.1 and 0.3, other widths, activations and solvers,
    it trains to the same weights (bit for bit on the kernel)."""
    X, y, _ = make_data("classification", n=100)
    cfg = _config(backend=backend)
    everyone = [(np.arange(len(X)), None)]
    model, settings = ((5,), "tanh", 3e-2, 0.0, 7), OptimizerSettings("adam", dropout=0.2)
    others = [(((5,), "tanh", 3e-2, 0.0, 8), OptimizerSettings("adam")),
              (((5,), "relu", 1e-2, 0.0, 9), OptimizerSettings("adam", dropout=0.1)),
              (((8, 3), "tanh", 2e-2, 0.0, 10), OptimizerSettings("sgd", dropout=0.3)),
              (((5,), "tanh", 3e-2, 0.0, 11), OptimizerSettings("adam", dropout=0.3))]
    alone = train_population(_spec([model], [settings]), cfg, X, y, everyone)
    for position in (0, 2, 4):
        mixed = others[:position] + [(model, settings)] + others[position:]
        together = train_population(_spec([m for m, _ in mixed], [s for _, s in mixed]), cfg, X, y,
                                    everyone)
        for a, b in zip(alone.coefs[0][0] + alone.intercepts[0][0],
                        together.coefs[0][position] + together.intercepts[0][position]):
            np.testing.assert_allclose(a, b, rtol=0, atol=_exact_on_the_kernel(backend, 1e-12))


@pytest.mark.parametrize("backend", BACKENDS)
def test_fold_replicas_equal_the_model_alone_on_their_fold(backend):
    """With k folds each replica hashes its row's position in its own
    fold's batch: fold k's replica is the model trained on fold k's rows."""
    X, y, _ = make_data("classification", n=100)
    cfg = _config(backend=backend)
    folds = [(np.arange(70), np.arange(70, 100)), (np.arange(30, 100), np.arange(30))]
    together = train_population(_spec(), cfg, X, y, folds)
    for k, (rows, _) in enumerate(folds):
        for i, (model, settings) in enumerate(zip(MODELS, SETTINGS)):
            expected, _ = torch_dropout(model, settings, X, y, "classification", cfg, rows=rows)
            np.testing.assert_allclose(_outputs(together, i, model[1], X, fold=k), expected, rtol=0,
                                       atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rate_zero_trains_bit_for_bit_as_without_dropout(monkeypatch, backend):
    """A model of rate 0 beside dropout models is exactly the model of a
    population where none drops units; such a population never builds a
    mask (its steps are those of before dropout existed; on the kernel a
    model of rate 0 draws no mask)."""
    X, y, _ = make_data("classification", n=100)
    cfg = _config(backend=backend)
    everyone = [(np.arange(len(X)), None)]
    dropped = train_population(_spec(), cfg, X, y, everyone)
    none = [dataclasses.replace(s, dropout=0.0) for s in SETTINGS]

    def never(*args, **kwargs):
        raise AssertionError("a mask was built in a run without dropout")

    monkeypatch.setattr(_dropout.GroupDropout, "at", never)
    plain = train_population(_spec(settings=none), cfg, X, y, everyone)
    for i, settings in enumerate(SETTINGS):
        difference = max(np.abs(a - b).max() for a, b in zip(dropped.coefs[0][i], plain.coefs[0][i]))
        if settings.dropout:
            assert difference > 1e-4
        else:
            assert difference == 0


def test_the_torch_trainer_skips_groups_without_dropout():
    X, y, _ = make_data("classification", n=60)
    trainer = PopulationTrainer(_spec(settings=[OptimizerSettings("adam")] * len(MODELS)), _config(), 6)
    assert all(d is None for d in trainer.group_dropout)
    trainer = PopulationTrainer(_spec(), _config(backend="auto"), 6)
    assert any(d is not None for d in trainer.group_dropout)
    assert trainer.describe() == "torch (cpu)"


# ------------------------------------------------------------------ the hash
def _mix32_python(x):
    """:func:`mix32` in Python's unbounded ints, masked at every step."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) % 2**32
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) % 2**32
    return x ^ (x >> 16)


def test_the_hash_is_exact_in_int64():
    values = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 0xDEADBEEF, *np.random.default_rng(0).integers(0, 2**32, 200)]
    got = mix32(torch.tensor([int(v) for v in values], dtype=torch.int64))
    assert got.tolist() == [_mix32_python(int(v)) for v in values]
    assert all(0 <= v < 2**32 for v in got.tolist())


def test_masks_keep_one_minus_p_and_differ_with_every_counter():
    seed, p = (0, 1, 1, 16), 0.3
    base = dropout_mask(seed, p, 2, 3, 0, 400, 250)
    assert set(torch.unique(base).tolist()) == {0.0, 1 / 0.7}
    assert abs((base > 0).double().mean().item() - 0.7) < 0.01
    variants = [dropout_mask((0, 2, 1, 16), p, 2, 3, 0, 400, 250), dropout_mask(seed, p, 3, 3, 0, 400, 250),
                dropout_mask(seed, p, 2, 4, 0, 400, 250), dropout_mask(seed, p, 2, 3, 1, 400, 250)]
    for other in variants:  # independent masks agree on about p^2 + (1 - p)^2 of the entries
        assert abs(((other > 0) == (base > 0)).double().mean().item() - 0.58) < 0.02
    # a row's mask is its position's, wherever its share of the batch starts
    np.testing.assert_array_equal(dropout_mask(seed, p, 2, 3, 0, 50, 250, row_start=100), base[100:150])
    assert (dropout_mask(seed, 0.0, 2, 3, 0, 40, 20) == 1).all()
    assert model_key((1, 2)) != model_key((1, 2, 0))


# ------------------------------------------------------------ kernel variants
#: Trains cheap-activation dropout models of two and three hidden layers on
#: the native kernel (the given compiler defines added) and saves every
#: weight: the masks drawn in the product's epilogue or in a pass after it.
_VARIANT_CHILD = r"""
import sys
import numpy as np
from skpmlp._kernels import _build
_build._FLAGS = _build._FLAGS + sys.argv[2:]
from skpmlp._engine import OptimizerSettings, PopulationSpec, TrainConfig, train_population
acts = ["relu", "leaky_relu", "identity", "hardshrink"]
models = [(arch, act) for arch in [(6, 5), (9, 7, 4)] for act in acts]
spec = PopulationSpec([m[0] for m in models], [m[1] for m in models], np.full(len(models), 2e-2),
                      np.full(len(models), 1e-3), [(3, i) for i in range(len(models))],
                      [OptimizerSettings("adam", dropout=0.3)] * len(models))
rng = np.random.default_rng(4)
X, y = rng.normal(size=(90, 5)), rng.integers(0, 3, 90)
weights = {}
for dtype in ("float32", "float64"):
    cfg = TrainConfig(task="classification", n_outputs=3, batch_size=40, dtype=dtype, max_iter=3,
                      n_iter_no_change=1000, shuffle_seed=2, backend="native")
    result = train_population(spec, cfg, X, y, [(np.arange(90), None)])
    for i, model in enumerate(result.coefs[0]):
        weights[f"{dtype}_{i}"] = np.concatenate([np.ravel(w) for w in model + result.intercepts[0][i]])
np.savez(sys.argv[1], **weights)
"""


def _variant_weights(path, *defines):
    env = dict(os.environ, SKPMLP_KERNEL_TARGET="native",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                           os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", _VARIANT_CHILD, str(path), *defines], check=True, env=env,
                   timeout=900)
    with np.load(path) as saved:
        return dict(saved)


@pytest.mark.skipif(not kernel_available(), reason="no native kernel")
def test_dropout_in_the_epilogue_equals_dropout_in_a_pass(tmp_path):
    """A cheap activation's masks are drawn in the product's epilogue with
    32 vector registers and in a pass after it with 16
    (SKP_DROPOUT_EPILOGUE): both give the same weights, bit for bit, on
    any CPU (each build forced one way)."""
    epilogue = _variant_weights(tmp_path / "epilogue.npz", "-DSKP_DROPOUT_EPILOGUE=1")
    passes = _variant_weights(tmp_path / "pass.npz", "-DSKP_DROPOUT_EPILOGUE=0")
    assert epilogue.keys() == passes.keys()
    for key in epilogue:
        np.testing.assert_array_equal(epilogue[key], passes[key], err_msg=key)
        assert np.isfinite(epilogue[key]).all()


# ------------------------------------------------------------------ backends
def test_dropout_runs_train_on_the_native_kernel(monkeypatch):
    spec, cfg = _spec(), _config(backend="auto")
    assert native_supported(cfg, spec) is None
    assert _choice.choose_trainer(spec, cfg) is NativeTrainer
    assert _choice.choose_trainer(spec, dataclasses.replace(cfg, backend="native")) is NativeTrainer


class _OneRank:
    """A data-parallel run of one rank: nothing to sum."""

    def all_reduce(self, tensor):
        pass


def test_a_data_parallel_epoch_with_dropout_trains_on_torch():
    """The kernel's masks hash a row's lane in its own call, not its
    position in the global batch: a data-parallel run's epochs with
    dropout run on torch's ops, the same as the torch trainer's bit for
    bit, and say so; without dropout it steps on the kernel."""
    X, y, _ = make_data("classification", n=100)
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    plan = BatchPlanner([np.arange(len(X))], 32, 7, None, dtype=torch.float64,
                        device="cpu").next_epoch(epoch=2)
    reference = PopulationTrainer(_spec(), _config(), 6)
    reference.data_parallel = _OneRank()
    reference.run_epoch(X_t, y_t, plan)
    native = NativeTrainer(_spec(), _config(backend="native"), 6)
    native.data_parallel = _OneRank()
    assert DATA_PARALLEL_DROPOUT in native.describe()
    native.run_epoch(X_t, y_t, plan)
    assert torch.equal(native.net.flat, reference.net.flat)
    assert torch.equal(native.optimizer.step_counts, reference.optimizer.step_counts)
    # the same epoch alone: the kernel's, to rounding
    alone = NativeTrainer(_spec(), _config(backend="native"), 6)
    alone.run_epoch(X_t, y_t, plan)
    torch.testing.assert_close(alone.net.flat, reference.net.flat, rtol=0, atol=1e-12)
    plain = NativeTrainer(_spec(settings=[OptimizerSettings("adam")] * len(MODELS)),
                          _config(backend="native"), 6)
    plain.data_parallel = _OneRank()
    assert plain.describe().startswith("native kernel")


def test_the_memory_plan_counts_the_masks():
    from skpmlp._engine._memory import model_bytes

    plain = _spec(settings=[OptimizerSettings("adam")] * len(MODELS))
    with_masks, without = (model_bytes(s, _config(), 6, n_folds=1, n_eval=0) for s in (_spec(), plain))
    dropping = np.array([s.dropout > 0 for s in SETTINGS])
    assert (with_masks[dropping] > without[dropping]).all()
    np.testing.assert_array_equal(with_masks[~dropping], without[~dropping])


@pytest.mark.parametrize("backend", ["torch", "native"])
def test_the_validation_loss_uses_every_unit(backend):
    """``monitor="loss"`` scores the predictions: no unit is dropped there."""
    X, y, _ = make_data("classification", n=100)
    result = train_population(_spec(), _config(backend=backend, monitor="loss"), X, y,
                              [(np.arange(70), np.arange(70, 100))])
    for i, model in enumerate(MODELS):
        outputs = torch.from_numpy(_outputs(result, i, model[1], X[70:]))
        plain = torch.nn.functional.cross_entropy(outputs, torch.from_numpy(y[70:])).item()
        np.testing.assert_allclose(result.validation_scores[i, 0, -1], -plain, rtol=1e-12)
