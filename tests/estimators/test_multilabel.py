"""Multilabel classification: a 2-D indicator ``y``, one sigmoid output per
label, as scikit-learn's MLPClassifier."""


import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification
from sklearn.metrics import accuracy_score
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from skpmlp import ParallelMLPClassifier, SingleMLPClassifier
from skpmlp._search._splits import holdout_split

FAST = dict(max_iter=20, learning_rate_init=0.01, random_state=0)


@pytest.fixture(scope="module")
def multilabel():
    X, Y = make_multilabel_classification(n_samples=150, n_features=6, n_classes=4, random_state=0)
    return StandardScaler().fit_transform(X), Y


@pytest.mark.parametrize("cv, ensemble_size", [(None, 1), (3, 1), (None, 3)])
def test_search_predicts_indicator_matrices(multilabel, backend, cv, ensemble_size):
    X, Y = multilabel
    search = ParallelMLPClassifier(
        [(8,), (16,)], ("relu", "tanh"), cv=cv, ensemble_size=ensemble_size, **FAST
    ).fit(X, Y)
    assert search.out_activation_ == "logistic"
    np.testing.assert_array_equal(search.classes_, np.arange(4))
    pred, proba = search.predict(X), search.predict_proba(X)
    assert pred.shape == proba.shape == Y.shape
    assert pred.dtype.kind == "i" and set(np.unique(pred)) <= {0, 1}
    assert ((proba > 0) & (proba < 1)).all()
    # rows need not sum to one: each label has its own sigmoid
    assert not np.allclose(proba.sum(1), 1)
    np.testing.assert_array_equal(pred, (proba > 0.5).astype(int))
    np.testing.assert_allclose(search.predict_log_proba(X), np.log(proba), rtol=1e-12)
    # the default score is the subset accuracy, as MLPClassifier.score
    assert search.score(X, Y) == accuracy_score(Y, pred)
    # well above always predicting the most frequent label set (0.13)
    assert search.score(X, Y) > 0.25


def test_model_in_search_equals_model_trained_alone(multilabel, backend):
    """The independence invariant through the estimators, in float64, on
    each backend; the holdout split of a multilabel y is not stratified."""
    X, Y = multilabel
    search = ParallelMLPClassifier(
        [(5,), (4, 3)], ("tanh", "relu"), learning_rate_init=(0.01, 0.05), max_iter=15,
        dtype="float64", random_state=3, cv=None
    ).fit(X, Y)
    train, _ = holdout_split(np.zeros(len(Y), int), 0.1, 3, stratify=False)
    for i in [0, 3, search.n_models_ - 1]:
        exported = search.export_model(i)
        alone = clone(exported).fit(X[train], Y[train])
        np.testing.assert_allclose(exported.predict_proba(X), alone.predict_proba(X), rtol=0, atol=1e-6)
        assert alone.n_iter_ == search.n_iter_per_model_[i]


def test_validation_scores_are_subset_accuracies(multilabel):
    X, Y = multilabel
    # two models: a lone configuration would train on every row, as MLPClassifier
    search = ParallelMLPClassifier((8,), "tanh", n_repeats=2, **FAST, cv=None).fit(X, Y)
    _, val = holdout_split(np.zeros(len(Y), int), 0.1, 0, stratify=False)
    model = search.export_model(0)
    assert search.cv_results_["mean_test_score"][0] == accuracy_score(Y[val], model.predict(X[val]))


def test_scorers_see_indicator_predictions(multilabel):
    X, Y = multilabel
    search = ParallelMLPClassifier((8,), "tanh", scoring="f1_macro", cv=2, **FAST).fit(X, Y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_early_stopping_and_sample_weight(multilabel):
    X, Y = multilabel
    weights = np.linspace(0.5, 2, len(Y))
    model = SingleMLPClassifier((8,), early_stopping=True, **FAST).fit(X, Y, sample_weight=weights)
    assert model.predict(X).shape == Y.shape


def test_to_sklearn_predicts_the_same(multilabel):
    X, Y = multilabel
    model = SingleMLPClassifier((8,), "tanh", **FAST).fit(X, Y)
    mlp = model.to_sklearn()
    assert isinstance(mlp, MLPClassifier) and mlp.out_activation_ == "logistic"
    np.testing.assert_array_equal(mlp.predict(X), model.predict(X))
    np.testing.assert_allclose(mlp.predict_proba(X), model.predict_proba(X), rtol=1e-12)
    assert mlp.score(X, Y) == model.score(X, Y)


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, SingleMLPClassifier])
def test_column_vector_is_raveled_with_a_warning(estimator_class, multilabel):
    from sklearn.exceptions import DataConversionWarning

    X, Y = multilabel
    with pytest.warns(DataConversionWarning):
        model = estimator_class(**FAST).fit(X, Y[:, :1])
    assert model.out_activation_ == "softmax" and model.predict(X).ndim == 1


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, SingleMLPClassifier])
def test_multiclass_multioutput_is_refused(estimator_class, multilabel):
    X, _ = multilabel
    y = np.c_[np.arange(len(X)) % 3, np.arange(len(X)) % 2]
    with pytest.raises(ValueError, match="multilabel indicator matrix .* 'multiclass-multioutput'"):
        estimator_class(**FAST).fit(X, y)
