"""Several epochs per native kernel call (``skpmlp/_engine/_minibatch/_epoch_calls.py``):
each model ends every epoch of a call with the host's loss and stopping
rule, so a run is the same, bit for bit, however its epochs are grouped
into calls."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_regression

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, _kernels, sklearn_mlp_params
from skpmlp._engine._backends._native import NativeTrainer
from skpmlp._engine._minibatch import _epoch_calls

pytestmark = pytest.mark.skipif(not _kernels.kernel_available(), reason="needs the native kernel")

# models stopping at many different epochs: a loose tol, little patience,
# several batches an epoch
SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (16,), (8, 8)], activation=("relu", "tanh", "logistic"),
    learning_rate_init=(0.003, 0.03, 0.3), alpha=(1e-4, 1e-2), tol=1e-3, n_iter_no_change=3,
    max_iter=40, batch_size=32, cv=3, ensemble="best", random_state=0,
)


def _calls(monkeypatch, max_epochs):
    """Calls of up to ``max_epochs`` epochs, as many as allowed; returns the
    list of every call's epoch count."""
    monkeypatch.setattr(_epoch_calls, "MAX_EPOCHS", max_epochs)
    monkeypatch.setattr(_epoch_calls, "CALL_SECONDS", 1e9)
    sizes, run_epochs = [], NativeTrainer.run_epochs

    def counted(self, X, y, plans, *args, **kwargs):
        sizes.append(len(plans))
        return run_epochs(self, X, y, plans, *args, **kwargs)

    monkeypatch.setattr(NativeTrainer, "run_epochs", counted)
    return sizes


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _weights(search, name):
    """Every fold model's ``name`` (``_coefs`` or ``_intercepts``), raveled."""
    return np.concatenate([np.ravel(w) for fold in getattr(search, name) for model in fold
                           for w in model])


def _arrays(search):
    """What a fit fixes: ``cv_results_`` but times, the curves, the epochs,
    the monitored scores, every fold model's weights and the refitted
    model's."""
    arrays = {name: np.asarray(value) for name, value in search.cv_results_.items()
              if "time" not in name and isinstance(value, np.ndarray) and value.dtype != object}
    arrays["loss_curves_"] = np.asarray(search.loss_curves_)
    arrays["n_iter_per_model_"] = np.asarray(search.n_iter_per_model_)
    for name in ("_coefs", "_intercepts"):
        arrays[name] = _weights(search, name)
    arrays["coefs_"] = np.concatenate([np.ravel(w) for w in search.best_estimator_.coefs_])
    if getattr(search, "validation_scores_per_model_", None) is not None:
        arrays["scores"] = np.asarray(search.validation_scores_per_model_)
    return arrays


def _assert_same(a, b):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _one_epoch_a_call(monkeypatch, search, X, y):
    """``search`` fitted one epoch a kernel call: the reference."""
    _calls(monkeypatch, 1)
    return _fit(search, X, y)


def _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference, max_epochs=(64,)):
    """``search`` fitted with calls of up to each of ``max_epochs`` epochs
    (several epochs in some call) fixes what ``reference`` fixed, bit for
    bit."""
    expected = _arrays(reference)
    for n in max_epochs:
        sizes = _calls(monkeypatch, n)
        grouped = _fit(search, X, y)
        assert max(sizes) > 1, n
        _assert_same(_arrays(grouped), expected)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("rule", ["loss", "early_stopping"])
def test_a_search_is_the_same_however_its_epochs_are_grouped(iris, monkeypatch, dtype, rule):
    """The loss rule per replica; or early stopping, where the kernel
    trains a model's fold replicas together, stops them on their mean
    score and keeps the weights of their best epoch, as the host does
    between one-epoch calls."""
    params, stopped_before_max, max_epochs = {
        "loss": (SEARCH, 0.3, (7, 64)), "early_stopping": (EARLY_STOPPING, 0.5, (5, 64)),
    }[rule]
    X, y = iris
    search = ParallelMLPClassifier(**params, dtype=dtype)
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    n_iter = reference.n_iter_per_model_
    # the rule stops models at many epochs, many before max_iter (under early
    # stopping each n_iter_no_change + 1 epochs past its best: the weights
    # kept are not the last epoch's)
    assert len(np.unique(n_iter)) >= 5 and (n_iter < params["max_iter"]).mean() > stopped_before_max
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference, max_epochs=max_epochs)


