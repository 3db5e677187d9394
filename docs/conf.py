"""Sphinx configuration of the skpmlp documentation.

Build with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
(``pip install -e ".[docs]"``); ``tests/docs/test_docs.py`` runs the same build.
"""

import re
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # document the checkout, installed or not

import skpmlp  # noqa: E402

project = "skpmlp"
author = "the skpmlp developers"
copyright = "the skpmlp developers"  # noqa: A001
release = skpmlp.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build"]

# ---------------------------------------------------------------- API pages
autosummary_generate = True
# numpydoc renders the Parameters / Attributes sections; the class template
# lists the methods, so numpydoc must not add a second list
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# A name ending in "_" is a reference in reStructuredText, so a type such as
# "ndarray of shape (n_features_in_,)" breaks the build: escape such names in
# the type part of numpydoc's "name : type" lines.
_TRAILING_UNDERSCORE = re.compile(r"(?<![`\w])([A-Za-z]\w*)_(?=[,)\s]|$)")


def _escape_types(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        head, sep, kind = line.partition(" : ")
        if sep and head.strip().isidentifier():
            lines[i] = head + sep + _TRAILING_UNDERSCORE.sub(r"\1\\_", kind)


def _skip_sklearn_members(app, what, name, obj, skip, options):
    # methods inherited from scikit-learn (get_params, score, set_*_request,
    # ...) are documented there, and their docstrings cite its own labels
    if getattr(obj, "__module__", None) and obj.__module__.split(".")[0] == "sklearn":
        return True
    return None


def setup(app):
    # before numpydoc (priority 500) turns the sections into reStructuredText
    app.connect("autodoc-process-docstring", _escape_types, priority=100)
    app.connect("autodoc-skip-member", _skip_sklearn_members)


# ------------------------------------------------------------------ figures
plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]

# ------------------------------------------------------------------ gallery
# The examples run inside this process and train tiny networks: one torch
# thread is as fast, and does not collapse when the build shares the CPU with
# other jobs (oversubscribed torch threads were seen to be 10-100x slower).
torch.set_num_threads(1)

sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    # only plot_*.py run; quickstart.py (the README's script, ~1 min) is
    # shown as code without being executed
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "abort_on_example_error": True,
    "min_reported_time": 1,
    # "Examples using X" lists on the API pages
    "doc_module": ("skpmlp",),
    "backreferences_dir": str(HERE / "generated" / "backreferences"),
    "matplotlib_animations": False,
}

# ------------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"skpmlp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_show_sourcelink = False
