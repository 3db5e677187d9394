"""``target_transform`` of the regressors: every model trains on its fold's
standardised targets and is folded back into ``y``'s units, in float64.

A model of a search with ``target_transform="standard"`` equals the same
model trained alone, and equals a plain model (``"none"``) trained on the
fold's standardised targets with its output mapped back; the search is
invariant to an affine change of ``y``'s units.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_regression
from sklearn.model_selection import KFold
from sklearn.utils._param_validation import InvalidParameterError

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, SingleMLPRegressor
from skpmlp._core._target_scaling import TargetScaling
from skpmlp._engine import mlp_forward

#: Without dropout and input transforms, so that only the targets' scaling acts.
SEARCH = dict(hidden_layer_sizes=[(5,), (4, 3)], activation=["tanh", "relu"],
              learning_rate_init=[0.01, 0.03], max_iter=12, batch_size=32, dtype="float64",
              random_state=2, dropout=0.0, input_transform="none")


def _fit(estimator, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(*args, **kwargs)


@pytest.fixture(scope="module")
def regression():
    """Two targets far from unit scale, on different scales."""
    X, y = make_regression(120, 4, n_targets=2, noise=0.1, random_state=0)
    return X, y * [300.0, 0.02] + [5000.0, -3.0]


def _standardised(y):
    return (y - y.mean(axis=0)) / y.std(axis=0)


@pytest.mark.parametrize("log_link", [False, True])
def test_folding_maps_the_outputs_back(log_link):
    """A folded model's outputs are ``offset + scale * outputs`` (``scale *
    outputs`` under a log link) of the unfolded one, and unfold inverts
    fold."""
    rng = np.random.default_rng(0)
    coefs = [rng.normal(size=(3, 4)), rng.normal(size=(4, 2))]
    intercepts = [rng.normal(size=4), rng.normal(size=2)]
    y = rng.uniform(1, 50, size=(30, 2)) * [1.0, 100.0]
    scaling = TargetScaling.fit(y, log_link=log_link)
    X = rng.normal(size=(7, 3))
    out = "exp" if log_link else "identity"
    folded = scaling.fold(coefs, intercepts)
    expected = mlp_forward(coefs, intercepts, "tanh", X, out_activation=out)
    expected = expected * scaling.scale + scaling.offset
    np.testing.assert_allclose(mlp_forward(*folded, "tanh", X, out_activation=out), expected,
                               rtol=1e-12)
    back = scaling.unfold(*folded)
    for a, b in zip(back[0] + back[1], coefs + intercepts):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
    # the arrays given are left as they were
    assert folded[0][-1] is not coefs[-1] and folded[0][0] is coefs[0]


def test_weights_count_as_repeated_rows():
    """Weighted statistics: a row of weight 2 is the row twice, weight 0 no row."""
    y = np.array([[1.0], [4.0], [10.0], [-3.0]])
    weighted = TargetScaling.fit(y, sample_weight=np.array([2.0, 1.0, 0.0, 1.0]))
    repeated = TargetScaling.fit(y[[0, 0, 1, 3]])
    np.testing.assert_allclose(weighted.offset, repeated.offset, rtol=1e-15)
    np.testing.assert_allclose(weighted.scale, repeated.scale, rtol=1e-15)


def test_huge_targets_scale_without_overflow():
    """Targets near float64's largest values: squaring their deviations
    would overflow; the scale stays finite and a search predicts them."""
    y = np.array([[1e200], [3e200], [2e200], [5e200]])
    scaling = TargetScaling.fit(y)
    np.testing.assert_allclose(scaling.scale, np.std(y / 1e200, axis=0) * 1e200, rtol=1e-14)
    X = np.linspace(-1, 1, 40).reshape(-1, 1)
    search = _fit(ParallelMLPRegressor((4,), "tanh", learning_rate_init=0.01, max_iter=5,
                                       dtype="float64", cv=None, random_state=0),
                  X, 1e300 * (X[:, 0] + 2))
    assert np.isfinite(search.predict(X)).all() and 1e299 < search.predict(X).mean() < 1e301


def test_constant_targets_are_only_centred():
    scaling = TargetScaling.fit(np.array([[3.0, 1.0], [3.0, 2.0], [3.0, 5.0]]))
    np.testing.assert_array_equal(scaling.scale[0], 1.0)
    np.testing.assert_allclose(scaling.encode([[3.0, 1.0]])[0, 0], 0.0)
    assert TargetScaling.fit(np.zeros((4, 1)), log_link=True).scale[0] == 1.0


def test_each_fold_trains_on_its_own_standardised_targets(regression, backend):
    """The independence invariant with the scaling: fold k's replica of
    every model equals the same model trained alone on fold k's rows, and a
    plain model on fold k's standardised targets, mapped back; scored in
    ``y``'s units."""
    X, y = regression
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    weight = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    search = _fit(ParallelMLPRegressor(**SEARCH, cv=folds, ensemble="best", scoring="r2"),
                  X, y, sample_weight=weight)
    assert search.n_models_ == 8
    for i in range(search.n_models_):
        for k, (train, test) in enumerate(folds):
            model = search.export_model(i, fold=k)
            assert model.target_transform == "standard"
            alone = _fit(clone(model), X[train], y[train], sample_weight=weight[train])
            np.testing.assert_allclose(model.predict(X), alone.predict(X), rtol=0, atol=1e-9)
            assert alone.n_iter_ == search.n_iter_per_model_[i, k]
            # plain: the fold's targets standardised by hand (weighted statistics)
            mean = np.average(y[train], axis=0, weights=weight[train])
            std = np.sqrt(np.average((y[train] - mean) ** 2, axis=0, weights=weight[train]))
            plain = _fit(clone(model).set_params(target_transform="none"), X[train],
                         (y[train] - mean) / std, sample_weight=weight[train])
            np.testing.assert_allclose(model.predict(X), plain.predict(X) * std + mean,
                                       rtol=1e-9, atol=0)
            np.testing.assert_allclose(model.loss_curve_, plain.loss_curve_, rtol=1e-12)
            score = model.score(X[test], y[test], sample_weight=weight[test])
            assert score == pytest.approx(search.cv_results_[f"split{k}_test_score"][i],
                                          abs=1e-12)


