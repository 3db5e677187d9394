"""Plots of a fitted search, in scikit-learn's Display style.

Four displays read a fitted :class:`~skpmlp.ParallelMLPClassifier` or
:class:`~skpmlp.ParallelMLPRegressor` (the two search displays also read any
GridSearchCV-style ``cv_results_``):

- :class:`SearchResultsDisplay`: score against hidden width (or any
  searched parameter), one line per activation, repeats as a band;
- :class:`LearningCurvesDisplay`: training loss and validation score per
  epoch of the top-ranked models;
- :class:`SearchHeatmapDisplay`: score over two searched parameters;
- :class:`LineageDisplay`: an adaptive search (``refill``): which slot held
  which model when, and every model's validation score over the run.

As every scikit-learn Display, ``from_estimator`` (or ``from_cv_results``)
computes the data and calls ``plot``, which draws it and stores the
matplotlib objects (``ax_``, ``figure_``, ``lines_``, ...). matplotlib is an
optional dependency: ``pip install "skpmlp[plot]"``.
"""

import re
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

__all__ = ["LearningCurvesDisplay", "LineageDisplay", "SearchHeatmapDisplay", "SearchResultsDisplay"]

#: Name of the derived parameter "total hidden width" (sum of hidden_layer_sizes).
WIDTH = "width"
_AGGREGATES = ("max", "mean")
_BANDS = ("minmax", "std")


