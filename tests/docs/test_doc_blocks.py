"""The documentation's Python code blocks run, and what they show is checked (issue 36).

Every ``python`` block of README.md (a fenced block after an
``<!-- doc-block: NAME ... -->`` comment), docs/index.rst and
docs/user_guide/*.rst (a ``code-block:: python`` with a ``:name:``) is run
on two data sets, one on each side of ``cv="auto"``'s threshold of 2,000
rows: the training part of breast_cancer (426 rows: 5 folds) and of 3,000
generated rows (2,250: a holdout). A block runs statement by statement,
as in a notebook, in a namespace holding what the user guide's examples
assume (:func:`_namespace`): ``X, y`` (the training rows), ``X_train``,
``y_train``, ``X_test``, ``y_test``, ``patients`` (group labels), ``search``
(the README's search, fitted), ``ParallelMLPClassifier``, ``np``,
``pandas``, ``torch`` and ``skpmlp``.

Each block has a check in :data:`CHECKS`, which is given the value of every
expression statement (``search.best_params_, search.best_score_``) and the
namespace after the block, and must look at every one of those values: a
block whose expression nobody checked fails. A block that cannot run here
is in :data:`FRAGMENTS` with the reason, and skips saying it. A block in
neither, or a name in either that no block has, fails.
"""

import ast
import copy
import re
import textwrap
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pandas
import pytest
import torch
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.ensemble import VotingClassifier
from sklearn.model_selection import check_cv, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline

import skpmlp
import skpmlp.io
from skpmlp import MLPEnsembleClassifier, ParallelMLPClassifier, SingleMLPClassifier
from skpmlp._engine._minibatch._run import FusedRun

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "docs" / "index.rst",
             *sorted((ROOT / "docs" / "user_guide").glob("*.rst"))]
DATASETS = ["breast_cancer", "generated"]

#: The README's search: the ``search`` every block may use.
README_SEARCH = dict(
    hidden_layer_sizes=[(32,), (64,), (64, 64)], activation=("relu", "tanh", "gelu"),
    learning_rate_init=(1e-3, 1e-2), alpha=(1e-4, 1e-2), n_repeats=2, random_state=0,
)


# ----------------------------------------------------------------- blocks
def _markdown_blocks(path):
    text = path.read_text()
    pattern = r"<!-- doc-block: ([\w-]+)[^>]*-->\n```python\n(.*?)```"
    named = dict(re.findall(pattern, text, re.S))
    assert len(named) == text.count("```python"), (
        f"{path.name}: every ```python block needs a '<!-- doc-block: NAME -->' line before it")
    return named


def _rst_blocks(path):
    blocks, lines = {}, path.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.strip() != ".. code-block:: python":
            continue
        indent = len(line) - len(line.lstrip())
        j, name = i + 1, None
        while j < len(lines) and lines[j].strip().startswith(":"):  # the options
            option, _, value = lines[j].strip()[1:].partition(":")
            name = value.strip() if option == "name" else name
            j += 1
        body = []
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > indent):
            body.append(lines[j])
            j += 1
        assert name, f"{path.name}:{i + 1}: a python code-block needs a ':name:'"
        blocks[name] = textwrap.dedent("\n".join(body)).strip() + "\n"
    return blocks


def _all_blocks():
    blocks = {}
    for path in DOCUMENTS:
        found = _markdown_blocks(path) if path.suffix == ".md" else _rst_blocks(path)
        assert not set(found) & set(blocks), f"{path.name}: block names must be unique"
        blocks.update({name: (path, code) for name, code in found.items()})
    return blocks


BLOCKS = _all_blocks()


# ------------------------------------------------------------------- data
def _split(X, y):
    return train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)


_DATA = {
    "breast_cancer": lambda: _split(*load_breast_cancer(return_X_y=True)),
    "generated": lambda: _split(*make_classification(
        n_samples=3000, n_features=12, n_informative=6, n_classes=3, random_state=0)),
}


