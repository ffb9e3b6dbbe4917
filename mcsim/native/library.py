# SPDX-License-Identifier: GPL-2.0-only
"""Find the ns3 wheel and a toolchain, and build ns3_modules/ into the user's cache (once per sources).

ns3_modules/ is compiled with CMake (Release) into two libraries, the models
(``lib/libmcsim-ns3.so``) and their ns-3 test suites (``lib/libmcsim-ns3-tests.so``, which links
the first), in ``<cache>/builds/<key>/``, where ``key`` hashes
every source file, the build flags, the compiler's identity and the ns3 wheel version, so any change
to a .cc/.h/CMakeLists.txt gives a new key and a rebuild. Builds run under a file lock
(``<cache>/lock``), compile incrementally in a persistent tree (``<cache>/work/``) from a snapshot
of the sources, and are published by an atomic rename with a ``BUILD.json`` marker written last,
so a half-built or corrupt entry (either library missing or of the wrong size) is never loaded: it
is rebuilt. ``<cache>`` is ``$MCSIM_CACHE_DIR``,
else ``$XDG_CACHE_HOME/mcsim``, else ``~/.cache/mcsim``. A compile says so on stderr, with CMake's
progress and its time (:class:`BuildProgress`); a build found in the cache says nothing. What a build
needs is checked first (:func:`check_environment`): each unusable variable is one McsimError line.
:mod:`mcsim.native.runtime` loads what this module built.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from mcsim.errors import McsimError
from mcsim.util import folder_lock
from mcsim.util.package_data import cache_dir, source_dir, writable_cache

log = logging.getLogger(__name__)

NS3_WHEEL_VERSION = "3.44.post0"
NS3_LIB_VERSION = "3.44"
NS3_LIBRARIES = ("core", "stats", "network")  # load order: network needs stats and core
LIBRARY_NAME = "libmcsim-ns3.so"  # the models: what a run loads
TEST_LIBRARY_NAME = "libmcsim-ns3-tests.so"  # the C++ test suites: loaded by run_cxx_test_suite only
LIBRARY_NAMES = (LIBRARY_NAME, TEST_LIBRARY_NAME)  # every library a completed build holds
BUILD_FORMAT = 2  # bump when the build procedure below changes what lands in the cache
BUILD_TYPE = "Release"
KEEP_BUILDS = 6  # completed builds kept in the cache, newest first
SOURCE_SUFFIXES = (".cc", ".h", ".txt", ".cmake")


@dataclass(frozen=True, slots=True)
class Ns3Wheel:
    """Where the installed ns3 wheel keeps its headers, libraries and CMake package."""

    version: str
    prefix: Path

    @property
    def include_dir(self) -> Path:
        return self.prefix / "include"

    @property
    def lib_dir(self) -> Path:
        return self.prefix / "lib64"

    @property
    def cmake_dir(self) -> Path:
        return self.prefix / "lib64" / "cmake" / "ns3"

    def library(self, module: str) -> Path:
        return self.lib_dir / f"libns{NS3_LIB_VERSION}-{module}.so"


@dataclass(frozen=True, slots=True)
class Toolchain:
    """The CMake and C++ compiler a build uses; ``identity`` changes when the compiler does."""

    cmake: Path
    cxx: Path
    identity: str


@dataclass(frozen=True, slots=True)
class BuildInfo:
    """One completed build in the cache."""

    key: str
    path: Path
    built: bool  # True if this call compiled it, False if it came from the cache
    seconds: float  # compile time when it was built

    @property
    def library(self) -> Path:
        return self.path / "lib" / LIBRARY_NAME

    @property
    def test_library(self) -> Path:
        return self.path / "lib" / TEST_LIBRARY_NAME

    @property
    def include_dir(self) -> Path:
        return self.path / "include"


def find_ns3() -> Ns3Wheel:
    """Return the installed ns3 wheel; raise McsimError if it is missing or the wrong version."""
    hint = f"install it with: pip install --force-reinstall ns3=={NS3_WHEEL_VERSION}"
    try:
        dist = importlib.metadata.distribution("ns3")
    except importlib.metadata.PackageNotFoundError:
        raise McsimError(f"the ns3 wheel is not installed; {hint}") from None
    if dist.version != NS3_WHEEL_VERSION:
        raise McsimError(f"ns3 wheel {dist.version} is installed but mcsim needs {NS3_WHEEL_VERSION}; {hint}")
    wheel = Ns3Wheel(version=dist.version, prefix=Path(str(dist.locate_file("ns3"))).resolve())
    for needed in (wheel.include_dir / "ns3" / "simulator.h", wheel.cmake_dir, *map(wheel.library, NS3_LIBRARIES)):
        if not needed.exists():
            raise McsimError(f"the ns3 wheel at {wheel.prefix} is incomplete ({needed} is missing); {hint}")
    return wheel


def find_cmake() -> Path:
    """Return CMake on PATH."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise McsimError(
            "CMake was not found on PATH; mcsim compiles its C++ models with it: "
            "install CMake >= 3.20 (apt-get install cmake, or pip install cmake)"
        )
    return Path(cmake)


