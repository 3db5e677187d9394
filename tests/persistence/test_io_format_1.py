"""Files of format 1 (skpmlp 0.2.0's) still load, as the estimator they held.

``format_1.skpmlp`` was written by skpmlp 0.2.0 (``format_1_fixture.py``
says how) and uses every tag of format 1.
"""

import warnings

import pytest
from format_1_fixture import PATH, data, search, values
from numpy.testing import assert_allclose
from test_io import assert_same

import skpmlp.io
from skpmlp import MLPEnsembleClassifier, ParallelMLPClassifier
from skpmlp._persistence._archive import read_archive


@pytest.fixture(scope="module")
def loaded():
    with warnings.catch_warnings():
        # saved by skpmlp 0.2.0: later versions warn that the version differs
        warnings.simplefilter("ignore", skpmlp.io.InconsistentVersionWarning)
        return skpmlp.io.load(PATH)


def test_the_fixture_is_a_format_1_file():
    document, _ = read_archive(PATH)
    assert (document["format"], document["version"]) == ("skpmlp.io", 1)
    assert document["estimator"]["__type__"] == "estimator"


def test_a_format_1_search_predicts_as_when_it_was_saved(loaded):
    X, _ = data()
    assert type(loaded) is ParallelMLPClassifier
    assert type(loaded.best_estimator_) is MLPEnsembleClassifier
    # saved on another machine: its vector code may round the last bits otherwise
    assert_allclose(loaded.predict_proba(X), loaded.saved_proba_, rtol=0, atol=1e-12)
    assert_allclose(loaded.best_estimator_.predict_proba(X), loaded.saved_proba_, rtol=0, atol=1e-12)


def test_a_format_1_file_keeps_every_value(loaded):
    assert_same(loaded.values_, values(), "values_")
    assert_same(loaded.get_params(deep=False), search().get_params(deep=False), "params")
    assert loaded.shared_ is loaded.best_estimator_.estimators_[0].coefs_[0]
    assert loaded.values_["arrays"][1].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_a_format_1_search_draws_the_same_population(loaded):
    """Its distributions and splitter came back: a refit draws what it drew."""
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refitted = search().fit(X, y)
    drawn, saved = refitted.cv_results_["params"], loaded.cv_results_["params"]
    assert [sorted(p) for p in drawn] == [sorted(p) for p in saved]
    for now, then in zip(drawn, saved):
        for name, value in then.items():
            if isinstance(value, float):
                # the draw goes through numpy's vector log and exp, whose last
                # bit differs between vector widths (the file was written on
                # an AVX-512 machine)
                assert now[name] == pytest.approx(value, rel=1e-14, abs=0), name
            else:
                assert now[name] == value, name