@pytest.fixture(scope="module", params=DATASETS)
def dataset(request):
    X_train, X_test, y_train, y_test = _DATA[request.param]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = ParallelMLPClassifier(**README_SEARCH).fit(X_train, y_train)
    return request.param, (X_train, X_test, y_train, y_test), search


def _namespace(dataset):
    name, (X_train, X_test, y_train, y_test), search = dataset
    return {
        "X": X_train, "y": y_train, "X_train": X_train, "y_train": y_train,
        "X_test": X_test, "y_test": y_test,
        "patients": np.arange(len(X_train)) % 20,  # 20 groups
        # blocks may change it: each gets its own
        "search": copy.deepcopy(search),
        "ParallelMLPClassifier": ParallelMLPClassifier, "np": np, "pandas": pandas,
        "torch": torch, "skpmlp": skpmlp,
    }


class Run:
    """A block's run: its expression statements' values, its namespace
    after the last statement, the warnings it raised and the data set."""

    def __init__(self, code, namespace, data):
        self.namespace, self.data = namespace, data
        self.small = len(namespace["X"]) <= 2000
        self.values, self._read = [], set()  # per expression statement
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for node in ast.parse(code).body:
                if isinstance(node, ast.Expr):
                    value = eval(compile(ast.Expression(node.value), "<doc>", "eval"), namespace)
                    self.values.append((ast.get_source_segment(code, node), value))
                else:
                    exec(compile(ast.Module([node], []), "<doc>", "exec"), namespace)
        self.warnings = caught

    def each(self, source):
        """The values of every expression statement ``source`` (its code
        without a trailing comment), in order, marked as checked."""
        found = [i for i, (code, _) in enumerate(self.values) if code == source]
        assert found, f"no expression statement {source!r}"
        self._read.update(found)
        return [self.values[i][1] for i in found]

    def __getitem__(self, source):
        """The value of the one expression statement ``source``, marked as checked."""
        [value] = self.each(source)
        return value

    def unchecked(self):
        return [code for i, (code, _) in enumerate(self.values) if i not in self._read]

    def future_warnings(self):
        return [str(w.message) for w in self.warnings if issubclass(w.category, FutureWarning)]


# ------------------------------------------------------------ the checks
def _check_standalone(model, run, row=None):
    """An exported model: what ``export_model(row)`` promises for the data
    set's side of the threshold, and it predicts, converts and saves."""
    search, X_test = run.namespace["search"], run.namespace["X_test"]
    if run.small and row is not None:  # 5 folds, nothing refitted: the fold ensemble
        assert type(model) is MLPEnsembleClassifier and len(model.estimators_) == 5
        assert_array_equal(model.predict_proba(X_test),
                           search.export_model(row, fold="all").predict_proba(X_test))
    elif row is not None:  # the holdout: the model trained on its training part
        assert type(model) is SingleMLPClassifier
        assert model.get_params()["hidden_layer_sizes"] == (
            search.cv_results_["params"][row]["hidden_layer_sizes"])
    proba = model.predict_proba(X_test)
    assert proba.shape == (len(X_test), len(np.unique(run.namespace["y"])))
    assert_allclose(proba.sum(axis=1), 1)
    path = Path("exported.npz")
    skpmlp.io.save(model, path)
    assert_array_equal(skpmlp.io.load(path).predict_proba(X_test), proba)


def _check_readme_search(run):
    search, X_test, y_test = (run.namespace[k] for k in ("search", "X_test", "y_test"))
    assert search.n_models_ == 144  # "72 models on each of 2 input transforms"
    best = search.best_estimator_
    if run.small:  # 5 folds; a greedy ensemble of fold ensembles, with a FutureWarning
        assert search.cv_ == 5
        members = best.estimators_ if hasattr(best.estimators_[0], "estimators_") else [best]
        assert all(len(member.estimators_) == 5 for member in members)
        [message] = run.future_warnings()
        assert "cv='auto' trains 5 folds" in message
    else:  # the holdout: the best configuration refitted
        assert search.cv_ is None and type(best) is SingleMLPClassifier
        assert run.future_warnings() == []
    return search, X_test, y_test


