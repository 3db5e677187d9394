"""The one codec of skpmlp's files: trees of data round-trip, anything else is refused.

``test_io*.py`` and ``test_checkpoint*.py`` check the files built on it;
these tests check the codec itself: the tag scheme, the array references,
the strict decoder (each refusal names its problem), a tag plugged in by
its caller, and the translation of format 1's documents.
"""

import io
import re

import numpy as np
import pytest

from skpmlp._core._version import __version__
from skpmlp._persistence._archive import InvalidFileError, read_archive, write_archive
from skpmlp._persistence._checkpoint_file import FORMAT_VERSION, read_file, write_file
from skpmlp._persistence._codec import OWN_MEMBER_BYTES, NotDataError, Tag, decode, encode
from skpmlp._persistence._data_tags import DATA_TAGS
from skpmlp._persistence._format_1 import from_format_1


def _round_trip(tree, tags=DATA_TAGS):
    """``tree`` through the codec and the archive."""
    document, arrays = encode(tree, tags)
    buffer = io.BytesIO()
    write_archive(buffer, document, arrays)
    buffer.seek(0)
    return decode(*read_archive(buffer), tags)


def _equal(actual, expected):
    """Equal values of the same types, recursively (NaN equals NaN)."""
    assert type(actual) is type(expected), (actual, expected)
    if isinstance(expected, np.ndarray):
        assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape)
        np.testing.assert_array_equal(actual, expected)
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _equal(a, e)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            _equal(actual[key], expected[key])
    elif isinstance(expected, (float, np.floating)) and np.isnan(expected):
        assert np.isnan(actual)
    else:
        assert actual == expected