def test_a_holdout_search_and_its_monitored_scores_are_the_same(iris, monkeypatch):
    """A holdout run scores its validation rows every epoch: from the
    outputs the kernel gives after each epoch of a call; halving ranks
    them at its rungs."""
    X, y = iris
    search = ParallelMLPClassifier(**{**SEARCH, "cv": None, "pruning": "halving", "min_iter": 4,
                                      "halving_factor": 2})
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    assert reference.cv_results_["pruned"].any()
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def test_dropout_masks_hash_each_epoch_of_a_call_as_its_own(iris, monkeypatch):
    """A mask hashes the run's epoch and the step within it: a call of
    several epochs gives each its own, as one-epoch calls do."""
    X, y = iris
    search = ParallelMLPClassifier(hidden_layer_sizes=[(8,), (6, 6)], dropout=(0.0, 0.2, 0.5),
                                   max_iter=25, batch_size=40, cv=2, ensemble="best",
                                   dtype="float64", random_state=0)
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def test_a_regression_with_two_outputs_and_halving_is_the_same(monkeypatch):
    X, y = make_regression(200, 6, n_targets=2, noise=5.0, random_state=0)
    search = ParallelMLPRegressor(
        hidden_layer_sizes=[(8,), (16,), (4, 4)], activation=("relu", "tanh"),
        learning_rate_init=(0.003, 0.01, 0.03), pruning="halving", min_iter=3, halving_factor=2,
        max_iter=30, n_iter_no_change=4, tol=1e-3, batch_size=50, cv=2, dtype="float64",
        ensemble="best", random_state=0,
    )
    y = y / y.std(0)
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    assert reference.cv_results_["pruned"].any()
    # no call runs past a rung: the halving epochs 3, 6, 12, 24 end calls
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def test_a_diverging_model_stops_in_the_call_as_alone(monkeypatch):
    X, y = make_regression(120, 5, noise=1.0, random_state=0)
    search = ParallelMLPRegressor(
        hidden_layer_sizes=[(6,), (4, 3)], activation=("relu", "identity"), solver="sgd",
        learning_rate_init=(1e6, 0.01), max_iter=15, cv=2, ensemble="best", dtype="float64",
        random_state=0, input_transform="robust-smooth-clip",
    )
    y = y / y.std()
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    assert np.isnan(reference.cv_results_["mean_test_score"]).sum() == 4
    assert reference.n_iter_per_model_.min() < 15
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def test_scheduled_and_host_monitored_runs_train_one_epoch_per_call(iris, monkeypatch):
    """What the kernel cannot decide within a call keeps a call an epoch: a
    learning-rate schedule, a monitored value the host computes (the
    validation loss as the watched value)."""
    X, y = iris
    for params in (dict(solver="sgd", learning_rate="adaptive"), dict(learning_rate="cosine"),
                   dict(early_stopping=True, monitor="loss"),
                   dict(early_stopping=True, restore_best_weights=True, monitor="loss")):
        sizes = _calls(monkeypatch, 64)
        _fit(ParallelMLPClassifier(hidden_layer_sizes=(8,), max_iter=12, cv=2, refit=False,
                                   random_state=0, **params), X, y)
        assert sizes and set(sizes) == {1}, params


