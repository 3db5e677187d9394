"""``restore_best_weights``: every replica ends at its own best epoch by
its validation loss, in float64.

Checked against a plain torch loop that trains one model alone, watches its
validation loss on the same rows after every epoch and keeps a copy of its
best weights; a model alone equals it in a mixed population, per fold; the
fold replicas of one model keep different epochs; stopping (the loss rule,
early stopping, halving) does not change.
"""

import copy
import dataclasses

import numpy as np
import pytest
import torch
from kernel_widths import backend_name
from test_engine import make_data, make_spec, plain_network

from skpmlp._engine import TrainConfig, train_population
from skpmlp._engine._minibatch._stopping import BestEpochs

#: (hidden_layer_sizes, activation, lr, alpha, repeat): rates high enough
#: that the validation loss turns up within the run
MODELS = [
    ((16,), "relu", 5e-2, 1e-4, 0),
    ((8,), "tanh", 3e-2, 1e-3, 0),
    ((6, 5), "logistic", 5e-2, 0.0, 0),
    ((12,), "gelu", 2e-2, 1e-4, 1),
]

#: two folds of 150 rows: each trains on its own rows and watches its own
#: validation rows (the engine's folds are (train_rows, eval_rows))
FOLDS = [(np.arange(0, 90), np.arange(90, 150)), (np.arange(60, 150), np.arange(0, 60))]


def _config(task, n_outputs, **kw):
    if "backend" in kw:
        kw["backend"] = backend_name(kw["backend"])
    base = dict(task=task, n_outputs=n_outputs, batch_size=16, max_iter=14, dtype="float64",
                shuffle_seed=3, n_iter_no_change=1000, restore_best_weights=True)
    return TrainConfig(**{**base, **kw})


def _validation_loss(out, y, task):
    """The plain validation loss: cross-entropy, or half the squared error
    (scikit-learn's: the mean over rows and outputs)."""
    if task == "classification":
        return torch.nn.functional.cross_entropy(out, y).item()
    return (0.5 * ((out - y) ** 2).mean()).item()


def _reference(model, X, y, task, n_outputs, cfg, train_rows, eval_rows):
    """One model trained alone as a plain ``nn.Sequential`` with
    ``torch.optim.Adam`` on ``train_rows`` (the engine's batch order),
    epoch by epoch; after each, its validation loss on ``eval_rows``, and a
    copy of the network where it is the lowest so far (the first of ties).
    Returns ``(best network, best epoch (1-based), validation losses)``."""
    _, _, lr, alpha, _ = model
    net = plain_network(model, X.shape[1], n_outputs)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    X_train, X_eval = torch.from_numpy(X[train_rows]), torch.from_numpy(X[eval_rows])
    y_t = torch.from_numpy(y if task == "classification" else y.reshape(len(y), -1))
    y_train, y_eval = y_t[train_rows], y_t[eval_rows]
    generator = torch.Generator().manual_seed(cfg.shuffle_seed)
    best, best_epoch, best_loss, losses = copy.deepcopy(net), 0, np.inf, []
    for epoch in range(cfg.max_iter):
        order = torch.randperm(len(train_rows), generator=generator)
        for begin in range(0, len(train_rows), cfg.batch_size):
            rows = order[begin : begin + cfg.batch_size]
            out = net(X_train[rows])
            loss = (torch.nn.functional.cross_entropy(out, y_train[rows]) if task == "classification"
                    else 0.5 * ((out - y_train[rows]) ** 2).mean())
            l2 = sum((m.weight ** 2).sum() for m in net if isinstance(m, torch.nn.Linear))
            loss = loss + 0.5 * alpha * l2 / len(rows)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            losses.append(_validation_loss(net(X_eval), y_eval, task))
        if losses[-1] < best_loss:
            best, best_epoch, best_loss = copy.deepcopy(net), epoch + 1, losses[-1]
    return best, best_epoch, np.array(losses)


def _weights(result, k, i):
    return result.coefs[k][i] + result.intercepts[k][i]


def _assert_weights_equal(a, b, atol=1e-10):
    assert len(a) == len(b)
    for wa, wb in zip(a, b):
        np.testing.assert_allclose(wa, wb, rtol=0, atol=atol)


def _network_weights(net):
    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    return ([m.weight.detach().numpy().T for m in linear]
            + [m.bias.detach().numpy() for m in linear])


@pytest.mark.parametrize("backend", ["torch", "native"])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_restored_weights_equal_the_plain_torch_best_copy(task, backend):
    X, y, n_outputs = make_data(task, n=150)
    cfg = _config(task, n_outputs, backend=backend)
    result = train_population(make_spec(MODELS), cfg, X, y, FOLDS)
    inside = 0
    for k, (train_rows, eval_rows) in enumerate(FOLDS):
        for i, model in enumerate(MODELS):
            best, best_epoch, losses = _reference(model, X, y, task, n_outputs, cfg, train_rows,
                                                  eval_rows)
            assert result.best_epoch[i, k] == best_epoch
            _assert_weights_equal(_weights(result, k, i), _network_weights(best))
            inside += 1 < best_epoch < cfg.max_iter
    assert inside >= 2, "some replicas must keep a weight of neither the first nor the last epoch"


def test_a_model_alone_equals_it_in_a_mixed_population_per_fold():
    X, y, n_outputs = make_data("classification", n=150)
    cfg = _config("classification", n_outputs, backend="torch")
    spec = make_spec(MODELS)
    population = train_population(spec, cfg, X, y, FOLDS)
    for i in range(len(MODELS)):
        alone = train_population(spec.subset([i]), cfg, X, y, FOLDS)
        np.testing.assert_array_equal(alone.best_epoch[0], population.best_epoch[i])
        for k in range(len(FOLDS)):
            _assert_weights_equal(_weights(alone, k, 0), _weights(population, k, i), atol=1e-12)


