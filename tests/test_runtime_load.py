# SPDX-License-Identifier: GPL-2.0-only
"""runtime.load: the lean ns-3 + mcsim library in cppyy, the C++ test suites, layering."""

import subprocess
import sys

from mcsim import runtime


def test_load_exposes_mcsim_models_with_picosecond_time():
    ns = runtime.load()
    assert ns is runtime.load(), "loading twice returns the same namespace"
    port = ns.CreateObject[ns.mcsim.Port]()
    assert port.GetInstanceTypeId().GetName() == "ns3::mcsim::Port"
    assert ns.Time.GetResolution() == ns.Time.PS
    assert ns.PicoSeconds(1).GetPicoSeconds() == 1


def test_event_loop_runs_to_completion_from_python():
    ns = runtime.load()
    ns.Simulator.Stop(ns.MicroSeconds(3))
    ns.Simulator.Run()
    assert ns.Simulator.Now().GetPicoSeconds() == 3_000_000
    runtime.destroy()
    assert ns.Simulator.Now().GetPicoSeconds() == 0, "Destroy resets the clock for the next run"


def test_cxx_test_suite_passes(capfd):
    assert runtime.run_cxx_test_suite("mcsim-fabric") == 0
    assert "PASS mcsim-fabric" in capfd.readouterr().out


def test_unknown_cxx_test_suite_fails(capfd):
    assert runtime.run_cxx_test_suite("no-such-suite") != 0


def test_loads_only_core_network_and_mcsim():
    code = (
        "import sys; from mcsim import runtime; runtime.load(); "
        "maps = open('/proc/self/maps').read(); "
        "print(sorted({l.rsplit('/', 1)[-1] for l in maps.splitlines() if 'libns3' in l or 'libmcsim' in l}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["libmcsim-ns3.so", "libns3.44-core.so", "libns3.44-network.so", "libns3.44-stats.so"]


def test_only_the_test_runner_loads_the_test_library():
    code = (
        "from mcsim import runtime; runtime.load(); "
        "loaded = lambda: 'libmcsim-ns3-tests.so' in open('/proc/self/maps').read(); "
        "before = loaded(); runtime.run_cxx_test_suite('mcsim-engine'); print(before, loaded())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-2:] == ["False", "True"]


def test_planning_modules_do_not_import_cppyy():
    code = "import sys, mcsim.units, mcsim.errors, mcsim.physics, mcsim.link, mcsim.cli; print('cppyy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