def test_a_run_whose_models_all_stop_within_a_call_ends_there(iris, monkeypatch):
    """Once every model stopped, the call trained no later epoch: the run
    ends at that epoch (its curves no longer), as with one epoch per call."""
    X, y = iris
    search = ParallelMLPClassifier(hidden_layer_sizes=[(8,), (16,)], activation="relu",
                                   learning_rate_init=0.01, cv=2, max_iter=200, tol=1e-2,
                                   ensemble="best", dtype="float64", random_state=0,
                                   **sklearn_mlp_params())  # no dropout: the rule stops early
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    assert reference.n_iter_per_model_.max() < 60
    # the curves too, and so their length: no epoch past the last model's stop
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def test_verbose_reports_every_epoch_of_a_call(iris, monkeypatch, capsys):
    """A verbose lone model's lines (scikit-learn's "Iteration n, loss =
    ...") are told for every epoch of a call, the same as one per call."""
    X, y = iris
    model = ParallelMLPClassifier(hidden_layer_sizes=(8,), activation="relu",
                                  learning_rate_init=0.01, alpha=1e-4, cv=None, max_iter=200,
                                  verbose=1, tol=1e-2, dtype="float64", random_state=0,
                                  **sklearn_mlp_params())
    printed = []
    for max_epochs in (1, 64):
        sizes = _calls(monkeypatch, max_epochs)
        capsys.readouterr()
        _fit(model, X, y)
        printed.append(capsys.readouterr().out)
    # the rule stopped it within a call: no line for an epoch it did not train
    assert max(sizes) > 1 and model.n_iter_ < 60
    assert printed[0] == printed[1] and printed[0].count("Iteration ") == model.n_iter_


def test_ctrl_c_before_a_call_of_several_epochs_keeps_the_epochs_before(iris, monkeypatch):
    X, y = iris
    sizes = _calls(monkeypatch, 5)
    chained, fired = NativeTrainer.run_epochs, []

    def interrupted(self, *args, **kwargs):
        if len(sizes) == 2 and not fired:  # the third call (1 + 5 epochs trained before it)
            fired.append(True)
            raise KeyboardInterrupt
        return chained(self, *args, **kwargs)

    monkeypatch.setattr(NativeTrainer, "run_epochs", interrupted)
    params = dict(hidden_layer_sizes=[(4,), (8,)], max_iter=30, n_iter_no_change=1000, cv=2,
                  ensemble="best", refit=False, dtype="float64", random_state=0,
                  input_transform="robust-smooth-clip")  # one fused run
    with pytest.warns(UserWarning, match="interrupted after 6 epochs"):
        halted = ParallelMLPClassifier(**params).fit(X, y)
    assert (halted.n_iter_per_model_ == 6).all()
    # what it holds is the run of 6 epochs
    _calls(monkeypatch, 1)
    six = _fit(ParallelMLPClassifier(**{**params, "max_iter": 6}), X, y)
    for name in ("_coefs", "_intercepts"):
        np.testing.assert_array_equal(_weights(halted, name), _weights(six, name))


def test_max_time_is_seen_between_calls_of_several_epochs(iris, monkeypatch):
    """The clock runs out during the second call: the run keeps the
    epochs of its two calls, the same as a run of that many epochs."""
    from skpmlp._engine import _train
    from skpmlp._engine._minibatch import _run as _fused_run

    X, y = iris
    sizes = _calls(monkeypatch, 5)
    for module in (_fused_run, _train):
        monkeypatch.setattr(module, "past", lambda deadline, dp=None: len(sizes) >= 2)
    params = dict(hidden_layer_sizes=[(4,), (8,)], max_iter=30, n_iter_no_change=1000, cv=2,
                  ensemble="best", refit=False, dtype="float64", random_state=0,
                  input_transform="robust-smooth-clip")  # one fused run
    with pytest.warns(UserWarning, match="reached max_time after 6 epochs"):
        halted = ParallelMLPClassifier(**params, max_time=1e6).fit(X, y)
    assert sizes == [1, 5] and (halted.n_iter_per_model_ == 6).all()
    monkeypatch.undo()
    six = _fit(ParallelMLPClassifier(**{**params, "max_iter": 6}), X, y)
    for name in ("_coefs", "_intercepts"):
        np.testing.assert_array_equal(_weights(halted, name), _weights(six, name))


