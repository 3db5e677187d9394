"""What the displays share: reading a ``cv_results_`` table, labels and axes.

Cells of scores over searched parameters (reduced over the others and over
the repeats), the labels of scores, parameters and models, per-epoch
curves, and matplotlib, imported lazily: skpmlp itself never needs it.
"""

import re
import warnings
from numbers import Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

#: Name of the derived parameter "total hidden width" (sum of hidden_layer_sizes).
WIDTH = "width"
_AGGREGATES = ("max", "mean")
_BANDS = ("minmax", "std")


def _check_matplotlib(caller):
    """Import pyplot lazily, so skpmlp itself never needs matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            f"{caller} requires matplotlib, an optional dependency of skpmlp; install it "
            f'with `pip install "skpmlp[plot]"` (or `pip install matplotlib`).'
        ) from exc
    return plt


def _check_option(value, name, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")


# ----------------------------------------------------------- reading cv_results_
def _metric_names(cv_results):
    return sorted(key[len("mean_test_"):] for key in cv_results if key.startswith("mean_test_"))


def _mean_scores(cv_results, metric):
    """``mean_test_<metric>`` as floats, or a ValueError naming the metrics there are."""
    key = f"mean_test_{metric}"
    if key not in cv_results:
        raise ValueError(
            f"metric={metric!r} has no {key!r} column in cv_results_; available metrics: "
            f"{_metric_names(cv_results)} (with a single scorer the metric is 'score')."
        )
    return np.asarray(cv_results[key], dtype=float)


def _n_splits(cv_results, metric):
    pattern = re.compile(rf"split\d+_test_{re.escape(metric)}")
    return sum(1 for key in cv_results if pattern.fullmatch(key))


def _param_names(cv_results):
    names = list(dict.fromkeys(name for params in cv_results["params"] for name in params))
    if "hidden_layer_sizes" in names:
        names.append(WIDTH)
    return names


def _hashable(value):
    # GridSearchCV grids may hold architectures as lists; rows are grouped by value
    return tuple(value) if isinstance(value, list) else value


def _total_width(architecture):
    return None if architecture is None else int(np.sum(architecture))


def _param_values(cv_results, name):
    """One value per row of ``cv_results`` for a parameter, or for ``"width"``."""
    names = _param_names(cv_results)
    if name not in names:
        raise ValueError(f"{name!r} is not a searched parameter; choose one of {names}.")
    if name == WIDTH:
        return [_total_width(p.get("hidden_layer_sizes")) for p in cv_results["params"]]
    return [_hashable(p.get(name)) for p in cv_results["params"]]


def _repeats(cv_results):
    if "param_repeat" not in cv_results:  # e.g. a GridSearchCV table: one repeat
        return np.zeros(len(cv_results["params"]), dtype=int)
    return np.asarray(np.ma.getdata(cv_results["param_repeat"]), dtype=int)


def _is_numeric(levels):
    return all(isinstance(v, Real) and not isinstance(v, bool) for v in levels)


def _levels(values):
    """Distinct values: sorted when numeric, else in order of first appearance
    (the order the search space was given in)."""
    distinct = list(dict.fromkeys(values))
    return sorted(distinct) if _is_numeric(distinct) else distinct


def _format_level(value):
    return f"{value:g}" if _is_numeric([value]) else str(value)


def _config_keys(cv_results, excluded):
    """A hashable key per row: its parameters except ``excluded`` (and the repeat)."""
    return [
        tuple((k, _hashable(v)) for k, v in sorted(p.items()) if k not in excluded)
        for p in cv_results["params"]
    ]


def _per_repeat(scores, configs, repeats, aggregate):
    """Reduce the rows of one cell to one score per repeat.

    ``"max"`` keeps the configuration whose mean over repeats is best (the one
    a search would pick) and returns its score per repeat; ``"mean"`` averages
    the configurations of each repeat.
    """
    config_row = {config: i for i, config in enumerate(dict.fromkeys(configs))}
    repeat_column = {repeat: j for j, repeat in enumerate(sorted(set(repeats)))}
    table = np.full((len(config_row), len(repeat_column)), np.nan)
    for score, config, repeat in zip(scores, configs, repeats):
        table[config_row[config], repeat_column[repeat]] = score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells stay NaN
        if aggregate == "mean":
            return np.nanmean(table, axis=0)
        means = np.nanmean(table, axis=1)
    return table[0] if np.isnan(means).all() else table[np.nanargmax(means)]


def _cells(cv_results, metric, keys, aggregate):
    """``{cell: per-repeat scores}`` where a cell is a tuple of the values of ``keys``."""
    _check_option(aggregate, "aggregate", _AGGREGATES)
    scores = _mean_scores(cv_results, metric)
    columns = [_param_values(cv_results, key) for key in keys]
    # "width" is no key of params: architectures of one total width stay apart
    # in the configurations, and are aggregated as the other parameters
    configs = _config_keys(cv_results, set(keys))
    repeats = _repeats(cv_results)
    rows = {}
    for i, cell in enumerate(zip(*columns)):
        rows.setdefault(cell, []).append(i)
    return {
        cell: _per_repeat(scores[idx], [configs[i] for i in idx], repeats[idx], aggregate)
        for cell, idx in rows.items()
    }, [_levels(column) for column in columns]


def _nan_reduce(function, values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(values)


def _score_name(cv_results, metric, estimator=None):
    """Axis label of ``mean_test_<metric>``: e.g. "validation accuracy",
    "mean 3-fold CV R²"."""
    name = metric
    if metric == "score" and estimator is not None:
        scoring = getattr(estimator, "scoring", None)
        if isinstance(scoring, str):
            name = scoring
        elif scoring is None:
            name = "accuracy" if is_classifier(estimator) else "R²"
    n_splits = _n_splits(cv_results, metric)
    return f"validation {name}" if n_splits <= 1 else f"mean {n_splits}-fold CV {name}"


def _axis_label(name):
    return "total hidden width (sum of hidden_layer_sizes)" if name == WIDTH else name


def _fitted_results(estimator):
    check_is_fitted(estimator)
    if not hasattr(estimator, "cv_results_"):
        raise ValueError(f"{type(estimator).__name__} has no cv_results_ to plot.")
    return estimator.cv_results_


def _get_axes(plt, ax, **subplots):
    if ax is None:
        _, ax = plt.subplots(layout="constrained", **subplots)
    return ax


def _monitored_name(estimator):
    """Label of ``validation_scores_per_model_``: what the estimator's ``monitor`` watched."""
    if getattr(estimator, "monitor", "score") == "loss":
        # validation_scores_per_model_ holds -loss then, so that higher is better
        return "validation loss (negated)"
    return f"validation {'accuracy' if is_classifier(estimator) else 'R²'}"


