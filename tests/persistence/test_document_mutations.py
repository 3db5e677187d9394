"""Files whose checksums are right but whose content was edited (issue 41, item 4).

Every edit of ``document_mutations.py`` (a number changed, an array cut or
grown, a NaN among the values, an index changed), written back as a valid
archive, must end in a refusal (``InvalidFileError``, or another
``ValueError`` naming the problem) or a file that loads and works: a
model file whose estimator predicts finite values, a checkpoint from which
the fit ends. Nothing else (a numpy or torch error, an ``AssertionError``, a
model predicting NaN) may come out of it. ``benchmarks/fuzz_documents.py``
runs 1,000 edits of each kind of file.
"""

import warnings

import numpy as np
import pytest
from document_mutations import mutate
from test_checkpoint import HALVING, KillAfterWrite, Killed

import skpmlp.io
from skpmlp import ParallelMLPClassifier

N_EDITS = 40


@pytest.fixture(scope="module")
def model_file(iris, tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = ParallelMLPClassifier([(4,), (3, 3)], ("relu", "tanh"), max_iter=8, cv=3,
                                       dtype="float64", random_state=0).fit(*iris)
    path = tmp_path_factory.mktemp("model") / "search.npz"
    skpmlp.io.save(search, path)
    return path


@pytest.fixture(scope="module")
def checkpoint_file(iris, tmp_path_factory):
    path = tmp_path_factory.mktemp("checkpoint") / "search.ckpt"
    killer = KillAfterWrite()
    killer.arm(4)
    try:
        with pytest.raises(Killed), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ParallelMLPClassifier(**HALVING, checkpoint=path).fit(*iris)
    finally:
        killer.disarm()
    return path


def _loads_and_works(path, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = skpmlp.io.load(path)
    assert np.isfinite(model.predict_proba(X)).all(), "a loaded model predicts non-finite values"


@pytest.mark.parametrize("seed", range(N_EDITS))
def test_an_edited_model_file_is_refused_or_works(iris, model_file, tmp_path, seed):
    X, _ = iris
    edited = tmp_path / "edited.npz"
    what = mutate(model_file, edited, np.random.default_rng(seed))
    try:
        _loads_and_works(edited, X)
    except ValueError:
        pass  # refused, saying why (InvalidFileError is a ValueError)
    except Exception as error:  # noqa: BLE001
        pytest.fail(f"{what}: {type(error).__name__}: {error}")


@pytest.mark.parametrize("seed", range(N_EDITS))
def test_an_edited_checkpoint_is_refused_or_resumes(iris, checkpoint_file, tmp_path, seed):
    edited = tmp_path / "search.ckpt"
    what = mutate(checkpoint_file, edited, np.random.default_rng(seed))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = ParallelMLPClassifier(**HALVING, checkpoint=edited).fit(*iris)
        assert np.isfinite(search.predict_proba(iris[0])).all()
    except ValueError:
        pass
    except Exception as error:  # noqa: BLE001
        pytest.fail(f"{what}: {type(error).__name__}: {error}")
