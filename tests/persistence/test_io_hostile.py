"""Hostile and broken files: skpmlp.io.load refuses each with InvalidFileError.

The cases of issue #28 one by one (truncated, wrong magic or version, a
header claiming 10^12 elements, dtypes or shapes that disagree, NaN weights
in a fitted model, files that are not skpmlp's), then property-based tests:
hypothesis mutates valid files (``tests/persistence/file_mutations.py``) and every
mutation must end in InvalidFileError or a model that predicts (the same
model, for damage zip's CRC cannot see). ``benchmarks/fuzz_io.py`` runs
the same mutations on 10,000 files and measures their memory.
"""

import io
import json
import pickle
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest
from file_mutations import RAW_MUTATIONS, REBUILT_MUTATIONS, _npy, _npy_parts, members_of, rezip
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import skpmlp.io
from skpmlp import (
    MLPEnsembleClassifier,
    ParallelMLPClassifier,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp.io import InvalidFileError

FAST = dict(max_iter=5, random_state=0)


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def files(iris):
    """``{name: (bytes, estimator)}`` of valid files."""
    X, y = iris
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimators = {
            "single": SingleMLPClassifier((4,), "relu", **FAST).fit(X, y),
            "search": ParallelMLPClassifier([(4,), (3, 3)], "relu", alpha=(1e-4, 1e-2), cv=2,
                                            ensemble_size=2, **FAST).fit(X, y),
            "regressor": SingleMLPRegressor((3,), "tanh", **FAST).fit(X, X[:, 0]),
        }
    out = {}
    for name, estimator in estimators.items():
        buffer = io.BytesIO()
        skpmlp.io.save(estimator, buffer)
        out[name] = buffer.getvalue(), estimator
    return out


def _load(data):
    return skpmlp.io.load(io.BytesIO(data))


def _document(data):
    return json.loads(_npy_parts(members_of(data)["__document__.npy"])[2])


def _with_document(data, document):
    out = io.BytesIO()
    np.save(out, np.frombuffer(json.dumps(document).encode(), dtype=np.uint8))
    return rezip({**members_of(data), "__document__.npy": out.getvalue()})


def _state(document):
    """The fitted attributes of the estimator a file's document holds, encoded."""
    return document["estimator"]["$estimator"]["state"]


def _coefs_reference(data):
    """``[member, offset, shape]`` of the first layer's weights of a single model's file."""
    return _state(_document(data))["coefs_"][0]["$array"]


def _coefs_member(data):
    """Member name of the first layer's weights of a single model's file (small
    arrays share it: one member per dtype)."""
    return _coefs_reference(data)[0] + ".npy"


def _with_array(data, name, array):
    out = io.BytesIO()
    np.save(out, array)
    return rezip({**members_of(data), name: out.getvalue()})


def _with_weights(data, reference, weights):
    """The file with the array at ``reference`` replaced by ``weights`` (of
    its size) in its member, the archive rebuilt."""
    name, offset, _ = reference
    member = np.load(io.BytesIO(members_of(data)[name + ".npy"])).copy()
    member[offset:offset + weights.size] = weights.ravel()
    return _with_array(data, name + ".npy", member)


# ------------------------------------------------------------ the cases
def test_the_error_is_a_value_error_named_in_skpmlp_io():
    assert issubclass(InvalidFileError, ValueError)
    assert "InvalidFileError" in skpmlp.io.__all__


@pytest.mark.parametrize("fraction", [0.0, 0.1, 0.5, 0.9, 0.999])
def test_a_truncated_file_is_refused(files, fraction):
    data = files["single"][0]
    with pytest.raises(InvalidFileError, match="empty|damaged|truncated"):
        _load(data[: int(len(data) * fraction)])


def test_a_file_cut_inside_a_member_is_refused(files):
    """Cut before the zip directory but after the first member's bytes: the
    directory is gone, so the reader says the file is truncated."""
    data = files["single"][0]
    with pytest.raises(InvalidFileError, match="truncated"):
        _load(data[: data.rfind(b"PK\x01\x02") - 10])


@pytest.mark.parametrize(
    "start, message",
    [
        (b"XK\x03\x04", "not an .npz"),
        (b"\x93NUMPY", "single .npy array"),
        (b"\x80\x04\x95", "looks like a pickle"),
    ],
)
def test_a_wrong_magic_number_is_refused(files, start, message):
    data = files["single"][0]
    with pytest.raises(InvalidFileError, match=message):
        _load(start + data[len(start):])


def test_a_wrong_member_magic_or_npy_version_is_refused(files):
    data = files["single"][0]
    name = _coefs_member(data)
    content = members_of(data)[name]
    for bad in (b"\x93NUMPZ" + content[6:], content[:6] + b"\x07\x00" + content[8:]):
        with pytest.raises(InvalidFileError, match="not a .npy array of format"):
            _load(rezip({**members_of(data), name: bad}))


@pytest.mark.parametrize("version", [0, 3, 99, "1", "2", 1.0, 2.0, None, True])
def test_a_wrong_format_version_is_refused(files, version):
    data = files["single"][0]
    document = _document(data)
    document["version"] = version
    with pytest.raises(InvalidFileError, match="Unsupported skpmlp file format version"):
        _load(_with_document(data, document))


def test_a_header_claiming_a_trillion_elements_is_refused_before_any_allocation(files):
    data = files["single"][0]
    name = _coefs_member(data)
    major, header, payload = _npy_parts(members_of(data)[name])
    grown = header.replace(header[header.index("'shape'"):header.index(")") + 1],
                           "'shape': (1000000000000,)")
    bad = rezip({**members_of(data), name: _npy(major, grown, payload)})
    tracemalloc.start()
    try:
        # the 35 float32 weights and biases of the model, packed in one member
        message = (r"claims shape \(1000000000000,\) of float32 \(4000000000000 bytes\) but "
                   r"the member holds 140")
        with pytest.raises(InvalidFileError, match=message):
            _load(bad)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


@pytest.mark.parametrize(
    "descr, message",
    [
        ("<f8", r"claims shape \(35,\) of float64 \(280 bytes\) but the member holds 140"),
        ("<i4", "the weights are not float arrays of one dtype"),
        ("|O", "pickled data.*allow_pickle=False"),
        ("<M8[s]", "has dtype '<M8\\[s\\]'; skpmlp files hold only"),
        ("[('a', '<f4')]", "has dtype"),
    ],
)
def test_a_dtype_disagreeing_with_the_data_is_refused(files, descr, message):
    data = files["single"][0]
    name = _coefs_member(data)
    major, header, payload = _npy_parts(members_of(data)[name])
    changed = header.replace("'<f4'", repr(descr) if descr.startswith("[") is False else descr)
    with pytest.raises(InvalidFileError, match=message):
        _load(rezip({**members_of(data), name: _npy(major, changed, payload)}))


def test_shapes_disagreeing_with_the_model_are_refused(files):
    data = files["single"][0]
    document = _document(data)
    _state(document)["coefs_"][0]["$array"][2] = [4, 3]  # the first 12 of its 16 weights
    with pytest.raises(InvalidFileError, match="do not chain"):
        _load(_with_document(data, document))
    document = _document(data)
    _state(document)["n_features_in_"] = 5
    with pytest.raises(InvalidFileError, match="takes 4 features but n_features_in_ is 5"):
        _load(_with_document(data, document))
    document = _document(data)
    _state(document)["n_outputs_"] = 2
    with pytest.raises(InvalidFileError, match="has 3 outputs but n_outputs_ is 2"):
        _load(_with_document(data, document))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weights_in_a_fitted_model_are_refused(files, value):
    data, model = files["single"]
    weights = model.coefs_[0].copy()
    weights[1, 2] = value
    with pytest.raises(InvalidFileError, match="NaN or infinite weights"):
        _load(_with_weights(data, _coefs_reference(data), weights))


def _with_nan_weights(data, search, diverged):
    """The search file with a NaN in model 1's weights (fold 0), model 1
    marked diverged or not."""
    document = _document(data)
    state = _state(document)
    reference = state["_coefs"][0][1][0]["$array"]
    flags = search._diverged.copy()
    flags[1] = diverged
    name, offset, _ = state["_diverged"]["$array"]
    member = np.load(io.BytesIO(members_of(data)[name + ".npy"])).copy()
    member[offset:offset + flags.size] = flags.ravel()
    edited = _with_array(data, name + ".npy", member)
    weights = search._coefs[0][1][0].copy()
    weights[0, 0] = np.nan
    return _with_weights(edited, reference, weights)


def test_a_search_keeps_nan_weights_of_its_diverged_models(files, tmp_path):
    """A search's population may hold a diverged model's NaN weights: they
    are not a finished model's, so they load."""
    data, search = files["search"]
    loaded = _load(_with_nan_weights(data, search, diverged=True))
    assert np.isnan(loaded._coefs[0][1][0][0, 0]) and loaded._diverged[1].all()
    np.testing.assert_array_equal(loaded.predict_proba(np.eye(4)), search.predict_proba(np.eye(4)))


def test_nan_weights_of_a_model_that_did_not_fail_are_refused(files, tmp_path):
    """A model not marked diverged with NaN weights would predict NaN,
    silently (issue 41)."""
    data, search = files["search"]
    with pytest.raises(InvalidFileError, match="model 1 of fold 0 did not fail"):
        _load(_with_nan_weights(data, search, diverged=False))


def test_invalid_parameters_are_refused(files):
    data = files["single"][0]
    document = _document(data)
    document["estimator"]["$estimator"]["params"]["activation"] = "sinusoid"
    with pytest.raises(InvalidFileError, match="parameters are invalid.*activation"):
        _load(_with_document(data, document))


def test_search_tables_that_disagree_are_refused(files):
    data = files["search"][0]
    for edit, message in [
        (lambda s: s.update(best_index_=10**6), "best_index_ 1000000 is not a row"),
        (lambda s: s.update(n_models_=3), "rows but n_models_ is 3"),
        (lambda s: s["_coefs"].pop(), "one list of"),
        (lambda s: s["best_estimator_"]["$estimator"]["state"]["estimators_"].clear(), "at least one estimator"),
    ]:
        document = _document(data)
        edit(_state(document))
        with pytest.raises(InvalidFileError, match=message):
            _load(_with_document(data, document))


def test_files_that_are_not_skpmlps_are_refused(tmp_path):
    cases = {
        "empty": (b"", "it is empty"),
        "text": (b"hello, world\n", "not an .npz"),
        "pickle": (pickle.dumps({"a": 1}), "looks like a pickle"),
        "zip": (rezip({"readme.txt": b"hi"}), "member name 'readme.txt' is not an array name"),
        "npz": (rezip({"x.npy": _npy_bytes(np.arange(3))}), "has no __document__ member"),
        "other_json": (_document_file(b'{"a": 1}'), "its document is not skpmlp.io's"),
        "not_json": (_document_file(b"{'a': 1}"), "its document is not JSON"),
    }
    for name, (data, message) in cases.items():
        with pytest.raises(InvalidFileError, match=message):
            _load(data)
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InvalidFileError, match=message):
            skpmlp.io.load(path)


