"""A fit leaves the process as it found it.

torch's thread counts (the calling thread's, and the default every new thread
starts from), the CPU's denormal handling and glibc's allocator settings
belong to the whole process or to a thread, not to a fit: after a fit that
ends normally, by KeyboardInterrupt, by an error, or as shards running in
threads, they are what they were before.
"""

import ctypes
import ctypes.util
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch
from joblib import parallel_config

import skpmlp
from skpmlp import ParallelMLPClassifier
from skpmlp._execution._shards import shard_threads

SEARCH = dict(
    input_transform="robust-smooth-clip",  # one value, one fused run (the default searches two)
    hidden_layer_sizes=[(4,), (8,)], activation=("relu", "tanh"), max_iter=3, random_state=0)


def _new_thread_threads():
    """torch threads of a thread started now: the process default."""
    seen = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    thread.start()
    thread.join()
    return seen[0]


def _flushes_denormals():
    """Whether this thread's CPU flushes denormal floats to zero."""
    return bool(torch.tensor(1e-39, dtype=torch.float32) * 1 == 0)


def _state():
    return {
        "threads": torch.get_num_threads(), "new_thread_threads": _new_thread_threads(),
        "flush_denormal": _flushes_denormals(),
    }


@pytest.fixture(params=[False, True], ids=["denormals", "flush-to-zero"])
def before(request):
    """The process set to values a fit must not change: a thread count no
    shard uses, and either denormal mode."""
    threads, flush = torch.get_num_threads(), _flushes_denormals()
    torch.set_num_threads(shard_threads(2) + 1)
    torch.set_flush_denormal(request.param)
    yield _state()
    torch.set_num_threads(threads)
    torch.set_flush_denormal(flush)


class _Epochs:
    """Stands in for the trainers' ``run_epoch``: records, in the thread
    training, the torch threads it runs with and the default a new thread
    would get, then raises ``error`` instead of training the epochs (counted
    over every run of the fit, refit included) where ``when(epoch)``."""

    def __init__(self, error=None, when=lambda epoch: True):
        self.error, self.when = error, when
        self.seen, self.lock = [], threading.Lock()

    def __call__(self, run_epoch, trainer, *args, **kwargs):
        with self.lock:
            # the native kernel's epochs run on its own threads, as many as
            # torch had when the run started (torch ops around them on one)
            threads = getattr(trainer, "n_threads", None) or torch.get_num_threads()
            self.seen.append((threads, _new_thread_threads()))
            epoch = len(self.seen) - 1
        if self.error is not None and self.when(epoch):
            raise self.error
        return run_epoch(trainer, *args, **kwargs)


def _fit(iris, wrap_run_epoch, epochs, **params):
    wrap_run_epoch(lambda run_epoch: lambda trainer, *args, **kwargs: epochs(run_epoch, trainer, *args,
                                                                             **kwargs))
    return ParallelMLPClassifier(**SEARCH, **params, cv=None).fit(*iris)


def test_a_normal_fit(iris, before, wrap_run_epoch):
    epochs = _Epochs()
    _fit(iris, wrap_run_epoch, epochs)
    assert _state() == before
    assert set(epochs.seen) == {(before["threads"], before["new_thread_threads"])}


def test_a_fit_interrupted_after_an_epoch(iris, before, wrap_run_epoch):
    # Ctrl-C in the search's second epoch: the search keeps its first
    with pytest.warns(UserWarning, match="was interrupted after 1 epochs"):
        _fit(iris, wrap_run_epoch, _Epochs(KeyboardInterrupt(), when=lambda epoch: epoch == 1))
    assert _state() == before


def test_a_fit_interrupted_in_its_first_epoch(iris, before, wrap_run_epoch):
    with pytest.raises(KeyboardInterrupt):
        _fit(iris, wrap_run_epoch, _Epochs(KeyboardInterrupt()))
    assert _state() == before


def test_a_failing_fit(iris, before, wrap_run_epoch):
    with pytest.raises(RuntimeError, match="inside training"):
        _fit(iris, wrap_run_epoch, _Epochs(RuntimeError("inside training")))
    assert _state() == before


@pytest.mark.parametrize("error", [None, RuntimeError("inside training")], ids=["normal", "failing"])
def test_shards_in_threads(iris, before, wrap_run_epoch, error):
    """Two shards train at once in threads of this process: each runs with
    its own share of the cores, and neither the process default nor the
    caller's count moves, during the fit or after."""
    epochs = _Epochs(error)
    with parallel_config(backend="threading"):
        if error is None:
            # the sharded search alone (a holdout refit would train in this thread)
            search = _fit(iris, wrap_run_epoch, epochs, n_jobs=2, holdout_refit=False)
            assert [s["threads"] for s in search.shards_] == [shard_threads(2)] * 2
        else:
            with pytest.raises(RuntimeError, match="inside training"):
                _fit(iris, wrap_run_epoch, epochs, n_jobs=2, holdout_refit=False)
    assert _state() == before
    assert {default for _, default in epochs.seen} == {before["new_thread_threads"]}
    assert {threads for threads, _ in epochs.seen} == {shard_threads(2)}


# glibc's allocator: its settings cannot be read back, so a fresh process
# probes what they do, before and after a fit

_PROBE = """
import ctypes, ctypes.util, sys
from sklearn.datasets import load_iris
from skpmlp import ParallelMLPClassifier

libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
info = libc.mallinfo2
info.restype = type("Mallinfo2", (ctypes.Structure,), {"_fields_": [
    (name, ctypes.c_size_t) for name in
    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]})

def mmapped(size):
    before = info().hblks
    block = libc.malloc(size)
    served_by_mmap = info().hblks > before
    libc.free(block)
    return served_by_mmap

def dynamic_threshold(size):
    # glibc raises its mmap threshold above a freed mmapped block (<= 32 MiB),
    # unless a setting has switched that off
    return mmapped(size) and not mmapped(size)

if sys.argv[1] == "dynamic":
    # probed below the size checked after the fit, which it would raise
    # the threshold past
    holds_before = dynamic_threshold(2 * 2**20)
    check = lambda: dynamic_threshold(30 * 2**20)
else:
    check = lambda: not mmapped(64 * 2**20)
    holds_before = check()
if not holds_before:
    print("SKIP this glibc does not show the setting before any fit")
    sys.exit()
X, y = load_iris(return_X_y=True)
ParallelMLPClassifier((4,), max_iter=2, random_state=0, cv=None).fit(X, y)
print("OK" if check() else "CHANGED")
"""


def _glibc_has_mallinfo2():
    if not sys.platform.startswith("linux"):
        return False
    try:
        return hasattr(ctypes.CDLL(ctypes.util.find_library("c")), "mallinfo2")
    except OSError:
        return False


@pytest.mark.skipif(not _glibc_has_mallinfo2(), reason="needs glibc >= 2.33")
@pytest.mark.parametrize(
    "probe, env",
    [("dynamic", {}), ("no_mmap", {"MALLOC_MMAP_MAX_": "0"})],
    ids=["dynamic-mmap-threshold", "user-MALLOC_MMAP_MAX_"],
)
def test_allocator_settings_survive_a_fit(probe, env):
    """glibc's dynamic mmap threshold still works after a fit, and a user's
    ``MALLOC_MMAP_MAX_=0`` still holds."""
    here = str(Path(skpmlp.__file__).resolve().parents[1])
    env = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _PROBE, probe], env=env, capture_output=True, text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    if run.stdout.startswith("SKIP"):
        pytest.skip(run.stdout.strip())
    assert run.stdout.strip() == "OK"
