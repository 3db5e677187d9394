"""Building, checking, caching and choosing the native kernel: targets and
their widths, the self-test, the cache's keys, what happens when a build or
a library fails, and the checks of the kernels' arguments."""

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from test_kernel import _one_step, data, population

from skpmlp import _kernels
from skpmlp._engine import TrainConfig, train_population
from skpmlp._engine._backends import _choice, _native
from skpmlp._engine._backends._torch import PopulationTrainer
from skpmlp._kernels import _build

needs_kernel = pytest.mark.skipif(not _kernels.kernel_available(), reason="no C++ compiler for the native kernel")

#: What each x86-64 level's library reports.
LEVEL_ISA = {"x86-64-v2": ("sse4.2", 16, 16), "x86-64-v3": ("avx2-fma", 32, 16), "x86-64-v4": ("avx512", 64, 32)}


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No library loaded in this process yet, and an empty cache."""
    monkeypatch.setattr(_build, "_loaded", {})
    monkeypatch.setenv("SKPMLP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SKPMLP_KERNEL_TARGET", raising=False)
    return tmp_path / "kernels"


def test_backend_choice_and_fallback(monkeypatch):
    spec = population()
    cpu = TrainConfig(task="classification", n_outputs=3)
    assert _choice.choose_trainer(spec, cpu).backend == "native"
    torch_only = dataclasses.replace(cpu, backend="torch")
    assert _choice.choose_trainer(spec, torch_only) is PopulationTrainer
    gpu = dataclasses.replace(cpu, device="cuda", backend="native")
    with pytest.raises(ValueError, match="CPU only"):
        _choice.choose_trainer(spec, gpu)
    monkeypatch.setattr(_kernels, "kernel_available", lambda verbose=False: False)
    assert _choice.choose_trainer(spec, cpu) is PopulationTrainer
    with pytest.raises(ValueError, match="could not be built"):
        _choice.choose_trainer(spec, dataclasses.replace(cpu, backend="native"))


def test_no_compiler_warns_once_and_trains_on_torch(monkeypatch, fresh):
    monkeypatch.setattr(_build, "_compiler", lambda: None)
    with pytest.warns(_kernels.KernelBuildWarning, match="no C.. compiler"):
        assert _build.load_library() is None
    assert _build.load_library() is None  # the second call is silent and cached
    assert not _kernels.kernel_available()
    X, y, _ = data("classification")
    cfg = TrainConfig(task="classification", n_outputs=3, max_iter=1)
    result = train_population(population(), cfg, X, y, [(np.arange(len(X)), None)])
    assert result.n_iter.min() == 1


@needs_kernel
def test_kernel_cache_is_keyed_and_reused(monkeypatch, fresh):
    assert _build.load_library() is not None
    built = list(fresh.glob("mlp_step-*.so"))
    assert len(built) == 1 and _build.build_info()["build_seconds"] > 0
    monkeypatch.setattr(_build, "_loaded", {})
    monkeypatch.setattr(_build, "_build", lambda *a: pytest.fail("rebuilt a cached kernel"))
    assert _build.load_library() is not None
    assert _build.build_info()["build_seconds"] is None  # from the cache


@needs_kernel
def test_verbose_fit_announces_a_first_use_compile(fresh, capsys):
    from sklearn.datasets import load_iris

    from skpmlp import ParallelMLPClassifier

    X, y = load_iris(return_X_y=True)
    ParallelMLPClassifier(hidden_layer_sizes=[(4,)], max_iter=2, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "compiling the native training kernel" in err and "kernel built in" in err


@needs_kernel
@pytest.mark.parametrize("level", _kernels.executable_targets())
def test_each_target_reports_its_width_and_pads_batches_to_it(monkeypatch, level):
    """A target's library reports its ISA, vector bytes and registers; the
    engine pads batches to its lanes."""
    monkeypatch.setenv("SKPMLP_KERNEL_TARGET", level)
    assert _kernels.kernel_available()
    info = _kernels.build_info()
    isa, vector_bytes, registers = LEVEL_ISA[level]
    assert (info["target"], info["built_for"], info["isa"]) == (level, level, isa)
    assert (info["vector_bytes"], info["registers"]) == (vector_bytes, registers)
    assert _kernels.lanes(torch.float32) == vector_bytes // 4
    assert _kernels.lanes(torch.float64) == vector_bytes // 8
    _, X, y, plan = _one_step(PopulationTrainer)
    assert _native.epoch_batches(X, y, plan, "regression")["X"].shape[-1] % (vector_bytes // 8) == 0


@needs_kernel
def test_the_self_test_passes_in_every_library():
    assert _build.load_library().skp_self_test() == 0


def test_a_library_failing_its_self_test_is_rebuilt_once_then_the_default_target_runs(monkeypatch, fresh):
    """The target asked for fails twice (cached, then rebuilt): the default
    target's library is used, with one warning naming both failures."""
    builds, opened = [], []
    monkeypatch.setattr(_build, "_compiler", lambda: sys.executable)
    monkeypatch.setattr(_build, "_compiler_version", lambda compiler: "test")

    def build(compiler, flags, path, verbose, report):
        builds.append(flags[-1])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")

    def open_checked(path):
        opened.append(path)
        if len(opened) <= 2:
            raise _build._KernelUnusable("its self-test fails (code 12)")
        return "library"

    monkeypatch.setattr(_build, "_announced_build", build)
    monkeypatch.setattr(_build, "_open_checked", open_checked)
    monkeypatch.setenv("SKPMLP_KERNEL_TARGET", "x86-64-v3")
    with pytest.warns(_kernels.KernelBuildWarning, match="instead of 'x86-64-v3'.*self-test fails"):
        assert _build.load_library() == "library"
    assert builds == ["-march=x86-64-v3", "-march=x86-64-v3", "-fno-math-errno"]  # twice, then no -march
    assert _build._loaded["x86-64-v3"]["target"] == "default"


