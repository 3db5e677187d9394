"""The parameter table: every estimator parameter, once.

Each :class:`Param` row holds a parameter's name, default, constraint,
role (whether a search may vary it, whether the engine takes it per
model), which estimators have it and its documentation. From the table
come the estimators' ``_parameter_constraints``, the optimizer defaults,
the searchable parameters and their value checks, the names an exported
model carries, and the Parameters sections of the docstrings. The
``__init__`` signatures stay explicit (scikit-learn's ``get_params`` reads
them); ``tests/core/test_params.py`` checks each one against the table.

Adding a parameter: a row here, a line in each signature that has it, and
wherever the engine must act on it (see ``docs/design.md``).
"""

import os
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
from sklearn.metrics import get_scorer_names

from .._engine import ACTIVATION_NAMES, SCHEDULES, OptimizerSettings
from .._kernels import SOLVERS
from . import _checks
from ._compat import HasMethods, Interval, Options, StrOptions
from ._target_scaling import TARGET_TRANSFORMS
from ._transforms import INPUT_TRANSFORMS

#: What a parameter is to the search and the engine.
#: - "model": what a model is (always a ``cv_results_`` column; searchable);
#: - "optimizer": how a model's optimizer steps, an :class:`OptimizerSettings`
#:   field (searchable, per model in the engine);
#: - "batch": the model's minibatch size (searchable, per model);
#: - "input": how a model's inputs are transformed (searchable, per model;
#:   applied by the search layer, the engine never sees it);
#: - "training": how every model trains (one value; an exported model keeps it);
#: - "search": how the search runs (search estimators only);
#: - "fit": what one fit does (not exported: ``warm_start``, ``random_state``, ``repeat``).
ROLES = ("model", "optimizer", "batch", "input", "training", "search", "fit")

#: Roles a search may vary per model (a list or a distribution).
SEARCHABLE_ROLES = ("model", "optimizer", "batch", "input")

_OPTIMIZER = OptimizerSettings()

#: ``Param.single_default`` when the single-model estimators share the default.
_SAME = "<same as the search's>"


def _interval(kind, low, high, closed):
    """A number in an interval: scikit-learn's constraint and the check of
    a searched value, from one description."""
    return [Interval(kind, low, high, closed=closed)], _checks.interval(low, high, closed)


def _or_auto(rule):
    """A ``(constraints, check)`` rule that also takes the string ``"auto"``."""
    constraints, check = rule
    return [StrOptions({"auto"}), *constraints], _checks.or_auto(check)


def _options(*options):
    """One of the strings ``options``: constraint and value check."""
    return [StrOptions(set(options))], _checks.option(set(options))


_BOOLEAN = (["boolean"], _checks.BOOLEAN)


@dataclass(frozen=True)
class Param:
    """One estimator parameter.

    Parameters
    ----------
    name : str
    default : object
        The default of the search estimators (and of the single-model ones,
        unless ``single_default`` says otherwise).
    rule : tuple
        ``(constraint, values)``: scikit-learn's constraints of one value,
        and for a searchable parameter the :class:`~skpmlp._core._checks.Values` rule
        that reads its candidates and checks its draws (None otherwise).
    type : str
        The numpydoc type of one value.
    doc : str
        The numpydoc description (indented by 8 spaces) in the single-model
        estimators, and in the search ones unless ``search_doc`` is given.
    role : str
        One of :data:`ROLES`.
    family : {"both", "search", "single"}
        The estimators that have it: all, the searches, the single models.
    task : {"both", "classifier", "regressor"}
    single_default : object, optional
    search_type, search_doc : str, optional
        The type and description in the search estimators, where they differ.
    """

    name: str
    default: object
    rule: tuple
    type: str
    doc: str
    role: str = "training"
    family: str = "both"
    task: str = "both"
    single_default: object = _SAME
    search_type: str = None
    search_doc: str = None

    @property
    def searchable(self):
        """Whether a search may vary it per model."""
        return self.role in SEARCHABLE_ROLES

    def default_in(self, family):
        """The default in the ``family`` ("search" or "single") estimators."""
        if family == "search" or self.single_default == _SAME:
            return self.default
        return self.single_default

    def constraint_in(self, family):
        """The ``_parameter_constraints`` entry in ``family``'s estimators:
        in a search, a searchable parameter also takes an array-like of
        values or a distribution (an object with ``rvs``)."""
        constraint = list(self.rule[0])
        if family == "single" or not self.searchable:
            return constraint
        own = [c for c in constraint if c != "array-like"]
        return [None] * (self.default is None) + own + ["array-like", HasMethods(["rvs"])]

    @property
    def values(self):
        """The :class:`~skpmlp._core._checks.Values` rule of a searchable parameter."""
        return self.rule[1]

    def entry(self, family):
        """The numpydoc entry ``(header, description)`` in ``family``."""
        search = family == "search"
        kind = self.type
        if search and self.search_type is not None:
            kind = self.search_type
        elif search and self.searchable:
            kind = f"{self.type}, list of them or distribution"
        doc = self.search_doc if search and self.search_doc is not None else self.doc
        return f"{self.name} : {kind}, default={_literal(self.default_in(family))}", doc