def _check_matplotlib(caller):
    """Import pyplot lazily, so skpmlp itself never needs matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} requires matplotlib, an optional dependency of skpmlp; install it "
            f'with `pip install "skpmlp[plot]"` (or `pip install matplotlib`).'
        ) from exc
    return plt


def _check_option(value, name, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")


# ----------------------------------------------------------- reading cv_results_
def _metric_names(cv_results):
    return sorted(key[len("mean_test_"):] for key in cv_results if key.startswith("mean_test_"))


def _mean_scores(cv_results, metric):
    """``mean_test_<metric>`` as floats, or a ValueError naming the metrics there are."""
    key = f"mean_test_{metric}"
    if key not in cv_results:
        raise ValueError(
            f"metric={metric!r} has no {key!r} column in cv_results_; available metrics: "
            f"{_metric_names(cv_results)} (with a single scorer the metric is 'score')."
        )
    return np.asarray(cv_results[key], dtype=float)


def _n_splits(cv_results, metric):
    pattern = re.compile(rf"split\d+_test_{re.escape(metric)}")
    return sum(1 for key in cv_results if pattern.fullmatch(key))


def _param_names(cv_results):
    names = list(dict.fromkeys(name for params in cv_results["params"] for name in params))
    if "hidden_layer_sizes" in names:
        names.append(WIDTH)
    return names


def _hashable(value):
    # GridSearchCV grids may hold architectures as lists; rows are grouped by value
    return tuple(value) if isinstance(value, list) else value


def _total_width(architecture):
    return None if architecture is None else int(np.sum(architecture))


def _param_values(cv_results, name):
    """One value per row of ``cv_results`` for a parameter, or for ``"width"``."""
    names = _param_names(cv_results)
    if name not in names:
        raise ValueError(f"{name!r} is not a searched parameter; choose one of {names}.")
    if name == WIDTH:
        return [_total_width(p.get("hidden_layer_sizes")) for p in cv_results["params"]]
    return [_hashable(p.get(name)) for p in cv_results["params"]]


def _repeats(cv_results):
    if "param_repeat" not in cv_results:  # e.g. a GridSearchCV table: one repeat
        return np.zeros(len(cv_results["params"]), dtype=int)
    return np.asarray(np.ma.getdata(cv_results["param_repeat"]), dtype=int)


def _is_numeric(levels):
    return all(isinstance(v, Real) and not isinstance(v, bool) for v in levels)


def _levels(values):
    """Distinct values: sorted when numeric, else in order of first appearance
    (the order the search space was given in)."""
    distinct = list(dict.fromkeys(values))
    return sorted(distinct) if _is_numeric(distinct) else distinct


def _format_level(value):
    return f"{value:g}" if _is_numeric([value]) else str(value)


def _config_keys(cv_results, excluded):
    """A hashable key per row: its parameters except ``excluded`` (and the repeat)."""
    return [
        tuple((k, _hashable(v)) for k, v in sorted(p.items()) if k not in excluded)
        for p in cv_results["params"]
    ]


def _per_repeat(scores, configs, repeats, aggregate):
    """Reduce the rows of one cell to one score per repeat.

    ``"max"`` keeps the configuration whose mean over repeats is best (the one
    a search would pick) and returns its score per repeat; ``"mean"`` averages
    the configurations of each repeat.
    """
    config_row = {config: i for i, config in enumerate(dict.fromkeys(configs))}
    repeat_column = {repeat: j for j, repeat in enumerate(sorted(set(repeats)))}
    table = np.full((len(config_row), len(repeat_column)), np.nan)
    for score, config, repeat in zip(scores, configs, repeats):
        table[config_row[config], repeat_column[repeat]] = score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells stay NaN
        if aggregate == "mean":
            return np.nanmean(table, axis=0)
        means = np.nanmean(table, axis=1)
    return table[0] if np.isnan(means).all() else table[np.nanargmax(means)]


def _cells(cv_results, metric, keys, aggregate):
    """``{cell: per-repeat scores}`` where a cell is a tuple of the values of ``keys``."""
    _check_option(aggregate, "aggregate", _AGGREGATES)
    scores = _mean_scores(cv_results, metric)
    columns = [_param_values(cv_results, key) for key in keys]
    # "width" is no key of params: architectures of one total width stay apart
    # in the configurations, and are aggregated as the other parameters
    configs = _config_keys(cv_results, set(keys))
    repeats = _repeats(cv_results)
    rows = {}
    for i, cell in enumerate(zip(*columns)):
        rows.setdefault(cell, []).append(i)
    return {
        cell: _per_repeat(scores[idx], [configs[i] for i in idx], repeats[idx], aggregate)
        for cell, idx in rows.items()
    }, [_levels(column) for column in columns]


def _nan_reduce(function, values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(values)


def _score_name(cv_results, metric, estimator=None):
    """Axis label of ``mean_test_<metric>``: e.g. "validation accuracy",
    "mean 3-fold CV R²"."""
    name = metric
    if metric == "score" and estimator is not None:
        scoring = getattr(estimator, "scoring", None)
        if isinstance(scoring, str):
            name = scoring
        elif scoring is None:
            name = "accuracy" if is_classifier(estimator) else "R²"
    n_splits = _n_splits(cv_results, metric)
    return f"validation {name}" if n_splits <= 1 else f"mean {n_splits}-fold CV {name}"


def _axis_label(name):
    return "total hidden width (sum of hidden_layer_sizes)" if name == WIDTH else name


def _fitted_results(estimator):
    check_is_fitted(estimator)
    if not hasattr(estimator, "cv_results_"):
        raise ValueError(f"{type(estimator).__name__} has no cv_results_ to plot.")
    return estimator.cv_results_


def _get_axes(plt, ax, **subplots):
    if ax is None:
        _, ax = plt.subplots(layout="constrained", **subplots)
    return ax


# ------------------------------------------------------------- search results
class SearchResultsDisplay:
    """Score against hidden width (or a searched parameter), one line per activation.

    Each point is the score of the rows that share an x value and a group
    (activation), reduced over the other searched parameters with
    ``aggregate``; the band shows the spread over repeats (``n_repeats``).
    Create it with :meth:`from_estimator` or :meth:`from_cv_results`.

    Parameters
    ----------
    x_values : list of length n_x
        The x levels: numbers (a numeric axis) or categories such as
        architectures (one tick each).
    scores : ndarray of shape (n_groups, n_x)
        Score of each group at each x level (mean over repeats); NaN where a
        group has no row.
    lower, upper : ndarray of shape (n_groups, n_x) or None
        The band's edges over repeats; None draws no band.
    group_values : list of length n_groups
        One label per line; ``[None]`` for a single unlabelled line.
    x_name : str, default="width"
        The x parameter; ``"width"`` is the total hidden width.
    group_name : str or None, default="activation"
        Legend title.
    score_name : str, default="score"
        y-axis label.

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    lines_ : list of matplotlib Line2D
        One per group.
    bands_ : list of matplotlib PolyCollection, or None
        One per group; None without a band (a single repeat, or ``band=None``).

    See Also
    --------
    SearchHeatmapDisplay : the score over two parameters.
    LearningCurvesDisplay : per-epoch curves of the top models.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.plotting import SearchResultsDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(4,), (8,), (16,)], ("relu", "tanh"), learning_rate_init=0.01,
    ...                                n_repeats=2, max_iter=20, random_state=0).fit(X, y)
    >>> display = SearchResultsDisplay.from_estimator(search)
    >>> len(display.lines_), len(display.bands_)
    (2, 2)
    >>> display.ax_.get_xlabel()
    'total hidden width (sum of hidden_layer_sizes)'
    """

    def __init__(self, *, x_values, scores, lower, upper, group_values, x_name=WIDTH,
                 group_name="activation", score_name="score"):
        self.x_values = x_values
        self.scores = scores
        self.lower = lower
        self.upper = upper
        self.group_values = group_values
        self.x_name = x_name
        self.group_name = group_name
        self.score_name = score_name

    @classmethod
    def from_estimator(cls, estimator, *, x=WIDTH, group_by="activation", metric="score",
                       aggregate="max", band="minmax", ax=None):
        """Plot a fitted search's ``mean_test_<metric>`` against ``x``.

        Parameters
        ----------
        estimator : fitted ParallelMLPClassifier, ParallelMLPRegressor or GridSearchCV
        x : str, default="width"
            ``"width"``: the total hidden width of each model, the SUM of its
            ``hidden_layer_sizes`` (architectures of equal total width, such
            as ``(64,)`` and ``(32, 32)``, share a point and are aggregated);
            or any searched parameter name (``"hidden_layer_sizes"`` gives
            one tick per architecture).
        group_by : str or None, default="activation"
            Parameter giving one line per value; None draws one line.
        metric : str, default="score"
            Scorer name (multi-metric scoring) or ``"score"``.
        aggregate : {"max", "mean"}, default="max"
            How the other parameters (learning rate, alpha, ...) are reduced
            at each point: ``"max"`` keeps the configuration with the best
            mean over repeats, ``"mean"`` averages all of them.
        band : {"minmax", "std"} or None, default="minmax"
            Spread over repeats: min to max, or mean ± one standard
            deviation. Drawn only with more than one repeat.
        ax : matplotlib Axes, default=None
            None creates a figure.

        Returns
        -------
        SearchResultsDisplay
        """
        results = _fitted_results(estimator)
        return cls.from_cv_results(
            results, x=x, group_by=group_by, metric=metric, aggregate=aggregate, band=band,
            ax=ax, score_name=_score_name(results, metric, estimator),
        )

    @classmethod
    def from_cv_results(cls, cv_results, *, x=WIDTH, group_by="activation", metric="score",
                        aggregate="max", band="minmax", ax=None, score_name=None):
        """Plot ``mean_test_<metric>`` of a ``cv_results_`` table against ``x``.

        Parameters
        ----------
        cv_results : dict
            A ``cv_results_`` of skpmlp, or of GridSearchCV over an MLP (no
            repeats there, so no band).
        x, group_by, metric, aggregate, band, ax
            As in :meth:`from_estimator`.
        score_name : str, default=None
            y-axis label; None derives it from ``metric`` and the number of
            splits.

        Returns
        -------
        SearchResultsDisplay
        """
        _check_matplotlib("SearchResultsDisplay")
        if band is not None:
            _check_option(band, "band", _BANDS)
        keys = [x] if group_by is None else [group_by, x]
        cells, levels = _cells(cv_results, metric, keys, aggregate)
        groups, x_levels = ([None], levels[0]) if group_by is None else levels
        shape = (len(groups), len(x_levels))
        scores, lower, upper = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
        for g, group in enumerate(groups):
            for j, value in enumerate(x_levels):
                cell = (value,) if group_by is None else (group, value)
                if cell in cells:
                    scores[g, j], lower[g, j], upper[g, j] = _band(cells[cell], band)
        with_band = band is not None and len(set(_repeats(cv_results))) > 1
        display = cls(
            x_values=x_levels, scores=scores, lower=lower if with_band else None,
            upper=upper if with_band else None, group_values=groups, x_name=x,
            group_name=group_by, score_name=score_name or _score_name(cv_results, metric),
        )
        return display.plot(ax=ax)

    def plot(self, ax=None):
        """Draw the lines (and bands).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            None creates a figure.

        Returns
        -------
        self : SearchResultsDisplay
        """
        plt = _check_matplotlib("SearchResultsDisplay.plot")
        ax = _get_axes(plt, ax, figsize=(6.4, 4.2))
        numeric = _is_numeric(self.x_values)
        positions = np.asarray(self.x_values if numeric else np.arange(len(self.x_values)), dtype=float)
        self.lines_, bands = [], []
        for g, group in enumerate(self.group_values):
            drawn = np.isfinite(self.scores[g])  # a group may lack some x levels: skip, don't break
            (line,) = ax.plot(positions[drawn], self.scores[g, drawn], marker="o",
                              label=None if group is None else _format_level(group))
            self.lines_.append(line)
            if self.lower is not None:
                bands.append(ax.fill_between(
                    positions[drawn], self.lower[g, drawn], self.upper[g, drawn],
                    color=line.get_color(), alpha=0.2, linewidth=0,
                ))
        self.bands_ = bands if self.lower is not None else None
        self._format_x_axis(ax, positions, numeric)
        ax.set_ylabel(self.score_name)
        ax.grid(True, alpha=0.3)
        if self.group_values != [None]:
            ax.legend(title=self.group_name, fontsize="small")
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _format_x_axis(self, ax, positions, numeric):
        ax.set_xlabel(_axis_label(self.x_name))
        if not numeric:
            ax.set_xticks(positions, [_format_level(v) for v in self.x_values])
            return
        # widths and learning rates are usually searched on a geometric grid
        if positions.min() > 0 and positions.max() > 10 * positions.min():
            ax.set_xscale("log")
            if len(positions) <= 12:
                ax.set_xticks(positions, [_format_level(v) for v in self.x_values])
                ax.minorticks_off()


def _band(per_repeat, band):
    """(mean, lower, upper) of one cell's per-repeat scores."""
    mean = _nan_reduce(np.nanmean, per_repeat)
    if band == "std":
        spread = _nan_reduce(np.nanstd, per_repeat)
        return mean, mean - spread, mean + spread
    return mean, _nan_reduce(np.nanmin, per_repeat), _nan_reduce(np.nanmax, per_repeat)