def test_every_target_failing_falls_back_to_torch_with_the_reasons(monkeypatch, fresh):
    monkeypatch.setattr(_build, "_compiler", lambda: sys.executable)
    monkeypatch.setattr(_build, "_compiler_version", lambda compiler: "test")
    monkeypatch.setattr(_build, "_announced_build", lambda compiler, flags, path, *a: path.parent.mkdir(
        parents=True, exist_ok=True) or path.write_bytes(b""))

    def unusable(path):
        raise _build._KernelUnusable("it dies with signal 4 on this CPU")

    monkeypatch.setattr(_build, "_open_checked", unusable)
    with pytest.warns(_kernels.KernelBuildWarning, match="signal 4.*falls back to the slower torch path"):
        assert _build.load_library() is None
    assert "'native'" in _build.build_info()["error"] and "'default'" in _build.build_info()["error"]
    assert not list(fresh.glob("*.so"))  # the unusable libraries are deleted


def test_a_failing_compile_unit_is_reported_at_once_and_the_others_stopped():
    """The units compile side by side: one that fails ends the build with
    its own messages, without waiting for the others, which are stopped."""
    slow = [sys.executable, "-c", "import time; time.sleep(60)"]
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('unit.cpp:7: error: boom'); sys.exit(1)"]
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="unit.cpp:7: error: boom"):
        _build._run_side_by_side([slow, failing, slow])
    assert time.monotonic() - start < 30


def test_compile_units_past_the_timeout_are_stopped(monkeypatch):
    monkeypatch.setattr(_build, "COMPILE_TIMEOUT", 0.5)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="ran past 0.5 s"):
        _build._run_side_by_side([[sys.executable, "-c", "import time; time.sleep(60)"]])
    assert time.monotonic() - start < 30


@needs_kernel
def test_the_library_links_every_compile_unit():
    """Each entry point comes from the unit that defines it (SKP_PART):
    float's, double's and the L-BFGS step's, and the self-test spans two."""
    library = _build.load_library()
    for name in ("skp_run_f32", "skp_run_f64", "skp_run_epochs_f32", "skp_run_epochs_f64",
                 "skp_forward_f32", "skp_forward_f64", "skp_lbfgs_f32", "skp_lbfgs_f64",
                 "skp_self_test", "skp_self_test_f64", "skp_target", "skp_layout"):
        assert hasattr(library, name), name
    assert library.skp_self_test_f64() == 0


def test_a_child_killed_by_an_illegal_instruction_is_reported(monkeypatch, tmp_path):
    """The self-test of a new library runs in a child process: a library
    built for instructions the CPU lacks kills the child, not the caller."""
    monkeypatch.setattr(_build, "_CHILD_SELF_TEST", "import os, signal; os.kill(os.getpid(), signal.SIGILL)")
    with pytest.raises(_build._KernelUnusable, match="signal 4"):
        _build._self_test_in_child(tmp_path / "none.so")


@needs_kernel
def test_a_killed_builds_temporary_files_are_removed(monkeypatch, fresh):
    compiler = _build._compiler()
    flags = _build._FLAGS + _build.target_flags("native")
    path = _build._library_path(compiler, flags)
    path.parent.mkdir(parents=True)
    stale = path.parent / f"{path.stem}.tmp-killed.so"
    stale.write_bytes(b"half a library")
    assert _build.load_library() is not None
    assert not stale.exists() and path.exists()


