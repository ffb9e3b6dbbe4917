# SPDX-License-Identifier: GPL-2.0-only
"""library.ensure_built: the hash-keyed cache, rebuild on change, corrupt entries, locking, error messages,
what a build says on stderr, the environment it needs (one line for each unusable variable) and
`mcsim info` without it."""

import fcntl
import importlib.metadata
import io
import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mcsim import cli
from mcsim.errors import McsimError
from mcsim.native import library
from mcsim.util import folder_lock, package_data

PORT_CC = Path("fabric/model/port.cc")


@pytest.fixture(scope="module")
def first_build(module_sources, module_cache):
    return library.ensure_built(sources=module_sources, cache=module_cache)


def _key(sources: Path) -> str:
    return library.build_key(sources, library.find_toolchain(), library.find_ns3())


def test_first_build_compiles_and_publishes(first_build, module_cache):
    assert first_build.built
    assert first_build.library.is_file() and first_build.library.stat().st_size > 0
    assert first_build.test_library.is_file() and first_build.test_library.stat().st_size > 0
    assert (first_build.include_dir / "ns3" / "mcsim" / "mcsim.h").is_file()
    assert first_build.path == module_cache / "builds" / first_build.key
    assert not list((module_cache / "builds").glob("*.tmp-*")), "no staging folder is left behind"


def test_unchanged_sources_do_nothing(first_build, module_sources, module_cache, capfd):
    capfd.readouterr()
    again = library.ensure_built(sources=module_sources, cache=module_cache)
    assert capfd.readouterr() == ("", ""), "a build found in the cache says nothing"
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


def test_sources_under_a_hidden_folder_are_all_found_and_keyed_alike(module_sources, tmp_path):
    """An install into ~/.venv or ~/.local puts ns3_modules under a folder whose name starts with a dot: only
    hidden names inside ns3_modules are skipped, never those above it (they were: no source, a CMake error)."""
    import shutil

    hidden = tmp_path / ".venv" / "site-packages" / "ns3_modules"
    shutil.copytree(module_sources, hidden, ignore=shutil.ignore_patterns("__pycache__"))
    (hidden / ".scratch").mkdir()
    (hidden / ".scratch" / "x.cc").write_text("// hidden inside: not a source")
    found = [p.relative_to(hidden) for p in library._source_files(hidden)]
    assert found == [p.relative_to(module_sources) for p in library._source_files(module_sources)]
    assert Path("fabric/model/port.cc") in found and not any(p.parts[0] == ".scratch" for p in found)
    assert _key(hidden) == _key(module_sources)


def test_changed_source_rebuilds_and_the_old_build_is_still_cached(first_build, module_sources, module_cache):
    path = module_sources / PORT_CC
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\nnamespace { [[maybe_unused]] int g_touched = 1; }\n")
        changed = library.ensure_built(sources=module_sources, cache=module_cache)
        assert changed.built and changed.key != first_build.key
    finally:
        path.write_bytes(original)
    back = library.ensure_built(sources=module_sources, cache=module_cache)
    assert not back.built and back.key == first_build.key


@pytest.mark.parametrize(
    "damage", ["truncate-library", "truncate-test-library", "remove-test-library", "remove-marker", "garble-marker"]
)
def test_corrupt_entry_is_rebuilt_not_loaded(first_build, module_sources, module_cache, damage):
    entry = module_cache / "builds" / first_build.key
    if damage == "truncate-library":
        (entry / "lib" / library.LIBRARY_NAME).write_bytes(b"")
    elif damage == "truncate-test-library":
        (entry / "lib" / library.TEST_LIBRARY_NAME).write_bytes(b"")
    elif damage == "remove-test-library":
        (entry / "lib" / library.TEST_LIBRARY_NAME).unlink()
    elif damage == "remove-marker":
        (entry / "BUILD.json").unlink()
    else:
        (entry / "BUILD.json").write_text("{not json")
    assert library.cached_build(sources=module_sources, cache=module_cache) is None
    rebuilt = library.ensure_built(sources=module_sources, cache=module_cache)
    assert rebuilt.built and rebuilt.key == first_build.key
    assert rebuilt.library.stat().st_size > 0 and rebuilt.test_library.stat().st_size > 0


