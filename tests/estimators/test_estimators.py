"""The estimators' scikit-learn surface: search results, models, integration."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._search._splits import holdout_split

FAST = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    max_iter=30, random_state=0, cv=None)  # the holdout, as the tests assume


@pytest.fixture(scope="module")
def fitted(iris):
    X, y = iris
    search = ParallelMLPClassifier(
        [(8,), (16,), (8, 8)], ("relu", "tanh"), learning_rate_init=(0.01, 0.03),
        alpha=(1e-4, 1e-2), n_repeats=2, **FAST,
    )
    return search.fit(X, y)


def test_population_is_the_cross_product_times_repeats(fitted):
    assert fitted.n_models_ == 3 * 2 * 2 * 2 * 2
    params = fitted.cv_results_["params"]
    assert len(params) == fitted.n_models_
    combos = {tuple(sorted(p.items())) for p in params}
    assert len(combos) == fitted.n_models_ // 2
    assert sorted(set(fitted.cv_results_["param_repeat"])) == [0, 1]


def test_cv_results_has_gridsearch_schema(fitted):
    results = fitted.cv_results_
    expected = {
        "params", "param_hidden_layer_sizes", "param_activation", "param_learning_rate_init",
        "param_alpha", "param_repeat", "split0_test_score", "mean_test_score", "std_test_score",
        "rank_test_score", "mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time",
        "n_iter",
    }
    assert set(results) == expected
    assert isinstance(results["param_activation"], np.ma.MaskedArray)
    frame = pd.DataFrame(results)
    assert len(frame) == fitted.n_models_
    np.testing.assert_array_equal(results["mean_test_score"], results["split0_test_score"])
    assert results["rank_test_score"][fitted.best_index_] == 1
    assert fitted.best_score_ == results["mean_test_score"].max()
    assert fitted.best_params_ == results["params"][fitted.best_index_]


def test_curves_and_iterations(fitted):
    n_epochs = fitted.loss_curves_.shape[1]
    assert fitted.loss_curves_.shape == (fitted.n_models_, n_epochs)
    assert fitted.validation_scores_per_model_.shape == fitted.loss_curves_.shape
    for i, n_iter in enumerate(fitted.n_iter_per_model_):
        assert np.isfinite(fitted.loss_curves_[i, :n_iter]).all()
        assert np.isnan(fitted.loss_curves_[i, n_iter:]).all()


def test_best_params_pass_back_to_the_estimator(fitted, iris):
    X, y = iris
    one = clone(fitted).set_params(**fitted.best_params_, n_repeats=1).fit(X, y)
    assert one.n_models_ == 1


def test_selected_model_is_the_trained_one(fitted, iris):
    """With held-out validation and holdout_refit=False, best_estimator_ is the trained model itself."""
    X, y = iris
    fitted = clone(fitted).set_params(holdout_refit=False).fit(X, y)
    train, val = holdout_split(np.unique(y, return_inverse=True)[1], 0.1, 0, stratify=True)
    best = fitted.best_estimator_
    assert best.score(X[val], y[val]) == pytest.approx(fitted.best_score_)
    assert isinstance(best, SingleMLPClassifier)
    assert best.get_params()["repeat"] == fitted.cv_results_["param_repeat"][fitted.best_index_]


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_model_in_search_equals_model_trained_alone(estimator_class):
    """The independence invariant through the estimators, in float64."""
    if estimator_class is ParallelMLPClassifier:
        X, y = make_classification(120, 6, n_informative=4, n_classes=3, random_state=0)
    else:
        X, y = make_regression(120, 6, n_targets=2, noise=0.1, random_state=0)
        y = y / y.std()
    search = estimator_class(
        [(5,), (9,), (4, 3)], ("tanh", "relu", "gelu"), learning_rate_init=(0.01, 0.05),
        n_repeats=2, max_iter=15, dtype="float64", random_state=3, cv=None,
    ).fit(X, y)
    train, _ = holdout_split(
        np.unique(y, return_inverse=True)[1] if y.ndim == 1 else np.zeros(len(y), int),
        0.1, 3, stratify=estimator_class is ParallelMLPClassifier,
    )
    for i in [0, 5, 13, search.n_models_ - 1]:
        exported = search.export_model(i)
        alone = clone(exported).fit(X[train], y[train])
        if estimator_class is ParallelMLPClassifier:
            a, b = exported.predict_proba(X), alone.predict_proba(X)
        else:
            a, b = exported.predict(X), alone.predict(X)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
        assert alone.n_iter_ == search.n_iter_per_model_[i]


@pytest.mark.parametrize("labels", ["binary", "multiclass", "strings"])
def test_classification_labels(labels, iris):
    X, y = iris
    if labels == "binary":
        y = (y == 2).astype(int)
    elif labels == "strings":
        y = np.array(["setosa", "versicolor", "virginica"])[y]
    search = ParallelMLPClassifier((16,), ("relu", "tanh"), learning_rate_init=0.03, **FAST).fit(X, y)
    assert set(search.classes_) == set(y)
    pred = search.predict(X)
    assert pred.dtype == np.asarray(y).dtype
    proba = search.predict_proba(X)
    assert proba.shape == (len(y), len(search.classes_))
    np.testing.assert_allclose(proba.sum(1), 1)
    np.testing.assert_array_equal(search.classes_[proba.argmax(1)], pred)
    assert search.score(X, y) > 0.8


@pytest.mark.parametrize("n_targets", [1, 3])
def test_regression_single_and_multi_output(n_targets):
    X, y = make_regression(300, 5, n_targets=n_targets, noise=1.0, random_state=0)
    y = y / y.std(axis=0)
    search = ParallelMLPRegressor([(16,), (32,)], ("tanh", "relu"), learning_rate_init=0.01, max_iter=100, random_state=0)
    search.fit(X, y)
    pred = search.predict(X)
    assert pred.shape == y.shape
    assert search.score(X, y) > 0.9


@pytest.mark.parametrize("solver", ["adam", "sgd"])
def test_solvers_learn(solver, iris):
    X, y = iris
    lr = 0.01 if solver == "adam" else 0.1
    search = ParallelMLPClassifier((16,), "tanh", solver=solver, learning_rate_init=lr, max_iter=80, random_state=0)
    assert search.fit(X, y).score(X, y) > 0.9


def test_custom_scoring(iris):
    X, y = iris
    search = ParallelMLPClassifier((8,), ("relu", "tanh"), scoring="neg_log_loss", **FAST).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert (scores < 0).all()
    assert search.best_score_ == scores.max()


def test_refit_false_keeps_results_without_predict(iris):
    X, y = iris
    search = ParallelMLPClassifier((8,), ("relu", "tanh"), refit=False, **FAST).fit(X, y)
    assert not hasattr(search, "best_estimator_")
    assert not hasattr(search, "predict")
    assert search.export_model(1).predict(X).shape == (len(X),)


def test_unfitted_and_bad_export(iris):
    X, y = iris
    search = ParallelMLPClassifier()
    with pytest.raises(NotFittedError):
        search.predict(X)
    search = ParallelMLPClassifier((8,), "relu", **FAST).fit(X, y)
    with pytest.raises(ValueError, match="index must be an int"):
        search.export_model(search.n_models_)


def test_pickle_roundtrip(fitted, iris):
    X, _ = iris
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
    model = pickle.loads(pickle.dumps(fitted.best_estimator_))
    np.testing.assert_array_equal(model.predict_proba(X), fitted.predict_proba(X))


def test_pipeline_cross_val_and_gridsearch(iris):
    X, y = iris
    pipe = make_pipeline(
        StandardScaler(),
        ParallelMLPClassifier((8,), ("relu", "tanh"), learning_rate_init=0.03, **FAST),
    )
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.8
    grid = GridSearchCV(
        ParallelMLPClassifier((8,), "relu", **FAST),
        {"learning_rate_init": [0.01, 0.03], "activation": ["relu", ("tanh", "logistic")]},
        cv=2,
    ).fit(X, y)
    # each candidate is itself a search of one architecture and one learning
    # rate over its activations: one model for "relu", two for the pair
    models = {"relu": 1, ("tanh", "logistic"): 2}
    assert grid.best_estimator_.n_models_ == models[grid.best_params_["activation"]]


def test_feature_names_are_kept(iris):
    X, y = iris
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    search = ParallelMLPClassifier((8,), "relu", **FAST).fit(frame, y)
    np.testing.assert_array_equal(search.feature_names_in_, ["a", "b", "c", "d"])
    np.testing.assert_array_equal(search.best_estimator_.feature_names_in_, ["a", "b", "c", "d"])
    search.predict(frame)


def test_same_random_state_same_results(iris):
    X, y = iris
    a = ParallelMLPClassifier((8,), ("relu", "tanh"), **FAST).fit(X, y)
    b = ParallelMLPClassifier((8,), ("relu", "tanh"), **FAST).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_verbose_1_shows_a_progress_bar(iris, capsys):
    X, y = iris
    ParallelMLPClassifier((8,), "relu", verbose=1, max_iter=3, random_state=0,
                          cv=None).fit(X, y)
    captured = capsys.readouterr()
    # the default input transform names the runs
    assert "fused run (robust-smooth-clip inputs) 1" in captured.err
    assert "3/3" in captured.err and "best_val" in captured.err
    assert "epoch" not in captured.out


def test_verbose_2_adds_a_line_per_epoch(iris, capsys):
    X, y = iris
    ParallelMLPClassifier((8,), "relu", verbose=2, max_iter=3, random_state=0,
                          cv=None).fit(X, y)
    out = capsys.readouterr().out
    # two learning rates, in each input transform's run
    assert all(out.count(f"epoch {e}: 2 models training") == 2 for e in (1, 2, 3))
    assert "best validation score" in out


@pytest.mark.parametrize("verbose", [1, 2, 3])
def test_verbose_prints_gridsearchcv_lines_per_fit(iris, capsys, verbose):
    """As GridSearchCV: how many fits at verbose 1; from 2 a "[CV] END" line
    per model and fold (after the fused run), with the fold and score from 3."""
    X, y = iris
    search = ParallelMLPClassifier((8,), "relu", alpha=[1e-4, 1e-2], cv=2, verbose=verbose, max_iter=3,
                                   input_transform="robust-smooth-clip", random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert "Fitting 2 folds for each of 4 candidates, totalling 8 fits" in lines
    ends = [line for line in lines if "] END " in line]
    assert len(ends) == (8 if verbose > 1 else 0)
    if verbose == 2:
        assert all(line.startswith("[CV] END ") and "score=" not in line for line in ends)
    if verbose == 3:
        # model after model, fold after fold, each with its own split score
        results = search.cv_results_
        expected = [f"[CV {k + 1}/2] END " for _ in range(4) for k in range(2)]
        assert [line[:len(e)] for line, e in zip(ends, expected)] == expected
        scores = [results[f"split{k}_test_score"][i] for i in range(4) for k in range(2)]
        assert all(f"score={score:.3f} total time=" in line for line, score in zip(ends, scores))
        assert "activation=relu, alpha=0.0001, hidden_layer_sizes=(8,), learning_rate_init=0.003;" in ends[0]


def test_verbose_reports_the_cv_refit_too(iris, capsys):
    X, y = iris
    ParallelMLPClassifier((8,), "relu", cv=2, ensemble="best", verbose=1, max_iter=3,
                          random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "fused run (robust-smooth-clip inputs) 1" in err
    assert "refit run (robust-smooth-clip inputs) 1" in err


def test_verbose_0_prints_nothing(iris, capsys):
    X, y = iris
    ParallelMLPClassifier((8,), "relu", verbose=0, max_iter=3, random_state=0).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_sparse_input_is_densified(iris):
    from scipy import sparse

    X, y = iris
    dense = ParallelMLPClassifier((8,), "relu", **FAST).fit(X, y)
    sp = ParallelMLPClassifier((8,), "relu", **FAST).fit(sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.predict_proba(X), sp.predict_proba(sparse.csr_matrix(X)))


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(hidden_layer_sizes=[]), "hidden_layer_sizes must hold at least one value"),
        (dict(hidden_layer_sizes=[(8,), (0,)]), "hidden_layer_sizes: every hidden layer width must be a positive int"),
        (dict(activation=("relu", "swish")), "Unknown activation 'swish'; allowed activations are"),
        (dict(learning_rate_init=(0.01, -1.0)), "learning_rate_init values must be finite positive"),
        (dict(alpha=[-1.0]), "alpha values must be finite non-negative"),
        (dict(device="tpu"), "device='tpu'"),
    ],
)
def test_bad_parameters_get_clear_errors(params, message, iris):
    X, y = iris
    with pytest.raises(ValueError, match=message):
        ParallelMLPClassifier(**params).fit(X, y)


def test_single_model_rejects_several_architectures(iris):
    X, y = iris
    with pytest.raises(ValueError, match="one architecture"):
        SingleMLPClassifier(hidden_layer_sizes=((8,), (4,))).fit(X, y)


def test_single_regressor_fits():
    X, y = make_regression(100, 3, random_state=0)
    model = SingleMLPRegressor((16,), "tanh", learning_rate_init=0.01, max_iter=100, random_state=0)
    assert model.fit(X, y / y.std()).score(X, y / y.std()) > 0.8


@pytest.mark.parametrize("ensemble_size", [1, 3])
def test_predict_log_proba_is_the_log_of_predict_proba(iris, ensemble_size):
    """As MLPClassifier.predict_log_proba, on the search and its best model."""
    X, y = iris
    search = ParallelMLPClassifier(
        hidden_layer_sizes=[(4,), (8,)], max_iter=20, random_state=0, ensemble_size=ensemble_size,
        cv=None,
    ).fit(X, y)
    np.testing.assert_allclose(np.exp(search.predict_log_proba(X)), search.predict_proba(X), rtol=1e-6)
    single = search.export_model(0)
    np.testing.assert_allclose(np.exp(single.predict_log_proba(X)), single.predict_proba(X), rtol=1e-6)
    assert not hasattr(ParallelMLPClassifier(refit=False, cv=2).fit(X, y), "predict_log_proba")
