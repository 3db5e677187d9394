"""``ensemble="best" | "folds" | "greedy"`` and ``cv="auto"`` (issue 30).

Every kind of ensemble predicts, in float64, the weighted average of its
members' standalone ``export_model`` predictions; the greedy selection
equals a plain reference implementation (scikit-learn's metrics on the
exported models' out-of-fold predictions); ensembles survive
``skpmlp.io``; no pruned model is ever a member; the invalid combinations
fail before anything trains.
"""

import io
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error, r2_score
from sklearn.model_selection import GroupKFold, StratifiedKFold
from sklearn.utils._param_validation import InvalidParameterError

import skpmlp._search._inputs
import skpmlp._search._splits
import skpmlp.io
from skpmlp import MLPEnsembleClassifier, ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._search._splits import AUTO_CV_FOLDS, holdout_split
from skpmlp._selection._greedy import GREEDY_STEPS, greedy_counts

SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,)], activation=("tanh", "relu"), learning_rate_init=(0.01, 0.03),
    max_iter=20, dtype="float64", random_state=0,
)
CLASSES = [0, 1, 2]


@pytest.fixture(scope="module")
def classification():
    return make_classification(150, 5, n_informative=3, n_classes=3, random_state=0)


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(150, 5, noise=5.0, random_state=0)
    return X, y / y.std()


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 20 epochs do not converge
        return estimator.fit(X, y)


def _output(model, X):
    """What an ensemble averages: probabilities (classifiers), predictions."""
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


def _expected(search, X, through_folds):
    """The weighted average of the members' standalone exported models:
    each member's refitted (or holdout) model, or the mean of its fold
    replicas."""
    total = 0.0
    for row, weight in zip(search.ensemble_indices_, search.ensemble_weights_):
        if through_folds:
            member = np.mean([_output(search.export_model(row, fold=k), X)
                              for k in range(search.n_splits_)], axis=0)
        else:
            member = _output(search.export_model(row), X)
        total = total + weight * member
    return total


KINDS = [
    # (parameters, members predict through their folds)
    (dict(cv=3, ensemble="best", ensemble_size=3), False),
    (dict(cv=None, ensemble="best", ensemble_size=3, holdout_refit=False), False),
    (dict(cv=3, ensemble="folds"), True),
    (dict(cv=3, ensemble="folds", ensemble_size=2), True),
    (dict(cv=3, ensemble="greedy"), True),
    (dict(cv=None, ensemble="greedy", holdout_refit=False), False),
    (dict(cv=3), True),  # the default, "auto": greedy with folds
]
KIND_IDS = ["best-cv", "best-holdout", "folds", "folds-top2", "greedy-cv", "greedy-holdout",
            "auto-cv"]


@pytest.mark.parametrize("params, through_folds", KINDS, ids=KIND_IDS)
def test_classifier_ensemble_is_the_weighted_average_of_its_exported_members(
        classification, params, through_folds):
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, **params), X, y)
    expected = _expected(search, X, through_folds)
    np.testing.assert_allclose(search.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(search.predict(X), np.argmax(expected, axis=1))
    assert search.score(X, y) == accuracy_score(y, np.argmax(expected, axis=1))
    np.testing.assert_allclose(search.ensemble_weights_.sum(), 1.0, rtol=1e-15)
    if params.get("ensemble", "auto") in ("greedy", "auto"):
        assert len(search.ensemble_indices_) > 1  # the case tests a real weighting


@pytest.mark.parametrize("params, through_folds", KINDS, ids=KIND_IDS)
def test_regressor_ensemble_is_the_weighted_average_of_its_exported_members(
        regression, params, through_folds):
    X, y = regression
    search = _fit(ParallelMLPRegressor(**SEARCH, **params), X, y)
    expected = _expected(search, X, through_folds)
    np.testing.assert_allclose(search.predict(X), expected, rtol=1e-12, atol=1e-14)
    assert search.score(X, y) == pytest.approx(r2_score(y, expected), rel=1e-12)
    if params.get("ensemble", "auto") in ("greedy", "auto"):
        assert len(search.ensemble_indices_) > 1


def test_greedy_with_cv_needs_no_refit_and_exports_fold_ensembles(classification):
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="greedy"), X, y)
    assert search._refitted == {}
    member = search.best_estimator_.estimators_[0]
    assert isinstance(member, MLPEnsembleClassifier) and len(member.estimators_) == 3
    exported = search.export_model(search.ensemble_indices_[0], fold="all")
    np.testing.assert_array_equal(exported.predict_proba(X), member.predict_proba(X))
    # best_* keep GridSearchCV's meaning: the best single configuration
    assert search.best_score_ == search.cv_results_["mean_test_score"][search.best_index_]