def test_compile_error_names_the_file_and_the_log(module_sources, module_cache):
    path = module_sources / PORT_CC
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\nint mcsim_broken = ;\n")
        with pytest.raises(McsimError) as info:
            library.ensure_built(sources=module_sources, cache=module_cache)
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
        ("rdma/helper/rdma-stack.cc", "abi.h"),  # the C ABI (capi/) is the top: no model module sees it
    ],
)
def test_a_module_cannot_include_a_module_it_does_not_depend_on(module_sources, module_cache, rel, header):
    path = module_sources / rel
    original = path.read_bytes()
    try:
        path.write_bytes(f'#include "ns3/mcsim/{header}"\n'.encode() + original)
        with pytest.raises(McsimError, match=rf"{rel}:1:10: fatal error: ns3/mcsim/{header}: No such file"):
            library.ensure_built(sources=module_sources, cache=module_cache)
    finally:
        path.write_bytes(original)


def test_missing_cmake_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(McsimError, match=r"^CMake was not found on PATH; .*install CMake >= 3.20"):
        library.find_toolchain()


def test_missing_compiler_is_one_line(monkeypatch, tmp_path):
    (tmp_path / "cmake").symlink_to(library.find_toolchain().cmake)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(McsimError, match=r"^no C\+\+ compiler \(c\+\+, g\+\+ or clang\+\+\) on PATH; install"):
        library.find_toolchain()
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    with pytest.raises(McsimError, match=r"^\$CXX='/nonexistent/g\+\+' was not found; install"):
        library.find_toolchain()


class _FakeDist:
    def __init__(self, version):
        self.version = version


def test_wrong_ns3_version_is_one_line(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _FakeDist("3.43"))
    with pytest.raises(McsimError, match=r"^ns3 wheel 3.43 is installed but mcsim needs 3.44.post0; .*pip install"):
        library.find_ns3()


def test_missing_ns3_is_one_line(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(McsimError, match=r"^the ns3 wheel is not installed; .*pip install .*ns3==3.44.post0"):
        library.find_ns3()


def test_two_processes_building_at_once_share_one_build(module_sources, tmp_path):
    code = (
        "import sys; from pathlib import Path; from mcsim.native import library; "
        "b = library.ensure_built(sources=Path(sys.argv[1]), cache=Path(sys.argv[2])); print(b.built, b.key)"
    )
    argv = [sys.executable, "-c", code, str(module_sources), str(tmp_path)]
    env = {**os.environ, "MCSIM_PROGRESS": "1"}
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in "ab"]
    results = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    outputs = [out.split() for out, _ in results]
    assert sorted(built for built, _ in outputs) == ["False", "True"], "exactly one process compiled"
    assert outputs[0][1] == outputs[1][1]
    assert len([p for p in (tmp_path / "builds").iterdir()]) == 1
    # what each said on stderr (not a terminal: plain lines): the builder its start, progress and time
    builder, waiter = (err for out, err in sorted(results, key=lambda r: r[0].split()[0], reverse=True))
    lines = builder.splitlines()
    assert lines[0] == library.BUILD_STARTS
    assert re.fullmatch(r"mcsim: compiled the C\+\+ models in \d+\.\d s", lines[-1])
    steps = [
        int(m[1])
        for line in lines[1:-1]
        if (m := re.fullmatch(r"mcsim: compiling the C\+\+ models: (\d+)% after \d+ s", line))
    ]
    assert len(steps) == len(lines) - 2 and steps == sorted(steps), "between them only progress lines, rising"
    assert re.fullmatch(
        r"mcsim: waiting for another process that is compiling the C\+\+ models \(lock .*/lock\) \.\.\.\n", waiter
    )


