"""Real kills: a search in a process of its own gets SIGKILL at random
moments (mid-epoch, mid-write), is started again each time, and ends with
the uninterrupted result, bit for bit (float64, native kernel); Ctrl-C
(SIGINT from a timer thread, mid-epoch) leaves a resumable state."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from checkpoint_child import data, estimator, fitted_arrays, training_backend

from skpmlp._persistence._checkpoint_file import DELAY_VARIABLE

CHILD = os.path.join(os.path.dirname(__file__), "checkpoint_child.py")
DATA = dict(n_samples=300, n_features=10, n_informative=6, n_classes=3, random_state=0)
SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[[8], [16], [6, 6]], learning_rate_init=[0.003, 0.01, 0.03],
    alpha=[1e-4, 1e-2], pruning="halving", min_iter=2, halving_factor=2, max_iter=24,
    n_iter_no_change=1000, batch_size=16, cv=2, dtype="float64", random_state=0,
)


def _fit(params, backend="native"):
    X, y = data(DATA)
    with warnings.catch_warnings(), training_backend(backend):
        warnings.simplefilter("ignore")
        return estimator(params).fit(X, y)


def _temporaries(path):
    directory, name = os.path.split(path)
    return [n for n in os.listdir(directory) if n.startswith(f".{name}.tmp-")]


def _stamp(path):
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def _start(config_path, delay):
    env = dict(os.environ, **{DELAY_VARIABLE: str(delay)})
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    return subprocess.Popen([sys.executable, CHILD, config_path], env=env)


def _wait_for(condition, child, timeout=120):
    """Poll until ``condition()``; False if the child ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        if child.poll() is not None:
            return False
        time.sleep(0.005)
    raise TimeoutError


#: The same search, adaptive: the slots halving frees take perturbed survivors.
ADAPTIVE = dict(SEARCH, refill="perturb")


@pytest.mark.parametrize("search", [SEARCH, ADAPTIVE], ids=["halving", "refill"])
def test_sigkill_at_random_moments_then_resume_gives_the_uninterrupted_result(tmp_path, search):
    rng = np.random.default_rng(0)
    path = str(tmp_path / "search.ckpt")
    # a checkpoint after every epoch (a run is the same however its epochs
    # are grouped into calls): the kills find the search still running
    config = dict(params=dict(search, checkpoint=path, checkpoint_every=1e-3), backend="native",
                  data=DATA, out=str(tmp_path / "out.npz"), epochs_per_call=1)
    config_path = str(tmp_path / "config.json")
    with open(config_path, "w") as handle:
        json.dump(config, handle)
    reference = fitted_arrays(_fit(search))
    stamps, mid_write = [], 0
    # after a few checkpoints (some epochs in), then in a write, then anywhere
    for mode in ("epochs", "write", "anywhere"):
        child = _start(config_path, delay=0.2 if mode == "write" else 0.0)
        before, seen = _stamp(path), set()
        # the child imported everything and wrote its checkpoint again: it trains
        _wait_for(lambda: seen.add(_stamp(path)) or len(seen - {None, before}) >= 1, child)
        if mode == "epochs":
            _wait_for(lambda: seen.add(_stamp(path)) or len(seen - {None, before}) >= 4, child)
            time.sleep(rng.uniform(0, 0.05))
        elif mode == "write":
            _wait_for(lambda: _temporaries(path), child)
        else:  # a few checkpoints on, then any moment of an epoch or a write (a sleep
            # of fixed length could outlast the search: the last third of it is short)
            extra = int(rng.integers(0, 3))
            _wait_for(lambda: seen.add(_stamp(path)) or len(seen - {None, before}) >= 1 + extra,
                      child)
            time.sleep(rng.uniform(0, 0.01))
        mid_write += bool(_temporaries(path))
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL, f"the search ended before the kill ({mode})"
        stamps.append(_stamp(path))
    assert mid_write >= 1 and len(set(stamps)) == 3  # each run got further
    resumed = fitted_arrays(_fit(dict(search, checkpoint=path)))
    assert not _temporaries(path)  # the killed writes' leftovers removed
    assert resumed.keys() == reference.keys()
    for name in reference:
        np.testing.assert_array_equal(resumed[name], reference[name], err_msg=name)


@pytest.fixture
def ctrl_c_in_epoch(monkeypatch):
    """``ctrl_c_in_epoch(n)``: a timer thread sends SIGINT to this process
    while the native kernel runs the n-th epoch (its GIL released). The
    epoch does not return before the signal is sent, so on a loaded machine
    too it lands inside the epoch: in the kernel, or at the latest before
    the epoch's bookkeeping. Returns a list that holds, once sent, whether
    the epoch was still running then."""
    from skpmlp._engine._backends._native import NativeTrainer
    from skpmlp._engine._minibatch import _epoch_calls

    monkeypatch.setattr(_epoch_calls, "MAX_EPOCHS", 1)  # every epoch through run_epoch
    # Python's own SIGINT handler, as in a terminal: a process started in
    # the background by a non-interactive shell (``cmd &``) ignores SIGINT,
    # and a fit then rightly leaves it alone
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def arm(n):
        real, calls, state = NativeTrainer.run_epoch, [0], {"inside": False}
        landed, sent = [], threading.Event()

        def send():
            time.sleep(0.001)
            os.kill(os.getpid(), signal.SIGINT)
            landed.append(state["inside"])
            sent.set()

        def run_epoch(self, *args, **kwargs):
            calls[0] += 1
            state["inside"] = True
            if calls[0] == n:
                threading.Thread(target=send).start()
            try:
                return real(self, *args, **kwargs)
            finally:
                if calls[0] == n:
                    sent.wait(30)
                state["inside"] = False

        monkeypatch.setattr(NativeTrainer, "run_epoch", run_epoch)
        return landed

    yield arm
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("epoch", [2, 5])
def test_ctrl_c_mid_epoch_leaves_a_resumable_state(tmp_path, ctrl_c_in_epoch, monkeypatch, epoch):
    """SIGINT during a native epoch (before the first rung, after it): the
    fit returns with whole epochs, ``"interrupted"``; its checkpoint holds
    them, and the resumed fit ends as an uninterrupted one."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    # long epochs (one row per step), so that the signal lands inside one
    params = dict(SEARCH, batch_size=1, max_iter=6, cv=None, refit=False)
    reference = fitted_arrays(_fit(params))
    path = str(tmp_path / "search.ckpt")
    landed = ctrl_c_in_epoch(epoch)
    interrupted = _fit(dict(params, checkpoint=path, checkpoint_every=60.0))
    assert landed == [True], "the signal did not land mid-epoch"
    n_iter = interrupted.n_iter_per_model_
    # the epoch it landed in finished, and nothing after it
    assert n_iter.max() == epoch
    curves = interrupted.loss_curves_
    assert all(np.isfinite(curves[i, :n]).all() for i, n in enumerate(n_iter))
    monkeypatch.undo()
    resumed = fitted_arrays(_fit(dict(params, checkpoint=path)))
    for name in reference:
        np.testing.assert_array_equal(resumed[name], reference[name], err_msg=name)