@pytest.mark.parametrize("seconds_left, expected", [
    (None, 40),  # CALL_SECONDS / the epoch's 5 ms
    (1.0, 40), (0.05, 10), (0.051, 11), (0.004, 1), (0.0, 1), (-3.0, 1),
])
def test_a_call_ends_with_the_first_epoch_at_the_deadline(monkeypatch, seconds_left, expected):
    """At 5 ms an epoch a call trains CALL_SECONDS' worth of epochs, and no
    epoch past the first that reaches the deadline (one at least)."""
    from types import SimpleNamespace

    import torch

    from skpmlp._engine import TrainConfig

    monkeypatch.setattr(_epoch_calls, "CALL_SECONDS", 0.2)
    data = SimpleNamespace(planner=SimpleNamespace(fold_rows=[np.arange(90)] * 5, batch_size=200),
                           fold_batches=[1] * 5, X=torch.zeros(150, 4), y=torch.zeros(150),
                           X_eval=None)
    status = SimpleNamespace(halving_epochs=[])
    config = TrainConfig(task="classification", n_outputs=3, max_iter=1000)
    n = _epoch_calls.epochs_per_call(0, config, status, data, 0.005, 10, seconds_left)
    assert n == expected


def test_a_replay_that_disagrees_with_the_kernel_raises():
    slots = np.array([2, 0, 1])
    _epoch_calls.check_replay(np.array([3, -1, 1]), slots, np.array([5, 1, 3]), 3)
    with pytest.raises(RuntimeError, match="disagree on when models stopped"):
        _epoch_calls.check_replay(np.array([3, 2, 1]), slots, np.array([1, 3, 3]), 3)


def test_a_state_saved_after_the_last_epoch_resumes_finished():
    """A checkpoint written after a run's last epoch, before the call kept
    its result (the last tick), resumes to the same result, training no
    epoch past ``max_iter``."""
    import copy

    from skpmlp._engine import RunOptions, TrainConfig, train_population
    from skpmlp._engine._spec import PopulationSpec

    class Recorder:
        def __init__(self):
            self.states = []

        def due(self):
            return True

        def save(self, state):
            self.states.append(copy.deepcopy(state))

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(120, 4)), rng.integers(0, 3, 120)
    spec = PopulationSpec(hidden_layer_sizes=[(4,), (8,)], activations=["relu", "tanh"],
                          learning_rates=np.array([0.01, 0.01]), alphas=np.array([1e-4, 1e-4]),
                          init_seeds=[(0, 0), (0, 1)])
    config = TrainConfig(task="classification", n_outputs=3, batch_size=30, max_iter=12,
                         n_iter_no_change=1000, dtype="float64", backend="native")
    folds = [(np.arange(120), None)]
    recorder = Recorder()
    reference = train_population(spec, config, X, y, folds, options=RunOptions(checkpoint=recorder))
    last = [s for s in recorder.states if s["runs"][0]["result"] is None][-1]
    resumed = train_population(spec, config, X, y, folds, resume=last)
    np.testing.assert_array_equal(resumed.n_iter, reference.n_iter)
    assert resumed.n_iter.max() == 12
    for a, b in zip(resumed.coefs, reference.coefs):
        for wa, wb in zip(a, b):
            for x, z in zip(wa, wb):
                np.testing.assert_array_equal(x, z)


# early stopping on the folds' mean validation score: models stopping at
# many epochs, their best epochs before the last
EARLY_STOPPING = dict(SEARCH, early_stopping=True, n_iter_no_change=2, tol=1e-4, max_iter=60)


