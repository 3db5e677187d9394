"""``restore_best_weights`` on the search estimators (issue 40, item 1).

Validated as scikit-learn validates; the rows watched are early stopping's
(with ``cv``, a validation part of each fold's training rows; with
``"fold"``, each fold's test rows); the refit
trains for the best epoch (holdout) or the mean of the folds' best epochs
(cv), and its ``fit`` retrains exactly it; fold ensembles and
``export_model`` are the restored fold models; files keep the best epochs;
adaptive and resumed searches record them. The engine's float64 tests
(against a plain torch loop) are ``tests/engine/test_restore_best_weights.py``;
checkpoints, ``tests/persistence/test_checkpoint.py``.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.utils._param_validation import InvalidParameterError

import skpmlp.io
from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor

BASE = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(8,), (5, 4)], activation="tanh", learning_rate_init=(0.02, 0.08),
    max_iter=15, batch_size=16, dtype="float64", random_state=0,
    restore_best_weights=True)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


@pytest.fixture(scope="module")
def data():
    return make_classification(150, 6, n_informative=4, n_classes=3, random_state=0)


@pytest.mark.parametrize("value", ["yes", None, 1.5])
@pytest.mark.parametrize("cls", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_a_bad_value_is_refused(cls, value):
    X, y = make_regression(30, 3, random_state=0)
    with pytest.raises(InvalidParameterError, match=f"'restore_best_weights' parameter of {cls.__name__}"):
        cls(restore_best_weights=value).fit(X, y)


def test_lbfgs_models_ignore_it_and_may_not_mix_with_minibatch_ones(data):
    X, y = data
    lbfgs = _fit(ParallelMLPClassifier(**dict(BASE, solver="lbfgs", cv=3)), X, y)
    assert lbfgs.best_epoch_per_model_ is None
    with pytest.raises(ValueError, match="restore_best_weights=True"):
        ParallelMLPClassifier(**dict(BASE, solver=["lbfgs", "adam"])).fit(X, y)


@pytest.mark.parametrize("cv", [None, 3])
def test_it_watches_the_rows_early_stopping_watches(data, cv):
    """With ``cv``, a validation part of each fold's training rows (the
    fold's test rows stay unseen), with ``cv=None`` the held-out rows: the
    validation curves of a search that never stops are early stopping's."""
    X, y = data
    never = dict(BASE, cv=cv, n_iter_no_change=np.inf)
    restored = _fit(ParallelMLPClassifier(**never), X, y)
    early = _fit(ParallelMLPClassifier(**dict(never, restore_best_weights=False,
                                                early_stopping=True)), X, y)
    np.testing.assert_array_equal(restored.validation_scores_per_model_,
                                  early.validation_scores_per_model_)
    best = restored.best_epoch_per_model_
    assert best.shape == restored.n_iter_per_model_.shape
    assert (best >= 1).all() and (best <= restored.n_iter_per_model_).all()
    assert (best < restored.n_iter_per_model_).any()
    assert "best_epoch" not in early.cv_results_


def test_fold_trains_every_training_row_and_picks_the_epoch_on_the_folds_test_rows(data):
    """``restore_best_weights="fold"`` (RealMLP's ``n_cv``): a fold replica
    trains what it trains unmonitored (all its fold's training rows, none
    held out), and its epoch is picked on the fold's test rows, so the
    score ``cv_results_`` gives a fold is the validation score of that
    replica's best epoch."""
    X, y = data
    never = dict(BASE, cv=3, n_iter_no_change=np.inf)
    fold = _fit(ParallelMLPClassifier(**dict(never, restore_best_weights="fold")), X, y)
    plain = _fit(ParallelMLPClassifier(**dict(never, restore_best_weights=False)), X, y)
    held_out = _fit(ParallelMLPClassifier(**never), X, y)
    np.testing.assert_array_equal(fold.loss_curves_, plain.loss_curves_)
    assert not np.array_equal(held_out.loss_curves_, plain.loss_curves_)
    best, curves = fold.best_epoch_per_model_, fold.validation_scores_per_model_
    assert (best >= 1).all() and (best < fold.n_iter_per_model_).any()
    for k in range(3):
        at_best = curves[np.arange(len(best)), k, best[:, k] - 1]
        np.testing.assert_allclose(fold.cv_results_[f"split{k}_test_score"], at_best, rtol=1e-12)


def test_fold_without_cv_is_true(data):
    X, y = data
    kwargs = dict(BASE, cv=None, n_iter_no_change=np.inf)
    fold = _fit(ParallelMLPClassifier(**dict(kwargs, restore_best_weights="fold")), X, y)
    true = _fit(ParallelMLPClassifier(**kwargs), X, y)
    np.testing.assert_array_equal(fold.best_epoch_per_model_, true.best_epoch_per_model_)
    np.testing.assert_array_equal(fold.predict_proba(X), true.predict_proba(X))


