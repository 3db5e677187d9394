"""One progress bar for a search trained as shards, fed by the shards while they train.

With ``n_jobs``, every shard trains in a joblib task: a loky process, a
thread, or a Dask worker on another machine. Each shard's run reports its
epochs to a :class:`ShardReporter` (its ``epoch_callback``), which sends the
shard's progress home, at most every :data:`SEND_INTERVAL` seconds:

* from a Dask worker, as a Dask event (``Worker.log_event``) that the
  client receives through ``Client.subscribe_topic``: this reaches the
  client from any machine of the cluster;
* from any other worker (loky, multiprocessing, threads), as a small JSON
  file in a temporary directory of this machine, replaced atomically and
  read by a thread of the fitting process every :data:`POLL_INTERVAL`.

Each message holds the shard's totals so far (never increments), so a lost
or late message costs nothing but freshness. The fitting process also
takes the shards' results as they finish (joblib's
``return_as="generator_unordered"``), so the bar always advances as shards
finish, even where no message can reach it (a Dask worker on a machine
that cannot send events, a backend without generators).

The unit of the bar is the fit-epoch: one model on one fold for one epoch.
Its total is ``n_models * n_folds * max_iter``; a model that stops early
(early stopping, convergence, halving) counts its remaining epochs as done
when it stops.
"""

import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid

import numpy as np

from . import _progress

#: Seconds between two messages of one shard.
SEND_INTERVAL = 0.25
#: Seconds between two reads of the shards' files.
POLL_INTERVAL = 0.1
#: Seconds between two lines when tqdm is not installed.
LINE_INTERVAL = 5.0


class ShardReporter:
    """A shard's ``epoch_callback``: counts its fit-epochs and sends them home.

    Parameters
    ----------
    channel : str
        Where to send: a directory of the fitting machine (used by workers
        that are not Dask workers) or, from a Dask worker, the Dask event
        topic of the same name.
    shard : int
    max_iter : int
        Epochs of a full run (a stopped model counts as ``max_iter`` done).
    """

    def __init__(self, channel, shard, max_iter):
        self.channel, self.shard, self.max_iter = channel, shard, max_iter
        self._committed = 0
        self._run, self._epoch = None, None
        self._last_sent = -np.inf
        self._broken = False
        self._best = -np.inf

    def __call__(self, epoch, info):
        active = np.asarray(info["active"], dtype=bool)
        if self._epoch is not None and epoch <= self._epoch:
            # a new fused run of this shard (memory chunks, solver groups):
            # the previous one is finished
            self._committed += self._run * self.max_iter
            self._run = None
        if self._run is None:
            self._run = active.size
        self._epoch = epoch
        done = min(epoch + 1, self.max_iter)
        count = self._committed + int(active.sum()) * done + int((~active).sum()) * self.max_iter
        scores = info.get("val_score")
        if scores is not None and active.any():
            finite = np.asarray(scores)[active]
            finite = finite[np.isfinite(finite)]
            if finite.size:
                self._best = max(self._best, float(finite.max()))
        now = time.monotonic()
        if now - self._last_sent >= SEND_INTERVAL:
            self._last_sent = now
            self._send({
                "shard": int(self.shard), "done": int(count), "active": int(active.sum()),
                "best": None if not np.isfinite(self._best) else self._best,
            })

    def _send(self, message):
        if self._broken:
            return
        try:
            worker = _dask_worker()
            if worker is not None:
                worker.log_event(_topic(self.channel), message)
                return
            path = os.path.join(self.channel, f"shard-{self.shard}.json")
            temporary = f"{path}.{os.getpid()}.tmp"
            with open(temporary, "w") as file:
                json.dump(message, file)
            os.replace(temporary, path)
        except Exception:  # noqa: BLE001 - progress never fails a fit
            # e.g. a worker on another machine, where the directory is not:
            # the bar then advances as this shard finishes
            self._broken = True


