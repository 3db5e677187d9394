"""How the search picks and returns its model: ``tie_breaker``, ``holdout_refit``, ``best_score_``."""

import numpy as np
import pytest
from scipy.special import log_softmax
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import log_loss, mean_squared_error
from sklearn.model_selection import StratifiedKFold

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
    sklearn_mlp_params,
)
from skpmlp._engine import TrainConfig
from skpmlp._search._scoring import population_loss
from skpmlp._search._splits import holdout_split

#: scikit-learn's MLPs (the searches' own defaults add dropout, whose noisy
#: validation scores would untie the ties below).
SEARCH = dict(
    hidden_layer_sizes=[(4,), (8,)], activation=("tanh", "relu"), learning_rate_init=(0.01, 0.03),
    max_iter=20, dtype="float64", random_state=0, cv=None, **sklearn_mlp_params(),
)
#: The searches' own default space: dropout, beta_2 and the input transform.
OWN_SPACE = {**SEARCH, "dropout": "auto", "beta_2": 0.95, "input_transform": "robust-smooth-clip"}


def _data(estimator_class):
    if estimator_class is ParallelMLPClassifier:
        X, y = make_classification(150, 5, n_informative=3, n_classes=3, random_state=0)
        return X, y, SingleMLPClassifier
    X, y = make_regression(150, 5, noise=5.0, random_state=0)
    return X, y / y.std(), SingleMLPRegressor


def _validation_rows(search, y):
    """The held-out rows of a ``cv=None`` search (they depend only on the seed and y)."""
    classifier = isinstance(search, ParallelMLPClassifier)
    labels = np.unique(y, return_inverse=True)[1] if classifier else np.zeros(len(y), dtype=int)
    return holdout_split(labels, search.validation_fraction, search.random_state, stratify=classifier)[1]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_population_loss_is_the_log_loss_or_half_squared_error(task):
    rng = np.random.default_rng(0)
    outputs = rng.normal(size=(4, 30, 3 if task == "classification" else 2))
    weights = rng.uniform(0.5, 2, size=30)
    if task == "classification":
        y = rng.integers(0, 3, size=30)
        expected = [log_loss(y, np.exp(log_softmax(o, axis=1)), sample_weight=weights, labels=[0, 1, 2])
                    for o in outputs]
    else:
        y = rng.normal(size=(30, 2))
        expected = [mean_squared_error(y, o, sample_weight=weights) / 2 for o in outputs]
    outputs[3, 0, 0] = np.nan
    config = TrainConfig(task=task, n_outputs=outputs.shape[2])
    loss = population_loss(outputs, y, config=config, sample_weight=weights, failed=[False, True, False, False])
    np.testing.assert_allclose(loss[[0, 2]], np.array(expected)[[0, 2]], rtol=1e-12)
    assert np.isnan(loss[[1, 3]]).all()


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("space", ["sklearn", "own"])
def test_holdout_refit_is_the_configuration_trained_alone_on_all_rows(estimator_class, early_stopping,
                                                                      space):
    """float64: best_estimator_ equals the chosen configuration trained alone on
    every row for the epochs it trained in the search (its best epoch with early
    stopping), and differs from the model the search trained on the training part.
    In the searches' own space the single model is given the values whose
    single-model defaults are scikit-learn's."""
    X, y, single_class = _data(estimator_class)
    base = SEARCH if space == "sklearn" else OWN_SPACE
    if estimator_class is ParallelMLPRegressor:  # scikit-learn's targets, or the searches' own
        base = dict(base, target_transform="none" if space == "sklearn" else "standard")
    params = dict(base, max_iter=100, tol=1e-2) if early_stopping else base
    search = estimator_class(
        **params, holdout_refit=True, early_stopping=early_stopping, n_iter_no_change=3,
    ).fit(X, y)
    best, i = search.best_estimator_, search.best_index_
    epochs = int(search.n_iter_per_model_[i])
    if early_stopping:
        epochs = int(np.nanargmax(search.validation_scores_per_model_[i, :epochs])) + 1
        assert epochs <= search.n_iter_per_model_[i] < 100
    unsearched = {name: base[name] for name in sklearn_mlp_params(estimator_class)}
    alone = single_class(
        **unsearched, **search.best_params_, repeat=0, max_iter=epochs, n_iter_no_change=epochs,
        dtype="float64", random_state=0,
    ).fit(X, y)
    assert best.n_iter_ == alone.n_iter_ == epochs
    assert not best.early_stopping and best.max_iter == epochs
    np.testing.assert_allclose(best.predict(X), alone.predict(X), atol=1e-6)
    for ours, theirs in zip(best.coefs_ + best.intercepts_, alone.coefs_ + alone.intercepts_):
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
    held_out = search.export_model(i)  # trained on the training part only
    assert np.abs(held_out.coefs_[0] - best.coefs_[0]).max() > 1e-3


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_without_holdout_refit_best_estimator_is_the_trained_model(estimator_class):
    X, y, _ = _data(estimator_class)
    search = estimator_class(**SEARCH, holdout_refit=False).fit(X, y)
    held_out = search.export_model(search.best_index_)
    np.testing.assert_array_equal(search.best_estimator_.coefs_[0], held_out.coefs_[0])
    assert search.best_estimator_.max_iter == SEARCH["max_iter"]


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_best_score_is_the_configurations_validation_score(estimator_class):
    """best_score_ is the chosen row's mean validation score, refit or not; without
    refit it is the score of best_estimator_ itself on the held-out rows."""
    X, y, _ = _data(estimator_class)
    kept = estimator_class(**SEARCH, holdout_refit=False).fit(X, y)
    refit = estimator_class(**SEARCH, holdout_refit=True).fit(X, y)
    assert refit.best_index_ == kept.best_index_
    for search in (kept, refit):
        assert search.best_score_ == search.cv_results_["mean_test_score"][search.best_index_]
    assert refit.best_score_ == kept.best_score_
    val = _validation_rows(kept, y)
    assert kept.best_estimator_.score(X[val], y[val]) == pytest.approx(kept.best_score_)


