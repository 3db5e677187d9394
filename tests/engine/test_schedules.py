"""SGD's learning-rate schedules (invscaling, adaptive) as scikit-learn's
MLP runs them, in float64 on both engine paths: each model equals itself
trained alone, and a plain torch model updated with scikit-learn's velocity
form of momentum at the same rates."""

import numpy as np
import pytest
import torch
from optimizer_checks import train_minibatches
from test_engine import BACKENDS, config, make_data, make_spec, plain_network, train

from skpmlp._engine import PopulationSpec, mlp_forward, train_population
from skpmlp._engine._spec import OptimizerSettings


def sklearn_sgd_reference(model, X, y, n_outputs, cfg, settings, rates):
    """One model as a plain nn.Sequential trained with scikit-learn's SGD
    update (``v = momentum v - lr g``; Nesterov ``p += momentum v - lr g``),
    epoch e at ``rates[e]``."""
    alpha = model[3]
    net = plain_network(model, X.shape[1], n_outputs)
    params = list(net.parameters())
    velocity = [torch.zeros_like(p) for p in params]
    mu = settings.momentum
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    gen = torch.Generator().manual_seed(cfg.shuffle_seed)
    for lr in rates:
        order = torch.randperm(len(X), generator=gen)
        for begin in range(0, len(X), cfg.batch_size):
            idx = order[begin : begin + cfg.batch_size]
            loss = torch.nn.functional.cross_entropy(net(X_t[idx]), y_t[idx])
            l2 = sum((m.weight**2).sum() for m in net if isinstance(m, torch.nn.Linear))
            net.zero_grad()
            (loss + 0.5 * alpha * l2 / len(idx)).backward()
            with torch.no_grad():
                for p, v in zip(params, velocity):
                    v.mul_(mu).sub_(lr * p.grad)
                    p.add_(mu * v - lr * p.grad if settings.nesterovs_momentum else v)
    with torch.no_grad():
        return net(X_t).numpy()


MODEL = ((7,), "tanh", 0.05, 1e-4, 0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("nesterov", [True, False])
def test_invscaling_follows_scikit_learns_rates_and_velocity(backend, nesterov):
    X, y, n_outputs = make_data("classification")
    settings = OptimizerSettings("sgd", momentum=0.9, nesterovs_momentum=nesterov,
                                 learning_rate="invscaling", power_t=0.25)
    cfg = config("classification", n_outputs, backend=backend, max_iter=6)
    spec = PopulationSpec(**{**make_spec([MODEL]).__dict__, "optimizers": [settings]})
    result = train(spec, cfg, X, y)
    # the first epoch at learning_rate_init, then lr0 / (t + 1) ** power_t
    # with t the samples seen
    rates = [MODEL[2]] + [MODEL[2] / ((e + 1) * len(X) + 1) ** 0.25 for e in range(cfg.max_iter - 1)]
    reference = sklearn_sgd_reference(MODEL, X, y, n_outputs, cfg, settings, rates)
    ours = mlp_forward(result.coefs[0], result.intercepts[0], MODEL[1], X)
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-9)
    # a constant rate at the same start differs: the schedule took effect
    constant = train(PopulationSpec(**{**spec.__dict__, "optimizers": [
        OptimizerSettings("sgd", momentum=0.9, nesterovs_momentum=nesterov)]}), cfg, X, y)
    assert np.abs(mlp_forward(constant.coefs[0], constant.intercepts[0], MODEL[1], X) - ours).max() > 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_adaptive_divides_by_five_instead_of_stopping_until_the_floor(backend):
    """With a tolerance no epoch can meet and no patience, every epoch after
    the first triggers the rule: the rate is divided by 5 each time until it
    is at most 1e-6, and then the model stops (scikit-learn's
    trigger_stopping)."""
    X, y, n_outputs = make_data("classification")
    settings = OptimizerSettings("sgd", momentum=0.9, learning_rate="adaptive")
    cfg = config("classification", n_outputs, backend=backend, max_iter=50, tol=1e9, n_iter_no_change=0)
    spec = PopulationSpec(**{**make_spec([MODEL]).__dict__, "optimizers": [settings]})
    result = train(spec, cfg, X, y)
    rates = [MODEL[2], MODEL[2]]
    while rates[-1] > 1e-6:
        rates.append(rates[-1] / 5)
    assert result.n_iter[0] == len(rates) == 9  # 0.05, 0.05, 0.01, ..., 6.4e-7
    assert result.converged[0]
    reference = sklearn_sgd_reference(MODEL, X, y, n_outputs, cfg, settings, rates)
    np.testing.assert_allclose(mlp_forward(result.coefs[0], result.intercepts[0], MODEL[1], X), reference,
                               rtol=0, atol=1e-9)


