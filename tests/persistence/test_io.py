"""Saving and loading fitted estimators as data, without pickle."""

import builtins
import collections
import copy
import io
import json
import os
import pickle
import socket
import warnings
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.stats import loguniform, randint, uniform
from sklearn.base import BaseEstimator, clone
from sklearn.datasets import load_iris, make_multilabel_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import (
    KFold,
    PredefinedSplit,
    RepeatedStratifiedKFold,
    ShuffleSplit,
    StratifiedKFold,
)
from sklearn.preprocessing import StandardScaler

import skpmlp.io
from skpmlp import (
    LayerSizesDistribution,
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)

FAST = dict(max_iter=15, learning_rate_init=0.01, random_state=0)


def _iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _iris_strings():
    X, y = _iris()
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


def _iris_frame():
    pd = pytest.importorskip("pandas")
    X, y = _iris_strings()
    return pd.DataFrame(X, columns=["sl", "sw", "pl", "pw"]), pd.Series(y, dtype=object)


def _regression():
    X, y = make_regression(n_samples=90, n_features=4, n_targets=2, noise=1.0, random_state=0)
    return X, y / y.std()


def _raw_iris():
    X, y = load_iris(return_X_y=True)
    return X * [1, 10, 100, 1000], y


def _raw_regression():
    X, y = _regression()
    return X * [1, 50, 0.1, 3] + 20, y


def _multilabel():
    X, Y = make_multilabel_classification(n_samples=90, n_features=5, n_classes=3, random_state=0)
    return StandardScaler().fit_transform(X), Y


#: name -> (estimator, data): every kind of fitted state the file must hold
CASES = {
    "clf_holdout": (lambda: ParallelMLPClassifier([(8,), (4, 4)], ("relu", "tanh"), **FAST), _iris),
    "clf_cv": (
        lambda: ParallelMLPClassifier((8,), ("relu", "gelu"), cv=3, n_repeats=2, **FAST), _iris_strings,
    ),
    "clf_cv_no_refit": (
        lambda: ParallelMLPClassifier((8,), "tanh", alpha=(1e-4, 1e-2), cv=3, refit=False, **FAST), _iris,
    ),
    "clf_multimetric": (
        lambda: ParallelMLPClassifier(
            (8,), ("relu", "sigmoid"), cv=3, scoring={"acc": "accuracy", "f1": "f1_macro"},
            refit="f1", return_train_score=True, **FAST,
        ),
        _iris_frame,
    ),
    "clf_multimetric_list_no_refit": (
        lambda: ParallelMLPClassifier(
            (8,), "relu", scoring=["accuracy", "balanced_accuracy"], refit=False, **FAST,
        ),
        _iris,
    ),
    "reg_holdout_early_stopping": (
        lambda: ParallelMLPRegressor(
            [(8,), (16,)], "tanh", early_stopping=True, dtype="float64",
            random_state=np.random.RandomState(3), max_iter=15,
        ),
        _regression,
    ),
    "reg_cv_scoring": (
        lambda: ParallelMLPRegressor((8,), "relu", cv=3, scoring="neg_mean_squared_error", **FAST),
        _regression,
    ),
    "clf_cv_splitter": (
        lambda: ParallelMLPClassifier((8,), "relu", cv=KFold(3, shuffle=True, random_state=0), **FAST),
        _iris,
    ),
    "clf_ensemble": (
        lambda: ParallelMLPClassifier([(4,), (8,)], ("relu", "tanh"), ensemble_size=3, **FAST), _iris_strings,
    ),
    "reg_cv_splitter_ensemble": (
        lambda: ParallelMLPRegressor(
            [(4,), (8,)], "tanh", cv=ShuffleSplit(2, test_size=0.3, random_state=0), ensemble_size=2, **FAST,
        ),
        _regression,
    ),
    "clf_multilabel_cv_ensemble": (
        lambda: ParallelMLPClassifier([(4,), (8,)], "tanh", cv=3, ensemble_size=2, **FAST), _multilabel,
    ),
    "clf_cv_greedy": (
        lambda: ParallelMLPClassifier([(4,), (8,)], ("relu", "tanh"), cv=3, ensemble="greedy", **FAST),
        _iris_strings,
    ),
    "reg_cv_folds": (
        lambda: ParallelMLPRegressor([(4,), (8,)], "tanh", cv="auto", ensemble="folds", **FAST), _regression,
    ),
    "reg_holdout_greedy": (
        lambda: ParallelMLPRegressor([(4,), (8,)], ("relu", "tanh"), ensemble="greedy", **FAST), _regression,
    ),
    "clf_sampled_conditional": (
        lambda: ParallelMLPClassifier(
            LayerSizesDistribution(depths=[1, 2], widths=loguniform(3, 12)), ("relu", "tanh"),
            learning_rate_init=loguniform(1e-3, 1e-1), n_models=6, cv=2,
            param_grid=[{"alpha": uniform(0, 1e-2)}, {"activation": ["elu"], "hidden_layer_sizes": randint(4, 9)}],
            max_iter=15, random_state=0,
        ),
        _iris,
    ),
    # input transforms: fitted per fold, refitted, in a fold ensemble's members
    "clf_cv_inputs": (
        lambda: ParallelMLPClassifier(
            [(4,), (8,)], "tanh", cv=3, ensemble="best",
            input_transform=["none", "standard", "robust-smooth-clip", "quantile"], **FAST,
        ),
        _raw_iris,
    ),
    "reg_holdout_inputs_greedy": (
        lambda: ParallelMLPRegressor(
            [(4,), (8,)], "relu", ensemble="greedy", input_transform=["standard", "robust-smooth-clip"],
            **FAST,
        ),
        _raw_regression,
    ),
    "clf_cv_folds_robust": (
        lambda: ParallelMLPClassifier((4,), "tanh", cv=3, ensemble="folds",
                                      input_transform="robust-smooth-clip", **FAST),
        _raw_iris,
    ),
    "single_clf_standard": (lambda: SingleMLPClassifier((8,), "tanh", input_transform="standard",
                                                        **FAST), _raw_iris),
    "single_reg_robust": (lambda: SingleMLPRegressor((8,), "tanh", input_transform="robust-smooth-clip",
                                                     **FAST), _raw_regression),
    "single_clf": (lambda: SingleMLPClassifier((8, 4), "mish", **FAST), _iris_strings),
    "single_clf_multilabel": (lambda: SingleMLPClassifier((8,), "relu", **FAST), _multilabel),
    "single_reg": (lambda: SingleMLPRegressor((8,), "tanh", **FAST), _regression),
}