def _document_file(text):
    return rezip({"__document__.npy": _npy_bytes(np.frombuffer(text, np.uint8))})


def _npy_bytes(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def test_a_missing_file_is_an_os_error_not_a_file_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        skpmlp.io.load(tmp_path / "missing.npz")


def test_zip_tricks_are_refused(files):
    data = files["single"][0]
    members = members_of(data)
    # one member twice
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
        with zipfile.ZipFile(out, "w") as archive:
            for name, content in members.items():
                archive.writestr(name, content)
            archive.writestr("__document__.npy", members["__document__.npy"])
    with pytest.raises(InvalidFileError, match="appears twice"):
        _load(out.getvalue())
    # a compression method other than stored or deflated
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_BZIP2) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    with pytest.raises(InvalidFileError, match="compression method 12"):
        _load(out.getvalue())
    # an extra member the document never names
    with pytest.raises(InvalidFileError, match=r"arrays \['evil'\] are not part of the estimator"):
        _load(rezip({**members, "evil.npy": _npy_bytes(np.zeros(3))}))


def test_a_deep_document_is_refused():
    deep = b'{"format": "skpmlp.io", "version": 1, "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    with pytest.raises(InvalidFileError, match="nests deeper|not JSON"):
        _load(_document_file(deep))


def test_an_ensemble_file_round_trips_and_its_members_are_checked(files):
    data, search = files["search"]
    loaded = _load(data)
    assert isinstance(loaded.best_estimator_, MLPEnsembleClassifier)
    np.testing.assert_array_equal(loaded.predict_proba(np.eye(4)), search.predict_proba(np.eye(4)))


