"""The memory plan reads the container's limit, not only the host's RAM.

A fake container (cgroup v2 or v1 files, ``/proc/self/cgroup`` and
``/proc/self/mountinfo`` written to a temporary directory, the reader's
paths pointed at them) on a fake 64 GiB host: the plan budgets what the
container leaves. The address-space rlimit is set for real, in a child
process.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from skpmlp import ParallelMLPClassifier, sklearn_mlp_params
from skpmlp._engine import _host_memory
from skpmlp._engine._memory import (
    FREE_MEMORY_SHARE,
    available_bytes,
    memory_budget,
    model_bytes,
    plan_chunks,
)
from skpmlp._engine._spec import TrainConfig
from skpmlp._search._space import build_population

GiB, MiB = 2**30, 2**20


def _fake_machine(monkeypatch, tmp_path, *, version, limits, usage=0, inactive=0,
                  path="/", host=64 * GiB):
    """A host with ``host`` bytes available and this process in cgroup
    ``path``; ``limits`` maps a directory of that path (``"/"``, ``"/a"``,
    ...) to its memory limit (None: no limit); ``usage`` and ``inactive``
    are every directory's usage and inactive page cache."""
    proc = tmp_path / "proc"
    proc.mkdir(parents=True)
    mount = tmp_path / "sys" / "fs" / "cgroup" / ("unified" if version == 2 else "memory")
    (proc / "meminfo").write_text(
        f"MemTotal: {2 * host // 1024} kB\nMemFree: 1 kB\nMemAvailable: {host // 1024} kB\n"
    )
    if version == 2:
        (proc / "cgroup").write_text(f"0::{path}\n")
        fstype, options = "cgroup2", "rw,nsdelegate"
        names = ("memory.max", "memory.current", "inactive_file")
    else:
        (proc / "cgroup").write_text(f"5:cpu,cpuacct:/\n4:memory:{path}\n1:name=systemd:/\n")
        fstype, options = "cgroup", "rw,memory"
        names = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
    (proc / "mountinfo").write_text(
        "22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/root rw\n"
        f"35 31 0:32 / {mount} rw,nosuid shared:9 - {fstype} cgroup {options}\n"
    )
    for directory, limit in limits.items():
        where = mount / directory.strip("/")
        where.mkdir(parents=True, exist_ok=True)
        unlimited = "max" if version == 2 else str(9223372036854771712)
        (where / names[0]).write_text(f"{unlimited if limit is None else limit}\n")
        (where / names[1]).write_text(f"{usage}\n")
        (where / "memory.stat").write_text(f"anon {usage}\n{names[2]} {inactive}\nfile 0\n")
    monkeypatch.setattr(_host_memory, "MEMINFO", str(proc / "meminfo"))
    monkeypatch.setattr(_host_memory, "SELF_CGROUP", str(proc / "cgroup"))
    monkeypatch.setattr(_host_memory, "MOUNTINFO", str(proc / "mountinfo"))
    return mount


@pytest.mark.parametrize("version", [2, 1])
def test_a_2_gib_container_plans_for_2_gib(monkeypatch, tmp_path, version):
    _fake_machine(monkeypatch, tmp_path, version=version, limits={"/": 2 * GiB})
    assert available_bytes("cpu") == 2 * GiB
    assert memory_budget("cpu") == FREE_MEMORY_SHARE * 2 * GiB
    limit = _host_memory.binding_limit()
    assert f"cgroup v{version}" in limit.source and "2.00 GiB" in limit.source


@pytest.mark.parametrize("version", [2, 1])
def test_usage_counts_without_the_reclaimable_page_cache(monkeypatch, tmp_path, version):
    _fake_machine(monkeypatch, tmp_path, version=version, limits={"/": 2 * GiB},
                  usage=700 * MiB, inactive=200 * MiB)
    assert available_bytes("cpu") == 2 * GiB - 500 * MiB


@pytest.mark.parametrize("version", [2, 1])
def test_a_parent_cgroups_limit_binds_its_children(monkeypatch, tmp_path, version):
    """A Slurm job or a Kubernetes pod: the limit sits on a parent of the
    process's own cgroup."""
    _fake_machine(monkeypatch, tmp_path, version=version, path="/job.slice/step_0/task",
                  limits={"/job.slice": 2 * GiB, "/job.slice/step_0": None,
                          "/job.slice/step_0/task": 3 * GiB})
    assert available_bytes("cpu") == 2 * GiB