def test_the_cv_refit_trains_the_mean_of_the_folds_best_epochs_and_refits_so(data):
    X, y = data
    search = _fit(ParallelMLPClassifier(**dict(BASE, cv=3, ensemble="best")), X, y)
    best = search.best_epoch_per_model_[search.best_index_]
    n = max(int(np.floor(best.mean() + 0.5)), 1)
    np.testing.assert_array_equal(search.cv_results_["best_epoch"],
                                  search.best_epoch_per_model_.mean(axis=1))
    model = search.best_estimator_
    assert model.n_iter_ == n and model.max_iter == n and not model.early_stopping
    assert len(model.loss_curve_) == n
    again = _fit(clone(model), X, y)  # its fit retrains exactly it
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


def test_the_holdout_refit_trains_the_best_epoch(data):
    X, y = data
    search = _fit(ParallelMLPClassifier(**dict(BASE, cv=None, early_stopping=True,
                                               n_iter_no_change=3)), X, y)
    model = search.best_estimator_
    assert model.n_iter_ == search.best_epoch_per_model_[search.best_index_]
    kept = _fit(ParallelMLPClassifier(**dict(BASE, cv=None, holdout_refit=False)), X, y)
    exported = kept.export_model(kept.best_index_)
    for ours, theirs in zip(kept.best_estimator_.coefs_, kept._coefs[0][kept.best_index_]):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(exported.predict_proba(X), kept.predict_proba(X))


@pytest.mark.parametrize("value", [True, "fold"])
def test_a_fold_ensemble_is_the_restored_fold_models(data, value):
    X, y = data
    search = _fit(ParallelMLPClassifier(**dict(BASE, cv=3, ensemble="folds",
                                               restore_best_weights=value)), X, y)
    members = search.best_estimator_.estimators_
    assert len(members) == 3
    for k, member in enumerate(members):
        for ours, theirs in zip(member.coefs_, search._coefs[k][search.best_index_]):
            np.testing.assert_array_equal(ours, theirs)
        exported = search.export_model(search.best_index_, fold=k)
        np.testing.assert_array_equal(exported.predict_proba(X), member.predict_proba(X))


@pytest.mark.parametrize("value", [True, "fold"])
def test_a_saved_search_keeps_its_best_epochs(data, tmp_path, value):
    X, y = data
    search = _fit(ParallelMLPClassifier(**dict(BASE, cv=3, restore_best_weights=value)), X, y)
    skpmlp.io.save(search, tmp_path / "search.skpmlp")
    loaded = skpmlp.io.load(tmp_path / "search.skpmlp")
    assert loaded.restore_best_weights == value
    np.testing.assert_array_equal(loaded.best_epoch_per_model_, search.best_epoch_per_model_)
    np.testing.assert_array_equal(loaded.predict_proba(X), search.predict_proba(X))


def test_an_adaptive_search_counts_each_rows_own_epochs(data):
    X, y = data
    search = _fit(ParallelMLPClassifier(**dict(BASE, cv=None, pruning="halving", min_iter=2,
                                               halving_factor=2, refill="sample", max_models=8)),
                  X, y)
    best, n_iter = search.best_epoch_per_model_, search.n_iter_per_model_
    assert len(best) == len(search.cv_results_["params"]) > 4
    assert (best <= n_iter).all() and (best[n_iter > 0] >= 1).all()


def test_a_resumed_search_counts_from_its_first_fit(data):
    X, y = data
    search = ParallelMLPClassifier(**dict(BASE, cv=3, max_iter=6, warm_start=True))
    _fit(search, X, y)
    first_n = search.n_iter_per_model_.copy()
    _fit(search, X, y)
    best = search.best_epoch_per_model_
    assert (best > first_n).all() and (best <= search.n_iter_per_model_).all()


def test_regressors_restore_on_the_squared_error(data):
    X, y = make_regression(120, 5, noise=5.0, random_state=0)
    search = _fit(ParallelMLPRegressor(**dict(BASE, cv=3, monitor="loss")), X, y)
    assert (search.best_epoch_per_model_ >= 1).all()
    # with monitor="loss" the curves are the negated loss restore watches
    curves = search.validation_scores_per_model_
    for i in range(curves.shape[0]):
        for k in range(curves.shape[1]):
            n = search.n_iter_per_model_[i, k]
            assert search.best_epoch_per_model_[i, k] == np.nanargmax(curves[i, k, :n]) + 1
