"""Progress of a search for ``verbose``: a tqdm bar per fused run, at
``verbose >= 2`` a line per epoch and, after the run, GridSearchCV's line
per fit."""

import numpy as np
from joblib.logger import short_format_time


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
                self.bar = self._tqdm(total=self.max_iter, desc=f"{self.name} {self.run}", unit="epoch")
        active = info["active"]
        scores = info["val_score"]
        if scores is not None and np.isfinite(scores[active]).any():
            self.best = max(self.best, float(np.nanmax(scores[active])))
        status = {"models": int(active.sum())}
        if np.isfinite(self.best):
            status["best_val"] = f"{self.best:.4f}"
        if self.bar is not None:
            self.bar.set_postfix(status, refresh=False)
            self.bar.update(1)
        line = (f"{self.name} {self.run} epoch {epoch + 1}: {status['models']} models training, mean loss "
                f"{np.nanmean(info['loss'][active]) if active.any() else np.nan:.5f}")
        if "best_val" in status:
            line += f", best validation score {status['best_val']}"
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
                progress = f" {k + 1}/{n_splits}" + (f"; {i + 1}/{n_models}" if verbose > 9 else "")
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
                    result += ", score=" + (
                        f"(train={train:.3f}, test={test:.3f})" if return_train_score else f"{test:.3f}"
                    )
            result += f" total time={short_format_time(fit_time[i, k] + score_time[i, k])}"
            line = f"[CV{progress}] END "
            print(line + "." * (80 - len(line) - len(result)) + result)
