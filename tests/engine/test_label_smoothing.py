"""``label_smoothing``: per-model smoothed targets in the classification
losses, end to end in the engine (issue 40, item 1).

In float64: a smoothed model equals a plain ``torch.nn.Sequential`` trained
on ``torch.nn.functional.cross_entropy(label_smoothing=eps)`` (multilabel:
the binary log-loss of ``y * (1 - eps) + eps / 2``) from the same weights
and batches, its loss curve included, and equals itself trained alone
beside models of other smoothings (0 among them); the native kernel equals
the torch path; L-BFGS minimises the smoothed loss as scipy's L-BFGS-B
does; the validation loss stays the plain log-loss.
"""

import numpy as np
import pytest
import scipy.optimize
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from optimizer_checks import assert_kernel_equals_torch, torch_optimizer, train_minibatches
from test_engine import BACKENDS, make_data, plain_network

from skpmlp._engine import (
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    mlp_forward,
    train_population,
)
from skpmlp._engine._init import initial_weights

#: (hidden_layer_sizes, activation, learning rate, alpha, repeat), each with
#: its optimizer and label smoothing below
MODELS = [((5,), "tanh", 3e-2, 0.0, 0), ((4, 3), "relu", 1e-2, 0.0, 1), ((6,), "logistic", 5e-2, 0.0, 2),
          ((5,), "tanh", 3e-2, 0.0, 3)]
SETTINGS = [
    OptimizerSettings("adam", label_smoothing=0.1),
    OptimizerSettings("adam"),
    OptimizerSettings("sgd", momentum=0.8, label_smoothing=0.3),
    OptimizerSettings("adam", beta_2=0.99, label_smoothing=0.05),
]


def _spec(models=MODELS, settings=SETTINGS):
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]), alphas=np.array([m[3] for m in models]),
        init_seeds=[(0, m[4], len(m[0]), *m[0]) for m in models], optimizers=list(settings),
    )


def _config(task, backend="torch", **kwargs):
    kwargs = {"max_iter": 6, **kwargs}
    return TrainConfig(task=task, n_outputs=3, batch_size=32, dtype="float64", n_iter_no_change=1000,
                       shuffle_seed=7, backend=backend_name(backend), **kwargs)


def smoothed_loss(out, y, task, eps):
    """torch's own smoothed loss of a batch: the reference."""
    if task == "classification":
        return torch.nn.functional.cross_entropy(out, y, label_smoothing=eps)
    target = y * (1 - eps) + eps / 2
    return torch.nn.functional.binary_cross_entropy_with_logits(out, target, reduction="sum") / len(y)


def torch_smoothed(model, settings, X, y, task, cfg):
    """One model as a plain nn.Sequential trained by torch.optim on the
    smoothed loss; its outputs and its last epoch's mean loss."""
    net = plain_network(model, X.shape[1], 3)
    lr = model[2]
    optimizer = torch_optimizer(net.parameters(), lr, settings)
    return train_minibatches(net, optimizer, X, y, cfg,
                             lambda out, target: smoothed_loss(out, target, task, settings.label_smoothing))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("task", ["classification", "multilabel"])
