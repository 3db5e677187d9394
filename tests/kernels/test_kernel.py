"""The native per-model kernel against the torch engine, in float64, at
every vector width the CPU executes.

The torch path (batched matmuls, autograd, torch's fused optimizers) is the
reference: on the same population, folds, batches and sample weights, the
kernel must give the same weights, losses and scores to rounding.
"""

import dataclasses

import numpy as np
import pytest
import torch
from kernel_widths import KERNEL_TARGETS

from skpmlp import _kernels
from skpmlp._engine import (
    ACTIVATIONS,
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    train_population,
)
from skpmlp._engine._backends import _native
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._minibatch._batches import BatchPlanner
from skpmlp._engine._predict import _kernel_outputs

pytestmark = pytest.mark.skipif(not _kernels.kernel_available(), reason="no C++ compiler for the native kernel")


@pytest.fixture(params=KERNEL_TARGETS, autouse=True)
def kernel_target(request, monkeypatch):
    """Every test here runs on the kernel built for each width the CPU
    executes (tests/kernel_widths.py)."""
    monkeypatch.setenv("SKPMLP_KERNEL_TARGET", request.param)
    if not _kernels.kernel_available():
        pytest.fail(f"the kernel built for {request.param} is unavailable: {_kernels.build_info()['error']}")
    return request.param

ARCHS = [(5,), (9, 3), (4, 6, 5)]


def population(seed=0):
    # every activation at every depth; learning rates and penalties vary
    models = [
        (arch, act, (1e-2, 3e-3)[i % 2], (0.0, 1e-2)[i // 2 % 2])
        for i, (arch, act) in enumerate((a, act) for a in ARCHS for act in sorted(ACTIVATIONS))
    ]
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models],
        activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]),
        alphas=np.array([m[3] for m in models]),
        init_seeds=[(seed, i) for i in range(len(models))],
    )


def data(task, n=150, n_features=7, seed=1):
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


def assert_same_models(a, b, atol=1e-12):
    for k in range(len(a.coefs)):
        for model_a, model_b in zip(a.coefs[k] + a.intercepts[k], b.coefs[k] + b.intercepts[k]):
            for x, y in zip(model_a, model_b):
                np.testing.assert_allclose(x, y, rtol=0, atol=atol)


SOLVERS = [
    dict(solver="adam"),
    dict(solver="sgd", momentum=0.9, nesterovs_momentum=True),
    dict(solver="sgd", momentum=0.9, nesterovs_momentum=False),
    dict(solver="sgd", momentum=0.0),
]


@pytest.mark.parametrize("task, n_outputs", [("classification", 3), ("regression", 2), ("multilabel", 3)])
@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: "-".join(map(str, s.values())))
def test_kernel_equals_torch_engine(task, n_outputs, solver):
    """Every activation, depths 1-3, two folds, sample weights, a short last
    batch: the same weights and loss curves as the torch engine."""
    X, y, sw = data(task)
    cfg = TrainConfig(task=task, n_outputs=n_outputs, batch_size=32, max_iter=3, dtype="float64",
                      n_iter_no_change=1000, **solver)
    spec, folds = population(), two_folds(len(X))
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds, sample_weight=sw)
    native = train_population(spec, dataclasses.replace(cfg, backend="native"), X, y, folds, sample_weight=sw)
    assert_same_models(reference, native)
    np.testing.assert_allclose(native.loss_curves, reference.loss_curves, rtol=1e-12)
    np.testing.assert_allclose(native.validation_scores, reference.validation_scores, rtol=1e-12)


@pytest.mark.parametrize("task, n_features, n_outputs", [
    ("classification", 4, 3), ("regression", 1, 1), ("multilabel", 2, 2)])
def test_kernel_equals_torch_engine_on_narrow_and_uneven_layers(task, n_features, n_outputs):
    """Layers of 1 to 33 units on 1 to 4 inputs (every register tile of the
    matmul and the weight gradient, whole and cut, and the sums of a tile
    with more and fewer values than lanes), each activation kind (the
    epilogues in the matmul's registers, the derivative recomputed from
    f(z) or stored): the torch engine's weights and loss curves."""
    archs = [(1,), (2,), (16,), (33,), (17, 2), (3, 9, 1)]
    acts = sorted(ACTIVATIONS)
    models = [(arch, act) for arch in archs for act in acts]
    spec = PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.full(len(models), 1e-2), alphas=np.full(len(models), 1e-3),
        init_seeds=[(3, i) for i in range(len(models))])
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, n_features))
    y = {"classification": lambda: rng.integers(0, 3, 90),
         "regression": lambda: rng.normal(size=90),
         "multilabel": lambda: rng.integers(0, 2, (90, 2)).astype(float)}[task]()
    cfg = TrainConfig(task=task, n_outputs=n_outputs, batch_size=37, max_iter=3, dtype="float64",
                      n_iter_no_change=1000)
    folds = two_folds(len(X))
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds)
    native = train_population(spec, dataclasses.replace(cfg, backend="native"), X, y, folds)
    assert_same_models(reference, native)
    np.testing.assert_allclose(native.loss_curves, reference.loss_curves, rtol=1e-12)