def _assert_each_equals_itself_alone(optimizers, backend, X, y, n_outputs):
    """One model per optimizer settings in one run of two folds, with a
    stopping rule that stops them at different epochs: every replica equals
    its model trained alone on its fold (same epochs, same weights to
    1e-9). Returns the run's spec, config and folds."""
    models = [((5 + k,), "relu", 0.05, 1e-4, k) for k in range(len(optimizers))]
    spec = PopulationSpec(**{**make_spec(models).__dict__, "optimizers": optimizers})
    cfg = config("classification", n_outputs, backend=backend, max_iter=25, tol=1e-2, n_iter_no_change=2)
    rows = np.arange(len(X))
    folds = [(rows[rows % 2 == 0], None), (rows[rows % 2 == 1], None)]
    both = train_population(spec, cfg, X, y, folds)
    assert len(set(both.n_iter[:, 0])) > 1  # the models stopped at different epochs
    for i in range(len(models)):
        alone = train_population(spec.subset([i]), cfg, X, y, folds)
        assert (alone.n_iter[0] == both.n_iter[i]).all()
        for k in range(2):
            np.testing.assert_allclose(
                mlp_forward(both.coefs[k][i], both.intercepts[k][i], "relu", X),
                mlp_forward(alone.coefs[k][0], alone.intercepts[k][0], "relu", X), rtol=0, atol=1e-9,
            )
    return spec, cfg, folds


@pytest.mark.parametrize("backend", BACKENDS)
def test_scheduled_models_in_a_population_equal_each_alone(backend):
    """Schedules, solvers and two folds mixed in one run: every replica equals
    its model trained alone on its fold, and an adaptive model's slowdowns
    never touch the others."""
    X, y, n_outputs = make_data("classification")
    optimizers = [
        OptimizerSettings("sgd", learning_rate="adaptive"),
        OptimizerSettings("sgd", learning_rate="invscaling", power_t=0.5),
        OptimizerSettings("sgd", momentum=0.0, learning_rate="invscaling", power_t=0.1),
        OptimizerSettings("adam", learning_rate="invscaling"),  # Adam ignores it
        OptimizerSettings("sgd"),
    ]
    spec, cfg, folds = _assert_each_equals_itself_alone(optimizers, backend, X, y, n_outputs)
    # Adam ignores the schedule: bit-equal to a constant rate, compared
    # between runs of one shape (a 1-model population each); the 5-model run
    # pads model 3 to the widest model, which may reorder its sums (1 ulp)
    adam_constant = PopulationSpec(**{**spec.subset([3]).__dict__, "optimizers": [OptimizerSettings("adam")]})
    plain = train_population(adam_constant, cfg, X, y, folds)
    adam_invscaling = train_population(spec.subset([3]), cfg, X, y, folds)
    for k in range(2):
        np.testing.assert_array_equal(plain.coefs[k][0][0], adam_invscaling.coefs[k][0][0])


