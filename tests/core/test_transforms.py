"""The input transforms (issue 40, item 1): scikit-learn transformers that match
their formulas, computed here by hand in float64."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import QuantileTransformer, StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_estimator

from skpmlp import RobustSmoothClipScaler
from skpmlp._core._transforms import (
    INPUT_TRANSFORMS,
    fit_input_transform,
    fit_input_transform_rows,
    input_transformer,
    quantile_normal,
    transformed_rows,
)


def _quantile(values, q):
    """numpy's default (linear) quantile, by hand: between the sorted values
    at positions floor and ceil of ``q * (n - 1)``."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(np.floor(position))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def _by_hand(train, X, bound=3.0):
    """RealMLP-TD's robust scale and smooth clip, column by column in Python floats."""
    out = np.empty(X.shape)
    for j in range(X.shape[1]):
        column = [float(v) for v in train[:, j]]
        median = _quantile(column, 0.5)
        spread = _quantile(column, 0.75) - _quantile(column, 0.25)
        if spread == 0:
            spread = 0.5 * (max(column) - min(column))
        factor = 0.0 if spread == 0 else 1 / (spread + 1e-30)
        for i in range(X.shape[0]):
            z = factor * (float(X[i, j]) - median)
            out[i, j] = z / np.sqrt(1 + (z / bound) ** 2)
    return out


def test_robust_smooth_clip_is_the_formula():
    rng = np.random.default_rng(0)
    train = rng.standard_t(2, size=(37, 4)) * [1, 10, 0.01, 1e4]
    X = rng.standard_t(2, size=(11, 4)) * [1, 10, 0.01, 1e4]
    scaler = RobustSmoothClipScaler().fit(train)
    np.testing.assert_allclose(scaler.center_, np.median(train, axis=0), rtol=0, atol=0)
    np.testing.assert_allclose(scaler.transform(X), _by_hand(train, X), rtol=1e-14, atol=0)
    np.testing.assert_allclose(scaler.transform(train), _by_hand(train, train), rtol=1e-14)
    assert (np.abs(scaler.transform(X * 1e6)) <= 3).all()


def test_degenerate_columns():
    """A constant column transforms to 0 everywhere (even far from its value);
    a column whose quartiles coincide is scaled by half its range."""
    train = np.array([[5.0, 0.0, 1.0], [5.0, 0.0, 2.0], [5.0, 0.0, 3.0], [5.0, 0.0, 4.0],
                      [5.0, 8.0, 5.0]])
    scaler = RobustSmoothClipScaler().fit(train)
    # column 1: quartiles 0 and 0, half the range is 4
    np.testing.assert_array_equal(scaler.factor_, [0.0, 1 / (4 + 1e-30), 0.5])
    X = np.array([[5.0, 8.0, 3.0], [-1e300, -4.0, 3.5], [1e300, 1.0, 100.0]])
    out = scaler.transform(X)
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(out[:, 0], 0.0)
    np.testing.assert_allclose(out, _by_hand(train, X), rtol=1e-15, atol=0)
    # where the formula's square overflows, the bound (not 0)
    huge = scaler.transform(np.array([[5.0, 1e300, -1e300]]))
    np.testing.assert_allclose(huge, [[0.0, 3.0, -3.0]], rtol=1e-15, atol=0)
    # a single row is constant in every column
    np.testing.assert_array_equal(RobustSmoothClipScaler().fit(train[:1]).transform(X), 0.0)


def test_quantile_range_and_bound():
    rng = np.random.default_rng(1)
    train, X = rng.normal(size=(50, 3)), rng.normal(size=(7, 3)) * 4
    scaler = RobustSmoothClipScaler(quantile_range=(10.0, 90.0), clip_bound=2.0).fit(train)
    spread = np.quantile(train, 0.9, axis=0) - np.quantile(train, 0.1, axis=0)
    z = (X - np.median(train, axis=0)) / spread
    np.testing.assert_allclose(scaler.transform(X), z / np.sqrt(1 + (z / 2) ** 2), rtol=1e-13)
    assert (np.abs(scaler.transform(X * 1e9)) <= 2).all()