def test_smoothed_models_equal_torch_alone_and_together(task, backend):
    X, y, _ = make_data(task)
    cfg = _config(task, backend)
    everyone = [(np.arange(len(X)), None)]
    together = train_population(_spec(), cfg, X, y, everyone)
    for i, (model, settings) in enumerate(zip(MODELS, SETTINGS)):
        activation = model[1]
        outputs = mlp_forward(together.coefs[0][i], together.intercepts[0][i], activation, X)
        alone = train_population(_spec().subset([i]), cfg, X, y, everyone)
        np.testing.assert_allclose(
            outputs, mlp_forward(alone.coefs[0][0], alone.intercepts[0][0], activation, X),
            rtol=0, atol=1e-9,
        )
        np.testing.assert_allclose(together.loss_curves[i], alone.loss_curves[0], rtol=1e-12)
        expected, last_loss = torch_smoothed(model, settings, X, y, task, cfg)
        np.testing.assert_allclose(outputs, expected, rtol=0, atol=1e-9)
        # the loss curve is the smoothed loss (no L2 term: alpha is 0)
        np.testing.assert_allclose(together.loss_curves[i, 0, -1], last_loss, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_smoothing_is_trained_not_ignored(backend):
    """The same models without smoothing end elsewhere, and the unsmoothed
    model (1) is bit for bit the one of a population where none smooths."""
    X, y, _ = make_data("classification")
    cfg = _config("classification", backend)
    everyone = [(np.arange(len(X)), None)]
    smoothed = train_population(_spec(), cfg, X, y, everyone)
    plain = train_population(
        _spec(settings=[OptimizerSettings(**{**s.__dict__, "label_smoothing": 0.0}) for s in SETTINGS]),
        cfg, X, y, everyone)
    for i, settings in enumerate(SETTINGS):
        difference = max(np.abs(a - b).max() for a, b in zip(smoothed.coefs[0][i], plain.coefs[0][i]))
        if settings.label_smoothing:
            assert difference > 1e-4
        else:
            assert difference == 0


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
@pytest.mark.parametrize("task", ["classification", "multilabel"])
def test_the_kernel_equals_the_torch_path(task, backend):
    X, y, _ = make_data(task, n=90)
    assert_kernel_equals_torch(_spec(), lambda b: _config(task, b), X, y)


def test_regression_ignores_label_smoothing():
    X, y, _ = make_data("regression")
    cfg = TrainConfig(task="regression", n_outputs=2, batch_size=32, max_iter=3, dtype="float64",
                      backend="torch")
    everyone = [(np.arange(len(X)), None)]
    with_it = train_population(_spec(settings=SETTINGS[:1] * 4), cfg, X, y, everyone)
    without = train_population(_spec(settings=[OptimizerSettings("adam")] * 4), cfg, X, y, everyone)
    for a, b in zip(with_it.coefs[0][0], without.coefs[0][0]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_validation_loss_is_the_plain_log_loss(backend):
    """``monitor="loss"`` watches the unsmoothed log-loss (it scores the
    predictions), while the training loss is the smoothed one."""
    X, y, _ = make_data("classification")
    cfg = _config("classification", backend, monitor="loss")
    result = train_population(_spec(), cfg, X, y, [(np.arange(90), np.arange(90, 120))])
    for i, model in enumerate(MODELS):
        outputs = torch.from_numpy(mlp_forward(result.coefs[0][i], result.intercepts[0][i], model[1], X[90:]))
        plain = torch.nn.functional.cross_entropy(outputs, torch.from_numpy(y[90:])).item()
        np.testing.assert_allclose(result.validation_scores[i, 0, -1], -plain, rtol=1e-12)


# ------------------------------------------------------------------ L-BFGS
def _scipy_smoothed(model, eps, X, y, max_iter):
    """scipy's L-BFGS-B (scikit-learn's MLP's settings) on the smoothed
    log-loss plus scikit-learn's L2 term, from the model's initial
    weights: its final weights, flat (each layer's W then b)."""
    arch, activation, _, alpha, repeat = model
    coefs, intercepts = initial_weights(arch, activation, (0, repeat, len(arch), *arch), X.shape[1], 3)
    shapes = [a.shape for pair in zip(coefs, intercepts) for a in pair]
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    act = {"tanh": torch.tanh, "relu": torch.relu}[activation]

    def loss_and_grad(flat):
        theta = torch.tensor(flat, requires_grad=True)
        params, at = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            params.append(theta[at : at + size].view(shape))
            at += size
        a = X_t
        for layer in range(len(params) // 2):
            a = a @ params[2 * layer] + params[2 * layer + 1]
            if layer < len(params) // 2 - 1:
                a = act(a)
        loss = torch.nn.functional.cross_entropy(a, y_t, label_smoothing=eps)
        loss = loss + 0.5 * alpha * sum((W**2).sum() for W in params[0::2]) / len(X)
        loss.backward()
        return loss.item(), theta.grad.numpy().copy()

    start = np.concatenate([a.ravel() for pair in zip(coefs, intercepts) for a in pair])
    result = scipy.optimize.minimize(loss_and_grad, start, method="L-BFGS-B", jac=True,
                                     options={"maxiter": max_iter, "maxfun": 15000, "gtol": 1e-4})
    return result.x, result.nit, loss_and_grad(result.x)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_lbfgs_minimises_the_smoothed_loss_as_scipy(iris, backend):
    """Each L-BFGS model, smoothed or not, in one population, takes scipy's
    L-BFGS-B steps on the smoothed loss, and its loss curve is that loss."""
    X, y = iris
    models = [((7,), "tanh", 1e-3, 1e-2, 0), ((5, 4), "relu", 1e-3, 1e-4, 1), ((7,), "tanh", 1e-3, 1e-2, 2)]
    eps = [0.2, 0.0, 0.05]
    spec = _spec(models, [OptimizerSettings("lbfgs", label_smoothing=e) for e in eps])
    cfg = TrainConfig(task="classification", n_outputs=3, solver="lbfgs", max_iter=5, dtype="float64",
                      backend=backend_name(backend))
    everyone = [(np.arange(len(X)), None)]
    result = train_population(spec, cfg, X, y, everyone)
    for i, model in enumerate(models):
        want, n_iter, loss = _scipy_smoothed(model, eps[i], X, y, cfg.max_iter)
        got = np.concatenate([a.ravel() for pair in zip(result.coefs[0][i], result.intercepts[0][i])
                              for a in pair])
        assert result.n_iter[i, 0] == n_iter
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
        np.testing.assert_allclose(result.loss_curves[i, 0, n_iter - 1], loss, rtol=1e-10)
        alone = train_population(spec.subset([i]), cfg, X, y, everyone)
        np.testing.assert_allclose(alone.coefs[0][0][-1], result.coefs[0][i][-1], rtol=0, atol=1e-9)
