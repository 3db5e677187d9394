"""Compile the native step kernel on first use, cache it, load it with ctypes.

The kernel is one C++ file with a plain C interface (no Python or torch
headers), so a build takes a couple of seconds with the system compiler and
needs nothing but a C++17 compiler. It is compiled on the machine that runs
it, which is what makes ``-march=native`` safe, and cached per source,
compiler, flags and CPU under ``$SKPMLP_CACHE_DIR`` (default
``~/.cache/skpmlp``). Where no compiler works, :func:`load_library` returns
None once with a warning, and the engine keeps its torch path.

Why not a build step in ``pip install``: a wheel built there could not use
``-march=native`` (the step is 2-3x slower without AVX-512 / FMA code paths
chosen for the CPU at hand), and a first-use build keeps ``pip install .``
as fast and as dependency-free as before.
"""

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

try:  # POSIX: a lock file keeps concurrent processes from building twice
    import fcntl
except ImportError:  # pragma: no cover - Windows builds to a temp file and renames anyway
    fcntl = None

#: The kernel sources, built into one library: the step (mlp_step.cpp) and
#: the fused L-BFGS bookkeeping (lbfgs.cpp).
SOURCES = tuple(Path(__file__).with_name(name) for name in ("mlp_step.cpp", "lbfgs.cpp"))

_FLAGS = ["-O3", "-std=c++17", "-shared", "-fPIC", "-pthread", "-fno-math-errno"]
_NATIVE = ["-march=native"]

_lock = threading.Lock()
_state = {"loaded": False, "library": None, "error": None, "build_seconds": None}


class KernelBuildWarning(UserWarning):
    """The native kernel could not be built or loaded; training uses torch."""


def _compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _cpu_signature():
    """What ``-march=native`` depends on: the CPU model and its flags."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        lines = [l for l in text.splitlines() if l.startswith(("model name", "flags"))][:2]
        return "\n".join(lines)
    except OSError:
        return platform.processor() + platform.machine()


def _compiler_version(compiler):
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def cache_dir():
    """Folder holding the compiled kernels."""
    root = os.environ.get("SKPMLP_CACHE_DIR") or Path.home() / ".cache" / "skpmlp"
    return Path(root) / "kernels"


def _build(compiler, flags, target):
    """Compile into a temporary file beside ``target``, then rename, under a
    lock file: several processes (test workers, joblib shards) may ask at
    once, and the later ones wait and reuse the first one's build."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            _compile(compiler, flags, target)


def _compile(compiler, flags, target):
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run(
            [compiler, *flags, *map(str, SOURCES), "-o", tmp], capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip()[-2000:])
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _compile_and_load(verbose):
    compiler = _compiler()
    if compiler is None:
        raise RuntimeError("no C++ compiler found (set CXX, or install g++ or clang++)")
    version = _compiler_version(compiler)
    source = b"\0".join(path.read_bytes() for path in SOURCES)
    last_error = None
    # -march=native is not understood everywhere (some clang targets): fall
    # back to the compiler's default target
    for flags in (_FLAGS + _NATIVE, _FLAGS):
        key = hashlib.sha256(
            b"\0".join([source, version.encode(), " ".join(flags).encode(), _cpu_signature().encode()])
        ).hexdigest()[:20]
        target = cache_dir() / f"mlp_step-{key}.so"
        if not target.exists():
            if verbose:
                print(f"[skpmlp] compiling the native training kernel ({' '.join(flags)}) ...", file=sys.stderr)
            start = time.perf_counter()
            try:
                _build(compiler, flags, target)
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                last_error = error
                continue
            _state["build_seconds"] = time.perf_counter() - start
            if verbose:
                print(f"[skpmlp] kernel built in {_state['build_seconds']:.1f} s, cached in {target}", file=sys.stderr)
        return ctypes.CDLL(str(target))
    raise RuntimeError(f"compiling {', '.join(p.name for p in SOURCES)} failed: {last_error}")


def load_library(verbose=False):
    """The loaded kernel library, or None where it cannot be built (warned
    once per process)."""
    with _lock:
        if not _state["loaded"]:
            _state["loaded"] = True
            if os.environ.get("SKPMLP_DISABLE_KERNEL"):
                _state["error"] = "disabled by SKPMLP_DISABLE_KERNEL"
                return None
            try:
                _state["library"] = _compile_and_load(verbose)
            except (RuntimeError, OSError) as error:
                _state["error"] = str(error)
                warnings.warn(
                    f"skpmlp's native training kernel is unavailable ({error}); training falls back "
                    f"to the slower torch path.",
                    KernelBuildWarning, stacklevel=3,
                )
        return _state["library"]


def build_info():
    """``{"available", "error", "build_seconds"}`` of this process's kernel."""
    return {
        "available": _state["library"] is not None,
        "error": _state["error"],
        "build_seconds": _state["build_seconds"],
    }