def test_an_early_stopping_regression_with_halving_and_a_holdout_is_the_same(monkeypatch):
    """R^2 scored in the kernel, one replica a model (a holdout), halving
    ranking the models by their best mean score at its rungs."""
    X, y = make_regression(240, 6, noise=8.0, random_state=1)
    y = y / y.std()
    for cv in (None, 4):
        search = ParallelMLPRegressor(
            hidden_layer_sizes=[(8,), (16,), (4, 4)], activation=("relu", "tanh"),
            learning_rate_init=(0.003, 0.03), early_stopping=True, n_iter_no_change=3,
            pruning="halving", min_iter=4, halving_factor=2, max_iter=50, batch_size=40, cv=cv,
            ensemble="best", dtype="float64", random_state=0,
        )
        reference = _one_epoch_a_call(monkeypatch, search, X, y)
        assert reference.cv_results_["pruned"].any()
        _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def test_a_diverging_fold_replica_leaves_its_model_training_on_the_others(monkeypatch):
    """A replica whose loss overflows stops alone; its model's mean score
    is then its other folds', in the call as between calls."""
    X, y = make_regression(150, 5, noise=1.0, random_state=0)
    y = y / y.std()
    search = ParallelMLPRegressor(
        hidden_layer_sizes=[(6,), (4, 3), (8,), (16,)], activation=("relu", "identity", "tanh"),
        solver="sgd", learning_rate_init=0.5, momentum=0.9, early_stopping=True,
        n_iter_no_change=10, max_iter=40, cv=3, ensemble="best", dtype="float64", random_state=0,
    )
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    # replicas stopped (diverged) before their model's others (here three
    # models' replicas, up to 3 epochs apart)
    n_iter = reference.n_iter_per_model_
    assert (n_iter.max(1) > n_iter.min(1)).any()
    # the calls' epochs replayed at once (ReplicaStatus.end_scored_epochs)
    from skpmlp._engine._minibatch._stopping import ReplicaStatus

    replays = []
    at_once = ReplicaStatus.end_scored_epochs
    monkeypatch.setattr(ReplicaStatus, "end_scored_epochs",
                        lambda status, first, losses, scores: replays.append(len(losses))
                        or at_once(status, first, losses, scores))
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)
    assert max(replays) > 1


def test_a_replay_that_keeps_other_epochs_than_the_kernel_raises():
    slots = np.array([1, 0])
    _epoch_calls.check_replay(np.array([4, 4]), slots, np.array([4, 4]), 4,
                              kept=np.array([2, 3]), kept_after=np.array([3, 2]))
    with pytest.raises(RuntimeError, match="disagree on when models kept their best weights"):
        _epoch_calls.check_replay(np.array([4, 4]), slots, np.array([4, 4]), 4,
                                  kept=np.array([2, 3]), kept_after=np.array([2, 3]))


@pytest.mark.parametrize("early_stopping", [True, False])
def test_a_best_weights_search_is_the_same_however_its_epochs_are_grouped(iris, monkeypatch,
                                                                          early_stopping):
    """restore_best_weights: each replica keeps the weights of its own
    lowest validation loss, which the kernel forms and keeps in its calls
    (early stopping on the folds' mean score, or the loss rule, stopping
    them)."""
    X, y = iris
    search = ParallelMLPClassifier(**{**EARLY_STOPPING, "early_stopping": early_stopping},
                                   restore_best_weights=True, dtype="float64")
    reference = _one_epoch_a_call(monkeypatch, search, X, y)
    best, n_iter = reference.cv_results_["best_epoch"], reference.cv_results_["n_iter"]
    assert (best < n_iter).any() and len(np.unique(best)) >= 5
    _assert_grouping_changes_nothing(monkeypatch, search, X, y, reference)


def _sequential_replay(status, first, losses):
    """What :meth:`FusedRun._epochs` did an epoch at a time: ``end_epoch``,
    then the finished replicas retired before the next epoch, stopping
    once none trains; returns each replica's end (epoch index, n: none),
    the epochs replayed and the curve each epoch records."""
    n = len(losses)
    ended_at, curves = np.full(losses.shape[1], n), []
    for e in range(n):
        curves.append(np.where(status.active, losses[e], np.nan))
        _, finished = status.end_epoch(first + e, losses[e], None)
        ended_at[finished] = e
        if e < n - 1:
            status.retire(finished)
            if not status.active.any():
                break
    return ended_at, len(curves), np.array(curves)