def find_cxx() -> Path:
    """Return the C++ compiler ($CXX, else c++, g++ or clang++ on PATH), as the real file."""
    wanted = os.environ.get("CXX", "")
    candidates = [wanted] if wanted else ["c++", "g++", "clang++"]
    found = next((p for p in map(shutil.which, candidates) if p), None)
    if found is None:
        if not wanted:
            what = "no C++ compiler (c++, g++ or clang++) on PATH"
        elif len(wanted.split()) > 1:
            what = f"$CXX={wanted!r} was not found ($CXX names one program, without arguments)"
        else:
            what = f"$CXX={wanted!r} was not found"
        raise McsimError(f"{what}; install a C++20 compiler (apt-get install g++) or point $CXX at one")
    return Path(found).resolve()


def find_toolchain() -> Toolchain:
    """Return CMake and the C++ compiler (:func:`find_cmake`, :func:`find_cxx`)."""
    cmake, cxx = find_cmake(), find_cxx()
    st = cxx.stat()
    return Toolchain(cmake=cmake, cxx=cxx, identity=f"{cxx}:{st.st_size}:{st.st_mtime_ns}")


def _source_files(sources: Path) -> list[Path]:
    files = [
        p
        for p in sources.rglob("*")
        if p.is_file()
        and p.name.endswith(SOURCE_SUFFIXES)
        and not any(part.startswith(".") for part in p.relative_to(sources).parts)  # an install may sit in ~/.venv
    ]
    return sorted(files, key=lambda p: p.relative_to(sources).as_posix())


