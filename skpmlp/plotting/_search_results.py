"""SearchResultsDisplay: the score against hidden width, one line per activation."""

import numpy as np

from ._common import (
    _BANDS,
    WIDTH,
    _axis_label,
    _cells,
    _check_matplotlib,
    _check_option,
    _fitted_results,
    _format_level,
    _get_axes,
    _is_numeric,
    _nan_reduce,
    _repeats,
    _score_name,
)


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
        The y-axis label.

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
    SearchHeatmapDisplay : The score over two parameters.
    EpochCurvesDisplay : Per-epoch curves of the top models.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.plotting import SearchResultsDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(4,), (8,), (16,)], ("relu", "tanh"),
    ...                                learning_rate_init=0.01, n_repeats=2, max_iter=20,
    ...                                random_state=0).fit(X, y)
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
            The search whose results are drawn.
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
            The display, drawn.
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
        x : str, default="width"
            See :meth:`from_estimator`.
        group_by : str or None, default="activation"
            See :meth:`from_estimator`.
        metric : str, default="score"
            See :meth:`from_estimator`.
        aggregate : {"max", "mean"}, default="max"
            See :meth:`from_estimator`.
        band : {"minmax", "std"} or None, default="minmax"
            See :meth:`from_estimator`.
        ax : matplotlib Axes, default=None
            See :meth:`from_estimator`.
        score_name : str, default=None
            The y-axis label; None derives it from ``metric`` and the number
            of splits.

        Returns
        -------
        SearchResultsDisplay
            The display, drawn.
        """
        _check_matplotlib("SearchResultsDisplay")
        if band is not None:
            _check_option(band, "band", _BANDS)
        keys = [x] if group_by is None else [group_by, x]
        cells, levels = _cells(cv_results, metric, keys, aggregate)
        groups, x_levels = ([None], levels[0]) if group_by is None else levels
        shape = (len(groups), len(x_levels))
        scores, lower, upper = (np.full(shape, np.nan) for _ in range(3))
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
            The display, drawn.
        """
        plt = _check_matplotlib("SearchResultsDisplay.plot")
        ax = _get_axes(plt, ax, figsize=(6.4, 4.2))
        numeric = _is_numeric(self.x_values)
        positions = np.asarray(self.x_values if numeric else np.arange(len(self.x_values)),
                               dtype=float)
        self.lines_, bands = [], []
        for g, group in enumerate(self.group_values):
            # a group may lack some x levels: skip them, don't break the line
            drawn = np.isfinite(self.scores[g])
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
