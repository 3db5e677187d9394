"""The MLP's face on the estimators (issue 20, item 3): scikit-learn MLP's
fitted attributes, a lone configuration trained as MLPClassifier, shuffle,
loss="poisson", n_iter_no_change=np.inf and scikit-learn's edge-case messages."""

import warnings

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.neural_network._base import poisson_loss

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._core._attributes import MLP_ATTRIBUTES
from skpmlp._engine import TrainConfig
from skpmlp._engine._backends import choose_trainer
from skpmlp._engine._backends._native import NativeTrainer
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._engine._losses import half_poisson_deviance
from skpmlp._engine._minibatch._batches import BatchPlanner
from skpmlp._search._space import build_population

SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(6,), (4, 3)], activation=("relu", "tanh"), learning_rate_init=(0.01, 0.05),
    max_iter=8, random_state=0)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _poisson_target(X, seed=0):
    return np.random.RandomState(seed).poisson(np.exp(0.5 * X[:, 0])).astype(float)


# --------------------------------------------------------- fitted attributes
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
@pytest.mark.parametrize("cv", [None, 3])
@pytest.mark.parametrize("early_stopping", [False, True])
def test_search_carries_the_best_models_mlp_attributes(iris, kind, cv, early_stopping):
    # the best model: with cv, GridSearchCV's refit (ensemble="best"); the
    # default's fold ensembles have no one model's attributes (test_ensemble_export.py)
    X, y = iris
    estimator = ParallelMLPClassifier if kind == "classifier" else ParallelMLPRegressor
    search = _fit(estimator(cv=cv, early_stopping=early_stopping, ensemble="best", **SEARCH),
                  X, y if kind == "classifier" else X[:, 0])
    best = search.best_estimator_
    for name in MLP_ATTRIBUTES:
        mine, theirs = getattr(search, name), getattr(best, name)
        if name in ("coefs_", "intercepts_"):
            for a, b in zip(mine, theirs):
                np.testing.assert_array_equal(a, b)
        else:
            assert mine == theirs, name
    assert isinstance(search.n_iter_, int) and search.n_iter_ == len(search.loss_curve_) >= 1
    assert search.loss_ == search.loss_curve_[-1]
    assert search.n_layers_ == len(search.coefs_) + 1
    assert search.n_outputs_ == (3 if kind == "classifier" else 1)
    assert search.out_activation_ == ("softmax" if kind == "classifier" else "identity")
    # scikit-learn's rules for what exists with and without early stopping;
    # with cv=None the best model is the holdout refit (holdout_refit=True):
    # a fixed number of epochs on every row, nothing watched
    if early_stopping and cv is None:
        assert search.validation_scores_ is None and search.best_validation_score_ is None
    elif early_stopping:
        assert search.best_loss_ is None
        assert len(search.validation_scores_) == search.n_iter_
        assert search.best_validation_score_ == max(search.validation_scores_)
    else:
        assert search.best_loss_ == min(search.loss_curve_)
        assert search.validation_scores_ is None and search.best_validation_score_ is None
    # t_ counts the rows the model trained on per epoch: every row (the
    # holdout refit, or with cv the refit on all the data), but for the
    # early-stopping validation part of the cv refit
    n_rows = len(X)
    if cv is not None and early_stopping:
        n_rows -= int(np.ceil(0.1 * n_rows))
    assert search.t_ == search.n_iter_ * n_rows


def test_per_model_records_keep_their_own_names(iris):
    X, y = iris
    search = _fit(ParallelMLPClassifier(cv=3, early_stopping=True, **SEARCH), X, y)
    assert search.n_iter_per_model_.shape == (search.n_models_, 3)
    assert search.validation_scores_per_model_.shape == search.loss_curves_.shape
    best = search.best_index_
    model = search.export_model(best, fold=1)
    assert model.n_iter_ == search.n_iter_per_model_[best, 1]
    np.testing.assert_allclose(model.validation_scores_, search.validation_scores_per_model_[best, 1, : model.n_iter_])


def test_no_mlp_attributes_without_refit(iris):
    X, y = iris
    search = _fit(ParallelMLPClassifier(refit=False, **SEARCH, cv=None), X, y)
    for name in MLP_ATTRIBUTES:
        assert not hasattr(search, name), name
    # every exported model still has them
    model = search.export_model(1)
    for name in MLP_ATTRIBUTES:
        assert hasattr(model, name), name


