# SPDX-License-Identifier: GPL-2.0-only
"""One seam to C++: only mcsim/native/ calls the C ABI. No other module of mcsim names an ``mcsim_*``
function of the library (in code, strings or comments), reaches for a ``.lib`` (the ctypes library), keeps
what ``runtime.load()`` returns, or imports ctypes.

The files are read as text and with ``ast`` (nothing is imported but mcsim.native.abi, for the names).
"""

import ast
import re
from pathlib import Path

from mcsim.native import abi

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "mcsim"
NATIVE_DIR = PACKAGE_DIR / "native"
# every function of the C ABI: the declared tables and the two that abi.declare types itself
ABI_NAMES = frozenset(
    {*abi.SIGNATURES, *abi.HANDLE_SIGNATURES, *abi.TEST_SIGNATURES, "mcsim_last_text", "mcsim_factory_free"}
)
WORD = re.compile(r"\bmcsim_\w+")
NUMPY = {"np", "numpy"}  # np.lib is numpy's own


def _is_load_kept(node: ast.AST, parent: ast.AST | None) -> bool:
    """``runtime.load()`` whose value is kept (anything but a statement of its own: a preload)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "load"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "runtime"
        and not isinstance(parent, ast.Expr)
    )


def breaches(path: Path, root: Path) -> list[str]:
    """Where one file reaches into the C ABI, as "file:line: what"."""
    where = path.relative_to(root.parent)
    text = path.read_text(encoding="utf-8")
    found = [
        f"{where}:{n}: names the C ABI function {name}"
        for n, line in enumerate(text.splitlines(), 1)
        for name in WORD.findall(line)
        if name in ABI_NAMES
    ]
    tree = ast.parse(text, filename=str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "lib":
            if not (isinstance(node.value, ast.Name) and node.value.id in NUMPY):
                found.append(f"{where}:{node.lineno}: uses .lib (the ctypes library)")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("mcsim_"):
            found.append(f"{where}:{node.lineno}: calls .{node.attr}")
        elif _is_load_kept(node, parents.get(node)):
            found.append(f"{where}:{node.lineno}: keeps the library runtime.load() returns")
        elif isinstance(node, ast.Import) and any(a.name.partition(".")[0] == "ctypes" for a in node.names):
            found.append(f"{where}:{node.lineno}: imports ctypes")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").partition(".")[0] == "ctypes":
            found.append(f"{where}:{node.lineno}: imports from ctypes")
    return found


def _outside(root: Path, inside: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.py") if inside not in path.parents)


def test_only_native_calls_the_c_abi():
    files = _outside(PACKAGE_DIR, NATIVE_DIR)
    assert any(p.parent == PACKAGE_DIR / "runs" for p in files), "the scan reads the runs"
    found = [line for path in files for line in breaches(path, PACKAGE_DIR)]
    assert not found, "only mcsim/native/ may call the C ABI:\n" + "\n".join(found)


def test_native_itself_is_where_the_calls_are():
    # the scan would see a call if there were one: native/ makes them all
    found = [line for path in sorted(NATIVE_DIR.rglob("*.py")) for line in breaches(path, PACKAGE_DIR)]
    assert len(ABI_NAMES) > 50
    assert len(found) > 50, found


def test_the_scan_finds_each_way_into_the_library(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "run.py").write_text(
        "import ctypes\n"
        "from mcsim.native import runtime\n"
        "runtime.load()\n"  # a preload: allowed
        "lib = runtime.load()\n"
        "def f(sim, fab):\n"
        "    sim.lib.mcsim_fabric_set_factories(fab.cxx, 1, 2)\n"
        "    return getattr(fab, 'mcsim_now_ps')  # mcsim_cost is no ABI function\n"
        "import numpy as np\n"
        "np.lib.format\n"
    )
    assert sorted(breaches(pkg / "run.py", pkg)) == sorted(
        [
            "pkg/run.py:6: names the C ABI function mcsim_fabric_set_factories",
            "pkg/run.py:7: names the C ABI function mcsim_now_ps",
            "pkg/run.py:1: imports ctypes",
            "pkg/run.py:4: keeps the library runtime.load() returns",
            "pkg/run.py:6: calls .mcsim_fabric_set_factories",
            "pkg/run.py:6: uses .lib (the ctypes library)",
        ]
    )
