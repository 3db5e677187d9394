"""Choosing the model: which row of a search is best, and which rows an ensemble takes.

A :class:`Selection` holds the estimator's choice settings (``refit``,
``selection``, ``tie_breaker``, ``ensemble_size``) as values, and orders
the rows of a :class:`~._runner.SearchRun`: by held-out loss or by the
scorer's rank, as GridSearchCV's ``best_index_`` with a callable ``refit``.
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ._ensemble import select_members


@dataclass(frozen=True)
class Selection:
    """How a search chooses its best model and an ensemble's members.

    Parameters
    ----------
    refit : bool, str or callable
        The estimator's ``refit``.
    criterion : {"loss", "score"}
        ``selection`` resolved: "auto" is "loss" with the default score
        (``scoring=None``), else "score" (the scorer the user asked for).
    tie_breaker : {"loss"} or None
    ensemble_size : int
    """

    refit: object
    criterion: str
    tie_breaker: object
    ensemble_size: int

    @classmethod
    def of(cls, estimator):
        """The settings of ``estimator``'s current parameters."""
        criterion = estimator.selection
        if criterion == "auto":
            criterion = "loss" if estimator.scoring is None else "score"
        return cls(estimator.refit, criterion, estimator.tie_breaker, estimator.ensemble_size)

    def ranking_metric(self, run):
        """The ``*_test_<metric>`` columns that rank models: ``score`` with one
        metric, the one ``refit`` names with several (None with a callable
        ``refit`` or ``refit=False``)."""
        if not run.multimetric:
            return "score"
        return self.refit if isinstance(self.refit, str) else None

    def best_index(self, run, metric):
        """``best_index_``, as GridSearchCV's ``_select_best_index``: what a
        callable ``refit`` returns, else the top of :meth:`order` for
        ``metric`` (ties by row order).

        Raises
        ------
        TypeError, IndexError
            With GridSearchCV's messages, for a callable returning a
            non-integer or an index out of range.
        """
        results = run.cv_results
        if callable(self.refit):
            best = self.refit(results)
            if not isinstance(best, Integral):
                raise TypeError("best_index_ returned is not an integer")
            if best < 0 or best >= len(results["params"]):
                raise IndexError("best_index_ index out of range")
            return int(best)
        # (every fit failing raised already, as GridSearchCV)
        # by the held-out loss or the score (selection), then by row order
        return int(np.argmin(self.order(run, metric)))

    def order(self, run, metric):
        """Positions of the rows in the order the search prefers them
        (0 is the best), then by row order as GridSearchCV's ``best_index_``:

        - ``selection="loss"``: by the mean held-out loss (NaN last), failed
          and pruned models and those without a finite score after all
          others;
        - ``selection="score"``: by ``rank_test_<metric>`` (which already
          ranks failed and pruned models last), ties by the mean held-out
          loss with ``tie_breaker="loss"``.
        """
        rows = np.arange(len(run.test_loss))
        loss = np.nan_to_num(run.test_loss, nan=np.inf)
        if self.criterion == "loss":
            means = run.cv_results[f"mean_test_{metric}"]
            pruned = np.asarray(run.cv_results.get("pruned", False), dtype=bool)
            keys = (rows, loss, run.failed | ~np.isfinite(means) | pruned)
        else:
            ranks = run.cv_results[f"rank_test_{metric}"]
            keys = (rows, loss, ranks) if self.tie_breaker == "loss" else (rows, ranks)
        order = np.lexsort(keys)  # the last key is the primary one
        positions = np.empty(len(order), dtype=int)
        positions[order] = rows
        return positions

    def members(self, run, best_index):
        """Rows of ``best_estimator_``: ``best_index`` and, with
        ``ensemble_size > 1``, the next models as :meth:`order` ranks them
        (see :func:`~._ensemble.select_members`).

        Raises
        ------
        ValueError
            For an ensemble with multi-metric scoring and a callable
            ``refit``: no metric ranks the models.
        """
        metric = self.ranking_metric(run)
        if metric is None:  # a callable refit with several metrics: no ranking
            if self.ensemble_size > 1:
                raise ValueError(
                    f"ensemble_size={self.ensemble_size} ranks models by one metric; with "
                    f"multi-metric scoring and a callable refit there is none. Pass refit=<scorer "
                    f"name> or ensemble_size=1."
                )
            return [best_index]
        means = run.cv_results[f"mean_test_{metric}"]
        usable = ~run.failed & (np.isfinite(means) if run.plan.held_out else True)
        return select_members(
            self.order(run, metric), self.ensemble_size, best=best_index, usable=usable,
            pruned=run.cv_results.get("pruned"),
        ).tolist()
