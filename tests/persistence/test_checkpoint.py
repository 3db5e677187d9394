"""Checkpoints: a search killed at any point and fitted again gives the
uninterrupted result, bit for bit in float64; another search is refused.

A kill is simulated in-process by an exception that no code of skpmlp
catches, raised right after the n-th checkpoint write (the state a SIGKILL
at any later moment before the next write leaves) or between a write's
temporary file and its rename. ``test_checkpoint_kill.py`` sends real
signals to real processes.
"""

import os
import warnings

import numpy as np
import pytest
from checkpoint_child import fitted_arrays
from joblib import parallel_config

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._persistence._archive import InvalidFileError
from skpmlp._persistence._checkpoint_file import read_file

HALVING = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,), (3, 3)], learning_rate_init=(0.01, 0.03), alpha=(1e-4, 1e-2),
    pruning="halving", min_iter=2, halving_factor=2, max_iter=9, n_iter_no_change=1000,
    batch_size=32, dtype="float64", random_state=0, checkpoint_every=1e-6,
)
LBFGS = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,)], alpha=(1e-4, 1e-2), solver="lbfgs", max_iter=25,
    dtype="float64", random_state=0, checkpoint_every=1e-6,
)


class Killed(BaseException):
    """What the simulated kill raises: nothing in skpmlp catches it."""


def _fit(params, data, path=None, estimator_class=ParallelMLPClassifier, **extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator_class(**params, checkpoint=path, **extra).fit(*data)


def _assert_same(a, b):
    fa, fb = fitted_arrays(a), fitted_arrays(b)
    assert fa.keys() == fb.keys()
    for name in fa:
        np.testing.assert_array_equal(fa[name], fb[name], err_msg=name)


class KillAfterWrite:
    """``arm(n)``: the n-th checkpoint write completes, then the fit is
    killed (``during=True``: between its temporary file and its rename);
    ``disarm()`` undoes it (and only it). ``writes``: the writes done."""

    def __init__(self):
        self.patch, self.writes = pytest.MonkeyPatch(), []

    def arm(self, n, during=False):
        from skpmlp._persistence import _checkpoint, _checkpoint_file

        real, writes, patch = _checkpoint.write_file, self.writes, self.patch

        def write(path, tree):
            if during and len(writes) + 1 == n:
                # the temporary file is complete; the kill comes before the rename
                patch.setattr(_checkpoint_file.os, "replace", _kill)
            real(path, tree)
            writes.append(path)
            if not during and len(writes) == n:
                raise Killed

        patch.setattr(_checkpoint, "write_file", write)
        return writes

    def disarm(self):
        self.patch.undo()


@pytest.fixture
def kill_after_write():
    killer = KillAfterWrite()
    yield killer
    killer.disarm()


def _kill(*args):
    raise Killed


@pytest.fixture
def count_epochs(wrap_run_epoch):
    """Count the fused epochs trained (every run, both trainers)."""
    calls = [0]

    def counting(run_epoch):
        def counted(self, *args, **kwargs):
            calls[0] += 1
            return run_epoch(self, *args, **kwargs)

        return counted

    wrap_run_epoch(counting)
    return calls


def _killed_and_resumed(params, iris, path, n_writes, kill_after_write, count_epochs,
                        estimator_class=ParallelMLPClassifier):
    """The uninterrupted fit of ``params``, and the fit resumed from its
    checkpoint after a kill at write ``n_writes``, which re-trains no epoch
    (the killed and the resumed fit together train as many as the
    uninterrupted one); checked equal."""
    reference = _fit(params, iris, estimator_class=estimator_class)
    uninterrupted = count_epochs[0]
    kill_after_write.arm(n_writes)
    with pytest.raises(Killed):
        _fit(params, iris, path, estimator_class=estimator_class)
    kill_after_write.disarm()
    killed = count_epochs[0] - uninterrupted
    resumed = _fit(params, iris, path, estimator_class=estimator_class)
    assert 0 < killed and count_epochs[0] - uninterrupted == uninterrupted
    _assert_same(resumed, reference)
    return reference, resumed


@pytest.mark.parametrize("n_writes", [2, 7, 15])
def test_a_search_killed_after_a_write_resumes_to_the_same_result(
        iris, tmp_path, backend, kill_after_write, count_epochs, n_writes):
    """Before the first rung, after it, after the last: the resumed fit
    re-trains no epoch the killed one saved, and skips none."""
    reference, _ = _killed_and_resumed(HALVING, iris, tmp_path / "search.ckpt", n_writes,
                                       kill_after_write, count_epochs)
    assert reference.cv_results_["pruned"].any()  # the rungs at epochs 2, 4, 8 prune


@pytest.mark.parametrize("refill", ["sample", "perturb"])
@pytest.mark.parametrize("n_writes", [2, 5, 9])
def test_an_adaptive_search_killed_after_a_write_resumes_to_the_same_result(
        iris, tmp_path, backend, kill_after_write, count_epochs, refill, n_writes):
    """An adaptive search (refill) is a run of the same loop: killed after
    its first refills, midway, after its last epoch, it resumes to the
    uninterrupted result (the models drawn, their parents and starts, every
    weight), re-training nothing."""
    reference, resumed = _killed_and_resumed(dict(HALVING, refill=refill), iris, tmp_path / "search.ckpt",
                                             n_writes, kill_after_write, count_epochs)
    assert (reference.cv_results_["start_iter"] > 0).any()  # it refilled
    assert resumed.cv_results_["params"] == reference.cv_results_["params"]
    for mine, theirs in zip(resumed.hyperparameter_schedules_,
                            reference.hyperparameter_schedules_):
        assert mine.keys() == theirs.keys()
        for name in mine:
            np.testing.assert_array_equal(mine[name], theirs[name])


#: a halving search of the schedules over the run, warm-ups and label smoothing
INGREDIENTS = dict(
    HALVING, hidden_layer_sizes=[(4,), (3, 3)], learning_rate_init=0.03, alpha=1e-4,
    learning_rate=["cosine", "coslog4"], warmup_fraction=[0.0, 0.3], label_smoothing=[0.0, 0.1],
)


#: SGD's adaptive rates divided while they warm up (every epoch past the
#: patience of one, whatever the loss)
ADAPTIVE_WARMUP = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (6,)], learning_rate_init=(0.01, 0.05), solver="sgd",
    learning_rate="adaptive", warmup_fraction=[0.0, 0.5], max_iter=9, tol=1e9, n_iter_no_change=1,
    batch_size=32, dtype="float64", random_state=0, checkpoint_every=1e-6, cv=None,
)


