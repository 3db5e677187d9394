"""SGD's learning-rate schedules (invscaling, adaptive) as scikit-learn's
MLP runs them, in float64 on both engine paths: each model equals itself
trained alone, and a plain torch model updated with scikit-learn's velocity
form of momentum at the same rates."""

import numpy as np
import pytest
import torch
from test_engine import BACKENDS, config, make_data, make_spec, plain_network, train

from skpmlp._engine import PopulationSpec, mlp_forward
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
    models = [((5 + k,), "relu", 0.05, 1e-4, k) for k in range(len(optimizers))]
    spec = PopulationSpec(**{**make_spec(models).__dict__, "optimizers": optimizers})
    cfg = config("classification", n_outputs, backend=backend, max_iter=25, tol=1e-2, n_iter_no_change=2)
    rows = np.arange(len(X))
    folds = [(rows[rows % 2 == 0], None), (rows[rows % 2 == 1], None)]
    from skpmlp._engine import train_population

    both = train_population(spec, cfg, X, y, folds)
    assert len(set(both.n_iter[:, 0])) > 1  # the models stopped at different epochs
    for i, model in enumerate(models):
        alone = train_population(spec.subset([i]), cfg, X, y, folds)
        assert (alone.n_iter[0] == both.n_iter[i]).all()
        for k in range(2):
            np.testing.assert_allclose(
                mlp_forward(both.coefs[k][i], both.intercepts[k][i], "relu", X),
                mlp_forward(alone.coefs[k][0], alone.intercepts[k][0], "relu", X), rtol=0, atol=1e-9,
            )
    # Adam ignores the schedule: bit-equal to a constant rate, compared
    # between runs of one shape (a 1-model population each); the 5-model run
    # pads model 3 to the widest model, which may reorder its sums (1 ulp)
    adam_constant = PopulationSpec(**{**spec.subset([3]).__dict__, "optimizers": [OptimizerSettings("adam")]})
    plain = train_population(adam_constant, cfg, X, y, folds)
    adam_invscaling = train_population(spec.subset([3]), cfg, X, y, folds)
    for k in range(2):
        np.testing.assert_array_equal(plain.coefs[k][0][0], adam_invscaling.coefs[k][0][0])