# ---------------------------------------------------------- properties
def _predictions(estimator, X):
    if hasattr(estimator, "predict_proba"):
        proba = estimator.predict_proba(X)
        assert np.isfinite(proba).all()
        return proba
    return estimator.predict(X)


_SETTINGS = settings(
    max_examples=150, deadline=None, database=None, derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_SETTINGS
@given(name=st.sampled_from(["single", "search", "regressor"]),
       mutation=st.sampled_from(RAW_MUTATIONS), rng=st.randoms(use_true_random=False))
def test_damaged_bytes_are_refused_or_load_the_same_model(files, iris, name, mutation, rng):
    data, estimator = files[name]
    _, damaged = mutation(data, rng)
    try:
        loaded = _load(damaged)
    except InvalidFileError:
        return
    X = iris[0]
    np.testing.assert_array_equal(_predictions(loaded, X), _predictions(estimator, X))


@_SETTINGS
@given(name=st.sampled_from(["single", "search", "regressor"]),
       mutation=st.sampled_from(REBUILT_MUTATIONS), rng=st.randoms(use_true_random=False))
def test_rebuilt_archives_are_refused_or_load_a_working_model(files, iris, name, mutation, rng):
    data, _ = files[name]
    _, mutated = mutation(data, rng)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = _load(mutated)
    except InvalidFileError:
        return
    X = iris[0]
    assert len(_predictions(loaded, X)) == len(X)