def test_a_target_that_is_not_a_name_is_refused(monkeypatch, fresh):
    monkeypatch.setenv("SKPMLP_KERNEL_TARGET", "native -O0")
    with pytest.warns(_kernels.KernelBuildWarning, match="not a target name"):
        assert _build.load_library() is None


def test_the_cpu_identity_names_the_cpu_or_the_host(monkeypatch):
    identity = _build.cpu_identity()
    if sys.platform.startswith("linux"):
        assert "flags" in identity or "Features" in identity
    monkeypatch.setattr(_build, "_linux_cpu_fields", lambda: [])
    monkeypatch.setattr(_build, "_sysctl_cpu_fields", lambda: [])
    monkeypatch.setattr(_build.platform, "node", lambda: "host-a")
    assert "host-a" in _build.cpu_identity()


def test_executable_targets_are_cumulative(monkeypatch):
    v3_flags = " ".join(sorted(_build._X86_LEVELS["x86-64-v2"] | _build._X86_LEVELS["x86-64-v3"]))
    monkeypatch.setattr(_build, "_linux_cpu_fields", lambda: [f"flags\t: {v3_flags}"])
    assert _build.executable_targets() == ["x86-64-v2", "x86-64-v3"]
    monkeypatch.setattr(_build, "_linux_cpu_fields", lambda: ["flags\t: avx512f sse4_2"])  # no v2
    assert _build.executable_targets() == []


# ------------------------------------------------------ argument checks
def _epoch_call():
    trainer, X, y, plan = _one_step(_native.NativeTrainer)
    batches = _native.epoch_batches(X, y, plan, "regression")
    batches.update(counts=plan.counts.numpy(), weight_sums=plan.weight_sums, stepping=plan.stepping,
                   step0=np.zeros(1))
    state = trainer.optimizer.state
    buffers = {"params": trainer.net.flat.detach(), "grads": None, "state1": state[0], "state2": state[1],
               "loss_sums": trainer.loss_sums}
    return trainer._meta.copy(), trainer._hyper.copy(), batches, buffers


def _run(meta, hyper, batches, buffers):
    _kernels.run_models("epoch", meta, hyper, batches, buffers, n_outputs=2, loss="squared")


@needs_kernel
@pytest.mark.parametrize("spoil, error, match", [
    (lambda m, h, b, f: f.update(params=f["params"].float()), TypeError, "float64"),
    (lambda m, h, b, f: b.update(X=b["X"].transpose(2, 3)), ValueError, "contiguous"),
    (lambda m, h, b, f: b.update(W=b["W"][..., :-1].contiguous()), ValueError, "W must have shape"),
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["w_off"]), 10**9), ValueError, "outside"),
    # the first bad layer named
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["ld"] + 1), 0), ValueError,
     "layer 1: sizes must be positive"),
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["b_off"] + 1), 10**9), ValueError,
     "layer 1: a weight or bias range lies outside"),
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["depth"]), 99), ValueError, "depth"),
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["fold"]), 3), ValueError, "fold"),
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["slot"]), -1), ValueError, "slot"),
    (lambda m, h, b, f: f.update(state2=None), ValueError, "Adam"),
    (lambda m, h, b, f: b.update(stepping=np.ones((5, 1))), ValueError, "stepping must have shape"),
])
def test_bad_kernel_arguments_raise_before_the_call(spoil, error, match):
    meta, hyper, batches, buffers = _epoch_call()
    params = buffers["params"]
    before = params.clone()
    spoil(meta, hyper, batches, buffers)
    with pytest.raises(error, match=match):
        _run(meta, hyper, batches, buffers)
    assert before.equal(params)  # nothing was written


@needs_kernel
@pytest.mark.parametrize("spoil, error, match", [
    (lambda m, h, b, f: m.__setitem__((0, _kernels.META_FIELDS["w_off"]), 10**9), ValueError, "outside"),
    (lambda m, h, b, f: f.update(state2=None), ValueError, "Adam"),
    (lambda m, h, b, f: f.update(params=f["params"][:-1].contiguous(), state1=f["state1"][:-1].contiguous(),
                                 state2=f["state2"][:-1].contiguous()), ValueError, "outside"),
    (lambda m, h, b, f: h.__setitem__((0, _kernels.HYPER_FIELDS["momentum"]), 0.9)
     or m.__setitem__((0, _kernels.META_FIELDS["solver"]), 1) or f.update(state1=None), ValueError, "momentum"),
])
def test_tables_checked_once_are_checked_again_when_anything_they_index_changes(spoil, error, match):
    """The kernel skips checking tables equal to ones it checked against the
    same buffers (every epoch of a run hands it the same): a call that
    passed, then the same call spoilt, is still refused."""
    meta, hyper, batches, buffers = _epoch_call()
    _run(meta.copy(), hyper.copy(), batches, dict(buffers))  # checked, remembered
    _run(meta.copy(), hyper.copy(), batches, dict(buffers))  # remembered
    spoil(meta, hyper, batches, buffers)
    before = buffers["params"].clone()
    with pytest.raises(error, match=match):
        _run(meta, hyper, batches, buffers)
    assert before.equal(buffers["params"])


