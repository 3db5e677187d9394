"""skpmlp.plotting: real figures (Agg backend) of tiny fitted searches."""

import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # no display: draw into memory
import matplotlib.pyplot as plt  # noqa: E402

from skpmlp.plotting import (  # noqa: E402
    EpochCurvesDisplay,
    SearchHeatmapDisplay,
    SearchResultsDisplay,
)

ACTIVATIONS = ("relu", "tanh", "logistic")
SPACE = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,), (16,), (4, 4)], activation=ACTIVATIONS,
    learning_rate_init=(0.01, 0.03), max_iter=15, random_state=0,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    # the fits are tiny: one thread is as fast, and does not slow down tenfold
    # when the test run shares the CPU with other jobs
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def searches(iris):
    """Fitted searches by name: holdout with repeats, 3-fold CV (with and
    without per-epoch validation), and a regressor."""
    X, y = iris
    X_reg, y_reg = make_regression(n_samples=120, n_features=4, noise=0.1, random_state=0)
    return {
        # the displays order models by rank_test_score, ties by row: select as they do
        "holdout": ParallelMLPClassifier(n_repeats=2, selection="score", tie_breaker=None, **SPACE,
                                         cv=None).fit(X, y),
        "cv": ParallelMLPClassifier(cv=3, **SPACE).fit(X, y),
        "cv_monitored": ParallelMLPClassifier(cv=3, early_stopping=True, refit=False, **SPACE).fit(X, y),
        "regressor": ParallelMLPRegressor(**SPACE, cv=None).fit(X_reg, y_reg / y_reg.std()),
    }


def _frame(search):
    """cv_results_ as a DataFrame with the columns the displays group by."""
    results = search.cv_results_
    frame = pd.DataFrame(list(results["params"]))
    frame["width"] = [sum(p["hidden_layer_sizes"]) for p in results["params"]]
    frame["hidden_layer_sizes"] = frame["hidden_layer_sizes"].astype(str)
    frame["repeat"] = np.asarray(results["param_repeat"], dtype=int)
    frame["score"] = results["mean_test_score"]
    return frame


def _aggregated(search, keys, aggregate):
    """The displays' rule, written with pandas: mean over repeats per
    configuration, then max or mean over the configurations of a cell."""
    frame = _frame(search)
    config = ["hidden_layer_sizes", "activation", "learning_rate_init", "alpha"]
    per_config = frame.groupby(list(dict.fromkeys(keys + config)))["score"].mean()
    return per_config.groupby(level=list(range(len(keys)))).agg(aggregate)


@pytest.mark.parametrize(
    "name, y_label",
    [("holdout", "validation accuracy"), ("cv", "mean 3-fold CV accuracy"),
     ("regressor", "validation R²")],
)
def test_search_results_draws_one_line_per_activation(searches, name, y_label):
    display = SearchResultsDisplay.from_estimator(searches[name])
    assert len(display.lines_) == len(ACTIVATIONS)
    assert display.ax_.get_xlabel() == "total hidden width (sum of hidden_layer_sizes)"
    assert display.ax_.get_ylabel() == y_label
    assert display.figure_ is display.ax_.figure
    legend = display.ax_.get_legend()
    assert legend.get_title().get_text() == "activation"
    assert [t.get_text() for t in legend.get_texts()] == list(ACTIVATIONS)


@pytest.mark.parametrize("aggregate", ["max", "mean"])
def test_search_results_lines_are_the_aggregated_scores(searches, aggregate):
    search = searches["holdout"]
    display = SearchResultsDisplay.from_estimator(search, aggregate=aggregate)
    expected = _aggregated(search, ["activation", "width"], aggregate)
    assert display.x_values == [4, 8, 16]  # (4, 4) and (8,) share width 8
    for activation, line in zip(ACTIVATIONS, display.lines_):
        np.testing.assert_allclose(line.get_xdata(), [4, 8, 16])
        np.testing.assert_allclose(line.get_ydata(), expected[activation].to_numpy())


def test_band_spans_the_repeats_of_the_best_configuration(searches):
    search = searches["holdout"]
    display = SearchResultsDisplay.from_estimator(search, x="hidden_layer_sizes")
    assert len(display.bands_) == len(display.lines_)
    frame = _frame(search)
    cell = frame[(frame.activation == "relu") & (frame.hidden_layer_sizes == "(8,)")]
    by_rate = cell.groupby("learning_rate_init")["score"]
    best = cell[cell.learning_rate_init == by_rate.mean().idxmax()]["score"]
    column = display.x_values.index((8,))
    row = display.group_values.index("relu")
    assert display.lower[row, column] == pytest.approx(best.min())
    assert display.upper[row, column] == pytest.approx(best.max())


