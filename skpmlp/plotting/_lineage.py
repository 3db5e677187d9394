"""LineageDisplay: an adaptive search's slots over time and its models' lineages."""

import numpy as np

from ._common import (
    _check_matplotlib,
    _fitted_results,
    _fold_mean,
    _mean_scores,
    _monitored_name,
    _panel_axes,
)


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
        The y-axis label of the validation scores.

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
    >>> search = ParallelMLPClassifier([(8,), (16,)], ("relu", "tanh"),
    ...                                learning_rate_init=[0.003, 0.03], pruning="halving",
    ...                                refill="perturb", min_iter=3, max_iter=15,
    ...                                input_transform="robust-smooth-clip",  # one fused run
    ...                                random_state=0).fit(X, y)
    >>> display = LineageDisplay.from_estimator(search)
    >>> len(display.bars_) == len(search.cv_results_["params"])
    True
    """

    def __init__(self, *, start_iter, n_iter, slot, parent, scores, curves,
                 score_name="validation score"):
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
            The display, drawn.
        """
        _check_matplotlib("LineageDisplay")
        results = _fitted_results(estimator)
        if "start_iter" not in results:
            raise ValueError(
                f"LineageDisplay draws an adaptive search; this {type(estimator).__name__} was "
                f"fitted with refill=None (cv_results_ has no start_iter, parent and slot "
                f"columns)."
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
            The display, drawn.
        """
        plt = _check_matplotlib("LineageDisplay.plot")
        panels = 1 if self.curves is None else 2
        axes = _panel_axes(plt, ax, panels)
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
                line = axes[1].plot(epochs, curve[:n], color=colours[i], linewidth=1)[0]
                self.lines_.append(line)
                p = int(self.parent[i])
                if p >= 0 and n:
                    # the parent's epochs at the copy
                    at = int(self.start_iter[i] - self.start_iter[p])
                    if 0 < at <= len(self.curves[p]):
                        link = axes[1].plot([self.start_iter[i], epochs[0]],
                                            [self.curves[p][at - 1], curve[0]],
                                            linestyle=":", color="grey", linewidth=0.8)[0]
                        self.links_.append(link)
            axes[1].set_xlabel("epoch of the run")
            axes[1].set_ylabel(self.score_name)
            axes[1].grid(True, alpha=0.3)
        self.axes_, self.ax_, self.figure_ = axes, axes[0], axes[0].figure
        return self