@needs_kernel
def test_argument_checks_hold_under_python_O():
    """The checks are exceptions, not asserts: ``python -O`` keeps them."""
    code = (
        "import sys; sys.path[:0] = ['tests/kernels', 'tests']\n"
        "from test_kernel_build import _epoch_call, _run\n"
        "from skpmlp import _kernels\n"
        "meta, hyper, batches, buffers = _epoch_call()\n"
        "meta[0, _kernels.META_FIELDS['w_off']] = 10**9\n"
        "try:\n    _run(meta, hyper, batches, buffers)\nexcept ValueError:\n    sys.exit(0)\nsys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_auto_trains_wide_hidden_layers_on_torch():
    """``backend="auto"`` keeps the kernel where it measured faster and
    takes torch where wide hidden-to-hidden layers hold most of the work;
    ``backend="native"`` keeps the kernel anyway."""
    from skpmlp._engine import PopulationSpec

    def spec(archs):
        n = len(archs)
        return PopulationSpec(archs, ["relu"] * n, np.full(n, 1e-3), np.full(n, 1e-4), [(0, i) for i in range(n)])

    auto = TrainConfig(task="classification", n_outputs=3)
    if not _kernels.kernel_available():
        pytest.skip("no native kernel")
    assert _choice.choose_trainer(spec([(64,), (128, 64), (512,)]), auto) is _native.NativeTrainer
    wide = spec([(512, 512), (16,)])
    assert "256+" in _choice.torch_is_faster(wide)
    assert _choice.choose_trainer(wide, auto) is PopulationTrainer
    assert _choice.choose_trainer(wide, dataclasses.replace(auto, backend="native")) is _native.NativeTrainer


def test_every_file_the_build_reads_is_installed():
    """``pip install .`` copies what ``setup.cfg``'s package_data names and
    nothing else that is not Python: a header missing there leaves an
    installed skpmlp without its kernel (it happened to vector_target.h)."""
    import configparser
    import fnmatch
    from pathlib import Path

    setup = configparser.ConfigParser()
    setup.read(Path(__file__).parents[2] / "setup.cfg")
    patterns = setup["options.package_data"]["skpmlp._kernels"].replace(",", " ").split()
    for path in _build.SOURCES + _build.HEADERS:
        assert any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns), path.name


def test_the_cpp_update_codes_are_the_solver_tables():
    """mlp_step.cpp names the update codes of skpmlp/_kernels/_solvers.py."""
    import re

    from skpmlp._kernels import kernel_code

    source = (Path(_kernels.__file__).parent / "mlp_step.cpp").read_text()
    body = re.search(r"enum Update \{([^}]*)\}", source).group(1)
    cpp = {name.strip(): int(code) for name, code in
           (item.split("=") for item in body.split(","))}
    expected = {"ADAM": kernel_code("adam"), "SGD": kernel_code("sgd"),
                "ADAM_AMSGRAD": kernel_code("adam", True), "ADAMW": kernel_code("adamw"),
                "ADAMW_AMSGRAD": kernel_code("adamw", True)}
    assert cpp == expected


def test_the_cpp_hyper_columns_are_the_tables():
    """mlp_step.cpp reads the ``hyper`` columns skpmlp/_kernels/_tables.py
    names (label smoothing and dropout's scale among them), in a row of the
    same width."""
    import re

    from skpmlp._kernels import HYPER_FIELDS, HYPER_WIDTH

    source = (Path(_kernels.__file__).parent / "mlp_step.cpp").read_text()
    names = [item.split("=")[0].strip()
             for item in re.search(r"enum Hyper \{([^}]*)\}", source).group(1).split(",")]
    assert names[-1] == "HYPER" and f"HYPER = {HYPER_WIDTH}" in source
    cpp = {"H_LR": "lr", "H_ALPHA": "alpha", "H_BETA1": "beta_1", "H_BETA2": "beta_2", "H_EPS": "epsilon",
           "H_MOMENTUM": "momentum", "H_STEP_OFFSET": "step_offset", "H_SMOOTHING": "label_smoothing",
           "H_DROP_SCALE": "dropout_scale"}
    assert {cpp[name]: column for column, name in enumerate(names[:-1])} == HYPER_FIELDS