# ------------------------------------------------------------------- heatmap
class SearchHeatmapDisplay:
    """Score over two searched parameters, as an annotated heatmap.

    Each cell is the score of the rows sharing its two values, reduced over
    the other searched parameters and the repeats: ``aggregate="max"`` keeps
    the configuration with the best mean over repeats, ``"mean"`` averages
    all rows. Create it with :meth:`from_estimator` or
    :meth:`from_cv_results`.

    Parameters
    ----------
    scores : ndarray of shape (n_y, n_x)
        NaN where no row has that pair of values.
    x_values : list of length n_x
        Column labels (values of ``x_name``).
    y_values : list of length n_y
        Row labels (values of ``y_name``).
    x_name : str, default="hidden_layer_sizes"
    y_name : str, default="activation"
    score_name : str, default="score"
        Colorbar label.

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    image_ : matplotlib AxesImage
    text_ : ndarray of shape (n_y, n_x) of matplotlib Text, or None
        The cell annotations (None with ``values_format=None``).
    colorbar_ : matplotlib Colorbar or None

    See Also
    --------
    SearchResultsDisplay : the score against width, one line per activation.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.plotting import SearchHeatmapDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(4,), (8,), (8, 8)], ("relu", "tanh"),
    ...                                learning_rate_init=(0.01, 0.03), max_iter=20,
    ...                                random_state=0).fit(X, y)
    >>> display = SearchHeatmapDisplay.from_estimator(search)
    >>> display.scores.shape
    (2, 3)
    """

    def __init__(self, *, scores, x_values, y_values, x_name="hidden_layer_sizes",
                 y_name="activation", score_name="score"):
        self.scores = scores
        self.x_values = x_values
        self.y_values = y_values
        self.x_name = x_name
        self.y_name = y_name
        self.score_name = score_name

    @classmethod
    def from_estimator(cls, estimator, *, x_param="hidden_layer_sizes", y_param="activation",
                       metric="score", aggregate="max", ax=None, cmap="viridis",
                       values_format=".3f", colorbar=True):
        """Plot a fitted search's ``mean_test_<metric>`` over two parameters.

        Parameters
        ----------
        estimator : fitted ParallelMLPClassifier, ParallelMLPRegressor or GridSearchCV
        x_param, y_param : str, default="hidden_layer_sizes", "activation"
            Searched parameter names (or ``"width"``, the total hidden width)
            for the columns and the rows.
        metric : str, default="score"
            Scorer name (multi-metric scoring) or ``"score"``.
        aggregate : {"max", "mean"}, default="max"
            How the other parameters are reduced in each cell.
        ax : matplotlib Axes, default=None
        cmap : str or matplotlib Colormap, default="viridis"
        values_format : str or None, default=".3f"
            Format of the cell annotations; None writes none.
        colorbar : bool, default=True

        Returns
        -------
        SearchHeatmapDisplay
        """
        results = _fitted_results(estimator)
        return cls.from_cv_results(
            results, x_param=x_param, y_param=y_param, metric=metric, aggregate=aggregate,
            ax=ax, cmap=cmap, values_format=values_format, colorbar=colorbar,
            score_name=_score_name(results, metric, estimator),
        )

    @classmethod
    def from_cv_results(cls, cv_results, *, x_param="hidden_layer_sizes", y_param="activation",
                        metric="score", aggregate="max", ax=None, cmap="viridis",
                        values_format=".3f", colorbar=True, score_name=None):
        """Plot ``mean_test_<metric>`` of a ``cv_results_`` table over two parameters.

        Parameters
        ----------
        cv_results : dict
            A ``cv_results_`` of skpmlp or of GridSearchCV.
        x_param, y_param, metric, aggregate, ax, cmap, values_format, colorbar
            As in :meth:`from_estimator`.
        score_name : str, default=None
            Colorbar label; None derives it from ``metric``.

        Returns
        -------
        SearchHeatmapDisplay
        """
        _check_matplotlib("SearchHeatmapDisplay")
        if x_param == y_param:
            raise ValueError(f"x_param and y_param must differ; both are {x_param!r}.")
        cells, (y_levels, x_levels) = _cells(cv_results, metric, [y_param, x_param], aggregate)
        scores = np.full((len(y_levels), len(x_levels)), np.nan)
        for i, y_value in enumerate(y_levels):
            for j, x_value in enumerate(x_levels):
                if (y_value, x_value) in cells:
                    scores[i, j] = _nan_reduce(np.nanmean, cells[y_value, x_value])
        display = cls(
            scores=scores, x_values=x_levels, y_values=y_levels, x_name=x_param, y_name=y_param,
            score_name=score_name or _score_name(cv_results, metric),
        )
        return display.plot(ax=ax, cmap=cmap, values_format=values_format, colorbar=colorbar)

    def plot(self, ax=None, *, cmap="viridis", values_format=".3f", colorbar=True):
        """Draw the heatmap.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        cmap : str or matplotlib Colormap, default="viridis"
        values_format : str or None, default=".3f"
            Format of the cell annotations; None writes none.
        colorbar : bool, default=True

        Returns
        -------
        self : SearchHeatmapDisplay
        """
        plt = _check_matplotlib("SearchHeatmapDisplay.plot")
        n_y, n_x = self.scores.shape
        ax = _get_axes(plt, ax, figsize=(max(4.5, 1.1 * n_x + 2.5), max(3.0, 0.6 * n_y + 1.8)))
        self.image_ = ax.imshow(self.scores, cmap=cmap, aspect="auto", interpolation="nearest")
        self.text_ = None if values_format is None else self._annotate(ax, values_format)
        x_labels = [_format_level(v) for v in self.x_values]
        # long or many column labels would overlap: slant them
        slant = sum(len(label) for label in x_labels) > 6 * n_x or n_x > 8
        ax.set_xticks(np.arange(n_x), x_labels, rotation=30 if slant else 0,
                      ha="right" if slant else "center")
        ax.set_yticks(np.arange(n_y), [_format_level(v) for v in self.y_values])
        ax.set_xlabel(_axis_label(self.x_name))
        ax.set_ylabel(_axis_label(self.y_name))
        self.colorbar_ = None
        if colorbar:
            self.colorbar_ = ax.figure.colorbar(self.image_, ax=ax)
            self.colorbar_.set_label(self.score_name)
        self.ax_, self.figure_ = ax, ax.figure
        return self

    def _annotate(self, ax, values_format):
        """Write each cell's value, dark on light cells and light on dark ones."""
        cmap, norm = self.image_.cmap, self.image_.norm
        text = np.empty(self.scores.shape, dtype=object)
        for (i, j), value in np.ndenumerate(self.scores):
            shade = cmap(norm(value)) if np.isfinite(value) else (1, 1, 1, 1)
            luminance = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2]
            label = format(value, values_format) if np.isfinite(value) else "n/a"
            text[i, j] = ax.text(j, i, label, ha="center", va="center", fontsize="small",
                                 color="black" if luminance > 0.5 else "white")
        return text


