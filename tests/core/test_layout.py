"""The package's folders are its layers, and imports only point down (issue 38).

From the top: the public modules (``skpmlp``, :mod:`skpmlp.io`,
:mod:`skpmlp.model_selection`, :mod:`skpmlp.plotting`), then
``_estimators`` (scikit-learn's surface), ``_selection`` (choosing from a
trained search), ``_search`` (plan, run, scores), ``_execution`` (where a
population trains), ``_persistence`` (files), ``_core`` (the parameter table
and shared rules), ``_engine`` (torch only) and ``_kernels`` (native and
Triton kernels). A module may import its own layer and those below it.
"""

import ast
from pathlib import Path

import pytest

import skpmlp

PACKAGE = Path(skpmlp.__file__).parent

#: The private layers, top first.
LAYERS = ["_estimators", "_selection", "_search", "_execution", "_persistence", "_core",
          "_engine", "_kernels"]

#: The most modules directly in ``skpmlp/`` (the package's ``__init__`` included).
MAX_ROOT_MODULES = 12


def _modules():
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _modules()


def _layer(module):
    """Position of ``module``'s layer: -1 for the public modules."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else -1


def _imports(module, path):
    """The skpmlp modules ``module`` imports (a name imported from a package
    counts as its module when it is one)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = base + ("." + node.module if node.module else "")
            else:
                target = node.module or ""
            if target.split(".")[0] == "skpmlp":
                for alias in node.names:
                    name = f"{target}.{alias.name}"
                    yield name if name in MODULES else target
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "skpmlp")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    upward = [
        target for target in _imports(module, MODULES[module])
        if (target == "skpmlp" and module != "skpmlp")
        or (_layer(module) >= 0 and _layer(target) < _layer(module))
    ]
    assert upward == [], f"{module} imports a layer above it (or the package root)"


def test_few_modules_at_the_root():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert folders == {*LAYERS, "plotting"}
