"""Plots of a fitted search, in scikit-learn's Display style.

Four displays read a fitted :class:`~skpmlp.ParallelMLPClassifier` or
:class:`~skpmlp.ParallelMLPRegressor` (the two search displays also read any
GridSearchCV-style ``cv_results_``):

- :class:`SearchResultsDisplay`: score against hidden width (or any
  searched parameter), one line per activation, repeats as a band;
- :class:`EpochCurvesDisplay`: training loss and validation score per
  epoch of the top-ranked models (formerly ``LearningCurvesDisplay``, a
  name that read like scikit-learn's ``LearningCurveDisplay``: the score
  against the training set size);
- :class:`SearchHeatmapDisplay`: score over two searched parameters;
- :class:`LineageDisplay`: an adaptive search (``refill``): which slot held
  which model when, and every model's validation score over the run.

As every scikit-learn Display, ``from_estimator`` (or ``from_cv_results``)
computes the data and calls ``plot``, which draws it and stores the
matplotlib objects (``ax_``, ``figure_``, ``lines_``, ...). matplotlib is an
optional dependency: ``pip install "skpmlp[plot]"``.
"""

import warnings

from ._epoch_curves import EpochCurvesDisplay
from ._heatmap import SearchHeatmapDisplay
from ._lineage import LineageDisplay
from ._search_results import SearchResultsDisplay

__all__ = ["EpochCurvesDisplay", "LineageDisplay", "SearchHeatmapDisplay", "SearchResultsDisplay"]

#: Former names, kept for one release: a FutureWarning names the new one.
_RENAMED = {"LearningCurvesDisplay": "EpochCurvesDisplay"}


def __getattr__(name):
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(
            f"skpmlp.plotting.{name} is deprecated and will be removed in the next release: it "
            f"was renamed {new} (it draws per-epoch curves, not scikit-learn's learning curve "
            f"over training set sizes).",
            FutureWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
