# SPDX-License-Identifier: GPL-2.0-only
"""simulation.py: one lifecycle for every run; what it owns is disposed in order, however the block ends."""

import pytest
from numpy.testing import assert_array_equal

from mcsim.config.fabric import Faults, Flow
from mcsim.errors import Interrupted, McsimError
from mcsim.native import fabric, runtime
from mcsim.native.simulation import Simulation
from mcsim.routing.layout import layout_of
from mcsim.runs.flows import simulate
from mcsim.topology import leaf_spine

LINK = {"rate_bps": 100 * 10**9, "delay_ps": 100_000}


class Owned:
    def __init__(self, name, log):
        self.name, self.log, self.cxx = name, log, self

    def dispose(self):  # as an abi.Handle's
        self.log.append(self.name)

    def release(self):
        pass

    def delivered_packets(self):
        return 0


@pytest.mark.parametrize("error", [None, RuntimeError("boom"), Interrupted("interrupted: ...")])
def test_applications_then_the_stack_then_the_fabric_are_disposed_however_the_block_ends(error):
    log = []
    with pytest.raises(type(error)) if error else _nothing():
        with Simulation() as sim:
            sim.own_fabric(Owned("fabric", log))
            sim.own_stack(Owned("stack", log))
            sim.own_app(Owned("team0", log))
            sim.own_app(Owned("team1", log))
            if error:
                raise error
    assert log == ["team0", "team1", "stack", "fabric"]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_simulation_owns_one_fabric_and_one_stack():
    with Simulation() as sim:
        sim.own_fabric(Owned("a", []))
        with pytest.raises(AssertionError, match="one fabric"):
            sim.own_fabric(Owned("b", []))
        sim.own_stack(Owned("s", []))
        with pytest.raises(AssertionError, match="one RDMA stack"):
            sim.own_stack(Owned("t", []))


def test_a_run_abandoned_midway_leaves_nothing_behind_for_the_next():
    g = leaf_spine(2, 1, 2, **LINK)
    flows = [Flow(src=h, dst=(h + 1) % 4, size_b=100_000, flow_id=h) for h in range(4)]
    before = simulate(g, flows)
    with pytest.raises(RuntimeError, match="abandoned"), Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout_of(g)))
        fab.add_flows(flows)
        sim.lib.mcsim_run_for(0.0)  # some events run, many are left pending
        raise RuntimeError("abandoned")
    assert sim.lib.mcsim_is_finished()  # the pending events were dropped
    after = simulate(g, flows)
    assert after.end_ps == before.end_ps
    for name in before.ports:
        assert_array_equal(after.ports[name], before.ports[name])


def test_a_fabric_that_fails_to_build_is_disposed_at_once(monkeypatch):
    disposed = []
    real = runtime.dispose
    monkeypatch.setattr(runtime, "dispose", lambda *objs: disposed.extend(objs) or real(*objs))
    monkeypatch.setattr(fabric, "_set_faults", lambda *args: (_ for _ in ()).throw(RuntimeError("wiring")))
    with pytest.raises(RuntimeError, match="wiring"):
        fabric.build(layout_of(leaf_spine(1, 0, 2, **LINK)))
    assert len(disposed) == 1


def test_bad_input_found_while_building_never_loads_cxx(monkeypatch):
    def refuse():
        raise AssertionError("C++ was loaded")

    monkeypatch.setattr(runtime, "load", refuse)
    g = leaf_spine(1, 0, 2, **LINK)
    with pytest.raises(McsimError, match=r"Faults: link_loss\[\(0, 1\)\]: \(0, 1\) is not an edge"):
        with Simulation() as sim:
            sim.own_fabric(fabric.build(layout_of(g), faults=Faults(link_loss={(0, 1): 0.1})))