# ----------------------------------------------------------- learning curves
class LearningCurvesDisplay:
    """Training loss and validation score per epoch of the top-ranked models.

    Create it with :meth:`from_estimator`.

    Parameters
    ----------
    loss_curves : ndarray of shape (n_curves, n_epochs)
        Training loss per epoch; NaN after a model stopped.
    validation_scores : ndarray of shape (n_curves, n_epochs) or None
        Validation score per epoch, drawn in a second panel; None draws
        the loss only.
    labels : list of str
        One legend entry per curve.
    score_name : str, default="validation score"
        y-axis label of the validation panel.
    loss_name : str, default="training loss"
        y-axis label of the loss panel.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        The loss panel, then the validation panel when there is one.
    ax_ : matplotlib Axes
        The loss panel.
    figure_ : matplotlib Figure
    loss_lines_ : list of matplotlib Line2D
    validation_lines_ : list of matplotlib Line2D or None

    See Also
    --------
    SearchResultsDisplay : the final scores of the whole search.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.plotting import LearningCurvesDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(8,), (16,)], ("relu", "tanh"), learning_rate_init=0.01,
    ...                                max_iter=20, random_state=0).fit(X, y)
    >>> display = LearningCurvesDisplay.from_estimator(search, top_k=3)
    >>> len(display.loss_lines_), len(display.axes_)
    (3, 2)
    """

    def __init__(self, *, loss_curves, validation_scores, labels, score_name="validation score",
                 loss_name="training loss"):
        self.loss_curves = loss_curves
        self.validation_scores = validation_scores
        self.labels = labels
        self.score_name = score_name
        self.loss_name = loss_name

    @classmethod
    def from_estimator(cls, estimator, *, top_k=5, metric="score", ax=None):
        """Plot the per-epoch curves of a fitted search's ``top_k`` models.

        Models are ranked by ``rank_test_<metric>``. With ``cv`` the curves
        of a model's fold replicas are averaged, epoch by epoch, over the
        replicas still training. The validation panel shows
        ``validation_scores_per_model_``: the default score (accuracy / R²) on the
        held-out rows, or with ``monitor="loss"`` the negated validation
        loss, labelled as such. It is left out when the search did not
        monitor it (``cv`` without ``early_stopping`` or ``pruning``).

        Parameters
        ----------
        estimator : fitted ParallelMLPClassifier or ParallelMLPRegressor
        top_k : int, default=5
            Number of models, best first.
        metric : str, default="score"
            Scorer name (multi-metric scoring) or ``"score"``.
        ax : matplotlib Axes or array-like of 2 Axes, default=None
            One Axes per panel; None creates a figure.

        Returns
        -------
        LearningCurvesDisplay
        """
        _check_matplotlib("LearningCurvesDisplay")
        results = _fitted_results(estimator)
        if not hasattr(estimator, "loss_curves_"):
            raise ValueError(
                f"{type(estimator).__name__} has no per-epoch loss_curves_; "
                f"LearningCurvesDisplay needs a fitted ParallelMLPClassifier or ParallelMLPRegressor."
            )
        if not isinstance(top_k, Integral) or isinstance(top_k, bool) or top_k < 1:
            raise ValueError(f"top_k must be a positive int; got {top_k!r}.")
        _mean_scores(results, metric)  # validates metric
        order = np.argsort(np.asarray(results[f"rank_test_{metric}"]), kind="stable")[:top_k]
        validation = estimator.validation_scores_per_model_
        folds = " (mean over folds)" if estimator.loss_curves_.ndim == 3 else ""
        display = cls(
            loss_curves=_fold_mean(estimator.loss_curves_[order]),
            validation_scores=None if validation is None else _fold_mean(validation[order]),
            labels=[_model_label(results, i, metric) for i in order],
            score_name=f"{_monitored_name(estimator)}{folds}",
            loss_name=f"training loss{folds}",
        )
        return display.plot(ax=ax)

    def plot(self, ax=None):
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of 2 Axes, default=None
            One Axes per panel (two when there are validation scores); None
            creates a figure.

        Returns
        -------
        self : LearningCurvesDisplay
        """
        plt = _check_matplotlib("LearningCurvesDisplay.plot")
        panels = 1 if self.validation_scores is None else 2
        axes = self._axes(plt, ax, panels)
        n_epochs = _last_epoch(self.loss_curves, self.validation_scores)
        epochs = np.arange(1, n_epochs + 1)
        self.loss_lines_ = [
            axes[0].plot(epochs, curve[:n_epochs], label=label)[0]
            for curve, label in zip(self.loss_curves, self.labels)
        ]
        axes[0].set_ylabel(self.loss_name)
        self.validation_lines_ = None
        if panels == 2:
            # same colour per model in both panels
            self.validation_lines_ = [
                axes[1].plot(epochs, curve[:n_epochs], color=line.get_color())[0]
                for curve, line in zip(self.validation_scores, self.loss_lines_)
            ]
            axes[1].set_ylabel(self.score_name)
        for panel in axes:
            panel.set_xlabel("epoch")
            panel.xaxis.get_major_locator().set_params(integer=True)
            panel.grid(True, alpha=0.3)
        axes[0].legend(title="rank: model", fontsize="small", title_fontsize="small")
        self.axes_, self.ax_, self.figure_ = axes, axes[0], axes[0].figure
        return self

    @staticmethod
    def _axes(plt, ax, panels):
        if ax is None:
            _, ax = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2), layout="constrained")
        axes = np.atleast_1d(np.asarray(ax, dtype=object)).ravel()
        if len(axes) != panels:
            raise ValueError(
                f"ax must hold {panels} Axes (the loss panel"
                f"{' and the validation-score panel' if panels == 2 else ''}); got {len(axes)}. "
                f"Pass e.g. plt.subplots(1, {panels})[1], or ax=None."
            )
        return axes


def _monitored_name(estimator):
    """Label of ``validation_scores_per_model_``: what the estimator's ``monitor`` watched."""
    if getattr(estimator, "monitor", "score") == "loss":
        # validation_scores_per_model_ holds -loss then, so that higher is better
        return "validation loss (negated)"
    return f"validation {'accuracy' if is_classifier(estimator) else 'R²'}"