def test_std_band_and_no_band_without_repeats(searches):
    std = SearchResultsDisplay.from_estimator(searches["holdout"], band="std")
    np.testing.assert_allclose(std.upper - std.scores, std.scores - std.lower)
    assert SearchResultsDisplay.from_estimator(searches["holdout"], band=None).bands_ is None
    assert SearchResultsDisplay.from_estimator(searches["cv"]).bands_ is None


def test_search_results_categorical_x_and_log_scale(searches):
    search = searches["holdout"]
    categorical = SearchResultsDisplay.from_estimator(search, x="hidden_layer_sizes")
    labels = [t.get_text() for t in categorical.ax_.get_xticklabels()]
    assert labels == ["(4,)", "(8,)", "(16,)", "(4, 4)"]
    assert categorical.ax_.get_xscale() == "linear"
    rates = SearchResultsDisplay.from_estimator(search, x="learning_rate_init", group_by=None)
    assert len(rates.lines_) == 1 and rates.ax_.get_legend() is None
    assert rates.ax_.get_xscale() == "linear"  # 0.01 .. 0.03 spans less than 10x


def test_search_results_draws_on_a_given_axes(searches):
    _, ax = plt.subplots()
    display = SearchResultsDisplay.from_estimator(searches["holdout"], ax=ax)
    assert display.ax_ is ax


@pytest.mark.parametrize("name", ["holdout", "cv", "regressor"])
@pytest.mark.parametrize("aggregate", ["max", "mean"])
def test_heatmap_cells_are_the_aggregated_scores(searches, name, aggregate):
    search = searches[name]
    display = SearchHeatmapDisplay.from_estimator(search, aggregate=aggregate)
    expected = _aggregated(search, ["activation", "hidden_layer_sizes"], aggregate)
    architectures = ["(4,)", "(8,)", "(16,)", "(4, 4)"]
    table = expected.unstack()[architectures].loc[list(ACTIVATIONS)].to_numpy()
    assert display.scores.shape == display.image_.get_array().shape == (3, 4)
    np.testing.assert_allclose(display.scores, table)
    texts = [[t.get_text() for t in row] for row in display.text_]
    assert texts == [[f"{v:.3f}" for v in row] for row in table]
    assert display.ax_.get_xlabel() == "hidden_layer_sizes"
    assert display.ax_.get_ylabel() == "activation"
    assert display.colorbar_ is not None


def test_heatmap_other_parameters_and_options(searches):
    display = SearchHeatmapDisplay.from_estimator(
        searches["holdout"], x_param="learning_rate_init", y_param="width",
        values_format=None, colorbar=False,
    )
    assert display.scores.shape == (3, 2)
    assert display.text_ is None and display.colorbar_ is None
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["4", "8", "16"]


@pytest.mark.parametrize("name", ["holdout", "regressor"])
def test_learning_curves_of_the_top_models(searches, name):
    search = searches[name]
    display = EpochCurvesDisplay.from_estimator(search, top_k=4)
    assert len(display.axes_) == 2
    assert len(display.loss_lines_) == len(display.validation_lines_) == 4
    best = search.best_index_
    n_iter = int(search.n_iter_per_model_[best])
    np.testing.assert_allclose(
        display.loss_lines_[0].get_ydata()[:n_iter], search.loss_curves_[best, :n_iter]
    )
    np.testing.assert_allclose(
        display.validation_lines_[0].get_ydata()[:n_iter], search.validation_scores_per_model_[best, :n_iter]
    )
    ranks = [int(t.get_text().split(":")[0]) for t in display.ax_.get_legend().get_texts()]
    assert ranks == sorted(ranks) and ranks[0] == 1
    assert display.ax_.get_ylabel() == "training loss"
    assert display.axes_[1].get_xlabel() == "epoch"


def test_learning_curves_with_cv_average_the_folds(searches):
    search = searches["cv_monitored"]
    display = EpochCurvesDisplay.from_estimator(search, top_k=2)
    best = int(np.argmin(search.cv_results_["rank_test_score"]))
    n_iter = int(search.n_iter_per_model_[best].min())  # every fold replica still trains
    np.testing.assert_allclose(
        display.loss_lines_[0].get_ydata()[:n_iter], search.loss_curves_[best, :, :n_iter].mean(axis=0)
    )
    np.testing.assert_allclose(
        display.validation_lines_[0].get_ydata()[:n_iter],
        search.validation_scores_per_model_[best, :, :n_iter].mean(axis=0),
    )
    assert display.ax_.get_ylabel() == "training loss (mean over folds)"
    assert display.axes_[1].get_ylabel() == "validation accuracy (mean over folds)"


@pytest.mark.parametrize(
    "estimator, cv, label",
    [
        (ParallelMLPClassifier, None, "validation accuracy"),
        (ParallelMLPRegressor, None, "validation R²"),
        (ParallelMLPClassifier, None, "validation loss (negated)"),
        (ParallelMLPRegressor, 2, "validation loss (negated) (mean over folds)"),
    ],
    ids=["classifier_score", "regressor_score", "classifier_loss", "regressor_loss_cv"],
)
def test_learning_curves_label_what_was_monitored(iris, estimator, cv, label):
    X, y = iris
    monitor = "loss" if "loss" in label else "score"
    search = estimator((4,), "relu", max_iter=5, cv=cv, early_stopping=True, monitor=monitor,
                       random_state=0).fit(X, y)
    display = EpochCurvesDisplay.from_estimator(search, top_k=1)
    assert display.axes_[1].get_ylabel() == label


