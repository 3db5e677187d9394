"""``class_weight`` on the classifiers, as scikit-learn defines it."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification
from sklearn.utils.class_weight import compute_sample_weight

import skpmlp.io
from skpmlp import ParallelMLPClassifier, SingleMLPClassifier
from skpmlp._search._splits import holdout_split

FAST = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    max_iter=10, learning_rate_init=0.01, dtype="float64", random_state=0)
WEIGHTS = {0: 1.0, 1: 4.0, 2: 0.5}


def _imbalanced(iris):
    X, y = iris
    keep = np.r_[0:50, 50:70, 100:150]
    return X[keep], y[keep]


def _same_models(a, b):
    """Every trained model (every fold replica with cv) has the same weights."""
    folds = [None] if a.cv is None else range(a.n_splits_)
    for i in range(a.n_models_):
        for fold in folds:
            for wa, wb in zip(a.export_model(i, fold).coefs_, b.export_model(i, fold).coefs_):
                np.testing.assert_allclose(wa, wb, rtol=0, atol=1e-12)


@pytest.mark.parametrize("class_weight", [WEIGHTS, "balanced"])
@pytest.mark.parametrize("cv", [None, 3])
def test_class_weight_trains_as_the_sample_weights_it_defines(class_weight, cv, iris):
    X, y = _imbalanced(iris)
    search = ParallelMLPClassifier([(4,), (6,)], "tanh", cv=cv, class_weight=class_weight, **FAST)
    weighted = clone(search).set_params(class_weight=None)
    weighted.fit(X, y, sample_weight=compute_sample_weight(class_weight, y))
    _same_models(search.fit(X, y), weighted)
    if cv is not None:
        # the refit trains with the class weights too
        np.testing.assert_allclose(search.predict_proba(X), weighted.predict_proba(X), rtol=0, atol=1e-12)


def test_class_weight_multiplies_sample_weight(iris):
    X, y = _imbalanced(iris)
    sample_weight = np.linspace(0.5, 2.0, len(y))
    both = ParallelMLPClassifier((4,), "tanh", class_weight=WEIGHTS, **FAST).fit(X, y, sample_weight=sample_weight)
    product = ParallelMLPClassifier((4,), "tanh", **FAST).fit(
        X, y, sample_weight=sample_weight * compute_sample_weight(WEIGHTS, y)
    )
    _same_models(both, product)


def test_scores_ignore_class_weight(iris):
    """The search scores as GridSearchCV: the scorer sees no class weight."""
    X, y = _imbalanced(iris)
    # two models: a lone configuration would train on every row, as MLPClassifier
    search = ParallelMLPClassifier((4,), "tanh", class_weight="balanced", n_repeats=2, cv=None,
                                   **FAST).fit(X, y)
    _, val = holdout_split(np.unique(y, return_inverse=True)[1], 0.1, 0, stratify=True)
    model = search.export_model(0)
    assert search.cv_results_["mean_test_score"][0] == model.score(X[val], y[val])


def test_exported_model_keeps_class_weight_and_retrains_the_same(iris):
    X, y = _imbalanced(iris)
    search = ParallelMLPClassifier((4,), "tanh", class_weight=WEIGHTS, n_repeats=2, cv=None,
                                   **FAST).fit(X, y)
    model = search.export_model(0)
    assert model.class_weight == WEIGHTS
    train, _ = holdout_split(np.unique(y, return_inverse=True)[1], 0.1, 0, stratify=True)
    alone = clone(model).fit(X[train], y[train])
    np.testing.assert_allclose(alone.predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-9)


def test_single_model_class_weight(iris):
    X, y = _imbalanced(iris)
    a = SingleMLPClassifier((4,), "tanh", class_weight="balanced", **FAST).fit(X, y)
    b = SingleMLPClassifier((4,), "tanh", **FAST).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    np.testing.assert_allclose(a.coefs_[0], b.coefs_[0], rtol=0, atol=1e-12)


def test_string_labels_and_multilabel():
    X, Y = make_multilabel_classification(n_samples=80, n_features=5, n_classes=3, random_state=0)
    model = ParallelMLPClassifier((4,), "tanh", class_weight="balanced", **FAST).fit(X, Y)
    assert model.predict(X).shape == Y.shape
    labels = np.array(["a", "b"])[Y[:, 0]]
    model = ParallelMLPClassifier((4,), "tanh", class_weight={"a": 1, "b": 2}, **FAST).fit(X, labels)
    assert set(model.predict(X)) <= {"a", "b"}


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, SingleMLPClassifier])
@pytest.mark.parametrize(
    "class_weight, error, message",
    [("uniform", ValueError, "The 'class_weight' parameter of .* must be"),
     (3, ValueError, "The 'class_weight' parameter of .* must be"),
     ({0: 1, 7: 2}, ValueError, "not in class")],
)
def test_bad_class_weight(estimator_class, class_weight, error, message, iris):
    X, y = iris
    with pytest.raises(error, match=message):
        estimator_class((4,), class_weight=class_weight, **FAST).fit(X, y)


def test_class_weight_round_trips(iris, tmp_path):
    X, y = _imbalanced(iris)
    search = ParallelMLPClassifier((4,), "tanh", class_weight=WEIGHTS, **FAST).fit(X, y)
    skpmlp.io.save(search, tmp_path / "m.npz")
    loaded = skpmlp.io.load(tmp_path / "m.npz")
    assert loaded.class_weight == WEIGHTS and loaded.best_estimator_.class_weight == WEIGHTS
    np.testing.assert_array_equal(loaded.predict_proba(X), search.predict_proba(X))
