"""The kinds of ensemble ``best_estimator_`` can be: one class per value of ``ensemble``.

A kind answers, for a fit whose folds are known, what the rest of the
package asks of it (in the spirit of ``BaseSearchCV._run_search``: one small
override per kind):

- :meth:`EnsembleKind.check`: refuse, before anything trains, what the
  folds cannot give;
- :attr:`EnsembleKind.held_out_predictions`: whether the search keeps
  every model's held-out predictions for it;
- :meth:`EnsembleKind.through_folds`: whether its members predict through
  their fold models (no refit);
- :meth:`EnsembleKind.members`: its rows and weights, from a finished run.

A new kind is a subclass here, registered in :data:`ENSEMBLE_KINDS`, and a
value of the ``ensemble`` parameter (its table entry in ``_core/_params.py``).
"""

from ._greedy import GREEDY_STEPS


class EnsembleKind:
    """What one kind of ensemble does (see the module docstring)."""

    #: The value of the ``ensemble`` parameter.
    name = None
    #: The search keeps every model's held-out predictions for it.
    held_out_predictions = False
    #: ``ensemble_size=None`` means this many.
    default_size = 1

    def check(self, estimator, cv):
        """Raise a ``ValueError`` if the fit's ``cv`` (``"auto"`` resolved:
        None for a holdout) cannot give this ensemble; nothing by default."""

    def through_folds(self, cv):
        """Whether its members predict through their k fold models."""
        return False

    def members(self, selection, run, best_index):
        """Its :class:`~skpmlp._selection._choice.Members` from ``run``:
        ``best_index`` and the next ``ensemble_size - 1`` rows as the
        selection ranks them, equally weighted."""
        return selection.top_members(run, best_index, selection.ensemble_size,
                                     self.through_folds(run.plan.cv))


class Best(EnsembleKind):
    """``"best"``: the best configuration (GridSearchCV's ``best_estimator_``,
    refitted on all the data with ``cv``) and with ``ensemble_size=k`` the
    next best, each refitted."""

    name = "best"


class Folds(EnsembleKind):
    """``"folds"``: the best configurations' k fold models, averaged (no
    refit); needs k folds."""

    name = "folds"

    def check(self, estimator, cv):
        if not estimator.refit or cv is not None:
            return
        chosen = ""
        if isinstance(estimator.cv, str):
            chosen = (" cv='auto' chose the holdout for this data (more rows than it gives "
                      "k folds, a class or group too small for them, or one configuration).")
        raise ValueError(
            f"ensemble='folds' averages the best configuration's k fold models, so it needs k "
            f"folds (cv=5, a splitter, ...); this fit has a holdout (cv=None): one model per "
            f"configuration.{chosen} Pass cv=5, or ensemble='best' or 'greedy'."
        )

    def through_folds(self, cv):
        return True


class Greedy(EnsembleKind):
    """``"greedy"``: Caruana et al.'s (2004) forward selection with
    replacement on the held-out predictions (out-of-fold with ``cv``,
    where each member predicts through its fold models)."""

    name = "greedy"
    held_out_predictions = True
    default_size = GREEDY_STEPS

    def through_folds(self, cv):
        return cv is not None

    def members(self, selection, run, best_index):
        # a lone model trained on every row has no held-out predictions
        if not run.held_out:
            return selection.top_members(run, best_index, 1, self.through_folds(run.plan.cv))
        return selection.greedy(run, best_index, self.through_folds(run.plan.cv))


#: Every kind, by the value of ``ensemble`` that asks for it.
ENSEMBLE_KINDS = {kind.name: kind for kind in (Best(), Folds(), Greedy())}


def ensemble_kind(estimator, cv):
    """The :class:`EnsembleKind` a fit builds: ``estimator.ensemble`` with
    ``"auto"`` resolved.

    Parameters
    ----------
    estimator : BaseParallelMLP
    cv : object
        The fit's ``cv`` with ``"auto"`` resolved: None for a holdout.

    Returns
    -------
    EnsembleKind
        ``"auto"`` is :class:`Greedy` with k folds: a Caruana ensemble on
        out-of-fold predictions, whose members predict through their fold
        models (no refit), scored highest of skpmlp's choices on unseen
        test rows in the selection benchmark and never more than 0.01
        below a default MLP there. It is :class:`Best` with a holdout (an
        ensemble selected on one validation split overfits it, and each
        member would be refitted), with a callable ``refit`` (the callable
        names the model) and with ``warm_start`` (a warm fit goes on from
        one model's ``coefs_``).
    """
    name = estimator.ensemble
    if name == "auto":
        auto_best = cv is None or callable(estimator.refit) or estimator.warm_start
        name = "best" if auto_best else "greedy"
    return ENSEMBLE_KINDS[name]


def checked_ensemble_kind(estimator, cv):
    """:func:`ensemble_kind`, refused (``ValueError``) where the folds cannot give it."""
    kind = ensemble_kind(estimator, cv)
    kind.check(estimator, cv)
    return kind
