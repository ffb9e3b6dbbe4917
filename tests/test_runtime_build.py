# SPDX-License-Identifier: GPL-2.0-only
"""runtime.build: the hash-keyed cache, rebuild on change, corrupt entries, locking, error messages."""

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcsim import runtime
from mcsim.errors import McsimError

PORT_CC = Path("fabric/model/port.cc")


@pytest.fixture(scope="module")
def first_build(module_sources, module_cache):
    return runtime.build(sources=module_sources, cache=module_cache)


def _key(sources: Path) -> str:
    return runtime.build_key(sources, runtime.find_toolchain(), runtime.find_ns3())


def test_first_build_compiles_and_publishes(first_build, module_cache):
    assert first_build.built
    assert first_build.library.is_file() and first_build.library.stat().st_size > 0
    assert first_build.test_library.is_file() and first_build.test_library.stat().st_size > 0
    assert (first_build.include_dir / "ns3" / "mcsim" / "mcsim.h").is_file()
    assert first_build.path == module_cache / "builds" / first_build.key
    assert not list((module_cache / "builds").glob("*.tmp-*")), "no staging folder is left behind"


def test_unchanged_sources_do_nothing(first_build, module_sources, module_cache):
    again = runtime.build(sources=module_sources, cache=module_cache)
    assert not again.built
    assert again.path == first_build.path
    assert again.library.stat().st_mtime_ns == first_build.library.stat().st_mtime_ns


@pytest.mark.parametrize("rel", ["fabric/model/port.cc", "fabric/model/port.h", "CMakeLists.txt"])
def test_key_changes_with_any_source(module_sources, rel):
    path = module_sources / rel
    before, original = _key(module_sources), path.read_bytes()
    try:
        path.write_bytes(original + b"\n// a comment is a change\n")
        assert _key(module_sources) != before
    finally:
        path.write_bytes(original)
    assert _key(module_sources) == before


def test_key_ignores_non_sources(module_sources):
    before = _key(module_sources)
    (module_sources / "NOTES.md").write_text("not a source")
    try:
        assert _key(module_sources) == before
    finally:
        (module_sources / "NOTES.md").unlink()


def test_changed_source_rebuilds_and_the_old_build_is_still_cached(first_build, module_sources, module_cache):
    path = module_sources / PORT_CC
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\nnamespace { [[maybe_unused]] int g_touched = 1; }\n")
        changed = runtime.build(sources=module_sources, cache=module_cache)
        assert changed.built and changed.key != first_build.key
    finally:
        path.write_bytes(original)
    back = runtime.build(sources=module_sources, cache=module_cache)
    assert not back.built and back.key == first_build.key


@pytest.mark.parametrize(
    "damage", ["truncate-library", "truncate-test-library", "remove-test-library", "remove-marker", "garble-marker"]
)
def test_corrupt_entry_is_rebuilt_not_loaded(first_build, module_sources, module_cache, damage):
    entry = module_cache / "builds" / first_build.key
    if damage == "truncate-library":
        (entry / "lib" / runtime.LIBRARY_NAME).write_bytes(b"")
    elif damage == "truncate-test-library":
        (entry / "lib" / runtime.TEST_LIBRARY_NAME).write_bytes(b"")
    elif damage == "remove-test-library":
        (entry / "lib" / runtime.TEST_LIBRARY_NAME).unlink()
    elif damage == "remove-marker":
        (entry / "BUILD.json").unlink()
    else:
        (entry / "BUILD.json").write_text("{not json")
    assert runtime.cached_build(sources=module_sources, cache=module_cache) is None
    rebuilt = runtime.build(sources=module_sources, cache=module_cache)
    assert rebuilt.built and rebuilt.key == first_build.key
    assert rebuilt.library.stat().st_size > 0 and rebuilt.test_library.stat().st_size > 0


def test_compile_error_names_the_file_and_the_log(module_sources, module_cache):
    path = module_sources / PORT_CC
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\nint mcsim_broken = ;\n")
        with pytest.raises(McsimError) as info:
            runtime.build(sources=module_sources, cache=module_cache)
        key = _key(module_sources)
    finally:
        path.write_bytes(original)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("compiling ns3_modules failed: ")
    assert f"{module_sources / PORT_CC}:" in message and "error:" in message  # the user's file, not the snapshot
    log_path = Path(message.rsplit("full build log: ", 1)[1].rstrip(")"))
    assert log_path.is_file() and "mcsim_broken" in log_path.read_text()
    assert not (module_cache / "builds" / key).exists(), "a failed build is never published"


@pytest.mark.parametrize(
    ("rel", "header"),
    [
        ("fabric/model/host.cc", "rc-qp.h"),  # fabric does not depend on rdma (rdma depends on fabric)
        ("dpa/model/dpa.cc", "ring-rank.h"),  # dpa and collectives are siblings over rdma
        ("engine/test/engine-test-suite.cc", "port.h"),  # a module's tests see what the module sees
    ],
)
def test_a_module_cannot_include_a_module_it_does_not_depend_on(module_sources, module_cache, rel, header):
    path = module_sources / rel
    original = path.read_bytes()
    try:
        path.write_bytes(f'#include "ns3/mcsim/{header}"\n'.encode() + original)
        with pytest.raises(McsimError, match=rf"{rel}:1:10: fatal error: ns3/mcsim/{header}: No such file"):
            runtime.build(sources=module_sources, cache=module_cache)
    finally:
        path.write_bytes(original)


def test_missing_cmake_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(McsimError, match=r"^CMake was not found on PATH; .*install CMake >= 3.20"):
        runtime.find_toolchain()


def test_missing_compiler_is_one_line(monkeypatch, tmp_path):
    (tmp_path / "cmake").symlink_to(runtime.find_toolchain().cmake)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(McsimError, match=r"^no C\+\+ compiler \(c\+\+, g\+\+ or clang\+\+\) on PATH; install"):
        runtime.find_toolchain()
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    with pytest.raises(McsimError, match=r"^\$CXX='/nonexistent/g\+\+' was not found; install"):
        runtime.find_toolchain()


class _FakeDist:
    def __init__(self, version):
        self.version = version


def test_wrong_ns3_version_is_one_line(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _FakeDist("3.43"))
    with pytest.raises(McsimError, match=r"^ns3 wheel 3.43 is installed but mcsim needs 3.44.post0; .*pip install"):
        runtime.find_ns3()


def test_missing_ns3_is_one_line(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(McsimError, match=r"^the ns3 wheel is not installed; .*pip install .*ns3==3.44.post0"):
        runtime.find_ns3()


def test_missing_sources_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("MCSIM_NS3_MODULES", str(tmp_path))
    with pytest.raises(McsimError, match=r"^the C\+\+ sources of mcsim were not found at "):
        runtime.source_dir()


def test_two_processes_building_at_once_share_one_build(module_sources, tmp_path):
    code = (
        "import sys; from pathlib import Path; from mcsim import runtime; "
        "b = runtime.build(sources=Path(sys.argv[1]), cache=Path(sys.argv[2])); print(b.built, b.key)"
    )
    argv = [sys.executable, "-c", code, str(module_sources), str(tmp_path)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=os.environ.copy()) for _ in range(2)]
    outputs = [p.communicate(timeout=600)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(built for built, _ in outputs) == ["False", "True"], "exactly one process compiled"
    assert outputs[0][1] == outputs[1][1]
    assert len([p for p in (tmp_path / "builds").iterdir()]) == 1
