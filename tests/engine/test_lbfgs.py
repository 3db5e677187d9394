"""solver="lbfgs": the fused L-BFGS against scipy's L-BFGS-B (through
scikit-learn's MLP), and the invariants (population == alone, folds, frozen
models untouched) on both gradient backends."""

import dataclasses
import warnings

import numpy as np
import pytest
import torch
from kernel_widths import NATIVE_BACKENDS, backend_name
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, _kernels
from skpmlp._engine import OptimizerSettings, PopulationSpec, TrainConfig, train_population
from skpmlp._engine._build import build_network
from skpmlp._engine._init import population_initial_weights
from skpmlp._engine._lbfgs import _fused as _lbfgs
from skpmlp._engine._lbfgs import _native as _lbfgs_native
from skpmlp._engine._lbfgs import _rules as _lbfgs_rules
from skpmlp._engine._lbfgs._linesearch import LineSearches
from skpmlp._estimators._single import SingleMLPClassifier

BACKENDS = ["torch", *NATIVE_BACKENDS]


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def _data(task, iris, diabetes):
    return iris if task == "classification" else diabetes


def _spec(n=None):
    archs = [(7,), (12,), (5, 4), (9,), (6, 3)]
    acts = ["tanh", "relu", "logistic", "relu", "tanh"]
    alphas = [1e-2, 1e-4, 1.0, 0.1, 3.0]
    n = n or len(archs)
    return PopulationSpec(archs[:n], acts[:n], np.full(n, 1e-3), np.array(alphas[:n]), [(5, i) for i in range(n)])


def _config(task, **kwargs):
    if "backend" in kwargs:  # "native:x86-64-v2": the native kernel built for that target
        kwargs["backend"] = backend_name(kwargs["backend"])
    n_outputs = 3 if task == "classification" else 1
    return TrainConfig(task=task, n_outputs=n_outputs, solver="lbfgs", dtype="float64", **kwargs)


