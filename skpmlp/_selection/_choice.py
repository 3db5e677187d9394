"""Choosing the model: which row of a search is best, and which rows an ensemble takes.

A :class:`Selection` holds the estimator's choice settings (``refit``,
``selection``, ``tie_breaker``, ``ensemble``, ``ensemble_size``) as values,
and orders the rows of a :class:`~skpmlp._search._run.SearchRun`: by held-out loss or
by the scorer's rank, as GridSearchCV's ``best_index_`` with a callable
``refit``. :meth:`Selection.members` gives the ensemble's :class:`Members`,
as its kind picks them (:mod:`skpmlp._selection._kinds`): the top rows
(:meth:`Selection.top_members`) or a greedy ensemble (:meth:`Selection.greedy`,
on :mod:`skpmlp._selection._greedy`).
"""

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ._greedy import greedy_counts, held_out_criterion, pooled_predictions
from ._kinds import ENSEMBLE_KINDS, EnsembleKind, ensemble_kind


def select_members(ranks, size, *, best, usable, pruned=None):
    """Rows of a search's top-``size`` ensemble, best first.

    The members are ``best`` (``best_index_``), then the best-ranked other
    models (ties by row order) among those that trained to the end and
    are ``usable`` (not failed, scored). A model pruned by successive
    halving stopped at a rung, so its score and, with a holdout, its
    weights are those of a partly trained model: it is never a member.
    When fewer than ``size`` models are left, the ensemble is smaller (with
    a warning when pruned models were passed over).

    Parameters
    ----------
    ranks : ndarray of shape (n_models,)
        Positions in the search's preference order (0 or 1 is best).
    size : int
        ``ensemble_size``.
    best : int
        Row of the best model, the first member.
    usable : ndarray of bool of shape (n_models,)
        Models that may enter the ensemble.
    pruned : ndarray of bool of shape (n_models,), default=None
        Models stopped by successive halving (``cv_results_["pruned"]``);
        None when the search did not prune.

    Returns
    -------
    ndarray of int of shape (n_members,)
        At most ``size`` rows.
    """
    pruned = np.zeros(len(ranks), dtype=bool) if pruned is None else np.asarray(pruned, dtype=bool)
    others = [i for i in np.argsort(ranks, kind="stable")
              if usable[i] and not pruned[i] and i != best][: size - 1]
    passed_over = pruned & np.asarray(usable, dtype=bool)
    if len(others) < size - 1 and passed_over.any():
        warnings.warn(
            f"ensemble_size={size}, but only {len(others) + 1} usable models trained to the end "
            f"(models pruned by successive halving are never members); the ensemble has "
            f"{len(others) + 1}. Lower ensemble_size, or keep more models "
            f"training (a smaller halving_factor, a larger min_iter).",
            UserWarning,
            stacklevel=3,
        )
    return np.array([best, *others], dtype=int)