def _check_use_block(run):
    search, X_test, y_test = _check_readme_search(run)
    params, score = run["search.best_params_, search.best_score_"]
    assert params == search.cv_results_["params"][search.best_index_]
    assert set(params) == {"hidden_layer_sizes", "activation", "learning_rate_init", "alpha",
                           "input_transform"}
    assert score == search.cv_results_["mean_test_score"][search.best_index_]
    prediction = run["search.predict(X_test)"]
    assert_array_equal(prediction, search.best_estimator_.predict(X_test))
    majority = np.bincount(y_test).max() / len(y_test)
    assert np.mean(prediction == y_test) > majority + 0.05
    if any(code.startswith("pandas") for code, _ in run.values):  # not in docs/index.rst
        table = run["pandas.DataFrame(search.cv_results_)"]
        assert len(table) == 144
        splits = [f"split{k}_test_score" for k in range(5 if run.small else 1)]
        for column in ["params", "mean_fit_time", "mean_score_time", "param_activation",
                       "mean_test_score", "std_test_score", "rank_test_score", *splits]:
            assert column in table.columns, column
    model = run["search.export_model(7)"]
    _check_standalone(model, run, row=7)


def _check_adaptive(run):
    search = run.namespace["search"]
    results = search.cv_results_
    assert 60 < len(results["params"]) <= 300  # refilled slots, capped by max_models
    assert set(results["params"][0]) >= {"learning_rate_init", "alpha"}
    assert len(search.hyperparameter_schedules_) == len(results["params"])
    assert np.asarray(results["pruned"]).any() and (np.asarray(results["parent"]) >= 0).any()


def _check_checkpoint(run):
    first, again = run.each("search.fit(X, y)")
    assert first is again is run.namespace["search"]
    assert Path("search.ckpt").is_file()
    # a finished checkpoint: the second fit returns what the first trained, at once
    fresh = ParallelMLPClassifier(**{**first.get_params(), "checkpoint": None})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh.fit(run.namespace["X"], run.namespace["y"])
    assert_array_equal(fresh.cv_results_["mean_test_score"], again.cv_results_["mean_test_score"])
    X_test = run.namespace["X_test"]
    assert_array_equal(fresh.predict_proba(X_test), again.predict_proba(X_test))
    # "returns at once": a fit on the finished checkpoint trains no epoch
    # (checked by what it runs, not by a wall clock on a loaded machine)
    def no_training(*args, **kwargs):
        raise AssertionError("a finished checkpoint trained again")

    with mock.patch.object(FusedRun, "advance", no_training):
        again.fit(run.namespace["X"], run.namespace["y"])
    assert_array_equal(fresh.predict_proba(X_test), again.predict_proba(X_test))


def _check_cv_folds(run):
    search = run.namespace["search"]
    column = run['search.cv_results_["split3_test_score"]']
    assert len(column) == search.n_models_ == 16 and np.isfinite(column).all()
    best = run["search.best_estimator_"]
    members = best.estimators_ if hasattr(best.estimators_[0], "estimators_") else [best]
    assert all(len(member.estimators_) == 5 for member in members)
    model = run["search.export_model(7, fold=2)"]
    expected = search.cv_results_["params"][7]
    assert type(model) is SingleMLPClassifier
    assert (model.hidden_layer_sizes, model.activation) == (
        expected["hidden_layer_sizes"], expected["activation"])
    # fold 2's replica: it scores fold 2's test rows as split2_test_score says
    X, y = run.namespace["X"], run.namespace["y"]
    _, test = list(check_cv(search.cv_, y, classifier=True).split(X, y))[2]
    assert model.score(X[test], y[test]) == pytest.approx(
        search.cv_results_["split2_test_score"][7])