@pytest.mark.parametrize("ensemble_size", [1, 3])
def test_tie_breaker_prefers_the_lower_validation_loss(ensemble_size):
    """Accuracy on 15 validation rows of separable data ties many models;
    tie_breaker="loss" orders them by log-loss, None by row order."""
    X, y = make_classification(150, 5, n_informative=4, n_redundant=0, class_sep=3.0, random_state=0)
    params = dict(SEARCH, holdout_refit=False, ensemble_size=ensemble_size, selection="score")
    first = ParallelMLPClassifier(**params, tie_breaker=None).fit(X, y)
    by_loss = ParallelMLPClassifier(**params, tie_breaker="loss").fit(X, y)
    ranks = by_loss.cv_results_["rank_test_score"]
    tied = np.flatnonzero(ranks == 1)
    assert len(tied) >= ensemble_size + 1
    val = _validation_rows(by_loss, y)
    losses = np.array([log_loss(y[val], by_loss.export_model(i).predict_proba(X[val])) for i in tied])
    assert len(np.unique(losses)) == len(tied)
    expected = tied[np.argsort(losses)][:ensemble_size]
    assert by_loss.best_index_ == expected[0] != tied[0]
    np.testing.assert_array_equal(by_loss.ensemble_indices_, expected)
    assert first.best_index_ == tied[0]
    np.testing.assert_array_equal(first.ensemble_indices_, tied[:ensemble_size])
    # the ranks and best_score_ describe the scores, whichever tie wins
    np.testing.assert_array_equal(first.cv_results_["rank_test_score"], ranks)
    assert first.best_score_ == by_loss.best_score_


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_selection_loss_picks_the_lowest_validation_loss(estimator_class):
    """The default (scoring=None) picks by the held-out loss in cv_results_;
    best_score_ stays that row's score; a scorer switches "auto" to "score"."""
    X, y, _ = _data(estimator_class)
    search = estimator_class(**SEARCH, holdout_refit=False).fit(X, y)
    val = _validation_rows(search, y)
    if estimator_class is ParallelMLPClassifier:
        losses = [log_loss(y[val], search.export_model(i).predict_proba(X[val])) for i in range(search.n_models_)]
    else:
        losses = [mean_squared_error(y[val], search.export_model(i).predict(X[val])) / 2
                  for i in range(search.n_models_)]
    np.testing.assert_allclose(search.validation_loss_, losses, rtol=1e-9)
    assert search.best_index_ == np.argmin(losses)
    assert search.best_score_ == search.cv_results_["mean_test_score"][search.best_index_]
    scored = estimator_class(**SEARCH, holdout_refit=False, scoring="accuracy" if estimator_class
                             is ParallelMLPClassifier else "r2").fit(X, y)
    assert scored.cv_results_["rank_test_score"][scored.best_index_] == 1


def test_selection_loss_differs_from_the_best_accuracy():
    X, y = make_classification(150, 5, n_informative=3, n_classes=3, random_state=2)
    by_loss = ParallelMLPClassifier(**SEARCH, n_repeats=3, selection="loss").fit(X, y)
    by_score = ParallelMLPClassifier(**SEARCH, n_repeats=3, selection="score").fit(X, y)
    assert by_loss.best_index_ == np.nanargmin(by_loss.validation_loss_) != by_score.best_index_
    assert by_score.cv_results_["rank_test_score"][by_score.best_index_] == 1
    assert by_loss.best_score_ == by_loss.cv_results_["mean_test_score"][by_loss.best_index_]
    assert by_loss.best_score_ < by_score.best_score_ == by_score.cv_results_["mean_test_score"].max()


def test_tie_breaker_with_cv_uses_the_mean_fold_loss():
    X, y = make_classification(150, 5, n_informative=4, n_redundant=0, class_sep=6.0, random_state=0)
    search = ParallelMLPClassifier(**{**SEARCH, "cv": 3}, n_repeats=3, selection="score", tie_breaker="loss").fit(X, y)
    ranks = search.cv_results_["rank_test_score"]
    tied = np.flatnonzero(ranks == 1)
    assert len(tied) >= 2
    losses = np.zeros(len(tied))
    for k, (_, test) in enumerate(StratifiedKFold(3).split(X, y)):
        losses += [log_loss(y[test], search.export_model(i, fold=k).predict_proba(X[test])) for i in tied]
    np.testing.assert_allclose(search.validation_loss_[tied], losses / 3, rtol=1e-9)
    assert search.best_index_ == tied[np.argmin(losses)] != tied[0]