SEARCHES = sorted(name for name in CASES if not name.startswith("single"))


@pytest.fixture(scope="module")
def saved_cases(tmp_path_factory):
    """``name -> (fitted, loaded, X, y, path)``, each case fitted and saved once."""
    cache = {}

    def get(name):
        if name not in cache:
            make, data = CASES[name]
            X, y = data()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = make().fit(X, y)
            path = tmp_path_factory.mktemp("io") / "model.skpmlp"
            skpmlp.io.save(fitted, path)
            cache[name] = fitted, skpmlp.io.load(path), X, y, path
        return cache[name]

    return get


@pytest.fixture(params=sorted(CASES))
def case(request, saved_cases):
    """Every estimator kind, fitted, saved and loaded."""
    return saved_cases(request.param)


@pytest.fixture(params=SEARCHES)
def search_case(request, saved_cases):
    """The searches (ParallelMLP*) among the cases."""
    return saved_cases(request.param)


def assert_same(actual, expected, where="estimator"):
    """Equal values of the same types, recursively (NaN equals NaN)."""
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, BaseEstimator):
        assert_same(actual.get_params(deep=False), expected.get_params(deep=False), f"{where}.params")
        # attribute order is not state (rebuilt attributes come last)
        assert sorted(vars(actual)) == sorted(vars(expected)), where
        for name in vars(expected):
            assert_same(vars(actual)[name], vars(expected)[name], f"{where}.{name}")
    elif isinstance(expected, np.ma.MaskedArray):
        assert_array_equal(np.ma.getmaskarray(actual), np.ma.getmaskarray(expected))
        assert_same(np.ma.getdata(actual), np.ma.getdata(expected), f"{where}.data")
        assert_same(actual.fill_value, expected.fill_value, f"{where}.fill_value")
    elif isinstance(expected, np.ndarray):
        assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), where
        if expected.dtype.hasobject:
            for i, (a, e) in enumerate(zip(actual.ravel(), expected.ravel())):
                assert_same(a, e, f"{where}[{i}]")
        else:
            assert_array_equal(actual, expected, err_msg=where)
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{where}[{i}]")
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), where
        for key in expected:
            assert_same(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, np.random.RandomState):
        assert_same(actual.get_state(), expected.get_state(), where)
    elif isinstance(expected, (float, np.floating)) and np.isnan(expected):
        assert np.isnan(actual), where
    elif isinstance(expected, LayerSizesDistribution):
        assert_same(vars(actual), vars(expected), where)
    elif hasattr(expected, "rvs"):
        # a scipy.stats distribution is stored as its name and arguments
        assert (actual.dist.name, actual.args, actual.kwds) == (expected.dist.name, expected.args, expected.kwds), where
    elif callable(expected) or hasattr(expected, "get_n_splits"):
        # scorers and splitters are rebuilt, not stored: same kind and settings
        assert repr(actual) == repr(expected), where
    else:
        assert actual == expected, where


