"""The README's first command works with only skpmlp's own dependencies."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A package named ``pandas`` that fails to import, first on the path: in
#: the script's process and in every worker process it starts (joblib's loky
#: workers inherit PYTHONPATH), ``import pandas`` fails as on a machine
#: without pandas.
_NO_PANDAS = 'raise ModuleNotFoundError("No module named \'pandas\'", name="pandas")\n'


def test_quickstart_runs_without_pandas(tmp_path):
    blocked = tmp_path / "blocked"
    (blocked / "pandas").mkdir(parents=True)
    (blocked / "pandas" / "__init__.py").write_text(_NO_PANDAS)
    path = os.pathsep.join([str(blocked), str(ROOT), os.environ.get("PYTHONPATH", "")])
    # one BLAS / OpenMP thread per process, as the rest of the suite: the
    # test runs beside other test processes
    threads = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env = dict(os.environ, PYTHONPATH=path, **threads)
    check = subprocess.run([sys.executable, "-c", "import pandas"], env=env, capture_output=True, text=True)
    assert check.returncode != 0 and "No module named 'pandas'" in check.stderr

    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--quick"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    # one result line for each of the four fits, each with a test accuracy and a wall time
    for name in ("skpmlp, holdout", "skpmlp, cv=", "GridSearchCV(MLPClassifier()", "MLPClassifier() with its"):
        line = next((line for line in lines if line.startswith(name)), None)
        assert line is not None, run.stdout
        accuracy, seconds, unit = line.split()[-3:]
        assert 0.0 <= float(accuracy) <= 1.0 and float(seconds) >= 0.0 and unit == "s"
