"""``solver="adamw"``: decoupled weight decay end to end (issue 38, item 7).

In float64: an AdamW model equals a plain ``torch.nn.Sequential`` trained by
``torch.optim.AdamW`` (``weight_decay=alpha`` on the weights, none on the
biases, no L2 term in the loss) from the same weights and batches, alone or
beside Adam and SGD models, with and without amsgrad, on the torch path and
in the native kernel; a search varies it per model, and its reported loss
has no L2 term.
"""

import warnings

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from optimizer_checks import assert_kernel_equals_torch, sequential, train_minibatches
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning

from skpmlp import ParallelMLPClassifier
from skpmlp._engine import (
    OptimizerSettings,
    PopulationSpec,
    TrainConfig,
    mlp_forward,
    train_population,
)
from skpmlp._engine._init import initial_weights

ALPHA = 0.05
MODELS = [((5,), "tanh", 3e-2), ((4, 3), "relu", 1e-2), ((6,), "logistic", 2e-2), ((5,), "tanh", 2e-2)]
OPTIMIZERS = [
    OptimizerSettings("adamw"),
    OptimizerSettings("adam"),
    OptimizerSettings("adamw", beta_2=0.9, amsgrad=True),
    OptimizerSettings("sgd", momentum=0.8),
]
TORCH_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "logistic": torch.nn.Sigmoid}
ADAMW = [0, 2]


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 4))
    return X, (X[:, 0] + X[:, 1] ** 2 > 1).astype(int) + (X[:, 2] > 1)


def _spec():
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in MODELS], activations=[m[1] for m in MODELS],
        learning_rates=np.array([m[2] for m in MODELS]), alphas=np.full(len(MODELS), ALPHA),
        init_seeds=[(0, i, *m[0]) for i, m in enumerate(MODELS)], optimizers=list(OPTIMIZERS),
    )


def _config(backend):
    return TrainConfig(task="classification", n_outputs=3, batch_size=32, max_iter=6,
                       dtype="float64", n_iter_no_change=1000, shuffle_seed=3, backend=backend)


def _torch_adamw(i, X, y, cfg):
    """Model ``i`` as a plain nn.Sequential trained by torch.optim.AdamW:
    the weights decay by ``alpha``, the biases not; returns its outputs
    and its last epoch's mean loss."""
    arch, activation, lr = MODELS[i]
    settings = OPTIMIZERS[i]
    coefs, intercepts = initial_weights(arch, activation, (0, i, *arch), X.shape[1], 3)
    net = sequential(coefs, intercepts, TORCH_ACTIVATIONS[activation])
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    optimizer = torch.optim.AdamW(
        [{"params": [m.weight for m in linears], "weight_decay": ALPHA},
         {"params": [m.bias for m in linears], "weight_decay": 0.0}],
        lr=lr, betas=(settings.beta_1, settings.beta_2), eps=settings.epsilon,
        amsgrad=settings.amsgrad,
    )
    return train_minibatches(net, optimizer, X, y, cfg, torch.nn.functional.cross_entropy)


@pytest.mark.parametrize("backend", ["torch", *NATIVE_BACKENDS])
def test_adamw_models_equal_torch_adamw_alone_and_together(backend):
    X, y = _data()
    cfg = _config(backend_name(backend))
    everyone = [(np.arange(len(X)), None)]
    together = train_population(_spec(), cfg, X, y, everyone)
    for i in ADAMW:
        activation = MODELS[i][1]
        alone = train_population(_spec().subset([i]), cfg, X, y, everyone)
        outputs = mlp_forward(together.coefs[0][i], together.intercepts[0][i], activation, X)
        np.testing.assert_allclose(
            outputs, mlp_forward(alone.coefs[0][0], alone.intercepts[0][0], activation, X),
            rtol=0, atol=1e-9,
        )
        expected, last_loss = _torch_adamw(i, X, y, cfg)
        np.testing.assert_allclose(outputs, expected, rtol=0, atol=1e-6)
        # the reported loss is the data loss alone: no L2 term
        np.testing.assert_allclose(together.loss_curves[i, 0, -1], last_loss, rtol=1e-9)


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)  # the kernel at every width
def test_the_kernel_equals_the_torch_path(backend):
    X, y = _data()
    assert_kernel_equals_torch(_spec(), _config, X, y)


def test_a_search_varies_and_exports_adamw():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = ParallelMLPClassifier(
            [(8,)], "tanh", learning_rate_init=0.01, solver=["adam", "adamw"], alpha=0.01,
            max_iter=10, dtype="float64", random_state=0, cv=None, input_transform="robust-smooth-clip",
        ).fit(X, y)
    assert list(search.cv_results_["param_solver"]) == ["adam", "adamw"]
    model = search.export_model(1)
    assert model.solver == "adamw" and model.alpha == 0.01
    # the same configuration trained with Adam (coupled L2) differs
    adam = search.export_model(0)
    assert np.abs(model.coefs_[0] - adam.coefs_[0]).max() > 1e-6
    # a standalone AdamW model trains (and reports its loss without L2)
    alone = model.__class__(**model.get_params()).fit(X, y)
    assert alone.solver == "adamw" and np.isfinite(alone.loss_curve_).all()
