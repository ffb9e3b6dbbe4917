# SPDX-License-Identifier: GPL-2.0-only
"""The counter contract: C++ names every counter column (X-macro lists), Python reads the names."""

import re

import pytest

from mcsim import topology
from mcsim.config.fabric import Flow
from mcsim.config.rdma import RcOp, UdStream
from mcsim.errors import McsimError
from mcsim.native import runtime
from mcsim.result import DROP_CAUSES
from mcsim.runs.flows import simulate
from mcsim.runs.stream import two_hosts
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import Link

TABLES = (
    "port",
    "pfc",
    "ecn",
    "int",
    "cc",
    "host",
    "source",
    "aggregation",
    "rc_qp",
    "ud_qp",
    "nic",
    "rank",
    "dpa_thread",
)
LINK = Link(rate_bps=100 * 10**9, delay_ps=100_000)


def test_every_reader_registers_its_table():
    ns = runtime.cppyy_ns()
    assert sorted(str(t) for t in ns.mcsim.CounterTable.GetTables()) == sorted(TABLES)


@pytest.mark.parametrize("table", TABLES)
def test_names_are_unique_snake_case(table):
    names = runtime.counter_names(table)
    assert names and len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names), names


@pytest.mark.parametrize(
    ("table", "struct"),
    [("port", "Port"), ("host", "Host"), ("rc_qp", "RcQp"), ("nic", "Nic")],
)
def test_a_struct_table_has_one_column_per_field(table, struct):
    ns = runtime.cppyy_ns()
    count = int(getattr(ns.mcsim, struct).NUM_COUNTERS)
    extra = {"nic": 3}.get(table, 0)  # the NIC's row: its processor's completions and busy time, the TX one's
    assert len(runtime.counter_names(table)) == count + extra


def test_unknown_table_is_one_line():
    with pytest.raises(
        McsimError, match=r"^CounterTable: no table nope; known: aggregation, cc, dpa_thread, ecn, host, "
    ) as info:
        runtime.counter_names("nope")
    assert "\n" not in str(info.value)


def test_drop_causes_name_port_counters():
    assert set(DROP_CAUSES.values()) <= set(runtime.counter_names("port"))


def test_results_carry_the_cxx_names_in_order():
    g = topology.leaf_spine(1, 0, 2, rate_bps=LINK.rate_bps, delay_ps=LINK.delay_ps)
    r = simulate(g, [Flow(src=0, dst=1, size_b=8192)])
    assert tuple(r.ports) == runtime.counter_names("port")
    assert tuple(r.hosts) == runtime.counter_names("host")
    assert tuple(r.sources) == runtime.counter_names("source")
    v = run_verbs(
        two_hosts(LINK),
        rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=8192)],
        ud_streams=[UdStream(src=0, dst=1, size_b=4096, count=2)],
    )
    assert tuple(v.rc_requester) == tuple(v.rc_responder) == runtime.counter_names("rc_qp")
    assert tuple(v.ud) == runtime.counter_names("ud_qp")
    assert tuple(v.nic) == runtime.counter_names("nic")
    assert v.rc_responder["rx_payload"][0] == 8192  # the columns hold what their names say
    assert v.rc_requester["tx_payload"][0] == 8192
