"""Compile the Triton kernels of the fused step for a GPU, without one.

Run as a script, in a process that does not interpret (``TRITON_INTERPRET``
unset: under the interpreter ``triton.jit`` gives functions that cannot be
compiled)::

    python tests/kernels/triton_compile.py ARCH MODE KERNEL:DTYPE:LOSS:WIDTH ...

``ARCH`` is the compute capability (80, 90), ``MODE`` ``front`` (Triton's
front end: types, shapes, control flow) or ``full`` (to a cubin through
ptxas), each ``KERNEL`` ``epoch_one_hidden`` or ``epoch_deep`` in ``DTYPE``
``fp32`` or ``fp64`` for loss code ``LOSS`` and hidden width class
``WIDTH``. Each kernel is compiled as :class:`skpmlp._engine._backends._triton.TritonTrainer`
launches it (its tile sizes, warps and stages from ``launch_settings`` for
30 features, 3 outputs and batches of 200 rows; pointers 16-byte aligned,
as torch allocates them) and prints one JSON line: registers, spilled
bytes and stack frame as ptxas's log reports them (None where triton does
not print it) and the shared memory Triton allocates (``full`` only; the
compiled object's ``n_regs`` and ``n_spills`` are read from a loaded
kernel, which needs a device).

Written for the API of the triton the tests run (3.5 and later:
``ASTSource`` with ``constexprs`` and ``attrs``, ``triton.knobs``). Where
this triton cannot compile for the GPU (a build without the NVIDIA backend,
or without ptxas for ``full``), it prints why and exits with
:data:`UNAVAILABLE`.
"""

import contextlib
import io
import json
import re
import sys
import time
from pathlib import Path

N_FEATURES, N_OUTPUTS, BATCH = 30, 3, 200
#: exit status where this triton cannot compile for an NVIDIA GPU here
UNAVAILABLE = 77

#: pointers whose element type is not the run's dtype
_POINTER_TYPES = {
    "rows_ptr": "*i64",
    "meta_ptr": "*i64",
    "wsum_ptr": "*fp64",
    "hyper_ptr": "*fp64",
    "stepping_ptr": "*i8",
    "step0_ptr": "*fp32",
}


def launch_constants(name, width, loss):
    """The constexpr arguments and compile options of a launch, as
    ``TritonTrainer._launch`` passes them."""
    from skpmlp._engine._backends._triton import launch_settings  # noqa: PLC0415

    settings = launch_settings(width, N_FEATURES, N_OUTPUTS, BATCH)
    options = {
        "num_warps": settings["num_warps"],
        "num_stages": settings["num_stages"],
        "enable_fp_fusion": True,
    }
    constants = {"LOSS": loss, "H": width, "C_PAD": settings["C_PAD"], "BB": settings["BB"]}
    if name == "epoch_one_hidden":
        constants["F_PAD"] = settings["F_PAD"]
    else:
        constants.update(BF=settings["BF"], DW=max(width, settings["C_PAD"]))
    return constants, options


def source(fn, dtype, constants):
    """``fn``'s ASTSource: the arguments' types (``y`` holds class indices
    for the softmax loss, targets otherwise) and the divisibility the
    launcher finds on aligned pointers."""
    import triton  # noqa: PLC0415

    types = dict(_POINTER_TYPES, y_ptr="*i64" if constants["LOSS"] == 0 else "*" + dtype)
    signature = {}
    for arg in fn.arg_names:
        if arg in constants:
            signature[arg] = "constexpr"
        elif arg.endswith("_ptr"):
            signature[arg] = types.get(arg, "*" + dtype)
        else:
            signature[arg] = "i32"
    aligned = {
        (i,): [["tt.divisibility", 16]]
        for i, arg in enumerate(fn.arg_names)
        if signature[arg].startswith("*")
    }
    return triton.compiler.ASTSource(
        fn=fn, signature=signature, constexprs=constants, attrs=aligned
    )


def front_end(src, target, options):
    """Triton's front end only (to TTIR)."""
    from triton._C.libtriton import ir  # noqa: PLC0415
    from triton.backends.nvidia.compiler import CUDABackend  # noqa: PLC0415

    backend = CUDABackend(target)
    options = backend.parse_options(options)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src.make_ir(
        target,
        options,
        backend.get_codegen_implementation(options),
        backend.get_module_map(),
        context,
    )


def ptxas_figures(log):
    """Registers, spill stores and loads, and stack frame (bytes) from
    ptxas's verbose log."""
    figures = {}
    for key, pattern in (
        ("regs", r"Used (\d+) registers"),
        ("stack", r"(\d+) bytes stack frame"),
        ("spill_stores", r"(\d+) bytes spill stores"),
        ("spill_loads", r"(\d+) bytes spill loads"),
    ):
        found = re.search(pattern, log)
        figures[key] = int(found.group(1)) if found else None
    return figures


def unavailable(arch, mode):
    """Why this triton cannot compile for compute capability ``arch`` in
    ``mode`` here, or None."""
    from triton.backends import backends  # noqa: PLC0415

    if "nvidia" not in backends:
        return f"this triton build has no NVIDIA backend (it has {sorted(backends)})"
    if mode == "full":
        from triton.backends.nvidia.compiler import get_ptxas  # noqa: PLC0415

        try:
            get_ptxas(arch).path
        except Exception as error:  # a missing binary, or one that does not run
            return f"no ptxas for sm_{arch}: {error}"
    return None


def main(arch, mode, specs):
    """Compile each of ``specs`` (``KERNEL:DTYPE:LOSS:WIDTH``) for compute
    capability ``arch`` in ``mode`` and print its figures, a JSON line each."""
    import triton  # noqa: PLC0415
    from triton import knobs  # noqa: PLC0415
    from triton.backends.compiler import GPUTarget  # noqa: PLC0415

    from skpmlp._kernels import _triton_step  # noqa: PLC0415

    reason = unavailable(arch, mode)
    if reason is not None:
        print(reason)
        sys.exit(UNAVAILABLE)
    # compiled every time, so that ptxas runs and its log says what it used
    knobs.compilation.always_compile = True
    knobs.nvidia.dump_ptxas_log = True
    target = GPUTarget("cuda", arch, 32)
    for spec in specs:
        name, dtype, loss, width = spec.split(":")
        constants, options = launch_constants(name, int(width), int(loss))
        src = source(getattr(_triton_step, name), dtype, constants)
        started = time.perf_counter()
        result = {"kernel": spec, "arch": arch, "mode": mode}
        if mode == "front":
            front_end(src, target, options)
        else:
            log = io.StringIO()
            with contextlib.redirect_stdout(log):  # where triton prints the ptxas log
                compiled = triton.compile(src, target=target, options=options)
            result.update(ptxas_figures(log.getvalue()), shared=compiled.metadata.shared)
        result["seconds"] = round(time.perf_counter() - started, 1)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    # this checkout's skpmlp, ahead of any installed one
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
