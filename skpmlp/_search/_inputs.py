"""The inputs of a search's models: ``input_transform`` fitted per fold, and what each trains on.

A model's input transform is fitted on the rows its ``fit`` sees: a fold's
training rows (never its held-out or test rows), all the rows of a lone
model or a refit. The engine never sees a transform: the models of each
value train as their own training call (:func:`train_by_input`, as the
models of each batch size train as their own run), on data where fold k's
rows are fold k's transformed copy of ``X`` (:func:`stacked`), so a fold's
batches are those of the untransformed search and every model equals the
same model trained alone on its fold's transformed rows.
"""

import dataclasses
import time

import numpy as np

from .._core._target_scaling import folded_result, unfolded_spec
from .._core._transforms import INPUT_TRANSFORMS, fit_input_transform_rows, transformed_rows
from .._engine import merge_results, population_outputs
from .._execution._training import train_models

#: Largest ``X`` (bytes) whose transformed copies a search keeps from its
#: training to its scoring: on small data transforming again is what costs;
#: on large data the copies of every fold and value would hold memory
#: (one ``X`` each) for the whole fit.
KEPT_COPY_BYTES = 4 * 2**20


@dataclasses.dataclass(frozen=True)
class InputTransforms:
    """Every ``input_transform`` value of a population, fitted on every fold.

    Attributes
    ----------
    fitted : dict of str to list
        ``{value: [fold 0's fitted transformer, ...]}`` of every value but
        ``"none"`` the population has (none: empty).
    X : ndarray of shape (n_samples, n_features) or None
        The search's rows the folds' rows index (None: no transform fitted).
    """

    fitted: dict
    X: np.ndarray = dataclasses.field(default=None, compare=False)
    #: {(value, fold): X through that fold's transform of value}, made once
    #: where X is small (:data:`KEPT_COPY_BYTES`): a fold's training copy
    #: and its scored rows are the same array (every transform maps each
    #: row on its own, so rows of the transformed X are the transformed
    #: rows). Scoring transformed its rows again: with the quantile
    #: transform (scipy's ppf, three calls a column), 7 % of an
    #: early-stopping fit of iris.
    _copies: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def fit(cls, values, X, fit_rows):
        """The transforms of ``values`` (every model's) fitted on each
        fold's ``fit_rows`` of ``X``."""
        names = [value for value in INPUT_TRANSFORMS if value != "none" and value in set(values)]
        return cls({name: [fit_input_transform_rows(name, X[rows]) for rows in fit_rows]
                    for name in names}, X)

    def of(self, value, fold):
        """Fold ``fold``'s fitted transform of ``value`` (None for ``"none"``)."""
        return None if value == "none" else self.fitted[value][fold]

    def inputs(self, value, fold):
        """The search's ``X`` through fold ``fold``'s transform of
        ``value`` (``X`` itself for ``"none"``), computed once."""
        if value == "none":
            return self.X
        copy = self._copies.get((value, fold))
        if copy is None:
            copy = transformed_rows(self.of(value, fold), self.X)
            if self.X.nbytes <= KEPT_COPY_BYTES:
                self._copies[value, fold] = copy
        return copy

    def fold_inputs(self, value, n_folds):
        """Every fold's :meth:`inputs` of ``value``."""
        return [self.inputs(value, k) for k in range(n_folds)]

    def per_fold(self, n_folds):
        """``[{value: fold k's fitted transform}]``: what a search keeps
        (``_input_transforms``) and exported models read."""
        return [{value: fits[k] for value, fits in self.fitted.items()} for k in range(n_folds)]


def fit_rows(folds, n_samples, lone):
    """The rows each fold's transforms are fitted on: its training rows, or
    every row for a lone model (scikit-learn's MLP, whose early-stopping
    part is its own, as in a ``Pipeline``)."""
    if lone:
        return [np.arange(n_samples)] * len(folds)
    return [np.asarray(train) for train, _ in folds]


def input_groups(values):
    """``[(value, models)]``: the models (indices) of every value in
    ``values``, in :data:`INPUT_TRANSFORMS` order."""
    values = np.asarray(list(values), dtype=object)
    return [(name, np.flatnonzero(values == name)) for name in INPUT_TRANSFORMS
            if (values == name).any()]