def _fold_mean(curves):
    """(n, n_epochs) curves; with cv, (n, n_splits, n_epochs) averaged over the
    fold replicas still training at each epoch."""
    if curves.ndim == 2:
        return curves
    return _nan_reduce(lambda c: np.nanmean(c, axis=1), curves)


def _last_epoch(*curve_sets):
    """Epochs up to the last one any shown model trained (curves are NaN-padded
    to the longest model of the whole search)."""
    trained = np.zeros(curve_sets[0].shape[1], dtype=bool)
    for curves in curve_sets:
        if curves is not None:
            trained |= np.isfinite(curves).any(axis=0)
    return int(np.flatnonzero(trained)[-1] + 1) if trained.any() else curve_sets[0].shape[1]


def _varied(cv_results):
    """Names of the parameters that take several values in the search."""
    names = [n for n in _param_names(cv_results) if n != WIDTH]
    return {n for n in names if len(set(_param_values(cv_results, n))) > 1}


def _model_label(cv_results, index, metric):
    """``"1: (64,) relu lr=0.01"``: its rank and the parameters the search varied
    (with the repeat when there are several)."""
    params = cv_results["params"][index]
    varied = _varied(cv_results) or set(params)
    parts = []
    for name, value in params.items():
        if name not in varied:
            continue
        if name in ("hidden_layer_sizes", "activation"):  # self-explanatory values
            parts.append(str(value))
        else:
            short = {"learning_rate_init": "lr"}.get(name, name)
            parts.append(f"{short}={_format_level(value)}")
    repeats = _repeats(cv_results)
    if len(set(repeats)) > 1:
        parts.append(f"repeat {repeats[index]}")
    return f"{cv_results[f'rank_test_{metric}'][index]}: {' '.join(parts)}"


