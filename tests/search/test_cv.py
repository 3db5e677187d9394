"""Fused K-fold cross-validation: GridSearchCV parity and the fold invariant."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_regression
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold, train_test_split
from sklearn.neural_network import MLPClassifier

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._engine import TrainConfig
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._init import population_initial_weights
from skpmlp._search._space import build_population
from skpmlp._search._splits import _train_test_rows
from skpmlp.model_selection import fused_cross_validate

SMALL = dict(
    hidden_layer_sizes=[(6,), (10,)], activation=("relu", "tanh"), learning_rate_init=(0.01, 0.05),
    max_iter=15, random_state=0,
)


@pytest.fixture(scope="module")
def kfold_search(iris):
    X, y = iris
    return ParallelMLPClassifier(cv=3, ensemble="best", **SMALL).fit(X, y)


def _without_params(keys):
    return {k for k in keys if not k.startswith("param_")}


def test_keys_match_gridsearchcv(iris):
    X, y = iris
    ours = ParallelMLPClassifier(cv=3, return_train_score=True, **SMALL).fit(X, y)
    grid = GridSearchCV(
        MLPClassifier(max_iter=5), {"hidden_layer_sizes": [(6,)], "activation": ["relu"]},
        cv=3, return_train_score=True,
    ).fit(X, y)
    # GridSearchCV's keys, plus skpmlp's documented n_iter column
    assert _without_params(ours.cv_results_) == _without_params(grid.cv_results_) | {"n_iter"}
    assert ours.n_splits_ == 3


def test_splits_are_scored_per_fold(kfold_search):
    results = kfold_search.cv_results_
    per_fold = np.c_[[results[f"split{k}_test_score"] for k in range(3)]].T
    np.testing.assert_allclose(results["mean_test_score"], per_fold.mean(1))
    np.testing.assert_allclose(results["std_test_score"], per_fold.std(1))
    assert kfold_search.loss_curves_.shape[:2] == (kfold_search.n_models_, 3)
    assert kfold_search.n_iter_per_model_.shape == (kfold_search.n_models_, 3)


def test_fold_replica_equals_that_fold_alone(iris):
    """Fold k's replica scores exactly as the same search on fold k alone."""
    X, y = iris
    params = dict(SMALL, dtype="float64")
    folds = list(StratifiedKFold(3).split(X, y))
    full = ParallelMLPClassifier(cv=folds, **params).fit(X, y)
    for k in (0, 2):
        alone = ParallelMLPClassifier(cv=[folds[k]], **params).fit(X, y)
        np.testing.assert_array_equal(
            full.cv_results_[f"split{k}_test_score"], alone.cv_results_["split0_test_score"]
        )
        for i in (0, full.n_models_ - 1):
            np.testing.assert_allclose(
                full.export_model(i, fold=k).predict_proba(X),
                alone.export_model(i, fold=0).predict_proba(X),
                atol=1e-9,
            )


def test_fold_replicas_share_initial_weights():
    """Every fold's replica of a model starts from that model's own initial
    weights, drawn from its seed alone."""
    spec = build_population([(6,), (10, 4)], ("relu", "tanh"), (0.01, 0.05), 0.0, 2).spec(0)
    K, M, n_features, n_classes = 3, spec.n_models, 4, 3
    config = TrainConfig(task="classification", n_outputs=n_classes, dtype="float64")
    start = PopulationTrainer(spec, config, n_features, n_folds=K).kept_weights()
    coefs, intercepts = population_initial_weights(spec, n_features, n_classes)
    for k in range(K):
        for i in range(M):
            fold_coefs, fold_intercepts = start[k * M + i]  # replica k * M + i: fold k's copy of model i
            for got, drawn in zip(fold_coefs + fold_intercepts, coefs[i] + intercepts[i]):
                np.testing.assert_array_equal(got, drawn)


def test_replicas_on_the_same_rows_train_alike(iris):
    """Batches depend on the seed and a fold's rows only, so replicas that
    start alike and train on the same rows end alike, whatever their fold."""
    X, y = iris
    train_rows, test_rows = next(StratifiedKFold(3).split(X, y))
    search = ParallelMLPClassifier(cv=[(train_rows, test_rows)] * 3, **dict(SMALL, dtype="float64")).fit(X, y)
    for i in range(search.n_models_):
        first = search.export_model(i, fold=0)
        for k in (1, 2):
            again = search.export_model(i, fold=k)
            for got, want in zip(again.coefs_ + again.intercepts_, first.coefs_ + first.intercepts_):
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_refit_retrains_best_on_all_data(iris, kfold_search):
    X, y = iris
    best = kfold_search.best_estimator_
    again = clone(best).fit(X, y)
    np.testing.assert_allclose(best.predict_proba(X), again.predict_proba(X), atol=1e-5)
    assert kfold_search.refit_time_ > 0
    np.testing.assert_array_equal(kfold_search.predict(X), best.predict(X))
    other = (kfold_search.best_index_ + 1) % kfold_search.n_models_
    # a row that was not refitted: its fold ensemble, what its score measured
    fold_models = kfold_search.export_model(other)
    np.testing.assert_array_equal(fold_models.predict_proba(X),
                                  kfold_search.export_model(other, fold="all").predict_proba(X))
    kfold_search.export_model(other, fold=1)