# ------------------------------------------------------ ensemble="auto"
def _same_choice(a, b, X):
    np.testing.assert_array_equal(a.ensemble_indices_, b.ensemble_indices_)
    np.testing.assert_array_equal(a.ensemble_weights_, b.ensemble_weights_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert type(a.best_estimator_) is type(b.best_estimator_)


@pytest.mark.parametrize("cv, kind", [(3, "greedy"), (None, "best")], ids=["folds", "holdout"])
def test_auto_ensemble_is_greedy_with_folds_and_best_with_a_holdout(classification, cv, kind):
    X, y = classification
    assert ParallelMLPClassifier().ensemble == "auto" == ParallelMLPRegressor().ensemble
    default = _fit(ParallelMLPClassifier(**SEARCH, cv=cv), X, y)
    _same_choice(default, _fit(ParallelMLPClassifier(**SEARCH, cv=cv, ensemble=kind), X, y), X)
    assert (default._refitted == {}) == (cv is not None)  # no refit with folds


@pytest.mark.parametrize("params", [
    dict(refit=lambda results: 5), dict(warm_start=True),
], ids=["callable refit", "warm start"])
def test_auto_ensemble_is_the_best_model_where_one_model_is_asked_for(classification, params):
    """A callable refit names the model; a warm fit goes on from one
    model's weights: "auto" is then "best", the chosen row refitted."""
    X, y = classification
    default = _fit(ParallelMLPClassifier(**SEARCH, cv=3, **params), X, y)
    _same_choice(default, _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="best", **params),
                               X, y), X)
    assert len(default.ensemble_indices_) == 1 and not hasattr(default.best_estimator_,
                                                                "estimators_")


def _two_metrics(estimator, X, y):
    predicted = estimator.predict(X)
    return {"acc": accuracy_score(y, predicted), "err": float(np.mean(predicted != y))}


def test_greedy_with_a_scorer_returning_a_dict_selects_on_the_refit_metric(classification):
    """scoring=callable returning several metrics, refit naming one: the
    greedy selection scores with that metric (it raised KeyError)."""
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="greedy", scoring=_two_metrics,
                                        refit="acc"), X, y)
    expected = _expected(search, X, through_folds=True)
    np.testing.assert_allclose(search.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
    # the ensemble's score is "acc" of its pooled out-of-fold predictions
    oof = np.zeros((len(y), len(CLASSES)))
    for k, (_, test) in enumerate(StratifiedKFold(3).split(X, y)):
        for row, weight in zip(search.ensemble_indices_, search.ensemble_weights_):
            oof[test] += weight * search.export_model(row, fold=k).predict_proba(X[test])
    assert search.ensemble_score_ == pytest.approx(accuracy_score(y, oof.argmax(1)))


# ----------------------------------------------------- greedy selection
def _reference_greedy(predictions, score, candidates, steps):
    """Caruana's selection written plainly: at every step, every candidate
    added to the ensemble (weights as counts), scored from scratch; the
    first best is taken, and it stops when none improves the score."""
    counts, best_score = np.zeros(len(predictions), dtype=int), -np.inf
    for _ in range(steps):
        trials = []
        for i in candidates:
            trial = counts.copy()
            trial[i] += 1
            trials.append(score(np.average(predictions, axis=0, weights=trial)))
        j = int(np.argmax(trials))
        if not trials[j] > best_score:
            break
        best_score = trials[j]
        counts[candidates[j]] += 1
    return counts, best_score


def test_greedy_counts_equal_the_plain_reference():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=40)
    logits = rng.normal(size=(7, 40, 3)) + 1.5 * np.eye(3)[y] * rng.uniform(0, 1, (7, 1, 1))
    predictions = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    candidates = [3, 0, 1, 2, 6, 5]  # model 4 is not a candidate

    def score(p):
        return -log_loss(y, p, labels=CLASSES)

    def vectorised(p):
        return np.array([score(q) for q in p])

    for steps in (1, 3, 10):
        counts, _, value = greedy_counts(predictions, vectorised, candidates, steps)
        expected, expected_value = _reference_greedy(predictions, score, candidates, steps)
        np.testing.assert_array_equal(counts, expected)
        assert value == pytest.approx(expected_value, rel=1e-12)
        assert counts[4] == 0 and counts.sum() <= steps


