"""Sphinx configuration of the ioukit documentation site (``make docs``).

Sphinx with numpydoc and pydata-sphinx-theme, as NumPy, SciPy, scikit-learn and shapely: the
docstrings are numpydoc already, so the API reference is generated from them; MyST reads the
Markdown pages and includes the README's and the CHANGELOG's sections, so nothing is copied.
The API page (``api.rst``, written here on every build, not tracked) lists every name in
``ioukit.__all__``, so a new public name gets its page without editing the docs. The example
HTML report (``_extra/example_report.html``, about 230 KB, not tracked) is written here on
every build from the bundled sample by ioukit's own report writer, so it is always the current
writer's output; ``html_extra_path`` copies it to the site's root.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ioukit
from ioukit.report import write_html
from ioukit.sample_data import ground_truth_path, predictions_path

ROOT = Path(__file__).resolve().parent.parent

project = "ioukit"
author = "ioukit developers"
copyright = "2026, ioukit developers"
version = release = ioukit.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]

autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = False  # a module page lists that module's __all__
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
myst_heading_anchors = 3

html_theme = "pydata_sphinx_theme"
html_title = f"ioukit {release}"
html_theme_options = {
    "github_url": "https://github.com/ioukit/ioukit",
    "navigation_with_keys": False,
}
html_static_path: list[str] = []
html_extra_path = ["_extra"]


API_PAGE = """API reference
=============

Every public name of the ``ioukit`` package (``ioukit.__all__``), generated from the
docstrings.

.. currentmodule:: ioukit

"""


def _api_page() -> str:
    """The API page: autosummary tables of every public name (functions, classes, modules)."""
    groups: dict[str, list[str]] = {"Functions": [], "Classes": [], "Modules": []}
    for name in sorted(set(ioukit.__all__) - {"__version__"}, key=str.lower):
        obj = getattr(ioukit, name)
        if isinstance(obj, type(sys)):
            groups["Modules"].append(name)
        elif isinstance(obj, type):
            groups["Classes"].append(name)
        else:
            groups["Functions"].append(name)
    lines = [API_PAGE]
    for title, names in groups.items():
        if names:
            lines += [title, "-" * len(title), "", ".. autosummary::", "   :toctree: generated", ""]
            lines += [f"   {name}" for name in names] + [""]
    return "\n".join(lines)


_api = Path(__file__).with_name("api.rst")
if not _api.exists() or _api.read_text() != _api_page():
    _api.write_text(_api_page())


def _example_report() -> None:
    """``_extra/example_report.html``: the report of the bundled sample (docs/report.md)."""
    result = ioukit.evaluate(ground_truth_path(), predictions_path())
    extra = Path(__file__).with_name("_extra")
    extra.mkdir(exist_ok=True)
    write_html(result, extra / "example_report.html", title="ioukit: the bundled sample")


_example_report()