def test_learning_curves_without_validation_scores_use_one_panel(searches):
    display = EpochCurvesDisplay.from_estimator(searches["cv"], top_k=3)
    assert searches["cv"].validation_scores_per_model_ is None
    assert len(display.axes_) == 1 and display.validation_lines_ is None
    assert len(display.loss_lines_) == 3


def test_multimetric_scores_by_name(iris):
    X, y = iris
    search = ParallelMLPClassifier(
        scoring=["accuracy", "f1_macro"], refit="f1_macro", **SPACE, cv=None
    ).fit(X, y)
    display = SearchResultsDisplay.from_estimator(search, metric="f1_macro")
    assert display.ax_.get_ylabel() == "validation f1_macro"
    heatmap = SearchHeatmapDisplay.from_estimator(search, metric="accuracy")
    assert heatmap.scores.max() == pytest.approx(search.cv_results_["mean_test_accuracy"].max())
    with pytest.raises(ValueError, match=r"available metrics: \['accuracy', 'f1_macro'\]"):
        SearchResultsDisplay.from_estimator(search)


def test_gridsearchcv_results_plot_too(iris):
    X, y = iris
    grid = GridSearchCV(
        MLPClassifier(max_iter=5, random_state=0),
        {"hidden_layer_sizes": [(4,), (8,)], "activation": ["relu", "tanh"]}, cv=2,
    ).fit(X, y)
    display = SearchResultsDisplay.from_cv_results(grid.cv_results_)
    assert len(display.lines_) == 2 and display.bands_ is None
    heatmap = SearchHeatmapDisplay.from_estimator(grid)
    assert heatmap.scores.shape == (2, 2)
    with pytest.raises(ValueError, match="no per-epoch loss_curves_"):
        EpochCurvesDisplay.from_estimator(grid)


@pytest.mark.parametrize(
    "plot, kwargs, match",
    [
        (SearchResultsDisplay.from_estimator, dict(metric="f1"), "metric='f1'"),
        (SearchResultsDisplay.from_estimator, dict(x="depth"), "'depth' is not a searched parameter"),
        (SearchResultsDisplay.from_estimator, dict(group_by="solver"), "'solver' is not a searched"),
        (SearchResultsDisplay.from_estimator, dict(aggregate="median"), "aggregate must be one of"),
        (SearchResultsDisplay.from_estimator, dict(band="iqr"), "band must be one of"),
        (SearchHeatmapDisplay.from_estimator, dict(x_param="lr"), "'lr' is not a searched parameter"),
        (SearchHeatmapDisplay.from_estimator, dict(x_param="activation"), "x_param and y_param must differ"),
        (SearchHeatmapDisplay.from_estimator, dict(metric="r2"), "metric='r2'"),
        (EpochCurvesDisplay.from_estimator, dict(top_k=0), "top_k must be a positive int"),
        (EpochCurvesDisplay.from_estimator, dict(metric="loss"), "metric='loss'"),
    ],
)
def test_invalid_arguments_raise_clear_errors(searches, plot, kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot(searches["holdout"], **kwargs)


def test_learning_curves_need_one_axes_per_panel(searches):
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="ax must hold 2 Axes"):
        EpochCurvesDisplay.from_estimator(searches["holdout"], ax=ax)
    _, axes = plt.subplots(1, 2)
    display = EpochCurvesDisplay.from_estimator(searches["holdout"], ax=axes)
    assert display.ax_ is axes[0]


def test_unfitted_estimator_is_rejected():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        SearchResultsDisplay.from_estimator(ParallelMLPClassifier(cv=None))


def test_missing_matplotlib_says_how_to_install_it(searches, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import now fails
    with pytest.raises(ImportError, match=r'pip install "skpmlp\[plot\]"'):
        SearchHeatmapDisplay.from_estimator(searches["holdout"])


def test_the_former_name_is_a_deprecated_alias():
    """``LearningCurvesDisplay`` (read as scikit-learn's ``LearningCurveDisplay``)
    was renamed; the old name still works for one release, with a warning."""
    import skpmlp.plotting

    with pytest.warns(FutureWarning, match="renamed EpochCurvesDisplay"):
        from skpmlp.plotting import LearningCurvesDisplay
    assert LearningCurvesDisplay is EpochCurvesDisplay
    assert "LearningCurvesDisplay" not in skpmlp.plotting.__all__
    with pytest.raises(AttributeError):
        skpmlp.plotting.NoSuchDisplay  # noqa: B018