@pytest.mark.parametrize("search", ["ingredients", "refill", "adaptive-warmup"])
@pytest.mark.parametrize("n_writes", [3, 8])
def test_a_search_with_schedules_and_smoothing_killed_resumes_to_the_same_result(
        iris, tmp_path, backend, kill_after_write, count_epochs, search, n_writes):
    """Each replica's schedule (where it is, its warm-up, an adaptive rate's
    divisions, a refill's own start) and smoothing are in the checkpoint:
    the resumed fit gives the uninterrupted result, bit for bit,
    re-training nothing."""
    params = {"ingredients": INGREDIENTS, "refill": dict(INGREDIENTS, refill="sample"),
              "adaptive-warmup": ADAPTIVE_WARMUP}[search]
    reference, resumed = _killed_and_resumed(params, iris, tmp_path / "search.ckpt", n_writes,
                                             kill_after_write, count_epochs)
    if search == "refill":
        assert (reference.cv_results_["start_iter"] > 0).any()
    assert resumed.cv_results_["params"] == reference.cv_results_["params"]


@pytest.mark.parametrize("search", ["halving", "refill", "early-stopping", "halving-fold"])
@pytest.mark.parametrize("n_writes", [3, 8])
def test_a_search_restoring_best_epochs_killed_resumes_to_the_same_result(
        iris, tmp_path, kill_after_write, count_epochs, search, n_writes):
    """Every replica's best validation loss and epoch and its best weights
    are in the checkpoint: the resumed fit keeps the same best weights and
    best epochs (``best_epoch_per_model_``), bit for bit; with ``"fold"``
    the checkpoint's folds also say that the fold's test rows are watched."""
    params = dict(HALVING, restore_best_weights=True, learning_rate_init=(0.03, 0.1))
    params = {"halving": params, "refill": dict(params, refill="sample"),
              "early-stopping": dict(params, pruning=None, early_stopping=True,
                                     n_iter_no_change=2),
              "halving-fold": dict(params, restore_best_weights="fold")}[search]
    reference, _ = _killed_and_resumed(params, iris, tmp_path / "search.ckpt", n_writes,
                                       kill_after_write, count_epochs)
    best = reference.best_epoch_per_model_
    assert (best[best > 0] < reference.n_iter_per_model_[best > 0]).any()


