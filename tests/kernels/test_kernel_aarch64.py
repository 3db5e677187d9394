"""The kernel built for aarch64 (NEON: 16-byte vectors, 32 registers), run
under emulation, agrees with the host's kernel in float64.

The kernel sources and a small driver (tests/kernels/native/epoch_driver.cpp) are
cross-compiled with ``aarch64-linux-gnu-g++`` into a static program that
``qemu-aarch64`` runs on the host's CPU. The host writes one problem's
inputs (tables, batches, parameters, optimizer state), the program runs
the self-test, one training epoch and a forward on them, and its results
must equal the host kernel's to float64 rounding (the two sum their lanes
in other orders and use their own C libraries' exp, tanh and erf).

Both tools are Debian packages (``g++-aarch64-linux-gnu``, ``qemu-user``);
``.ci/run`` installs them where ``apt-get`` is available, and the tests
skip, saying why, where they are missing.
"""

import dataclasses
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from test_kernel import data, population

from skpmlp import _kernels
from skpmlp._engine import OptimizerSettings, TrainConfig
from skpmlp._engine._backends._native import NativeTrainer, epoch_batches
from skpmlp._engine._minibatch._batches import BatchPlanner

CROSS_COMPILER, EMULATOR = "aarch64-linux-gnu-g++", "qemu-aarch64"
DRIVER = Path(__file__).with_name("native") / "epoch_driver.cpp"
KERNELS = Path(_kernels.__file__).parent

pytestmark = [
    pytest.mark.skipif(shutil.which(CROSS_COMPILER) is None,
                       reason=f"no {CROSS_COMPILER} (Debian package g++-aarch64-linux-gnu)"),
    pytest.mark.skipif(shutil.which(EMULATOR) is None, reason=f"no {EMULATOR} (Debian package qemu-user)"),
    pytest.mark.skipif(not _kernels.kernel_available(), reason="no native kernel on the host"),
]