# ------------------------------------------------------------------ lineage
class LineageDisplay:
    """An adaptive search's timeline and lineages (``refill``).

    Left: one bar per model on its slot's row, from the epoch it started to
    its last, coloured by its mean validation score. Right: every model's
    validation score over the run's epochs; a perturbed copy's curve starts
    with a dotted link from its parent's score where it copied it.

    Create it with :meth:`from_estimator`.

    Parameters
    ----------
    start_iter, n_iter, slot, parent : ndarray of int of shape (n_models,)
        ``cv_results_``'s columns of an adaptive search.
    scores : ndarray of shape (n_models,)
        Mean validation score of every model (its bar's colour).
    curves : ndarray of shape (n_models, n_epochs) or None
        Every model's validation score per epoch of its own (fold mean);
        None leaves the right panel out.
    score_name : str, default="validation score"

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        The timeline panel, then the curves panel when there is one.
    ax_ : matplotlib Axes
        The timeline panel.
    figure_ : matplotlib Figure
    bars_ : matplotlib BarContainer
        One bar per model.
    lines_ : list of matplotlib Line2D or None
        One curve per model.
    links_ : list of matplotlib Line2D
        One dotted link per perturbed copy (parent to child).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.plotting import LineageDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(8,), (16,)], ("relu", "tanh"), learning_rate_init=[0.003, 0.03],
    ...                                pruning="halving", refill="perturb", min_iter=3, max_iter=15,
    ...                                random_state=0).fit(X, y)
    >>> display = LineageDisplay.from_estimator(search)
    >>> len(display.bars_) == len(search.cv_results_["params"])
    True
    """

    def __init__(self, *, start_iter, n_iter, slot, parent, scores, curves, score_name="validation score"):
        self.start_iter, self.n_iter, self.slot, self.parent = start_iter, n_iter, slot, parent
        self.scores, self.curves, self.score_name = scores, curves, score_name

    @classmethod
    def from_estimator(cls, estimator, *, metric="score", ax=None):
        """Plot a fitted adaptive search.

        Parameters
        ----------
        estimator : ParallelMLPClassifier or ParallelMLPRegressor
            Fitted with ``refill``.
        metric : str, default="score"
            Scorer name (multi-metric scoring) or ``"score"``: the bars' colour.
        ax : matplotlib Axes or array-like of 2 Axes, default=None
            One Axes per panel; None creates a figure.

        Returns
        -------
        LineageDisplay
        """
        _check_matplotlib("LineageDisplay")
        results = _fitted_results(estimator)
        if "start_iter" not in results:
            raise ValueError(
                f"LineageDisplay draws an adaptive search; this {type(estimator).__name__} was "
                f"fitted with refill=None (cv_results_ has no start_iter, parent and slot columns)."
            )
        validation = getattr(estimator, "validation_scores_per_model_", None)
        display = cls(
            start_iter=np.asarray(results["start_iter"]), n_iter=np.asarray(results["n_iter"]),
            slot=np.asarray(results["slot"]), parent=np.asarray(results["parent"]),
            scores=_mean_scores(results, metric),
            curves=None if validation is None else _fold_mean(validation),
            score_name=_monitored_name(estimator),
        )
        return display.plot(ax=ax)

    def plot(self, ax=None):
        """Draw the timeline and the curves.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of 2 Axes, default=None
            One Axes per panel (two when there are curves); None creates a
            figure.

        Returns
        -------
        self : LineageDisplay
        """
        plt = _check_matplotlib("LineageDisplay.plot")
        panels = 1 if self.curves is None else 2
        axes = LearningCurvesDisplay._axes(plt, ax, panels)
        scores = np.asarray(self.scores, dtype=float)
        finite = scores[np.isfinite(scores)]
        low, high = (finite.min(), finite.max()) if len(finite) else (0.0, 1.0)
        norm = plt.Normalize(low, high if high > low else low + 1)
        colours = plt.get_cmap("viridis")(norm(np.nan_to_num(scores, nan=low)))
        self.bars_ = axes[0].barh(self.slot, self.n_iter, left=self.start_iter, height=0.8,
                                  color=colours, edgecolor="white", linewidth=0.5)
        axes[0].figure.colorbar(plt.cm.ScalarMappable(norm=norm, cmap="viridis"), ax=axes[0],
                                label=f"mean {self.score_name}")
        axes[0].set_xlabel("epoch of the run")
        axes[0].set_ylabel("slot")
        axes[0].invert_yaxis()
        self.lines_, self.links_ = None, []
        if panels == 2:
            self.lines_ = []
            for i, curve in enumerate(self.curves):
                n = int(self.n_iter[i])
                epochs = self.start_iter[i] + np.arange(1, n + 1)
                self.lines_.append(axes[1].plot(epochs, curve[:n], color=colours[i], linewidth=1)[0])
                p = int(self.parent[i])
                if p >= 0 and n:
                    at = int(self.start_iter[i] - self.start_iter[p])  # parent's epochs at the copy
                    if 0 < at <= len(self.curves[p]):
                        link = axes[1].plot([self.start_iter[i], epochs[0]], [self.curves[p][at - 1], curve[0]],
                                            linestyle=":", color="grey", linewidth=0.8)[0]
                        self.links_.append(link)
            axes[1].set_xlabel("epoch of the run")
            axes[1].set_ylabel(self.score_name)
            axes[1].grid(True, alpha=0.3)
        self.axes_, self.ax_, self.figure_ = axes, axes[0], axes[0].figure
        return self
