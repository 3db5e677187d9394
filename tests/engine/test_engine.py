"""The fused engine: the independence invariant, in float64.

A model trained inside a population must equal the same model trained alone,
and a plain ``torch.nn.Sequential`` trained from the same initial weights on
the same batches with torch's own optimizer.
"""

import dataclasses

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from optimizer_checks import sequential

from skpmlp._engine import (
    ACTIVATIONS,
    PopulationSpec,
    TrainConfig,
    _predict,
    mlp_forward,
    population_outputs,
    train_population,
)
from skpmlp._engine._init import initial_weights
from skpmlp._engine._spec import OptimizerSettings

TORCH_ACTIVATIONS = {
    "identity": torch.nn.Identity,
    "logistic": torch.nn.Sigmoid,
    "tanh": torch.nn.Tanh,
    "relu": torch.nn.ReLU,
    "elu": torch.nn.ELU,
    "selu": torch.nn.SELU,
    "gelu": torch.nn.GELU,
    "leaky_relu": torch.nn.LeakyReLU,
    "hardshrink": torch.nn.Hardshrink,
    "mish": torch.nn.Mish,
}


def make_data(task, n=120, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    if task == "classification":
        y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int) + (X[:, 2] > 1)
        return X, y, 3
    if task == "multilabel":
        y = np.c_[X[:, 0] > 0, X[:, 1] + X[:, 2] > 0.5, X[:, 3] * X[:, 4] > 0].astype(float)
        return X, y, 3
    y = np.c_[X[:, 0] - 2 * X[:, 1], np.sin(X[:, 2])]
    return X, y, 2


def make_spec(models, seed=0):
    """models: list of (hidden_layer_sizes, activation, lr, alpha, repeat)."""
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models],
        activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models], dtype=float),
        alphas=np.array([m[3] for m in models], dtype=float),
        init_seeds=[(seed, m[4], len(m[0]), *m[0]) for m in models],
    )


POPULATION = [
    ((3,), "relu", 1e-2, 1e-4, 0),
    ((7,), "tanh", 3e-2, 1e-3, 0),
    ((5,), "logistic", 1e-2, 0.0, 0),
    ((5,), "logistic", 1e-2, 0.0, 1),
    ((16,), "mish", 5e-3, 1e-2, 0),
    ((6, 4), "elu", 1e-2, 1e-4, 0),
    ((6, 9), "gelu", 2e-2, 1e-4, 0),
    ((4, 4, 3), "selu", 1e-2, 1e-4, 0),
    ((12,), "leaky_relu", 1e-2, 1e-4, 0),
    ((10,), "hardshrink", 1e-2, 1e-4, 0),
    ((9,), "identity", 1e-2, 1e-4, 0),
]


def config(task, n_outputs, solver="adam", **kw):
    if "backend" in kw:  # "native:x86-64-v2" trains on the native kernel (built for that target)
        kw["backend"] = backend_name(kw["backend"])
    kw.setdefault("max_iter", 8)
    kw.setdefault("n_iter_no_change", 1000)
    return TrainConfig(
        task=task, n_outputs=n_outputs, solver=solver, batch_size=32, dtype="float64",
        shuffle_seed=7, **kw
    )


def train(spec, cfg, X, y, eval_rows=None, n_train=None):
    """Train on rows [0, n_train) (all by default); return fold 0's models."""
    n_train = len(X) if n_train is None else n_train
    result = train_population(spec, cfg, X, y, [(np.arange(n_train), eval_rows)])
    result.coefs, result.intercepts = result.coefs[0], result.intercepts[0]
    for name in ("loss_curves", "validation_scores", "n_iter", "converged", "diverged"):
        value = getattr(result, name)
        if value is not None:
            setattr(result, name, value[:, 0])
    return result


def plain_network(model, n_features, n_outputs):
    """Model ``(arch, activation, lr, alpha, repeat)`` as a float64
    nn.Sequential with the initial weights the engine gives it."""
    arch, act, _, _, repeat = model
    coefs, intercepts = initial_weights(arch, act, (0, repeat, len(arch), *arch), n_features, n_outputs)
    return sequential(coefs, intercepts, TORCH_ACTIVATIONS[act])


