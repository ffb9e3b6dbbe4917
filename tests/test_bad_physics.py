# SPDX-License-Identifier: GPL-2.0-only
"""Issue 49: physics that cannot work, fields a collective does not read, and the run functions' keyword names:
each refused before any C++ exists, one McsimError line with the bound it violates and its source."""

import pytest

from mcsim.config.fabric import FabricConfig, Flow
from mcsim.config.rdma import RcOp
from mcsim.errors import McsimError
from mcsim.runs import flows, verbs
from mcsim.runs.stream import two_hosts
from mcsim.topology.physics import Link

LINK = Link(rate_bps=10**9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: flows.simulate(two_hosts(LINK), [Flow(src=0, dst=1, size_b=1)], config=FabricConfig()),
            r"^simulate: config= is now called fabric= \(as Scenario calls it\); pass fabric=FabricConfig\(\.\.\.\)$",
        ),
        (
            lambda: flows.simulate(two_hosts(LINK), [Flow(src=0, dst=1, size_b=1)], fabrik=FabricConfig()),
            r"^simulate: unknown keyword fabrik=$",
        ),
        (
            lambda: verbs.run_verbs(
                two_hosts(LINK), rc_ops=[RcOp(src=0, dst=1, verb="write", size_b=1)], config=FabricConfig()
            ),
            r"^run_verbs: config= is now called fabric= \(as Scenario calls it\); pass fabric=FabricConfig\(\.\.\.\)$",
        ),
    ],
)
def test_the_run_functions_take_fabric_and_refuse_config_with_a_hint(monkeypatch, call, message):
    monkeypatch.setattr(flows, "Simulation", None)  # a call would fail: the check comes first
    monkeypatch.setattr(verbs, "Simulation", None)
    with pytest.raises(McsimError, match=message):
        call()