# ------------------------------------------- schedules over the run, warm-up
def over_the_run(e, max_iter, learning_rate, warmup_fraction):
    """The factor of epoch ``e`` (0-based) of ``max_iter``, written out
    from the documented formulas: the schedule at the epoch's middle
    ``t = (e + 1/2) / max_iter``, times the warm-up ``min(1, t / w)``."""
    t = (e + 0.5) / max_iter
    factor = {
        "constant": 1.0,
        "cosine": (1 + np.cos(np.pi * t)) / 2,
        "coslog4": (1 - np.cos(2 * np.pi * np.log2(1 + 15 * t))) / 2,
    }[learning_rate]
    return factor * (min(1.0, t / warmup_fraction) if warmup_fraction else 1.0)


def torch_scheduled(model, X, y, n_outputs, cfg, settings, rates):
    """One model as a plain nn.Sequential trained by torch.optim.Adam /
    AdamW, epoch e at ``rates[e]`` (set on the optimizer between epochs)."""
    net = plain_network(model, X.shape[1], n_outputs)
    kind = torch.optim.AdamW if settings.solver == "adamw" else torch.optim.Adam
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    decay = model[3] if settings.solver == "adamw" else 0.0
    optimizer = kind([{"params": [m.weight for m in linears], "weight_decay": decay},
                      {"params": [m.bias for m in linears], "weight_decay": 0.0}],
                     lr=rates[0], betas=(settings.beta_1, settings.beta_2), eps=settings.epsilon)

    def loss(outputs, targets):
        value = torch.nn.functional.cross_entropy(outputs, targets)
        if settings.solver == "adam":  # scikit-learn's coupled L2 term
            value = value + 0.5 * model[3] * sum((m.weight**2).sum() for m in linears) / len(targets)
        return value

    return train_minibatches(net, optimizer, X, y, cfg, loss, rates=rates)[0]


SCHEDULED = [
    OptimizerSettings("adam", learning_rate="cosine"),
    OptimizerSettings("adam", learning_rate="coslog4"),
    OptimizerSettings("adamw", learning_rate="constant", warmup_fraction=0.3),
    OptimizerSettings("adam", learning_rate="cosine", warmup_fraction=0.5),
    OptimizerSettings("adamw", beta_2=0.99, learning_rate="coslog4", warmup_fraction=1.0),
    OptimizerSettings("adam"),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_schedules_over_the_run_follow_their_per_epoch_rates(backend):
    """cosine, coslog4 and the warm-up, for Adam and AdamW (scikit-learn's
    schedules are SGD's; these apply to every minibatch solver): each model
    in one population equals itself alone and a plain torch.optim model
    whose rate is set per epoch from the documented formulas."""
    X, y, n_outputs = make_data("classification")
    models = [((5 + k,), "tanh", 0.03, 1e-3, k) for k in range(len(SCHEDULED))]
    spec = PopulationSpec(**{**make_spec(models).__dict__, "optimizers": SCHEDULED})
    cfg = config("classification", n_outputs, backend=backend, max_iter=9)
    result = train(spec, cfg, X, y)
    for i, (model, settings) in enumerate(zip(models, SCHEDULED)):
        ours = mlp_forward(result.coefs[i], result.intercepts[i], model[1], X)
        alone = train(spec.subset([i]), cfg, X, y)
        np.testing.assert_allclose(ours, mlp_forward(alone.coefs[0], alone.intercepts[0], model[1], X),
                                   rtol=0, atol=1e-9)
        rates = [model[2] * over_the_run(e, cfg.max_iter, settings.learning_rate, settings.warmup_fraction)
                 for e in range(cfg.max_iter)]
        reference = torch_scheduled(model, X, y, n_outputs, cfg, settings, rates)
        np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-9)
        if settings != OptimizerSettings("adam"):  # the schedule took effect
            constant = torch_scheduled(model, X, y, n_outputs, cfg, settings, [model[2]] * cfg.max_iter)
            assert np.abs(constant - ours).max() > 1e-4


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("learning_rate, warmup_fraction", [("cosine", 0.0), ("coslog4", 0.2),
                                                            ("invscaling", 0.4)])