@pytest.mark.parametrize("task, n_outputs", [("classification", 3), ("regression", 2), ("multilabel", 3)])
def test_kernel_draws_the_torch_paths_dropout_masks(task, n_outputs):
    """Every activation (masked in the product's epilogue or the activation
    pass, f'(z) stored before the masking, ReLU's and hardshrink's gate and
    selecting backward), depths
    1-3, rates 0 to 0.5, two folds, sample weights, a short last batch: the
    torch engine's weights and loss curves; a model of rate 0 trains bit
    for bit as in a run without dropout."""
    X, y, sw = data(task)
    spec = population()
    rates = [(0.0, 0.1, 0.3, 0.5)[i % 4] for i in range(spec.n_models)]
    dropped = dataclasses.replace(spec, optimizers=[OptimizerSettings("adam", dropout=p) for p in rates])
    cfg = TrainConfig(task=task, n_outputs=n_outputs, batch_size=32, max_iter=3, dtype="float64",
                      n_iter_no_change=1000)
    folds = two_folds(len(X))
    reference = train_population(dropped, dataclasses.replace(cfg, backend="torch"), X, y, folds, sample_weight=sw)
    native = train_population(dropped, dataclasses.replace(cfg, backend="native"), X, y, folds, sample_weight=sw)
    assert_same_models(reference, native)
    np.testing.assert_allclose(native.loss_curves, reference.loss_curves, rtol=1e-12)
    plain = train_population(spec, dataclasses.replace(cfg, backend="native"), X, y, folds, sample_weight=sw)
    for k in range(2):
        for i, p in enumerate(rates):
            same = all(np.array_equal(a, b) for a, b in zip(native.coefs[k][i], plain.coefs[k][i]))
            assert same == (p == 0), (k, i, p)


def test_kernel_keeps_the_invariants_of_stopping_halving_and_compaction():
    """Early stopping, successive halving and compaction around the kernel's
    epochs give what they give around the torch path."""
    X, y, sw = data("classification", n=200)
    cfg = TrainConfig(task="classification", n_outputs=3, batch_size=40, max_iter=30, dtype="float64",
                      early_stopping=True, n_iter_no_change=3, pruning="halving", min_iter=3,
                      compact_fraction=0.1)
    spec, folds = population(), two_folds(len(X))
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds)
    native = train_population(spec, dataclasses.replace(cfg, backend="native"), X, y, folds)
    np.testing.assert_array_equal(native.n_iter, reference.n_iter)
    np.testing.assert_array_equal(native.pruned, reference.pruned)
    assert native.pruned.any() and native.converged.any()
    assert_same_models(reference, native, atol=1e-10)


def test_the_kernel_keeps_frozen_slots_where_they_are(monkeypatch):
    """Compacting saves a torch step's work, not the kernel's (it trains the
    unfrozen slots only): the native trainer never compacts outside a
    data-parallel run, the torch trainer does, and both give the same models."""
    X, y, _ = data("classification", n=200)
    cfg = TrainConfig(task="classification", n_outputs=3, batch_size=40, max_iter=30, dtype="float64",
                      early_stopping=True, n_iter_no_change=2, compact_fraction=0.1)
    compactions = {"torch": 0, "native": 0}

    def counting(compact):
        def wrapper(trainer):
            compactions[trainer.backend] += 1
            return compact(trainer)
        return wrapper

    monkeypatch.setattr(PopulationTrainer, "compact", counting(PopulationTrainer.compact))
    spec, folds = population(), two_folds(len(X))
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds)
    native = train_population(spec, dataclasses.replace(cfg, backend="native"), X, y, folds)
    assert compactions == {"torch": compactions["torch"], "native": 0} and compactions["torch"] > 0
    np.testing.assert_array_equal(native.n_iter, reference.n_iter)
    assert_same_models(reference, native, atol=1e-10)
    trainer = _native.NativeTrainer(spec, cfg, X.shape[1], 2)
    assert not trainer.compaction_pays
    trainer.data_parallel = object()  # a run whose ranks sum every slot's gradients
    assert trainer.compaction_pays