@pytest.mark.parametrize("version", [2, 1])
def test_no_limit_leaves_the_hosts_memory(monkeypatch, tmp_path, version):
    _fake_machine(monkeypatch, tmp_path, version=version, limits={"/": None})
    assert available_bytes("cpu") == 64 * GiB
    assert "MemAvailable" in _host_memory.binding_limit().source


def test_a_container_smaller_than_the_host_sets_the_plan(monkeypatch, tmp_path):
    """A population of about 3 GiB: one run on the 64 GiB host, chunks of at
    most 80% of 2 GiB in the 2 GiB container."""
    archs = [(1024, 1024), (2048,), (512, 512, 512)]
    population = build_population(archs, ("relu", "tanh"), (1e-3, 1e-2), (1e-4, 1e-2), 2)
    spec = population.spec(0)
    config = TrainConfig(task="classification", n_outputs=10, batch_size=256, max_iter=10,
                         dtype="float64")
    per_model = model_bytes(spec, config, 784, n_folds=3, n_eval=10_000)
    shared = 1e6
    assert 2.5 * GiB < per_model.sum() < 64 * GiB * FREE_MEMORY_SHARE
    _fake_machine(monkeypatch, tmp_path / "host", version=2, limits={"/": None})
    assert len(plan_chunks(spec, per_model, shared, memory_budget("cpu"))) == 1
    _fake_machine(monkeypatch, tmp_path / "container", version=2, limits={"/": 2 * GiB})
    chunks = plan_chunks(spec, per_model, shared, memory_budget("cpu"))
    assert len(chunks) >= 2
    assert max(shared + per_model[chunk].sum() for chunk in chunks) <= FREE_MEMORY_SHARE * 2 * GiB


def test_a_fit_in_a_small_container_trains_as_chunks_with_the_same_results(
    monkeypatch, tmp_path, iris,
):
    search = dict(hidden_layer_sizes=[(4,), (16,), (8, 8)], activation=("relu", "tanh"),
                  learning_rate_init=(0.01, 0.03), max_iter=8, dtype="float64", random_state=0,
                  **sklearn_mlp_params())  # without dropout, whose masks outgrow 200 kB
    one_run = ParallelMLPClassifier(**search, cv=None).fit(*iris)
    # a container with 250 kB left: the plan has 200 kB
    _fake_machine(monkeypatch, tmp_path, version=2, limits={"/": 10**9 + 250_000}, usage=10**9)
    with pytest.warns(ResourceWarning, match=r"more than the 0\.2 MiB available: training it as"):
        chunked = ParallelMLPClassifier(**search, cv=None).fit(*iris)
    np.testing.assert_array_equal(chunked.cv_results_["mean_test_score"],
                                  one_run.cv_results_["mean_test_score"])
    np.testing.assert_allclose(chunked.loss_curves_, one_run.loss_curves_, atol=1e-12)


def test_unreadable_files_leave_the_limit_unknown(monkeypatch, tmp_path):
    for name in ("MEMINFO", "SELF_CGROUP", "MOUNTINFO"):
        monkeypatch.setattr(_host_memory, name, str(tmp_path / "missing"))
    assert _host_memory.memory_limits() == [] or all(
        "RLIMIT_AS" in limit.source for limit in _host_memory.memory_limits()
    )


def test_the_address_space_rlimit_is_read():
    """A real ``ulimit -v``, set in a child process to its virtual size plus
    1 GiB (the child loads the reader alone, without torch, to start fast)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/status")
    code = textwrap.dedent(f"""
        import importlib.util, resource
        spec = importlib.util.spec_from_file_location("host_memory", {_host_memory.__file__!r})
        host_memory = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(host_memory)
        size = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
                    if line.startswith("VmSize:"))
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (size + 2**30, hard))
        limit = host_memory.binding_limit()
        assert 0.9 * 2**30 < limit.available <= 2**30, limit
        assert limit.available == host_memory.host_available_bytes()
        assert "RLIMIT_AS" in limit.source, limit
    """)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, child.stdout + child.stderr