def _sklearn_from(spec, i, X, y, task, loss=None, **params):
    """scikit-learn's lbfgs MLP started from model ``i``'s initial weights
    (a regressor with ``loss``, if given)."""
    n_outputs = 3 if task == "classification" else 1
    coefs, intercepts = population_initial_weights(spec, X.shape[1], n_outputs)
    est = (MLPClassifier if task == "classification" else MLPRegressor)(
        hidden_layer_sizes=spec.hidden_layer_sizes[i], activation=spec.activations[i], solver="lbfgs",
        alpha=float(spec.alphas[i]), max_iter=1, warm_start=True, **({} if loss is None else {"loss": loss}),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
        est.coefs_ = [c.copy() for c in coefs[i]]
        est.intercepts_ = [b.copy() for b in intercepts[i]]
        est.set_params(**params).fit(X, y)
    return est


# ------------------------------------------------------------ line search
def _scipy_steps(phi, derphi, stp):
    """Every trial step of scipy's ``DCSRCH`` (L-BFGS-B's constants)."""
    dcsrch = pytest.importorskip("scipy.optimize._dcsrch")
    search = dcsrch.DCSRCH(phi, derphi, 1e-3, 0.9, 0.1, 0.0, 1e10)
    steps, task, f, g = [], b"START", phi(0.0), derphi(0.0)
    for _ in range(30):
        stp, f, g, task = search._iterate(stp, f, g, task)
        if task[:2] != b"FG":
            break
        steps.append(stp)
        f, g = phi(stp), derphi(stp)
    return steps


@pytest.mark.parametrize("first_step", [1e-3, 0.3, 1.0, 7.0, 100.0])
def test_vectorised_line_search_takes_scipys_steps(first_step):
    """Every model's search tries exactly the steps of scipy's Moré-Thuente
    search on its own function, all models advanced together."""
    functions = [  # (phi, phi') along a descent direction
        (lambda a: (a - 2.0) ** 2, lambda a: 2 * (a - 2.0)),
        (lambda a: np.cos(a) - 0.1 * a, lambda a: -np.sin(a) - 0.1),
        (lambda a: (a - 0.01) ** 4 - a * 1e-3, lambda a: 4 * (a - 0.01) ** 3 - 1e-3),
        (lambda a: np.log1p(np.exp(-3 * a)) + 0.05 * a ** 2, lambda a: -3 / (1 + np.exp(3 * a)) + 0.1 * a),
    ]
    want = [_scipy_steps(phi, dphi, first_step) for phi, dphi in functions]
    n = len(functions)
    search = LineSearches(n)
    everyone = np.ones(n, dtype=bool)
    search.start(everyone, np.full(n, first_step), np.array([p(0.0) for p, _ in functions]),
                 np.array([d(0.0) for _, d in functions]))
    got = [[first_step] for _ in range(n)]  # START's trial
    searching = everyone.copy()
    for _ in range(30):
        f = np.array([p(s) for (p, _), s in zip(functions, search.stp)])
        g = np.array([d(s) for (_, d), s in zip(functions, search.stp)])
        done = search.iterate(searching, f, g)
        searching &= ~done
        for i in np.flatnonzero(searching):
            got[i].append(search.stp[i])
        if not searching.any():
            break
    for i in range(n):
        np.testing.assert_allclose(got[i], want[i], rtol=1e-12)


# ----------------------------------------------------------- vs scipy
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("max_iter", [1, 3, 6])
def test_each_model_follows_scipys_lbfgsb(iris, diabetes, task, max_iter, backend):
    """Over a few iterations every model of a population takes scipy's
    L-BFGS-B steps (through scikit-learn's MLP) up to rounding, and counts
    iterations as its ``n_iter_``.

    Few: scikit-learn clips the probabilities in the log-loss VALUE it
    hands scipy at machine epsilon (not in the gradient), the fused run
    uses the exact log-loss; model 2 meets a trial point where the two
    differ (a row's probability ~1e-42) at its 7th iteration."""
    X, y = _data(task, iris, diabetes)
    spec = _spec()
    result = train_population(spec, _config(task, max_iter=max_iter, backend=backend), X, y,
                              [(np.arange(len(X)), None)])
    for i in range(spec.n_models):
        est = _sklearn_from(spec, i, X, y, task, max_iter=max_iter)
        assert result.n_iter[i, 0] == est.n_iter_
        for got, want in zip(result.coefs[0][i] + result.intercepts[0][i], est.coefs_ + est.intercepts_):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


@pytest.mark.parametrize("max_iter", [1, 3, 6])
def test_poisson_follows_scipys_lbfgsb(diabetes, max_iter):
    """loss="poisson" (torch path): every model takes the steps of
    scikit-learn's ``MLPRegressor(loss="poisson", solver="lbfgs")`` from the
    same weights. Its loss value differs by a constant (the deviance's
    ``y log y - y``), which the line search does not see."""
    X, y = diabetes
    y = np.exp(y / 2)  # positive targets
    spec = _spec()
    result = train_population(spec, _config("regression", max_iter=max_iter, loss="poisson"), X, y,
                              [(np.arange(len(X)), None)])
    for i in range(spec.n_models):
        est = _sklearn_from(spec, i, X, y, "regression", max_iter=max_iter, loss="poisson")
        assert result.n_iter[i, 0] == est.n_iter_
        for got, want in zip(result.coefs[0][i] + result.intercepts[0][i], est.coefs_ + est.intercepts_):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("max_fun", [3, 6, 9])
def test_max_fun_stops_as_scipy(iris, max_fun):
    """``max_fun`` is checked as scipy does it, at the end of an iteration
    once the evaluations exceed it: the same iterations, the same weights."""
    X, y = iris
    spec = _spec(3)
    result = train_population(spec, _config("classification", max_fun=max_fun, backend="torch"), X, y,
                              [(np.arange(len(X)), None)])
    assert (result.extra["n_fun"] > max_fun).all()
    assert not result.converged.any()
    for i in range(spec.n_models):
        est = _sklearn_from(spec, i, X, y, "classification", max_iter=200, max_fun=max_fun)
        assert result.n_iter[i, 0] == est.n_iter_
        np.testing.assert_allclose(result.coefs[0][i][0], est.coefs_[0], rtol=0, atol=1e-10)


# ------------------------------------------------------- vector math
ALL_ACTIVATIONS = ["identity", "logistic", "tanh", "relu", "elu", "selu", "gelu", "leaky_relu", "hardshrink", "mish"]


@pytest.mark.parametrize("task, loss", [("classification", "softmax"), ("regression", "squared"),
                                        ("multilabel", "logistic")])
def test_vector_math_gradients_match_the_c_librarys(iris, task, loss):
    """float64: the kernel's gradients with its vector exp / tanh (what the
    fused L-BFGS evaluates with) equal those with the C library's to a few
    ulp, for every activation and loss, at weights large enough to reach the
    saturated ends of tanh, logistic and the softmax."""
    if not _kernels.kernel_available():
        pytest.skip("no native kernel")
    X, y = iris
    X = 3 * X
    targets = {"classification": y, "regression": X[:, :2].copy(),
               "multilabel": np.c_[y == 0, y == 1].astype(float)}[task]
    n_outputs = 3 if task == "classification" else 2
    M = len(ALL_ACTIVATIONS)
    spec = PopulationSpec([(13, 7)] * M, ALL_ACTIVATIONS, np.full(M, 1e-3), np.full(M, 1e-4),
                          [(0, i) for i in range(M)])
    config = TrainConfig(task=task, n_outputs=n_outputs, solver="lbfgs", dtype="float64")
    net = build_network(spec, config, X.shape[1], folds=np.zeros(M, dtype=int))
    with torch.no_grad():
        net.flat.mul_(4)
    evaluate = _lbfgs.FullBatch(net, task, _lbfgs.SlotSettings(np.zeros(M, dtype=int), np.full(M, 1e-4)),
                                _lbfgs.FoldRows(X, targets, [np.arange(len(X))]), "native")
    got = {}
    for mode in ("gradients", "gradients_vector_math"):
        evaluate.loss_sums.zero_()
        net.grad.zero_()
        _kernels.run_models(mode, evaluate.meta, evaluate.hyper, evaluate.batches,
                            {"params": net.flat.detach(), "grads": net.grad, "loss_sums": evaluate.loss_sums},
                            n_outputs=n_outputs, loss=loss)
        got[mode] = (net.grad.clone(), evaluate.loss_sums.clone())
    (grad, losses), (vector_grad, vector_losses) = got["gradients"], got["gradients_vector_math"]
    assert not vector_grad.equal(grad)  # the vector functions did run
    torch.testing.assert_close(vector_grad, grad, rtol=0, atol=1e-14 * float(grad.abs().max()))
    torch.testing.assert_close(vector_losses, losses, rtol=1e-14, atol=0)


# ------------------------------------------------------------ invariants
#: (backend, max_padding, max_iter): the native kernel runs each model on
#: its own widths, so a model's arithmetic is the same in any population
#: and whole runs agree; torch's batched matmuls of padded groups round
#: differently from a model's own (1e-16), which L-BFGS, like any
#: quasi-Newton method on a non-convex loss, amplifies over ~100
#: iterations: unpadded groups agree over whole runs, padded ones over 10
#: iterations.
INVARIANT_RUNS = [*((native, 0.25, 150) for native in NATIVE_BACKENDS), ("torch", 0.0, 150), ("torch", 10.0, 10)]


@pytest.mark.parametrize("backend, max_padding, max_iter", INVARIANT_RUNS)
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_population_equals_each_model_alone(iris, diabetes, task, backend, max_padding, max_iter):
    """float64: every model trained inside the population (to convergence,
    each stopping at its own iteration) equals it trained alone."""
    X, y = _data(task, iris, diabetes)
    spec = _spec()
    config = _config(task, max_iter=max_iter, backend=backend, max_padding=max_padding)
    folds = [(np.arange(len(X)), None)]
    together = train_population(spec, config, X, y, folds)
    if task == "classification" and max_iter > 100:
        assert len(np.unique(together.n_iter)) > 1  # they stop apart
    for i in range(spec.n_models):
        alone = train_population(spec.subset([i]), config, X, y, folds)
        assert together.n_iter[i, 0] == alone.n_iter[0, 0]
        for got, want in zip(together.coefs[0][i] + together.intercepts[0][i],
                             alone.coefs[0][0] + alone.intercepts[0][0]):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend, max_padding, max_iter",
                         [*((native, 0.25, 150) for native in NATIVE_BACKENDS), ("torch", 0.0, 10)])
