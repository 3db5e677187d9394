"""Adaptive searches (``refill``): freed slots take new models.

In float64: a refill never changes another model's trajectory, and every
model of an adaptive run (a fresh draw, or a perturbed copy of a parent)
equals a plain ``torch.nn.Sequential`` trained with torch's Adam along the
model's recorded lineage and hyperparameter schedule, on the run's batches
of those epochs. Then the estimator surface: honest rows, export, budget
and errors.
"""

import dataclasses
import warnings

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._engine import OptimizerSettings, TrainConfig, train_population
from skpmlp._engine._init import initial_weights
from skpmlp._search._adaptive import SpaceRefills, adaptive_population, hyperparameter_schedules
from skpmlp._search._population import Population
from skpmlp._search._space import SearchSpace

BACKENDS = [*NATIVE_BACKENDS, "torch"]
N_TRAIN = 90
SPACE = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(5,), (8,)], activation=["relu", "tanh"], learning_rate_init=[1e-2, 3e-2],
    alpha=[1e-4, 1e-3],
)
TORCH_ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int) + (X[:, 2] > 1)
    return X, y


def _config(refill, backend, **kw):
    base = dict(task="classification", n_outputs=3, batch_size=32, max_iter=20, dtype="float64",
                shuffle_seed=7, n_iter_no_change=1000, pruning="halving", min_iter=3, halving_factor=2,
                refill=refill, backend=backend_name(backend))
    return TrainConfig(**{**base, **kw})


def _run(data, refill, backend, solver="adam", **kw):
    """An adaptive (or plain, ``refill=None``) run of the 16 models of SPACE;
    ``(result, population of every model trained)``."""
    X, y = data
    # the spec's per-model batch size is the config's
    space = SearchSpace.from_params({**SPACE, "solver": solver, "batch_size": 32})
    first = Population.from_configurations(space.draw(None, random_state=0), 1, space.searched)
    source = SpaceRefills(space, first, seed=0)
    folds = [(np.arange(N_TRAIN), np.arange(N_TRAIN, len(X)))]
    result = train_population(first.spec(0), _config(refill, backend, **kw), X, y, folds, refill_source=source)
    population = adaptive_population(result, first) if refill else first
    return result, population


