"""Adam's ``amsgrad``, a per-model optimizer parameter end to end (issue 29, item 1).

In float64: a model with ``amsgrad=True`` equals a plain ``torch.nn.Sequential``
trained by ``torch.optim.Adam(amsgrad=True)`` from the same weights and
batches, alone or beside models without it, on the torch path and in the
native kernel; a search may vary it per model, shows it in ``cv_results_``
and exports it; a refill that brings it into a network of SGD models grows
the optimizer's state.
"""

import warnings

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from optimizer_checks import assert_kernel_equals_torch, sequential, train_minibatches
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning

from skpmlp import ParallelMLPClassifier, SingleMLPClassifier
from skpmlp._engine import (
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    mlp_forward,
    train_population,
)
from skpmlp._engine._init import initial_weights

MODELS = [((5,), "tanh", 3e-2), ((4, 3), "relu", 1e-2), ((6,), "logistic", 2e-2)]
OPTIMIZERS = [
    OptimizerSettings("adam", amsgrad=True),
    OptimizerSettings("adam"),
    OptimizerSettings("adam", beta_2=0.9, amsgrad=True),
]
TORCH_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "logistic": torch.nn.Sigmoid}


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 4))
    return X, (X[:, 0] + X[:, 1] ** 2 > 1).astype(int) + (X[:, 2] > 1)


def _spec(models=MODELS, optimizers=OPTIMIZERS):
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]), alphas=np.full(len(models), 1e-3),
        init_seeds=[(0, i, *m[0]) for i, m in enumerate(models)], optimizers=list(optimizers),
    )


def _config(backend):
    return TrainConfig(task="classification", n_outputs=3, batch_size=32, max_iter=6, dtype="float64",
                       n_iter_no_change=1000, shuffle_seed=3, backend=backend)


def _torch_adam(i, X, y, cfg):
    """Model ``i`` as a plain nn.Sequential trained by torch.optim.Adam."""
    arch, activation, lr = MODELS[i]
    settings = OPTIMIZERS[i]
    coefs, intercepts = initial_weights(arch, activation, (0, i, *arch), X.shape[1], 3)
    net = sequential(coefs, intercepts, TORCH_ACTIVATIONS[activation])
    optimizer = torch.optim.Adam(net.parameters(), lr=lr, betas=(settings.beta_1, settings.beta_2),
                                 eps=settings.epsilon, amsgrad=settings.amsgrad)

    def loss(outputs, targets):  # with scikit-learn's L2 term (alpha 1e-3)
        l2 = sum((m.weight**2).sum() for m in net if isinstance(m, torch.nn.Linear))
        return torch.nn.functional.cross_entropy(outputs, targets) + 0.5 * 1e-3 * l2 / len(targets)

    return train_minibatches(net, optimizer, X, y, cfg, loss)[0]


@pytest.mark.parametrize("backend", ["torch", *NATIVE_BACKENDS])
def test_amsgrad_models_equal_torch_adam_alone_and_together(backend):
    X, y = _data()
    cfg = _config(backend_name(backend))
    together = train_population(_spec(), cfg, X, y, [(np.arange(len(X)), None)])
    for i, (_, activation, _) in enumerate(MODELS):
        alone = train_population(_spec().subset([i]), cfg, X, y, [(np.arange(len(X)), None)])
        outputs = mlp_forward(together.coefs[0][i], together.intercepts[0][i], activation, X)
        np.testing.assert_allclose(
            outputs, mlp_forward(alone.coefs[0][0], alone.intercepts[0][0], activation, X), rtol=0, atol=1e-9
        )
        np.testing.assert_allclose(outputs, _torch_adam(i, X, y, cfg), rtol=0, atol=1e-6)


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
def test_the_kernel_equals_the_torch_path(backend):
    X, y = _data()
    assert_kernel_equals_torch(_spec(), _config, X, y)


def test_a_search_varies_shows_and_exports_amsgrad():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = ParallelMLPClassifier(
            [(8,)], "tanh", learning_rate_init=0.01, amsgrad=[False, True], max_iter=15, dtype="float64",
            random_state=0, cv=None, input_transform="robust-smooth-clip",
        ).fit(X, y)
    assert list(search.cv_results_["param_amsgrad"]) == [False, True]
    assert [params["amsgrad"] for params in search.cv_results_["params"]] == [False, True]
    assert search.export_model(1).amsgrad is True and search.export_model(0).amsgrad is False
    assert SingleMLPClassifier().get_params()["amsgrad"] is False


def test_an_amsgrad_refill_grows_the_optimizer_state():
    """A newcomer with amsgrad in a network of SGD models gets zero state
    buffers of its own (the third one included) and its slot trains again."""
    from skpmlp._engine._backends._native import NativeTrainer
    from skpmlp._engine._backends._torch import PopulationTrainer
    from skpmlp._engine._minibatch._slots import Newcomer

    X, _ = _data()
    sgd = [OptimizerSettings("sgd")] * len(MODELS)
    for trainer_class in (PopulationTrainer, NativeTrainer):
        trainer = trainer_class(_spec(optimizers=sgd), _config("torch"), X.shape[1], 1)
        assert len(trainer.optimizer.state) == 1
        trainer.reserve(len(MODELS) + 1)
        slot = int(np.flatnonzero(trainer.net.slot_models == 0)[0])  # model 0's: (5,), tanh
        trainer.freeze(trainer.net.slot_models == 0)
        trainer.replace_slots([Newcomer(
            slots=np.array([slot]), replicas=np.array([len(MODELS)]), arch=(5,), learning_rate=0.01,
            alpha=0.0, optimizer=OptimizerSettings("adam", amsgrad=True),
            weights=initial_weights((5,), "tanh", (0, 9, 5), X.shape[1], 3),
        )])
        assert len(trainer.optimizer.state) == 3 and not trainer.frozen[slot]
        assert trainer.replica_optimizers[len(MODELS)].amsgrad
        assert all(float(state.abs().sum()) == 0.0 for state in trainer.optimizer.state[1:])