TREE = {
    "plain": [None, True, 0, -(2**70), 0.5, "x", [], {}],
    "non_finite": [float("nan"), float("inf"), -float("inf")],
    "tuples": ((1, (2,)), [()]),
    "keys": {1: "a", (2, 3): None, "$x": 1, "b": 2},
    "numpy_scalars": [np.float32(1.5), np.int8(-3), np.bool_(True), np.str_("s"),
                      np.float64("nan")],
    "sets": [{1, 2}, frozenset({"a"})],
    "arrays": [np.arange(6, dtype=np.int32).reshape(2, 3), np.array(3.0),
               np.empty((0, 4)), np.array(["a", "bc"]),
               np.asfortranarray(np.arange(6.0).reshape(2, 3)),
               np.arange(OWN_MEMBER_BYTES // 8 + 1, dtype=np.float64)],
}


def test_a_tree_of_data_round_trips():
    _equal(_round_trip(TREE), TREE)


def test_a_big_endian_array_comes_back_little_endian():
    loaded = _round_trip({"x": np.array([1.5, 2.5], dtype=">f8")})["x"]
    assert loaded.dtype.str == "<f8" and loaded.tolist() == [1.5, 2.5]


def test_small_arrays_are_packed_by_dtype_and_big_ones_stand_alone():
    document, arrays = encode(TREE, DATA_TAGS)
    assert sorted(arrays) == ["own_0", "packed_U2", "packed_f8", "packed_i4"]
    assert all(member.ndim == 1 for member in arrays.values())
    references = [item["$array"] for item in document["arrays"]]
    assert references[0] == ["packed_i4", 0, [2, 3]]
    assert references[-1] == ["own_0", 0, [OWN_MEMBER_BYTES // 8 + 1]]


def test_an_array_referenced_twice_is_stored_once_and_comes_back_as_one():
    weights = np.ones((3, 2))
    document, arrays = encode([weights, {"again": weights}])
    assert arrays["packed_f8"].size == 6
    loaded = decode(document, arrays)
    assert loaded[0] is loaded[1]["again"]


def test_non_finite_floats_have_one_tag():
    document, _ = encode([float("nan"), -float("inf")])
    assert document == [{"$float": "nan"}, {"$float": "-inf"}]


@pytest.mark.parametrize(
    "tree, where",
    [
        ({"a": [1, object()]}, r"tree\['a'\]\[1\]: cannot save a value of type builtins\.object"),
        ([np.array(["2020"], dtype="M8[D]")], r"tree\[0\]: cannot save an array of dtype"),
        ((1, 2), r"tree: cannot save a value of type builtins\.tuple"),
        ({"a": 1, 2: 2}, r"tree: cannot save the dict key 2: plain dicts have string keys"),
        ({"$x": 1}, r"tree: cannot save the dict key '\$x'"),
    ],
)
def test_what_is_not_data_is_refused_where_it_is(tree, where):
    """Without tags, the codec stores plain trees only."""
    with pytest.raises(TypeError, match=where):
        encode(tree)


def test_a_value_a_tag_refuses_is_named_where_it_is():
    with pytest.raises(TypeError, match=r"tree\[0\]\[1\]: cannot save a numpy scalar of dtype"):
        encode([(1, np.datetime64("2020-01-01"))], DATA_TAGS)


# ------------------------------------------------------------- the decoder
ARRAYS = {"packed_f8": np.arange(6.0), "own_0": np.zeros((2, 3))}


def _refusal(document, arrays=ARRAYS):
    with pytest.raises(InvalidFileError) as error:
        decode({"x": document, "y": {"$array": ["packed_f8", 0, [1]]}}, arrays, DATA_TAGS)
    return str(error.value)


@pytest.mark.parametrize(
    "document, message",
    [
        ({"$code": 1}, "unknown value type 'code'"),
        ({"$array": ["packed_f8", 0, [1]], "b": 1}, "a key starting with '\\$' among other keys"),
        ({"a": 1, "$b": 1}, "a key starting with '\\$' among other keys"),
        ({"$float": "1e400"}, "malformed 'float' value '1e400'"),
        ({"$float": 1.0}, "malformed 'float' value"),
        ({"$array": ["missing", 0, [1]]}, "names a missing array 'missing'"),
        ({"$array": ["own_0", 0, [1]]}, r"member 'own_0' has shape \(2, 3\); array members are flat"),
        ({"$array": ["packed_f8", 4, [3]]},
         r"an array of shape \(3,\) at 4 of member 'packed_f8' is not in the file \(the member "
         r"holds 6 elements\)"),
        ({"$array": ["packed_f8", 0, [10**12, 10**12]]}, r"shape \(1000000000000, 1000000000000\)"),
        ({"$array": ["packed_f8", 0, [0, 2**62]]}, "cannot exist"),
        ({"$array": ["packed_f8", -1, [1]]}, "malformed 'array' value"),
        ({"$array": ["packed_f8", True, [1]]}, "malformed 'array' value"),
        ({"$array": ["packed_f8", 0, [1.0]]}, "malformed 'array' value"),
        ({"$array": ["packed_f8", 0, [1] * 65]}, "malformed 'array' value"),
        ({"$array": ["packed_f8", 0]}, "malformed 'array' value"),
        ({"$tuple": {"a": 1}}, r"malformed 'tuple' value \(ValueError: expected a list"),
        ({"$dict": [[1]]}, "malformed 'dict' value"),
        ({"$dict": [[[1], 2]]}, r"malformed 'dict' value \(TypeError: unhashable"),
        ({"$scalar": {"dtype": "|O", "value": 1}}, "scalar dtype '|O' is not allowed"),
        ({"$scalar": {"dtype": "<U999999", "value": "x"}}, "does not fit its value"),
        ({"$scalar": {"dtype": "<f8"}}, r"expected the fields \['dtype', 'value'\]"),
        ({"$object_array": {"shape": [10**12, 0], "items": [1]}}, "holds 1 items"),
        ({"$random_state": ["MT19937", [1, 2], 0, 0, 0.0]}, "malformed 'random_state' value"),
    ],
)
def test_what_does_not_fit_is_refused_naming_the_problem(document, message):
    assert re.search(message, _refusal(document))


def test_a_member_no_reference_uses_is_refused():
    with pytest.raises(InvalidFileError, match=r"its arrays \['evil'\] are not part of the thing"):
        decode([], {"evil": np.zeros(1)}, what="thing")


def test_the_data_tags_are_known_only_when_passed():
    document, arrays = encode((1, 2), DATA_TAGS)
    with pytest.raises(InvalidFileError, match="unknown value type 'tuple'"):
        decode(document, arrays)


# ------------------------------------------------------- a tag plugged in
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def _encode_point(point, child):
    if point.x is None:
        raise NotDataError("a point needs an x")
    return [child(point.x, ".x"), child(point.y, ".y")]


def _decode_point(payload, child):
    x, y = payload
    return Point(child(x), child(y))


POINT = Tag("point", lambda value: type(value) is Point, _encode_point, _decode_point)


def test_a_tag_plugged_in_stores_its_values():
    document, arrays = encode({"p": [Point(np.arange(3), (1.0, float("inf")))]},
                              (POINT, *DATA_TAGS))
    assert list(document["p"][0]) == ["$point"]
    loaded = decode(document, arrays, (POINT, *DATA_TAGS))["p"][0]
    assert type(loaded) is Point and loaded.y == (1.0, float("inf"))
    np.testing.assert_array_equal(loaded.x, np.arange(3))


def test_a_tag_plugged_in_refuses_with_the_location_and_is_refused_when_malformed():
    with pytest.raises(TypeError, match=r"root\['p'\]: a point needs an x"):
        encode({"p": Point(None, 1)}, (POINT,), root="root")
    with pytest.raises(InvalidFileError, match=r"malformed 'point' value \(ValueError: "):
        decode({"$point": [1, 2, 3]}, {}, (POINT,))


# ---------------------------------------------------------- checkpoints
def test_checkpoint_files_keep_tuples_and_numpy_scalars(tmp_path):
    tree = {"format": "skpmlp.checkpoint", "version": FORMAT_VERSION, "skpmlp": __version__,
            "pairs": [(np.arange(2), np.arange(3))], "loss": np.float32(0.25)}
    write_file(tmp_path / "x.ckpt", tree)
    _equal(read_file(tmp_path / "x.ckpt"), tree)


# ------------------------------------------------------------- format 1
def test_format_1_documents_are_translated_into_the_tags():
    arrays = {"a0": np.arange(6).reshape(2, 3), "a1": np.array(2.0)}
    document = {
        "w": {"__type__": "ndarray", "key": "a0"},
        "s": {"__type__": "ndarray", "key": "a1"},
        "t": {"__type__": "tuple", "items": [1, {"__type__": "float", "value": "nan"}]},
        "k": {"$x": 1},
        "e": {"__type__": "scalar", "dtype": "<f4", "value": 1.5},
    }
    translated, flat = from_format_1(document, arrays)
    assert translated == {
        "w": {"$array": ["a0", 0, [2, 3]]}, "s": {"$array": ["a1", 0, []]},
        "t": {"$tuple": [1, {"$float": "nan"}]}, "k": {"$dict": [["$x", 1]]},
        "e": {"$scalar": {"dtype": "<f4", "value": 1.5}},
    }
    loaded = decode(translated, flat, DATA_TAGS)
    np.testing.assert_array_equal(loaded["w"], arrays["a0"])
    assert loaded["k"] == {"$x": 1} and loaded["e"] == np.float32(1.5)


@pytest.mark.parametrize("tag", ["array", "code", 1, ["ndarray"]])
def test_a_tag_format_1_did_not_have_is_refused(tag):
    with pytest.raises(InvalidFileError, match="unknown value type"):
        from_format_1({"__type__": tag, "items": []}, {})