def _check_cv_groups(run):
    search, patients = run.namespace["search"], run.namespace["patients"]
    assert search.n_splits_ == 5 and search.n_models_ == 16
    # GroupKFold: each fold replica's training rows hold no patient of its test rows
    X, y = run.namespace["X"], run.namespace["y"]
    from sklearn.model_selection import GroupKFold
    for train, test in GroupKFold(5).split(X, y, patients):
        assert not set(patients[train]) & set(patients[test])


def _check_cv_greedy(run):
    search = run.namespace["search"]
    rows, weights = run["search.ensemble_indices_, search.ensemble_weights_"]
    assert len(rows) == len(weights) >= 1 and weights.sum() == pytest.approx(1)
    assert np.all(np.diff(weights) <= 0)  # the most weighted first
    score = run["search.ensemble_score_"]
    assert score >= np.nanmax(search.cv_results_["mean_test_score"]) - 0.05
    best = run["search.best_estimator_"]
    assert type(best) is MLPEnsembleClassifier
    # one member: the ensemble is that member's fold ensemble itself
    first = best.estimators_[0] if len(rows) > 1 else best
    if len(rows) > 1:  # normalised once more: to rounding
        assert_allclose(best.weights_, weights, rtol=1e-12)
    member = run['search.export_model(search.ensemble_indices_[0], fold="all")']
    X_test = run.namespace["X_test"]
    assert_array_equal(member.predict_proba(X_test), first.predict_proba(X_test))


def _check_fused_cross_validate(run):
    results, search = run.namespace["results"], run.namespace["search"]
    assert len(results["params"]) == search.n_models_
    for key in ("split4_test_accuracy", "mean_test_f1_macro", "rank_test_accuracy"):
        assert key in results
    assert np.nanmean(results["mean_test_accuracy"]) > 0.5


def _check_halving(run):
    table = run['results.groupby("pruned")["n_iter"].describe()']
    assert set(table.index) == {False, True}
    # rungs at epochs 5, 15, 45: pruned models stopped at one of them
    pruned = run.namespace["results"].query("pruned")["n_iter"]
    assert set(pruned) <= {5, 15, 45}
    assert table.loc[False, "count"] + table.loc[True, "count"] == 144


def _check_restore_best_weights(run):
    best = run["search.best_epoch_per_model_"]
    n_iter = run.namespace["search"].n_iter_per_model_
    assert best.shape == n_iter.shape == (8, 5)
    assert (best >= 1).all() and (best <= n_iter).all()


def _check_data_parallel(run):
    # inside a process group of one rank: each fit trains alone on all rows,
    # the search the namespace started from, again
    second, original = run.namespace["search"], _namespace_search(run)
    assert run.values == []  # the fits are inside with blocks: statements, not expressions
    assert all("world_size" not in shard for shard in second.shards_)
    assert_array_equal(second.cv_results_["mean_test_score"],
                       original.cv_results_["mean_test_score"])


def _check_saving_io(run):
    loaded = run.namespace["search"]
    assert run['skpmlp.io.save(search, "search.npz")'] is None
    assert Path("search.npz").is_file()
    prediction = run["search.predict(X_test)"]
    assert type(loaded) is ParallelMLPClassifier
    original = _namespace_search(run)
    assert_array_equal(prediction, original.predict(run.namespace["X_test"]))


def _namespace_search(run):
    """The fitted README search the block started from (before ``load``)."""
    return run.namespace["__original_search__"]


def _check_warm_start(run):
    fitted, continued = run.each("search.fit(X, y)")
    assert fitted is not continued  # the second is the loaded search
    assert run['skpmlp.io.save(search, "search.npz")'] is None
    n_iter = run["search.n_iter_per_model_"]
    results = run["search.cv_results_"]
    search = run.namespace["search"]
    assert n_iter.shape == (search.n_models_, 5)
    # 50 epochs, then 50 more for every model that did not converge
    assert n_iter.max() == 100 and n_iter.min() >= 2
    assert len(results["params"]) == search.n_models_


