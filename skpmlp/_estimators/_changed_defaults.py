"""The FutureWarnings of defaults that changed behaviour in this release.

scikit-learn's practice: a changed default is announced, for one release,
by a ``FutureWarning`` to those who rely on it, naming the parameters to
pin. Each warning here says in which release it goes away; the change log
(``docs/changes.rst``) lists the changes.
"""

import warnings

from .._search._splits import AUTO_CV_MAX_SAMPLES

#: The release that changed the defaults warned of here.
CHANGED_IN = "0.2"

#: The release whose fits no longer warn.
WARNS_UNTIL = "0.3"


def warn_default_ensemble(estimator, kind, cv, *, n_samples):
    """Warn where ``cv="auto"`` and ``ensemble="auto"``, both left at their
    defaults, gave k folds and a greedy ensemble of fold ensembles: what
    0.1 did differently (a holdout, one refitted model), what is returned
    now, and which parameters keep either behaviour.

    Parameters
    ----------
    estimator : BaseParallelMLP
        The search, after its fit chose the folds.
    kind : EnsembleKind
        The ensemble the fit built (``"auto"`` resolved).
    cv : object
        The fit's ``cv`` with ``"auto"`` resolved: None for a holdout.
    n_samples : int
        Rows of the fit.
    """
    defaults = estimator.cv == "auto" and estimator.ensemble == "auto"
    if not (defaults and estimator.refit and cv is not None):
        return
    if kind.name != "greedy":
        return
    name = type(estimator).__name__
    ensemble = estimator._ensemble_class.__name__
    warnings.warn(
        f"{name}: since skpmlp {CHANGED_IN}, the default cv='auto' trains {cv} folds on data "
        f"of up to {AUTO_CV_MAX_SAMPLES:,} rows (this fit has {n_samples:,}), and the default "
        f"ensemble='auto' then predicts with a greedy ensemble of fold ensembles: "
        f"best_estimator_ is an {ensemble}, no model is refitted on all the data, "
        f"export_model(i) returns row i's fold ensemble, and one model's attributes "
        f"(coefs_, loss_curve_, ...) are not set on the search. Pass cv={cv!r}, "
        f"ensemble='greedy' to keep this and silence this warning; ensemble='best' for "
        f"GridSearchCV's refit of the best configuration; cv=None, ensemble='best' for "
        f"skpmlp 0.1's holdout. This warning goes away in skpmlp {WARNS_UNTIL} "
        f"(docs/changes.rst).",
        FutureWarning,
        stacklevel=5,
    )