@pytest.mark.parametrize("solver, atol", [("sgd", 1e-5), ("adam", 5e-3)])
def test_float32_kernel_stays_close_to_torch(solver, atol):
    """float32 rounds differently (its exp, tanh and erf are the kernel's
    own); SGD stays within rounding, Adam's normalised steps turn rounding
    of tiny gradients into learning-rate-sized moves, so it gets a looser
    bound, and the losses agree to 1e-3."""
    X, y, _ = data("classification")
    cfg = TrainConfig(task="classification", n_outputs=3, batch_size=32, max_iter=3, n_iter_no_change=1000,
                      solver=solver)
    spec, folds = population(), [(np.arange(len(X)), None)]
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds)
    native = train_population(spec, dataclasses.replace(cfg, backend="native"), X, y, folds)
    assert_same_models(reference, native, atol=atol)
    np.testing.assert_allclose(native.loss_curves, reference.loss_curves, rtol=1e-3)


def test_float32_adam_updates_a_model_alone_as_in_a_population():
    """Where AVX-512 runs float32, Adam's update divides by no value (the
    reciprocal estimate) and computes a run's tail in a vector of its own:
    a model's weights must not depend on where its values lie in the
    population's padded layers (its rows a run each) or alone (one run),
    bit for bit, with Adam, AMSGrad and AdamW, nor stray from torch's
    float32 Adam by more than rounding turned into steps."""
    X, y, sw = data("classification", n=120)
    # the network pads (4,) to (5,)'s width and (3, 6) to (3, 17)'s: alone,
    # their first and second weights are one run of a whole vector and a
    # tail; in the population, rows shorter than a vector
    archs = [(5,), (19,), (3, 17), (40,), (1,), (4,), (16,), (3, 6)]
    optimizers = [OptimizerSettings("adam"), OptimizerSettings("adam", amsgrad=True), OptimizerSettings("adamw"),
                  OptimizerSettings("adam", beta_2=0.9), OptimizerSettings("adamw", amsgrad=True)]
    n = len(archs)
    spec = PopulationSpec(
        hidden_layer_sizes=archs, activations=[("tanh", "relu", "logistic")[i % 3] for i in range(n)],
        learning_rates=np.array([1e-2, 3e-2] * (n // 2)), alphas=np.array([1e-3, 0.0, 1e-2, 1e-4] * (n // 4)),
        init_seeds=[(0, i) for i in range(n)], optimizers=[optimizers[i % len(optimizers)] for i in range(n)],
    )
    cfg = TrainConfig(task="classification", n_outputs=3, batch_size=32, max_iter=8, n_iter_no_change=1000,
                      dtype="float32", backend="native")
    folds = [(np.arange(len(X)), None)]
    together = train_population(spec, cfg, X, y, folds, sample_weight=sw)
    for i in range(len(archs)):
        alone = train_population(spec.subset([i]), cfg, X, y, folds, sample_weight=sw)
        for mine, theirs in zip(alone.coefs[0][0] + alone.intercepts[0][0],
                                together.coefs[0][i] + together.intercepts[0][i]):
            np.testing.assert_array_equal(mine, theirs)
    reference = train_population(spec, dataclasses.replace(cfg, backend="torch"), X, y, folds, sample_weight=sw)
    assert_same_models(reference, together, atol=5e-3)


# Layers of 16 units or more on both sides, whole vectors wide and not:
# on AVX-512 in float32 their weight gradients run as a matmul over the
# rows of the transposed deltas (outer_rows), elsewhere as lane sums.
WIDE = PopulationSpec(
    hidden_layer_sizes=[(16,), (32, 16), (20, 17), (48,)], activations=["relu", "tanh", "logistic", "gelu"],
    learning_rates=np.full(4, 1e-2), alphas=np.full(4, 1e-3), init_seeds=[(0, i) for i in range(4)],
)


def _one_step(trainer_class, dtype="float64", spec=None, n_features=7):
    X, y, sw = data("regression", n=64, n_features=n_features)
    spec = population() if spec is None else spec
    cfg = TrainConfig(task="regression", n_outputs=2, batch_size=64, dtype=dtype)
    trainer = trainer_class(spec, cfg, X.shape[1], 1)
    torch_dtype = getattr(torch, dtype)
    X_t, y_t = torch.from_numpy(X).to(torch_dtype), torch.from_numpy(y).to(torch_dtype)
    plan = BatchPlanner([np.arange(len(X))], 64, 0, sw, dtype=torch_dtype, device="cpu").next_epoch()
    return trainer, X_t, y_t, plan


@pytest.mark.parametrize("dtype, spec, n_features, atol", [
    ("float64", None, 7, 1e-13),
    ("float32", WIDE, 20, 2e-6),  # torch's float32 sums round otherwise
], ids=["float64", "float32-wide"])
def test_gradient_and_update_modes_equal_autograd_and_one_step(dtype, spec, n_features, atol):
    """Mode "gradients" writes autograd's gradients; "gradients" then
    "update" equals one full step (the parts data-parallel training uses)."""
    torch_trainer, X, y, plan = _one_step(PopulationTrainer, dtype, spec, n_features)
    net = torch_trainer.net
    net.grad.zero_()
    outputs = [net.group_forward(g, X[plan.rows[0, 0]]) for g in range(len(net.groups))]
    losses = [
        torch_trainer.loss_fn(out, y[plan.rows[0, 0]].unsqueeze(0), plan.weights[0]).sum() for out in outputs
    ]
    sum(losses).backward()

    native_class = _native.NativeTrainer
    native, _, _, _ = _one_step(native_class, dtype, spec, n_features)
    batches = _native.epoch_batches(X, y, plan, "regression")
    batches.update(counts=plan.counts.numpy(), weight_sums=plan.weight_sums, stepping=plan.stepping,
                   step0=np.zeros(1))
    buffers = {
        "params": native.net.flat.detach(), "grads": torch.zeros_like(native.net.flat),
        "state1": native.optimizer.state[0], "state2": native.optimizer.state[1],
        "loss_sums": native.loss_sums,
    }
    run = lambda mode: _kernels.run_models(  # noqa: E731
        mode, native._meta, native._hyper, batches, buffers, n_outputs=2, loss="squared"
    )
    run("gradients")
    # padded units hold no gradient in either path
    assert np.abs(net.grad.numpy()).max() > 100 * atol
    np.testing.assert_allclose(buffers["grads"].numpy(), net.grad.numpy(), rtol=0, atol=atol)

    run("update")
    stepped, _, _, _ = _one_step(native_class, dtype, spec, n_features)
    stepped.run_epoch(X, y, plan)
    np.testing.assert_allclose(native.net.flat.detach().numpy(), stepped.net.flat.detach().numpy(), atol=1e-15)


@pytest.mark.parametrize("dtype, tiny", [("float32", 1e-39), ("float64", 1e-310)])
def test_float32_runs_flush_subnormals_and_give_the_caller_its_mode_back(dtype, tiny):
    """float32 training flushes subnormal values to zero (a long fit decays
    silenced weights through them, where x86 is a hundred times slower): a
    model with learning rate 0, whose step leaves every parameter as it is,
    gives back 0 for each subnormal one. float64 keeps IEEE subnormals, and
    so do predictions (test_float32_activations_stay_within_a_few_ulp). The
    calling thread, which trains models too, gets its own mode back."""
    X, y, sw = data("classification", n=64)
    spec = PopulationSpec(hidden_layer_sizes=[(6,), (4, 3)], activations=["relu", "tanh"],
                          learning_rates=np.zeros(2), alphas=np.zeros(2), init_seeds=[(0, 0), (0, 1)])
    cfg = TrainConfig(task="classification", n_outputs=3, batch_size=64, dtype=dtype, solver="sgd")
    trainer = _native.NativeTrainer(spec, cfg, X.shape[1], 1)
    as_dtype = getattr(torch, dtype)
    plan = BatchPlanner([np.arange(len(X))], 64, 0, sw, dtype=as_dtype, device="cpu").next_epoch()
    with torch.no_grad():
        trainer.net.flat[::2] = tiny  # every other parameter subnormal
    before = trainer.net.flat.detach().clone()
    trainer.run_epoch(torch.from_numpy(X).to(as_dtype), torch.from_numpy(y), plan)
    after = trainer.net.flat.detach()
    subnormal = before == tiny
    if dtype == "float32":
        assert (after[subnormal] == 0).all()
    else:
        assert (after[subnormal] == tiny).all()
    assert torch.equal(after[~subnormal], before[~subnormal])
    # the caller's arithmetic makes subnormals again (numpy and torch run on this thread)
    assert np.float32(1e-38) / np.float32(16) != 0
    assert (torch.tensor([1e-38], dtype=torch.float32) / 16).item() != 0


@pytest.mark.parametrize("task, n_outputs", [("classification", 3), ("multilabel", 3)])
def test_forward_equals_the_torch_networks_outputs(task, n_outputs):
    """The kernel's forward (validation scoring's) gives every slot's
    outputs as the fused torch network does, frozen slots included, for a
    row count that is no multiple of the lanes or the block."""
    X, y, _ = data(task, n=301)
    cfg = TrainConfig(task=task, n_outputs=n_outputs, dtype="float64")
    trainer = _native.NativeTrainer(population(), cfg, X.shape[1], 2)
    trainer.freeze(np.arange(len(trainer.frozen)) % 3 == 0)
    X_t = torch.from_numpy(X)
    np.testing.assert_allclose(trainer.outputs(X_t).numpy(), trainer.net.outputs(X_t).numpy(), rtol=1e-13,
                               atol=1e-13)


@pytest.mark.parametrize("activation", ["tanh", "logistic", "gelu", "relu"])
def test_float32_forward_of_few_inputs_equals_the_general_tiles(activation):
    """A float32 network of one hidden layer and at most 8 inputs runs its
    forward in one pass where its activation is cheap (ReLU: applied in the
    registers), else by tile_narrow for its 4 inputs; its outputs are bit for
    bit those of the general tiles, which the same network with 8 more
    inputs of zero weight and value takes (their products add exact
    zeros): every path sums in tile_mm's order."""
    rng = np.random.default_rng(0)
    widths = (1, 5, 16, 33)
    X = rng.normal(size=(37, 4))  # 37 rows: the last vector of lanes is short
    coefs = [[rng.normal(size=(4, h)), rng.normal(size=(h, 3))] for h in widths]
    intercepts = [[rng.normal(size=h), rng.normal(size=3)] for h in widths]
    padded = [[np.vstack([W0, np.zeros((8, W0.shape[1]))]), W1] for W0, W1 in coefs]
    cfg = TrainConfig(task="classification", n_outputs=3, dtype="float32")
    activations = [activation] * len(widths)
    few_inputs = _kernel_outputs(coefs, intercepts, activations, cfg, X)
    general = _kernel_outputs(padded, intercepts, activations, cfg, np.hstack([X, np.zeros((len(X), 8))]))
    assert torch.isfinite(few_inputs).all()
    assert torch.equal(few_inputs, general)


@pytest.mark.parametrize("activation, reference, ulps", [
    ("tanh", np.tanh, 8),  # a rational approximation in float32: 6 ulp measured
    ("logistic", lambda z: 1 / (1 + np.exp(-z)), 4),
])
def test_float32_activations_stay_within_a_few_ulp(activation, reference, ulps):
    """The kernel's own float32 transcendentals, through its forward: one
    hidden unit of weight 1 and an output of weight 1 give f(x) itself."""
    spec = PopulationSpec(hidden_layer_sizes=[(1,)], activations=[activation], learning_rates=np.array([1e-3]),
                          alphas=np.array([0.0]), init_seeds=[(0, 0)])
    cfg = TrainConfig(task="regression", n_outputs=1, dtype="float32")
    trainer = _native.NativeTrainer(spec, cfg, 1, 1)
    w0, b0, w1, b1 = trainer.net.layer_views(trainer.net.flat.detach())[0]
    w0.fill_(1.0), b0.zero_(), w1.fill_(1.0), b1.zero_()
    x = np.concatenate([np.linspace(-12, 12, 20001), [0.0, 1e-30, -1e-6, 20.0, -88.0]]).astype(np.float32)
    got = trainer.outputs(torch.from_numpy(x[:, None]))[0, :, 0].numpy()
    want = reference(x.astype(np.float64))
    ulp = np.abs(got - want) / np.spacing(np.maximum(np.abs(want), np.finfo(np.float32).tiny).astype(np.float32))
    assert 0 < ulp.max() <= ulps, (x[ulp.argmax()], got[ulp.argmax()], want[ulp.argmax()])
    if activation == "tanh":
        assert (np.abs(got) <= 1).all() and np.signbit(got[x == 0]).sum() == 0