def test_multimetric_scoring_and_refit_by_name(iris):
    X, y = iris
    search = ParallelMLPClassifier(
        cv=3, scoring={"acc": "accuracy", "nll": "neg_log_loss"}, refit="nll", **SMALL
    ).fit(X, y)
    for key in ("mean_test_acc", "rank_test_acc", "split2_test_nll", "rank_test_nll"):
        assert key in search.cv_results_
    assert search.best_index_ == int(np.argmin(search.cv_results_["rank_test_nll"]))
    assert set(search.scorer_) == {"acc", "nll"}


def test_multimetric_refit_rules(iris):
    X, y = iris
    with pytest.raises(ValueError, match="multi-metric scoring, the parameter refit must be set to a scorer key"):
        ParallelMLPClassifier(cv=3, scoring=["accuracy", "f1_macro"], **SMALL).fit(X, y)
    with pytest.raises(ValueError, match="the parameter refit must be set to a scorer key"):
        ParallelMLPClassifier(cv=3, scoring=["accuracy"], refit="r2", **SMALL).fit(X, y)
    search = ParallelMLPClassifier(cv=3, scoring=["accuracy", "f1_macro"], refit=False, **SMALL).fit(X, y)
    assert not hasattr(search, "best_index_") and not hasattr(search, "best_estimator_")
    assert "mean_test_f1_macro" in search.cv_results_


def test_fused_cross_validate_matches_fit(iris, kfold_search):
    X, y = iris
    results = fused_cross_validate(ParallelMLPClassifier(**SMALL), X, y, cv=3)
    for key in ("split0_test_score", "mean_test_score", "rank_test_score"):
        np.testing.assert_array_equal(results[key], kfold_search.cv_results_[key])


def test_splitters_and_iterables(iris):
    X, y = iris
    splitter = KFold(4, shuffle=True, random_state=1)
    a = ParallelMLPClassifier(cv=splitter, **SMALL).fit(X, y)
    b = ParallelMLPClassifier(cv=list(splitter.split(X, y)), **SMALL).fit(X, y)
    assert a.n_splits_ == 4
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


def test_regression_kfold():
    X, y = make_regression(150, 4, noise=1.0, random_state=0)
    search = ParallelMLPRegressor(cv=KFold(3), **dict(SMALL, max_iter=60)).fit(X, y / y.std())
    assert "split2_test_score" in search.cv_results_
    assert search.best_score_ > 0.5


def test_sample_weight_equals_repeated_rows_full_batch():
    """Integer weights = repeated rows, with full batches (float64)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    sw = rng.randint(0, 3, size=30)
    params = dict(
        hidden_layer_sizes=(5,), activation="tanh", learning_rate_init=0.05, max_iter=20,
        batch_size=200, dtype="float64", random_state=0,
    )
    from skpmlp import SingleMLPClassifier

    weighted = SingleMLPClassifier(**params).fit(X, y, sample_weight=sw)
    repeated = SingleMLPClassifier(**params).fit(np.repeat(X, sw, 0), np.repeat(y, sw))
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-10)


def test_sample_weight_reaches_scores(iris):
    X, y = iris
    sw = np.where(y == 0, 5.0, 1.0)
    plain = ParallelMLPClassifier(cv=3, **SMALL).fit(X, y)
    ones = ParallelMLPClassifier(cv=3, **SMALL).fit(X, y, sample_weight=np.ones(len(y)))
    weighted = ParallelMLPClassifier(cv=3, **SMALL).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(plain.cv_results_["mean_test_score"], ones.cv_results_["mean_test_score"])
    assert not np.allclose(plain.cv_results_["mean_test_score"], weighted.cv_results_["mean_test_score"])


def test_error_score(iris):
    X, y = iris
    bad = dict(SMALL, learning_rate_init=(0.01, 1e9), solver="sgd", activation=("identity",))
    with pytest.warns(RuntimeWarning, match="diverged"):
        search = ParallelMLPClassifier(cv=3, **bad).fit(X * 1e3, y)
    lrs = np.array(search.cv_results_["param_learning_rate_init"], dtype=float)
    assert np.isnan(search.cv_results_["mean_test_score"][lrs == 1e9]).all()
    assert search.best_params_["learning_rate_init"] == 0.01
    with pytest.raises(ValueError, match="diverged"):
        ParallelMLPClassifier(cv=3, error_score="raise", **bad).fit(X * 1e3, y)


@pytest.mark.parametrize("n", [10, 57, 150])
@pytest.mark.parametrize("strata", [None, "classes", "column"])
@pytest.mark.parametrize("n_val", [2, 3, "seventh"])
def test_validation_rows_are_train_test_splits(n, strata, n_val):
    """The holdout's rows come from train_test_split's splitter without its
    checks: the same rows, and where it refuses (a class too small to
    stratify, fewer validation rows than classes), the same message."""
    y = np.random.default_rng(n).integers(0, 3, n)
    y[:2] = [0, 1]
    y[-1] = 2
    strata = {None: None, "classes": y, "column": (y == 2)[:, None]}[strata]
    n_val = n // 7 + 1 if n_val == "seventh" else n_val

    def outcome(split):
        try:
            return [np.asarray(part).tolist() for part in split()]
        except ValueError as error:
            return str(error)

    for seed in (0, 5, 2**31 - 3):
        want = outcome(lambda: train_test_split(np.arange(n), test_size=n_val, random_state=seed, stratify=strata))
        assert outcome(lambda: _train_test_rows(n, n_val, seed, strata)) == want
