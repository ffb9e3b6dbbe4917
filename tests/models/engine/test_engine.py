# SPDX-License-Identifier: GPL-2.0-only
"""The event engine: mcsim's event loop and scheduler order events exactly as ns-3's own do."""

from mcsim.native import runtime


def test_cxx_test_suite_passes(capfd):
    assert runtime.run_cxx_test_suite("mcsim-engine") == 0
    assert "PASS mcsim-engine" in capfd.readouterr().out


def test_every_run_uses_the_wheel_scheduler():
    ns = runtime.cppyy_ns()
    value = ns.TypeIdValue()
    ns.GlobalValue.GetValueByName("SchedulerType", value)
    assert value.Get().GetName() == "ns3::mcsim::WheelScheduler"


def test_every_run_uses_the_event_loop():
    from mcsim import Scenario

    Scenario(topology="fat-tree-k4", bytes_per_rank="4KiB", algorithm="mcast").run()
    ns = runtime.cppyy_ns()
    value = ns.StringValue()
    ns.GlobalValue.GetValueByName("SimulatorImplementationType", value)
    assert value.Get() == "ns3::mcsim::EventLoop"
    assert ns.Simulator.GetImplementation().GetInstanceTypeId().GetName() == "ns3::mcsim::EventLoop"