def stacked(X, y, sample_weight, folds, inputs, targets=None):
    """``(X, y, sample_weight, folds)`` that train models whose inputs are
    ``inputs`` (one array per fold: ``X`` through the fold's fitted
    transform, or ``X`` itself) and whose targets go through ``targets``
    (one :class:`~skpmlp._core._target_scaling.TargetScaling` per fold, or
    None).

    Without either, the data as given. With one fold, the fold's inputs
    and scaling of ``y``. With k folds, k copies of ``X`` (and ``y``) one
    after another, each its fold's inputs (scaling), fold k's rows
    (training and evaluation) shifted into its own copy: a fold's rows keep
    their order, so its batches are the untransformed search's.
    """
    if all(copy is X for copy in inputs) and targets is None:
        return X, y, sample_weight, folds

    def y_of(k):
        return y if targets is None else targets[k].encode(y)

    if len(folds) == 1:
        return inputs[0], y_of(0), sample_weight, folds
    n, K = X.shape[0], len(folds)
    copies = np.concatenate(inputs)
    shifted = [(np.asarray(train) + k * n, None if rows is None else np.asarray(rows) + k * n)
               for k, (train, rows) in enumerate(folds)]
    weight = None if sample_weight is None else np.tile(sample_weight, K)
    return copies, np.concatenate([y_of(k) for k in range(K)]), weight, shifted


def _name(execution, value):
    """A value's training call: its own checkpoint section and progress."""
    if value == "none":
        return execution
    return dataclasses.replace(execution, name=f"{execution.name} ({value} inputs)")


def train_by_input(spec, values, inputs, config, X, y, folds, execution, *,
                   sample_weight=None, refill_source=None, targets=None):
    """Train the models of ``spec`` (their ``input_transform`` ``values``)
    on ``folds``: the models of each value as one training call, on its
    transformed data (:func:`stacked`), the calls one after another.

    With ``targets``, each fold's models train on its scaled targets (a
    warm start's weights unfolded first) and are returned folded back:
    their weights predict ``y`` (see :mod:`skpmlp._core._target_scaling`).

    Parameters
    ----------
    spec : PopulationSpec
    values : sequence of str
        Every model's ``input_transform``.
    inputs : callable
        ``inputs(value)``: ``X`` through every fold's fitted transform of
        ``value`` (one array per fold; ``X`` itself where none).
    config, X, y, folds, execution, sample_weight, refill_source :
        As :func:`~skpmlp._execution._training.train_models`'s.
    targets : list of TargetScaling, optional
        One per fold, fitted on its training rows; None: ``y`` as given.

    Returns
    -------
    result : TrainResult
        In ``spec``'s order; ``train_time`` the sum of the calls'.
    shards : list of dict
        Every call's (``shards_``).
    """
    groups = input_groups(values)
    spec = unfolded_spec(spec, targets)
    parts, shards = [], []
    for i, (value, models) in enumerate(groups):
        data = stacked(X, y, sample_weight, folds, inputs(value), targets)
        every = len(models) == spec.n_models
        called = _name(execution, value)
        if parts and parts[-1][1].halted == "interrupted":
            # Ctrl-C stopped training: the calls left train nothing
            called = dataclasses.replace(called, deadline=time.time())
        result, call_shards = train_models(
            spec if every else spec.subset(models), config, data[0], data[1], data[3], called,
            sample_weight=data[2], refill_source=refill_source, always_start=i == 0,
        )
        parts.append((models, result))
        shards += call_shards
    result = parts[0][1] if len(parts) == 1 else merge_results(parts, spec.n_models)
    return folded_result(result, targets), shards


def population_outputs_by_input(result, k, spec, values, inputs, config):
    """Every model's outputs with its fold ``k`` weights on ``inputs(value)``
    (the rows through its value's fold ``k`` transform); as
    :func:`~skpmlp._engine.population_outputs`."""
    coefs, intercepts = result.coefs[k], result.intercepts[k]
    groups = input_groups(values)
    if len(groups) == 1:
        value, _ = groups[0]
        return population_outputs(coefs, intercepts, spec.activations, config, inputs(value))
    outputs = None
    for value, models in groups:
        rows = inputs(value)
        if outputs is None:
            outputs = np.empty((spec.n_models, rows.shape[0], config.n_outputs))
        outputs[models] = population_outputs(
            [coefs[i] for i in models], [intercepts[i] for i in models],
            [spec.activations[i] for i in models], config, rows,
        )
    return outputs
