"""Compile the native kernels on first use for a chosen CPU target, check
them, cache them, load them with ctypes.

The kernels are two C++ files and one header with a plain C interface (no
Python or torch headers), so a build needs nothing but a C++17 compiler. It
compiles the step's float and double halves and the L-BFGS step side by
side (:data:`UNITS`), then links them: about half a minute on two cores.

The target is ``SKPMLP_KERNEL_TARGET`` (default ``native``): ``native``
compiles for the CPU at hand (``-march=native``), ``default`` for the
compiler's default target (no ``-march``), and any other value is passed
as ``-march=<target>`` (``x86-64-v2``, ``x86-64-v3``, ``x86-64-v4``,
``armv8.2-a``, ...). Build for the lowest common target where one home
directory serves several kinds of CPU, or where a container built on one
machine runs on another. The vector width and register tiles of the kernel
follow the target (``vector_target.h``); :func:`build_info` reports them.

Libraries are cached under ``$SKPMLP_CACHE_DIR`` (default
``~/.cache/skpmlp``), keyed by the sources, the compiler, the flags and the
CPU's identity. A new library runs its self-test in a child process before
it is first loaded (an illegal instruction kills the child, not the
caller), and every load runs it again in process. A library that fails
either is rebuilt once, then the compiler's default target is tried, and
only then does :func:`load_library` return None, with one warning saying
why; the engine then keeps its torch path.

Why not a build step in ``pip install``: see ``docs/design.md`` ("Native
kernels: compiled on first use"). In short, one compile for the CPU at hand
runs at its full width; a wheel would have to carry one library per width
and dispatch at load, as PyTorch's ``ATEN_CPU_CAPABILITY`` does.
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

_HERE = Path(__file__).parent
#: The kernel sources, built into one library: the step (mlp_step.cpp) and
#: the fused L-BFGS bookkeeping (lbfgs.cpp).
SOURCES = tuple(_HERE / name for name in ("mlp_step.cpp", "lbfgs.cpp"))
#: Headers the sources include (part of the cache key).
HEADERS = (_HERE / "vector_target.h", _HERE / "work_queue.h")

_FLAGS = ["-O3", "-std=c++17", "-shared", "-fPIC", "-pthread", "-fno-math-errno"]
#: The environment variable naming the compile target.
TARGET_VARIABLE = "SKPMLP_KERNEL_TARGET"
#: The environment variable that turns the kernels off.
DISABLE_VARIABLE = "SKPMLP_DISABLE_KERNEL"

_lock = threading.Lock()
#: target -> {"library", "error", "build_seconds", "target", "path"}; one
#: entry per target asked for in this process
_loaded = {}


class KernelBuildWarning(UserWarning):
    """The native kernel could not be built or loaded; training uses torch."""


class _KernelUnusable(RuntimeError):
    """A built library that cannot be used here (it does not load or fails
    its self-test)."""


def kernel_target():
    """The compile target asked for: ``$SKPMLP_KERNEL_TARGET`` or ``"native"``."""
    return os.environ.get(TARGET_VARIABLE, "").strip() or "native"


def target_flags(target):
    """The compiler flags selecting ``target``."""
    if target == "default":
        return []
    if any(c.isspace() for c in target) or target.startswith("-"):
        raise ValueError(
            f"{TARGET_VARIABLE}={target!r} is not a target name (e.g. native, x86-64-v3)."
        )
    return [f"-march={target}"]


# the CPU flags (as /proc/cpuinfo names them) each x86-64 level needs
_X86_LEVELS = {
    "x86-64-v2": {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"},
    "x86-64-v3": {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
    "x86-64-v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
}


def executable_targets():
    """The x86-64 levels this CPU executes, narrowest first (each level
    needs the ones before it); empty on other CPUs or where the flags
    cannot be read. What the tests and ``benchmarks/step.py`` build for
    besides ``native``."""
    flags = set()
    for line in _linux_cpu_fields():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
    levels, needed = [], set()
    for level, level_flags in _X86_LEVELS.items():
        needed |= level_flags
        if not flags or not needed <= flags:
            break
        levels.append(level)
    return levels


def _compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


# /proc/cpuinfo fields that name a CPU and its features: x86 (model name,
# flags), aarch64 (CPU implementer / part / variant / revision, Features)
_CPUINFO_FIELDS = (
    "vendor_id",
    "cpu family",
    "model",
    "model name",
    "flags",
    "CPU implementer",
    "CPU architecture",
    "CPU variant",
    "CPU part",
    "CPU revision",
    "Features",
)


def cpu_identity():
    """What ``-march=native`` depends on: the CPU's model and features.

    Read from ``/proc/cpuinfo`` on Linux (x86 and aarch64 alike) and from
    ``sysctl`` on macOS. Where neither says anything, the host's name
    stands in, so that two machines sharing a home directory never share a
    library built for one of them.
    """
    parts = [platform.system(), platform.machine()]
    found = _linux_cpu_fields() or _sysctl_cpu_fields()
    if not found:
        found = [f"unidentified CPU on host {platform.node()}: {platform.processor()}"]
    return "\n".join(parts + found)


def _linux_cpu_fields():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    first = text.split("\n\n")[0]  # the first processor's block
    return [
        line.strip()
        for line in first.splitlines()
        if line.split(":")[0].strip() in _CPUINFO_FIELDS
    ]


def _sysctl_cpu_fields():
    if platform.system() != "Darwin":
        return []
    names = [
        "machdep.cpu.brand_string",
        "machdep.cpu.features",
        "machdep.cpu.leaf7_features",
        "hw.cputype",
        "hw.cpusubtype",
        "hw.cpufamily",
    ]
    try:
        done = subprocess.run(["sysctl", *names], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line for line in done.stdout.splitlines() if line.strip()]


def _compiler_version(compiler):
    try:
        return subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def cache_dir():
    """Folder holding the compiled kernels."""
    root = os.environ.get("SKPMLP_CACHE_DIR") or Path.home() / ".cache" / "skpmlp"
    return Path(root) / "kernels"


def _library_path(compiler, flags):
    sources = b"\0".join(path.read_bytes() for path in SOURCES + HEADERS)
    key = hashlib.sha256(
        b"\0".join(
            [
                sources,
                _compiler_version(compiler).encode(),
                " ".join(flags).encode(),
                cpu_identity().encode(),
            ]
        )
    ).hexdigest()[:20]
    return cache_dir() / f"mlp_step-{key}.so"


def _build(compiler, flags, target):
    """Compile into a temporary file beside ``target``, then rename, under a
    lock file: several processes (test workers, joblib shards) may ask at
    once, and the later ones wait and reuse the first one's build.
    Temporary files of an earlier build that was killed are removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in target.parent.glob(f"{target.stem}.tmp-*"):  # nobody else builds this key now
            stale.unlink(missing_ok=True)
        if not target.exists():
            _compile(compiler, flags, target)


