# SPDX-License-Identifier: GPL-2.0-only
"""One counter reader for every table: mcsim_counters(handle, table, out, n) reads a table by its name
(capi::CounterReaders) and writes what the C++ object's own bulk getter writes (the seven fabric readers,
the team's and the DPA's it replaced were one line each around those getters); an unknown table, another
object's table or a wrong size is one McsimError line, never an abort."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from mcsim import topology
from mcsim.config.congestion import DcqcnConfig, HpccConfig
from mcsim.config.dpa import DpaConfig
from mcsim.config.fabric import FabricConfig, Flow
from mcsim.config.rdma import RcOp, RdmaConfig, UdStream
from mcsim.errors import McsimError
from mcsim.native import abi, fabric, runtime
from mcsim.native.arrays import read_counters
from mcsim.native.simulation import Simulation
from mcsim.routing.layout import layout_of
from mcsim.runs.dpa import saturate
from mcsim.runs.flows import simulate
from mcsim.runs.scenario import Scenario
from mcsim.runs.verbs import run_verbs

# table -> the C++ getter that wrote it before (a cppyy view of the handle -> its bound method)
GETTERS = {
    "port": lambda v: v.GetPortCounters,
    "pfc": lambda v: v.GetPfcCounters,
    "ecn": lambda v: v.GetEcnCounters,
    "int": lambda v: v.GetIntCounters,
    "host": lambda v: v.GetHostCounters,
    "source": lambda v: v.GetSourceCounters,
    "aggregation": lambda v: v.GetAggregationCounters,
    "rank": lambda v: v.GetStats,  # a CollectiveTeam's
    "dpa_thread": lambda v: v.GetProcessor().GetThreadCounters,  # a CompletionSource's Dpa's
    "nic": lambda v: v.GetHostCounters,  # an RdmaStack's
    "cc": lambda v: v.GetCcCounters,
    "rc_qp": lambda v: v.GetRcQpCounters,  # a VerbsWorkload's
    "ud_qp": lambda v: v.GetUdQpCounters,
}
RATE_BPS, DELAY_PS = 100 * 10**9, 100_000
COMPLETIONS = 2_000


@pytest.fixture
def checked_reads(monkeypatch):
    """Every mcsim_counters call of the test, checked against the getter it replaced: table -> the values
    read (all calls' values, concatenated)."""
    lib = runtime.load()
    by_name = lib.mcsim_counters
    seen: dict[str, list[np.ndarray]] = {}

    def read_and_compare(handle, table, out, n):
        result = by_name(handle, table, out, n)
        before = np.zeros_like(out)
        GETTERS[table.decode()](runtime.cppyy_object(handle))(before, n)
        assert_array_equal(out, before, err_msg=table.decode())
        seen.setdefault(table.decode(), []).append(out[:n].copy())
        return result

    monkeypatch.setattr(lib, "mcsim_counters", read_and_compare)
    return seen


def test_every_table_read_by_name_is_what_its_getter_writes(checked_reads):
    # an incast with PFC and ECN marking (port, host, source, pfc, ecn): lossless, every packet sent arrives
    g = topology.leaf_spine(1, 0, 16, rate_bps=RATE_BPS, delay_ps=DELAY_PS)
    flows = [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in range(1, 16)]
    r = simulate(g, flows, fabric=FabricConfig(flow_control="pfc", header_b=20, ecn=True))
    assert int(r.sources["sent_packets"].sum()) == int(r.hosts["rx_packets"].sum()) == 15 * (1 << 20) // 4096
    assert r.pfc is not None and int(r.pfc["pause_tx"].sum()) > 0
    # HPCC asks the switches for INT records (int)
    ops = [RcOp(verb="write", src=s, dst=0, size_b=256 << 10) for s in (1, 2)]
    v = run_verbs(
        topology.leaf_spine(1, 0, 3, rate_bps=RATE_BPS, delay_ps=DELAY_PS),
        rc_ops=ops,
        rdma=RdmaConfig(wire_format="rocev2", congestion=HpccConfig()),
        fabric=FabricConfig(flow_control="pfc"),
    )
    assert v.fabric.telemetry is not None
    # RC WRITEs beside UD datagrams (nic, rc_qp, ud_qp): every datagram arrives on the lossless fabric
    v = run_verbs(
        topology.leaf_spine(1, 0, 3, rate_bps=RATE_BPS, delay_ps=DELAY_PS),
        rc_ops=[RcOp(verb="write", src=s, dst=0, size_b=64 << 10) for s in (1, 2)],
        ud_streams=[UdStream(src=0, dst=1, size_b=1024, count=16)],
    )
    assert int(v.nic["rx_packets"].sum()) >= 2 * (64 << 10) // 4096 + 16
    # DCQCN where every packet is marked (cc): the receivers send CNPs, the senders get them
    c = Scenario(
        topology=topology.leaf_spine(1, 0, 4, rate_bps=RATE_BPS, delay_ps=DELAY_PS),
        algorithm="ring",
        bytes_per_rank="256KiB",
        fabric=FabricConfig(ecn_kmin_b=1, ecn_kmax_b=1),
        rdma=RdmaConfig(wire_format="rocev2", congestion=DcqcnConfig()),
    ).run()
    assert c.congestion is not None and int(c.congestion["cnp_tx"].sum()) == int(c.congestion["cnp_rx"].sum()) > 0
    # an in-network Allreduce (aggregation, rank): every rank's output is here
    s = Scenario(topology="fat-tree-k4", collective="allreduce", algorithm="innet", bytes_per_rank="16KiB").run()
    assert (s.finish_ps >= 0).all()
    # a DPA alone (dpa_thread): its threads processed every completion
    d = saturate(DpaConfig(), completions=COMPLETIONS)
    assert d.threads is not None and int(d.threads["processed"].sum()) == COMPLETIONS
    assert sorted(checked_reads) == sorted(GETTERS)
    empty = [t for t, reads in checked_reads.items() if not any(a.any() for a in reads)]
    assert empty == [], "every table was read with something in it"


def test_an_unknown_table_is_one_line():
    lib = runtime.load()
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout_of(topology.leaf_spine(1, 0, 2, rate_bps=RATE_BPS, delay_ps=0))))
        out = np.zeros(1, dtype=np.uint64)
        with pytest.raises(McsimError) as info:
            lib.mcsim_counters(fab.cxx, b"nope", out, 1)
        assert str(info.value) == (
            "CounterReaders: no reader of table nope; known: aggregation, cc, dpa_thread, ecn, host, int, nic, pfc, "
            "port, rank, rc_qp, source, ud_qp"
        )
        with pytest.raises(McsimError, match=r"^CounterTable: no table nope; known: aggregation, cc, ") as info:
            read_counters("nope", 1, fab.cxx)  # the names are asked for first
        assert "\n" not in str(info.value)


def test_another_objects_table_or_a_wrong_size_is_one_line():
    lib = runtime.load()
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout_of(topology.leaf_spine(1, 0, 2, rate_bps=RATE_BPS, delay_ps=0))))
        with pytest.raises(McsimError, match=r"^a handle is not a ns3::mcsim::CollectiveTeam$"):
            read_counters("rank", 2, fab.cxx)
        ports = lib.mcsim_fabric_n_ports(fab.cxx)
        with pytest.raises(McsimError, match=r"^Fabric::GetPortCounters: output has 1 entries, needs \d+$"):
            lib.mcsim_counters(fab.cxx, b"port", np.zeros(1, dtype=np.uint64), 1)
        assert read_counters("port", ports, fab.cxx)["tx_packets"].tolist() == [0] * ports  # nothing ran
    with pytest.raises(McsimError, match=r"^the completion source's processor is not a Dpa$"):
        source = abi.Handle(lib, "ns3::mcsim::CompletionSource")
        try:
            lib.mcsim_source_setup(source, abi.Factory(lib, "ns3::mcsim::HostCpu"))
            read_counters("dpa_thread", 1, source)
        finally:
            runtime.dispose(source)
