"""Settings for the whole test session."""

import dataclasses
import os

import pytest
import torch
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler

import skpmlp._estimators._single
import skpmlp._search._plan

if os.environ.get("PYTEST_XDIST_WORKER"):
    # the suite runs in one process per core (pytest-xdist): one torch
    # thread each, since OpenMP regions of oversubscribed threads stall
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _kernel_target_of_the_backend(request, monkeypatch):
    """A test parametrized with ``backend="native:<target>"`` trains on the
    kernel built for that target (tests/kernel_widths.py)."""
    callspec = getattr(request.node, "callspec", None)
    backend = callspec.params.get("backend") if callspec is not None else None
    if isinstance(backend, str) and backend.startswith("native:"):
        monkeypatch.setenv("SKPMLP_KERNEL_TARGET", backend.split(":", 1)[1])


@pytest.fixture(scope="module")
def iris():
    """Iris, standardised: four features, three classes, 150 rows."""
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture
def wrap_run_epoch(monkeypatch):
    """``wrap_run_epoch(wrap)``: replace the epoch of both trainers, the
    torch one and the native kernel's, by ``wrap(original_run_epoch)``.
    The kernel then trains one epoch per call, so that every epoch passes
    through ``run_epoch`` (tests/engine/test_epoch_calls.py covers calls
    of several)."""
    from skpmlp._engine._backends._native import NativeTrainer
    from skpmlp._engine._backends._torch import PopulationTrainer
    from skpmlp._engine._minibatch import _epoch_calls

    monkeypatch.setattr(_epoch_calls, "MAX_EPOCHS", 1)

    def patch(wrap):
        for trainer in (PopulationTrainer, NativeTrainer):
            monkeypatch.setattr(trainer, "run_epoch", wrap(trainer.__dict__["run_epoch"]))

    return patch


@pytest.fixture
def interrupt_epoch(wrap_run_epoch):
    """``interrupt_epoch(n)``: a KeyboardInterrupt in the n-th epoch trained
    from now on (counting every fused run); returns the epoch counter."""

    def arm(n):
        calls = [0]

        def interrupting(run_epoch):
            def interrupted(self, *args, **kwargs):
                calls[0] += 1
                if calls[0] == n:
                    raise KeyboardInterrupt
                return run_epoch(self, *args, **kwargs)

            return interrupted

        wrap_run_epoch(interrupting)
        return calls

    return arm


@pytest.fixture(params=["native", "torch"])
def backend(request, monkeypatch):
    """Train every run of the estimators on the native kernel or on torch."""
    for module in (skpmlp._search._plan, skpmlp._estimators._single):
        original = module.train_config
        monkeypatch.setattr(
            module, "train_config",
            lambda *a, _original=original, **kw: dataclasses.replace(_original(*a, **kw), backend=request.param),
        )
    return request.param
