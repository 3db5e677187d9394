"""The format-1 file that ``test_io_format_1.py`` loads: what it holds, and how it was made.

``format_1.skpmlp`` was written by ``skpmlp.io.save`` of skpmlp 0.2.0 (commit
fb9e53c, the last to write format 1), by running this module with that
commit's package first on the path (``git archive fb9e53c skpmlp`` unpacked
in ``OLD``)::

    PYTHONPATH=OLD python tests/persistence/format_1_fixture.py

It holds, in deflated members, a search whose file uses every tag of
format 1: the estimator (and the nested best estimator, an ensemble of
two), a scikit-learn splitter, scipy and skpmlp distributions, and as
extra attributes :func:`values` (non-finite floats, tuples, sets, dicts
with other keys, numpy scalars, plain, Fortran-ordered, object and masked
arrays, a RandomState, an unfitted estimator), an array shared with the
weights, and the predictions the saved search made on :func:`data`.
"""

import os

import numpy as np
from scipy.stats import loguniform, randint
from sklearn.datasets import load_iris
from sklearn.model_selection import KFold

#: The fixture, next to this module.
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "format_1.skpmlp")


def data():
    """Forty rows of iris, standardized (the search's training data)."""
    X, y = load_iris(return_X_y=True)
    X, y = X[::4][:40], y[::4][:40]
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def values():
    """The extra attribute ``values_``: every kind of data format 1 tags."""
    from skpmlp import LayerSizesDistribution, SingleMLPRegressor

    masked = np.ma.MaskedArray(np.empty(3, dtype=object), mask=[False, True, False])
    masked[0], masked[2] = (64, 32), "relu"
    objects = np.empty((2, 2), dtype=object)
    objects[:] = [[(1, 2), "a"], [None, np.float32(0.5)]]
    return {
        "floats": [float("nan"), float("inf"), -float("inf"), 0.25, 2**70, True, None],
        "numpy_scalars": [np.float32(1.5), np.int64(-3), np.bool_(False), np.str_("x"),
                          np.float64("nan"), np.uint64(2**64 - 1)],
        "tuple_vs_list": ((1, [2, (3,)]), [(), []]),
        "int_and_str_keys": {1: "a", "b": (2,), (3, 4): None},
        "reserved_key": {"__type__": "not a tag"},
        "dollar_key": {"$array": "a plain string", "$x": [1]},
        "arrays": [np.arange(6, dtype=np.int32).reshape(2, 3),
                   np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
                   np.array([np.nan, 1.0], dtype=np.float32), np.array([True, False]),
                   np.array(["a", "bc"]), np.array(3.0), np.empty((0, 4)),
                   np.array([1 + 2j], dtype=np.complex64)],
        "object_array": objects,
        "masked_array": masked,
        "masked_numbers": np.ma.MaskedArray([1.0, 2.0], mask=[True, False], fill_value=-1.0),
        "random_state": np.random.RandomState(7),
        "sets": [{"accuracy", "f1"}, frozenset({1, 2})],
        "nested_estimator": SingleMLPRegressor((3,), "elu"),
        "distributions": [loguniform(1e-4, 0.1), randint(2, high=5),
                          LayerSizesDistribution(depths=randint(1, 3), widths=[8, 16])],
    }


def search():
    """The search the fixture holds, unfitted."""
    from skpmlp import LayerSizesDistribution, ParallelMLPClassifier

    return ParallelMLPClassifier(
        LayerSizesDistribution(depths=[1, 2], widths=loguniform(3, 8)), ("relu", "tanh"),
        learning_rate_init=loguniform(1e-3, 1e-1), n_models=3, ensemble_size=2,
        cv=KFold(2, shuffle=True, random_state=0), max_iter=5, random_state=0,
        # skpmlp 0.2.0's defaults of the parameters whose defaults changed since
        # (the file keeps the values it was saved with)
        beta_2=0.999, dropout=0.0, input_transform="none",
    )


def main():
    import warnings

    import skpmlp.io

    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = search().fit(X, y)
    fitted.values_ = values()
    fitted.shared_ = fitted.best_estimator_.estimators_[0].coefs_[0]
    fitted.saved_proba_ = fitted.predict_proba(X)
    assert skpmlp.io.FORMAT_VERSION == 1, "run this module with the skpmlp that writes format 1"
    skpmlp.io.save(fitted, PATH, compress=True)
    print(f"wrote {PATH} ({os.path.getsize(PATH)} bytes) with {skpmlp.__file__}")


if __name__ == "__main__":
    main()