@dataclass(frozen=True)
class Members:
    """An ensemble's members, as rows of ``cv_results_``.

    Attributes
    ----------
    rows : list of int
        Best first (the heaviest first for a greedy ensemble).
    weights : ndarray of shape (n_members,)
        Summing to 1 (``ensemble_weights_``).
    through_folds : bool
        Each member predicts through its fold models (the average of its k
        fold replicas), not retrained.
    score : float or None
        A greedy ensemble's ranking metric on the pooled held-out rows
        (``ensemble_score_``); None for the other kinds.
    """

    rows: list
    weights: np.ndarray
    through_folds: bool = False
    score: float = None


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
        Resolved: None is the kind's default (1, or
        :data:`~skpmlp._selection._greedy.GREEDY_STEPS` for a greedy ensemble).
    kind : EnsembleKind, default=Best()
        The ensemble, ``"auto"`` resolved (:func:`~skpmlp._selection._kinds.ensemble_kind`).
    """

    refit: object
    criterion: str
    tie_breaker: object
    ensemble_size: int
    kind: EnsembleKind = ENSEMBLE_KINDS["best"]

    @classmethod
    def of(cls, estimator, cv):
        """The settings of ``estimator``'s current parameters for a fit
        whose ``cv`` (``"auto"`` resolved: None for a holdout) is ``cv``."""
        criterion = estimator.selection
        if criterion == "auto":
            criterion = "loss" if estimator.scoring is None else "score"
        kind = ensemble_kind(estimator, cv)
        size = estimator.ensemble_size
        if size is None:
            size = kind.default_size
        return cls(estimator.refit, criterion, estimator.tie_breaker, size, kind)

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
        """The :class:`Members` of ``best_estimator_``: what the kind of
        ensemble picks (:meth:`~skpmlp._selection._kinds.EnsembleKind.members`)."""
        return self.kind.members(self, run, best_index)

    def top_members(self, run, best_index, size, through_folds):
        """``best_index`` and, for ``size > 1``, the next models as
        :meth:`order` ranks them (see :func:`select_members`), equally
        weighted.

        Raises
        ------
        ValueError
            For several members ranked by a score with multi-metric scoring
            and a callable ``refit``: no metric ranks the models.
        """
        metric = self.ranking_metric(run)
        if metric is None:  # a callable refit with several metrics: no ranking
            if size > 1:
                raise self._no_metric()
            return Members([best_index], np.ones(1), through_folds)
        means = run.cv_results[f"mean_test_{metric}"]
        usable = ~run.failed & (np.isfinite(means) if run.plan.held_out else True)
        rows = select_members(
            self.order(run, metric), size, best=best_index, usable=usable,
            pruned=run.cv_results.get("pruned"),
        ).tolist()
        return Members(rows, np.full(len(rows), 1 / len(rows)), through_folds)

    def _no_metric(self):
        return ValueError(
            f"ensemble_size={self.ensemble_size} ranks models by one metric; with "
            f"multi-metric scoring and a callable refit there is none. Pass refit=<scorer "
            f"name> or ensemble_size=1."
        )

    def greedy(self, run, best_index, through_folds):
        """A greedy ensemble (:func:`~skpmlp._selection._greedy.greedy_counts`) over every
        model that trained to the end and did not fail, on the pooled
        held-out predictions, by the ``selection`` criterion (the scorer of
        the ranking metric with ``selection="score"``); ties go to the
        model :meth:`order` prefers. ``best_index`` alone if no model
        scores."""
        plan, metric = run.plan, self.ranking_metric(run)
        if self.criterion == "score" and metric is None:
            raise self._no_metric()
        rows, predictions = pooled_predictions(run.held_out, plan.data.X.shape[0],
                                               plan.config.task)
        excluded = run.failed | np.asarray(run.cv_results.get("pruned", False), dtype=bool)
        if metric is None:  # several metrics, a callable refit: by the loss alone
            order = np.argsort(np.nan_to_num(run.test_loss, nan=np.inf), kind="stable")
        else:
            order = np.argsort(self.order(run, metric), kind="stable")
        candidates = [i for i in order if not excluded[i]]
        key = self._scorer_key(run, metric)
        scorer = plan.scorers.get(key)
        criterion = held_out_criterion(plan, rows, self.criterion, scorer, key=key, metric=metric)
        counts, first_step, value = greedy_counts(predictions, criterion, candidates,
                                                  self.ensemble_size)
        if not counts.any():
            return Members([best_index], np.ones(1), through_folds)
        chosen = np.flatnonzero(counts)
        chosen = chosen[np.lexsort((first_step[chosen], -counts[chosen]))]
        weights = counts[chosen] / counts.sum()
        score = None  # the ranking metric's value, comparable with best_score_
        if metric is not None and self.criterion == "score":
            score = float(value)
        elif metric is not None:
            averaged = np.tensordot(weights, predictions[chosen], axes=1)[None]
            score = float(held_out_criterion(plan, rows, "score", scorer, key=key,
                                             metric=metric)(averaged)[0])
        return Members(chosen.tolist(), weights, through_folds, score)

    @staticmethod
    def _scorer_key(run, metric):
        """The ``plan.scorers`` key of ``metric``: its own, or ``"score"``
        for one scorer (or a callable returning a dict of metrics)."""
        scorers = run.plan.scorers
        return metric if metric in scorers else "score" if "score" in scorers else None