def _without_host_info(search):
    """A shallow copy of ``search`` as a file saved by default holds it."""
    expected = copy.copy(search)
    expected.shards_ = [dict(s, host=None, pid=None, worker=None) for s in search.shards_]
    return expected


def _saved_estimator(document):
    """The fields (class, params, state, derived) of the estimator a
    file's document holds."""
    return document["estimator"]["$estimator"]


def test_round_trip_keeps_params_and_every_fitted_attribute(case):
    fitted, loaded, *_ = case
    assert_same(loaded, _without_host_info(fitted) if hasattr(fitted, "shards_") else fitted)


def test_host_info_is_left_out_by_default(search_case):
    fitted, loaded, *_, path = search_case
    with np.load(path, allow_pickle=False) as archive:
        document = json.loads(archive["__document__"].tobytes())
    saved = _saved_estimator(document)["state"]["shards_"]
    assert [{k: s[k] for k in ("host", "pid", "worker")} for s in saved] == [
        {"host": None, "pid": None, "worker": None}
    ] * len(fitted.shards_)
    # the fields that name no machine are kept
    assert [s["models"] for s in loaded.shards_] == [s["models"] for s in fitted.shards_]
    assert [s["device"] for s in loaded.shards_] == [s["device"] for s in fitted.shards_]


def test_host_info_is_kept_on_request(saved_cases, tmp_path):
    fitted, *_ = saved_cases("clf_holdout")
    skpmlp.io.save(fitted, tmp_path / "model.npz", include_host_info=True)
    loaded = skpmlp.io.load(tmp_path / "model.npz")
    assert loaded.shards_ == fitted.shards_
    assert loaded.shards_[0]["host"] == socket.gethostname()
    assert loaded.shards_[0]["pid"] == os.getpid()


def test_round_trip_predicts_the_same(case):
    fitted, loaded, X, y, _ = case
    if getattr(fitted, "refit", True) is False:
        assert not hasattr(loaded, "predict") and not hasattr(fitted, "predict")
        return
    assert_array_equal(loaded.predict(X), fitted.predict(X))
    if hasattr(fitted, "predict_proba"):
        assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
    assert loaded.score(X, y) == fitted.score(X, y)


def test_round_trip_keeps_the_search_results(search_case):
    fitted, loaded, X, _, _ = search_case
    assert_same(loaded.cv_results_, fitted.cv_results_, "cv_results_")
    assert list(loaded.cv_results_["params"][0].values())[0].__class__ is tuple
    if getattr(fitted, "best_index_", None) is not None:
        assert_same(loaded.best_params_, fitted.best_params_)
        assert loaded.best_score_ == fitted.best_score_
    if fitted.refit:
        assert_same(loaded.best_estimator_, fitted.best_estimator_)
        assert_array_equal(loaded.best_estimator_.predict(X), fitted.best_estimator_.predict(X))


@pytest.mark.parametrize("index", [0, -1])
def test_export_model_after_load(search_case, index):
    fitted, loaded, X, _, _ = search_case
    index %= fitted.n_models_
    fold = None if fitted.cv is None else fitted.n_splits_ - 1
    assert_same(loaded.export_model(index, fold=fold), fitted.export_model(index, fold=fold))
    assert_array_equal(
        loaded.export_model(index, fold=fold).predict(X), fitted.export_model(index, fold=fold).predict(X)
    )


