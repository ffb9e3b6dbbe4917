# SPDX-License-Identifier: GPL-2.0-only
"""Sphinx configuration of mcsim's documentation: Markdown pages (MyST), the API from the docstrings
(autodoc + numpydoc), the commands from the parser (docs/_ext/mcsim_cli.py). Build: ``make docs``."""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]  # the checkout's mcsim, then the local extensions

import mcsim  # noqa: E402

project = "mcsim"
author = "the mcsim authors"
copyright = "the mcsim authors, GPL-2.0-only"
release = version = mcsim.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "mcsim_api",
    "mcsim_cli",
    "mcsim_models",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]

# MyST: fenced directives, heading anchors for [text](page.md#anchor) links
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4

# autodoc: members in source order, type hints in the signatures (numpydoc reads the prose)
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# numpydoc: no per-class member tables (each module page lists its members already)
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"mcsim {release}"
html_static_path: list[str] = []
smartquotes = False  # "--rate" in an option's help stays two hyphens, not an en dash