@pytest.mark.parametrize("selection, stopping", [("loss", False), ("score", False),
                                                  ("loss", True)],
                         ids=["loss", "score", "loss-early-stopping"])
def test_greedy_selection_equals_the_reference_on_exported_out_of_fold_predictions(
        classification, selection, stopping):
    """The search's greedy ensemble is the reference selection on the
    out-of-fold predictions of the exported fold replicas (log-loss, or
    accuracy with selection="score"), with scikit-learn's metrics; with
    early stopping, of the replicas as exported (their best epoch)."""
    X, y = classification
    stop = dict(early_stopping=True, n_iter_no_change=2) if stopping else {}
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="greedy", ensemble_size=6,
                                        selection=selection, scoring="accuracy", **stop), X, y)
    if stopping:
        assert (search.cv_results_["n_iter"] < SEARCH["max_iter"]).any()
    oof = np.zeros((search.n_models_, len(y), 3))
    for k, (_, test) in enumerate(StratifiedKFold(3).split(X, y)):
        for i in range(search.n_models_):
            oof[i, test] = search.export_model(i, fold=k).predict_proba(X[test])
    if selection == "loss":
        def score(p):
            return -log_loss(y, p, labels=CLASSES)
        candidates = np.argsort(search.validation_loss_, kind="stable")
    else:
        def score(p):
            return accuracy_score(y, np.argmax(p, axis=1))
        candidates = np.lexsort((np.arange(search.n_models_), search.validation_loss_,
                                 search.cv_results_["rank_test_score"]))
    counts, _ = _reference_greedy(oof, score, list(candidates), 6)
    rows = np.flatnonzero(counts)
    assert sorted(search.ensemble_indices_) == sorted(rows)
    np.testing.assert_allclose(search.ensemble_weights_,
                               counts[search.ensemble_indices_] / counts.sum())
    averaged = np.average(oof, axis=0, weights=counts)
    assert search.ensemble_score_ == pytest.approx(accuracy_score(y, averaged.argmax(1)))


def test_greedy_on_the_holdout_uses_the_validation_rows(regression):
    X, y = regression
    search = _fit(ParallelMLPRegressor(**SEARCH, cv=None, ensemble="greedy", holdout_refit=False),
                  X, y)
    _, val = holdout_split(np.zeros(len(y), dtype=int), 0.1, 0, stratify=False)
    predictions = np.array([search.export_model(i).predict(X[val]) for i in range(search.n_models_)])
    counts, _ = _reference_greedy(
        predictions, lambda p: -mean_squared_error(y[val], p),
        list(np.argsort(search.validation_loss_, kind="stable")), GREEDY_STEPS)
    np.testing.assert_allclose(search.ensemble_weights_,
                               counts[search.ensemble_indices_] / counts.sum())
    assert set(search.ensemble_indices_) == set(np.flatnonzero(counts))