def test_rebuilt_scorer_scores_the_same(search_case):
    fitted, loaded, X, y, _ = search_case
    scorers = loaded.scorer_ if loaded.multimetric_ else {"score": loaded.scorer_}
    expected = fitted.scorer_ if fitted.multimetric_ else {"score": fitted.scorer_}
    model = loaded.export_model(0, fold=0)
    for key in expected:
        assert scorers[key](model, X, y) == expected[key](model, X, y)


def test_file_is_plain_arrays_and_json(case):
    path = case[-1]
    assert path.name == "model.skpmlp"  # no ".npz" appended
    with zipfile.ZipFile(path) as archive:
        assert all(name.endswith(".npy") for name in archive.namelist())
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    assert not any(member.dtype.hasobject for member in members.values())
    document = json.loads(members["__document__"].tobytes())
    assert document["version"] == skpmlp.io.FORMAT_VERSION
    assert _saved_estimator(document)["class"] == type(case[0]).__name__


# ------------------------------------------------------------ tampering
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Members of a valid file: ``(document dict, {key: array})``."""
    X, y = _iris()
    model = SingleMLPClassifier((4,), "relu", **FAST).fit(X, y)
    path = tmp_path_factory.mktemp("io") / "model.npz"
    skpmlp.io.save(model, path)
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    return json.loads(members.pop("__document__").tobytes()), members


def _write(path, document, members):
    text = json.dumps(document).encode()
    np.savez(path, __document__=np.frombuffer(text, dtype=np.uint8), **members)
    return path


class _Payload:
    """Pickling this runs code when unpickled: what a loader must never do."""

    def __reduce__(self):
        return exec, ("import builtins; builtins._skpmlp_pwned = True",)


def test_pickled_member_is_refused_unexecuted(saved, tmp_path):
    document, members = saved
    document = json.loads(json.dumps(document))
    _saved_estimator(document)["state"]["extra_"] = {"$array": ["evil", 0, [1]]}
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload()
    path = _write(tmp_path / "evil.npz", document, {**members, "evil": evil})
    with pytest.raises(ValueError, match="allow_pickle"):
        skpmlp.io.load(path)
    assert not hasattr(builtins, "_skpmlp_pwned")


def test_pickle_file_is_refused(tmp_path):
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(_Payload()))
    with pytest.raises(ValueError):
        skpmlp.io.load(path)
    assert not hasattr(builtins, "_skpmlp_pwned")


@pytest.mark.parametrize(
    "name", ["LogisticRegression", "os.system", "BaseEstimator", "_PrecomputedClassifier"]
)
def test_tampered_class_name_is_refused(saved, tmp_path, name):
    document, members = saved
    document = json.loads(json.dumps(document))
    _saved_estimator(document)["class"] = name
    with pytest.raises(ValueError, match="unknown estimator class"):
        skpmlp.io.load(_write(tmp_path / "tampered.npz", document, members))


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(version=99), "format version 99"),
        (lambda d: d.update(version=True), "format version True"),
        (lambda d: d.update(format="other"), "not a skpmlp file"),
        (
            lambda d: _saved_estimator(d)["state"].update(coefs_={"$code": "x"}),
            "unknown value type",
        ),
        (lambda d: _saved_estimator(d)["state"].update(__class__=1), "not a fitted attribute"),
        (lambda d: _saved_estimator(d)["params"].update(evil=1), "no parameters"),
        (lambda d: _saved_estimator(d)["state"].update(x_={"$array": ["none", 0, [1]]}), "malformed"),
        (
            lambda d: _saved_estimator(d)["state"].update(x_={"$scalar": {"dtype": "O", "value": 1}}),
            "dtype",
        ),
        (lambda d: _saved_estimator(d)["derived"].append("coefs_"), "derived"),
    ],
)
def test_tampered_document_is_refused(saved, tmp_path, edit, message):
    document, members = saved
    document = json.loads(json.dumps(document))
    edit(document)
    with pytest.raises(ValueError, match=message):
        skpmlp.io.load(_write(tmp_path / "tampered.npz", document, members))


def test_other_skpmlp_version_warns(saved, tmp_path):
    document, members = saved
    document = json.loads(json.dumps(document))
    document["skpmlp_version"] = "0.0.1"
    path = _write(tmp_path / "old.npz", document, members)
    with pytest.warns(skpmlp.io.InconsistentVersionWarning) as record:
        loaded = skpmlp.io.load(path)
    message = str(record[0].message)
    assert f"SingleMLPClassifier saved with skpmlp 0.0.1 into skpmlp {skpmlp.__version__}" in message
    assert (record[0].message.saved_version, record[0].message.current_version) == (
        "0.0.1", skpmlp.__version__,
    )
    assert issubclass(skpmlp.io.InconsistentVersionWarning, UserWarning)
    assert str(pickle.loads(pickle.dumps(record[0].message))) == message
    assert isinstance(loaded, SingleMLPClassifier)


def test_same_skpmlp_version_loads_silently(saved, tmp_path):
    path = _write(tmp_path / "same.npz", *saved)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        skpmlp.io.load(path)


def test_other_files_are_refused(tmp_path):
    np.save(tmp_path / "array.npy", np.arange(3))
    with pytest.raises(ValueError, match="not an .npz archive"):
        skpmlp.io.load(tmp_path / "array.npy")
    np.savez(tmp_path / "plain.npz", x=np.arange(3))
    with pytest.raises(ValueError, match="not a skpmlp file"):
        skpmlp.io.load(tmp_path / "plain.npz")


# ----------------------------------------------------------- save errors
@pytest.mark.parametrize(
    "estimator",
    [ParallelMLPClassifier(), ParallelMLPRegressor(), SingleMLPClassifier(), SingleMLPRegressor()],
    ids=lambda e: type(e).__name__,
)
def test_unfitted_estimator_is_refused(estimator, tmp_path):
    with pytest.raises(NotFittedError):
        skpmlp.io.save(estimator, tmp_path / "model.npz")


def test_foreign_estimator_is_refused(tmp_path):
    X, y = _iris()
    with pytest.raises(TypeError, match="only the estimators of the skpmlp package"):
        skpmlp.io.save(LogisticRegression().fit(X, y), tmp_path / "model.npz")


@pytest.mark.parametrize(
    "scoring", [make_scorer(accuracy_score), {"acc": make_scorer(accuracy_score), "f1": "f1_macro"}],
    ids=["callable", "dict_with_callable"],
)
def test_callable_scoring_is_refused(scoring, tmp_path):
    X, y = _iris()
    refit = "acc" if isinstance(scoring, dict) else True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = ParallelMLPClassifier((4,), "relu", scoring=scoring, refit=refit, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="scoring=.*holds a callable"):
        skpmlp.io.save(search, tmp_path / "model.npz")


@pytest.fixture(scope="module")
def single():
    X, y = _iris()
    return SingleMLPClassifier((4,), "tanh", **FAST).fit(X, y), X


@pytest.mark.parametrize(
    "value, where",
    [
        (object(), r"estimator\.extra_"),
        ({"a": [1, lambda x: x]}, r"estimator\.extra_\['a'\]\[1\]"),
        (np.array([1, object()], dtype=object), r"estimator\.extra_\[1\]"),
        ([0, collections.namedtuple("Pair", "a b")(1, 2)], r"estimator\.extra_\[1\]: .*Pair"),
    ],
    ids=["object", "nested_function", "object_array_item", "namedtuple"],
)
def test_attribute_that_is_not_data_is_named(single, value, where, tmp_path):
    model, _ = single
    model.extra_ = value
    try:
        with pytest.raises(TypeError, match=where):
            skpmlp.io.save(model, tmp_path / "model.npz")
    finally:
        del model.extra_


# -------------------------------------------------- generic attribute values
def _masked():
    column = np.ma.MaskedArray(np.empty(3, dtype=object), mask=[False, True, False])
    column[0], column[2] = (64, 32), "relu"
    return column


def _object_array():
    array = np.empty((2, 2), dtype=object)
    array[:] = [[(1, 2), "a"], [None, np.float32(0.5)]]
    return array


VALUES = {
    "none": None,
    "nan": float("nan"),
    "inf": float("inf"),
    "minus_inf": -float("inf"),
    "big_int": 2**70,
    "bool": True,
    "numpy_scalars": [
        np.float32(1.5), np.int64(-3), np.bool_(False), np.str_("x"), np.float64("nan"),
        np.uint64(2**64 - 1),
    ],
    "tuple_vs_list": ((1, [2, (3,)]), [(), []]),
    "int_and_str_keys": {1: "a", "b": (2,), (3, 4): None},
    "reserved_key": {"__type__": "not a tag"},
    "dollar_keys": {"$array": "a plain string", "$x": [1]},
    "arrays": [np.arange(6, dtype=np.int32).reshape(2, 3), np.array([np.nan, 1.0], dtype=np.float32),
               np.array([True, False]), np.array(["a", "bc"]), np.array(3.0), np.empty((0, 4))],
    "object_array": _object_array(),
    "masked_array": _masked(),
    "masked_numbers": np.ma.MaskedArray([1.0, 2.0], mask=[True, False], fill_value=-1.0),
    "random_state": np.random.RandomState(7),
    "set": {"accuracy", "f1"},
    "nested_estimator": SingleMLPRegressor((3,), "elu"),
    "distributions": [loguniform(1e-4, 0.1), randint(2, high=5), uniform(loc=0, scale=2),
                      LayerSizesDistribution(depths=randint(1, 3), widths=[8, 16])],
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_any_data_attribute_round_trips(single, name):
    model, X = single
    model.extra_ = VALUES[name]
    model._private = {"copy": VALUES[name]}
    buffer = io.BytesIO()
    try:
        skpmlp.io.save(model, buffer)
    finally:
        del model.extra_, model._private
    buffer.seek(0)
    loaded = skpmlp.io.load(buffer)
    assert_same(loaded.extra_, VALUES[name], "extra_")
    assert_same(loaded._private, {"copy": VALUES[name]}, "_private")
    assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_shared_arrays_are_stored_once(tmp_path):
    X, y = _iris()
    model = SingleMLPClassifier((4,), "relu", **FAST).fit(X, y)
    model.same_ = model.coefs_[0]
    skpmlp.io.save(model, tmp_path / "model.npz")
    loaded = skpmlp.io.load(tmp_path / "model.npz")
    assert loaded.same_ is loaded.coefs_[0]
    with np.load(tmp_path / "model.npz", allow_pickle=False) as archive:
        stored = sum(archive[name].size for name in archive.files if name != "__document__")
    # coefs, intercepts (2 layers each) and classes_, each once (small
    # arrays are packed into one member per dtype: count elements, not members)
    assert stored == sum(a.size for a in [*model.coefs_, *model.intercepts_, model.classes_])


# ------------------------------------------------------------ cv splitters
@pytest.mark.parametrize(
    "make_cv",
    [
        lambda y: StratifiedKFold(3, shuffle=True, random_state=1),
        # a RandomState advances as fit splits: the file keeps its current state
        lambda y: KFold(3, shuffle=True, random_state=np.random.RandomState(0)),
        lambda y: ShuffleSplit(2, test_size=0.25, train_size=None, random_state=0),
        lambda y: RepeatedStratifiedKFold(n_splits=2, n_repeats=2, random_state=0),
        lambda y: PredefinedSplit(np.arange(len(y)) % 3),
        lambda y: list(KFold(3).split(np.zeros(len(y)))),
    ],
    ids=["stratified_kfold", "kfold_random_state_instance", "shuffle_split", "repeated", "predefined",
         "list_of_splits"],
)
def test_search_with_a_splitter_round_trips(make_cv, tmp_path):
    X, y = _iris()
    fitted = ParallelMLPClassifier((4,), "relu", cv=make_cv(y), **FAST).fit(X, y)
    skpmlp.io.save(fitted, tmp_path / "model.npz")
    loaded = skpmlp.io.load(tmp_path / "model.npz")
    assert type(loaded.cv) is type(fitted.cv)
    splits = lambda cv: list(cv) if isinstance(cv, list) else list(cv.split(X, y))  # noqa: E731
    for (train, test), (train_0, test_0) in zip(splits(loaded.cv), splits(fitted.cv), strict=True):
        assert_array_equal(train, train_0)
        assert_array_equal(test, test_0)
    assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
    assert_same(loaded.cv_results_, fitted.cv_results_, "cv_results_")


class _MySplitter(KFold):
    """A splitter of another package: code, not one of scikit-learn's."""