def _trained_for(spec, cfg, X, y, i, k, n_epochs):
    """Model ``i`` trained alone on fold ``k`` for ``n_epochs``, nothing
    restored: its weights after that epoch."""
    plain = dataclasses.replace(cfg, restore_best_weights=False, early_stopping=False,
                                max_iter=n_epochs, n_iter_no_change=1000)
    return _weights(train_population(spec.subset([i]), plain, X, y, [FOLDS[k]]), 0, 0)


def test_each_fold_replica_keeps_its_own_best_epoch():
    """Fold replicas of one model whose best epochs differ each hold the
    weights of their own: one early, the other later."""
    X, y, n_outputs = make_data("classification", n=150)
    cfg = _config("classification", n_outputs, backend="torch")
    spec = make_spec(MODELS)
    result = train_population(spec, cfg, X, y, FOLDS)
    differ = np.flatnonzero(result.best_epoch[:, 0] != result.best_epoch[:, 1])
    assert len(differ), "some model's fold replicas must keep different epochs"
    for i in differ:
        for k in range(len(FOLDS)):
            kept = _trained_for(spec, cfg, X, y, i, k, int(result.best_epoch[i, k]))
            _assert_weights_equal(_weights(result, k, i), kept)
        assert result.best_epoch[i].min() < cfg.max_iter


def test_stopping_is_unchanged_and_each_replica_restores_its_own_epoch():
    """With early stopping, the replicas stop where they stop without
    ``restore_best_weights`` (a model's mean validation score over its
    folds) and keep their own best epoch by the loss, not the epoch where
    the model's mean score peaked; the same for the training-loss rule."""
    X, y, n_outputs = make_data("classification", n=150)
    spec = make_spec(MODELS)
    for stopping in (dict(early_stopping=True, n_iter_no_change=2),
                     dict(n_iter_no_change=2, tol=1e-2)):
        cfg = _config("classification", n_outputs, backend="torch", max_iter=30, **stopping)
        restored = train_population(spec, cfg, X, y, FOLDS)
        plain = train_population(spec, dataclasses.replace(cfg, restore_best_weights=False), X, y,
                                 FOLDS)
        np.testing.assert_array_equal(restored.n_iter, plain.n_iter)
        np.testing.assert_array_equal(restored.converged, plain.converged)
        assert (restored.n_iter < cfg.max_iter).any()
        np.testing.assert_array_equal(restored.loss_curves, plain.loss_curves)
        np.testing.assert_array_equal(restored.validation_scores, plain.validation_scores)
        assert (restored.best_epoch >= 1).all() and (restored.best_epoch <= restored.n_iter).all()
        if cfg.early_stopping:  # some replica's own best is not its model's
            assert any(not np.array_equal(a, b) for k in range(len(FOLDS))
                       for i in range(len(MODELS))
                       for a, b in zip(_weights(restored, k, i), _weights(plain, k, i)))
        for i in range(len(MODELS)):
            for k in range(len(FOLDS)):
                kept = _trained_for(spec, cfg, X, y, i, k, int(restored.best_epoch[i, k]))
                _assert_weights_equal(_weights(restored, k, i), kept)


def test_halving_cuts_the_same_models():
    X, y, n_outputs = make_data("classification", n=150)
    spec = make_spec(MODELS + [((5,), "relu", 1e-3, 1e-4, 0), ((4,), "tanh", 1e-1, 1e-4, 0)])
    cfg = _config("classification", n_outputs, backend="torch", pruning="halving", min_iter=3,
                  halving_factor=2)
    restored = train_population(spec, cfg, X, y, FOLDS)
    plain = train_population(spec, dataclasses.replace(cfg, restore_best_weights=False), X, y,
                             FOLDS)
    assert restored.pruned.any()
    np.testing.assert_array_equal(restored.pruned, plain.pruned)
    np.testing.assert_array_equal(restored.n_iter, plain.n_iter)
    assert (restored.best_epoch <= restored.n_iter).all()


def test_without_it_nothing_is_recorded_and_the_last_weights_are_kept():
    X, y, n_outputs = make_data("classification", n=150)
    cfg = _config("classification", n_outputs, backend="torch", restore_best_weights=False,
                  max_iter=5)
    result = train_population(make_spec(MODELS[:2]), cfg, X, y, FOLDS)
    assert result.best_epoch is None
    for k in range(len(FOLDS)):
        _assert_weights_equal(_weights(result, k, 1), _trained_for(make_spec(MODELS), cfg, X, y, 1,
                                                                   k, 5), atol=1e-12)


def test_the_bookkeeping_keeps_the_first_of_ties_and_never_a_nan():
    best = BestEpochs(4)
    every = np.ones(4, dtype=bool)
    improved = best.update(0, np.array([2.0, np.nan, 1.0, 3.0]), every)
    np.testing.assert_array_equal(improved, [True, False, True, True])
    improved = best.update(1, np.array([2.0, 5.0, 0.5, 1.0]), np.array([True, True, True, False]))
    np.testing.assert_array_equal(improved, [False, True, True, False])  # a tie, a stopped one
    np.testing.assert_array_equal(best.epoch, [1, 2, 2, 1])
    np.testing.assert_array_equal(best.loss, [2.0, 5.0, 0.5, 3.0])
    best.reset([2])
    assert best.epoch[2] == 0 and best.loss[2] == np.inf
