"""Early stopping with compaction, successive halving and top-k ensembles.

Stopping, pruning or compacting one model never changes another model's
trajectory: checked in float64 against each model trained alone.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skpmlp import MLPEnsembleClassifier, ParallelMLPClassifier, SingleMLPClassifier
from skpmlp._engine import PopulationSpec, TrainConfig, train_population
from skpmlp._engine._halving import halve
from skpmlp._selection._choice import select_members

SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,), (8, 4)], activation=("relu", "tanh", "logistic"),
    learning_rate_init=(0.003, 0.03), max_iter=40, dtype="float64", random_state=0,
)


def _spec(n=12):
    archs = [(3,), (5,), (8,), (4, 3)]
    acts = ["relu", "tanh", "logistic"]
    models = [(archs[i % 4], acts[i % 3], 10 ** (-3 + (i % 5) / 2), i) for i in range(n)]
    return PopulationSpec(
        hidden_layer_sizes=[m[0] for m in models], activations=[m[1] for m in models],
        learning_rates=np.array([m[2] for m in models]), alphas=np.full(n, 1e-4),
        init_seeds=[(0, m[3]) for m in models],
    )


def _config(**kw):
    base = dict(task="classification", n_outputs=3, batch_size=16, max_iter=30, dtype="float64",
                n_iter_no_change=3, tol=1e-3, shuffle_seed=5)
    return TrainConfig(**{**base, **kw})


def _folds(X):
    rows = np.random.default_rng(0).permutation(len(X))
    return [(rows[:110], rows[110:])]


def _assert_same_weights(a, b, models, *, atol=1e-10):
    for i in models:
        for wa, wb in zip(a.coefs[0][i] + a.intercepts[0][i], b.coefs[0][i] + b.intercepts[0][i]):
            np.testing.assert_allclose(wa, wb, atol=atol, rtol=0)


@pytest.mark.parametrize("early_stopping", [False, True])
def test_compaction_changes_no_result(iris, early_stopping):
    X, y = iris
    spec = _spec()
    runs = [
        train_population(spec, _config(early_stopping=early_stopping, compact_fraction=f), X, y, _folds(X))
        for f in (0.0, 2.0)  # compact at every stop / never
    ]
    assert len(set(runs[0].n_iter.ravel())) > 1, "models must stop at different epochs"
    np.testing.assert_array_equal(runs[0].n_iter, runs[1].n_iter)
    np.testing.assert_allclose(runs[0].loss_curves, runs[1].loss_curves, atol=1e-12)
    _assert_same_weights(runs[0], runs[1], range(spec.n_models), atol=1e-12)


@pytest.mark.parametrize("early_stopping", [False, True])
def test_pruned_and_surviving_models_equal_models_trained_alone(iris, early_stopping):
    """A pruned or surviving model's weights are those of the same model
    trained alone for as many epochs: pruning others never touched it."""
    X, y = iris
    spec = _spec()
    config = _config(pruning="halving", min_iter=2, halving_factor=2, early_stopping=early_stopping,
                     n_iter_no_change=1000)
    population = train_population(spec, config, X, y, _folds(X))
    assert population.pruned.any() and not population.pruned.all()
    for i in (int(np.flatnonzero(population.pruned[:, 0])[0]), int(np.flatnonzero(~population.pruned[:, 0])[0])):
        alone_config = dataclasses.replace(config, pruning=None, max_iter=int(population.n_iter[i, 0]))
        alone = train_population(spec.subset([i]), alone_config, X, y, _folds(X))
        for wa, wb in zip(population.coefs[0][i] + population.intercepts[0][i],
                          alone.coefs[0][0] + alone.intercepts[0][0]):
            np.testing.assert_allclose(wa, wb, atol=1e-10, rtol=0)


def test_halving_keeps_the_best_third_at_each_rung():
    scores = np.array([0.5, 0.9, np.nan, 0.7, 0.9, 0.1, 0.3])
    alive = np.array([True, True, True, True, True, True, False])
    pruned = halve(scores, alive, 3)
    # ceil(6 / 3) = 2 kept: the two 0.9 (ties by position), NaN counts as worst
    np.testing.assert_array_equal(np.flatnonzero(~pruned & alive), [1, 4])
    assert not pruned[6]


def test_halving_schedule_and_ranking(iris):
    X, y = iris
    search = ParallelMLPClassifier(pruning="halving", min_iter=3, halving_factor=3, n_iter_no_change=1000, **SEARCH, cv=None)
    search.fit(X, y)
    results = search.cv_results_
    n_iter, pruned = results["n_iter"], results["pruned"]
    # rungs at 3, 9, 27: 18 -> 6 -> 2 -> 1 survivors
    assert sorted(set(n_iter[pruned])) == [3, 9, 27]
    assert [int(np.sum(n_iter > e)) for e in (3, 9, 27)] == [6, 2, 1]
    assert not pruned[search.best_index_]
    assert results["rank_test_score"][pruned].min() > results["rank_test_score"][~pruned].max()
    # curves end with the model
    after_stop = np.arange(search.loss_curves_.shape[1])[None, :] >= n_iter[:, None]
    for curves in (search.loss_curves_, search.validation_scores_per_model_):
        assert np.isnan(curves[after_stop]).all() and np.isfinite(curves[~after_stop]).all()


def test_kfold_replicas_stop_together(iris):
    X, y = iris
    search = ParallelMLPClassifier(cv=3, early_stopping=True, n_iter_no_change=2, **SEARCH).fit(X, y)
    assert (search.n_iter_per_model_ == search.n_iter_per_model_[:, :1]).all()
    assert search.validation_scores_per_model_.shape == search.loss_curves_.shape


def test_kfold_early_stopping_refit_is_the_single_model_fit(iris):
    X, y = iris
    search = ParallelMLPClassifier(cv=3, early_stopping=True, n_iter_no_change=3, ensemble="best",
                                   **SEARCH).fit(X, y)
    best = search.best_estimator_
    assert isinstance(best, SingleMLPClassifier) and best.early_stopping
    again = clone(best).fit(X, y)
    np.testing.assert_allclose(again.predict_proba(X), best.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("cv", [None, 3])
def test_top_k_ensemble(iris, cv):
    X, y = iris
    # the trained models themselves (cv=None), or the configurations refitted (cv=3)
    search = ParallelMLPClassifier(cv=cv, ensemble="best", ensemble_size=3, holdout_refit=False,
                                   **SEARCH).fit(X, y)
    ensemble = search.best_estimator_
    assert isinstance(ensemble, MLPEnsembleClassifier)
    members = search.ensemble_indices_
    assert members[0] == search.best_index_ and len(members) == 3
    # selection="loss" (the default with scoring=None): the 3 lowest validation losses
    np.testing.assert_array_equal(members, np.argsort(search.validation_loss_, kind="stable")[:3])
    mean = np.mean([search.export_model(i).predict_proba(X) for i in members], axis=0)
    np.testing.assert_allclose(search.predict_proba(X), mean)
    np.testing.assert_array_equal(search.predict(X), search.classes_[mean.argmax(1)])


HALVING = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,)], activation=("relu", "tanh"), learning_rate_init=(0.01, 0.03),
    pruning="halving", min_iter=2, halving_factor=2, n_iter_no_change=1000, random_state=0,
    ensemble="best",  # the top ensemble_size models (a greedy ensemble's size counts steps)
)


@pytest.mark.parametrize("cv", [None, 2])
def test_an_ensemble_takes_no_pruned_model_while_enough_survive(iris, cv):
    X, y = iris
    # one rung at epoch 2: 8 -> 4 models train to the end
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search = ParallelMLPClassifier(cv=cv, max_iter=3, ensemble_size=3, **HALVING).fit(X, y)
    assert not [w for w in record if "pruned" in str(w.message)]
    pruned = search.cv_results_["pruned"]
    assert pruned.sum() == 4
    members = search.ensemble_indices_
    assert members[0] == search.best_index_ and len(members) == 3
    assert not pruned[members].any()


@pytest.mark.parametrize("cv", [None, 2])
def test_halving_keeps_an_ensembles_size_training_to_the_end(iris, cv):
    """Rungs at epochs 2, 4, 8 would leave 8 -> 4 -> 2 -> 1 model; with
    ensemble_size=3 each keeps at least 3, the members all trained to the end."""
    X, y = iris
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        search = ParallelMLPClassifier(cv=cv, max_iter=10, ensemble_size=3, **HALVING).fit(X, y)
    assert not [w for w in record if "pruned" in str(w.message)]
    pruned = search.cv_results_["pruned"]
    assert (~pruned).sum() == 3
    assert (search.n_iter_per_model_[~pruned] == 10).all()
    members = search.ensemble_indices_
    assert sorted(members) == sorted(np.flatnonzero(~pruned))
    mean = np.mean([m.predict_proba(X) for m in search.best_estimator_.estimators_], axis=0)
    np.testing.assert_allclose(search.predict_proba(X), mean)


def test_no_pruned_model_is_an_ensemble_member_of_a_large_search(iris):
    """36 models, ensemble_size=5: rungs at 2, 6, 18 would keep 12 -> 4
    -> 2; they keep 5, and none of the members was pruned."""
    X, y = iris
    search = ParallelMLPClassifier(
        hidden_layer_sizes=[(3,), (6,), (4, 4)], activation=("relu", "tanh"),
        learning_rate_init=(0.003, 0.01, 0.03), alpha=(1e-4, 1e-2), pruning="halving",
        min_iter=2, halving_factor=3, max_iter=20, n_iter_no_change=1000, ensemble_size=5,
        random_state=0, cv=None, input_transform="robust-smooth-clip",
    ).fit(X, y)
    pruned = search.cv_results_["pruned"]
    assert len(pruned) == 36 and pruned.sum() == 31
    assert (search.n_iter_per_model_[~pruned] == 20).all()
    assert len(search.ensemble_indices_) == 5
    assert not pruned[search.ensemble_indices_].any()


@pytest.mark.parametrize(
    "ranks, pruned, usable, expected, warns",
    [
        # pruned rows are passed over whatever their rank, failed ones always
        ([1, 2, 3, 4, 5], [0, 1, 0, 0, 0], [1, 1, 1, 1, 1], [0, 2, 3], False),
        ([1, 2, 3, 4, 5], [0, 0, 0, 1, 0], [1, 1, 0, 1, 1], [0, 1, 4], False),
        # too few survivors: a smaller ensemble, never a pruned member
        ([1, 2, 3, 4, 5], [0, 1, 1, 0, 1], [1, 1, 1, 1, 1], [0, 3], True),
        ([4, 1, 3, 2, 5], [1, 1, 0, 1, 1], [1, 1, 1, 0, 1], [2], True),
        # no pruning: the top ranks, ties by row order
        ([2, 1, 2, 1, 5], None, [1, 1, 1, 1, 1], [1, 3, 0], False),
    ],
)
def test_select_members(ranks, pruned, usable, expected, warns):
    best = expected[0]  # best_index_ always leads
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        members = select_members(
            np.array(ranks), 3, best=best, usable=np.array(usable, dtype=bool),
            pruned=None if pruned is None else np.array(pruned, dtype=bool),
        )
    np.testing.assert_array_equal(members, expected)
    assert bool(record) == warns


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_monitoring_the_validation_loss(iris, task):
    """monitor="loss": validation_scores_ is minus each model's loss on the
    validation rows, as scikit-learn's neg_log_loss / neg_mean_squared_error
    (a regressor's in the units it trains in: the target standardised on
    the training part)."""
    from sklearn.metrics import log_loss, mean_squared_error

    from skpmlp import ParallelMLPRegressor
    from skpmlp._search._splits import holdout_split

    X, y = iris
    params = dict(SEARCH, max_iter=8, n_iter_no_change=1000, monitor="loss")
    if task == "classification":
        search = ParallelMLPClassifier(**params, cv=None).fit(X, y)
        _, val = holdout_split(y, 0.1, 0, stratify=True)
        losses = [log_loss(y[val], search.export_model(i).predict_proba(X[val]), labels=[0, 1, 2])
                  for i in range(search.n_models_)]
    else:
        target = X[:, 0] + np.sin(X[:, 1])
        search = ParallelMLPRegressor(**params, cv=None).fit(X[:, 1:], target)
        train, val = holdout_split(np.zeros(len(target), dtype=int), 0.1, 0, stratify=False)
        mean, std = target[train].mean(), target[train].std()
        losses = [0.5 * mean_squared_error((target[val] - mean) / std,
                                           (search.export_model(i).predict(X[val, 1:]) - mean) / std)
                  for i in range(search.n_models_)]
    np.testing.assert_allclose(search.validation_scores_per_model_[:, -1], -np.array(losses), rtol=1e-9, atol=1e-9)


def test_halving_on_the_validation_loss(iris):
    X, y = iris
    search = ParallelMLPClassifier(pruning="halving", min_iter=3, monitor="loss", **SEARCH, cv=None).fit(X, y)
    pruned, ranks = search.cv_results_["pruned"], search.cv_results_["rank_test_score"]
    assert pruned.any() and not pruned[search.best_index_]
    assert ranks[pruned].min() > ranks[~pruned].max()


def test_a_search_out_of_time_at_a_rung_still_applies_the_rungs_cut(iris, monkeypatch,
                                                                    wrap_run_epoch):
    """The clock runs out at the end of epoch 2, the first rung: the models
    that rung stops are reported pruned, as in the uninterrupted search."""
    from skpmlp._engine import _train
    from skpmlp._engine._minibatch import _run as _fused_run

    X, y = iris
    params = dict(HALVING, max_iter=10, dtype="float64", refit=False, cv=None)
    reference = ParallelMLPClassifier(**params).fit(X, y)
    first_cut = reference.cv_results_["pruned"] & (reference.n_iter_per_model_ == 2)
    assert first_cut.sum() == 4
    epochs = [0]

    def counting(run_epoch):
        def counted(self, *args, **kwargs):
            epochs[0] += 1
            return run_epoch(self, *args, **kwargs)

        return counted

    wrap_run_epoch(counting)
    for module in (_fused_run, _train):
        monkeypatch.setattr(module, "past", lambda deadline, dp=None: epochs[0] >= 2)
    with pytest.warns(UserWarning, match="reached max_time after 2 epochs"):
        halted = ParallelMLPClassifier(**params, max_time=1e6).fit(X, y)
    np.testing.assert_array_equal(halted.cv_results_["pruned"], first_cut)
    assert (halted.n_iter_per_model_ == 2).all()


@pytest.mark.parametrize("ensemble, size, kept", [("best", None, 1), ("best", 5, 5), ("folds", 4, 4),
                                                  ("greedy", None, 1), ("greedy", 40, 1)])
def test_a_rung_keeps_an_ensembles_members_not_its_greedy_steps(ensemble, size, kept):
    """A greedy ensemble's ``ensemble_size`` counts selection steps (with
    repeats) among the models trained to the end: halving keeps no extra
    models for it."""
    from skpmlp._search._settings import halving_keeps

    assert halving_keeps(ParallelMLPClassifier(ensemble=ensemble, ensemble_size=size)) == kept