#: The library's compile units, ``(source, defines)``, compiled side by
#: side into objects and then linked: mlp_step.cpp's float and double
#: halves (its ``SKP_PART``; each about half of its compile) and the L-BFGS
#: step. One compile of both sources took 65 s on a 2-core Intel Xeon, the
#: units side by side 33 s.
UNITS = ((SOURCES[0], ("-DSKP_PART=1",)), (SOURCES[0], ("-DSKP_PART=2",)), (SOURCES[1], ()))
#: Seconds a compile unit, or the link, may take.
COMPILE_TIMEOUT = 300


def _compile(compiler, flags, target):
    fd, tmp = tempfile.mkstemp(prefix=f"{target.stem}.tmp-", suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        with tempfile.TemporaryDirectory(prefix="skpmlp-objects-") as objects:
            paths = [str(Path(objects) / f"unit{i}.o") for i in range(len(UNITS))]
            object_flags = [flag for flag in flags if flag != "-shared"]
            _run_side_by_side([[compiler, *object_flags, *defines, "-c", str(source), "-o", path]
                               for (source, defines), path in zip(UNITS, paths)])
            _run_side_by_side([[compiler, *flags, *paths, "-o", tmp]])
        _self_test_in_child(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _run_side_by_side(commands):
    """Run the compiler ``commands`` at once. RuntimeError with a failed
    command's message as soon as one fails, or when they run past
    :data:`COMPILE_TIMEOUT`; the others are then stopped. Each command's
    messages go to a file of its own, which no amount of them fills."""
    logs = [tempfile.TemporaryFile(mode="w+") for _ in commands]
    running = []
    try:
        for command, log in zip(commands, logs):  # one that cannot start stops those started
            running.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, text=True)
            )
        deadline = time.monotonic() + COMPILE_TIMEOUT
        pending = list(zip(running, logs))
        while pending:
            for process, log in list(pending):
                if process.poll() is None:
                    continue
                pending.remove((process, log))
                if process.returncode != 0:
                    log.seek(0)
                    raise RuntimeError(log.read().strip()[-2000:])
            if pending and time.monotonic() > deadline:
                raise RuntimeError(f"the compiler ran past {COMPILE_TIMEOUT} s")
            time.sleep(0.05 if pending else 0)
    finally:
        for process in running:
            if process.poll() is None:
                process.kill()
            process.wait()
        for log in logs:
            log.close()


_CHILD_SELF_TEST = "import ctypes, sys; sys.exit(ctypes.CDLL(sys.argv[1]).skp_self_test())"