@pytest.mark.parametrize("refill", ["sample", "perturb"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refill_changes_no_other_model(data, refill, backend):
    """The first population's models trained as long in both runs have the
    same weights with and without refills (pruning decisions differ, as the
    newcomers compete at the rungs)."""
    plain, _ = _run(data, None, backend)
    adaptive, population = _run(data, refill, backend)
    assert population.n_models > 16 and (adaptive.extra["start_iter"][16:] > 0).all()
    same = [i for i in range(16) if plain.n_iter[i, 0] == adaptive.n_iter[i, 0]]
    # the first rung's cut and the models trained to the end are among them
    assert len(same) >= 8 and max(plain.n_iter[same, 0]) == 20
    for i in same:
        for a, b in zip(plain.coefs[0][i] + plain.intercepts[0][i],
                        adaptive.coefs[0][i] + adaptive.intercepts[0][i]):
            np.testing.assert_array_equal(a, b)


def _lineage_reference(data, result, population, row, cfg, solver="adam"):
    """Row ``row`` trained alone as a plain nn.Sequential with torch.optim
    (Adam, or SGD with Nesterov momentum 0.9): its oldest ancestor's initial
    weights, then each epoch of its lineage with that epoch's learning rate
    and alpha, on the run's batches of that epoch (the run's permutation
    stream, from epoch 0). Where SGD's rate changes, its momentum buffer is
    scaled by old / new rate: scikit-learn's velocity (``-lr * buffer``)
    carries over, as the engine's schedules do."""
    X, y = data
    parent, start = result.extra["parent"], result.extra["start_iter"]
    n_iter = result.n_iter.max(axis=1)
    schedule = hyperparameter_schedules(population, parent, start, n_iter, ["learning_rate_init", "alpha"])[row]
    root = row
    while parent[root] >= 0:
        root = int(parent[root])
    spec = result.extra["spec"]
    arch, act = spec.hidden_layer_sizes[root], spec.activations[root]
    coefs, intercepts = initial_weights(arch, act, spec.init_seeds[root], X.shape[1], cfg.n_outputs)
    layers = []
    for i, (W, b) in enumerate(zip(coefs, intercepts)):
        linear = torch.nn.Linear(*W.shape).double()
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(W.T))
            linear.bias.copy_(torch.from_numpy(b))
        layers += [linear] + ([TORCH_ACTIVATIONS[act]()] if i < len(coefs) - 1 else [])
    net = torch.nn.Sequential(*layers)
    lr0 = schedule["learning_rate_init"][0]
    if solver == "adam":
        optimizer = torch.optim.Adam(net.parameters(), lr=lr0)
    else:
        optimizer = torch.optim.SGD(net.parameters(), lr=lr0, momentum=0.9, nesterov=True)
    X_t, y_t = torch.from_numpy(X[:N_TRAIN]), torch.from_numpy(y[:N_TRAIN])
    generator = torch.Generator().manual_seed(cfg.shuffle_seed)
    epochs = dict(zip(schedule["iter"], zip(schedule["learning_rate_init"], schedule["alpha"])))
    for epoch in range(schedule["iter"][-1] + 1):
        order = torch.randperm(N_TRAIN, generator=generator)
        if epoch not in epochs:
            continue
        lr, alpha = epochs[epoch]
        for group in optimizer.param_groups:
            if solver == "sgd" and group["lr"] != lr:
                for p in group["params"]:
                    if "momentum_buffer" in optimizer.state[p]:
                        optimizer.state[p]["momentum_buffer"].mul_(group["lr"] / lr)
            group["lr"] = lr
        for begin in range(0, N_TRAIN, cfg.batch_size):
            index = order[begin : begin + cfg.batch_size]
            loss = torch.nn.functional.cross_entropy(net(X_t[index]), y_t[index])
            l2 = sum((m.weight**2).sum() for m in net if isinstance(m, torch.nn.Linear))
            loss = loss + 0.5 * alpha * l2 / len(index)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [m.weight.detach().numpy().T for m in linears] + [m.bias.detach().numpy() for m in linears]


@pytest.mark.parametrize("solver", ["adam", "sgd"])
@pytest.mark.parametrize("refill", ["sample", "perturb"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_model_equals_plain_torch_along_its_lineage(data, refill, backend, solver):
    result, population = _run(data, refill, backend, solver)
    parent, start = result.extra["parent"], result.extra["start_iter"]
    if refill == "perturb":
        children = np.flatnonzero(parent >= 0)
        assert len(children) > 0
        grandchildren = [c for c in children if parent[parent[c]] >= 0]
        # a child and (where there is one) a grandchild, and a first-population parent
        rows = [int(children[0]), int(parent[children[0]])] + [int(c) for c in grandchildren[:1]]
        # a copy's hyperparameters are its parent's, each multiplied or drawn afresh
        assert any(population.params[c] != population.params[parent[c]] for c in children)
    else:
        assert (parent == -1).all()
        rows = [16, int(np.flatnonzero(start == start.max())[0])]
    for row in rows:
        expected = _lineage_reference(data, result, population, row, _config(refill, backend), solver)
        got = result.coefs[0][row] + result.intercepts[0][row]
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, atol=1e-9, rtol=0)


@pytest.mark.parametrize("epoch, refilled", [(4, False), (6, True)])
def test_an_interrupted_adaptive_run_keeps_every_trained_model(data, interrupt_epoch, epoch, refilled):
    """Interrupted in its 4th epoch, the refills placed after the 3rd (the
    first rung) never trained: they are no rows. In its 6th, they are."""
    interrupt_epoch(epoch)
    result, population = _run(data, "sample", "native")
    assert result.halted == "interrupted"
    assert (population.n_models > 16) == refilled and len(result.coefs[0]) == population.n_models
    assert (result.n_iter[:, 0] >= 1).all()
    assert (result.extra["start_iter"] + result.n_iter[:, 0] <= epoch - 1).all()


@pytest.mark.parametrize("epochs, refilled", [(3, False), (4, True)])
def test_no_refill_once_out_of_time(data, monkeypatch, epochs, refilled):
    """The clock, read once at the end of each epoch, runs out after
    ``epochs`` epochs: the rung at the end of the 3rd frees seats, which
    are refilled only if time is left (and then train one epoch)."""
    import skpmlp._engine._minibatch._run as fused_run

    ticks = iter(range(1000))
    monkeypatch.setattr(fused_run, "past", lambda deadline, dp=None: next(ticks) >= epochs - 1)
    result, population = _run(data, "sample", "native")
    assert result.halted == "max_time" and (population.n_models > 16) == refilled
    assert (result.n_iter[:, 0] >= 1).all() and result.loss_curves.shape[2] == epochs


def test_the_network_stays_full_and_max_models_caps(data):
    result, _ = _run(data, "sample", "native")
    # every seat is refilled at every rung while min_iter epochs are left
    assert result.extra["occupancy"][: 20 - 3].min() == 1.0
    capped, population = _run(data, "sample", "native", max_models=20)
    assert population.n_models == 20 == len(capped.coefs[0])


# ---------------------------------------------------------------- estimators
SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,)], activation=["relu", "tanh"], learning_rate_init=[3e-3, 3e-2],
    alpha=[1e-4, 1e-2], pruning="halving", min_iter=3, max_iter=15, dtype="float64", random_state=0,
)