@pytest.mark.parametrize(
    "make_cv, message",
    [
        (lambda X, y: KFold(3).split(X, y), "cv=.* is an iterable of splits .*generator"),
        (lambda X, y: iter(list(KFold(3).split(X, y))), "cv=.* is an iterable of splits"),
        (lambda X, y: _MySplitter(3), "cv=.* is a .*_MySplitter, not one of scikit-learn's splitters"),
    ],
    ids=["generator", "iterator", "other_splitter_class"],
)
def test_cv_that_is_not_data_is_refused(make_cv, message, tmp_path):
    X, y = _iris()
    search = ParallelMLPClassifier((4,), "relu", cv=make_cv(X, y), **FAST).fit(X, y)
    with pytest.raises(ValueError, match=message):
        skpmlp.io.save(search, tmp_path / "model.npz")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda cv: cv.update({"class": "GridSearchCV"}), "unknown splitter class"),
        (lambda cv: cv.update(module="os", **{"class": "system"}), "unknown splitter class"),
        (lambda cv: cv["params"].update(evil=1), "KFold has no parameters"),
        (lambda cv: cv.pop("params"), "malformed 'splitter'"),
    ],
)
def test_tampered_splitter_is_refused(saved_cases, tmp_path, edit, message):
    *_, path = saved_cases("clf_cv_splitter")
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    document = json.loads(members.pop("__document__").tobytes())
    edit(_saved_estimator(document)["params"]["cv"]["$splitter"])
    with pytest.raises(ValueError, match=message):
        skpmlp.io.load(_write(tmp_path / "tampered.npz", document, members))