def test_sgd_keeps_scikit_learns_velocity_across_the_schedules(backend, learning_rate, warmup_fraction):
    """SGD on a schedule over the run (or invscaling with a warm-up, which
    multiplies it): scikit-learn's velocity form of momentum at the
    documented per-epoch rates."""
    X, y, n_outputs = make_data("classification")
    settings = OptimizerSettings("sgd", momentum=0.9, learning_rate=learning_rate,
                                 warmup_fraction=warmup_fraction)
    cfg = config("classification", n_outputs, backend=backend, max_iter=7)
    spec = PopulationSpec(**{**make_spec([MODEL]).__dict__, "optimizers": [settings]})
    result = train(spec, cfg, X, y)
    if learning_rate == "invscaling":
        base = [MODEL[2]] + [MODEL[2] / ((e + 1) * len(X) + 1) ** 0.5 for e in range(cfg.max_iter - 1)]
        rates = [b * over_the_run(e, cfg.max_iter, "constant", warmup_fraction) for e, b in enumerate(base)]
    else:
        rates = [MODEL[2] * over_the_run(e, cfg.max_iter, learning_rate, warmup_fraction)
                 for e in range(cfg.max_iter)]
    reference = sklearn_sgd_reference(MODEL, X, y, n_outputs, cfg, settings, rates)
    np.testing.assert_allclose(mlp_forward(result.coefs[0], result.intercepts[0], MODEL[1], X), reference,
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scheduled_models_that_stop_early_equal_each_alone(backend):
    """Schedules over the run, warm-ups and scikit-learn's in one run of two
    folds with a stopping rule that stops models at different epochs: every
    replica equals its model alone (a stopped model just stops)."""
    X, y, n_outputs = make_data("classification")
    optimizers = [
        OptimizerSettings("adam", learning_rate="cosine", warmup_fraction=0.2),
        OptimizerSettings("sgd", learning_rate="coslog4"),
        OptimizerSettings("sgd", learning_rate="adaptive", warmup_fraction=0.3),
        OptimizerSettings("adamw", learning_rate="constant", warmup_fraction=0.1),
        OptimizerSettings("adam"),
    ]
    _assert_each_equals_itself_alone(optimizers, backend, X, y, n_outputs)


def test_a_refill_counts_its_schedule_from_its_start():
    """A replica admitted after epoch b trains its own epoch e' = e - b - 1
    at the rate of a run of ``max_iter - b - 1`` epochs; the others go on."""
    from skpmlp._engine._minibatch._schedules import LearningRates

    settings = [OptimizerSettings("adam", learning_rate="cosine", warmup_fraction=0.25)] * 2
    rates = LearningRates(np.array([0.1, 0.2]), settings, [50], max_iter=20)
    np.testing.assert_allclose(rates.current, [0.1 * over_the_run(0, 20, "cosine", 0.25),
                                               0.2 * over_the_run(0, 20, "cosine", 0.25)], rtol=1e-15)
    for epoch in range(6):
        rates.end_epoch(epoch)
    newcomer = OptimizerSettings("sgd", learning_rate="coslog4")
    rates.admit([1], [0.3], [newcomer], epoch=5)  # trains from epoch 6, over 14 epochs
    for epoch in range(6, 20):
        np.testing.assert_allclose(rates.current, [0.1 * over_the_run(epoch, 20, "cosine", 0.25),
                                                   0.3 * over_the_run(epoch - 6, 14, "coslog4", 0.0)],
                                   rtol=1e-15)
        rates.end_epoch(epoch)
    # past the span (never trained), the last epoch's rate: never 0
    np.testing.assert_allclose(rates.current, [0.1 * over_the_run(19, 20, "cosine", 0.25),
                                               0.3 * over_the_run(13, 14, "coslog4", 0.0)], rtol=1e-15)