def _fold_mean(curves):
    """(n, n_epochs) curves; with cv, (n, n_splits, n_epochs) averaged over the
    fold replicas still training at each epoch."""
    if curves.ndim == 2:
        return curves
    return _nan_reduce(lambda c: np.nanmean(c, axis=1), curves)


def _last_epoch(*curve_sets):
    """Epochs up to the last one any shown model trained (curves are NaN-padded
    to the longest model of the whole search)."""
    trained = np.zeros(curve_sets[0].shape[1], dtype=bool)
    for curves in curve_sets:
        if curves is not None:
            trained |= np.isfinite(curves).any(axis=0)
    return int(np.flatnonzero(trained)[-1] + 1) if trained.any() else curve_sets[0].shape[1]


def _varied(cv_results):
    """Names of the parameters that take several values in the search."""
    names = [n for n in _param_names(cv_results) if n != WIDTH]
    return {n for n in names if len(set(_param_values(cv_results, n))) > 1}


def _model_label(cv_results, index, metric):
    """``"1: (64,) relu lr=0.01"``: its rank and the parameters the search varied
    (with the repeat when there are several)."""
    params = cv_results["params"][index]
    varied = _varied(cv_results) or set(params)
    parts = []
    for name, value in params.items():
        if name not in varied:
            continue
        if name in ("hidden_layer_sizes", "activation"):  # self-explanatory values
            parts.append(str(value))
        else:
            short = {"learning_rate_init": "lr"}.get(name, name)
            parts.append(f"{short}={_format_level(value)}")
    repeats = _repeats(cv_results)
    if len(set(repeats)) > 1:
        parts.append(f"repeat {repeats[index]}")
    return f"{cv_results[f'rank_test_{metric}'][index]}: {' '.join(parts)}"


def _panel_axes(plt, ax, panels):
    """``panels`` Axes side by side: ``ax`` (one Axes, or an array-like of
    them) checked, or a new figure's.

    Raises
    ------
    ValueError
        If ``ax`` does not hold ``panels`` Axes.
    """
    if ax is None:
        _, ax = plt.subplots(1, panels, figsize=(5.2 * panels, 4.2), layout="constrained")
    axes = np.atleast_1d(np.asarray(ax, dtype=object)).ravel()
    if len(axes) != panels:
        raise ValueError(
            f"ax must hold {panels} Axes (the loss panel"
            f"{' and the validation-score panel' if panels == 2 else ''}); got {len(axes)}. "
            f"Pass e.g. plt.subplots(1, {panels})[1], or ax=None."
        )
    return axes