# ---------------------------------------------------------- distributions
class _MyDistribution:
    """A distribution of the user's own: code, not data."""

    def rvs(self, random_state=None):
        return 0.01


def test_distribution_that_is_not_data_is_refused(tmp_path):
    X, y = _iris()
    search = ParallelMLPClassifier((4,), "relu", **{**FAST, "learning_rate_init": _MyDistribution()},
                                   n_models=2).fit(X, y)
    with pytest.raises(TypeError, match=r"estimator\.learning_rate_init: cannot save the distribution .*"
                                        r"_MyDistribution.* scipy\.stats distributions"):
        skpmlp.io.save(search, tmp_path / "model.npz")


def test_loaded_sampled_search_draws_the_same_population(saved_cases):
    fitted, loaded, X, y, _ = saved_cases("clf_sampled_conditional")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refitted = clone(loaded).fit(X, y)
    assert refitted.cv_results_["params"] == fitted.cv_results_["params"]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(name="rv_continuous"), "unknown distribution 'scipy.stats'.'rv_continuous'"),
        (lambda d: d.update(name="_distn_infrastructure"), "unknown distribution"),
        (lambda d: d.update(module="os", name="system"), "unknown distribution 'os'.'system'"),
        (lambda d: d.update(module="skpmlp", name="ParallelMLPClassifier"), "unknown distribution"),
        (lambda d: d.pop("args"), "malformed 'distribution'"),
    ],
)
def test_tampered_distribution_is_refused(saved_cases, tmp_path, edit, message):
    *_, path = saved_cases("clf_sampled_conditional")
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    document = json.loads(members.pop("__document__").tobytes())
    edit(_saved_estimator(document)["params"]["learning_rate_init"]["$distribution"])
    with pytest.raises(ValueError, match=message):
        skpmlp.io.load(_write(tmp_path / "tampered.npz", document, members))