@pytest.fixture(scope="module")
def driver():
    """The aarch64 driver, built once per source version into the kernel cache."""
    sources = [DRIVER, *_kernels._build.SOURCES]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources + list(_kernels._build.HEADERS)))
    path = _kernels.cache_dir() / f"aarch64-driver-{digest.hexdigest()[:16]}"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")  # test workers may build at once
        done = subprocess.run(
            [CROSS_COMPILER, "-O2", "-std=c++17", "-static", "-pthread", "-march=armv8-a", f"-I{KERNELS}",
             *map(str, sources), "-o", str(tmp)], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        tmp.replace(path)
    return path


def _problem(task, n_outputs, solver, tmp_path, smoothing=0.0, dropout=()):
    """One epoch's inputs from the host engine, written for the driver;
    returns the host kernel's results on them (every other model with
    label smoothing ``smoothing``; with ``dropout`` rates, adam models
    with those rates in turn)."""
    X, y, sw = data(task)
    cfg = TrainConfig(task=task, n_outputs=n_outputs, batch_size=32, dtype="float64", solver=solver,
                      momentum=0.9, nesterovs_momentum=True)
    spec = population()
    if dropout:
        rates = [dropout[i % len(dropout)] for i in range(spec.n_models)]
        spec = dataclasses.replace(spec, optimizers=[OptimizerSettings("adam", dropout=p) for p in rates])
    trainer = NativeTrainer(spec, cfg, X.shape[1], 1)
    trainer._hyper[::2, _kernels.HYPER_FIELDS["label_smoothing"]] = smoothing
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    plan = BatchPlanner([np.arange(len(X))], 32, 3, sw, dtype=torch.float64, device="cpu").next_epoch()
    batches = epoch_batches(X_t, y_t, plan, task)
    state = trainer.optimizer.state
    # nonzero optimizer state, so the update reads it
    for buffer in state:
        buffer.copy_(torch.linspace(0.0, 1e-3, buffer.numel(), dtype=torch.float64))
    state2 = state[1] if len(state) > 1 else torch.zeros_like(trainer.net.flat.detach())  # SGD has one
    loss = {"classification": 0, "regression": 1, "multilabel": 2}[task]
    n_steps, K, F, bp = batches["X"].shape
    flat = trainer.net.flat.detach()
    forward_X = X[:37]
    files = {
        "meta.bin": trainer._meta, "hyper.bin": trainer._hyper, "X.bin": batches["X"], "Y.bin": batches["Y"],
        "W.bin": batches["W"], "counts.bin": plan.counts.numpy().astype(np.float64),
        "weight_sums.bin": np.asarray(plan.weight_sums, np.float64),
        "stepping.bin": np.asarray(plan.stepping, np.uint8), "step0.bin": np.zeros(K),
        "params.bin": flat, "state1.bin": state[0], "state2.bin": state2,
        "forward_X.bin": forward_X,
    }
    for name, value in files.items():
        array = value.numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        (tmp_path / name).write_bytes(np.ascontiguousarray(array).tobytes())
    n_slots = len(trainer.net.slot_models)
    (tmp_path / "dims.txt").write_text(
        f"{len(trainer._meta)} {n_steps} {K} {bp} {F} {n_outputs} {loss} {n_slots} {flat.numel()} {len(forward_X)}")
    # the host's kernel on the same inputs: an epoch, then the forward
    buffers = {"params": flat, "grads": None, "state1": state[0], "state2": state2, "loss_sums": trainer.loss_sums}
    batches.update(counts=files["counts.bin"], weight_sums=files["weight_sums.bin"],
                   stepping=files["stepping.bin"], step0=files["step0.bin"])
    _kernels.run_models("epoch", trainer._meta, trainer._hyper, batches, buffers, n_outputs=n_outputs,
                        loss=["softmax", "squared", "logistic"][loss])
    forward = trainer.outputs(torch.from_numpy(forward_X)).numpy()
    return {"params.out": flat.numpy(), "state1.out": state[0].numpy(), "state2.out": state2.numpy(),
            "loss_sums.out": trainer.loss_sums.numpy(), "forward.out": forward}


@pytest.mark.parametrize("solver", ["adam", "sgd", "adamw"])
@pytest.mark.parametrize("task, n_outputs", [("classification", 3), ("regression", 2), ("multilabel", 3)])
def test_aarch64_kernel_agrees_with_the_host_in_float64(driver, tmp_path, task, n_outputs, solver):
    """Every activation at depths 1-3, sample weights, a short last batch:
    one epoch and a forward under emulation equal the host's."""
    _agree(driver, tmp_path, _problem(task, n_outputs, solver, tmp_path))


@pytest.mark.parametrize("task, n_outputs", [("classification", 3), ("multilabel", 3)])
def test_aarch64_label_smoothing_agrees_with_the_host_in_float64(driver, tmp_path, task, n_outputs):
    """The softmax and logistic losses with label smoothing (every other
    model) under emulation equal the host's."""
    _agree(driver, tmp_path, _problem(task, n_outputs, "adam", tmp_path, smoothing=0.15))


@pytest.mark.parametrize("task, n_outputs", [("classification", 3), ("regression", 2)])
def test_aarch64_dropout_agrees_with_the_host_in_float64(driver, tmp_path, task, n_outputs):
    """Dropout (its masks drawn in the products' epilogues with NEON's 32
    registers, ReLU's and hardshrink's gates, the costly activations'
    masking pass) under emulation equals the host's."""
    _agree(driver, tmp_path, _problem(task, n_outputs, "adam", tmp_path, dropout=(0.0, 0.2, 0.5)))


def _agree(driver, tmp_path, host):
    """The driver's results on the files of ``_problem`` equal ``host``'s."""
    done = subprocess.run([EMULATOR, str(driver), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"driver exit {done.returncode}: {done.stdout} {done.stderr[-2000:]}"
    assert done.stdout.split() == ["neon", "16"]
    for name, expected in host.items():
        got = np.fromfile(tmp_path / name, dtype=np.float64).reshape(expected.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-12, err_msg=name)
    assert not np.allclose(host["params.out"], np.fromfile(tmp_path / "params.bin")), "the epoch changed nothing"