# -------------------------------------------------------------------------------------------------
# What a build says on stderr

# captured from a real `cmake --build` (make) of ns3_modules, plus Ninja's form and lines without a step
CMAKE_OUTPUT = """\
-- Configuring done
-- Build files have been written to: /root/.cache/mcsim/work/ab87327427e8/build
[  2%] Building CXX object CMakeFiles/mcsim-capi.dir/capi/attribute-text.cc.o
[ 14%] Built target mcsim-engine
In file included from /x/port.cc:3:
[ 96%] Linking CXX shared library lib/libmcsim-ns3.so
[100%] Built target mcsim-ns3-tests
[12/80] Building CXX object CMakeFiles/mcsim-fabric.dir/fabric/model/port.cc.o
[80/80] Linking CXX shared library lib/libmcsim-ns3-tests.so
[ninja] not a step
"""


def test_build_percent_reads_make_and_ninja_steps():
    percents = [library.build_percent(line) for line in CMAKE_OUTPUT.splitlines()]
    assert percents == [None, None, 2, 14, None, 96, 100, 15, 100, None]


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _feed(progress, clock, steps):
    for at_s, line in steps:
        clock.now = 100.0 + at_s
        progress.output(line)


STEPS = [
    (1, "-- Configuring done"),
    (2, "[  2%] Building"),
    (10, "[ 14%] Built"),
    (16, "[ 30%] Building"),
    (20, "[ 28%] Built target"),
    (33, "[ 96%] Linking"),
    (40, "[100%] Built target"),
]


def test_progress_off_a_terminal_is_a_line_every_few_seconds(monkeypatch):
    monkeypatch.delenv("MCSIM_PROGRESS", raising=False)
    stream, clock = io.StringIO(), _Clock()
    progress = library.BuildProgress(stream, clock)
    progress.start()
    _feed(progress, clock, STEPS)
    progress.finish(41.25)
    assert stream.getvalue().splitlines() == [
        library.BUILD_STARTS,
        "mcsim: compiling the C++ models: 30% after 16 s",  # the first step at least PROGRESS_EVERY_S in
        "mcsim: compiling the C++ models: 96% after 33 s",  # the next one at least PROGRESS_EVERY_S later
        "mcsim: compiled the C++ models in 41.2 s",
    ]


def test_progress_on_a_terminal_is_one_line_updated_in_place_then_cleared(monkeypatch):
    monkeypatch.delenv("MCSIM_PROGRESS", raising=False)
    stream, clock = _Terminal(), _Clock()
    progress = library.BuildProgress(stream, clock)
    progress.start()
    _feed(progress, clock, STEPS)
    progress.finish(None)  # failed: the error line follows on a clean line
    text = stream.getvalue()
    assert text.startswith(library.BUILD_STARTS + "\n") and text.count("\n") == 1
    shown = re.findall(r"\r(mcsim: compiling the C\+\+ models: (\d+)% after (\d+) s)\033\[K", text)
    assert [(int(p), int(s)) for _, p, s in shown] == [(2, 2), (14, 10), (30, 16), (96, 33), (100, 40)]
    assert text.endswith("\r\033[K") and "compiled" not in text


def test_progress_updates_are_off_with_mcsim_progress_0(monkeypatch):
    monkeypatch.setenv("MCSIM_PROGRESS", "0")
    stream, clock = _Terminal(), _Clock()
    progress = library.BuildProgress(stream, clock)
    progress.start()
    _feed(progress, clock, STEPS)
    progress.finish(3.0)
    assert stream.getvalue() == f"{library.BUILD_STARTS}\nmcsim: compiled the C++ models in 3.0 s\n"