def test_a_search_is_invariant_to_the_units_of_y(regression):
    """``a * y + b`` gives the same search: the same scores (R^2), the same
    choice and predictions ``a * p + b``."""
    X, y = regression
    params = dict(SEARCH, cv=3)
    search = _fit(ParallelMLPRegressor(**params), X, y[:, 0])
    shifted = _fit(ParallelMLPRegressor(**params), X, 1e4 * y[:, 0] - 7e5)
    np.testing.assert_allclose(shifted.cv_results_["mean_test_score"],
                               search.cv_results_["mean_test_score"], rtol=0, atol=1e-9)
    assert shifted.best_index_ == search.best_index_
    np.testing.assert_allclose(shifted.predict(X), 1e4 * search.predict(X) - 7e5, rtol=1e-9)
    # without the scaling, the units change the search
    plain = [_fit(ParallelMLPRegressor(**params, target_transform="none"), X, t)
             for t in (y[:, 0] / y[:, 0].std(), 1e4 * y[:, 0] / y[:, 0].std() - 7e5)]
    assert not np.allclose(plain[0].cv_results_["mean_test_score"],
                           plain[1].cv_results_["mean_test_score"], atol=1e-3)


def test_the_refit_and_the_lone_model_scale_on_every_row(regression):
    """``best_estimator_`` (GridSearchCV's refit) trains on all the rows'
    scaling, as the same model alone on all the rows; so does a search of one
    configuration with ``cv=None`` (a lone model)."""
    X, y = regression
    search = _fit(ParallelMLPRegressor(**SEARCH, cv=3, ensemble="best"), X, y)
    best = search.best_estimator_
    alone = _fit(clone(best), X, y)
    np.testing.assert_allclose(best.predict(X), alone.predict(X), rtol=0, atol=1e-9)
    lone = _fit(ParallelMLPRegressor((5,), "tanh", learning_rate_init=0.01, max_iter=12,
                                     dtype="float64", dropout=0.0,
                                     input_transform="none", random_state=0, cv=None), X, y)
    model = _fit(SingleMLPRegressor((5,), "tanh", learning_rate_init=0.01, max_iter=12,
                                    dtype="float64", random_state=0,
                                    target_transform="standard", beta_2=0.95), X, y)
    np.testing.assert_allclose(lone.predict(X), model.predict(X), rtol=0, atol=1e-9)


