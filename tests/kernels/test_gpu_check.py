"""The prepared GPU check (``benchmarks/gpu_check.py``) drives its steps.

Without a GPU its CPU variants run, small: every step's record (status,
seconds, output, the JSON the step wrote) lands in one file, a failing step
makes the exit status 1 without stopping the others, and an unknown step is
refused.
"""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"


def _driver():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cpu_variants_run_and_land_in_one_file(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--steps",
                           "environment", "dropout_cost", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert list(report["steps"]) == ["environment", "dropout_cost"]
    environment, dropout = report["steps"]["environment"], report["steps"]["dropout_cost"]
    # the environment step names the machine's GPU whatever --device says
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    assert environment["status"] == 0 and environment["result"]["gpu"] == gpu
    assert "torch" in environment["result"]
    assert dropout["status"] == 0 and dropout["seconds"] > 0
    assert set(dropout["result"]["median_cpu_seconds"]) == {
        "native, dropout=0", "native, dropout=0.1", "torch, dropout=0", "torch, dropout=0.1"}


def test_a_failing_step_is_recorded_and_fails_the_check(tmp_path, monkeypatch):
    driver = _driver()
    plan = {"fine": ([sys.executable, "-c", "print('fine')"], 60, None),
            "broken": ([sys.executable, "-c", "raise SystemExit(3)"], 60, None),
            "slow": ([sys.executable, "-c", "import time; time.sleep(30)"], 1, None)}
    monkeypatch.setattr(driver, "steps", lambda device, quick: plan)
    assert driver.main(["--device", "cpu", "--out", str(tmp_path)]) == 1
    steps = json.loads((tmp_path / "gpu_check.json").read_text())["steps"]
    assert [steps[name]["status"] for name in plan] == [0, 3, "timeout"]
    assert (tmp_path / "fine.log").read_text() == "fine\n"  # each step's whole output


def test_a_steps_time_limit_can_be_changed(tmp_path, monkeypatch):
    driver = _driver()
    plan = {"slow": ([sys.executable, "-c", "import time; time.sleep(3)"], 60, None)}
    monkeypatch.setattr(driver, "steps", lambda device, quick: plan)
    assert driver.main(["--device", "cpu", "--out", str(tmp_path), "--limit", "slow=0.5"]) == 1
    assert json.loads((tmp_path / "gpu_check.json").read_text())["steps"]["slow"]["status"] == "timeout"
    with pytest.raises(SystemExit):
        driver.main(["--device", "cpu", "--out", str(tmp_path), "--limit", "slow=soon"])


def test_an_unknown_step_is_refused(tmp_path):
    with pytest.raises(SystemExit):
        _driver().main(["--device", "cpu", "--steps", "nope", "--out", str(tmp_path)])


def test_the_profile_runs_on_the_cpu_and_writes_its_figures(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT.parent / "gpu_profile.py"), "--device", "cpu",
                           "--workloads", "iris", "--epochs", "2", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    iris = json.loads((tmp_path / "gpu_profile.json").read_text())["workloads"]["iris"]
    assert iris["trainer"] == "NativeTrainer" and iris["epochs"] == 2 and iris["wall_s"] > 0
    # an epoch's cost is the difference of a 2- and a 4-epoch fit, the rest is the run's setup
    # (a difference of two short fits, so not asserted positive: noise can exceed it)
    assert set(iris["setup"]) == set(iris["per_epoch"]) >= {"wall_s", "launches", "transfers", "syncs"}
    # the longer fit (twice the epochs) is the setup and its epochs
    epochs, setup, per_epoch = iris["epochs"], iris["setup"], iris["per_epoch"]
    assert setup["wall_s"] + 2 * epochs * per_epoch["wall_s"] == pytest.approx(iris["wall_s"])
    assert iris["device_busy_share"] is None and iris["top_device"] == []  # no GPU: host time only
    assert iris["top_cpu"] and all(row["us"] > 0 for row in iris["top_cpu"])