@pytest.mark.parametrize("seed", range(40))
def test_the_loss_rule_replayed_at_once_is_the_rule_an_epoch_at_a_time(seed):
    """``ReplicaStatus.end_epochs`` (every epoch of a call at once) leaves
    the state ``end_epoch`` an epoch at a time leaves: epochs, stops,
    divergences, the rule's best and count, which replicas train on, and
    the curves; with losses that plateau, tie, rise, go NaN or infinite,
    replicas already retired, and a rule that has run before."""
    from skpmlp._engine import TrainConfig
    from skpmlp._engine._minibatch._stopping import ReplicaStatus

    rng = np.random.default_rng(seed)
    K, M, n = 3, int(rng.integers(1, 7)), int(rng.integers(1, 30))
    config = TrainConfig(task="regression", n_outputs=1, tol=float(rng.choice([0.0, 1e-4, 0.05])),
                         n_iter_no_change=int(rng.choice([0, 1, 3, 10])))
    # values on a coarse grid, so that ties and exact plateaus happen
    losses = np.round(rng.uniform(0, 1, (n, K * M)) * 8) / 8 + np.arange(n)[:, None] * rng.choice([-0.01, 0, 0.01])
    bad = rng.uniform(size=losses.shape) < 0.03
    losses[bad] = rng.choice([np.nan, np.inf, -np.inf], size=bad.sum())
    statuses = [ReplicaStatus(K, M, config) for _ in range(2)]
    first = int(rng.integers(0, 5))
    for status in statuses:  # the same history before the call
        for e in range(first):
            _, finished = status.end_epoch(e, np.full(K * M, 0.5 - 0.01 * e), None)
            status.retire(finished)
        status.retire(np.arange(K * M) % 5 == seed % 5)  # some replicas already retired
    reference, replayed = statuses
    assert replayed.replays_epochs(first, n)
    ended_ref, n_ref, curves_ref = _sequential_replay(reference, first, losses)
    training = replayed.active.copy()
    ended_at, trained = replayed.end_epochs(first, losses)
    np.testing.assert_array_equal(ended_at, ended_ref)
    assert len(trained) == n_ref
    curves = np.where(trained, losses[: len(trained)], np.nan)
    np.testing.assert_array_equal(curves, curves_ref)
    assert not (trained & ~training).any()
    for name in ("active", "n_iter", "converged", "diverged", "pruned"):
        np.testing.assert_array_equal(getattr(replayed, name), getattr(reference, name), err_msg=name)
    np.testing.assert_array_equal(replayed.rule.best, reference.rule.best)
    np.testing.assert_array_equal(replayed.rule.count, reference.rule.count)


def _sequential_scored_replay(status, first, losses, scores):
    """:func:`_sequential_replay` under early stopping, with each epoch's
    ``scores``; also returns after how many epochs each replica's weights
    were last its best (0: never)."""
    n = len(losses)
    ended_at, kept_after, curves = np.full(losses.shape[1], n), np.zeros(losses.shape[1], int), []
    for e in range(n):
        curves.append(np.where(status.active, scores[e], np.nan))
        improved, finished = status.end_epoch(first + e, losses[e], scores[e])
        ended_at[finished] = e
        kept_after[improved] = e + 1
        if e < n - 1:
            status.retire(finished)
            if not status.active.any():
                break
    return ended_at, kept_after, np.array(curves)