FAKE_CMAKE = """#!/bin/sh
# a stand-in for CMake: configure makes the tree; build prints make's steps and writes the libraries
if [ "$1" = "-S" ]; then mkdir -p "$4"; echo "-- Configuring done"; exit 0; fi
tree="$2"
for p in 10 40 70 100; do echo "[ $p%] Building CXX object step$p.o"; done
if [ -n "$FAKE_CMAKE_FAIL" ]; then echo "/src/port.cc:1:1: error: broken"; exit 1; fi
mkdir -p "$tree/lib" "$tree/include/ns3/mcsim"
echo models > "$tree/lib/libmcsim-ns3.so"
echo tests > "$tree/lib/libmcsim-ns3-tests.so"
"""


@pytest.fixture
def fake_toolchain(monkeypatch, tmp_path):
    """ensure_built() with a stand-in CMake (a second's work instead of a minute's) over a one-file source."""
    cmake = tmp_path / "cmake"
    cmake.write_text(FAKE_CMAKE)
    cmake.chmod(0o755)
    toolchain = library.Toolchain(cmake=cmake, cxx=Path(sys.executable), identity="fake")
    monkeypatch.setattr(library, "find_toolchain", lambda: toolchain)
    monkeypatch.setattr(library, "PROGRESS_EVERY_S", 0.0)  # a line for every step
    monkeypatch.delenv("MCSIM_PROGRESS", raising=False)
    sources = tmp_path / "src"
    sources.mkdir()
    (sources / "CMakeLists.txt").write_text("project(fake)\n")
    return sources


def test_a_build_says_when_it_starts_how_far_it_is_and_when_it_is_done(fake_toolchain, tmp_path, capsys):
    info = library.ensure_built(sources=fake_toolchain, cache=tmp_path / "cache")
    out, err = capsys.readouterr()
    assert info.built and out == ""
    lines = err.splitlines()
    assert lines[0] == library.BUILD_STARTS
    assert [re.sub(r"after \d+ s", "after N s", line) for line in lines[1:-1]] == [
        f"mcsim: compiling the C++ models: {p}% after N s" for p in (10, 40, 70, 100)
    ]
    assert re.fullmatch(r"mcsim: compiled the C\+\+ models in \d+\.\d s", lines[-1])
    again = library.ensure_built(sources=fake_toolchain, cache=tmp_path / "cache")
    assert not again.built and capsys.readouterr() == ("", ""), "up to date: nothing on stderr"