def torch_reference(model, X, y, task, n_outputs, cfg, settings=None):
    """Train one model as a plain nn.Sequential with torch.optim (its own
    ``settings``, else ``cfg``'s optimizer)."""
    arch, act, lr, alpha, repeat = model
    settings = settings or cfg.optimizer_settings()
    net = plain_network(model, X.shape[1], n_outputs)
    if settings.solver == "adam":
        opt = torch.optim.Adam(
            net.parameters(), lr=lr, betas=(settings.beta_1, settings.beta_2), eps=settings.epsilon
        )
    else:
        opt = torch.optim.SGD(
            net.parameters(), lr=lr, momentum=settings.momentum,
            nesterov=settings.nesterovs_momentum and settings.momentum > 0,
        )
    X_t = torch.from_numpy(X)
    y_t = torch.from_numpy(y) if task == "classification" else torch.from_numpy(y.reshape(len(y), -1))
    gen = torch.Generator().manual_seed(cfg.shuffle_seed)
    for _ in range(cfg.max_iter):
        order = torch.randperm(len(X), generator=gen)
        for begin in range(0, len(X), cfg.batch_size):
            idx = order[begin : begin + cfg.batch_size]
            out = net(X_t[idx])
            if task == "classification":
                loss = torch.nn.functional.cross_entropy(out, y_t[idx])
            elif task == "multilabel":
                # one sigmoid log-loss per label, summed over labels (scikit-learn's MLP)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    out, y_t[idx], reduction="sum") / len(idx)
            else:
                loss = 0.5 * ((out - y_t[idx]) ** 2).mean()
            l2 = sum((m.weight**2).sum() for m in net if isinstance(m, torch.nn.Linear))
            loss = loss + 0.5 * alpha * l2 / len(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        return net(X_t).numpy()


# the torch path is the reference and the GPU path; the native kernel is the
# CPU default: both must keep the invariant, the kernel at every width
BACKENDS = ["torch", *NATIVE_BACKENDS]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("task", ["classification", "regression", "multilabel"])
@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_population_equals_alone_equals_plain_torch(task, solver, backend):
    X, y, n_outputs = make_data(task)
    cfg = config(task, n_outputs, solver, backend=backend)
    population = train(make_spec(POPULATION), cfg, X, y)
    for i, model in enumerate(POPULATION):
        alone = train(make_spec([model]), cfg, X, y)
        act = model[1]
        in_population = mlp_forward(population.coefs[i], population.intercepts[i], act, X)
        trained_alone = mlp_forward(alone.coefs[0], alone.intercepts[0], act, X)
        reference = torch_reference(model, X, y, task, n_outputs, cfg)
        np.testing.assert_allclose(in_population, trained_alone, rtol=0, atol=1e-6)
        np.testing.assert_allclose(in_population, reference, rtol=0, atol=1e-6)
        np.testing.assert_allclose(population.loss_curves[i], alone.loss_curves[0], rtol=1e-9)


MIXED_OPTIMIZERS = [
    OptimizerSettings("adam"),
    OptimizerSettings("adam", beta_1=0.8, beta_2=0.99, epsilon=1e-6),
    OptimizerSettings("sgd", momentum=0.9, nesterovs_momentum=True),
    OptimizerSettings("sgd", momentum=0.5, nesterovs_momentum=False),
    OptimizerSettings("sgd", momentum=0.0),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_models_with_their_own_optimizers_equal_each_alone_and_plain_torch(backend):
    """Adam and SGD models with their own coefficients in one fused run: each
    equals itself trained alone and a plain torch.optim model."""
    X, y, n_outputs = make_data("classification")
    models = [POPULATION[k % 3] for k in range(len(MIXED_OPTIMIZERS))]
    models = [(arch, act, lr, alpha, k) for k, (arch, act, lr, alpha, _) in enumerate(models)]
    spec = make_spec(models)
    spec = PopulationSpec(**{**spec.__dict__, "optimizers": MIXED_OPTIMIZERS})
    cfg = config("classification", n_outputs, backend=backend)
    population = train(spec, cfg, X, y)
    for i, (model, settings) in enumerate(zip(models, MIXED_OPTIMIZERS)):
        alone = train(spec.subset([i]), cfg, X, y)
        act = model[1]
        in_population = mlp_forward(population.coefs[i], population.intercepts[i], act, X)
        np.testing.assert_allclose(
            in_population, mlp_forward(alone.coefs[0], alone.intercepts[0], act, X), rtol=0, atol=1e-9
        )
        reference = torch_reference(model, X, y, "classification", n_outputs, cfg, settings)
        np.testing.assert_allclose(in_population, reference, rtol=0, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_every_activation_matches_torch_module(activation, backend):
    X, y, n_outputs = make_data("classification", n=64)
    model = ((5,), activation, 1e-2, 1e-4, 0)
    cfg = config("classification", n_outputs, max_iter=3, backend=backend)
    result = train(make_spec([model, ((8,), "relu", 1e-2, 1e-4, 0)]), cfg, X, y)
    ours = mlp_forward(result.coefs[0], result.intercepts[0], activation, X)
    np.testing.assert_allclose(ours, torch_reference(model, X, y, "classification", n_outputs, cfg), atol=1e-6)


def test_padding_never_changes_a_model():
    """Grouping with or without padding gives the same models."""
    X, y, n_outputs = make_data("classification")
    spec = make_spec(POPULATION)
    padded = train(spec, config("classification", n_outputs, max_padding=10.0), X, y)
    exact = train(spec, config("classification", n_outputs, max_padding=0.0), X, y)
    for i, model in enumerate(POPULATION):
        a = mlp_forward(padded.coefs[i], padded.intercepts[i], model[1], X)
        b = mlp_forward(exact.coefs[i], exact.intercepts[i], model[1], X)
        np.testing.assert_allclose(a, b, atol=1e-9)
        assert [c.shape for c in padded.coefs[i]] == [c.shape for c in exact.coefs[i]]


def test_stopping_rule_is_per_model_and_freezes():
    """A model that stops early is unchanged by epochs others keep training."""
    X, y, n_outputs = make_data("classification")
    models = [((8,), "relu", 1e-2, 1e-4, 0), ((8,), "tanh", 1e-6, 1e-4, 0)]
    cfg = config("classification", n_outputs, max_iter=40, tol=1e-3, n_iter_no_change=2)
    both = train(make_spec(models), cfg, X, y)
    assert both.n_iter[1] < both.n_iter[0]
    assert both.converged[1]
    assert np.isnan(both.loss_curves[1, both.n_iter[1]:]).all()
    alone = train(make_spec(models[1:]), cfg, X, y)
    assert alone.n_iter[0] == both.n_iter[1]
    np.testing.assert_allclose(
        mlp_forward(both.coefs[1], both.intercepts[1], "tanh", X),
        mlp_forward(alone.coefs[0], alone.intercepts[0], "tanh", X),
        atol=1e-9,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_diverging_model_does_not_touch_others(backend):
    X, y, n_outputs = make_data("regression")
    good = [((8,), "relu", 1e-3, 1e-4, 0), ((4, 4), "tanh", 1e-3, 1e-4, 0)]
    bad = [((8,), "identity", 1e6, 0.0, 0)]
    cfg = config("regression", n_outputs, solver="sgd", max_iter=5, backend=backend)
    mixed = train(make_spec(good + bad), cfg, X, y)
    clean = train(make_spec(good), cfg, X, y)
    assert mixed.diverged.tolist() == [False, False, True]
    assert not clean.diverged.any()
    assert mixed.n_iter[2] < cfg.max_iter
    for i in range(len(good)):
        for layer in range(len(good[i][0]) + 1):
            np.testing.assert_array_equal(mixed.coefs[i][layer], clean.coefs[i][layer])
        np.testing.assert_array_equal(mixed.loss_curves[i], clean.loss_curves[i])


def test_early_stopping_keeps_best_weights():
    X, y, n_outputs = make_data("classification", n=200)
    models = [((8,), "relu", 5e-2, 1e-4, 0), ((16,), "tanh", 1e-2, 1e-4, 0)]
    cfg = config("classification", n_outputs, max_iter=60, early_stopping=True, n_iter_no_change=3)
    result = train(make_spec(models), cfg, X, y, eval_rows=np.arange(150, 200), n_train=150)
    for i, model in enumerate(models):
        kept = mlp_forward(result.coefs[i], result.intercepts[i], model[1], X[150:])
        score = (kept.argmax(1) == y[150:]).mean()
        assert score == pytest.approx(np.nanmax(result.validation_scores[i]))


@pytest.mark.parametrize("backend", ["native", "torch"])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_population_outputs_match_single_forward(backend, task):
    """Scoring's fused forward, on the native kernel (the models' weights
    packed at their real widths) and on torch's fused network, equals each
    model's own forward: every activation, one to three hidden layers."""
    X, y, n_outputs = make_data(task)
    result = train(make_spec(POPULATION), config(task, n_outputs, max_iter=2), X, y)
    acts = [m[1] for m in POPULATION]
    cfg = config(task, n_outputs, backend=backend)
    assert _predict._kernel_forward_runs(make_spec(POPULATION), cfg) == (backend == "native")
    fused = population_outputs(result.coefs, result.intercepts, acts, cfg, X)
    assert fused.shape == (len(POPULATION), len(X), n_outputs)
    for i, act in enumerate(acts):
        np.testing.assert_allclose(fused[i], mlp_forward(result.coefs[i], result.intercepts[i], act, X),
                                   rtol=0, atol=1e-12)


def test_population_outputs_of_a_subset_and_float32():
    """The kernel's forward of models in any order and float32 data: each
    model's outputs at its own row, as its own forward's (float32's
    rounding)."""
    X, y, n_outputs = make_data("classification")
    result = train(make_spec(POPULATION), config("classification", n_outputs, max_iter=2), X, y)
    order = [8, 0, 5, 7]
    coefs = [[W.astype(np.float32) for W in result.coefs[i]] for i in order]
    intercepts = [[b.astype(np.float32) for b in result.intercepts[i]] for i in order]
    cfg = dataclasses.replace(config("classification", n_outputs, backend="native"),
                              dtype="float32")
    fused = population_outputs(coefs, intercepts, [POPULATION[i][1] for i in order], cfg,
                               X.astype(np.float32))
    for j, i in enumerate(order):
        alone = mlp_forward(coefs[j], intercepts[j], POPULATION[i][1], X.astype(np.float32))
        np.testing.assert_allclose(fused[j], alone, rtol=1e-5, atol=1e-5)


def test_a_small_fused_forward_runs_on_one_thread(monkeypatch):
    """Scoring a few models on a few rows (a fold of a small set) runs the
    kernel's forward on one thread, a large one on torch's threads; the
    outputs are the same bit for bit."""
    from skpmlp import _kernels

    if not _kernels.kernel_available():
        pytest.skip("needs the native kernel")
    X, y, n_outputs = make_data("classification")
    result = train(make_spec(POPULATION), config("classification", n_outputs, max_iter=2), X, y)
    acts = [m[1] for m in POPULATION]
    cfg = config("classification", n_outputs, backend="native")
    threads = []
    forward = _kernels.forward_models
    monkeypatch.setattr(_kernels, "forward_models", lambda *args, n_threads, **kwargs: threads.append(
        n_threads) or forward(*args, n_threads=n_threads, **kwargs))
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    small = population_outputs(result.coefs, result.intercepts, acts, cfg, X)
    monkeypatch.setattr(_predict, "_SMALL_FORWARD_FLOPS", 0)
    large = population_outputs(result.coefs, result.intercepts, acts, cfg, X)
    assert threads == [1, 2]
    np.testing.assert_array_equal(small, large)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu_float64():
    X, y, n_outputs = make_data("classification")
    spec = make_spec(POPULATION)
    cpu = train(spec, config("classification", n_outputs), X, y)
    gpu = train(spec, config("classification", n_outputs, device="cuda"), X, y)
    for i, model in enumerate(POPULATION):
        np.testing.assert_allclose(
            mlp_forward(cpu.coefs[i], cpu.intercepts[i], model[1], X),
            mlp_forward(gpu.coefs[i], gpu.intercepts[i], model[1], X),
            atol=1e-6,
        )