def build_key(sources: Path, toolchain: Toolchain, wheel: Ns3Wheel) -> str:
    """Hash of everything that decides what the build produces (16 hex digits)."""
    h = hashlib.sha256()
    h.update(f"format={BUILD_FORMAT};type={BUILD_TYPE};cxx={toolchain.identity};ns3={wheel.version}\n".encode())
    for path in _source_files(sources):
        data = path.read_bytes()
        h.update(f"{path.relative_to(sources).as_posix()}:{len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()[:16]


def _completed(cache: Path, key: str) -> BuildInfo | None:
    """Return the cached build for ``key`` if it is whole; remove it if it is not."""
    path = cache / "builds" / key
    marker = path / "BUILD.json"
    try:
        meta = json.loads(marker.read_text())
        sizes = meta["library_bytes"]
        if meta["key"] == key and all(
            0 < sizes[name] == (path / "lib" / name).stat().st_size for name in LIBRARY_NAMES
        ):
            return BuildInfo(key=key, path=path, built=False, seconds=float(meta["seconds"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if path.exists():
        log.warning("build cache entry %s is incomplete or corrupt; rebuilding it", path)
        shutil.rmtree(path, ignore_errors=True)
    return None


def cached_build(*, sources: Path | None = None, cache: Path | None = None) -> BuildInfo | None:
    """Return the completed build for the current sources, or None if a build is needed."""
    sources = sources or source_dir()
    cache = cache or cache_dir()
    return _completed(cache, build_key(sources, find_toolchain(), find_ns3()))


def _sync_tree(src: Path, dst: Path) -> None:
    """Make ``dst`` a copy of the source files of ``src``, touching only what changed.

    Unchanged files keep their modification time, so the persistent CMake tree recompiles only
    what changed.
    """
    wanted = {p.relative_to(src) for p in _source_files(src)}
    if dst.exists():
        for p in sorted(dst.rglob("*"), reverse=True):
            rel = p.relative_to(dst)
            if p.is_file() and rel not in wanted:
                p.unlink()
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
    for rel in sorted(wanted):
        target = dst / rel
        data = (src / rel).read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _first_error(log_text: str, snapshot: Path, sources: Path) -> str:
    """The first compiler or CMake error in a build log, with paths into the user's sources."""
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        if re.search(r"(\berror\b:|CMake Error|undefined reference)", line):
            text = line.strip()
            if text.startswith("CMake Error") and i + 1 < len(lines):
                text = f"{text} {' '.join(ln.strip() for ln in lines[i + 1 : i + 3] if ln.strip())}"
            return text.replace(str(snapshot), str(sources))
    tail = [ln.strip() for ln in lines if ln.strip()]
    return tail[-1] if tail else "no output"


BUILD_STARTS = "mcsim: compiling the C++ models (first use or changed sources; about a minute on 2 cores) ..."
PROGRESS_EVERY_S = 15.0  # off a terminal, a build's progress line at most this often
_STEP = re.compile(r"^\[\s*(\d+)%\]|^\[(\d+)/(\d+)\]")  # make's "[ 42%] Building ...", Ninja's "[12/80] ..."


def build_percent(line: str) -> int | None:
    """How far a CMake build is (0-100) by one line of its output, or None for a line without a step."""
    m = _STEP.match(line)
    if m is None:
        return None
    return int(m[1]) if m[1] is not None else 100 * int(m[2]) // max(int(m[3]), 1)


class BuildProgress:
    """What a build tells the user on stderr (the runtime's one place that writes there): a line when
    it starts, how far CMake is (a line updated in place on a terminal, else one every
    PROGRESS_EVERY_S; ``MCSIM_PROGRESS=0`` turns these off) and a line with the time when it is done.
    A build found in the cache says nothing."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.tty = self.stream.isatty()
        self.updates = os.environ.get("MCSIM_PROGRESS", "1") != "0"
        self.start_s = self.shown_s = clock()
        self.percent = -1
        self.open = False  # a terminal line is being updated in place

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def waiting(self, lock: Path) -> None:
        self._write(f"mcsim: waiting for another process that is compiling the C++ models (lock {lock}) ...\n")

    def start(self) -> None:
        self.start_s = self.shown_s = self.clock()
        self._write(BUILD_STARTS + "\n")

    def output(self, line: str) -> None:
        """One line of CMake's output."""
        percent = build_percent(line)
        if not self.updates or percent is None or percent <= self.percent:
            return
        self.percent, now = percent, self.clock()
        text = f"mcsim: compiling the C++ models: {percent}% after {now - self.start_s:.0f} s"
        if self.tty:
            self._write(f"\r{text}\033[K")
            self.open = True
        elif now - self.shown_s >= PROGRESS_EVERY_S:
            self._write(text + "\n")
            self.shown_s = now

    def finish(self, seconds: float | None) -> None:
        """The build took ``seconds``; None: it failed (its error follows) or was interrupted."""
        if self.open:
            self._write("\r\033[K")
            self.open = False
        if seconds is not None:
            self._write(f"mcsim: compiled the C++ models in {seconds:.1f} s\n")


def _run_logged(argv: list[str], log_file: Path, on_line: Callable[[str], None]) -> bool:
    with open(log_file, "a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        with subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                on_line(line)
        return proc.returncode == 0


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a build needs, found and checked before anything is compiled."""

    sources: Path
    cache: Path
    wheel: Ns3Wheel
    toolchain: Toolchain
    key: str
    done: BuildInfo | None  # the completed build in the cache, if any


def _plan(sources: Path | None, cache: Path | None, force: bool) -> _Plan:
    sources = sources or source_dir()
    wheel, toolchain = find_ns3(), find_toolchain()
    key = build_key(sources, toolchain, wheel)
    folder = cache or cache_dir()
    done = None if force else _completed(folder, key)
    if done is None:  # a completed build loads from a read-only cache; a new one needs a writable one
        folder = writable_cache(cache)
    return _Plan(sources, folder, wheel, toolchain, key, done)


def check_environment() -> None:
    """Raise McsimError (one line) unless the C++ models can be loaded: the sources, the ns3 wheel,
    CMake and a compiler, and a completed build in the cache or a cache folder to build one in.
    Compiles nothing (it hashes the sources): what a command calls before any work."""
    _plan(None, None, force=False)


def ensure_built(*, sources: Path | None = None, cache: Path | None = None, force: bool = False) -> BuildInfo:
    """Return a completed build of ns3_modules/, compiling it first if the cache has none.

    A compile says so on stderr as it starts, shows CMake's progress and says when it is done
    (:class:`BuildProgress`); a build found in the cache says nothing.

    Parameters
    ----------
    sources, cache
        Override :func:`source_dir` and :func:`cache_dir` (tests use temporary folders).
    force
        Rebuild even if the cache has a completed build for these sources.

    Raises
    ------
    McsimError
        No compiler or CMake, a wrong ns3 wheel, a cache folder that cannot be written, or a compile
        error (the message names the first error and the full log).
    """
    plan = _plan(sources, cache, force)
    if plan.done is not None:
        return plan.done
    progress = BuildProgress()
    with folder_lock.locked(plan.cache, on_wait=progress.waiting):
        if not force and (info := _completed(plan.cache, plan.key)) is not None:
            return info  # another process built it while we waited for the lock
        progress.start()
        info = None
        try:
            info = _build_locked(plan, progress.output)
        finally:
            progress.finish(info.seconds if info is not None else None)
        return info


def _build_locked(plan: _Plan, on_line: Callable[[str], None]) -> BuildInfo:
    sources, cache, key, wheel, toolchain = plan.sources, plan.cache, plan.key, plan.wheel, plan.toolchain
    start = time.monotonic()
    work_id = hashlib.sha256(f"{sources.resolve()}|{toolchain.identity}|{BUILD_TYPE}".encode()).hexdigest()[:12]
    work = cache / "work" / work_id
    snapshot, tree = work / "src", work / "build"
    (cache / "logs").mkdir(parents=True, exist_ok=True)
    log_file = cache / "logs" / f"build-{key}.log"
    log_file.write_text(f"mcsim build {key} of {sources}\n")
    _sync_tree(sources, snapshot)
    configure = [
        str(toolchain.cmake),
        "-S",
        str(snapshot),
        "-B",
        str(tree),
        f"-DCMAKE_BUILD_TYPE={BUILD_TYPE}",
        f"-DCMAKE_CXX_COMPILER={toolchain.cxx}",
        f"-Dns3_DIR={wheel.cmake_dir}",
    ]
    log.info("building ns3_modules (%s) in %s", key, tree)
    ok = _run_logged(configure, log_file, on_line)
    if not ok and tree.exists():  # a stale or corrupt CMake cache: start the tree afresh, once
        shutil.rmtree(tree)
        ok = _run_logged(configure, log_file, on_line)
    ok = ok and _run_logged(
        [str(toolchain.cmake), "--build", str(tree), "--parallel", str(os.cpu_count() or 1)], log_file, on_line
    )
    if not ok:
        first = _first_error(log_file.read_text(errors="replace"), snapshot, sources)
        raise McsimError(f"compiling ns3_modules failed: {first} (full build log: {log_file})")
    seconds = time.monotonic() - start
    final = cache / "builds" / key
    stage = cache / "builds" / f"{key}.tmp-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "lib").mkdir(parents=True)
    for name in LIBRARY_NAMES:
        shutil.copy2(tree / "lib" / name, stage / "lib" / name)
    shutil.copytree(tree / "include", stage / "include")
    shutil.copy2(log_file, stage / "build.log")
    meta = {
        "key": key,
        "sources": str(sources),
        "compiler": toolchain.identity,
        "ns3": wheel.version,
        "seconds": round(seconds, 3),
        "library_bytes": {name: (stage / "lib" / name).stat().st_size for name in LIBRARY_NAMES},
    }
    (stage / "BUILD.json").write_text(json.dumps(meta, indent=1))  # the marker: written last
    shutil.rmtree(final, ignore_errors=True)
    os.replace(stage, final)
    _prune(cache / "builds")
    return BuildInfo(key=key, path=final, built=True, seconds=seconds)


def _prune(builds: Path) -> None:
    """Keep the KEEP_BUILDS newest completed builds; remove the rest and stale staging folders."""
    done = sorted(
        (p for p in builds.iterdir() if (p / "BUILD.json").is_file()),
        key=lambda p: (p / "BUILD.json").stat().st_mtime_ns,
        reverse=True,
    )
    for old in done[KEEP_BUILDS:]:
        shutil.rmtree(old, ignore_errors=True)
    for stale in builds.glob("*.tmp-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)
