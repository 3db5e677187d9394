"""SIGTERM from a scheduler, and workers that outlive their search (issue 41, items 1 and 2).

Real signals to real processes, as ``test_checkpoint_kill.py``: a search
that gets SIGTERM finishes its epoch, saves its checkpoint, says so and
ends with SIGTERM's status within a grace period; fitted again it ends as
an uninterrupted fit, bit for bit (float64). No shard worker of a search
outlives it, after SIGTERM or SIGKILL.
"""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from checkpoint_child import data, estimator, fitted_arrays, training_backend
from test_checkpoint_kill import SEARCH, _stamp, _wait_for

CHILD = os.path.join(os.path.dirname(__file__), "checkpoint_child.py")

#: Seconds a terminated search may take to exit (its epoch, its checkpoint):
#: a scheduler's grace period is typically 30 s (Kubernetes) or more.
GRACE = 30

SEARCHES = {
    "folds": SEARCH,
    "holdout": dict(SEARCH, cv=None),
    "shards": dict(SEARCH, n_jobs=2),
}


def _fit(params):
    import warnings

    X, y = data(_DATA)
    with warnings.catch_warnings(), training_backend("native"):
        warnings.simplefilter("ignore")
        return estimator(params).fit(X, y)


_DATA = dict(n_samples=300, n_features=10, n_informative=6, n_classes=3, random_state=0)


def _start(tmp_path, params):
    path = str(tmp_path / "search.ckpt")
    config = dict(params=dict(params, checkpoint=path, checkpoint_every=1e-3), backend="native",
                  data=_DATA, out=str(tmp_path / "out.npz"))
    config_path = str(tmp_path / "config.json")
    with open(config_path, "w") as handle:
        json.dump(config, handle)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, CHILD, config_path], env=env,
                             stderr=subprocess.PIPE, text=True)
    return child, path


def _children(pid):
    """Processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _training(child, path):
    """Wait until the child trains: its checkpoint written twice."""
    seen = set()
    assert _wait_for(lambda: seen.add(_stamp(path)) or len(seen - {None}) >= 2, child), \
        "the search ended before it could be signalled"


def _assert_workers_gone(workers, seconds=5):
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(_running(pid) for pid in workers):
        time.sleep(0.1)
    assert not [pid for pid in workers if _running(pid)], "a worker outlived its search"


@pytest.mark.parametrize("kind", list(SEARCHES))
def test_sigterm_saves_the_epoch_and_exits_then_resumes_to_the_same_result(tmp_path, kind):
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to find the worker processes")
    params = SEARCHES[kind]
    reference = fitted_arrays(_fit(params))
    child, path = _start(tmp_path, params)
    _training(child, path)
    workers = _children(child.pid)
    sent = time.monotonic()
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(GRACE)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(f"the search did not exit within {GRACE} s of SIGTERM")
    took = time.monotonic() - sent
    stderr = child.stderr.read()
    assert child.returncode == -signal.SIGTERM, stderr[-2000:]
    assert "SIGTERM" in stderr and path in stderr, stderr[-2000:]
    assert took < GRACE
    _assert_workers_gone(workers)
    resumed = fitted_arrays(_fit(dict(params, checkpoint=path)))
    assert resumed.keys() == reference.keys()
    for name in reference:
        np.testing.assert_array_equal(resumed[name], reference[name], err_msg=name)


def test_sigkill_of_the_search_leaves_no_worker(tmp_path):
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to find the worker processes")
    child, path = _start(tmp_path, SEARCHES["shards"])
    _training(child, path)
    workers = _children(child.pid)
    assert workers, "no worker process to watch"
    child.send_signal(signal.SIGKILL)
    child.wait()
    _assert_workers_gone(workers)
