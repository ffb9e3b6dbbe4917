# SPDX-License-Identifier: GPL-2.0-only
"""Sphinx extension: the API reference, one page per public module of mcsim, found when the build starts.

The modules are read from the package's folder (:func:`public_modules`), never listed by hand: a module
that moves or appears is on the next build's pages. Each page is an ``automodule`` (autodoc reads the
docstrings, numpydoc their sections), written into ``docs/api/`` (generated, not kept in git) before the
sources are read; ``docs/api.md`` lists them with a glob.

:func:`public_modules` is plain Python, so that a test can check the discovery without Sphinx.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent.parent
PACKAGE_DIR = DOCS.parent / "mcsim"
API_DIR = DOCS / "api"  # generated pages, one per module
DATA_ONLY = ("ns3_modules", "topologies")  # C++ sources and ready topologies: package data, no Python


def public_modules(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """Every public module under ``package_dir`` as a dotted name, sorted: each ``.py`` file and package
    (``__init__.py``) whose path has no part starting with ``_`` (``__main__`` and private modules are
    left out), outside the data-only folders."""
    found = set()
    for path in package_dir.rglob("*.py"):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) > 1 and parts[1] in DATA_ONLY:
            continue
        if any(part.startswith("_") for part in parts):
            continue
        found.add(".".join(parts))
    return sorted(found)


def page(module: str) -> str:
    """The reStructuredText page of one module."""
    return (
        f"{module}\n{'=' * len(module)}\n\n"
        f".. automodule:: {module}\n"
        "   :members:\n"
        "   :undoc-members:\n"
        "   :show-inheritance:\n"
        "   :ignore-module-all:\n"
    )


def write_pages(api_dir: Path = API_DIR) -> list[str]:
    """Write one page per public module into ``api_dir`` (removing those of modules gone); return the modules."""
    api_dir.mkdir(exist_ok=True)
    modules = public_modules()
    wanted = {f"{m}.rst": page(m) for m in modules}
    for old in api_dir.glob("*.rst"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        path = api_dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:  # unchanged pages keep their time
            path.write_text(text, encoding="utf-8")
    return modules


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", lambda app, config: write_pages())  # before Sphinx lists the source files
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