def test_poisson_divides_by_the_mean():
    """Under the log link the targets are divided by their mean and the
    output bias gets its log: the model is a plain one on ``y / mean``,
    times the mean (on torch: the kernels have squared error only)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = rng.poisson(400 * np.exp(0.3 * X[:, 0])).astype(float)
    model = _fit(SingleMLPRegressor((6,), "tanh", loss="poisson", max_iter=10, dtype="float64",
                                    random_state=0, target_transform="standard"), X, y)
    plain = _fit(clone(model).set_params(target_transform="none"), X, y / y.mean())
    np.testing.assert_allclose(model.predict(X), plain.predict(X) * y.mean(), rtol=1e-10)
    np.testing.assert_allclose(model.coefs_[-1], plain.coefs_[-1], rtol=0, atol=0)
    np.testing.assert_allclose(model.intercepts_[-1], plain.intercepts_[-1] + np.log(y.mean()),
                               rtol=1e-13)


def test_a_warm_start_continues_in_the_scaled_units(regression):
    """The second fit of ``warm_start=True`` starts from the previous model
    unfolded: as a plain model warm started on the standardised targets."""
    X, y = regression
    params = dict(hidden_layer_sizes=(5,), activation="tanh", max_iter=6, dtype="float64",
                  random_state=0, warm_start=True)
    model = _fit(SingleMLPRegressor(**params, target_transform="standard"), X, y)
    plain = _fit(SingleMLPRegressor(**params), X, _standardised(y))
    _fit(model, X, y)
    _fit(plain, X, _standardised(y))
    np.testing.assert_allclose(model.predict(X), plain.predict(X) * y.std(axis=0) + y.mean(axis=0),
                               rtol=1e-9)


def test_a_resumed_search_continues_in_the_scaled_units(regression):
    """A warm-started search of several models resumes every fold replica
    from its folded weights, unfolded with its fold's constants."""
    X, y = regression
    train = np.arange(90)
    split = [(train, np.arange(90, 120))]
    params = dict(SEARCH, cv=split, ensemble="best", refit=False, warm_start=True)
    search = _fit(ParallelMLPRegressor(**params), X, y)
    z = (y - y[train].mean(axis=0)) / y[train].std(axis=0)
    plain = _fit(ParallelMLPRegressor(**params, target_transform="none"), X, z)
    _fit(search, X, y)
    _fit(plain, X, z)
    for i in range(search.n_models_):
        np.testing.assert_allclose(
            search.export_model(i).predict(X),
            plain.export_model(i).predict(X) * y[train].std(axis=0) + y[train].mean(axis=0),
            rtol=1e-9)


@pytest.mark.parametrize("value", ["minmax", None, 1])
def test_bad_values_are_refused(regression, value):
    X, y = regression
    with pytest.raises(InvalidParameterError, match="target_transform"):
        ParallelMLPRegressor(target_transform=value).fit(X, y)
    with pytest.raises(InvalidParameterError, match="target_transform"):
        SingleMLPRegressor(target_transform=value).fit(X, y)


def test_classifiers_have_no_target_transform():
    assert "target_transform" not in ParallelMLPClassifier().get_params()
    assert ParallelMLPRegressor().target_transform == "standard"
    assert SingleMLPRegressor().target_transform == "none"
