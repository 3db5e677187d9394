"""Greedy ensemble selection (Caruana et al., 2004) on held-out predictions.

``ensemble="greedy"`` builds ``best_estimator_`` from every model a search
trained, at no extra training: each model's predictions on the rows it was
held out from (out-of-fold with ``cv``, the validation rows with a holdout)
are pooled (:func:`pooled_predictions`), then forward selection with
replacement (:func:`greedy_counts`) adds, step after step, the model whose
addition most improves the averaged predictions' criterion, until no model
improves it or ``ensemble_size`` steps are taken. A model added n times
weighs n. :func:`held_out_criterion` is that criterion for a search run:
the held-out loss of the averaged probabilities (predictions), or a
scorer's value.
"""

import numpy as np
from scipy.special import expit, softmax

from .._search._failures import ScoringFailures
from .._search._scoring import ScoredRows, population_loss, score_population

#: The default most steps of a greedy ensemble (``ensemble_size=None``): a
#: cap on the selection's cost (each step scores every candidate); the
#: selection stops earlier when no addition improves its criterion. Not
#: tuned: the benchmarks ran with it as it is.
GREEDY_STEPS = 25

#: Bytes of averaged predictions one vectorised evaluation of candidates
#: may take.
_CHUNK_BYTES = 1 << 26


def to_predictions(outputs, task):
    """Outputs as :func:`~._engine.population_outputs` gives them (logits
    for classifiers) turned into what an ensemble averages: class (label)
    probabilities, or the regression predictions themselves."""
    if task == "classification":
        return softmax(outputs, axis=-1)
    if task == "multilabel":
        return expit(outputs)
    return outputs


def to_outputs(predictions, task):
    """The inverse of :func:`to_predictions`: averaged probabilities as
    logits (clipped away from 0 and 1), regression predictions unchanged."""
    if task == "regression":
        return predictions
    tiny = np.finfo(np.float64).tiny
    if task == "classification":
        return np.log(np.maximum(predictions, tiny))
    p = np.clip(predictions, tiny, 1 - np.finfo(np.float64).epsneg)
    return np.log(p) - np.log1p(-p)


def pooled_predictions(held_out, n_samples, task):
    """Every model's predictions on the rows it was held out from.

    Parameters
    ----------
    held_out : list of (ndarray, ndarray)
        Per fold, its held-out rows and every model's outputs on them,
        ``(n_models, n_rows, n_outputs)`` (``SearchRun.held_out``).
    n_samples : int
        Rows of the data.
    task : {"classification", "multilabel", "regression"}

    Returns
    -------
    rows : ndarray of int of shape (n_pooled,)
        The rows held out at least once, in order.
    predictions : ndarray of shape (n_models, n_pooled, n_outputs)
        Probabilities (predictions), a row held out by several folds (e.g.
        a repeated splitter) averaged over them.
    """
    sums, counts = None, np.zeros(n_samples)
    for rows, outputs in held_out:
        predictions = to_predictions(np.asarray(outputs, dtype=np.float64), task)
        if sums is None:
            sums = np.zeros((predictions.shape[0], n_samples, predictions.shape[2]))
        np.add.at(sums, (slice(None), rows), predictions)
        np.add.at(counts, rows, 1)
    seen = np.flatnonzero(counts)
    return seen, sums[:, seen] / counts[seen][None, :, None]


def greedy_counts(predictions, criterion, candidates, max_steps):
    """Caruana's forward selection with replacement.

    Parameters
    ----------
    predictions : ndarray of shape (n_models, n_rows, n_outputs)
        Every model's held-out probabilities (predictions).
    criterion : callable
        Takes averaged predictions of shape ``(n, n_rows, n_outputs)`` and
        returns ``n`` values, higher is better (NaN is worst).
    candidates : sequence of int
        The models that may be added, in order of preference: of equally
        good additions the first is taken.
    max_steps : int
        The most steps (``ensemble_size``).

    Returns
    -------
    counts : ndarray of int of shape (n_models,)
        How often each model was added (its weight).
    first_step : ndarray of int of shape (n_models,)
        The step that first added each model (-1 for none).
    value : float
        The criterion of the final ensemble (-inf for an empty one, when
        every candidate's is NaN).
    """
    candidates = np.asarray(candidates, dtype=int)
    counts = np.zeros(len(predictions), dtype=int)
    first_step = np.full(len(predictions), -1)
    total = np.zeros(predictions.shape[1:])
    chunk = max(1, _CHUNK_BYTES // max(total.nbytes, 1))
    value = -np.inf
    for step in range(max_steps):
        values = np.concatenate([
            criterion((total + predictions[candidates[i:i + chunk]]) / (step + 1))
            for i in range(0, len(candidates), chunk)
        ])
        values = np.nan_to_num(values, nan=-np.inf)
        best = int(np.argmax(values))  # the first of equals: the preferred
        if not values[best] > value:  # no addition improves it: stop
            break
        value, model = float(values[best]), candidates[best]
        if counts[model] == 0:
            first_step[model] = step
        counts[model] += 1
        total += predictions[model]
    return counts, first_step, value


def held_out_criterion(plan, rows, criterion, scorer=None, key=None, metric=None):
    """What the greedy selection maximises, on the pooled held-out ``rows``.

    Parameters
    ----------
    plan : SearchPlan
    rows : ndarray of int
        The pooled rows (:func:`pooled_predictions`).
    criterion : {"loss", "score"}
        ``"loss"``: minus the held-out loss (log-loss of the averaged
        probabilities, the regression loss of the averaged predictions;
        weighted as the models trained), as ``validation_loss_``;
        ``"score"``: the scorer's value (NaN where it raises).
    scorer : callable or None, optional
        With ``"score"``: a scikit-learn scorer (None: accuracy / R^2,
        weighted by ``sample_weight`` when given).
    key : str, optional
        The scorer's key in ``plan.scorers`` (``"score"`` for one scorer):
        whether it takes ``sample_weight`` (``plan.weighted``).
    metric : str, optional
        With a scorer returning a dict of metrics, the one to take.

    Returns
    -------
    callable
        Averaged predictions of shape ``(n, n_rows, n_outputs)`` to ``n``
        values, higher is better.
    """
    data, task = plan.data, plan.config.task
    if criterion == "loss":
        weight = None if data.train_weight is None else data.train_weight[rows]
        return lambda averaged: -population_loss(
            to_outputs(averaged, task), data.y_encoded[rows], config=plan.config,
            sample_weight=weight,
        )
    weighted = data.sample_weight is not None and (scorer is None or key in plan.weighted)
    scored = ScoredRows(data.X[rows], data.y[rows], data.y_encoded[rows], task,
                        classes=data.classes,
                        sample_weight=data.sample_weight[rows] if weighted else None)

    def score(averaged):
        values, _ = score_population(to_outputs(averaged, task), scored, scorer,
                                     failures=ScoringFailures())
        return values[metric] if isinstance(values, dict) else values

    return score