@pytest.mark.parametrize("estimator_class, target", [(SingleMLPClassifier, "y"), (SingleMLPRegressor, "x0")])
def test_single_model_has_mlps_attributes_as_sklearn(iris, estimator_class, target):
    X, y = iris
    y = y if target == "y" else X[:, 0]
    model = _fit(estimator_class((5,), "tanh", max_iter=6, random_state=0), X, y)
    reference = _fit((MLPClassifier if target == "y" else MLPRegressor)(hidden_layer_sizes=(5,), max_iter=6,
                                                                           random_state=0), X, y)
    for name in MLP_ATTRIBUTES:
        assert hasattr(model, name) and hasattr(reference, name), name
        assert type(getattr(model, name)) is type(getattr(reference, name)) or name in (
            "n_outputs_", "out_activation_", "loss_", "best_loss_"), name
    assert model.t_ == model.n_iter_ * len(X) == reference.t_
    assert model.n_layers_ == reference.n_layers_


def test_to_sklearn_keeps_the_training_record(iris):
    X, y = iris
    model = _fit(SingleMLPClassifier((5,), "tanh", max_iter=6, early_stopping=True, random_state=0), X, y)
    mlp = model.to_sklearn()
    for name in ("t_", "loss_", "best_loss_", "validation_scores_", "best_validation_score_"):
        assert getattr(mlp, name) == getattr(model, name), name