@pytest.mark.parametrize("refill", ["sample", "perturb"])
def test_cv_results_rows_parents_start_iter_and_export(iris, refill):
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = ParallelMLPClassifier(**SEARCH, refill=refill, cv=3).fit(X, y)
    results = search.cv_results_
    n = len(results["params"])
    assert n > 16 and search.n_models_ == n and search.n_iter_per_model_.shape == (n, 3)
    parent, start, n_iter = results["parent"], results["start_iter"], results["n_iter"]
    assert (parent[:16] == -1).all() and (start[:16] == 0).all()
    assert (np.diff(start) >= 0).all() and (start[16:] > 0).all()  # refills in order
    assert (parent < np.arange(n)).all() and (start + n_iter <= 15).all()
    for row in np.flatnonzero(parent >= 0):  # a copy starts where its parent was
        p = parent[row]
        assert start[p] < start[row] <= start[p] + n_iter[p]
        root = row
        while parent[root] >= 0:
            root = parent[root]
        schedule = search.hyperparameter_schedules_[row]
        assert schedule["iter"][0] == start[root] and schedule["iter"][-1] == start[row] + n_iter[row] - 1
        assert schedule["learning_rate_init"][-1] == results["param_learning_rate_init"][row]
    # every fold replica of a row trained the same epochs (one configuration)
    assert (search.n_iter_per_model_ == n_iter[:, None]).all()
    assert np.isfinite(results["mean_test_score"]).all()
    for row in range(n):
        model = search.export_model(row, fold=row % 3)
        assert model.n_iter_ == n_iter[row] and len(model.loss_curve_) == n_iter[row]
        assert np.isfinite(model.loss_curve_).all()
        assert model.predict(X).shape == (len(X),)
    assert search.score(X, y) > 0.8


def test_early_stopping_refill_and_max_models(iris):
    X, y = iris
    search = ParallelMLPRegressor(
        hidden_layer_sizes=[(4,), (8,)], learning_rate_init=[1e-2, 3e-2], activation="tanh",
        early_stopping=True, n_iter_no_change=2, max_iter=30, refill="sample", max_models=5,
        dtype="float64", random_state=0, cv=None, input_transform="robust-smooth-clip",
    ).fit(X[:, :3], X[:, 3])
    results = search.cv_results_
    # early stopping freed seats; one refill, then the cap
    assert len(results["params"]) == 5 and results["start_iter"][4] > 0
    assert results["start_iter"][4] + results["n_iter"][4] <= 30
    for row in range(5):
        search.export_model(row).predict(X[:5, :3])