def _check_export(run):
    model, X_test = run.namespace["model"], run.namespace["X_test"]
    _check_standalone(model, run, row=7)
    mlp = run.namespace["mlp"]
    # the default input transform: a Pipeline of the fitted scaler and the MLP
    if run.small:
        assert type(mlp) is VotingClassifier
        assert all(type(member) is Pipeline for member in mlp.estimators_)
    else:
        assert type(mlp) is Pipeline and type(mlp[-1]) is MLPClassifier
    assert_array_equal(run["mlp.predict(X_test)"], model.predict(X_test))
    logits = run.namespace["logits"].detach().numpy()
    # the block's network takes X_test in float32: a member on quantile-
    # transformed inputs maps the rounding of a value between two close
    # quantiles up to ~1e3 times larger (the transform's steepest parts)
    atol = 1e-4
    if run.small:  # an ensemble's module gives its probabilities
        assert_allclose(logits, model.predict_proba(X_test), atol=atol)
    else:
        assert_allclose(torch.softmax(torch.as_tensor(logits), 1).numpy(),
                        model.predict_proba(X_test), atol=atol)


def _constructor_check(n_models):
    """A block that only constructs a search: fitted for one epoch, it
    trains as many configurations as its comment says."""

    def check(run):
        [(source, _)] = run.values
        search = run[source]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.set_params(max_iter=1).fit(run.namespace["X"], run.namespace["y"])
        assert len(search.cv_results_["params"]) == n_models

    return check


def _check_sklearn_space(run):
    """``sklearn_mlp_params()`` sets scikit-learn's values of the three
    parameters whose search defaults differ, and the grid's 4 models train."""
    search = run.namespace["search"]
    params = search.get_params()
    assert {name: params[name] for name in ("input_transform", "dropout", "beta_2")} == {
        "input_transform": "none", "dropout": 0.0, "beta_2": 0.999}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.set_params(max_iter=1).fit(run.namespace["X"], run.namespace["y"])
    assert len(search.cv_results_["params"]) == 4


def _check_target_scale(run):
    """The search standardises the target while its models train: the same
    search as on the target in its first units, predictions in the
    target's own units."""
    search, X_reg = run.namespace["search"], run.namespace["X_reg"]
    prices, y_reg = run.namespace["prices"], run.namespace["y_reg"]
    best = run["search.best_params_"]
    assert set(best) == {"hidden_layer_sizes", "activation", "learning_rate_init", "alpha",
                         "input_transform"}
    assert search.target_transform == "standard"
    predictions = search.predict(X_reg)
    assert 100_000 < predictions.mean() < 200_000  # the target's own units
    assert search.score(X_reg, prices) > 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = skpmlp.ParallelMLPRegressor(random_state=0, max_iter=50).fit(X_reg, y_reg)
    assert same.best_params_ == best
    assert_allclose(search.cv_results_["mean_test_score"], same.cv_results_["mean_test_score"],
                    rtol=0, atol=1e-6)


def _check_input_transform(run):
    search, X_test = run.namespace["search"], run.namespace["X_test"]
    assert search.n_models_ == 6
    best = run['pandas.DataFrame(search.cv_results_).groupby("param_input_transform")'
               '["mean_test_score"].max()']
    assert sorted(best.index) == ["none", "robust-smooth-clip", "standard"]
    assert np.isfinite(best.to_numpy()).all()
    if run.data == "breast_cancer":  # features of scales 1e-3 to 1e3: scaling matters
        assert max(best["standard"], best["robust-smooth-clip"]) > best["none"]
    assert search.predict(X_test).shape == (len(X_test),)


def _check_diagonal_scaling(run):
    search, X_test = run.namespace["search"], run.namespace["X_test"]
    assert search.n_models_ == 8
    best = run['pandas.DataFrame(search.cv_results_).groupby("param_diagonal_scaling")'
               '["mean_test_score"].max()']
    assert sorted(best.index) == [False, True] and np.isfinite(best.to_numpy()).all()
    assert search.predict(X_test).shape == (len(X_test),)