#: a halving search of per-model dropout rates (and models of rate 0)
DROPOUT = dict(HALVING, hidden_layer_sizes=[(4,), (3, 3)], learning_rate_init=0.03, alpha=1e-4,
               dropout=[0.0, 0.2, 0.4])


@pytest.mark.parametrize("refill", [None, "sample"])
@pytest.mark.parametrize("n_writes", [3, 8])
def test_a_search_with_dropout_killed_resumes_to_the_same_result(
        iris, tmp_path, kill_after_write, count_epochs, refill, n_writes):
    """The masks hash the run's epoch and step and each replica's key (a
    refill's own): all are in the checkpoint or derived from it, so the
    resumed fit gives the uninterrupted result bit for bit (on the native
    kernel here, which takes the run's epoch with each call)."""
    reference, resumed = _killed_and_resumed(dict(DROPOUT, refill=refill), iris,
                                             tmp_path / "search.ckpt", n_writes, kill_after_write,
                                             count_epochs)
    if refill:
        assert (reference.cv_results_["start_iter"] > 0).any()
    assert resumed.cv_results_["params"] == reference.cv_results_["params"]
    assert {p["dropout"] for p in reference.cv_results_["params"]} == {0.0, 0.2, 0.4}


@pytest.mark.parametrize("n_writes", [3, 9])
def test_a_kill_during_a_write_leaves_the_previous_checkpoint(iris, tmp_path, kill_after_write,
                                                               n_writes):
    path = tmp_path / "search.ckpt"
    reference = _fit(HALVING, iris)
    writes = kill_after_write.arm(n_writes, during=True)
    with pytest.raises(Killed):
        _fit(HALVING, iris, path)
    assert len(writes) == n_writes - 1
    before = read_file(path)  # whole: the previous write's
    kill_after_write.disarm()
    assert before["format"] == "skpmlp.checkpoint"
    _assert_same(_fit(HALVING, iris, path), reference)


@pytest.mark.parametrize("cv", [None, 2])
def test_an_lbfgs_search_killed_resumes_to_the_same_result(iris, tmp_path, backend,
                                                           kill_after_write, cv):
    path = tmp_path / "lbfgs.ckpt"
    # ensemble="best": with cv, the refit's sections are written too
    reference = _fit(LBFGS, iris, cv=cv, ensemble="best")
    kill_after_write.arm(6)
    with pytest.raises(Killed):
        _fit(LBFGS, iris, path, cv=cv, ensemble="best")
    kill_after_write.disarm()
    _assert_same(_fit(LBFGS, iris, path, cv=cv, ensemble="best"), reference)


def test_a_sharded_search_killed_resumes_to_the_same_result(iris, tmp_path, kill_after_write):
    """Shards in threads (the kill reaches them); each shard keeps its own
    file between rungs, the search's file holds the decisions."""
    path = tmp_path / "sharded.ckpt"
    params = dict(HALVING, cv=2)
    reference = _fit(params, iris)
    with parallel_config(backend="threading"):
        kill_after_write.arm(12)
        with pytest.raises(Killed):
            _fit(params, iris, path, n_jobs=2)
        kill_after_write.disarm()
        assert any(name.startswith("sharded.ckpt.") for name in os.listdir(tmp_path))
        resumed = _fit(params, iris, path, n_jobs=2)
    _assert_same(resumed, reference)
    # finished shards' files are gone: the search's file holds their results
    assert not [name for name in os.listdir(tmp_path) if ".shard" in name]


def test_a_finished_checkpoint_trains_nothing_again(iris, tmp_path, monkeypatch):
    from skpmlp._engine._minibatch._run import FusedRun

    path = tmp_path / "done.ckpt"
    first = _fit(HALVING, iris, path)
    monkeypatch.setattr(FusedRun, "advance", _kill)
    _assert_same(_fit(HALVING, iris, path), first)


class ChangingSplitter:
    """A splitter that gives other folds on every call (as KFold(shuffle=True)
    without a seed): the checkpoint must keep the folds themselves."""

    def __init__(self, n_splits=2):
        self.n_splits = n_splits
        self._calls = 0

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_splits

    def split(self, X, y=None, groups=None):
        self._calls += 1
        rows = np.random.RandomState(self._calls).permutation(len(X))
        for k in range(self.n_splits):
            test = np.sort(rows[k::self.n_splits])
            yield np.setdiff1d(rows, test), test