# ------------------------------------------------------ input transforms
def test_input_transforms_round_trip(saved_cases):
    """Every model a search with input transforms exports predicts as before
    the file, through its own fold's (or refitted) transform."""
    fitted, loaded, X, _, _ = saved_cases("clf_cv_inputs")
    assert loaded._input_transforms[1]["standard"] is not fitted._input_transforms[1]["standard"]
    for i in range(fitted.n_models_):
        for fold in (None, 0, 2):
            assert_array_equal(loaded.export_model(i, fold=fold).predict_proba(X),
                               fitted.export_model(i, fold=fold).predict_proba(X))
    assert type(loaded.best_estimator_.to_sklearn()).__name__ == (
        "MLPClassifier" if loaded.best_estimator_.input_transform == "none" else "Pipeline")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda model: setattr(model, "input_transform_", None), "not a fitted StandardScaler"),
        (lambda model: model.set_params(input_transform="none"), "but input_transform is 'none'"),
        (lambda model: model.set_params(input_transform="robust-smooth-clip"),
         "not a fitted RobustSmoothClipScaler"),
        (lambda model: setattr(model.input_transform_, "scale_", np.array([1.0, np.nan])),
         "scale_ is not one finite float per feature"),
        (lambda model: setattr(model.input_transform_, "n_features_in_", 3), "takes 3 features"),
    ],
)
def test_inconsistent_input_transform_is_refused(edit, message, tmp_path):
    X, y = _raw_iris()
    model = SingleMLPClassifier((4,), input_transform="standard", **FAST).fit(X[:, :2], y)
    edit(model)
    path = tmp_path / "model.skpmlp"
    skpmlp.io.save(model, path)
    with pytest.raises(skpmlp.io.InvalidFileError, match=message):
        skpmlp.io.load(path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: setattr(t, "output_distribution", "uniform"), "output_distribution is not 'normal'"),
        (lambda t: setattr(t, "n_quantiles_", 0), "n_quantiles_ is not a positive int"),
        (lambda t: t.quantiles_.__setitem__((slice(None), 0), t.quantiles_[::-1, 0].copy()),
         "quantiles_ is not n_quantiles_ finite non-decreasing"),
        (lambda t: setattr(t, "quantiles_", t.quantiles_[:, :1]), "quantiles_ is not n_quantiles_"),
        (lambda t: t.references_.__setitem__(-1, 2.0), "references_ is not n_quantiles_ increasing"),
    ],
)
def test_inconsistent_quantile_transform_is_refused(edit, message, tmp_path):
    """A file's QuantileTransformer must be the normal one of "quantile", with
    each feature's quantiles in order and their references from 0 to 1."""
    X, y = _raw_iris()
    model = SingleMLPClassifier((4,), input_transform="quantile", **FAST).fit(X[:, :2], y)
    path = tmp_path / "model.skpmlp"
    skpmlp.io.save(model, path)
    assert_array_equal(skpmlp.io.load(path).predict_proba(X[:, :2]), model.predict_proba(X[:, :2]))
    edit(model.input_transform_)
    skpmlp.io.save(model, path)
    with pytest.raises(skpmlp.io.InvalidFileError, match=message):
        skpmlp.io.load(path)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.update({"class": "FunctionTransformer"}), "unknown transformer class"),
        (lambda t: t.update(module="os"), "unknown transformer class"),
        (lambda t: t["params"].update(evil=1), "StandardScaler has no parameters"),
        (lambda t: t["state"].update({"not_state": 1}), "not a fitted attribute name"),
    ],
)
def test_tampered_transformer_is_refused(saved_cases, tmp_path, edit, message):
    *_, path = saved_cases("single_clf_standard")
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    document = json.loads(members.pop("__document__").tobytes())
    edit(_saved_estimator(document)["state"]["input_transform_"]["$transformer"])
    with pytest.raises(ValueError, match=message):
        skpmlp.io.load(_write(tmp_path / "tampered.npz", document, members))


def test_a_regressor_saved_before_target_transform_loads_with_none(saved_cases, tmp_path):
    """A file without ``target_transform`` (written before it existed) holds
    models trained on ``y`` as given: it loads with ``"none"``, which
    trains again as that version did; its predictions are unchanged."""
    fitted, _, X, _, path = saved_cases("reg_cv_scoring")
    assert fitted.target_transform == "standard"
    with np.load(path, allow_pickle=False) as archive:
        members = {name: archive[name] for name in archive.files}
    document = json.loads(members.pop("__document__").tobytes())
    del _saved_estimator(document)["params"]["target_transform"]
    loaded = skpmlp.io.load(_write(tmp_path / "earlier.npz", document, members))
    assert loaded.target_transform == "none"
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
