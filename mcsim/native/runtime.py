# SPDX-License-Identifier: GPL-2.0-only
"""Load ns-3's libraries and mcsim's (built by mcsim.native.library); the only module that imports cppyy.

Loading
-------
Only libns3.44-core and -network (and -stats, which network needs) and the models' library are
loaded, with ctypes, and every run calls C++ through the library's C ABI (:mod:`mcsim.native.abi`):
no cppyy import (about 0.5 s) and no call wrapper compiled by cling (about 0.8 s on a process's
first run), against 10-12 s and 650 MB for the stock ``from ns import ns``. The time resolution is
set to picoseconds once, at load. The test suites' library is loaded only by
:func:`run_cxx_test_suite`, never for a run.

cppyy is for looking inside C++ objects (tests, trace sinks): :func:`cppyy_ns` imports it on
first use, over the same libraries, with only the headers mcsim uses, from a precompiled header
made once per build (mcsim.native.cling_pch; without it cling parses them, about 0.7 s more).

Counters
--------
C++ is the one source of the counter names: each counter struct is an X-macro list (field,
initial value, name) and each bulk reader registers the column names of its rows
(``ns3::mcsim::CounterTable``); :func:`counter_names` and :func:`mcsim.native.arrays.read_counters`
are the one place Python reads them.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcsim.errors import McsimError
from mcsim.native import cling_pch, library

# Headers cling parses at load: the core API that Python calls, plus every mcsim header.
INCLUDES = (
    "ns3/simulator.h",
    "ns3/nstime.h",
    "ns3/data-rate.h",
    "ns3/uinteger.h",
    "ns3/integer.h",
    "ns3/double.h",
    "ns3/boolean.h",
    "ns3/enum.h",
    "ns3/string.h",
    "ns3/packet.h",
    "ns3/global-value.h",
    "ns3/type-id.h",
    "ns3/object-factory.h",
    "ns3/mcsim/mcsim.h",
)
# every run (each Simulator after Destroy) uses this simulator and scheduler: mcsim's event loop
# (ns-3's DefaultSimulatorImpl without its per-event EventId, with a direct path for the models)
# and timing wheel, the same order as ns-3's own (time, then insertion: deterministic) and faster
# (benchmarks/event_rate.py)
SIMULATOR = "ns3::mcsim::EventLoop"
SCHEDULER = "ns3::mcsim::WheelScheduler"
# The wheel's libraries were compiled with these; cling sees the same inline code.
CXX_DEFINES = ("NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE")


_lib: ctypes.CDLL | None = None  # mcsim's library, its C ABI declared (mcsim.native.abi)
_build: library.BuildInfo | None = None  # the build load() loaded
_ns: Any = None  # the cppyy ns3 namespace, once cppyy_ns() made it


def load() -> ctypes.CDLL:
    """Build if needed, load ns-3's libraries and mcsim's once; return mcsim's library, its C ABI
    declared (:mod:`mcsim.native.abi`).

    cppyy is not imported: every run calls C++ through that ABI. Later calls return the same
    library: a process keeps the library it loaded first, even if the sources change meanwhile.
    """
    global _lib, _build
    if _lib is not None:
        return _lib
    wheel = library.find_ns3()
    info = library.ensure_built()
    from mcsim.native import abi  # numpy: loaded with the library, not with mcsim

    for module in library.NS3_LIBRARIES:
        ctypes.CDLL(str(wheel.library(module)), mode=ctypes.RTLD_GLOBAL)
    lib = abi.declare(ctypes.CDLL(str(info.library), mode=ctypes.RTLD_GLOBAL))
    lib.mcsim_init(SIMULATOR.encode(), SCHEDULER.encode())  # picosecond resolution (once), the engine
    _lib, _build = lib, info
    return lib


def cppyy_ns() -> Any:
    """The cppyy ``ns3`` namespace over the libraries :func:`load` loaded, for looking inside C++
    objects (tests, trace sinks); mcsim's models are in ``ns3.mcsim``. The first call imports cppyy
    and has cling read the headers (from the build's precompiled header, mcsim.native.cling_pch)."""
    global _ns
    if _ns is not None:
        return _ns
    load()
    assert _build is not None
    wheel, info = library.find_ns3(), _build
    pch = None
    if "cppyy" not in sys.modules and cling_pch.ENV not in os.environ:  # cling reads it when it starts
        pch = cling_pch.ensure(info.path, (wheel.include_dir, info.include_dir), INCLUDES, CXX_DEFINES)
    try:
        if pch is not None:
            os.environ[cling_pch.ENV] = str(pch)
        import cppyy
        import libcppyy
    except ImportError as exc:
        raise McsimError(
            f"cppyy is not importable ({exc}); reinstall: pip install ns3=={library.NS3_WHEEL_VERSION}"
        ) from None
    finally:
        if pch is not None:  # this build's PCH is for this process only, not for its children
            del os.environ[cling_pch.ENV]
    libcppyy.AddSmartPtrType("Ptr")
    cppyy.cppexec("".join(f"#define {d} 1\n" for d in CXX_DEFINES))
    cppyy.add_include_path(str(wheel.include_dir))
    cppyy.add_include_path(str(info.include_dir))
    for module in library.NS3_LIBRARIES:  # loaded already: cppyy only learns of them
        cppyy.load_library(str(wheel.library(module)))
    cppyy.load_library(str(info.library))
    for header in INCLUDES:
        cppyy.include(header)
    _ns = cppyy.gbl.ns3
    return _ns


def cppyy_module() -> Any:
    """The cppyy module itself (after :func:`cppyy_ns`), for the few callers that need its helpers."""
    cppyy_ns()
    import cppyy

    return cppyy


def cppyy_object(handle: Any) -> Any:
    """A cppyy view of the C++ object behind a :class:`mcsim.native.abi.Handle` or
    :class:`mcsim.native.abi.Factory` (not owning it: the handle must outlive the view)."""
    return cppyy_module().bind_object(handle.address, handle.cxx_type)


@functools.cache
def counter_names(table: str) -> tuple[str, ...]:
    """The column names of a C++ counter table, in the order its bulk reader writes them.

    ``table`` is one that a reader registered: "port", "pfc", "ecn", "int", "host", "source" (Fabric), "rc_qp",
    "ud_qp" (VerbsWorkload), "nic", "cc" (RdmaStack: congestion control), "rank" (CollectiveTeam),
    "dpa_thread" (Dpa). The names come from C++ (ns3::mcsim::CounterTable), generated with the counter
    structs' fields.
    """
    lib = load()
    lib.mcsim_counter_names(table.encode())  # McsimError for a table no reader registered
    from mcsim.native import abi

    return tuple(abi.last_text(lib).splitlines())


@functools.cache
def shared_constants() -> dict[str, int]:
    """The constants C++ shares with Python, by name (``capi::Constants``: GROUP_FLAG, NO_GROUP, ...).

    mcsim.config declares each too (config loads no C++); tests/native/test_constants.py checks that
    every declaration is the library's value.
    """
    lib = load()
    lib.mcsim_constants()
    from mcsim.native import abi

    return {name: int(value) for name, value in (line.split() for line in abi.last_text(lib).splitlines())}


def run_cxx_test_suite(name: str) -> int:
    """Run one ns-3 TestSuite of mcsim's test library (``<module>/test/*.cc``); return 0 if it passed.

    The first call loads the test library of the build :func:`load` loaded (its suites register
    as it loads). The runner prints its report to the process's stdout. An unknown suite name
    returns non-zero.
    """
    global _tests
    lib = load()
    if _tests is None:
        assert _build is not None  # load() set it
        from mcsim.native import abi

        _tests = abi.declare(ctypes.CDLL(str(_build.test_library), mode=ctypes.RTLD_GLOBAL), abi.TEST_SIGNATURES)
    sys.stdout.flush()
    status = int(_tests.mcsim_run_test_suite(name.encode()))
    lib.mcsim_bind_globals(SIMULATOR.encode(), SCHEDULER.encode())  # TestCases end with Config::Reset()
    return status


_tests: ctypes.CDLL | None = None  # the test library, once run_cxx_test_suite loaded it


def destroy() -> None:
    """End the current simulation (Simulator::Destroy) so that the process can build another."""
    if _lib is not None:
        _lib.mcsim_destroy()


def dispose(*objects: Any) -> None:
    """End the simulation and free C++ objects, in the one safe order: drop the pending events first
    (a run stopped early, e.g. by Ctrl-C, leaves events, and some live inside the objects, such as a
    port's arrival event), then Dispose each object, then end the simulator again in case a Dispose
    touched it (cancelling a timer)."""
    destroy()
    for obj in objects:
        obj.dispose()
    destroy()
    for obj in objects:  # after the simulator dropped every event that could point at them
        obj.release()


@contextmanager
def disposed_on_error(obj: Any) -> Iterator[None]:
    """Dispose ``obj`` (:func:`dispose`) if the block raises: a new C++ object being set up, not handed to a
    Simulation yet."""
    try:
        yield
    except BaseException:
        dispose(obj)
        raise