def test_a_resumed_search_keeps_its_folds(iris, tmp_path, kill_after_write):
    path = tmp_path / "folds.ckpt"
    reference = _fit(HALVING, iris, cv=ChangingSplitter())  # its first call's folds
    kill_after_write.arm(5)
    with pytest.raises(Killed):
        _fit(HALVING, iris, path, cv=ChangingSplitter())
    kill_after_write.disarm()
    splitter = ChangingSplitter()
    splitter._calls = 7  # it would split otherwise now
    _assert_same(_fit(HALVING, iris, path, cv=splitter), reference)


def test_a_random_state_that_is_not_an_int_takes_the_checkpoints_seed(
        iris, tmp_path, kill_after_write):
    path = tmp_path / "seed.ckpt"
    params = dict(HALVING, random_state=None)
    kill_after_write.arm(4)
    with pytest.raises(Killed):
        _fit(params, iris, path)
    kill_after_write.disarm()
    seed = read_file(path)["seed"]
    resumed = _fit(params, iris, path)
    _assert_same(resumed, _fit(dict(HALVING, random_state=seed), iris))


# ------------------------------------------------------------ refusals
@pytest.fixture
def written(iris, tmp_path):
    path = tmp_path / "search.ckpt"
    _fit(HALVING, iris, path)
    return path


@pytest.mark.parametrize(
    "change, says",
    [
        (dict(alpha=(1e-3,)), r"alpha: \(0.0001, 0.01\) in the checkpoint, \(0.001\) now"),
        (dict(max_iter=5), "max_iter: 9 in the checkpoint, 5 now"),
        (dict(random_state=1), "random_state: 0 in the checkpoint, 1 now"),
    ],
)
def test_other_parameters_are_refused_saying_what_differs(iris, written, change, says):
    with pytest.raises(ValueError, match=says) as error:
        _fit({**HALVING, **change}, iris, written)
    assert "Delete the file or pass another checkpoint path" in str(error.value)


@pytest.mark.parametrize("what", ["X", "y", "sample_weight"])
def test_other_data_are_refused(iris, written, what):
    X, y = iris[0].copy(), iris[1].copy()
    weight = None
    if what == "X":
        X[0, 0] += 1e-9
    elif what == "y":
        y = np.roll(y, 1)
    else:
        weight = np.ones(len(y))
    with pytest.raises(ValueError, match=rf"the data \(.*{what}.*\) differ from the checkpoint"):
        ParallelMLPClassifier(**HALVING, checkpoint=written).fit(X, y, sample_weight=weight)


def test_execution_parameters_may_change(iris, written):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ParallelMLPClassifier(**dict(HALVING, checkpoint_every=5.0), checkpoint=written,
                              n_jobs=2, max_memory=1e9, verbose=0).fit(*iris)


def test_another_estimator_class_is_refused(iris, written):
    with pytest.raises(ValueError, match="written by a ParallelMLPClassifier search"):
        ParallelMLPRegressor(**HALVING, checkpoint=written).fit(iris[0], iris[1].astype(float))


def test_a_file_that_is_not_a_checkpoint_is_refused_unread(iris, tmp_path):
    import pickle

    path = tmp_path / "evil.ckpt"
    path.write_bytes(pickle.dumps({"format": "skpmlp.checkpoint"}))
    with pytest.raises(InvalidFileError):
        _fit(HALVING, iris, path)


@pytest.mark.parametrize("change, says", [(dict(warm_start=True), "warm_start=True")])
def test_settings_a_checkpoint_cannot_keep_are_refused(iris, tmp_path, change, says):
    with pytest.raises(ValueError, match=says):
        _fit({**HALVING, **change}, iris, tmp_path / "x.ckpt")
    assert not os.path.exists(tmp_path / "x.ckpt")


@pytest.mark.parametrize("value", [0, -1.0, "often"])
def test_checkpoint_every_is_validated(iris, value):
    with pytest.raises(ValueError, match="checkpoint_every"):
        ParallelMLPClassifier(checkpoint="x", checkpoint_every=value).fit(*iris)


# ------------------------------------------------------------ write failures (issue 41)
def _failing_writes(monkeypatch, fails):
    """Make checkpoint writes number ``i`` fail (OSError: no space left)
    where ``fails(i)``; returns the list of attempts."""
    import errno

    from skpmlp._persistence import _checkpoint

    attempts, real = [], _checkpoint.write_file

    def write(path, tree):
        attempts.append(path)
        if fails(len(attempts)):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, tree)

    monkeypatch.setattr(_checkpoint, "write_file", write)
    return attempts


