# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.native.cling_pch: one precompiled header per build, checked before use, never in the way: a
process starts cling from it and knows mcsim's classes without parsing a header, the variable that
points cling at it does not leak to child processes, and a PCH that cannot be made is recorded
once and mcsim loads without it."""

from __future__ import annotations

import os
import subprocess
import sys

from mcsim.native import cling_pch, library, runtime


def _ensure_for_current_build():
    info, wheel = library.ensure_built(), library.find_ns3()
    return cling_pch.ensure(info.path, (wheel.include_dir, info.include_dir), runtime.INCLUDES, runtime.CXX_DEFINES)


def test_the_build_has_a_checked_pch_that_declares_mcsims_classes(capsys):
    pch = _ensure_for_current_build()
    capsys.readouterr()
    assert _ensure_for_current_build() == pch and capsys.readouterr().err == "", "a PCH found says nothing"
    assert pch is not None and pch.is_file() and pch.parent == library.ensure_built().path / "cling"
    assert not pch.with_name(pch.name + ".failed").exists()
    assert cling_pch._check(pch) == ""  # a fresh process finds ns3::mcsim::Fabric with no include


def test_cppyy_ns_keeps_the_variable_to_itself_and_runs(tmp_path):
    probe = (
        "import os\n"
        "from mcsim import Scenario\n"
        "from mcsim.native import runtime\n"
        "runtime.cppyy_ns()\n"
        f"assert {cling_pch.ENV!r} not in os.environ\n"
        "r = Scenario(topology='fat-tree-k4', bytes_per_rank='4KiB', ranks=4).run()\n"
        "print(r.complete)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != cling_pch.ENV}
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True"


def test_a_pch_that_cannot_be_made_is_recorded_once_and_not_used(tmp_path, capsys):
    build_dir = tmp_path / "build"
    includes = ("ns3/no-such-header.h",)
    assert cling_pch.ensure(build_dir, (library.find_ns3().include_dir,), includes, ()) is None
    assert capsys.readouterr().err.startswith(cling_pch.MAKING + "\n"), "making one says so"
    (failed,) = (build_dir / "cling").glob("*.failed")
    assert "rootcling failed" in failed.read_text() and "no-such-header.h" in failed.read_text()
    before = failed.stat().st_mtime_ns
    assert cling_pch.ensure(build_dir, (library.find_ns3().include_dir,), includes, ()) is None  # no retry
    assert failed.stat().st_mtime_ns == before
    assert cling_pch.MAKING not in capsys.readouterr().err, "a recorded failure is not made again"
    assert not list((build_dir / "cling").glob("*.pch*[!d]"))  # no PCH or staging file left


def test_the_name_changes_with_what_the_pch_depends_on(monkeypatch):
    base = cling_pch.name(runtime.INCLUDES, runtime.CXX_DEFINES)
    assert cling_pch.name(runtime.INCLUDES[:-1], runtime.CXX_DEFINES) != base
    assert cling_pch.name(runtime.INCLUDES, ()) != base
    monkeypatch.setenv("EXTRA_CLING_ARGS", "-O0")
    assert cling_pch.name(runtime.INCLUDES, runtime.CXX_DEFINES) != base