def test_dtypes_and_refusals():
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    scaler = RobustSmoothClipScaler().fit(X)
    assert scaler.center_.dtype == np.float64 and scaler.transform(X).dtype == np.float32
    assert RobustSmoothClipScaler().fit_transform(X.astype(int)).dtype == np.float64
    with pytest.raises(ValueError, match="NaN"):
        RobustSmoothClipScaler().fit(np.array([[1.0], [np.nan]]))
    with pytest.raises(ValueError, match="quantile_range"):
        RobustSmoothClipScaler(quantile_range=(75.0, 25.0)).fit(X)
    with pytest.raises(InvalidParameterError, match="clip_bound"):
        RobustSmoothClipScaler(clip_bound=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        scaler.transform(np.ones((2, 3)))


def test_it_is_a_scikit_learn_transformer():
    check_estimator(RobustSmoothClipScaler())
    X = np.random.default_rng(2).normal(size=(20, 3))
    pipeline = make_pipeline(RobustSmoothClipScaler(), StandardScaler()).fit(X)
    assert pipeline.transform(X).shape == (20, 3)
    assert list(clone(RobustSmoothClipScaler(clip_bound=5.0)).get_params().values()) == [
        5.0, (25.0, 75.0)]
    assert list(RobustSmoothClipScaler().fit(X).get_feature_names_out()) == ["x0", "x1", "x2"]


def test_the_values_of_input_transform():
    X = np.random.default_rng(3).normal(size=(20, 3)) * 7 + 2
    assert INPUT_TRANSFORMS == ("none", "standard", "robust-smooth-clip", "quantile")
    assert input_transformer("none") is None and fit_input_transform("none", X) is None
    np.testing.assert_array_equal(fit_input_transform("standard", X).transform(X),
                                  StandardScaler().fit_transform(X))
    np.testing.assert_array_equal(fit_input_transform("robust-smooth-clip", X).transform(X),
                                  RobustSmoothClipScaler().fit_transform(X))
    # to a normal, one quantile a row (no warning that 1,000 exceed the rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quantile = fit_input_transform("quantile", X)
    assert quantile.n_quantiles_ == 20 and quantile.output_distribution == "normal"
    np.testing.assert_array_equal(quantile.transform(X), QuantileTransformer(
        n_quantiles=20, output_distribution="normal").fit_transform(X))
    # more rows than quantiles: 1,000 of them
    many = np.random.default_rng(4).exponential(size=(3000, 2))
    assert fit_input_transform("quantile", many).n_quantiles_ == 1000
    # more than the subsample's 10,000 rows: the same subsample in every fit
    large = np.random.default_rng(5).exponential(size=(12000, 1))
    np.testing.assert_array_equal(fit_input_transform("quantile", large).quantiles_,
                                  fit_input_transform("quantile", large).quantiles_)


@pytest.mark.parametrize("seed", range(6))
def test_quantile_normal_is_scikit_learns_transform_bit_for_bit(seed):
    """A search's quantile transform of its rows (every column at once) is
    scikit-learn's ``QuantileTransformer.transform``, to the last bit: tied
    values, rows beyond either end of the fitted quantiles, rows within
    its margin of an end, fewer quantiles than rows."""
    rng = np.random.default_rng(seed)
    n_fit, n_features = int(rng.integers(8, 300)), int(rng.integers(1, 11))
    X = rng.normal(size=(n_fit, n_features)) * rng.uniform(0.1, 100, n_features)
    X[:, 0] = np.round(X[:, 0])  # repeated quantiles
    if n_features > 1:
        X[:, 1] = rng.integers(0, 3, n_fit)  # three values only
    fitted = QuantileTransformer(output_distribution="normal", random_state=0,
                                 n_quantiles=int(rng.integers(2, n_fit + 1))).fit(X)
    rows = np.concatenate([X, 3 * X - 1, X + 1e-8, X - 1e-8, X[:3] * 1e6])
    expected = fitted.transform(rows)
    assert np.array_equal(quantile_normal(fitted, rows), expected)
    assert np.array_equal(transformed_rows(fitted, rows), expected)
    # float32 rows (and every other transform) go through scikit-learn's own
    assert np.array_equal(transformed_rows(fitted, rows.astype(np.float32)),
                          fitted.transform(rows.astype(np.float32)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_searchs_robust_smooth_clip_is_the_checked_one_bit_for_bit(dtype):
    """A search fits and applies "robust-smooth-clip" to its validated rows
    without scikit-learn's checks: the same statistics, attributes and
    outputs as the transformer's own ``fit`` and ``transform``, degenerate
    columns included (constant; zero interquartile range)."""
    rng = np.random.default_rng(3)
    X = (rng.standard_t(2, size=(41, 5)) * [1, 10, 0.1, 1, 1]).astype(dtype)
    X[:, 3] = 7.0  # constant
    X[:30, 4] = 1.0  # zero interquartile range: half the range instead
    checked = fit_input_transform("robust-smooth-clip", X)
    fast = fit_input_transform_rows("robust-smooth-clip", X)
    assert isinstance(fast, RobustSmoothClipScaler) and fast.n_features_in_ == 5
    assert not hasattr(fast, "feature_names_in_")
    np.testing.assert_array_equal(fast.center_, checked.center_)
    np.testing.assert_array_equal(fast.factor_, checked.factor_)
    rows = np.concatenate([X, 100 * X]).astype(dtype)
    expected = checked.transform(rows)
    got = transformed_rows(fast, rows)
    assert got.dtype == expected.dtype == dtype
    np.testing.assert_array_equal(got, expected)
    # anything but a float ndarray of the fitted width takes the checks
    with pytest.raises(ValueError, match="features"):
        transformed_rows(fast, rows[:, :4])