def _dask_worker():
    """The Dask worker running this task, or None (``distributed`` is only
    looked at where it is already imported: in a Dask worker it is)."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return distributed.get_worker()
    except (ValueError, AttributeError):
        return None


def _topic(channel):
    return f"skpmlp-progress-{os.path.basename(channel)}"


class ShardedProgress:
    """The bar of a sharded search, in the fitting process.

    Parameters
    ----------
    sizes : list of int
        Fit-epochs of every shard (``n_models * n_folds * max_iter``).
    max_iter : int
    verbose : int
    name : str, default="fused run"
        What the bar and the lines call the search's runs.

    Attributes
    ----------
    channel : str
        The directory (and Dask topic) the shards' reporters send to.
    """

    def __init__(self, sizes, max_iter, verbose, name="fused run"):
        self.sizes, self.max_iter, self.verbose, self.name = list(sizes), max_iter, verbose, name
        self.channel = tempfile.mkdtemp(prefix=f"skpmlp-progress-{uuid.uuid4().hex[:8]}-")
        self._lock = threading.Lock()
        self._done = [0] * len(self.sizes)
        self._active = [None] * len(self.sizes)
        self._finished = [False] * len(self.sizes)
        self._best = -np.inf
        self._last_line = time.monotonic()
        tqdm = _progress._tqdm()
        self.bar = None
        if tqdm is not None:
            shards = f"{len(self.sizes)} shard{'s' * (len(self.sizes) > 1)}"
            self.bar = tqdm(total=sum(self.sizes), desc=f"{name} ({shards})", unit="fit-epoch")
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="skpmlp-progress", daemon=True)
        self._poller.start()
        self._client = _dask_client()
        if self._client is not None:
            try:
                self._client.subscribe_topic(_topic(self.channel), self._on_event)
            except Exception:  # noqa: BLE001 - no live progress from Dask then
                self._client = None

    def reporter(self, shard):
        """The :class:`ShardReporter` of shard ``shard``."""
        return ShardReporter(self.channel, shard, self.max_iter)

    def _on_event(self, event):
        _, message = event
        self.update(message)

    def _poll(self):
        while not self._stop.wait(POLL_INTERVAL):
            self.read_files()

    def read_files(self):
        """Take in every shard's latest file."""
        try:
            names = os.listdir(self.channel)
        except OSError:
            return
        for name in names:
            if not (name.startswith("shard-") and name.endswith(".json")):
                continue
            try:
                with open(os.path.join(self.channel, name)) as file:
                    message = json.load(file)
            except (OSError, ValueError):
                continue  # being replaced: the next poll reads it
            self.update(message)

    def update(self, message):
        """Take in a shard's progress message (totals so far)."""
        try:
            shard = int(message["shard"])
            done, active, best = int(message["done"]), int(message["active"]), message["best"]
        except (KeyError, TypeError, ValueError):
            return
        with self._lock:
            if not 0 <= shard < len(self.sizes) or self._finished[shard]:
                return
            before = (self._done[shard], self._active[shard], self._best)
            self._done[shard] = max(self._done[shard], min(done, self.sizes[shard]))
            self._active[shard] = active
            if best is not None:
                self._best = max(self._best, float(best))
            if (self._done[shard], self._active[shard], self._best) != before:
                self._refresh()

    def finish(self, shard, info):
        """Shard ``shard`` returned: all its fit-epochs are done.

        Parameters
        ----------
        shard : int
        info : dict
            Its ``shards_`` entry (models, seconds, host).
        """
        with self._lock:
            self._finished[shard] = True
            self._done[shard] = self.sizes[shard]
            self._active[shard] = 0
            self._refresh()
            where = f" on {info['host']}" if info.get("host") else ""
            line = (f"{self.name}: shard {shard + 1} of {len(self.sizes)} done ({info['models']} "
                    f"models in {info['seconds']:.1f} s{where}); {sum(self._finished)} of "
                    f"{len(self.sizes)} shards done")
            self._write(line)

    def _status(self):
        status = {"shards": f"{sum(self._finished)}/{len(self.sizes)}"}
        training = [a for a in self._active if a is not None]
        if training:
            status["models"] = sum(training)
        if np.isfinite(self._best):
            status["best_val"] = f"{self._best:.4f}"
        return status

    def _refresh(self):
        done = sum(self._done)
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            self.bar.set_postfix(self._status(), refresh=True)
        elif time.monotonic() - self._last_line >= LINE_INTERVAL:
            self._last_line = time.monotonic()
            status = ", ".join(f"{k} {v}" for k, v in self._status().items())
            print(f"{self.name}: {done} of {sum(self.sizes)} fit-epochs done ({status})")

    def _write(self, line):
        (self.bar.write if self.bar is not None else print)(line)

    @property
    def done(self):
        """Fit-epochs done so far (int)."""
        with self._lock:
            return sum(self._done)

    def close(self):
        """Stop listening, close the bar, remove the directory."""
        self._stop.set()
        self._poller.join()
        if self._client is not None:
            try:
                self._client.unsubscribe_topic(_topic(self.channel))
            except Exception:  # noqa: BLE001
                pass
        if self.bar is not None:
            self.bar.close()
        shutil.rmtree(self.channel, ignore_errors=True)


def _dask_client():
    """The current Dask client of this process, or None."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return distributed.get_client()
    except (ValueError, AttributeError):
        return None
