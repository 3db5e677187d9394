"""Progress for ``verbose``: a search's tqdm bar per fused run (at
``verbose >= 2`` also a line per epoch) and, after the run, GridSearchCV's
line per fit; or a lone model's lines in scikit-learn MLP's words."""

from dataclasses import dataclass

import numpy as np
from joblib.logger import short_format_time

from .._core._values import one_value
from .._kernels import SOLVERS


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class SearchProgress:
    """The engine's ``epoch_callback`` that reports a search's progress.

    Parameters
    ----------
    verbose : int
        1: a progress bar per fused run (epochs, models still training,
        best validation score so far); 2: also a line per epoch. Without
        tqdm, a line every 10 epochs stands in for the bar.
    max_iter : int
        Epochs of a full run (the bar's length).
    name : str, default="fused run"
        What a run is called in the bar and the lines ("refit run" for the
        cv refit).
    """

    def __init__(self, verbose, max_iter, name="fused run"):
        self.verbose, self.max_iter, self.name = verbose, max_iter, name
        self._tqdm = _tqdm()
        self.bar, self.run, self.best = None, 0, -np.inf

    def __call__(self, epoch, info):
        if epoch == 0:  # a new fused run (memory chunks run one after another)
            self.close()
            self.run += 1
            if self._tqdm is not None:
                self.bar = self._tqdm(total=self.max_iter, desc=f"{self.name} {self.run}",
                                      unit="epoch")
            if info.get("backend"):  # which path trains: say it once per run
                (self.bar.write if self.bar is not None else print)(
                    f"{self.name} {self.run} trains on the {info['backend']}")
        active = info["active"]
        scores = info["val_score"]
        if scores is not None and np.isfinite(scores[active]).any():
            self.best = max(self.best, float(np.nanmax(scores[active])))
        status = {"models": int(active.sum())}
        if np.isfinite(self.best):
            status["best_val"] = f"{self.best:.4f}"
        if info.get("gflops"):
            status["GFLOP/s"] = f"{info['gflops']:.1f}"
        if self.bar is not None:
            self.bar.set_postfix(status, refresh=False)
            self.bar.update(1)
        loss = np.nanmean(info["loss"][active]) if active.any() else np.nan
        line = (f"{self.name} {self.run} epoch {epoch + 1}: {status['models']} models training, "
                f"mean loss {loss:.5f}")
        if "best_val" in status:
            line += f", best validation score {status['best_val']}"
        if "GFLOP/s" in status:
            line += f", {status['GFLOP/s']} GFLOP/s"
        if self.verbose >= 2 or (self.bar is None and (epoch + 1) % 10 == 0):
            (self.bar.write if self.bar is not None else print)(line)

    def close(self):
        """Close the current bar, if any."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def announce_fits(n_splits, n_candidates, verbose):
    """GridSearchCV's first line at ``verbose > 0``: how many fits (a fit is
    one model on one fold) the fused run trains."""
    if verbose > 0:
        print(
            f"Fitting {n_splits} folds for each of {n_candidates} candidates, totalling "
            f"{n_splits * n_candidates} fits"
        )


def report_fits(cv_results, *, fit_time, score_time, verbose, multimetric, return_train_score):
    """GridSearchCV's ``[CV k/n] END ...`` line per fit at ``verbose > 1``.

    GridSearchCV prints each as its fit ends; a fused run trains them all at
    once, so they are printed after it, from ``cv_results``, in
    GridSearchCV's order (model after model, each fold in turn): the
    model's parameters, with ``verbose > 2`` the fold's number and scores
    (and train scores with ``return_train_score``), and its time.

    Parameters
    ----------
    cv_results : dict
        The search's ``cv_results_``.
    fit_time, score_time : ndarray of shape (n_models, n_splits)
        Seconds of each fit's training (its share of the fused run) and scoring.
    verbose : int
    multimetric : bool
        Name each metric (``cv_results_`` columns ``*_test_<name>``).
    return_train_score : bool
    """
    if verbose <= 1:
        return
    n_models, n_splits = fit_time.shape
    suffixes = sorted(k[len("mean_test_"):] for k in cv_results if k.startswith("mean_test_"))
    repeats = np.asarray(cv_results["param_repeat"])
    for i, params in enumerate(cv_results["params"]):
        shown = {**params, "repeat": int(repeats[i])} if repeats.any() else params
        params_msg = ", ".join(f"{key}={shown[key]}" for key in sorted(shown))
        for k in range(n_splits):
            progress = ""
            if verbose > 2:
                progress = f" {k + 1}/{n_splits}"
                progress += f"; {i + 1}/{n_models}" if verbose > 9 else ""
            result = params_msg + (";" if params_msg else "")
            if verbose > 2:
                scores = {
                    name: (cv_results.get(f"split{k}_train_{name}", [None] * n_models)[i],
                           cv_results[f"split{k}_test_{name}"][i])
                    for name in suffixes
                }
                if multimetric:
                    for name, (train, test) in scores.items():
                        train_msg = f"train={train:.3f}, " if return_train_score else ""
                        result += f" {name}: ({train_msg}test={test:.3f})"
                else:
                    train, test = scores["score"]
                    if return_train_score:
                        result += f", score=(train={train:.3f}, test={test:.3f})"
                    else:
                        result += f", score={test:.3f}"
            result += f" total time={short_format_time(fit_time[i, k] + score_time[i, k])}"
            line = f"[CV{progress}] END "
            print(line + "." * (80 - len(line) - len(result)) + result)


class MLPProgress:
    """The engine's ``epoch_callback`` for a lone model (one configuration,
    ``cv=None``): scikit-learn MLP's ``verbose`` lines.

    Each epoch prints ``Iteration N, loss = ...`` and, with early stopping,
    ``Validation score: ...``; the epoch the stopping rule ends training
    (or an adaptive learning rate drops) prints scikit-learn's reason.

    Parameters
    ----------
    tol : float
    n_iter_no_change : int or float
    early_stopping : bool
        Whether the rule watched the validation score (else the training loss).
    adaptive : bool
        Whether the model's SGD learning rate is ``"adaptive"``.
    """

    def __init__(self, tol, n_iter_no_change, early_stopping, adaptive):
        self.early_stopping, self.adaptive = early_stopping, adaptive
        watched = "Validation score" if early_stopping else "Training loss"
        # scikit-learn's format, %d included (an inf patience never stops)
        self.reason = (f"{watched} did not improve more than tol={tol:f} for "
                       f"{n_iter_no_change:.0f} consecutive epochs.")
        self.rate = None

    def __call__(self, epoch, info):
        print(f"Iteration {epoch + 1}, loss = {info['loss'][0]:.8f}")
        if self.early_stopping and info["val_score"] is not None:
            print(f"Validation score: {info['val_score'][0]:f}")
        rate = info.get("learning_rate")
        if info.get("converged", [False])[0]:
            print(f"{self.reason}{' Learning rate too small.' if self.adaptive else ''} Stopping.")
        elif self.adaptive and rate is not None and self.rate is not None and rate[0] < self.rate:
            print(f"{self.reason} Setting learning rate to {rate[0]:f}")
        self.rate = None if rate is None else rate[0]

    def close(self):
        """Nothing to close: lines only."""


@dataclass(frozen=True)
class ProgressSettings:
    """What a fit reports while it trains, from the estimator's parameters:
    scikit-learn MLP's lines for a lone minibatch model (the fit is one
    model, see :meth:`~skpmlp._search._splits.SplitSettings.is_lone`), else a search's
    progress (:class:`SearchProgress`). A lone L-BFGS model keeps the run's
    lines (scikit-learn prints scipy's own L-BFGS-B report there).

    Parameters
    ----------
    verbose : int
    max_iter : int
    mlp_lines : bool
        Print scikit-learn MLP's lines (a lone minibatch model).
    tol, n_iter_no_change, early_stopping, adaptive :
        What those lines say (see :class:`MLPProgress`).
    """

    verbose: int
    max_iter: int
    mlp_lines: bool = False
    tol: float = 1e-4
    n_iter_no_change: float = 10
    early_stopping: bool = False
    adaptive: bool = False

    @classmethod
    def of(cls, estimator, lone):
        """The settings of ``estimator``'s fit (``lone``: it is one model)."""
        solver = SOLVERS.get(one_value(estimator.solver))  # None: searched
        return cls(
            verbose=estimator.verbose, max_iter=estimator.max_iter,
            mlp_lines=lone and solver is not None and solver.family == "minibatch",
            tol=estimator.tol, n_iter_no_change=estimator.n_iter_no_change,
            early_stopping=bool(estimator.early_stopping),
            adaptive=(solver is not None and solver.velocity
                      and one_value(estimator.learning_rate) == "adaptive"),
        )

    def callback(self, name):
        """The engine's ``epoch_callback`` reporting a run called ``name``
        ("fused run", "refit run"), or None when quiet."""
        if not self.verbose:
            return None
        if self.mlp_lines:
            return MLPProgress(self.tol, self.n_iter_no_change, self.early_stopping,
                               adaptive=self.adaptive)
        return SearchProgress(self.verbose, self.max_iter, name=name)