def _self_test_in_child(path):
    """Load ``path`` and run its self-test in a child process: a library
    built for instructions this CPU lacks dies there (SIGILL), not here."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD_SELF_TEST, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode < 0:
        raise _KernelUnusable(
            f"it dies with signal {-done.returncode} on this CPU (built for instructions "
            f"the CPU does not have?)"
        )
    if done.returncode != 0:
        raise _KernelUnusable(
            f"its self-test fails (code {done.returncode}): {done.stderr.strip()[-300:]}"
        )


def _open_checked(path):
    try:
        library = ctypes.CDLL(str(path))
    except OSError as error:
        raise _KernelUnusable(f"it does not load ({error})") from None
    code = library.skp_self_test()
    if code != 0:
        raise _KernelUnusable(f"its self-test fails (code {code})")
    return library


def _compile_and_load(target, verbose, report):
    compiler = _compiler()
    if compiler is None:
        raise RuntimeError("no C++ compiler found (set CXX, or install g++ or clang++)")
    problems = []
    # the target asked for, then the compiler's default where that fails
    # (-march=native is not understood everywhere, a named target may not
    # run on this CPU)
    for attempt in dict.fromkeys([target, "default"]):
        flags = _FLAGS + target_flags(attempt)
        path = _library_path(compiler, flags)
        for rebuild in (False, True):  # a cached library that fails is rebuilt once
            try:
                if rebuild or not path.exists():
                    path.unlink(missing_ok=True)
                    _announced_build(compiler, flags, path, verbose, report)
                library = _open_checked(path)
            except _KernelUnusable as error:
                problems.append(f"the library built for {attempt!r} is unusable: {error}")
                path.unlink(missing_ok=True)
                continue
            except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                problems.append(f"compiling for {attempt!r} failed: {error}")
                break  # a compile error repeats: try the next target
            report.update(path=str(path), target=attempt, problems=problems)
            return library
    raise RuntimeError("; ".join(problems))


def _announced_build(compiler, flags, path, verbose, report):
    if verbose:
        print(
            f"[skpmlp] compiling the native training kernel ({' '.join(flags)}) ...",
            file=sys.stderr,
        )
    start = time.perf_counter()
    _build(compiler, flags, path)
    report["build_seconds"] = time.perf_counter() - start
    if verbose:
        print(
            f"[skpmlp] kernel built in {report['build_seconds']:.1f} s, cached in {path}",
            file=sys.stderr,
        )


def load_library(verbose=False):
    """The kernel library for :func:`kernel_target`, or None where it cannot
    be built or used here (warned once per process and target)."""
    target = kernel_target()
    with _lock:
        entry = _loaded.get(target)
        if entry is None:
            entry = _loaded[target] = _load(target, verbose)
        return entry["library"]


def _load(target, verbose):
    entry = {
        "library": None,
        "error": None,
        "build_seconds": None,
        "target": target,
        "path": None,
        "problems": [],
    }
    if os.environ.get(DISABLE_VARIABLE):
        entry["error"] = f"disabled by {DISABLE_VARIABLE}"
        return entry
    try:
        target_flags(target)
        entry["library"] = _compile_and_load(target, verbose, entry)
    except (RuntimeError, OSError, ValueError) as error:
        entry["error"] = str(error)
        warnings.warn(
            f"skpmlp's native training kernel is unavailable ({error}); training falls back to "
            f"the slower torch path.",
            KernelBuildWarning,
            stacklevel=4,
        )
        return entry
    if entry["problems"]:  # it runs, at another target than the one asked for
        warnings.warn(
            f"skpmlp's native kernel runs built for {entry['target']!r} instead of {target!r}: "
            f"{'; '.join(entry['problems'])}.",
            KernelBuildWarning,
            stacklevel=4,
        )
    return entry


def _describe(library):
    vector_bytes, registers = ctypes.c_int(), ctypes.c_int()
    tiles = (ctypes.c_int * 4)()
    isa = ctypes.create_string_buffer(32)
    library.skp_target(ctypes.byref(vector_bytes), ctypes.byref(registers), tiles, isa, len(isa))
    return {
        "isa": isa.value.decode(),
        "vector_bytes": vector_bytes.value,
        "registers": registers.value,
        "tiles": {"matmul": (tiles[0], tiles[1]), "outer": (tiles[2], tiles[3])},
    }


def build_info():
    """The kernel of this process's target.

    Returns
    -------
    dict
        ``available``; ``target`` (asked for), ``built_for`` (the target it
        was built for: the default target where the one asked for failed);
        ``isa`` (``"avx512"``, ``"avx2-fma"``, ``"avx"``, ``"sse4.2"``,
        ``"sse2"``, ``"neon"`` or ``"generic"``), ``vector_bytes``,
        ``registers`` and ``tiles`` (rows x vectors of the matmul's and the
        weight gradient's register tiles); ``path`` of the cached library,
        ``build_seconds`` (None when it came from the cache) and ``error``
        (why it is unavailable).
    """
    target = kernel_target()
    entry = _loaded.get(target) or {
        "library": None,
        "error": None,
        "build_seconds": None,
        "path": None,
    }
    info = {
        "available": entry["library"] is not None,
        "target": target,
        "built_for": entry.get("target"),
        "error": entry["error"],
        "build_seconds": entry["build_seconds"],
        "path": entry["path"],
        "isa": None,
        "vector_bytes": None,
        "registers": None,
        "tiles": None,
    }
    if entry["library"] is not None:
        # asked of the library once: every batch's padding reads the lanes
        if "description" not in entry:
            entry["description"] = _describe(entry["library"])
        description = entry["description"]
        info.update(description, tiles=dict(description["tiles"]))
    return info