# ------------------------------------------------------ a lone configuration
@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
def test_one_configuration_trains_on_every_row_as_sklearns_mlp(iris, estimator_class):
    X, y = iris
    y = y if estimator_class is ParallelMLPClassifier else X[:, 0]
    params = dict(hidden_layer_sizes=(6,), activation="tanh", learning_rate_init=0.01, max_iter=8,
                  input_transform="robust-smooth-clip", dtype="float64", random_state=0)
    search = _fit(estimator_class(**params), X, y)
    assert search.n_models_ == 1
    assert search.t_ == search.n_iter_ * len(X)
    # nothing held out: nothing scores it
    assert np.isnan(search.best_score_)
    assert search.validation_scores_per_model_ is None
    # the same model trained alone on all the rows
    alone = _fit(clone(search.best_estimator_), X, y)
    np.testing.assert_allclose(alone.predict(X), search.predict(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("params", [dict(early_stopping=True), dict(n_repeats=2), dict(cv=3),
                                    dict(activation=("tanh", "relu"))], ids=["early_stopping", "repeats", "cv", "two"])
def test_otherwise_models_are_scored_on_held_out_rows(iris, params):
    X, y = iris
    base = dict(hidden_layer_sizes=(6,), activation="tanh", learning_rate_init=0.01, max_iter=8, random_state=0)
    search = _fit(ParallelMLPClassifier(**{"cv": None, **base, **params}), X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    if "cv" not in params:
        # the chosen model, trained on the training part (holdout_refit
        # retrains it on every row by default)
        assert search.export_model(search.best_index_).t_ < search.n_iter_per_model_[search.best_index_] * len(X)


# ------------------------------------------------------------------- shuffle
@pytest.mark.parametrize("shuffle", [True, False])
def test_batch_planner_keeps_row_order_without_shuffle(shuffle):
    rows = np.arange(10, 30)
    planner = BatchPlanner([rows], 8, 0, None, dtype=torch.float64, device="cpu", shuffle=shuffle)
    for _ in range(2):
        plan = planner.next_epoch()
        drawn = plan.rows[:, 0].reshape(-1)[: len(rows)].numpy()
        assert sorted(drawn) == list(rows)
        assert (list(drawn) == list(rows)) == (not shuffle)


def test_shuffle_false_changes_training_and_is_passed_on(iris):
    X, y = iris
    params = dict(hidden_layer_sizes=(6,), activation="tanh", learning_rate_init=0.05, max_iter=4,
                  batch_size=16, dtype="float64", random_state=0)
    shuffled = _fit(ParallelMLPClassifier(**params, cv=None), X, y)
    ordered = _fit(ParallelMLPClassifier(**params, shuffle=False, cv=None), X, y)
    assert ordered.best_estimator_.shuffle is False
    assert not np.allclose(shuffled.coefs_[0], ordered.coefs_[0])
    # the exported model retrains the same way alone
    alone = _fit(clone(ordered.best_estimator_), X, y)
    np.testing.assert_allclose(alone.coefs_[0], ordered.coefs_[0], rtol=0, atol=1e-9)


# ------------------------------------------------------------------- poisson
def test_half_poisson_deviance_equals_sklearns_loss():
    rng = np.random.RandomState(0)
    z = rng.randn(2, 7, 1)
    y = rng.poisson(2.0, size=(1, 7, 1)).astype(float)
    weights = np.full((1, 7), 1 / 7)
    ours = half_poisson_deviance(torch.as_tensor(z), torch.as_tensor(y), torch.as_tensor(weights)).numpy()
    for g in range(2):
        assert ours[g] == pytest.approx(poisson_loss(y[0], np.exp(z[g])), rel=1e-12)


def test_half_poisson_deviance_gradient_is_sklearns_output_delta():
    rng = np.random.RandomState(1)
    z = torch.tensor(rng.randn(1, 5, 2), requires_grad=True)
    y = torch.as_tensor(rng.poisson(1.5, size=(1, 5, 2)).astype(float))
    half_poisson_deviance(z, y, torch.full((1, 5), 1 / 5, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), ((torch.exp(z) - y) / 5).detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("loss, trainer", [("squared_error", NativeTrainer), ("poisson", PopulationTrainer)])
def test_poisson_runs_route_to_the_torch_trainer(loss, trainer):
    spec = build_population([(4,)], "tanh", 0.01, 0.0, 1).spec(0)
    config = TrainConfig(task="regression", n_outputs=1, loss=loss, device="cpu")
    from skpmlp import _kernels
    if trainer is NativeTrainer and not _kernels.kernel_available():
        pytest.skip("the native kernel is not available here")
    assert choose_trainer(spec, config) is trainer
    with pytest.raises(ValueError, match="loss='poisson'"):
        choose_trainer(spec, TrainConfig(task="regression", n_outputs=1, loss="poisson", device="cpu",
                                         backend="native"))


def test_poisson_regressor_predicts_positive_means_and_matches_sklearn(iris):
    X, _ = iris
    y = _poisson_target(X)
    search = _fit(ParallelMLPRegressor(loss="poisson", dtype="float64", **SEARCH, cv=None), X, y)
    assert search.out_activation_ == "exp" and search.best_estimator_.loss == "poisson"
    predicted = search.predict(X)
    assert (predicted > 0).all()
    pipeline = search.best_estimator_.to_sklearn()  # the default input transform, then the MLP
    mlp = pipeline[-1]
    assert mlp.loss == "poisson" and mlp.out_activation_ == "exp"
    np.testing.assert_allclose(pipeline.predict(X), predicted, rtol=1e-10)


def test_poisson_loss_curve_is_the_half_poisson_deviance(iris):
    """One full batch at a negligible learning rate: the epoch's loss is
    scikit-learn's poisson_loss of the (unchanged) model's predictions."""
    X, _ = iris
    y = _poisson_target(X)
    model = _fit(SingleMLPRegressor((5,), "tanh", loss="poisson", solver="sgd", learning_rate_init=1e-12,
                                    alpha=0.0, batch_size=len(X), max_iter=1, dtype="float64",
                                    random_state=0), X, y)
    assert model.loss_curve_[0] == pytest.approx(poisson_loss(y, model.predict(X)), rel=1e-9)


def test_poisson_model_in_search_equals_model_trained_alone(iris):
    X, _ = iris
    y = _poisson_target(X, seed=3)
    search = _fit(ParallelMLPRegressor(loss="poisson", dtype="float64", **SEARCH, cv=None), X, y)
    for i in (0, search.n_models_ - 1):
        others = _fit(ParallelMLPRegressor(loss="poisson", dtype="float64", **{
            **SEARCH, **search.cv_results_["params"][i], "n_repeats": 2}, cv=None), X, y)
        np.testing.assert_allclose(others.export_model(0).predict(X), search.export_model(i).predict(X),
                                   rtol=0, atol=1e-6)


@pytest.mark.parametrize("estimator", [ParallelMLPRegressor(loss="poisson", **SEARCH, cv=None),
                                       SingleMLPRegressor((4,), loss="poisson", max_iter=3)])
def test_poisson_refuses_negative_targets(iris, estimator):
    X, _ = iris
    with pytest.raises(ValueError, match="loss='poisson' needs non-negative targets"):
        estimator.fit(X, X[:, 0])


def test_classifiers_have_no_loss_parameter():
    assert "loss" not in ParallelMLPClassifier(cv=None).get_params()
    assert "loss" not in SingleMLPClassifier().get_params()


# ------------------------------------------------------ n_iter_no_change=inf
@pytest.mark.parametrize("estimator", [
    ParallelMLPClassifier((4,), ("relu", "tanh"), learning_rate_init=0.01, tol=10.0, max_iter=9,
                          n_iter_no_change=np.inf, random_state=0, cv=None),
    SingleMLPClassifier((4,), tol=10.0, max_iter=9, n_iter_no_change=np.inf, random_state=0),
])
def test_n_iter_no_change_inf_trains_max_iter_epochs(iris, estimator):
    X, y = iris
    fitted = _fit(estimator, X, y)
    assert fitted.n_iter_ == 9
    # a finite patience stops such a model (huge tol: nothing improves)
    finite = _fit(clone(estimator).set_params(n_iter_no_change=2), X, y)
    assert finite.n_iter_ < 9


@pytest.mark.parametrize("value", [0, -1, 1.5, np.nan])
def test_n_iter_no_change_other_values_are_refused(iris, value):
    X, y = iris
    with pytest.raises(ValueError, match="n_iter_no_change"):
        SingleMLPClassifier((4,), n_iter_no_change=value).fit(X, y)


# ---------------------------------------------------------- edge-case messages
@pytest.mark.parametrize("estimator", [
    ParallelMLPRegressor((4,), "relu", early_stopping=True, max_iter=3, cv=None),
    ParallelMLPRegressor((4,), ("relu", "tanh"), early_stopping=True, max_iter=3, cv=None),
    ParallelMLPRegressor((4,), "relu", early_stopping=True, cv=2, max_iter=3),
    SingleMLPRegressor((4,), early_stopping=True, max_iter=3),
])
def test_two_rows_with_early_stopping_is_too_small_a_validation_set(estimator):
    X, y = np.array([[0.0], [1.0]]), np.array([0.0, 1.0])
    if estimator.get_params().get("cv"):
        X, y = np.r_[X, X], np.r_[y, y]
    with pytest.raises(ValueError, match="The validation set is too small. Increase 'validation_fraction'"):
        estimator.fit(X, y)
    # as scikit-learn's MLP
    with pytest.raises(ValueError, match="The validation set is too small"):
        MLPRegressor(early_stopping=True).fit(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]))


@pytest.mark.parametrize("estimator", [
    ParallelMLPClassifier((4,), ("relu", "tanh"), early_stopping=True, max_iter=3, cv=None),
    SingleMLPClassifier((4,), early_stopping=True, max_iter=3),
])
def test_a_class_too_small_for_the_stratified_validation_split_raises(iris, estimator):
    X, y = iris
    y = np.r_[np.zeros(len(y) - 1), 1]  # class 1 has one sample
    with pytest.raises(ValueError, match="least populated class"):
        estimator.fit(X, y)
    with pytest.raises(ValueError, match="least populated class"):
        MLPClassifier(early_stopping=True).fit(X, y)


def test_model_selection_holdout_still_falls_back_with_a_warning(iris):
    """Without early stopping the cv=None holdout only selects models: an
    unstratifiable class warns (scikit-learn's MLP has no such split)."""
    X, y = iris
    y = np.r_[np.zeros(len(y) - 1), 1]
    with pytest.warns(UserWarning, match="not stratified"):
        ParallelMLPClassifier((4,), ("relu", "tanh"), max_iter=2, cv=None).fit(X, y)


@pytest.mark.parametrize("estimator, warns", [
    (ParallelMLPClassifier((4,), ("relu", "tanh"), batch_size=500, max_iter=2, cv=None), True),
    (ParallelMLPClassifier((4,), ("relu", "tanh"), batch_size=100, max_iter=2, cv=None), False),
    (ParallelMLPClassifier((4,), ("relu", "tanh"), batch_size="auto", max_iter=2, cv=None), False),
    (SingleMLPClassifier((4,), batch_size=151, max_iter=2), True),
    (SingleMLPClassifier((4,), batch_size=150, max_iter=2), False),
])
def test_batch_size_above_the_rows_warns_as_sklearn(iris, estimator, warns):
    X, y = iris
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    messages = [str(w.message) for w in caught]
    expected = "Got `batch_size` less than 1 or larger than sample size. It is going to be clipped"
    assert (expected in messages) == warns
