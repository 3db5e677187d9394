"""``skpmlp/_core/_compat.py`` is the one place that uses scikit-learn's private API."""

import ast
import warnings
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator
from sklearn.neural_network import MLPClassifier, MLPRegressor

import skpmlp

PACKAGE = Path(skpmlp.__file__).parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "_compat.py")


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _trees():
    return {path: ast.parse(path.read_text(), filename=str(path)) for path in MODULES}


def _defined_by_skpmlp(trees):
    """Private names skpmlp defines itself (methods, class attributes, attributes
    it assigns): using those is not using scikit-learn's internals."""
    names = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    names.add(node.attr)
    return names


def _sklearn_private_attributes():
    """Private methods and attributes of scikit-learn's estimators and MLPs,
    fitted attributes included."""
    X, y = [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]], [0, 1, 0, 1]
    fitted = [MLPClassifier(max_iter=1).fit(X, y), MLPRegressor(max_iter=1).fit(X, y)]
    objects = [BaseEstimator, MLPClassifier, MLPRegressor, *fitted]
    return {name for obj in objects for name in dir(obj) if _private(name)}


@pytest.fixture(scope="module")
def private_attributes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = _sklearn_private_attributes()
    return names - _defined_by_skpmlp(_trees())


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_private_sklearn_import_outside_compat(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sklearn":
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"line {node.lineno}: from {node.module} import ...")
            found += [f"line {node.lineno}: {alias.name} from {node.module}"
                      for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] == "sklearn"
                      and any(_private(part) for part in alias.name.split("."))]
    assert found == [], f"import these from skpmlp._core._compat instead: {found}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_private_sklearn_attribute_outside_compat(path, private_attributes):
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [f"line {node.lineno}: .{node.attr}" for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and node.attr in private_attributes]
    assert found == [], f"wrap these scikit-learn internals in skpmlp._core._compat: {found}"


def test_the_checks_see_private_use():
    """The checks above flag what they should (guards against a vacuous pass)."""
    source = (
        "from sklearn.utils._param_validation import Interval\n"
        "from sklearn.base import _fit_context\n"
        "names = MLPClassifier._get_param_names()\n"
    )
    tree = ast.parse(source)
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert any(_private(part) for part in imports[0].module.split("."))
    assert any(_private(alias.name) for alias in imports[1].names)
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "_get_param_names" in attributes & _sklearn_private_attributes()
