"""``diagonal_scaling``: a learnable per-feature scale before the first
layer, per model, end to end in the engine (issue 40, item 1).

In float64: a scaled model equals a plain torch network (a scale module
then ``nn.Sequential``) trained by ``torch.optim`` from the same weights on
the same batches, ``alpha`` penalising the layers' weights only; it equals
itself trained alone beside unscaled models; unscaled models are bit for
bit those of a population where none scales; the exported weights fold the
scale into the first layer; L-BFGS models take scipy's L-BFGS-B steps with
the scale among their parameters; the kernels' runs go to torch, saying
why.
"""

import numpy as np
import pytest
import scipy.optimize
import torch
from kernel_widths import backend_name
from optimizer_checks import torch_optimizer, train_minibatches
from test_engine import make_data, plain_network

from skpmlp._engine import (
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    mlp_forward,
    train_population,
)
from skpmlp._engine._backends import choose_trainer, fallback_reason
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._init import initial_weights

#: (hidden_layer_sizes, activation, learning rate, alpha, repeat), each with
#: its optimizer below
MODELS = [((5,), "tanh", 3e-2, 1e-2, 0), ((4, 3), "relu", 1e-2, 0.0, 1), ((6,), "logistic", 5e-2, 1e-3, 2),
          ((5,), "tanh", 3e-2, 1e-2, 0)]
SETTINGS = [
    OptimizerSettings("adam", diagonal_scaling=True),
    OptimizerSettings("adam"),
    OptimizerSettings("sgd", momentum=0.8, diagonal_scaling=True),
    OptimizerSettings("adam", beta_2=0.95, label_smoothing=0.1, diagonal_scaling=True),
]


def _spec(models=MODELS, settings=SETTINGS):
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]), alphas=np.array([m[3] for m in models]),
        init_seeds=[(0, m[4], len(m[0]), *m[0]) for m in models], optimizers=list(settings),
    )


def _config(task="classification", backend="torch", **kwargs):
    kwargs = {"max_iter": 6, "n_iter_no_change": 1000, "dtype": "float64", **kwargs}
    n_outputs = 2 if task == "regression" else 3
    return TrainConfig(task=task, n_outputs=n_outputs, batch_size=32, shuffle_seed=7,
                       backend=backend_name(backend), **kwargs)


class Scale(torch.nn.Module):
    """``x * s``, one learnable factor per feature (initialised to 1)."""

    def __init__(self, n_features):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(n_features, dtype=torch.float64))

    def forward(self, x):
        return x * self.scale


def _loss(task, eps, alpha, net):
    """The batch loss of the engine's task plus scikit-learn's L2 term of
    the Linear layers' weights (not the scale)."""
    def loss(out, y):
        if task == "classification":
            data = torch.nn.functional.cross_entropy(out, y, label_smoothing=eps)
        elif task == "multilabel":
            target = y * (1 - eps) + eps / 2
            data = torch.nn.functional.binary_cross_entropy_with_logits(out, target, reduction="sum") / len(y)
        else:
            data = 0.5 * ((out - y) ** 2).mean()
        l2 = sum((m.weight**2).sum() for m in net.modules() if isinstance(m, torch.nn.Linear))
        return data + 0.5 * alpha * l2 / len(y)
    return loss


def torch_scaled(model, settings, X, y, task, cfg):
    """One model as a plain torch network (a :class:`Scale` first where it
    scales) trained by torch.optim: its outputs, its scale and its last
    epoch's mean loss."""
    layers = plain_network(model, X.shape[1], cfg.n_outputs)
    net = torch.nn.Sequential(Scale(X.shape[1]), layers) if settings.diagonal_scaling else layers
    lr = model[2]
    optimizer = torch_optimizer(net.parameters(), lr, settings)
    y = y if task == "classification" else y.reshape(len(y), -1)
    outputs, last = train_minibatches(net, optimizer, X, y, cfg,
                                      _loss(task, settings.label_smoothing, model[3], net))
    scale = net[0].scale.detach().numpy() if settings.diagonal_scaling else None
    return outputs, scale, last


