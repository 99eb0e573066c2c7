"""Sphinx configuration of the goalfit documentation.

Build (from the repository root): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
with ``GOALFIT_DATA`` pointing at the datasets (the gallery reads them through
``goalfit.datasets.load_dataset``).
"""
from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per example: the gallery's timings are per core

import matplotlib

matplotlib.use("Agg")
# Sphinx reads this file from docs/ and the gallery runs each example from docs/examples/: a
# relative GOALFIT_DATA (the README's ../shared/data) is made absolute against the folder the build
# was started from, as the tests' conftest does.
if os.environ.get("GOALFIT_DATA"):
    _start = Path(os.environ.get("PWD") or Path(__file__).resolve().parents[1])
    os.environ["GOALFIT_DATA"] = os.pathsep.join(
        str((_start / p).resolve()) for p in os.environ["GOALFIT_DATA"].split(os.pathsep) if p)

import goalfit

HERE = Path(__file__).parent
project = "goalfit"
author = "the goalfit developers"
copyright = "the goalfit developers"
release = version = goalfit.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples/README.txt", "**/GALLERY_HEADER.rst"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme = "pydata_sphinx_theme"
html_title = f"goalfit {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    # the user guide's tables and the gallery's code need the width; the API pages keep their TOC
    "secondary_sidebar_items": {"user_guide/*": [], "auto_examples/*": []},
}
html_sidebars = {"index": []}
html_show_sourcelink = False

myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3

# -- API reference -----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False  # the class template lists the methods itself
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
intersphinx_mapping = {}             # the build reads no network

#: The subpackages whose ``__all__`` the API reference lists, after the top-level ``goalfit``.
API_MODULES = {
    "goalfit": "Everything ``import goalfit as gf`` exposes: the goal vocabulary, the estimators, "
               "the metrics, the trade-off sweep and the report.",
    "goalfit.goals": "Rates, fairness measures, named metrics, problems and their compiled forms.",
    "goalfit.metrics": "Goals evaluated on labels and predictions, confidence intervals, the scorer, "
                       "sample-size planning.",
    "goalfit.estimators": "The scikit-learn estimators, built-in base models and model selection.",
    "goalfit.torch": "PyTorch networks trained under rate constraints (``pip install 'goalfit[torch]'``).",
    "goalfit.distributed": "Dask as a data backend (``pip install 'goalfit[dask]'``).",
    "goalfit.tradeoff": "Trade-off curves: one base fit, one solve per bound.",
    "goalfit.report": "Reports, tables and plots of a fitted estimator.",
    "goalfit.datasets": "Dataset loaders (read from ``$GOALFIT_DATA``, else downloaded and checked).",
    "goalfit.classifiers": "Plug-in rules, randomized mixtures and rules on a score.",
    "goalfit.confusion": "Cells (slices), several datasets, confusion spaces and tensors.",
    "goalfit.fit": "The fit core: data preparation, the Method interface, FitResult, GoalEstimator, "
                   "certification, progress.",
    "goalfit.methods": "The method registry.",
}


def _write_api_pages() -> None:
    """Write one page per module of :data:`API_MODULES`, an autosummary over its ``__all__``."""
    out = HERE / "api"
    shutil.rmtree(out, ignore_errors=True)  # no stale stub of a name that left an __all__
    out.mkdir()
    index = ["API reference", "=============", "",
             "Generated from each module's ``__all__``: every public name, with its docstring.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    seen: dict = {}  # id(object) -> the name it is documented under (once: no duplicate targets)
    for module, blurb in API_MODULES.items():
        mod = importlib.import_module(module)
        names = list(dict.fromkeys(n for n in mod.__all__ if not n.startswith("_")))
        own, elsewhere = [], []
        for name in names:
            obj = getattr(mod, name)
            key = id(obj) if callable(obj) else f"{module}.{name}"  # data: one entry per module
            if key in seen:
                elsewhere.append(f":obj:`{name} <{seen[key]}>`")
            else:
                seen[key] = f"{module}.{name}"
                own.append(name)
        page = [f"``{module}``", "=" * (len(module) + 4), "", f".. automodule:: {module}", "   :no-members:",
                "   :no-index:", "", blurb, "", f".. currentmodule:: {module}", ""]
        if own:
            page += [".. autosummary::", "   :toctree: generated", "   :template: name.rst", ""]
            page += [f"   {name}" for name in own] + [""]
        if elsewhere:
            page += [f"Also exported by ``{module}`` (the same objects, documented where listed first): "
                     + ", ".join(elsewhere) + "."]
        text = "\n".join(page) + "\n"
        (out / f"{module}.rst").write_text(text)
        index.append(f"   {module}")
    (out / "index.rst").write_text("\n".join(index) + "\n")


_write_api_pages()

# -- Gallery -----------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "min_reported_time": 0,
    "matplotlib_animations": False,
    "plot_gallery": "True",
}
