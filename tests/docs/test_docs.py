"""The documentation builds with warnings as errors, gallery examples included."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

for module in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme", "matplotlib"):
    pytest.importorskip(module, reason=f'the docs build needs {module}: pip install -e ".[docs]"')

ROOT = Path(__file__).resolve().parents[2]
# build outputs of an in-tree build; a copy without them runs every example afresh
OUTPUTS = shutil.ignore_patterns("_build", "auto_examples", "generated", "sg_execution_times.rst")


def test_docs_build_without_warnings(tmp_path):
    # SKPMLP_EXAMPLES_QUICK: examples that take minutes (the 2,000-model
    # random search) run a smaller version of themselves
    # build a copy of docs/ and examples/ so the test neither reuses nor
    # leaves generated pages (sphinx-gallery skips examples it ran before)
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=OUTPUTS)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    html = tmp_path / "html"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               MPLBACKEND="Agg", SKPMLP_EXAMPLES_QUICK="1")
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
         str(tmp_path / "docs"), str(html)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stdout[-5000:] + build.stderr[-5000:]
    examples = sorted(p.stem for p in (ROOT / "examples").glob("plot_*.py"))
    pages = [
        "index.html", "api.html", "user_guide/fused_engine.html",
        "generated/skpmlp.ParallelMLPClassifier.html",
        "generated/skpmlp.plotting.SearchResultsDisplay.html",
        "auto_examples/index.html", *(f"auto_examples/{name}.html" for name in examples),
    ]
    assert [page for page in pages if not (html / page).is_file()] == []
    # the gallery ran every example (each leaves a figure) but not the quickstart
    images = {p.name for p in (html / "_images").iterdir()}
    assert [name for name in examples if not any(i.startswith(f"sphx_glr_{name}_0") for i in images)] == []
    assert not any(name.startswith("sphx_glr_quickstart_0") for name in images)