@pytest.mark.parametrize("seed", range(60))
def test_early_stopping_replayed_at_once_is_the_rule_an_epoch_at_a_time(seed):
    """``ReplicaStatus.end_scored_epochs`` (every epoch of a call at once,
    early stopping watching each model's mean score over its folds) leaves
    the state ``end_epoch`` an epoch at a time leaves, and keeps the same
    best epochs: with scores that plateau, tie, go NaN or infinite, losses
    that go NaN or infinite (a replica then leaves its model's mean),
    replicas already retired, and a rule that has run before."""
    from skpmlp._engine import TrainConfig
    from skpmlp._engine._minibatch._stopping import ReplicaStatus

    rng = np.random.default_rng(seed)
    K, M, n = int(rng.integers(1, 5)), int(rng.integers(1, 7)), int(rng.integers(1, 30))
    config = TrainConfig(task="classification", n_outputs=3, early_stopping=True,
                         tol=float(rng.choice([0.0, 1e-4, 0.05])),
                         n_iter_no_change=int(rng.choice([0, 1, 3, 10])))
    # scores on a coarse grid, so that ties and exact plateaus happen
    scores = np.round(rng.uniform(0, 1, (n, K * M)) * 8) / 8 + np.arange(n)[:, None] * rng.choice([-0.01, 0, 0.01])
    odd = rng.uniform(size=scores.shape) < 0.03
    scores[odd] = rng.choice([np.nan, np.inf, -np.inf], size=odd.sum())
    losses = rng.uniform(0, 1, (n, K * M))
    bad = rng.uniform(size=losses.shape) < 0.02
    losses[bad] = rng.choice([np.nan, np.inf], size=bad.sum())
    statuses = [ReplicaStatus(K, M, config) for _ in range(2)]
    first = int(rng.integers(0, 5))
    for status in statuses:  # the same history before the call
        for e in range(first):
            _, finished = status.end_epoch(e, np.full(K * M, 0.5), np.full(K * M, 0.5 + 0.01 * e))
            status.retire(finished)
        status.retire(np.arange(K * M) % 5 == seed % 5)  # some replicas already retired
    reference, replayed = statuses
    assert replayed.replays_epochs(first, n, scored=True) and not replayed.replays_epochs(first, n)
    training = replayed.active.copy()
    with np.errstate(invalid="ignore"):  # an inf and a -inf score in one mean
        ended_ref, kept_ref, curves_ref = _sequential_scored_replay(reference, first, losses, scores)
        ended_at, trained, kept_after = replayed.end_scored_epochs(first, losses, scores)
    np.testing.assert_array_equal(ended_at, ended_ref)
    np.testing.assert_array_equal(kept_after, kept_ref)
    assert len(trained) == len(curves_ref)
    np.testing.assert_array_equal(np.where(trained, scores[: len(trained)], np.nan), curves_ref)
    assert not (trained & ~training).any()
    for name in ("active", "n_iter", "converged", "diverged", "pruned"):
        np.testing.assert_array_equal(getattr(replayed, name), getattr(reference, name), err_msg=name)
    np.testing.assert_array_equal(replayed.rule.best, reference.rule.best)
    np.testing.assert_array_equal(replayed.rule.count, reference.rule.count)


def test_epochs_are_replayed_one_at_a_time_where_more_than_the_loss_decides():
    """Early stopping without the call's scores, ``restore_best_weights``
    and a halving rung within the call keep the replay an epoch at a
    time."""
    from skpmlp._engine import TrainConfig
    from skpmlp._engine._minibatch._stopping import ReplicaStatus

    task = dict(task="regression", n_outputs=1)
    assert ReplicaStatus(2, 3, TrainConfig(**task)).replays_epochs(0, 64)
    assert not ReplicaStatus(2, 3, TrainConfig(**task, early_stopping=True)).replays_epochs(0, 64)
    assert ReplicaStatus(2, 3, TrainConfig(**task, early_stopping=True)).replays_epochs(0, 64, scored=True)
    assert not ReplicaStatus(2, 3, TrainConfig(**task, restore_best_weights=True)).replays_epochs(0, 64)
    assert not ReplicaStatus(2, 3, TrainConfig(**task, early_stopping=True, restore_best_weights=True)
                             ).replays_epochs(0, 64, scored=True)
    halving = ReplicaStatus(2, 3, TrainConfig(**task, pruning="halving", min_iter=5, max_iter=100))
    assert not halving.replays_epochs(0, 5) and halving.replays_epochs(5, 9)