def _check_class_weight(run):
    search = run.namespace["search"]
    assert search.class_weight == "balanced" and search.n_models_ == 16
    assert search.scorer_._score_func.__name__ == "balanced_accuracy_score"


CHECKS = {
    "readme-use": _check_use_block,
    "index-use": _check_use_block,
    "adaptive-refill": _check_adaptive,
    "checkpoints-resume": _check_checkpoint,
    "cv-folds": _check_cv_folds,
    "cv-groups": _check_cv_groups,
    "cv-greedy": _check_cv_greedy,
    "cv-fused-cross-validate": _check_fused_cross_validate,
    "halving-search": _check_halving,
    "restore-best-weights": _check_restore_best_weights,
    "gpus-data-parallel": _check_data_parallel,
    "saving-io": _check_saving_io,
    "saving-warm-start": _check_warm_start,
    "saving-export": _check_export,
    "space-grid": _constructor_check(216),
    "space-random": _constructor_check(2000),
    "space-param-grid": _constructor_check(16),
    "space-solvers": _constructor_check(64),
    "space-realmlp": _constructor_check(32),
    "space-dropout": _constructor_check(12),
    "space-class-weight": _check_class_weight,
    "space-input-transform": _check_input_transform,
    "space-sklearn": _check_sklearn_space,
    "space-target-scale": _check_target_scale,
    "space-diagonal-scaling": _check_diagonal_scaling,
}

#: Blocks that cannot run in the test suite, and why.
FRAGMENTS = {
    "gpus-dask": "connects to an existing Dask cluster at 'tcp://scheduler-host:8786' "
                 "(tests/execution/test_distributed.py runs a real local one)",
    "gpus-torchrun": "a script for torchrun that initialises an NCCL process group on GPUs "
                     "and reads load_my_data() (tests/execution/test_distributed.py runs gloo ranks)",
}

#: Blocks that need a device the machine may not have.
NEEDS_CUDA = {"gpus-cuda"}

#: Blocks that run inside a ``torch.distributed`` process group (gloo, one
#: rank, rendezvous through a file: no network).
NEEDS_PROCESS_GROUP = {"gpus-data-parallel"}


def _check_cuda(run):
    search = run["search.fit(X, y)"]
    devices = [shard["device"] for shard in search.shards_]
    assert all(device.startswith("cuda") for device in devices)
    if torch.cuda.device_count() > 1:  # shard i trains on cuda:i
        assert sorted(devices) == [f"cuda:{i}" for i in range(torch.cuda.device_count())]


CHECKS["gpus-cuda"] = _check_cuda


def test_every_block_is_checked_or_a_named_fragment():
    assert sorted(BLOCKS) == sorted([*CHECKS, *FRAGMENTS])
    assert not set(CHECKS) & set(FRAGMENTS)


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_doc_block(name, dataset, tmp_path, monkeypatch):
    if name in FRAGMENTS:
        pytest.skip(f"{name} is a fragment: {FRAGMENTS[name]}")
    if name in NEEDS_CUDA and not torch.cuda.is_available():
        pytest.skip(f"{name} trains on CUDA, which this machine lacks")
    monkeypatch.chdir(tmp_path)  # the files blocks write (search.npz, search.ckpt)
    namespace = _namespace(dataset)
    namespace["__original_search__"] = copy.deepcopy(namespace["search"])
    path, code = BLOCKS[name]
    if name in NEEDS_PROCESS_GROUP:
        torch.distributed.init_process_group(
            "gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        run = Run(code, namespace, dataset[0])
    finally:
        if name in NEEDS_PROCESS_GROUP:
            torch.distributed.destroy_process_group()
    CHECKS[name](run)
    assert run.unchecked() == [], f"{path.name} {name}: expressions nobody checked"