def test_fold_replica_equals_the_model_alone_on_that_fold(iris, backend, max_padding, max_iter):
    """Fold k's replica equals the model trained alone on fold k's rows
    (with sample weights). On torch, a fold's rows are padded to the
    longest fold's (zero weights), which rounds differently: 10 iterations."""
    X, y = iris
    spec = _spec(3)
    config = _config("classification", max_iter=max_iter, backend=backend, max_padding=max_padding)
    folds = [(train, test) for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y)]
    weights = np.linspace(0.5, 2.0, len(X))
    together = train_population(spec, config, X, y, folds, sample_weight=weights)
    for k, (train, _) in enumerate(folds):
        alone = train_population(spec, config, X[train], y[train], [(np.arange(len(train)), None)],
                                 sample_weight=weights[train])
        for i in range(spec.n_models):
            assert together.n_iter[i, k] == alone.n_iter[i, 0]
            np.testing.assert_allclose(together.coefs[k][i][-1], alone.coefs[0][i][-1], rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stopped_models_stay_bit_identical(iris, monkeypatch, backend):
    """Once a model stops, no later round writes to its parameters (a
    native round runs each model for several evaluations: a model that
    stops inside one is not written by the others after it)."""
    X, y = iris
    snapshots = {}
    run_class = _lbfgs_native.NativeLbfgsRun if backend_name(backend) == "native" else _lbfgs.LbfgsRun
    original = run_class.round

    def watched(run, *args):
        original(run, *args)
        slots = _lbfgs.param_slots(run.net)
        for slot in np.flatnonzero(~run.active):
            if slot not in snapshots:
                entries = slots == int(slot)
                snapshots[slot] = (entries, run.net.flat.detach()[entries].clone())

    monkeypatch.setattr(run_class, "round", watched)
    final = {}
    original_result = _lbfgs._result

    def result(net, run, *args):
        for slot, (entries, _) in snapshots.items():
            final[slot] = net.flat.detach()[entries].clone()
        return original_result(net, run, *args)

    monkeypatch.setattr(_lbfgs, "_result", result)
    train_population(_spec(), _config("classification", max_iter=150, backend=backend), X, y,
                     [(np.arange(len(X)), None)])
    assert len(snapshots) == _spec().n_models
    for slot, (_, values) in snapshots.items():
        assert final[slot].equal(values)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_vectors_start_on_cache_lines(iris, monkeypatch, dtype):
    """Every vector of every model (iterate, gradient, direction, each
    curvature pair) starts on a 64-byte line, and no model's overlaps
    another's: the two-loop recursion streams them with whole-line loads."""
    X, y = iris
    runs = []
    original = _lbfgs_native.NativeLbfgsRun.round

    def kept(run, *args):
        runs.append(run)
        return original(run, *args)

    monkeypatch.setattr(_lbfgs_native.NativeLbfgsRun, "round", kept)
    config = dataclasses.replace(_config("classification", max_iter=3, backend="native"), dtype=dtype)
    train_population(_spec(), config, X, y, [(np.arange(len(X)), None)])
    run = runs[0]
    itemsize = run.buffers["x"].element_size()
    strides = _kernels.pack_stride(run.sizes, itemsize)
    assert (strides >= run.sizes).all() and (strides * itemsize % 64 == 0).all()
    order = np.argsort(run.packed)
    assert run.packed[order[0]] == 0
    assert (run.packed[order][1:] == np.cumsum(strides[order])[:-1]).all()  # back to back, no overlap
    assert (run.packed * itemsize % 64 == 0).all()
    for name in ("x", "g", "d", "S", "Y"):
        assert run.buffers[name].data_ptr() % 64 == 0
    assert run.buffers["S"].numel() == _kernels.HISTORY * run.buffers["x"].numel()
    saved = run.host_state()
    saved["S"] = saved["S"][:-1]
    with pytest.raises(ValueError, match="another skpmlp build"):
        run.load_host_state(saved)


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_native_run_is_the_same_however_its_evaluations_are_split_into_calls(iris, diabetes, backend, dtype):
    """Each kernel call goes on from the models' state (the trial point of a
    model between two calls, mid line search, is remade from its iterate,
    direction and step): one evaluation a call, seven, or all in one, and a
    run saved mid-search and resumed by another, end with the same bits
    (weights, state, curves)."""
    X, y = iris
    config = dataclasses.replace(_config("classification", max_iter=40, backend=backend), dtype=dtype)
    folds = [(np.arange(0, 150, 2), None), (np.arange(1, 150, 2), None)]

    def run_to_end(evals, resume_after=None):
        run = _lbfgs.open_lbfgs(_spec(), config, X, y, folds)
        assert isinstance(run, _lbfgs_native.NativeLbfgsRun)
        run.start()
        calls = 0
        while run.active.any():
            if calls == resume_after:  # a new run from the saved state
                saved = run.host_state()
                run = _lbfgs.open_lbfgs(_spec(), config, X, y, folds)
                run.load_host_state(saved)
            run.round(evals)
            calls += 1
        return run, calls

    reference, _ = run_to_end(1)
    assert (reference.n_fun > reference.n_iter + 1).any()  # line searches of several evaluations
    for evals, resume_after in [(7, None), (10_000, None), (1, 13), (3, 5)]:
        run, calls = run_to_end(evals, resume_after)
        assert calls > (resume_after or 0)
        assert run.net.flat.equal(reference.net.flat), (evals, resume_after)
        np.testing.assert_array_equal(run.state, reference.state)
        np.testing.assert_array_equal(run.curves, reference.curves)


def test_native_evaluations_per_call_fill_the_call_target():
    """A native call runs as many evaluations of each model as took about
    CALL_SECONDS at the last call's rate, or fewer where the deadline is
    nearer; at least one, at most MAX_NATIVE_EVALS."""
    target = _lbfgs_rules.CALL_SECONDS
    assert _lbfgs_rules.native_evals(25, target / 4) == 100
    assert _lbfgs_rules.native_evals(100, target * 10) == 10
    assert _lbfgs_rules.native_evals(1, target * 50) == 1
    assert _lbfgs_rules.native_evals(1, 0.0) == _lbfgs_rules.MAX_NATIVE_EVALS
    assert _lbfgs_rules.native_evals(25, target / 4, seconds_left=target / 2) == 50
    assert _lbfgs_rules.native_evals(25, target / 4, seconds_left=10 * target) == 100
    assert _lbfgs_rules.native_evals(25, target / 4, seconds_left=-1.0) == 1


@pytest.mark.parametrize("backend", NATIVE_BACKENDS)
def test_native_calls_grow_to_their_target_unless_a_callback_watches(iris, monkeypatch, backend):
    """After the start (every model evaluated once), each call's
    evaluations are sized from the last call's time: under a long target,
    the whole run is one call after the start. With ``epoch_callback``
    every call is one evaluation of each model, a callback a fused
    evaluation. Both give the same models."""
    X, y = iris
    calls = []
    original = _lbfgs_native.NativeLbfgsRun.round

    def counted(run, max_evals=1):
        calls.append(max_evals)
        return original(run, max_evals)

    monkeypatch.setattr(_lbfgs_native.NativeLbfgsRun, "round", counted)
    ticks = []
    monkeypatch.setattr(_lbfgs_rules, "CALL_SECONDS", 60.0)  # a call of any length is short
    config, folds = _config("classification", max_iter=30, backend=backend), [(np.arange(len(X)), None)]
    sized = train_population(_spec(), config, X, y, folds)
    assert calls == [_lbfgs_rules.MAX_NATIVE_EVALS]
    del calls[:]
    watched = train_population(_spec(), config, X, y, folds, epoch_callback=lambda *a: ticks.append(a))
    assert set(calls) == {1} and len(calls) == len(ticks) > 30
    for got, want in zip(watched.coefs[0], sized.coefs[0]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_deadline_leaves_every_model_at_its_last_iterate(iris, backend):
    """A run halted by its deadline hands back each unfinished model at its
    last accepted iterate (not a line-search trial point): the weights of
    the same model stopped by ``max_iter`` at that iteration."""
    X, y = iris
    spec = _spec()
    folds = [(np.arange(len(X)), None)]
    halted = train_population(spec, _config("classification", max_iter=150, backend=backend), X, y, folds,
                              deadline=0.0)
    assert halted.halted == "max_time"
    unfinished = np.flatnonzero(~halted.converged[:, 0])
    assert len(unfinished) and (halted.n_iter[unfinished, 0] < 150).all()
    for i in unfinished:
        k = int(halted.n_iter[i, 0])
        stopped = train_population(spec.subset([i]), _config("classification", max_iter=k, backend=backend),
                                   X, y, folds)
        for got, want in zip(halted.coefs[0][i] + halted.intercepts[0][i],
                             stopped.coefs[0][0] + stopped.intercepts[0][0]):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lbfgs_and_adam_models_in_one_population(iris, backend):
    """Models with their own solvers: the lbfgs ones train as their own
    fused run, the others as usual; each equals itself trained alone."""
    X, y = iris
    base = _spec(4)
    optimizers = [OptimizerSettings(solver=s) for s in ("lbfgs", "adam", "lbfgs", "sgd")]
    spec = PopulationSpec(base.hidden_layer_sizes, base.activations, np.full(4, 0.01), base.alphas,
                          base.init_seeds, optimizers)
    config = TrainConfig(task="classification", n_outputs=3, dtype="float64", max_iter=30,
                         backend=backend_name(backend))
    folds = [(np.arange(len(X)), None)]
    together = train_population(spec, config, X, y, folds)
    for i in range(4):
        alone = train_population(spec.subset([i]), config, X, y, folds)
        assert together.n_iter[i, 0] == alone.n_iter[0, 0]
        np.testing.assert_allclose(together.coefs[0][i][0], alone.coefs[0][0][0], rtol=0, atol=1e-9)


# ------------------------------------------------------------ estimators
@pytest.mark.parametrize("cv", [None, 3])
def test_search_model_equals_it_trained_alone(iris, cv):
    """A model found by an lbfgs search, trained alone by its standalone
    estimator on the same rows, has the same weights (float64)."""
    X, y = iris
    params = dict(hidden_layer_sizes=[(6,), (10,)], activation=["tanh", "relu"], alpha=[1e-3, 0.1],
                  learning_rate_init=1e-3, solver="lbfgs", max_iter=80, dtype="float64", random_state=0)
    if cv is None:
        train, test = next(StratifiedKFold(5, shuffle=True, random_state=1).split(X, y))
        search = ParallelMLPClassifier(cv=[(train, test)], **params).fit(X, y)
        fits = [(search.export_model(i, fold=0), train) for i in range(search.n_models_)]
    else:
        search = ParallelMLPClassifier(cv=cv, ensemble="best", **params).fit(X, y)
        fits = [(search.best_estimator_, np.arange(len(X)))]  # the refit, alone
    for model, rows in fits:
        alone = SingleMLPClassifier(**model.get_params()).fit(X[rows], y[rows])
        assert alone.n_iter_ == model.n_iter_
        for got, want in zip(model.coefs_ + model.intercepts_, alone.coefs_ + alone.intercepts_):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("cv", [None, 3])
def test_early_stopping_is_ignored_with_lbfgs(iris, cv):
    """As scikit-learn's MLP: lbfgs trains on all the training rows, with
    or without early_stopping."""
    X, y = iris
    params = dict(hidden_layer_sizes=[(6,)], activation="tanh", learning_rate_init=1e-3,
                  solver="lbfgs", max_iter=40, dtype="float64", random_state=0, cv=cv,
                  ensemble="best")
    plain = ParallelMLPClassifier(**params).fit(X, y)
    early = ParallelMLPClassifier(early_stopping=True, **params).fit(X, y)
    np.testing.assert_array_equal(plain.n_iter_, early.n_iter_)
    assert early.validation_scores_ is None
    np.testing.assert_array_equal(plain.best_estimator_.coefs_[0], early.best_estimator_.coefs_[0])


def test_a_holdout_refit_of_lbfgs_with_early_stopping_trains_its_iterations(iris):
    """early_stopping=True leaves lbfgs models no validation curve: the
    holdout's refit retrains the best configuration for its own iterations
    (it used to read the missing curve and raise a TypeError)."""
    X, y = iris
    params = dict(hidden_layer_sizes=[(6,), (4,)], activation="tanh", solver="lbfgs",
                  max_iter=40, dtype="float64", random_state=0, cv=None, ensemble="best",
                  input_transform="robust-smooth-clip")
    plain = ParallelMLPClassifier(**params).fit(X, y)
    early = ParallelMLPClassifier(early_stopping=True, **params).fit(X, y)
    assert early.validation_scores_per_model_ is None
    assert early.best_estimator_.n_iter_ == plain.best_estimator_.n_iter_
    np.testing.assert_array_equal(plain.best_estimator_.coefs_[0], early.best_estimator_.coefs_[0])


def test_lbfgs_regressor_search(diabetes):
    X, y = diabetes
    search = ParallelMLPRegressor([(8,), (16,)], "tanh", solver="lbfgs", alpha=[1e-3, 1.0],
                                  learning_rate_init=1e-3, max_iter=50, cv=3, dtype="float64",
                                  input_transform="robust-smooth-clip", random_state=0).fit(X, y)
    assert search.n_iter_per_model_.shape == (4, 3)
    assert (search.n_iter_per_model_ <= 50).all() and (search.n_iter_per_model_ >= 1).all()
    assert search.score(X, y) > 0.3


@pytest.mark.parametrize("max_fun", [0, -1, 1.5])
def test_max_fun_is_validated(iris, max_fun):
    with pytest.raises(InvalidParameterError, match="max_fun"):
        ParallelMLPClassifier(solver="lbfgs", max_fun=max_fun).fit(*iris)


def test_pruning_is_refused_with_lbfgs(iris):
    with pytest.raises(ValueError, match="pruning='halving' needs a minibatch solver"):
        ParallelMLPClassifier(solver="lbfgs", pruning="halving").fit(*iris)
