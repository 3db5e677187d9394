"""Progress of a search for ``verbose``: a tqdm bar per fused run and, at
``verbose >= 2``, a line per epoch."""

import numpy as np


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