@pytest.mark.parametrize("task", ["classification", "regression", "multilabel"])
def test_scaled_models_equal_torch_alone_and_together(task):
    X, y, _ = make_data(task)
    X = X * np.array([1.0, 3.0, 0.2, 1.0, 5.0, 0.5])  # features of other scales
    cfg = _config(task)
    everyone = [(np.arange(len(X)), None)]
    together = train_population(_spec(), cfg, X, y, everyone)
    for i, (model, settings) in enumerate(zip(MODELS, SETTINGS)):
        outputs = mlp_forward(together.coefs[0][i], together.intercepts[0][i], model[1], X)
        alone = train_population(_spec().subset([i]), cfg, X, y, everyone)
        np.testing.assert_allclose(
            outputs, mlp_forward(alone.coefs[0][0], alone.intercepts[0][0], model[1], X), rtol=0, atol=1e-9)
        expected, scale, last_loss = torch_scaled(model, settings, X, y, task, cfg)
        np.testing.assert_allclose(outputs, expected, rtol=0, atol=1e-9)
        if settings.diagonal_scaling:
            assert np.abs(scale - 1).max() > 1e-3  # the scale trained
        # the loss curve: the data loss plus the L2 term of the layers' end-of-epoch weights
        # (the engine's approximation), whatever the scale
        assert np.isfinite(together.loss_curves[i, 0]).all()
        if model[3] == 0:
            np.testing.assert_allclose(together.loss_curves[i, 0, -1], last_loss, rtol=1e-10)


def test_the_export_folds_the_scale_into_the_first_layer():
    """The engine's trained (unfolded) weights: W0 rows times s is what the
    result holds; a plain forward of it is the scaled network's."""
    X, y, _ = make_data("classification")
    cfg = _config(max_iter=3)
    model, settings = MODELS[0], SETTINGS[0]
    result = train_population(_spec([model], [settings]), cfg, X, y, [(np.arange(len(X)), None)])
    layers = plain_network(model, X.shape[1], 3)
    net = torch.nn.Sequential(Scale(X.shape[1]), layers)
    optimizer = torch.optim.Adam(net.parameters(), lr=model[2])
    train_minibatches(net, optimizer, X, y, cfg, _loss("classification", 0.0, model[3], net))
    s = net[0].scale.detach().numpy()
    W0 = layers[0].weight.detach().numpy().T
    np.testing.assert_allclose(result.coefs[0][0][0], W0 * s[:, None], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.intercepts[0][0][0], layers[0].bias.detach().numpy(), rtol=0, atol=1e-12)


def test_unscaled_models_are_bit_for_bit_a_population_without_scaling():
    X, y, _ = make_data("classification")
    cfg = _config()
    everyone = [(np.arange(len(X)), None)]
    mixed = train_population(_spec(), cfg, X, y, everyone)
    plain_settings = [OptimizerSettings(**{**s.__dict__, "diagonal_scaling": False}) for s in SETTINGS]
    plain = train_population(_spec(settings=plain_settings), cfg, X, y, everyone)
    for i, settings in enumerate(SETTINGS):
        difference = max(np.abs(a - b).max() for a, b in zip(mixed.coefs[0][i], plain.coefs[0][i]))
        if settings.diagonal_scaling:
            assert difference > 1e-4
        else:
            assert difference == 0


def test_k_folds_and_early_stopping_keep_each_replicas_scale():
    """Two overlapping folds with early stopping (a model's replicas stop
    together, on their mean score; best weights kept; stopped slots
    compacted): every replica equals the model's trained alone on the same
    folds."""
    X, y, _ = make_data("classification")
    cfg = _config(max_iter=10, early_stopping=True, n_iter_no_change=2, tol=0.0, compact_fraction=0.0)
    folds = [(np.arange(80), np.arange(80, 120)), (np.arange(40, 120), np.arange(40))]
    together = train_population(_spec(), cfg, X, y, folds)
    assert together.n_iter.min() < 10  # something stopped (and was compacted)
    for i, model in enumerate(MODELS):
        alone = train_population(_spec().subset([i]), cfg, X, y, folds)
        np.testing.assert_array_equal(alone.n_iter[0], together.n_iter[i])
        for k in range(len(folds)):
            np.testing.assert_allclose(
                mlp_forward(together.coefs[k][i], together.intercepts[k][i], model[1], X),
                mlp_forward(alone.coefs[k][0], alone.intercepts[k][0], model[1], X), rtol=0, atol=1e-9)