def test_ensemble_size_caps_the_greedy_steps(regression):
    X, y = regression
    search = _fit(ParallelMLPRegressor(**SEARCH, cv=3, ensemble="greedy", ensemble_size=2), X, y)
    weights = search.ensemble_weights_
    assert len(search.ensemble_indices_) <= 2 and set(np.round(weights * 2)) <= {1, 2}


# ----------------------------------------------------- early stopping
@pytest.mark.parametrize("params, through_folds", [KINDS[0], KINDS[2], KINDS[4], KINDS[5]],
                         ids=["best-cv", "folds", "greedy-cv", "greedy-holdout"])
def test_early_stopped_ensembles_are_the_weighted_average_of_their_members(
        classification, params, through_folds):
    """With early stopping every member is its best epoch's weights, as
    ``export_model`` gives them, and the ensemble averages exactly those."""
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, **params, early_stopping=True,
                                        n_iter_no_change=2), X, y)
    assert (search.cv_results_["n_iter"] < SEARCH["max_iter"]).any()  # some stopped early
    expected = _expected(search, X, through_folds)
    np.testing.assert_allclose(search.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
    assert search.score(X, y) == accuracy_score(y, np.argmax(expected, axis=1))


# ------------------------------------------------------------- refit
@pytest.mark.parametrize("params", [
    dict(cv=3, ensemble="folds"), dict(cv=3, ensemble="greedy"),
    dict(cv=None, ensemble="greedy"),
], ids=["folds", "greedy-cv", "greedy-holdout-refit"])
def test_the_refit_is_the_ensemble(classification, params):
    """``refit`` keeps its meaning: ``best_estimator_`` is the ensemble, and
    the search predicts through it; ``best_*`` describe the best single
    configuration, as GridSearchCV's."""
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, **params), X, y)
    best = search.best_estimator_
    assert isinstance(best, MLPEnsembleClassifier)
    if params["ensemble"] == "folds":  # one member: the ensemble is its k fold models
        assert len(search.ensemble_indices_) == 1 and len(best.estimators_) == search.n_splits_
    else:
        assert len(best.estimators_) == len(search.ensemble_indices_)
        np.testing.assert_array_equal(best.weights_, search.ensemble_weights_)
    np.testing.assert_array_equal(search.predict_proba(X), best.predict_proba(X))
    assert search.score(X, y) == best.score(X, y)
    assert search.best_score_ == search.cv_results_["mean_test_score"][search.best_index_]
    if params["cv"] is None:  # holdout_refit: the members were retrained on every row
        assert set(search._refitted) == set(search.ensemble_indices_.tolist())


@pytest.mark.parametrize("params", [
    dict(cv=3, ensemble="folds"), dict(cv=3, ensemble="greedy"),
    dict(cv=None, ensemble="greedy"),
], ids=["folds", "greedy-cv", "greedy-holdout"])
def test_refit_false_builds_no_ensemble(classification, params):
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, **params, refit=False), X, y)
    for name in ("best_estimator_", "ensemble_indices_", "ensemble_weights_"):
        assert not hasattr(search, name)
    with pytest.raises(AttributeError, match="has no attribute 'predict'"):
        search.predict(X)
    # every trained model can still be exported, fold ensembles included
    exported = search.export_model(0, fold="all") if params["cv"] else search.export_model(0)
    assert exported.predict_proba(X).shape == (len(y), 3)


