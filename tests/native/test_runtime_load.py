# SPDX-License-Identifier: GPL-2.0-only
"""runtime.load: the lean ns-3 + mcsim library through its C ABI (no cppyy), cppyy on request,
the C++ test-suite runner (each module's suite is launched from tests/models/<module>/), layering."""

import ctypes
import subprocess
import sys

import numpy as np
import pytest

from mcsim.errors import McsimError
from mcsim.native import abi, library, runtime


def test_load_returns_the_library_once_and_runs_never_import_cppyy():
    code = (
        "import sys; from mcsim import Scenario; from mcsim.native import runtime; "
        "lib = runtime.load(); assert lib is runtime.load(); "
        "r = Scenario(topology='fat-tree-k4', bytes_per_rank='16KiB', algorithm='mcast', verify=True).run(); "
        "assert r.verified; print('cppyy' in sys.modules, 'libcppyy' in sys.modules)"
    )
    library.ensure_built()  # so that the process below finds the build in the cache
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["False", "False"]
    assert proc.stderr == "", "loading a build from the cache and a short run say nothing on stderr"


def test_a_cxx_exception_or_a_wrong_handle_is_one_error_line():
    lib = runtime.load()
    fabric = abi.Handle(lib, "ns3::mcsim::Fabric")
    try:
        rows = np.zeros(4, dtype=np.uint32)
        with pytest.raises(McsimError, match=r"^Fabric::SetAggregationTrees: slots of 0 bytes$"):
            lib.mcsim_fabric_set_aggregation_trees(fabric, rows, 1, 0)
        with pytest.raises(McsimError, match=r"^a handle is not a ns3::mcsim::CollectiveTeam$"):
            lib.mcsim_team_n_ranks(fabric)
    finally:
        runtime.dispose(fabric)
    source = abi.Handle(lib, "ns3::mcsim::CompletionSource")
    try:
        with pytest.raises(McsimError, match=r"^a null ObjectFactory$"):
            lib.mcsim_source_setup(source, None)
    finally:
        runtime.dispose(source)
    with pytest.raises(ctypes.ArgumentError, match=r"a released ns3::mcsim::Fabric handle was used"):
        lib.mcsim_fabric_n_ports(fabric)
    with pytest.raises(McsimError, match=r"^no ns-3 type is named ns3::mcsim::NoSuchType$"):
        abi.Handle(lib, "ns3::mcsim::NoSuchType")
    with pytest.raises(McsimError, match=r"^no ns-3 type is named ns3::mcsim::NoSuchType$"):
        abi.Factory(lib, "ns3::mcsim::NoSuchType")


def test_every_exported_abi_function_is_declared_and_every_declared_one_exported():
    info = library.ensure_built()
    exported = {}
    for path in (info.library, info.test_library):
        out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True)
        exported[path.name] = {line.split()[-1] for line in out.stdout.splitlines() if " T mcsim_" in line}
    untyped = {"mcsim_last_text", "mcsim_factory_free"}  # declared by abi.declare itself, not by a table
    declared = set(abi.SIGNATURES) | set(abi.HANDLE_SIGNATURES) | untyped
    assert exported[info.library.name] == declared
    assert exported[info.test_library.name] == set(abi.TEST_SIGNATURES)


def test_load_exposes_mcsim_models_with_picosecond_time():
    ns = runtime.cppyy_ns()
    assert ns is runtime.cppyy_ns(), "a second call returns the same namespace"
    port = ns.CreateObject[ns.mcsim.Port]()
    assert port.GetInstanceTypeId().GetName() == "ns3::mcsim::Port"
    assert ns.Time.GetResolution() == ns.Time.PS
    assert ns.PicoSeconds(1).GetPicoSeconds() == 1


def test_event_loop_runs_to_completion_from_python():
    ns = runtime.cppyy_ns()
    ns.Simulator.Stop(ns.MicroSeconds(3))
    ns.Simulator.Run()
    assert ns.Simulator.Now().GetPicoSeconds() == 3_000_000
    runtime.destroy()
    assert ns.Simulator.Now().GetPicoSeconds() == 0, "Destroy resets the clock for the next run"


def test_unknown_cxx_test_suite_fails(capfd):
    assert runtime.run_cxx_test_suite("no-such-suite") != 0


def test_loads_only_core_network_and_mcsim():
    code = (
        "import sys; from mcsim.native import runtime; runtime.load(); "
        "maps = open('/proc/self/maps').read(); "
        "print(sorted({l.rsplit('/', 1)[-1] for l in maps.splitlines() if 'libns3' in l or 'libmcsim' in l}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["libmcsim-ns3.so", "libns3.44-core.so", "libns3.44-network.so", "libns3.44-stats.so"]


def test_only_the_test_runner_loads_the_test_library():
    code = (
        "from mcsim.native import runtime; runtime.load(); "
        "loaded = lambda: 'libmcsim-ns3-tests.so' in open('/proc/self/maps').read(); "
        "before = loaded(); runtime.run_cxx_test_suite('mcsim-engine'); print(before, loaded())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-2:] == ["False", "True"]


def test_planning_modules_do_not_import_cppyy():
    modules = "mcsim.units, mcsim.errors, mcsim.topology.physics, mcsim.runs.stream, mcsim.cli"
    code = f"import sys, {modules}; print('cppyy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_cxx_allocation_failure_is_one_line_that_says_so():
    from mcsim.native.abi import _explained

    text = _explained("std::bad_alloc", "mcsim_run_for")
    assert text.startswith("out of memory: a C++ allocation failed in mcsim_run_for (std::bad_alloc): ")
    assert "\n" not in text
    assert _explained("line one\nline two", "f") == "line one line two"  # every C++ message is one line
    assert _explained("Port: Rate=0 must be > 0", "f") == "Port: Rate=0 must be > 0"


def test_a_python_allocation_failure_in_a_command_is_one_line(monkeypatch, capsys):
    from mcsim import cli

    def exhausted(args):
        raise MemoryError

    monkeypatch.setattr("mcsim.topology.commands.cmd_topo_show", exhausted)
    assert cli.main(["topo", "show", "fat-tree-k4"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["mcsim: error: topo: out of memory (a Python allocation failed); see Scenario.estimate()"]
