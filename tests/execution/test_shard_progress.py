"""With n_jobs and verbose, one progress bar for the whole search, fed by the
shards while they train: loky processes (through files) and a real Dask
cluster on 127.0.0.1 (through Dask events)."""

import io
import json
import warnings

import numpy as np
import pytest
from joblib import parallel_config
from tqdm import tqdm

import skpmlp._execution._progress
import skpmlp._execution._shard_progress as shard_progress
from skpmlp import ParallelMLPClassifier

# long enough that a shard reports before it ends (it sends at most every
# 0.25 s): 4000 epochs, no early stop, about 1 s a shard here (the kernel
# trains many epochs per call)
SEARCH = dict(
    hidden_layer_sizes=[(4,), (16,), (8, 8)], activation=("relu", "tanh"),
    learning_rate_init=(0.01, 0.03), max_iter=4000, tol=0, n_iter_no_change=10**6, cv=2,
    dtype="float64", random_state=0, refit=False,
    input_transform="none",  # the runs' plain names ("fused run", not "... (... inputs)")
)
N_FIT_EPOCHS = 12 * 2 * 4000


class _RecordedBar(tqdm):
    """A real tqdm bar (written to a buffer) that records its count and
    status every time they are shown."""

    bars = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, file=io.StringIO(), **kwargs)
        self.history = []
        _RecordedBar.bars.append(self)

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        super().set_postfix(ordered_dict, refresh=refresh, **kwargs)
        self.history.append((self.n, dict(ordered_dict or {})))


@pytest.fixture
def bars(monkeypatch):
    _RecordedBar.bars = []
    monkeypatch.setattr(skpmlp._execution._progress, "_tqdm", lambda: _RecordedBar)
    return _RecordedBar.bars


def _fit_verbose(iris):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ParallelMLPClassifier(n_jobs=2, verbose=1, **SEARCH).fit(*iris)


def _assert_one_live_bar(bars):
    sharded = [bar for bar in bars if bar.desc.startswith("fused run (2 shards)")]
    assert len(sharded) == 1 and len(bars) == 1
    bar = sharded[0]
    assert bar.total == N_FIT_EPOCHS and bar.n == N_FIT_EPOCHS
    counts = [n for n, _ in bar.history]
    assert counts == sorted(counts)
    # progress arrived from a shard still training, before any shard was done
    live = [(n, status) for n, status in bar.history if status["shards"] == "0/2" and n > 0]
    assert live, bar.history
    assert any(status.get("models", 0) > 0 for _, status in live)
    assert bar.history[-1][1]["shards"] == "2/2"


@pytest.fixture(scope="module")
def quiet(iris):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ParallelMLPClassifier(n_jobs=2, **SEARCH).fit(*iris)


def test_loky_shards_feed_one_bar_while_they_train(iris, bars, quiet, capsys):
    search = _fit_verbose(iris)
    _assert_one_live_bar(bars)
    # the shards' results in shard order, as without the bar
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  quiet.cv_results_["mean_test_score"])
    assert [s["shard"] for s in search.shards_] == [0, 1]
    lines = capsys.readouterr().out  # tqdm.write's lines go to stdout
    assert "fused run: shard 1 of 2 done (6 models in" in lines
    assert "2 of 2 shards done" in lines


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def test_dask_shards_feed_one_bar_through_dask_events(iris, bars, quiet, dask_client):
    with parallel_config(backend="dask"):
        search = _fit_verbose(iris)
    _assert_one_live_bar(bars)
    assert all(s["worker"] is not None for s in search.shards_)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"],
                                  quiet.cv_results_["mean_test_score"])


def test_without_tqdm_lines_report_the_shards(iris, monkeypatch, capsys):
    monkeypatch.setattr(skpmlp._execution._progress, "_tqdm", lambda: None)
    _fit_verbose(iris)
    out = capsys.readouterr().out
    assert "fused run: shard 1 of 2 done" in out and "2 of 2 shards done" in out


def test_the_reporter_counts_fit_epochs_across_runs(tmp_path, monkeypatch):
    """Stopped replicas count their remaining epochs; a new run (a memory
    chunk) starts after the previous one's full share."""
    monkeypatch.setattr(shard_progress, "SEND_INTERVAL", 0)
    reporter = shard_progress.ShardReporter(str(tmp_path), 3, max_iter=10)

    def sent():
        return json.loads((tmp_path / "shard-3.json").read_text())

    reporter(0, {"active": np.array([True, True, True]), "val_score": np.array([0.1, 0.5, 0.2])})
    assert sent() == {"shard": 3, "done": 3, "active": 3, "best": 0.5}
    reporter(1, {"active": np.array([True, False, True]), "val_score": None})
    assert sent()["done"] == 2 * 2 + 10 and sent()["active"] == 2
    reporter(0, {"active": np.array([True, True]), "val_score": np.array([0.9, np.nan])})
    assert sent() == {"shard": 3, "done": 30 + 2, "active": 2, "best": 0.9}


def test_a_reporter_that_cannot_send_never_fails_the_fit(tmp_path, monkeypatch):
    monkeypatch.setattr(shard_progress, "SEND_INTERVAL", 0)
    reporter = shard_progress.ShardReporter(str(tmp_path / "missing" / "dir"), 0, max_iter=5)
    reporter(0, {"active": np.array([True]), "val_score": None})
    reporter(1, {"active": np.array([True]), "val_score": None})
    assert reporter._broken