@pytest.mark.parametrize("params, match", [
    ({"refill": "bogus"}, "refill"),
    ({"max_models": 0}, "max_models"),
    ({"refill": "sample"}, "pruning='halving' or early_stopping=True"),
    ({"refill": "sample", "pruning": "halving", "n_jobs": 2}, "n_jobs"),
    ({"refill": "sample", "pruning": "halving", "max_models": 3}, "max_models=3 is less than"),
    ({"max_models": 30}, "needs refill"),
    ({"refill": "sample", "pruning": "halving", "batch_size": [16, 32]}, "batch_size"),
])
def test_bad_refill_settings_are_refused(iris, params, match):
    X, y = iris
    search = ParallelMLPClassifier(hidden_layer_sizes=[(4,), (8,)], max_iter=5,
                                   input_transform="robust-smooth-clip", **params)
    with pytest.raises((ValueError, InvalidParameterError), match=match):
        search.fit(X, y)


@pytest.mark.parametrize("refill", ["sample", "perturb"])
def test_lineage_display_and_search_results_display(iris, refill):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skpmlp.plotting import LineageDisplay, SearchResultsDisplay

    X, y = iris
    search = ParallelMLPClassifier(**SEARCH, refill=refill).fit(X, y)
    results = search.cv_results_
    n = len(results["params"])
    assert set(results["slot"]) == set(range(16)) and (results["slot"][:16] == np.arange(16)).all()
    display = LineageDisplay.from_estimator(search)
    assert len(display.bars_) == n and len(display.lines_) == n
    assert len(display.links_) == (results["parent"] >= 0).sum()
    # a bar per row: from its start, as long as it trained
    widths = [bar.get_width() for bar in display.bars_]
    np.testing.assert_array_equal(widths, results["n_iter"])
    assert SearchResultsDisplay.from_estimator(search).ax_ is not None
    plain = ParallelMLPClassifier(**SEARCH).fit(X, y)
    with pytest.raises(ValueError, match="refill=None"):
        LineageDisplay.from_estimator(plain)
    plt.close("all")


@pytest.mark.parametrize("refill", ["sample", "perturb"])
def test_param_grid_subspaces_keep_their_masks(iris, refill):
    """A refill drawn from a param_grid subspace has that subspace's
    param_* entries masked, as the first population's rows."""
    X, y = iris
    grid = [{"hidden_layer_sizes": [(4,), (8,)], "learning_rate_init": [3e-3, 3e-2]},
            {"hidden_layer_sizes": [(4,), (8,)], "alpha": [1e-4, 1e-2]}]
    search = ParallelMLPClassifier(
        activation="relu", learning_rate_init=0.01, alpha=1e-4, param_grid=grid, pruning="halving",
        refill=refill, min_iter=3, max_iter=12, input_transform="robust-smooth-clip",
        random_state=0,
    ).fit(X, y)
    results = search.cv_results_
    n = len(results["params"])
    assert n > 8
    lr, alpha = results["param_learning_rate_init"], results["param_alpha"]
    assert len(lr) == len(alpha) == n and lr.mask[:8].sum() == alpha.mask[:8].sum() == 4
    # a row masks what its subspace left to the estimator (a sampled refill
    # too; a perturbed copy's values are its own)
    assert not (lr.mask & alpha.mask).any()
    if refill == "sample":
        assert (lr.mask | alpha.mask).all()
    else:
        children = results["parent"] >= 0
        assert children.any() and not (lr.mask | alpha.mask)[children].any()


@pytest.mark.parametrize("solver, batch_size", [("lbfgs", 32), ("adam", 64)])
def test_an_adaptive_run_that_would_split_is_refused(data, solver, batch_size):
    """The refill source serves one fused run: a population that would
    train as several runs (L-BFGS models, or two batch sizes) is refused
    with a clear error, not trained with the source dropped."""
    X, y = data
    space = SearchSpace.from_params({**SPACE, "batch_size": 32})
    first = Population.from_configurations(space.draw(None, random_state=0), 1, space.searched)
    spec = first.spec(0)
    optimizers = list(spec.optimizers)
    optimizers[0] = OptimizerSettings(solver=solver)
    batch_sizes = np.array(spec.batch_sizes)
    batch_sizes[0] = batch_size
    spec = dataclasses.replace(spec, optimizers=optimizers, batch_sizes=batch_sizes)
    folds = [(np.arange(N_TRAIN), np.arange(N_TRAIN, len(X)))]
    with pytest.raises(ValueError, match="one fused run"):
        train_population(spec, _config("sample", "torch"), X, y, folds,
                         refill_source=SpaceRefills(space, first, seed=0))
