"""One prepared GPU check (issue 37, item 5): every GPU figure in one command.

A task is lent a GPU by chance and for 15 minutes of device time, all
tries together, so the GPU measurements are one script with a time limit
per step. Each step runs as its own process (a hung or failing step costs
its own limit, never the others'), in this order:

* ``environment``: the GPU's name, torch, triton and the CUDA runtime;
* ``cuda_tests``: the Triton kernels' tests on the GPU
  (``tests/kernels/test_triton.py``: float64 equal to torch, dropout,
  compilation) and the CUDA tests of the engine;
* ``step``: ``benchmarks/step.py --device cuda`` (the 240-model step:
  Triton against plain fused torch, share of the float32 FMA peak);
* ``paper_cell``: ``benchmarks/paper_cell.py`` (seed 000's headline cell
  against the paper's M3);
* ``dropout_cost``: ``benchmarks/dropout_cost.py --device cuda`` (the
  default space's dropout on the Triton kernels);
* ``device_choice``: ``benchmarks/device_choice.py`` (each workload's
  seconds per epoch on CUDA and on the native CPU kernel over all the
  host's cores: the measurements behind ``device="auto"``);
* ``profile``: ``benchmarks/gpu_profile.py`` (the first fit's compile,
  the device's busy share of a fit, launches, copies and syncs per epoch,
  the ops with the most device and host time);
* ``suite``: the README's test command (``python -m pytest``) on the GPU
  host, one xdist worker per core, at most 16.

It writes one JSON (``gpu_check.json`` in ``--out``: each step's command,
exit status, seconds, the tail of its output and the JSON the step wrote),
each step's whole output (``<step>.log`` in ``--out``) and prints a line
per step; ``--limit STEP=SECONDS`` changes a step's time limit.
``--device cpu --quick`` runs the same steps' CPU variants, small, to
check the driver on a machine without a GPU (the test suite does);
``--steps`` picks some.

All the steps together take longer than one 10-minute call of a lent GPU
(on an H100 with a 16-core host: the CUDA tests 107 s with 8 workers, the
whole suite 315-325 s with 16, ``device_choice`` over 170 s, ``profile``
126 s), so a session picks them into calls, each under its limit, for
example::

    PYTHONPATH=$PWD PYTHONUNBUFFERED=1 python3 benchmarks/gpu_check.py --out "$OUT" \
        --steps environment cuda_tests profile device_choice --limit device_choice=200
    PYTHONPATH=$PWD PYTHONUNBUFFERED=1 python3 benchmarks/gpu_check.py --out "$OUT" \
        --steps suite step paper_cell --limit suite=360

(``PYTHONPATH``: the GPU machine's ``python3`` holds torch and triton,
and the checkout is imported as it is, nothing installed.) On the CPU::

    python benchmarks/gpu_check.py --device cpu --quick --steps environment dropout_cost
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

ENVIRONMENT = (
    "import json, torch\n"
    "try:\n    import triton; version = triton.__version__\nexcept ImportError:\n    version = None\n"
    "cuda = torch.cuda.is_available()\n"
    "print(json.dumps({'torch': torch.__version__, 'triton': version, 'cuda': torch.version.cuda,\n"
    "    'gpu': torch.cuda.get_device_name() if cuda else None,\n"
    "    'capability': list(torch.cuda.get_device_capability()) if cuda else None}))\n"
)


#: The engine's tests that need CUDA (they skip without it).
CUDA_TESTS = (
    "tests/engine/test_engine.py::test_cuda_matches_cpu_float64",
    "tests/engine/test_memory.py::test_out_of_memory_retry_first_frees_the_failed_runs_tensors",
    "tests/execution/test_parallel.py::test_cuda_shards_match_one_cpu_run_in_float64",
)

#: device_choice.py's workloads the check times, small to large (its
#: 2,000-model search is left out: minutes on the Triton kernels).
DEVICE_WORKLOADS = ("iris", "csv500", "step240", "search100", "search400_narrow", "paper2000", "search400",
                    "wide64", "paper10000")


def steps(device, quick):
    """``{name: (command, timeout seconds, JSON file the step writes or None)}``
    for ``device`` ("cuda", or "cpu" for the small CPU variants)."""
    python = sys.executable
    gpu = device == "cuda"
    # on the GPU: the Triton kernels' tests and the engine's CUDA tests; on
    # the CPU (the driver's own check): the kernels' dropout tests, interpreted
    tests = (["tests/kernels/test_triton.py", *CUDA_TESTS] if gpu
             else ["tests/kernels/test_triton.py", "-k", "dropout"])
    workers = str(min(16, os.cpu_count() or 1))
    return {
        "environment": ([python, "-c", ENVIRONMENT], 60, None),
        "cuda_tests": ([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n",
                        str(min(8, os.cpu_count() or 1)) if gpu else "0", *tests], 240 if gpu else 120, None),
        "step": ([python, "benchmarks/step.py", "--device", device, "--epochs", "2" if quick else "5",
                  *([] if gpu else ["--targets", "native", "--threads", "1"])],
                 120, RESULTS / ("step_cuda.json" if gpu else "step.json")),
        "paper_cell": ([python, "benchmarks/paper_cell.py", "--device", device,
                        *(["--models", "200", "--samples", "2000"] if quick else [])],
                       180, RESULTS / f"paper_cell_{device}.json"),
        "dropout_cost": ([python, "benchmarks/dropout_cost.py", "--device", device,
                          "--repeats", "1" if quick else "3", "--json", str(RESULTS / f"dropout_cost_{device}.json")],
                         120, RESULTS / f"dropout_cost_{device}.json"),
        "device_choice": ([python, "benchmarks/device_choice.py", "--out", str(RESULTS), "--workloads",
                           *(["iris", "csv500"] if quick else DEVICE_WORKLOADS), *([] if gpu else ["--devices", "cpu"])],
                          300, RESULTS / "device_choice.json"),
        "profile": ([python, "benchmarks/gpu_profile.py", "--device", device, "--out", str(RESULTS),
                     *(["--workloads", "iris"] if quick else [])], 240, RESULTS / "gpu_profile.json"),
        "suite": ([python, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:benchmark", "-rf", "-n", workers],
                  600, None),
    }


def run_step(name, command, timeout, written, log=None):
    """Run one step: its record (command, status, seconds, output tail,
    the JSON it wrote); its whole output goes to ``log`` where given."""
    if written is not None and written.exists():
        written.unlink()  # a file left by an earlier run must not pass for this one's
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
        status, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        status = "timeout"
        output = "".join(part.decode() if isinstance(part, bytes) else (part or "")
                         for part in (expired.stdout, expired.stderr))
    record = {"command": command, "status": status, "seconds": time.perf_counter() - start,
              "output_tail": output[-4000:]}
    if log is not None:
        log.write_text(output)
    if written is not None and written.exists():
        record["result"] = json.loads(written.read_text())
    if name == "environment" and status == 0:
        record["result"] = json.loads(output.strip().splitlines()[-1])
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--quick", action="store_true", help="small populations and few repeats")
    parser.add_argument("--steps", nargs="+", default=None, help="run only these steps, in order")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--limit", nargs="+", default=[], metavar="STEP=SECONDS",
                        help="time limits of some steps, in seconds")
    args = parser.parse_args(argv)
    plan = steps(args.device, args.quick)
    for item in args.limit:
        name, _, seconds = item.partition("=")
        if name not in plan or not seconds.replace(".", "", 1).isdigit():
            parser.error(f"--limit {item!r}: give STEP=SECONDS with a step of {list(plan)}")
        command, _, written = plan[name]
        plan[name] = (command, float(seconds), written)
    names = args.steps or list(plan)
    unknown = sorted(set(names) - set(plan))
    if unknown:
        parser.error(f"unknown steps {unknown}; choose from {list(plan)}")
    RESULTS.mkdir(exist_ok=True)
    report = {"device": args.device, "quick": args.quick, "steps": {}}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        record = run_step(name, *plan[name], log=out / f"{name}.log")
        report["steps"][name] = record
        print(f"{name:>13}: status {record['status']}, {record['seconds']:.1f} s", flush=True)
        path = out / "gpu_check.json"
        path.write_text(json.dumps(report, indent=1))  # after each step: a run cut short keeps the rest
    print(f"wrote {path}")
    return 0 if all(r["status"] == 0 for r in report["steps"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