def test_a_failed_build_says_it_started_and_not_that_it_is_done(fake_toolchain, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_CMAKE_FAIL", "1")
    with pytest.raises(McsimError, match=r"^compiling ns3_modules failed: /src/port.cc:1:1: error: broken \(full"):
        library.ensure_built(sources=fake_toolchain, cache=tmp_path / "cache")
    err = capsys.readouterr().err
    assert err.startswith(library.BUILD_STARTS + "\n") and "compiled" not in err


def test_a_lock_held_by_another_says_so_once_then_waits(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    waited, entered = [], threading.Event()
    with open(folder / "lock", "w") as other:  # another open file: flock conflicts as another process's
        fcntl.flock(other, fcntl.LOCK_EX)

        def take():
            with folder_lock.locked(folder, on_wait=waited.append):
                entered.set()

        thread = threading.Thread(target=take)
        thread.start()
        deadline = time.monotonic() + 10
        while not waited and time.monotonic() < deadline:
            time.sleep(0.01)
        assert waited == [folder / "lock"] and not entered.is_set()
        fcntl.flock(other, fcntl.LOCK_UN)
    thread.join(10)
    assert entered.is_set() and waited == [folder / "lock"]
    with folder_lock.locked(folder, on_wait=waited.append):  # free: no call
        pass
    assert len(waited) == 1


# -------------------------------------------------------------------------------------------------
# The environment a build needs: every unusable variable is one line naming it, its value and why

_root = pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")


def _read_only(tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return folder


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("{file}/x", "{file} is a file"),  # under a file
        ("{file}", "{file} is a file"),
        ("/proc/mcsim", "making it: No such file or directory"),
        ("/proc/self/mcsim", "making it: .+"),
        pytest.param("{read_only}/cache", "making it: Permission denied", marks=_root),
        pytest.param("{read_only}", "writing a file in it: Permission denied", marks=_root),
    ],
)
def test_an_unusable_mcsim_cache_dir_is_one_line(monkeypatch, tmp_path, value, why):
    names = {"file": tmp_path / "a-file", "read_only": tmp_path / "read-only"}
    names["file"].write_text("")
    if "read_only" in value:
        _read_only(tmp_path)
    monkeypatch.setenv("MCSIM_CACHE_DIR", value.format(**names))
    expected = (
        rf"^build cache: MCSIM_CACHE_DIR='{value.format(**names)}' is not a folder mcsim can write "
        rf"\({why.format(**names)}\); point MCSIM_CACHE_DIR at a folder you can write, or unset it$"
    )
    with pytest.raises(McsimError, match=expected):
        package_data.writable_cache()
    with pytest.raises(McsimError, match=expected):
        library.check_environment()


@pytest.mark.parametrize(("value", "why"), [("{file}", "{file} is a file"), ("/proc", "making it: No such file .*")])
def test_an_unusable_xdg_cache_home_is_one_line(monkeypatch, tmp_path, value, why):
    file = tmp_path / "a-file"
    file.write_text("")
    monkeypatch.delenv("MCSIM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", value.format(file=file))
    xdg, why = value.format(file=file), why.format(file=file)
    expected = (
        rf"^build cache: XDG_CACHE_HOME='{xdg}' \(the cache '{xdg}/mcsim'\) is not a folder mcsim can write "
        rf"\({why}\); set MCSIM_CACHE_DIR to a folder you can write$"
    )
    with pytest.raises(McsimError, match=expected):
        package_data.writable_cache()


def test_the_cache_folder_is_chosen_by_mcsim_cache_dir_then_an_absolute_xdg_cache_home_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("MCSIM_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert package_data.cache_dir() == tmp_path / "mine"
    assert package_data.writable_cache() == tmp_path / "mine" and (tmp_path / "mine").is_dir()
    assert list((tmp_path / "mine").iterdir()) == [], "the probe file is gone"
    monkeypatch.delenv("MCSIM_CACHE_DIR")
    assert package_data.cache_dir() == tmp_path / "xdg" / "mcsim"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec: ignored
    assert package_data.cache_dir() == tmp_path / "home" / ".cache" / "mcsim"


def test_a_completed_build_loads_from_a_cache_that_cannot_be_written(monkeypatch, tmp_path):
    monkeypatch.setattr(library, "_completed", lambda cache, key: library.BuildInfo(key, cache, False, 1.0))
    monkeypatch.setenv("MCSIM_CACHE_DIR", "/proc/mcsim")
    assert library.ensure_built().path == Path("/proc/mcsim")  # a shared read-only cache serves its build
    library.check_environment()


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("{tmp}/nowhere", "does not exist"),
        ("{tmp}/a-file", "is not a folder"),
        ("{tmp}", "has no CMakeLists.txt"),
    ],
)
def test_an_unusable_mcsim_ns3_modules_is_one_line(monkeypatch, tmp_path, value, why):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("MCSIM_NS3_MODULES", value.format(tmp=tmp_path))
    expected = (
        rf"^C\+\+ sources: MCSIM_NS3_MODULES='{value.format(tmp=tmp_path)}' {why}; point it at an ns3_modules "
        r"folder \(the one with CMakeLists.txt\) or unset it$"
    )
    with pytest.raises(McsimError, match=expected):
        package_data.source_dir()
    with pytest.raises(McsimError, match=expected):
        library.check_environment()


