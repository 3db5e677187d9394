"""``groups``: passed to group splitters, and a group-aware holdout."""

import numpy as np
import pytest
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    LeaveOneGroupOut,
    LeavePGroupsOut,
    StratifiedGroupKFold,
)

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor
from skpmlp._search._splits import group_holdout_split
from skpmlp.model_selection import fused_cross_validate

FAST = dict(max_iter=5, learning_rate_init=0.01, random_state=0)
GROUPS = np.arange(150) % 5


def _data(estimator_class, iris):
    X, y = iris
    return (X, y) if estimator_class is ParallelMLPClassifier else (X, X[:, 0] + y)


@pytest.mark.parametrize("estimator_class", [ParallelMLPClassifier, ParallelMLPRegressor])
@pytest.mark.parametrize(
    "make_cv",
    [lambda: GroupKFold(3), LeaveOneGroupOut, lambda: GroupShuffleSplit(2, test_size=0.4, random_state=0),
     lambda: LeavePGroupsOut(2)],
    ids=["GroupKFold", "LeaveOneGroupOut", "GroupShuffleSplit", "LeavePGroupsOut"],
)
def test_groups_reach_the_splitter(estimator_class, make_cv, iris):
    X, y = _data(estimator_class, iris)
    cv = make_cv()
    search = estimator_class((4,), "tanh", cv=cv, **FAST).fit(X, y, groups=GROUPS)
    assert search.n_splits_ == cv.get_n_splits(X, y, GROUPS)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # the table is what GridSearchCV's splits give: same folds, same scores
    expected = fused_cross_validate(
        estimator_class((4,), "tanh", **FAST), X, y, groups=GROUPS, cv=list(cv.split(X, y, GROUPS)),
    )
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], expected["mean_test_score"])


def test_fused_cross_validate_takes_groups(iris):
    X, y = iris
    results = fused_cross_validate(ParallelMLPClassifier((4,), "tanh", **FAST), X, y,
                                   groups=GROUPS, cv=StratifiedGroupKFold(5))
    assert "split4_test_score" in results


def test_group_splitter_without_groups_says_so(iris):
    X, y = iris
    with pytest.raises(ValueError, match="The 'groups' parameter should not be None"):
        ParallelMLPClassifier((4,), "tanh", cv=GroupKFold(3), **FAST).fit(X, y)


def test_splitters_without_groups_ignore_them(iris):
    X, y = iris
    with pytest.warns(UserWarning, match="The groups parameter is ignored by KFold"):
        a = ParallelMLPClassifier((4,), "tanh", cv=KFold(3), **FAST).fit(X, y, groups=GROUPS)
    b = ParallelMLPClassifier((4,), "tanh", cv=KFold(3), **FAST).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_holdout_with_groups_holds_out_whole_groups(seed):
    groups = np.repeat(np.arange(20), 7)
    train, val = group_holdout_split(groups, 0.1, seed)
    assert not set(groups[train]) & set(groups[val])
    assert len(np.unique(groups[val])) == 2 and len(train) + len(val) == len(groups)


def test_holdout_search_scores_on_held_out_groups(iris):
    X, y = iris
    groups = np.arange(150) // 10
    # two models: a lone configuration would train on every row, as MLPClassifier
    search = ParallelMLPClassifier((4,), "tanh", n_repeats=2, cv=None, **FAST).fit(X, y,
                                                                             groups=groups)
    _, val = group_holdout_split(groups, 0.1, 0)
    model = search.export_model(0)
    assert search.cv_results_["split0_test_score"][0] == model.score(X[val], y[val])
    # without groups the split is another one (stratified, by rows)
    plain = ParallelMLPClassifier((4,), "tanh", n_repeats=2, cv=None, **FAST).fit(X, y)
    assert not np.array_equal(plain.export_model(0).coefs_[0], model.coefs_[0])


@pytest.mark.parametrize(
    "groups, message",
    [(np.zeros(150), "groups holds 1 distinct group"),
     (np.arange(100), "groups has 100 entries but X has 150 samples"),
     (np.zeros((150, 2)), "groups must be 1-D")],
)
def test_bad_groups(groups, message, iris):
    X, y = iris
    with pytest.raises(ValueError, match=message):
        ParallelMLPClassifier((4,), "tanh", n_repeats=2, **FAST).fit(X, y, groups=groups)