def test_a_fit_whose_every_write_fails_returns_the_same_estimator(iris, tmp_path, monkeypatch):
    from skpmlp.io import CheckpointWarning

    reference = _fit(HALVING, iris)
    attempts = _failing_writes(monkeypatch, lambda i: True)
    path = tmp_path / "search.ckpt"
    with pytest.warns(CheckpointWarning) as caught:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("always", CheckpointWarning)
            fitted = ParallelMLPClassifier(**HALVING, checkpoint=path).fit(*iris)
    messages = [str(w.message) for w in caught if w.category is CheckpointWarning]
    assert len(attempts) > 3 and not path.exists()
    # once when writes start failing, once at the end: not at every write
    assert len(messages) == 2 and all(str(path) in m for m in messages)
    assert "No space left on device" in messages[0] and "retried" in messages[0]
    assert "fitted estimator is complete" in messages[1]
    _assert_same(fitted, reference)


def test_writes_that_fail_for_a_while_are_retried(iris, tmp_path, monkeypatch):
    from skpmlp.io import CheckpointWarning

    reference = _fit(HALVING, iris)
    _failing_writes(monkeypatch, lambda i: 2 <= i <= 4)
    path = tmp_path / "search.ckpt"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = ParallelMLPClassifier(**HALVING, checkpoint=path).fit(*iris)
    messages = [str(w.message) for w in caught if w.category is CheckpointWarning]
    assert len(messages) == 2 and "written again" in messages[1]
    _assert_same(fitted, reference)
    monkeypatch.undo()
    # the file is current: a second fit returns its result without training
    _assert_same(_fit(HALVING, iris, path), reference)


@pytest.mark.parametrize("where, says", [
    ("", "empty string"),
    (".", "is a directory"),
    ("missing/search.ckpt", "does not exist"),
])
def test_paths_no_checkpoint_can_be_written_to_are_refused_before_training(
        iris, tmp_path, monkeypatch, where, says):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=says):
        ParallelMLPClassifier(**HALVING, checkpoint=where).fit(*iris)


@pytest.mark.parametrize("n_writes", [3, 20, 36])
def test_a_search_with_input_transforms_killed_resumes_to_the_same_result(
        iris, tmp_path, kill_after_write, count_epochs, n_writes):
    """Each input_transform value trains as its own call (its own section):
    killed in the first, in the second, or in the refit, the resumed fit
    re-trains nothing the killed one saved."""
    params = dict(HALVING, cv=2, ensemble="best", input_transform=["none", "robust-smooth-clip"])
    reference, resumed = _killed_and_resumed(params, iris, tmp_path / "inputs.ckpt", n_writes,
                                             kill_after_write, count_epochs)
    np.testing.assert_array_equal(resumed.predict_proba(iris[0]), reference.predict_proba(iris[0]))


@pytest.mark.parametrize("n_writes", [2, 7])
def test_a_search_with_diagonal_scaling_killed_resumes_to_the_same_result(
        iris, tmp_path, kill_after_write, count_epochs, n_writes):
    """The scales live in the fused network's flat buffer (its scaled
    groups' last tensors) and the optimizer state laid out as it: a search
    of scaled and unscaled models killed before or after its first rung
    resumes to the uninterrupted result."""
    params = dict(HALVING, diagonal_scaling=[False, True])
    reference, _ = _killed_and_resumed(params, iris, tmp_path / "scaled.ckpt", n_writes,
                                       kill_after_write, count_epochs)
    assert reference.cv_results_["pruned"].any()


@pytest.mark.parametrize("n_writes", [3, 20])
def test_a_regressor_with_scaled_targets_killed_resumes_to_the_same_result(
        iris, tmp_path, kill_after_write, count_epochs, n_writes):
    """The checkpoint holds the models in the folds' scaled units; the
    resumed fit folds them back once: killed in the search or in the
    refit, it ends where the uninterrupted fit ends."""
    X, y = iris
    data = (X, 1000.0 * y + 250.0 + X[:, 0])  # a target far from unit scale
    params = dict(HALVING, cv=2, ensemble="best", target_transform="standard")
    reference, resumed = _killed_and_resumed(params, data, tmp_path / "targets.ckpt", n_writes,
                                             kill_after_write, count_epochs,
                                             estimator_class=ParallelMLPRegressor)
    np.testing.assert_array_equal(resumed.predict(X), reference.predict(X))
    assert 900 < reference.predict(X).mean() < 1400  # y's units: folded once