@pytest.mark.parametrize(
    ("cxx", "message"),
    [
        ("/nonexistent/g++", r"^\$CXX='/nonexistent/g\+\+' was not found; install"),
        ("no-such-compiler", r"^\$CXX='no-such-compiler' was not found; install"),
        ("ccache g++", r"^\$CXX='ccache g\+\+' was not found \(\$CXX names one program, without arguments\); install"),
        ("/tmp", r"^\$CXX='/tmp' was not found; install a C\+\+20 compiler \(apt-get install g\+\+\) or point \$CXX"),
    ],
)
def test_a_cxx_that_is_not_a_compiler_program_is_one_line(monkeypatch, cxx, message):
    monkeypatch.setenv("CXX", cxx)
    with pytest.raises(McsimError, match=message):
        library.find_toolchain()
    with pytest.raises(McsimError, match=message):
        library.check_environment()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MCSIM_CACHE_DIR": "/proc/mcsim"}, r"build cache: MCSIM_CACHE_DIR='/proc/mcsim' is not a folder"),
        ({"MCSIM_NS3_MODULES": "/nonexistent"}, r"C\+\+ sources: MCSIM_NS3_MODULES='/nonexistent' does not exist"),
        ({"CXX": "/nonexistent/g++"}, r"\$CXX='/nonexistent/g\+\+' was not found"),
    ],
)
def test_mcsim_build_with_an_unusable_variable_is_one_line_and_exit_2(env, message):
    proc = subprocess.run(
        [sys.executable, "-m", "mcsim", "build"], capture_output=True, text=True, env={**os.environ, **env}
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert re.fullmatch(rf"mcsim: error: {message}[^\n]*\n", proc.stderr), proc.stderr


# -------------------------------------------------------------------------------------------------
# mcsim info shows what it can


def _info(capsys) -> dict[str, str]:
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    return dict(re.fullmatch(r"(\S+(?: \S+)?)\s{2,}(.*)", line).groups() for line in out.splitlines())


def test_info_without_cmake_or_a_compiler_shows_every_other_row(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no c++
    monkeypatch.delenv("CXX", raising=False)
    rows = _info(capsys)
    assert list(rows) == [
        "mcsim", "python", "ns3", "cppyy", "numpy", "networkx", "ns3 prefix", "cmake", "c++ compiler",
        "sources", "cache", "topologies", "build",
    ]  # fmt: skip
    assert rows["cmake"].startswith("not found: CMake was not found on PATH; ") and "install CMake" in rows["cmake"]
    assert rows["c++ compiler"].startswith("not found: no C++ compiler (c++, g++ or clang++) on PATH; install")
    assert rows["build"] == "cannot build: " + rows["cmake"].removeprefix("not found: ")
    assert rows["ns3 prefix"] == str(library.find_ns3().prefix) and rows["sources"] == str(package_data.source_dir())


def test_info_with_an_unusable_cache_says_why_and_that_it_cannot_build(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("MCSIM_CACHE_DIR", "/proc/mcsim")
    monkeypatch.setenv("MCSIM_NS3_MODULES", str(tmp_path))
    rows = _info(capsys)
    assert rows["cache"].startswith("not usable: build cache: MCSIM_CACHE_DIR='/proc/mcsim' is not a folder")
    assert rows["sources"].startswith(f"not found: C++ sources: MCSIM_NS3_MODULES='{tmp_path}' has no CMakeLists")
    assert rows["build"] == "cannot build: " + rows["sources"].removeprefix("not found: ")
    monkeypatch.delenv("MCSIM_NS3_MODULES")
    monkeypatch.setattr(library, "cached_build", lambda **kw: None)
    assert _info(capsys)["build"] == "cannot build: " + rows["cache"].removeprefix("not usable: ")


def test_info_with_everything_found_shows_the_build(capsys):
    rows = _info(capsys)
    assert rows["cmake"] == str(library.find_cmake()) and rows["c++ compiler"] == str(library.find_cxx())
    assert re.fullmatch(
        r"[0-9a-f]{16} (ready: .*libmcsim-ns3\.so|not built yet \(mcsim build; about a minute\))", rows["build"]
    )
