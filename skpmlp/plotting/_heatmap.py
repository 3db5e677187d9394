"""SearchHeatmapDisplay: the score over two searched parameters."""

import numpy as np

from ._common import (
    _axis_label,
    _cells,
    _check_matplotlib,
    _fitted_results,
    _format_level,
    _get_axes,
    _nan_reduce,
    _score_name,
)


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
        The parameter of the columns (the x-axis label).
    y_name : str, default="activation"
        The parameter of the rows (the y-axis label).
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
    SearchResultsDisplay : The score against width, one line per activation.

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
            The search whose results are drawn.
        x_param, y_param : str, default="hidden_layer_sizes", "activation"
            Searched parameter names (or ``"width"``, the total hidden width)
            for the columns and the rows.
        metric : str, default="score"
            Scorer name (multi-metric scoring) or ``"score"``.
        aggregate : {"max", "mean"}, default="max"
            How the other parameters are reduced in each cell.
        ax : matplotlib Axes, default=None
            The axes to draw on; None creates a figure.
        cmap : str or matplotlib Colormap, default="viridis"
            The colormap of the scores.
        values_format : str or None, default=".3f"
            Format of the cell annotations; None writes none.
        colorbar : bool, default=True
            Draw a colorbar labelled with the score's name.

        Returns
        -------
        SearchHeatmapDisplay
            The display, drawn.
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
        x_param : str, default="hidden_layer_sizes"
            See :meth:`from_estimator`.
        y_param : str, default="activation"
            See :meth:`from_estimator`.
        metric : str, default="score"
            See :meth:`from_estimator`.
        aggregate : {"max", "mean"}, default="max"
            See :meth:`from_estimator`.
        ax : matplotlib Axes, default=None
            See :meth:`from_estimator`.
        cmap : str or matplotlib Colormap, default="viridis"
            See :meth:`from_estimator`.
        values_format : str or None, default=".3f"
            See :meth:`from_estimator`.
        colorbar : bool, default=True
            See :meth:`from_estimator`.
        score_name : str, default=None
            Colorbar label; None derives it from ``metric``.

        Returns
        -------
        SearchHeatmapDisplay
            The display, drawn.
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
            The axes to draw on; None creates a figure.
        cmap : str or matplotlib Colormap, default="viridis"
            The colormap of the scores.
        values_format : str or None, default=".3f"
            Format of the cell annotations; None writes none.
        colorbar : bool, default=True
            Draw a colorbar labelled with the score's name.

        Returns
        -------
        self : SearchHeatmapDisplay
            The display, drawn.
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