def _scipy_scaled(model, X, y, max_iter):
    """scipy's L-BFGS-B (scikit-learn's MLP's settings) on a scaled
    model's log-loss plus scikit-learn's L2 term of its layers' weights (not
    of its scale), from its initial weights and a scale of ones: its final
    weights, the scale folded into the first layer, and its iterations."""
    arch, activation, _, alpha, repeat = model
    coefs, intercepts = initial_weights(arch, activation, (0, repeat, len(arch), *arch), X.shape[1], 3)
    start = [np.ones(X.shape[1])] + [a for pair in zip(coefs, intercepts) for a in pair]
    shapes = [a.shape for a in start]
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    act = {"tanh": torch.tanh, "relu": torch.relu}[activation]

    def unflatten(theta):
        params, at = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            params.append(theta[at : at + size].view(shape))
            at += size
        return params

    def loss_and_grad(flat):
        theta = torch.tensor(flat, requires_grad=True)
        scale, *params = unflatten(theta)
        a = X_t * scale
        for layer in range(len(params) // 2):
            a = a @ params[2 * layer] + params[2 * layer + 1]
            if layer < len(params) // 2 - 1:
                a = act(a)
        loss = torch.nn.functional.cross_entropy(a, y_t)
        loss = loss + 0.5 * alpha * sum((W**2).sum() for W in params[0::2]) / len(X)
        loss.backward()
        return loss.item(), theta.grad.numpy().copy()

    result = scipy.optimize.minimize(loss_and_grad, np.concatenate([a.ravel() for a in start]),
                                     method="L-BFGS-B", jac=True,
                                     options={"maxiter": max_iter, "maxfun": 15000, "gtol": 1e-4})
    scale, *params = [p.numpy() for p in unflatten(torch.from_numpy(result.x))]
    params[0] = params[0] * scale[:, None]
    return params, result.nit


def test_lbfgs_models_scale_as_scipy():
    """A scaled L-BFGS model beside an unscaled one takes scipy's L-BFGS-B
    steps on its parameters, the scale among them (unpenalised), and equals
    itself alone."""
    X, y, _ = make_data("classification")
    settings = [OptimizerSettings("lbfgs", diagonal_scaling=True), OptimizerSettings("lbfgs")]
    models = MODELS[:1] * 2
    cfg = _config(solver="lbfgs", max_iter=8)
    everyone = [(np.arange(len(X)), None)]
    together = train_population(_spec(models, settings), cfg, X, y, everyone)
    want, n_iter = _scipy_scaled(models[0], X, y, cfg.max_iter)
    assert together.n_iter[0, 0] == n_iter
    got = [a for pair in zip(together.coefs[0][0], together.intercepts[0][0]) for a in pair]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    for i in range(2):
        alone = train_population(_spec(models, settings).subset([i]), cfg, X, y, everyone)
        for a, b in zip(together.coefs[0][i], alone.coefs[0][0]):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    assert np.abs(together.coefs[0][0][0] - together.coefs[0][1][0]).max() > 1e-4


def test_the_kernels_leave_scaled_runs_to_torch():
    """``backend="auto"`` trains a scaled run on torch and says why;
    ``backend="native"`` refuses it with the reason."""
    spec = _spec()
    assert choose_trainer(spec, _config(backend="auto")) is PopulationTrainer
    assert "diagonal_scaling" in fallback_reason(spec, _config(backend="auto"))
    X, y, _ = make_data("classification")
    with pytest.raises(ValueError, match="backend='native' cannot train this run: diagonal_scaling"):
        train_population(spec, _config(backend="native"), X, y, [(np.arange(len(X)), None)])
    unscaled = _spec(settings=[OptimizerSettings("adam")] * 4)
    assert fallback_reason(unscaled, _config(backend="auto")) is None


def test_the_triton_kernels_leave_scaled_runs_to_torch(monkeypatch):
    """``backend="triton"`` (here Triton's CPU interpreter) refuses a scaled
    run with the reason; ``device="cuda"`` would train it on torch."""
    from skpmlp._engine._backends._triton import triton_unsupported

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    config = _config(backend="triton", dtype="float32")
    reason = triton_unsupported(config, _spec())
    if reason is not None and "diagonal_scaling" not in reason:
        pytest.skip(f"Triton cannot run here: {reason}")
    assert reason == "diagonal_scaling=True (the Triton kernels have no first scaling layer)"
    assert triton_unsupported(config, _spec(settings=[OptimizerSettings("adam")] * 4)) is None


def test_verbose_says_why_a_scaled_run_trains_on_torch():
    X, y, _ = make_data("classification")
    seen = []
    train_population(_spec(), _config(backend="auto", max_iter=1), X, y, [(np.arange(len(X)), None)],
                     epoch_callback=lambda epoch, info: seen.append(info["backend"]))
    assert seen and "not the native kernel: diagonal_scaling=True" in seen[0]