def _literal(value):
    """``value`` as a numpydoc default: strings in double quotes, ``np.nan``."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, float) and np.isnan(value):
        return "np.nan"
    if isinstance(value, tuple):
        return "(" + ", ".join(_literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value).replace("e-0", "e-")


_POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
_OPTIONAL_POSITIVE_INT = (_POSITIVE_INT + [None], None)
_OPTIONAL_SECONDS = ([Interval(Real, 0, None, closed="neither"), None], None)


# ----------------------------------------------------------------- the table
_ROWS = (
    Param(
        "hidden_layer_sizes", None,
        ([Interval(Integral, 1, None, closed="left"), "array-like"], _checks.ARCHITECTURES),
        "int or array-like of int", role="model", single_default=(100,),
        search_type="int, array-like of int, list of tuples, distribution or None",
        doc="""\
        Widths of the hidden layers: ``(100, 50)`` or ``[100, 50]`` is two
        hidden layers, as in scikit-learn's MLP.""",
        search_doc="""\
        Architectures to train. As in scikit-learn's MLP, an int is one
        network with one hidden layer and a sequence of ints, such as
        ``(64, 32)`` or ``[64, 32]``, ONE network with those hidden layers;
        a list of tuples (e.g. ``[(32,), (64, 64)]``) is several networks.
        A list mixing ints and tuples is ambiguous and raises an error. None
        trains ``(32,)``, ``(64,)``, ``(128,)`` and ``(64, 64)``. A
        distribution (an object with ``rvs``, needs ``n_models``) draws one
        architecture per configuration: an int-valued one such as
        ``scipy.stats.randint(16, 257)`` one hidden layer of the drawn
        width, a :class:`~skpmlp.LayerSizesDistribution` several depths.""",
    ),
    Param(
        "activation", ("relu", "tanh"),
        ([StrOptions(set(ACTIVATION_NAMES))], _checks.ACTIVATIONS),
        "str", role="model", single_default="relu",
        search_type="str, array-like of str or distribution",
        doc="""\
        Hidden activation, one of identity, logistic (alias sigmoid), tanh,
        relu, elu, selu, gelu, leaky_relu, hardshrink, mish.""",
        search_doc="""\
        Hidden activations to try: identity, logistic (alias sigmoid), tanh,
        relu, elu, selu, gelu, leaky_relu, hardshrink, mish.""",
    ),
    Param(
        "loss", "squared_error", ([StrOptions({"squared_error", "poisson"})], None),
        '{"squared_error", "poisson"}', task="regressor",
        doc="""\
        The loss, as scikit-learn's MLPRegressor: half the squared error, or
        the half Poisson deviance with an exponential output (log link;
        predictions are positive, targets must be non-negative).
        ``"poisson"`` trains on the torch path: the native kernel has
        squared error only.""",
    ),
    Param(
        "target_transform", "standard", _options(*TARGET_TRANSFORMS),
        "{" + ", ".join(f'"{name}"' for name in TARGET_TRANSFORMS) + "}",
        task="regressor", single_default="none",
        doc="""\
        How the targets are scaled while the model trains. ``"none"``: as
        given (scikit-learn's MLPRegressor). ``"standard"``: the model
        trains on ``(y - mean) / std`` of the rows ``fit`` trains on, and
        its output layer is then rescaled to predict ``y`` itself
        (``coefs_[-1] * std``, ``intercepts_[-1] * std + mean``), so the
        fitted model is a plain MLP in ``y``'s units; with
        ``loss="poisson"`` the targets are divided by their mean and the
        output bias gets its log. ``loss_curve_`` (and the validation loss
        of ``monitor="loss"``) is in the scaled units the model trains in,
        and so is ``tol``, which the loss is compared with.""",
        search_doc="""\
        How the targets are scaled while the models train.
        ``"standard"`` (the searches' default): every model trains on
        ``(y - mean) / std`` of its fold's training rows (never the rows
        that score it; all the rows for a refit), and its output layer is
        then rescaled to predict ``y`` itself (``coefs_[-1] * std``,
        ``intercepts_[-1] * std + mean``): ``cv_results_``, predictions and
        exported models are in ``y``'s units, and every model is a plain
        MLP. The default space (learning rates, penalties, initial weights)
        is tuned for targets of unit scale, so targets in the thousands
        train badly without it. With ``loss="poisson"`` the targets are
        divided by their mean and the output bias gets its log. ``"none"``:
        as given (what ``GridSearchCV(MLPRegressor())`` trains).
        ``loss_curve_`` and the validation loss of ``monitor="loss"`` are
        in the scaled units the models train in, and so is ``tol``, which
        the loss is compared with.""",
    ),
    Param(
        "solver", _OPTIMIZER.solver, _options(*SOLVERS),
        "{" + ", ".join(f'"{name}"' for name in SOLVERS) + "}",
        role="optimizer",
        doc="""\
        ``"lbfgs"`` is full-batch L-BFGS as scikit-learn's MLP (scipy's
        L-BFGS-B): ``max_iter`` counts iterations, ``tol`` is the gradient
        tolerance, ``early_stopping`` is ignored. ``"adamw"`` (not in
        scikit-learn) is ``torch.optim.AdamW``: ``alpha`` is its decoupled
        weight decay (every step multiplies the weights, not the biases, by
        ``1 - lr * alpha``) and the loss has no L2 term.""",
        search_doc="""\
        Optimizer of every model: Adam, SGD with momentum as scikit-learn's MLP,
        AdamW (``torch.optim.AdamW``: ``alpha`` is its decoupled weight decay of
        the weights, the loss has no L2 term), or full-batch L-BFGS as
        scikit-learn's ``solver="lbfgs"`` (scipy's L-BFGS-B), every model with
        its own curvature history and line search inside one fused run.
        scikit-learn recommends lbfgs for small data sets. With lbfgs,
        ``max_iter`` counts iterations, ``tol`` is the gradient tolerance,
        ``max_fun`` bounds the loss evaluations, and ``batch_size``,
        ``learning_rate_init``, ``momentum``, ``n_iter_no_change``,
        ``early_stopping`` (ignored, as scikit-learn does) and ``monitor`` do
        not apply; ``pruning`` is refused. A list such as ``["sgd", "adam"]``
        searches the solver per model, in the same fused run (lbfgs models train
        apart in the same call; mixing them with minibatch models is refused
        with ``early_stopping`` or ``pruning``).""",
    ),
    Param(
        "learning_rate_init", (0.003, 0.01),
        ([Interval(Real, 0, None, closed="neither")], _checks.positive(allow_zero=False)),
        "float", role="model", single_default=0.001,
        search_type="float, array-like of float or distribution",
        doc="""\
        The initial learning rate: the step size of Adam and of SGD's
        ``"constant"`` schedule.""",
        search_doc="""\
        Learning rates to try (a tuple, a list or an array such as
        ``np.logspace(-4, -2, 5)``); each model keeps its own inside the
        fused optimizer step. A distribution such as
        ``scipy.stats.loguniform(1e-4, 1e-1)`` is drawn from (see
        ``n_models``).""",
    ),
    Param(
        "alpha", 0.0001,
        ([Interval(Real, 0, None, closed="left")], _checks.positive(allow_zero=True)),
        "float", role="model", search_type="float, array-like of float or distribution",
        doc="""\
        L2 penalty, as in scikit-learn's MLP.""",
        search_doc="""\
        L2 penalties to try (a tuple, a list, an array or a distribution),
        as scikit-learn's MLP applies them.""",
    ),
    Param(
        "class_weight", None, ([StrOptions({"balanced"}), dict, list, None], None),
        'dict, list of dict, "balanced" or None', task="classifier",
        doc="""\
        Weights of the classes in every model's loss, as scikit-learn
        defines them (:func:`~sklearn.utils.class_weight.compute_sample_weight`):
        None weighs every class 1, a dict maps class labels to weights,
        "balanced" weighs each class ``n_samples / (n_classes * count)``
        over the ``y`` given to fit (for a multilabel ``y``, "balanced" or
        a list of dicts, one per label). They multiply ``sample_weight``,
        train the models and weigh what early stopping watches; the search
        scorers see ``sample_weight`` alone, as GridSearchCV's do.""",
    ),
    Param(
        "batch_size", "auto",
        ([StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")], _checks.BATCH_SIZE),
        'int or "auto"', role="batch", search_type='int, "auto", list of them or distribution',
        doc="""\
        Minibatch size; ``"auto"`` is ``min(200, n_samples)``. An int larger
        than the training rows is clipped to them, with scikit-learn's
        warning.""",
        search_doc="""\
        Minibatch size; ``"auto"`` is ``min(200, n_samples)``. An int larger
        than the training rows is clipped to them, with scikit-learn's
        warning. A list (or an int-valued distribution) searches it per
        model: the models of each batch size train as one fused run, the
        runs one after another in the same ``fit`` (about 1.1x the cost of
        one run, see ``benchmarks/batch_size_cost.py``); halving then ranks
        models within their batch size.""",
    ),
    Param(
        "shuffle", True, _BOOLEAN, "bool",
        doc="""\
        Shuffle the training rows every epoch, as scikit-learn's MLP; with
        False every epoch takes them in the same order.""",
    ),
    Param(
        "max_iter", 200, (_POSITIVE_INT, None), "int",
        doc="""\
        Maximum number of epochs (iterations with ``solver="lbfgs"``).""",
    ),
    Param(
        "max_fun", 15000, (_POSITIVE_INT, None), "int",
        doc="""\
        ``solver="lbfgs"`` only: a model stops once it used more than
        ``max_fun`` loss evaluations (checked at the end of an iteration,
        as scipy's L-BFGS-B), as scikit-learn's MLP.""",
    ),
    Param(
        "n_repeats", 1, (_POSITIVE_INT, None), "int", role="search", family="search",
        doc="""\
        Number of independently initialised repeats of every configuration.""",
    ),
    Param(
        "n_models", None, _OPTIONAL_POSITIVE_INT, "int or None", role="search", family="search",
        doc="""\
        Number of configurations to draw, as ``n_iter`` of
        RandomizedSearchCV (each trained ``n_repeats`` times). None trains
        every combination of the lists (the grid's cross product); it
        needs every searched parameter to be a value or a list. With lists
        only, ``n_models`` configurations of the grid are sampled without
        replacement; with any distribution (an object with
        ``rvs(random_state=...)``), each configuration draws every
        parameter from its distribution or, uniformly, from its list. The
        draws depend on ``random_state`` only, and
        ``cv_results_["params"]`` holds the drawn values.""",
    ),
    Param(
        "param_grid", None, ([dict, list, None], None), "dict, list of dict or None",
        role="search",
        family="search",
        # the searchable parameters are listed from this table (see _param_grid_doc)
        doc="",
    ),
    Param(
        "early_stopping", False, _BOOLEAN, "bool",
        doc="""\
        Hold out ``validation_fraction`` of the rows (stratified for
        classifiers), stop when the validation score has not improved by
        ``tol`` for more than ``n_iter_no_change`` epochs, and keep the best
        weights.""",
        search_doc="""\
        Stop each model when its validation score has not improved by
        ``tol`` for more than ``n_iter_no_change`` epochs, and keep its best
        weights. Otherwise each model stops on a training-loss plateau.
        With ``cv``, the validation score is that of a ``validation_fraction``
        part of each fold's training rows, averaged over the folds, so a
        model's fold replicas stop together (and keep the epoch of the
        model's best mean score; ``restore_best_weights`` keeps each
        replica's own best epoch by its validation loss instead). Stopped
        models are dropped from the fused network (compacted), so they stop
        costing compute.""",
    ),
    Param(
        "restore_best_weights", False, (["boolean", StrOptions({"fold"})], None), 'bool or "fold"',
        role="search", family="search",
        doc="""\
        Keep each trained model at its own best epoch (Keras's
        ``restore_best_weights``, RealMLP's best-epoch selection): every
        epoch, each fold replica of each model (with ``cv=None``, each
        model) is judged by its validation loss (cross-entropy for
        classifiers, half squared error, or half Poisson deviance, for
        regressors; without the L2 term, whatever ``monitor``) on its own
        validation rows, and ends training with the weights of the epoch
        where that loss was lowest (the first of ties), independently of
        its other folds and of the other models. With ``cv=None`` the
        validation rows are the ``validation_fraction`` held out (which
        also score the models); with ``cv`` they are a
        ``validation_fraction`` part of each fold's own training rows, as
        for ``early_stopping``, so a fold's test rows stay unseen and
        ``cv_results_`` stays an honest estimate. ``"fold"`` is RealMLP's
        ``n_cv`` instead: with ``cv``, each fold replica trains on all of
        its fold's training rows and picks its epoch on the fold's test
        rows, the rows that then score it (and that ``early_stopping`` and
        ``pruning`` watch too), so no row is held out of training but
        ``cv_results_``'s test scores are optimistic (each fold model chose
        its epoch on them); the fold models, and the greedy ensembles made
        of them, are what it is for. With ``cv=None`` it is ``True``.
        Stopping does not change: the
        training-loss rule, or ``early_stopping``'s (whose own best weights
        then give way to each replica's best epoch by the loss); halving
        ranks as without it. ``best_epoch_per_model_`` holds every
        replica's best epoch, ``cv_results_["best_epoch"]`` each model's
        mean over its folds. The refit (``refit=True``, ``ensemble="best"``)
        retrains on all the rows for a fixed number of epochs: with
        ``cv=None`` (``holdout_refit``) the model's best epoch, with ``cv``
        the mean of its fold replicas' best epochs (rounded); the refitted
        model's ``max_iter`` and ``n_iter_no_change`` are that count and it
        has no ``early_stopping``. Fold ensembles (``ensemble="folds"``, a
        greedy ensemble with ``cv``) and ``export_model`` use the restored
        fold models. One setting for the whole search, not searchable per
        model: it decides which rows are held out, for every model alike.
        L-BFGS models (never monitored) ignore it.""",
    ),
    Param(
        "warm_start", False, _BOOLEAN, "bool", role="fit",
        doc="""\
        Reuse the solution of the previous call to fit as initialization,
        as scikit-learn's MLP: training starts from the previous fit's
        ``coefs_`` and ``intercepts_`` instead of fresh initial weights; the
        optimizer and the stopping rule start afresh, ``n_iter_`` counts
        this fit's epochs, ``loss_curve_`` and ``validation_scores_`` go on
        from the previous fit's. The layer sizes and the classes must be the
        previous fit's.""",
        search_doc="""\
        Reuse the solution of the previous call to fit as initialization,
        as scikit-learn's MLP: with one configuration (one value per
        parameter, ``n_repeats=1``), the model starts from the previous
        fit's ``coefs_`` and ``intercepts_`` (its replica on every ``cv``
        fold and its refit too) instead of fresh initial weights (a previous
        fit with ``refit=False`` has none: it starts afresh); the
        optimizer and the stopping rule start afresh, ``n_iter_`` counts
        this fit's epochs, ``loss_curve_`` and ``validation_scores_`` go on
        from the previous fit's. The layer sizes and the classes must be the
        previous fit's.

        A search of several models resumes: every model that was neither
        pruned nor failed (diverged) continues, each ``cv`` fold replica
        from its own previous weights, for ``max_iter`` more epochs (a
        model that stopped early, converged, trains again: its stop does not
        carry over; a fit that was interrupted, or reached ``max_time``,
        continues where each model stopped). Pruned and failed models keep
        their weights and rows. ``n_iter_per_model_`` adds this fit's epochs,
        ``loss_curves_`` and ``validation_scores_per_model_`` go on,
        ``cv_results_`` holds the continued models' new scores, and the refit
        follows as usual (from fresh initial weights). The search must draw
        the same configurations on the same rows and folds: the same
        parameters, an int ``random_state`` (None keeps the previous fit's
        seed) and data of the same shape, else a ``ValueError`` says what
        changed. Not with ``refill``. This also works on a search loaded with
        :func:`skpmlp.io.load`.""",
    ),
    Param(
        "validation_fraction", 0.1, ([Interval(Real, 0, 1, closed="neither")], None), "float",
        doc="""\
        The fraction of the rows (stratified for classifiers) that
        ``early_stopping`` holds out and watches.""",
        search_doc="""\
        With ``cv=None``, the fraction of the rows held out (stratified for
        single-label classifiers; the fraction of the groups, whole, when
        ``fit`` gets ``groups``) to score and select models; with ``cv``, the
        fraction of each fold's training rows that early stopping, pruning
        and ``restore_best_weights`` watch.""",
    ),
    Param(
        "monitor", "score", ([StrOptions({"score", "loss"})], None), '{"score", "loss"}',
        doc="""\
        What early stopping watches: the validation accuracy / R^2, or the
        validation loss.""",
        search_doc="""\
        What early stopping and pruning watch on the validation rows each
        epoch, computed fused on the device: the accuracy (classifiers) or
        R^2 (regressors), as scikit-learn's MLP, or the validation loss
        (cross-entropy / half squared error, without the L2 term). With
        "loss", ``validation_scores_per_model_`` holds the negated loss, so
        higher is better either way (as scikit-learn's ``neg_log_loss``).
        The final ranking always uses ``scoring``.""",
    ),
    Param(
        "n_iter_no_change", 10,
        ([Interval(Integral, 1, None, closed="left"), Options(Real, {np.inf})], None),
        "int or np.inf",
        # np.inf: never stop on a plateau, as scikit-learn's MLP
        doc="""\
        Training stops when the loss has not improved by ``tol`` for more
        than ``n_iter_no_change`` epochs (``np.inf``: never, it trains
        ``max_iter`` epochs).""",
        search_doc="""\
        Patience of the per-model stopping rule, in epochs; ``np.inf``
        never stops a model before ``max_iter`` (as scikit-learn's MLP).""",
    ),
    Param(
        "tol", 1e-4, ([Interval(Real, 0, None, closed="left")], None), "float",
        doc="""\
        Improvement that resets the patience of the stopping rule. With
        ``solver="lbfgs"``, a model converges when its largest absolute
        gradient entry is at most ``tol`` (scipy's ``gtol``) or its loss
        decreases by a relative ``2.2e-9`` or less (scipy's ``ftol``).""",
    ),
    Param(
        "momentum", _OPTIMIZER.momentum, _interval(Real, 0, 1, "both"), "float", role="optimizer",
        doc="""\
        SGD momentum, in [0, 1].""",
    ),
    Param(
        "nesterovs_momentum", _OPTIMIZER.nesterovs_momentum, _BOOLEAN, "bool", role="optimizer",
        doc="""\
        Use Nesterov's momentum with SGD.""",
    ),
    Param(
        "beta_1", _OPTIMIZER.beta_1, _interval(Real, 0, 1, "left"), "float", role="optimizer",
        doc="""\
        Adam's decay rate of the first moment estimates, in [0, 1).""",
    ),
    Param(
        "beta_2", 0.95, _interval(Real, 0, 1, "left"), "float", role="optimizer",
        single_default=_OPTIMIZER.beta_2,
        doc="""\
        Adam's decay rate of the second moment estimates, in [0, 1).""",
        search_doc="""\
        Adam's (and AdamW's) decay rate of the second moment estimates, in
        [0, 1). The searches' default, 0.95, is RealMLP-TD's, which scored
        above scikit-learn's 0.999 on the selection benchmark (user guide,
        "The default space, and why"); the single models keep 0.999.""",
    ),
    Param(
        "epsilon", _OPTIMIZER.epsilon, _interval(Real, 0, None, "neither"), "float",
        role="optimizer",
        doc="""\
        Adam's numerical stability term, > 0.""",
    ),
    Param(
        "learning_rate", _OPTIMIZER.learning_rate, _options(*SCHEDULES),
        "{" + ", ".join(f'"{name}"' for name in SCHEDULES) + "}", role="optimizer",
        doc="""\
        The learning-rate schedule. ``"constant"``, ``"invscaling"`` and
        ``"adaptive"`` are SGD's, as scikit-learn's MLP:
        ``"invscaling"`` divides ``learning_rate_init`` by
        ``t ** power_t`` (t the training samples seen), ``"adaptive"``
        divides it by 5 where the stopping rule (``tol``,
        ``n_iter_no_change``) would stop the model, and stops only once it
        is below 1e-6; Adam and AdamW ignore them. ``"cosine"`` and
        ``"coslog4"`` (not in scikit-learn) apply to every minibatch
        solver: epoch ``e`` of ``max_iter`` (0-based) trains at
        ``learning_rate_init * s(t)``, ``t = (e + 0.5) / max_iter``, with
        ``s(t) = (1 + cos(pi t)) / 2`` for ``"cosine"`` (from
        ``learning_rate_init`` down to 0) and
        ``s(t) = (1 - cos(2 pi log2(1 + 15 t))) / 2`` for ``"coslog4"``
        (RealMLP's schedule, Holzmüller et al. 2024: four cycles from 0 up
        to ``learning_rate_init`` and back, each twice as long as the one
        before). The rate changes once per epoch, not per minibatch. A
        model that stops early (``tol``, ``early_stopping``) stops where
        its schedule is; with ``"coslog4"``, whose rate falls near 0
        between cycles, the training-loss rule may stop a model in a
        trough (``n_iter_no_change=np.inf`` or ``early_stopping`` avoid
        it). A model that joins an adaptive search late (``refill``)
        starts its schedule when it starts, over the epochs left. SGD keeps
        scikit-learn's velocity across rate changes. L-BFGS ignores it.""",
    ),
    Param(
        "power_t", _OPTIMIZER.power_t, _interval(Real, 0, None, "left"), "float", role="optimizer",
        doc="""\
        The ``"invscaling"`` exponent.""",
    ),
    Param(
        "amsgrad", _OPTIMIZER.amsgrad, _BOOLEAN, "bool", role="optimizer",
        doc="""\
        Adam's AMSGrad variant, as ``torch.optim.Adam(amsgrad=True)``: each
        step divides by the running maximum of the second moment estimates,
        so a parameter's step size never grows back. SGD ignores it.""",
    ),
    Param(
        "warmup_fraction", _OPTIMIZER.warmup_fraction, _interval(Real, 0, 1, "both"), "float",
        role="optimizer",
        doc="""\
        A linear warm-up of the learning rate over this fraction of the
        ``max_iter`` epochs, in [0, 1] (not in scikit-learn; 0, the
        default, none): epoch ``e`` (0-based) trains at the rate the
        schedule (``learning_rate``, any of them) gives it times
        ``min(1, t / warmup_fraction)``, ``t = (e + 0.5) / max_iter``.
        Stepped once per epoch, not per minibatch; every minibatch solver
        (Adam, AdamW and SGD) follows it, L-BFGS ignores it.""",
    ),
    Param(
        "label_smoothing", _OPTIMIZER.label_smoothing, _interval(Real, 0, 1, "left"), "float",
        role="optimizer", task="classifier",
        doc="""\
        Label smoothing of the training loss, in [0, 1) (not in
        scikit-learn; 0, the default, none): the softmax cross-entropy's
        targets are ``(1 - label_smoothing) * onehot + label_smoothing /
        n_classes``, as ``torch.nn.functional.cross_entropy(label_smoothing=...)``
        (binary problems too: their two softmax outputs); a multilabel
        model's 0/1 targets are ``y * (1 - label_smoothing) +
        label_smoothing / 2``. ``loss_curve_`` reports the smoothed loss;
        the validation loss (``monitor="loss"``, ``selection="loss"``) is
        the plain log-loss. Every solver, L-BFGS included. A fitted model
        is its weights: ``to_sklearn`` and ``to_torch`` predict the same,
        but scikit-learn's MLP cannot retrain with it.""",
    ),
    Param(
        "diagonal_scaling", _OPTIMIZER.diagonal_scaling, _BOOLEAN, "bool", role="optimizer",
        doc="""\
        Start the network with a learnable diagonal scaling layer (not in
        scikit-learn; RealMLP's first layer, Holzmueller et al. 2024): the
        first layer reads ``x * s``, ``s`` a per-feature scale initialised
        to 1, of the inputs after ``input_transform``. ``s`` trains with the
        model's own optimizer, learning rate and schedule (not RealMLP's
        sixfold rate for it, which loses on a standard MLP: user guide,
        "Selection benchmark"), and ``alpha`` never penalises it (as a bias).
        The fitted model folds ``s`` into its first layer's weights
        (``coefs_[0]`` row ``j`` times ``s[j]``), so ``coefs_``,
        ``to_sklearn`` and ``to_torch`` are a plain MLP's and predict the
        same. Trains on torch: the native and Triton kernels lack the
        layer (``verbose`` says so); a warm start goes on from the folded
        weights with ``s`` at 1 again (the same function).""",
        search_doc="""\
        Start every network with a learnable diagonal scaling layer
        (RealMLP's first layer, Holzmueller et al. 2024): the first layer
        reads ``x * s``, ``s`` a per-feature scale initialised to 1, trained
        by the model's own optimizer, learning rate and schedule, never
        penalised by ``alpha``. ``[False, True]`` searches it per model, in
        the same fused run (scaled models share layers with scaled models
        only). Exported models fold ``s`` into their first layer's weights:
        ``coefs_``, ``to_sklearn`` and ``to_torch`` are a plain MLP's.
        Scaled models train on torch (the native and Triton kernels lack the
        layer; ``verbose`` says so). Not with ``refill`` when both values are
        searched.""",
    ),
    Param(
        "dropout", "auto",
        _or_auto(_interval(Real, 0, 1, "left")),
        'float or "auto"', role="optimizer", single_default=_OPTIMIZER.dropout,
        search_type='float, "auto", list of them or distribution',
        search_doc="""\
        Inverted dropout on every hidden layer's activations while
        training, in [0, 1) (not in scikit-learn; 0: none), as the single
        models' ``dropout`` (:class:`SingleMLPClassifier` says how the masks
        are drawn). ``"auto"``, the default, is 0.15 for a model whose
        solver is ``"adam"``, ``"adamw"`` or ``"sgd"`` and 0 for
        ``"lbfgs"`` (a random objective breaks L-BFGS's line search): the
        rate that scored best on the selection benchmark (user guide, "The
        default space, and why"). A number, a list or a distribution is
        taken as given, and ``solver="lbfgs"`` with a rate above 0 raises.
        Trains on the native kernel, the Triton kernels and torch (the
        same masks on each).""",
        doc="""\
        Inverted dropout on every hidden layer's activations while
        training, in [0, 1) (not in scikit-learn; 0, the default, none):
        each hidden unit's output is zeroed with probability ``dropout``
        and the kept ones are scaled by ``1 / (1 - dropout)``, as
        ``torch.nn.Dropout``; nothing is dropped at prediction, so
        ``predict``, the scores, ``to_sklearn`` and ``to_torch`` use the
        trained weights as they are. A model's masks are hashed from its
        own seed (that of its initial weights), the epoch, the step, the
        layer, the row's position in its batch and the unit, so they never
        depend on the other models of a search. ``loss_curve_`` reports the
        training loss with the units dropped; the validation scores and
        losses (``early_stopping``, ``pruning``) use every unit. Minibatch solvers only:
        ``solver="lbfgs"`` with ``dropout > 0`` raises (a random objective
        breaks L-BFGS's line search). ``"auto"`` (the searches' default)
        is 0.15 for a minibatch solver and 0 for ``"lbfgs"``. Trains on the
        native kernel, the Triton kernels and torch (the same masks on
        each).""",
    ),
    Param(
        "input_transform", ("robust-smooth-clip", "quantile"), _options(*INPUT_TRANSFORMS),
        "{" + ", ".join(f'"{name}"' for name in INPUT_TRANSFORMS) + "}",
        role="input", single_default="none",
        doc="""\
        How the model's inputs are transformed before its first layer,
        fitted on the rows ``fit`` trains on and kept with the model
        (``input_transform_``), so ``predict`` takes raw ``X``. ``"none"``:
        as given. ``"standard"``: scikit-learn's ``StandardScaler``.
        ``"robust-smooth-clip"``: RealMLP-TD's preprocessing
        (:class:`~skpmlp.RobustSmoothClipScaler`: centred on the median,
        scaled by the interquartile range, half the range where that is 0,
        constant features to 0, then smoothly clipped by
        ``z / sqrt(1 + (z / 3) ** 2)``). ``"quantile"``: scikit-learn's
        ``QuantileTransformer(output_distribution="normal")`` (up to 1,000
        quantiles, one a row on fewer rows; those of 10,000 rows drawn with
        ``random_state=0`` on more), each feature mapped through its
        quantiles to a standard normal. ``to_sklearn()`` then returns a
        ``Pipeline`` of the transform and scikit-learn's MLP, ``to_torch()``
        a network whose first module computes the transform.""",
        search_doc="""\
        How every model's inputs are transformed before its first layer:
        ``"none"`` (as given), ``"standard"`` (scikit-learn's
        ``StandardScaler``), ``"quantile"`` (scikit-learn's
        ``QuantileTransformer`` to a normal distribution, the tabular
        deep-learning baselines' preprocessing; up to 1,000 quantiles) or
        ``"robust-smooth-clip"`` (RealMLP-TD's robust scaling and smooth
        clipping, :class:`~skpmlp.RobustSmoothClipScaler`), the searches' default:
        it scored best on the selection benchmark (user guide, "The default
        space, and why"), and it makes every exported model's
        ``to_sklearn()`` a ``Pipeline``; ``"none"`` trains scikit-learn's
        MLP on the columns as given. A list (or a
        distribution) searches it per model: the models of each value train
        as their own fused run, one after another in the same ``fit``, and
        halving ranks models within their value, as within a batch size.
        The transform is fitted on each fold's training rows only (with
        ``cv=None``, the training part; a lone model, on every row), never
        on the rows that score the model, and on all the rows for a refit;
        it goes with every exported model (``input_transform_``), so
        ``best_estimator_`` and ``export_model`` predict on raw ``X`` and a
        fold ensemble's members keep their own folds' transforms.
        ``cv_results_`` has a ``param_input_transform`` column where it is
        searched. With k folds the run holds one transformed copy of ``X``
        per fold. Not with ``refill`` when several values are searched.""",
    ),
    Param(
        "pruning", None, ([None, StrOptions({"halving"})], None), '{None, "halving"}',
        role="search",
        family="search",
        doc="""\
        ``"halving"`` runs successive halving inside the fused run: after
        ``min_iter``, ``min_iter * halving_factor``, ... epochs, only the
        best ``1 / halving_factor`` of the models still training (by
        validation score, mean over folds) go on. A pruned model keeps the
        weights and score it had (its best ones with ``early_stopping``),
        ranks below every survivor, and its epoch count is in
        ``cv_results_["n_iter"]``. Each rung ranks the models of every
        memory chunk and every ``n_jobs`` shard together (they train rung
        by rung), so the survivors never depend on ``max_memory``, the
        free memory or ``n_jobs``; models of different batch sizes are
        ranked within their batch size. With ``ensemble="best"`` or
        ``"folds"`` a rung keeps at least ``ensemble_size`` models, so that
        an ensemble's members all train to the end.""",
    ),
    Param(
        "halving_factor", 3, ([Interval(Real, 1, None, closed="neither")], None), "float",
        role="search",
        family="search",
        doc="""\
        Inverse of the fraction of models kept at each halving.""",
    ),
    Param(
        "min_iter", 5, (_POSITIVE_INT, None), "int", role="search", family="search",
        doc="""\
        Epochs before the first halving.""",
    ),
    Param(
        "refill", None, ([None, StrOptions({"sample", "perturb"})], None),
        '{None, "sample", "perturb"}',
        role="search", family="search",
        doc="""\
        An adaptive search that keeps the fused network full. None leaves
        the slots that ``pruning="halving"`` or ``early_stopping`` free
        empty. ``"sample"`` gives every freed slot (all fold replicas of a
        model together) a new configuration drawn from the search space,
        with fresh weights and optimizer state; its architecture and
        activation must fit the slot's group (the draws that fit no free
        slot are skipped). ``"perturb"`` is population-based training: a
        freed slot copies the weights and optimizer state of a surviving
        model of the same architecture and activation (drawn among the best
        quarter by validation score) and trains on with its searched
        continuous hyperparameters (``learning_rate_init``, ``alpha``,
        ``momentum``, ``beta_1``, ``beta_2``) multiplied by 0.8 or 1.25 (for
        a momentum or beta, its distance to 1), or drawn afresh with
        probability 0.2; where no survivor fits, a draw as ``"sample"``.
        Slots are refilled at the end of the epoch that freed them, while
        at least ``min_iter`` of the ``max_iter`` epochs are left. Every
        model trained is a row of ``cv_results_`` (the first ``n_models``,
        then refills in order; ``parent``, ``start_iter`` columns) and can
        be exported; a row's ``n_iter``, curves and exported ``n_iter_``
        count its own epochs. Needs ``pruning`` or ``early_stopping``, and
        ``n_jobs=None`` (one fused run). A refit retrains a row's final
        hyperparameters from fresh weights (a perturbed row's schedule is
        not replayed; ``refit=False`` and ``export_model`` give the trained
        model itself).""",
    ),
    Param(
        "max_models", None, _OPTIONAL_POSITIVE_INT, "int or None", role="search", family="search",
        doc="""\
        With ``refill``: how many models train in all, the first population
        included (at least its size); None sets no cap beyond ``max_iter``
        and ``max_time``.""",
    ),
    Param(
        "cv", "auto", (["cv_object", StrOptions({"auto"}), None], None),
        'int, cross-validation generator, iterable, "auto" or None',
        role="search", family="search",
        doc="""\
        None holds out ``validation_fraction`` of the rows (of the groups,
        when ``fit`` gets ``groups``). Otherwise, as in GridSearchCV (an int
        K gives StratifiedKFold for single-label classifiers, KFold
        otherwise; group splitters such as GroupKFold get ``fit``'s
        ``groups``); every model is trained once per fold inside the
        same fused run (its fold replicas share its initial weights).
        ``"auto"`` (the default) chooses by the data: 5 folds (GroupKFold
        with ``groups``) for at most 2,000 rows
        (``skpmlp._search._splits.AUTO_CV_MAX_SAMPLES``), where a holdout's choice
        is noise and 5 folds are cheap, else the holdout
        (also for one configuration, for a class with fewer than 5
        members, or fewer than 5 groups); ``cv_`` says which. The user
        guide's "cv='auto'" section has the measurements behind the
        threshold.""",
    ),
    Param(
        "scoring", None,
        ([StrOptions(set(get_scorer_names())), callable, list, tuple, set, dict, None], None),
        "str, callable, list, tuple, set, dict or None", role="search", family="search",
        doc="""\
        The scikit-learn scorer(s) that rank models on the held-out rows;
        None uses the estimator's own score: accuracy for classifiers, R^2
        for regressors. Several scorers, or a callable returning a dict of
        metrics, give multi-metric ``cv_results_`` columns, as
        GridSearchCV.""",
    ),
    Param(
        "refit", True, (["boolean", str, callable], None), "bool, str or callable", role="search",
        family="search",
        doc="""\
        Expose the best model as ``best_estimator_`` and predict with it
        (with multi-metric scoring, the name of the scorer that picks it).
        As GridSearchCV, a callable takes ``cv_results_`` and returns
        ``best_index_``; ``best_score_`` is then not set. With one metric
        any string refits as True does, as GridSearchCV.
        With ``cv`` and ``ensemble="best"`` the best configuration is
        retrained on all the data, as GridSearchCV does; with ``cv=None``,
        see ``holdout_refit``. With ``ensemble="folds"`` or ``"greedy"``
        (the default ``"auto"`` with ``cv``) the refit is the ensemble:
        ``best_estimator_`` is it (see ``ensemble``).
        ``refit=False`` leaves ``best_estimator_`` unset and prediction
        unavailable, as GridSearchCV does.""",
    ),
    Param(
        "holdout_refit", True, (["boolean"], None), "bool", role="search", family="search",
        doc="""\
        With ``cv=None`` and ``refit``: True retrains the chosen
        configuration(s) on all the rows, the validation part included, each
        for as many epochs as it trained in the search (``n_iter_``, or its
        best epoch with ``early_stopping`` or ``restore_best_weights``),
        from the same initial weights and batch order, as GridSearchCV
        refits; ``best_estimator_`` is then that model, with ``max_iter``
        (and ``n_iter_no_change``) set to the epoch count and no early
        stopping, so its ``fit`` retrains exactly it (a schedule over
        ``max_iter`` epochs, ``learning_rate="cosine"`` or ``"coslog4"`` or
        a warm-up, then spans that count). False
        returns the model trained in the search on the training part
        itself (its validation score then describes it). Ignored with
        ``cv``, and for a lone configuration (nothing was chosen; with
        ``early_stopping`` it is then scikit-learn's MLP, validation part
        included). The user guide's "Choosing the model" section has the
        measurements behind the default.""",
    ),
    Param(
        "selection", "auto", ([StrOptions({"auto", "score", "loss"})], None),
        '{"auto", "loss", "score"}',
        role="search", family="search",
        doc="""\
        What picks ``best_index_`` (and orders an ensemble's members):
        "loss" the lowest mean validation loss (log-loss for classifiers,
        squared error for regressors, without the L2 term:
        ``validation_loss_``), "score" the best
        ``rank_test_<scorer>`` (``scoring``, or the scorer ``refit``
        names), as GridSearchCV. "auto" is "loss" with ``scoring=None``
        and "score" when a scorer is given. ``cv_results_`` ranks and
        ``best_score_`` always use ``scoring``. Ties go by row order.""",
    ),
    Param(
        "tie_breaker", "loss", ([StrOptions({"loss"}), None], None), '{"loss"} or None',
        role="search",
        family="search",
        doc="""\
        With ``selection="score"``, how models tied for a rank (the same
        mean validation score, frequent with accuracy on a small
        validation set) are ordered: "loss" prefers the lower mean
        validation loss, None takes the first row, as GridSearchCV.""",
    ),
    Param(
        "ensemble", "auto", ([StrOptions({"auto", "best", "folds", "greedy"})], None),
        '{"auto", "best", "folds", "greedy"}', role="search", family="search",
        doc="""\
        What ``best_estimator_`` (and predict) is, with ``refit``.
        ``"auto"``: ``"greedy"`` when the search has k folds (``cv``, or
        ``cv="auto"`` on small data), ``"best"`` with a holdout (one
        validation split, which a greedy ensemble would overfit; a
        callable ``refit``, which names the model; or ``warm_start``, which
        goes on from one model's weights): of skpmlp's choices, the one
        that scored best on unseen test rows in the selection benchmark,
        and with folds the fastest (no refit). ``"best"`` gives GridSearchCV's
        ``best_estimator_``: one model, the best configuration refitted.
        ``"best"``: the top ``ensemble_size`` models as ``selection`` orders
        them (the best one alone by default), refitted as ``refit`` and
        ``holdout_refit`` say, their probabilities (classifiers) or
        predictions (regressors) averaged. ``"folds"`` (needs k folds:
        ``cv``): the average of the best configuration's k fold models
        (of the top ``ensemble_size`` configurations', each through its
        folds), with no refit. ``"greedy"``: Caruana et al.'s (2004)
        forward selection with replacement over every trained model, on
        their out-of-fold (``cv``) or validation (``cv=None``) predictions:
        each step adds the model that most improves the averaged
        predictions' ``selection`` criterion (the held-out loss, or the
        ``scoring`` scorer with ``selection="score"``), at most
        ``ensemble_size`` steps, stopping when no model improves it; a
        model added n times weighs n (``ensemble_weights_``). With ``cv``
        each member predicts through its k fold models (no refit); with
        ``cv=None`` the members are refitted as ``holdout_refit`` says.
        Models pruned by successive halving, or that failed, are never
        members. ``best_index_``, ``best_params_`` and ``best_score_``
        keep GridSearchCV's meaning (the best single configuration) for
        every kind; ``ensemble_indices_`` and ``ensemble_weights_`` give
        the members.""",
    ),
    Param(
        "ensemble_size", None, (_POSITIVE_INT + [None], None), "int or None", role="search",
        family="search",
        doc="""\
        With ``ensemble="best"`` or ``"folds"``: how many of the top
        models (configurations) the ensemble averages, None meaning 1.
        With ``"greedy"``: the most selection steps (members counted with
        their repeats), None meaning ``GREEDY_STEPS``. With ``pruning``,
        every rung keeps at least ``ensemble_size`` models for ``"best"``
        and ``"folds"``; models pruned by successive halving (partly
        trained) are never members of any kind. Failed models never enter:
        when fewer than ``ensemble_size`` usable models trained to the end,
        the ensemble is smaller, with a warning. The members were selected
        on their validation scores, so the ensemble's score on the same
        validation data is optimistic:
        judge it on data the search never saw.""",
    ),
    Param(
        "error_score", np.nan, ([StrOptions({"raise"}), Real], None), '"raise" or float',
        role="search",
        family="search",
        doc="""\
        Score of a fit (a model on a fold) that diverged or whose scoring
        raised; "raise" raises instead. As GridSearchCV, failed fits warn
        with :class:`~sklearn.exceptions.FitFailedWarning` and, if every
        fit failed, ``fit`` raises ``ValueError``.""",
    ),
    Param(
        "return_train_score", False, (["boolean"], None), "bool", role="search", family="search",
        doc="""\
        Also score every replica on its training rows.""",
    ),
    Param(
        "repeat", 0, ([Interval(Integral, 0, None, closed="left")], None), "int", role="fit",
        family="single",
        doc="""\
        Repeat index; with ``random_state`` it selects the initial weights.""",
    ),
    Param(
        # "auto": X's dtype, as scikit-learn's MLP
        "dtype", "float32", ([StrOptions({"float32", "float64", "auto"})], None),
        '{"float32", "float64", "auto"}',
        doc="""\
        Training precision and the dtype of the trained weights; ``"auto"``
        is X's dtype, as scikit-learn's MLP. Predictions are computed in
        the wider of X's and the weights' dtypes, as scikit-learn's MLP.""",
        search_doc="""\
        Training precision, and the dtype of the trained weights
        (``coefs_``, ``intercepts_``). ``"auto"`` is X's dtype (float32 or
        float64), as scikit-learn's MLP; the default is float32 whatever X's,
        because it trains about twice as fast as float64. Predictions are
        computed in the wider of X's and the weights' dtypes, as
        scikit-learn's MLP: float32 only for float32 X with float32 weights.""",
    ),
    Param(
        "device", "auto", ([str], None), "str",
        doc="""\
        Torch device for training; ``"auto"`` trains on CUDA where a GPU is
        visible and the run is large enough for it to train faster there
        (measured rule: the performance guide's "Which device"), else on
        the CPU; ``verbose`` says which and why.""",
        search_doc="""\
        Torch device; ``"auto"`` trains a run on CUDA where a GPU is visible
        and the run is large enough for it to train faster there (measured
        rule: the performance guide's "Which device"), else on the CPU;
        ``verbose`` says which and why. Resolved where
        each fused run trains: with ``n_jobs``, on the worker running the
        shard, so a client without CUDA can send ``device="cuda"`` shards to
        GPU workers (it then scores the trained models on its CPU). Fitted
        state is kept as numpy arrays, so a fitted estimator loads without
        a GPU.""",
    ),
    Param(
        # 0 means nothing to joblib: refused here, not deep inside Parallel
        "n_jobs", None,
        ([Interval(Integral, None, -1, closed="right"), *_POSITIVE_INT, None], None),
        "int or None", role="search", family="search",
        doc="""\
        None trains the population as one fused network in this process.
        An int splits it into that many shards of about equal cost (-1: as
        many as joblib's backend has workers), each trained as its own
        fused network in a joblib task: the active joblib backend decides
        where (loky processes by default, a Dask cluster under
        ``joblib.parallel_config(backend="dask")``). With ``device="cuda"``
        shards spread over the visible GPUs. Results equal one in-process
        run (``pruning`` included: its rungs rank every shard's models
        together, the shards training rung by rung).""",
    ),
    Param(
        "max_memory", None, _OPTIONAL_SECONDS, "float or None", role="search", family="search",
        doc="""\
        Bytes a fused run may use on its device; None uses 80% of the free
        memory (on the CPU, the least the host's available memory, the
        container's cgroup limit and ``ulimit -v`` leave). A population
        that needs more trains as chunks, one after
        another, with the same results up to floating-point rounding; a
        chunk that still runs out of memory is split and retried with a
        warning. With ``pruning``, the chunks train rung by rung and every
        rung ranks them together, so the results do not depend on the
        memory; on the CPU the waiting chunks' weights and optimizer state
        are set aside from the budget.""",
    ),
    Param(
        "max_time", None, _OPTIONAL_SECONDS, "float or None", role="search", family="search",
        doc="""\
        Seconds, counted from the start of ``fit``, after which training
        ends at the end of an epoch; what was trained is kept and scored (a
        warning says how far it got). One budget for the whole fit, the cv
        refit included: a memory chunk or ``n_jobs`` shard that would start
        after it (e.g. queued on a busy cluster) trains nothing and its
        models score ``error_score``; the fit's first run always trains at
        least one epoch.""",
    ),
    Param(
        "checkpoint", None, ([str, os.PathLike, None], None), "str, path-like or None",
        role="search", family="search",
        doc="""\
        A file that keeps the whole state of the fit as it trains (None:
        none), so that a search killed (out of memory, a preempted node, a
        closed laptop) or interrupted loses at most ``checkpoint_every``
        seconds. It is written every ``checkpoint_every`` seconds at an
        epoch's end, at every halving rung, when training stops early
        (Ctrl-C, ``max_time``) and when a training call ends, atomically
        (a temporary file, fsynced, renamed over the previous one): a kill
        at any moment leaves the previous checkpoint whole. A later ``fit``
        with the same path, parameters and data goes on from it and gives
        the result of an uninterrupted fit, bit for bit; a finished one
        returns its result without training anything again. A fit with
        other parameters or data refuses the file, saying what differs
        (delete it or pass another path to start afresh); ``n_jobs``,
        ``max_memory``, ``max_time``, ``verbose`` and ``checkpoint_every``
        may change. The file holds the folds and validation rows
        themselves, the seed (with a ``random_state`` that is not an int),
        every model's weights and optimizer state, the batch order's
        generators, the stopping counters and schedules, the curves and the
        halving decisions; it is a pickle-free archive as :mod:`skpmlp.io`
        writes. With ``n_jobs`` each shard keeps its own state in a file
        next to it (with a Dask cluster, in a directory the workers share).
        Not with ``warm_start=True`` (which continues the fitted state in
        memory) or a ``torch.distributed`` data-parallel fit. An adaptive
        search (``refill``) is saved too: the models drawn so far, their
        seats and the refill source's random stream included.
        The user guide's "Checkpoints" page has the details.""",
    ),
    Param(
        "checkpoint_every", 60.0, ([Interval(Real, 0, None, closed="neither")], None), "float",
        role="search", family="search",
        doc="""\
        Seconds between two checkpoints (see ``checkpoint``), written at the
        end of the epoch that passes them.""",
    ),
    Param(
        "random_state", None, (["random_state"], None), "int, RandomState instance or None",
        role="fit",
        doc="""\
        Seeds the early-stopping split, the minibatch order and, with
        ``repeat``, the initial weights.""",
        search_doc="""\
        Seeds the validation split, the minibatch order and, with each
        model's own hyperparameters and repeat index, its initial weights.""",
    ),
    Param(
        "verbose", 0, (["verbose"], None), "int", role="search", family="search",
        doc="""\
        1 prints GridSearchCV's "Fitting K folds for each of N
        candidates" and shows a progress bar per fused run (epochs, models
        still training, best validation score so far; needs tqdm, else a
        line every few epochs); 2 also prints a line per epoch and, once
        the models are scored, GridSearchCV's ``[CV] END ...`` line per fit
        (a model on a fold: its parameters and time); 3 adds the fold and
        its scores to those lines (``[CV k/n] END ...; score=...``); 0
        prints nothing. With ``n_jobs``, one bar covers the whole search
        (fit-epochs: a model on a fold for an epoch), fed by the shards
        while they train, from loky processes and Dask workers alike, with
        a line as each shard finishes.""",
    ),
)


def _names(role):
    return tuple(row.name for row in _ROWS if row.role == role)


#: What a model is: always ``cv_results_`` columns, searched or not.
MODEL_PARAMS = _names("model")

#: How a model's optimizer steps (an :class:`OptimizerSettings` each), then
#: on how many rows: each may vary per model; ``cv_results_`` shows them only
#: where searched.
OPTIMIZER_PARAMS = _names("optimizer") + _names("batch")


def _single_defaults(names):
    """``{name: the single models' default}`` (scikit-learn's values), in
    the order of ``names``."""
    rows = {row.name: row for row in _ROWS}
    return {name: rows[name].default_in("single") for name in names}


#: scikit-learn's values (the single models' defaults): what a configuration
#: that leaves an optimizer parameter out trains with.
OPTIMIZER_DEFAULTS = _single_defaults(OPTIMIZER_PARAMS)

#: How a model's inputs are transformed: each may vary per model (the
#: search trains the models of each value apart); ``cv_results_`` shows them
#: only where searched.
INPUT_PARAMS = _names("input")

#: The hyperparameters a population varies, in ``cv_results_`` column order.
SEARCHED_PARAMS = MODEL_PARAMS + OPTIMIZER_PARAMS + INPUT_PARAMS

#: The value of every searched parameter but the model ones where a
#: configuration leaves it out.
SEARCHED_DEFAULTS = _single_defaults(OPTIMIZER_PARAMS + INPUT_PARAMS)


def sklearn_mlp_params(estimator=None):
    """The search parameters that make every model scikit-learn's MLP.

    The searches' defaults of ``input_transform``, ``dropout`` and
    ``beta_2`` (and the regressors' ``target_transform``) are the space
    measured best on the selection benchmark (robust scaling with smooth
    clipping, dropout 0.15, Adam's beta_2 0.95, targets standardised while
    the models train), not scikit-learn's. This is each of them at
    scikit-learn's value (the single models' default), so that
    ``ParallelMLPClassifier(**grid, **sklearn_mlp_params())`` trains what
    ``GridSearchCV(MLPClassifier(), grid)`` trains, and
    ``ParallelMLPRegressor(**grid, **sklearn_mlp_params("regressor"))``
    what ``GridSearchCV(MLPRegressor(), grid)`` trains.

    Parameters
    ----------
    estimator : {"classifier", "regressor"}, skpmlp estimator class or instance, \
default=None
        Whose parameters: a regressor's also hold ``target_transform``.
        None: the parameters both searches have (a classifier's).

    Returns
    -------
    dict
        A new dict on every call: ``{"beta_2": 0.999, "dropout": 0.0,
        "input_transform": "none"}``, with ``"target_transform": "none"``
        for a regressor.

    Raises
    ------
    ValueError
        For an ``estimator`` that is neither a classifier nor a regressor.

    Examples
    --------
    >>> from skpmlp import sklearn_mlp_params
    >>> sorted(sklearn_mlp_params().items())
    [('beta_2', 0.999), ('dropout', 0.0), ('input_transform', 'none')]
    >>> sklearn_mlp_params("regressor")["target_transform"]
    'none'
    """
    task = "both" if estimator is None else param_task(estimator)
    return {
        row.name: row.default_in("single") for row in _ROWS
        if row.family == "both" and row.task in ("both", task)
        and row.role in ("optimizer", "input", "training")
        and row.default != row.default_in("single")
    }


def param_task(estimator):
    """The table's task (a :class:`Param`'s ``task``) of ``estimator``:
    ``"classifier"`` or ``"regressor"``, given as that string or as one of
    skpmlp's estimators (class or instance), which say their task.

    Raises
    ------
    ValueError
        For anything else.
    """
    if isinstance(estimator, str) and estimator in ("classifier", "regressor"):
        return estimator
    task = {"classification": "classifier", "regression": "regressor"}.get(
        getattr(estimator, "_task", None))
    if task is None:
        raise ValueError(
            f"sklearn_mlp_params takes 'classifier', 'regressor' or one of skpmlp's "
            f"estimators (class or instance); got {estimator!r}."
        )
    return task


def _param_grid_doc():
    """``param_grid``'s description: it lists every searchable parameter."""
    task = {row.name: row.task for row in _ROWS}
    names = ", ".join(
        f"``{name}``" + (f" ({task[name]}s only)" if task[name] != "both" else "")
        for name in SEARCHED_PARAMS
    )
    return f"""\
        Conditional search spaces, as ``GridSearchCV(param_grid=...)``
        takes them: each dict maps searched parameters ({names}) to a
        list (a single value must be wrapped in one, as in GridSearchCV)
        or a distribution, and the parameters it leaves out keep this
        estimator's values. The population is the union of the dicts'
        grids, or with ``n_models`` draws from them (each draw picks a dict
        at random, as ParameterSampler). E.g.
        ``param_grid=[{{"activation": ["relu"], "alpha": [1e-4, 1e-2]}},
        {{"activation": ["tanh"], "hidden_layer_sizes": [(32, 32)]}}]``.
        As GridSearchCV, ``cv_results_["param_<name>"]`` is masked where a
        model's dict leaves out a parameter another dict sets (and this
        estimator gives it one value, which the model trains with);
        ``cv_results_["params"]`` holds every value, so it rebuilds the
        model. A value listed twice is two (identical) candidates.

        Models that differ in their optimizer settings train in one fused
        run, and each exported model carries its own. ``cv_results_`` has
        the ``param_*`` columns and ``params`` entries of those settings
        only where they are searched (several candidates, a distribution,
        or named in ``param_grid``)."""


#: Every parameter, by name, in signature order.
PARAMS = {row.name: row for row in _ROWS}
PARAMS["param_grid"] = replace(PARAMS["param_grid"], doc=_param_grid_doc())

#: The estimators: a family ("search" or "single") and a task.
FAMILIES, TASKS = ("search", "single"), ("classifier", "regressor")


def estimator_params(family, task):
    """The rows of the parameters of the ``family`` estimators of ``task``
    ("classifier" or "regressor"), in signature order."""
    assert family in FAMILIES and task in TASKS
    return [
        row for row in PARAMS.values()
        if row.family in ("both", family) and row.task in ("both", task)
    ]


def parameter_constraints(family, task):
    """The ``_parameter_constraints`` of those estimators."""
    return {row.name: row.constraint_in(family) for row in estimator_params(family, task)}


def parameter_entries(family, task):
    """The numpydoc entries ``(header, description)`` of their Parameters section."""
    return [row.entry(family) for row in estimator_params(family, task)]


def training_params(task):
    """The parameters an exported model takes from the search it came from
    (besides its own hyperparameters): how every model trains."""
    return tuple(row.name for row in estimator_params("single", task) if row.role == "training")


def signature_mismatches(estimator_class, family, task):
    """How ``estimator_class.__init__``'s signature differs from the table:
    a list of messages naming each parameter (empty when it follows it).

    The first two parameters are positional-or-keyword, the others
    keyword-only, as scikit-learn's MLP."""
    import inspect

    params = list(inspect.signature(estimator_class.__init__).parameters.values())[1:]
    rows = estimator_params(family, task)
    name = f"{estimator_class.__name__}.__init__"
    have, want = [p.name for p in params], [row.name for row in rows]
    messages = [f"{name} lacks the table's parameter {n!r}" for n in want if n not in have]
    messages += [
        f"{name} has {n!r}, which the parameter table does not give it"
        for n in have if n not in want
    ]
    if not messages and have != want:
        messages.append(f"{name}'s parameters are not in the table's order: {have} != {want}")
    for position, param in enumerate(params):
        if param.name not in PARAMS or param.name not in want:
            continue
        default = PARAMS[param.name].default_in(family)
        if _literal(param.default) != _literal(default):
            messages.append(f"{name}: {param.name}={param.default!r}, the table says {default!r}")
        kind = param.POSITIONAL_OR_KEYWORD if position < 2 else param.KEYWORD_ONLY
        if param.kind != kind:
            messages.append(f"{name}: {param.name} should be {kind.description}")
    return messages


def store_params(estimator, arguments):
    """Store an ``__init__``'s ``arguments`` (its ``locals()``) as the
    estimator's attributes of the same names, as scikit-learn's estimators
    store their parameters: one line per ``__init__``, whatever its
    signature."""
    ignored = ("self", "__class__")
    vars(estimator).update({name: v for name, v in arguments.items() if name not in ignored})
