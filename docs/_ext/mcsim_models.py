# SPDX-License-Identifier: GPL-2.0-only
"""Sphinx extension: the models' pages are ``mcsim/ns3_modules/<m>/doc/<m>.md`` as they are, each included by
``docs/models/<m>.md``. Their links are relative to their own folder (``../model/port.h``); as they are
included, each is made relative to the page that includes them, so that a C++ file they name becomes a
download of that file and a link to another model's page a link to its page here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")  # a Markdown link's target: a path and an optional anchor
MODEL_PAGE = re.compile(r"ns3_modules/([a-z0-9_]+)/doc/\1\.md$")


def relink(text: str, included: Path, page_dir: Path, models_dir: Path) -> str:
    """``text`` of file ``included`` with every relative link made relative to ``page_dir``; a link to a
    model's page (``<m>/doc/<m>.md``) goes to ``models_dir/<m>.md``."""

    def one(m: re.Match[str]) -> str:
        target, anchor = m[1], m[2] or ""
        if "://" in target or target.startswith(("/", "mailto:")):
            return m[0]
        path = (included.parent / target).resolve()
        model = MODEL_PAGE.search(path.as_posix())
        if model is not None:
            path = models_dir / f"{model[1]}.md"
        return f"]({os.path.relpath(path, page_dir)}{anchor})"

    return LINK.sub(one, text)


def setup(app: Any) -> dict[str, Any]:
    def include_read(app: Any, relative_path: Any, parent_docname: str, content: list[str]) -> None:
        src = Path(app.srcdir)
        included = (src / relative_path).resolve()
        page_dir = (src / app.env.docname).parent  # MyST passes the including page's stem alone as parent_docname
        content[0] = relink(content[0], included, page_dir, src / "models")

    app.connect("include-read", include_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
