"""EpochCurvesDisplay: training loss and validation score per epoch of the top models."""

from numbers import Integral

import numpy as np

from ._common import (
    _check_matplotlib,
    _fitted_results,
    _fold_mean,
    _last_epoch,
    _mean_scores,
    _model_label,
    _monitored_name,
    _panel_axes,
)


class EpochCurvesDisplay:
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
        The y-axis label of the validation panel.
    loss_name : str, default="training loss"
        The y-axis label of the loss panel.

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
    SearchResultsDisplay : The final scores of the whole search.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skpmlp import ParallelMLPClassifier
    >>> from skpmlp.plotting import EpochCurvesDisplay
    >>> X, y = load_iris(return_X_y=True)
    >>> search = ParallelMLPClassifier([(8,), (16,)], ("relu", "tanh"), learning_rate_init=0.01,
    ...                                max_iter=20, cv=None, random_state=0).fit(X, y)
    >>> display = EpochCurvesDisplay.from_estimator(search, top_k=3)
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
            The search whose results are drawn.
        top_k : int, default=5
            Number of models, best first.
        metric : str, default="score"
            Scorer name (multi-metric scoring) or ``"score"``.
        ax : matplotlib Axes or array-like of 2 Axes, default=None
            One Axes per panel; None creates a figure.

        Returns
        -------
        EpochCurvesDisplay
            The display, drawn.
        """
        _check_matplotlib("EpochCurvesDisplay")
        results = _fitted_results(estimator)
        if not hasattr(estimator, "loss_curves_"):
            raise ValueError(
                f"{type(estimator).__name__} has no per-epoch loss_curves_; "
                f"EpochCurvesDisplay needs a fitted ParallelMLPClassifier or ParallelMLPRegressor."
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
        self : EpochCurvesDisplay
            The display, drawn.
        """
        plt = _check_matplotlib("EpochCurvesDisplay.plot")
        panels = 1 if self.validation_scores is None else 2
        axes = _panel_axes(plt, ax, panels)
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