def test_greedy_with_a_callable_refit(classification):
    """A callable ``refit`` picks ``best_index_`` (no ``best_score_``, as
    GridSearchCV); the greedy ensemble is still selected over every model."""
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="greedy",
                                        refit=lambda results: 5), X, y)
    assert search.best_index_ == 5 and not hasattr(search, "best_score_")
    expected = _expected(search, X, through_folds=True)
    np.testing.assert_allclose(search.predict_proba(X), expected, rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------- halving
@pytest.mark.parametrize("params", [
    dict(cv=None, ensemble="greedy"), dict(cv=2, ensemble="greedy"),
    dict(cv=2, ensemble="folds", ensemble_size=4), dict(cv=None, ensemble="best", ensemble_size=4),
], ids=["greedy-holdout", "greedy-cv", "folds", "best"])
def test_halving_never_gives_the_ensemble_a_pruned_model(classification, params):
    X, y = classification
    search = ParallelMLPClassifier(
        hidden_layer_sizes=[(4,), (8,)], activation=("relu", "tanh"),
        learning_rate_init=(0.003, 0.01, 0.03), alpha=(1e-4, 1e-2), pruning="halving", min_iter=2,
        halving_factor=2, max_iter=12, n_iter_no_change=1000, random_state=0, **params,
    )
    _fit(search, X, y)
    pruned = search.cv_results_["pruned"]
    assert pruned.sum() >= search.n_models_ // 2
    assert not pruned[search.ensemble_indices_].any()


# -------------------------------------------------------------- io
@pytest.mark.parametrize("params", [
    dict(cv=3, ensemble="folds"), dict(cv=3, ensemble="greedy"),
    dict(cv=None, ensemble="greedy"), dict(cv="auto", ensemble="greedy"),
], ids=["folds", "greedy-cv", "greedy-holdout", "auto-greedy"])
def test_ensembles_round_trip_through_skpmlp_io(classification, params):
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, **params), X, y)
    buffer = io.BytesIO()
    skpmlp.io.save(search, buffer)
    loaded = skpmlp.io.load(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(loaded.predict_proba(X), search.predict_proba(X))
    np.testing.assert_array_equal(loaded.ensemble_weights_, search.ensemble_weights_)
    np.testing.assert_array_equal(loaded.ensemble_indices_, search.ensemble_indices_)
    assert loaded.cv_ == search.cv_ and loaded.score(X, y) == search.score(X, y)
    row = int(search.ensemble_indices_[0])
    if search.cv_ is not None:
        np.testing.assert_array_equal(loaded.export_model(row, fold="all").predict_proba(X),
                                      search.export_model(row, fold="all").predict_proba(X))


def test_weights_that_disagree_with_the_members_are_refused(classification):
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="greedy"), X, y)
    for attribute, weights, message in [
        ("ensemble_weights_", np.array([1.0]), "ensemble_weights_ are not one weight per member"),
        ("ensemble_weights_", -search.ensemble_weights_, "ensemble_weights_ are not one weight"),
    ]:
        tampered = _fit(ParallelMLPClassifier(**SEARCH, cv=3, ensemble="greedy"), X, y)
        setattr(tampered, attribute, weights)
        buffer = io.BytesIO()
        skpmlp.io.save(tampered, buffer)
        with pytest.raises(skpmlp.io.InvalidFileError, match=message):
            skpmlp.io.load(io.BytesIO(buffer.getvalue()))
    tampered = search.best_estimator_
    tampered.weights_ = tampered.weights_[::-1].copy()
    buffer = io.BytesIO()
    skpmlp.io.save(tampered, buffer)
    with pytest.raises(skpmlp.io.InvalidFileError, match="weights_ are not the weights parameter"):
        skpmlp.io.load(io.BytesIO(buffer.getvalue()))


# ----------------------------------------------------------- errors
def test_folds_with_a_holdout_is_refused_before_training(classification, monkeypatch):
    X, y = classification

    def no_training(*args, **kwargs):
        raise AssertionError("trained")

    monkeypatch.setattr(skpmlp._search._inputs, "train_models", no_training)
    with pytest.raises(ValueError, match=r"ensemble='folds' .* needs k folds .* Pass cv=5"):
        ParallelMLPClassifier(**SEARCH, cv=None, ensemble="folds").fit(X, y)
    # cv="auto" choosing the holdout (one configuration) says so
    with pytest.raises(ValueError, match=r"cv='auto' chose the holdout"):
        ParallelMLPClassifier((4,), "relu", learning_rate_init=0.01, cv="auto",
                              input_transform="robust-smooth-clip", ensemble="folds").fit(X, y)
    # refit=False builds no ensemble: nothing to refuse
    with pytest.raises(AssertionError, match="trained"):
        ParallelMLPClassifier(**SEARCH, cv=None, ensemble="folds", refit=False).fit(X, y)


@pytest.mark.parametrize("params, error", [
    (dict(ensemble="median"), InvalidParameterError),
    (dict(ensemble_size=0), InvalidParameterError),
    (dict(cv="always"), InvalidParameterError),
])
def test_invalid_values_are_refused(classification, params, error):
    with pytest.raises(error):
        ParallelMLPClassifier(**SEARCH, **params).fit(*classification)


def test_export_model_fold_all_needs_cv(classification):
    X, y = classification
    search = _fit(ParallelMLPClassifier(**SEARCH, cv=None), X, y)
    with pytest.raises(ValueError, match=r"fold must be an int in \[0, 1\); got 'all'"):
        search.export_model(0, fold="all")


def test_ensemble_weights_must_match_the_members(classification):
    X, y = classification
    members = [_fit(ParallelMLPClassifier((4,), "relu", max_iter=5), X, y).best_estimator_] * 2
    with pytest.raises(ValueError, match="weights must be 2 finite non-negative numbers"):
        MLPEnsembleClassifier(members, weights=[1.0]).fit(X, y)
    with pytest.raises(ValueError, match="weights must be 2 finite"):
        MLPEnsembleClassifier.from_fitted(members, weights=[1.0, -1.0])
    weighted = MLPEnsembleClassifier.from_fitted(members, weights=[3, 1])
    np.testing.assert_allclose(weighted.weights_, [0.75, 0.25])


# ---------------------------------------------------------- cv="auto"
def test_cv_auto_is_the_default_and_k_fold_on_small_data(classification):
    X, y = classification
    assert ParallelMLPClassifier().cv == "auto" and ParallelMLPRegressor().cv == "auto"
    search = _fit(ParallelMLPClassifier(**SEARCH), X, y)
    assert search.cv_ == AUTO_CV_FOLDS and search.n_splits_ == AUTO_CV_FOLDS
    same = _fit(ParallelMLPClassifier(**SEARCH, cv=AUTO_CV_FOLDS), X, y)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  same.cv_results_["mean_test_score"])


def test_cv_auto_is_the_holdout_on_large_data(classification, monkeypatch):
    X, y = classification
    monkeypatch.setattr(skpmlp._search._splits, "AUTO_CV_MAX_SAMPLES", len(y) - 1)
    search = _fit(ParallelMLPClassifier(**SEARCH, cv="auto"), X, y)
    assert search.cv_ is None and search.n_splits_ == 1 and search.loss_curves_.ndim == 2


@pytest.mark.parametrize("case", ["one configuration", "small class", "few groups"])
def test_cv_auto_falls_back_to_the_holdout(classification, case):
    X, y = classification
    params, groups = dict(SEARCH), None
    if case == "one configuration":
        params.update(hidden_layer_sizes=(4,), activation="relu", learning_rate_init=0.01)
    elif case == "small class":
        y = y.copy()
        y[:3] = 3  # a fourth class of 3 rows: too few for 5 stratified folds
    else:
        groups = np.arange(len(y)) % 4
    search = ParallelMLPClassifier(**params, cv="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y, groups=groups)
    assert search.cv_ is None


def test_cv_auto_with_groups_is_group_k_fold(classification):
    X, y = classification
    groups = np.arange(len(y)) % 10
    search = ParallelMLPClassifier(**SEARCH, cv="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y, groups=groups)
    assert isinstance(search.cv_, GroupKFold) and search.n_splits_ == AUTO_CV_FOLDS
    buffer = io.BytesIO()  # the chosen splitter survives skpmlp.io
    skpmlp.io.save(search, buffer)
    loaded = skpmlp.io.load(io.BytesIO(buffer.getvalue()))
    assert isinstance(loaded.cv_, GroupKFold) and loaded.cv_.n_splits == AUTO_CV_FOLDS
    np.testing.assert_array_equal(loaded.predict_proba(X), search.predict_proba(X))
