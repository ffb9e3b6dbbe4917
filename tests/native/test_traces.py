# SPDX-License-Identifier: GPL-2.0-only
"""Trace sources of ports and NICs, counted by C++ sinks against closed forms and the bulk counters."""

import networkx as nx

from mcsim import topology
from mcsim.config.fabric import FabricConfig, Flow
from mcsim.config.rdma import RdmaConfig, fabric_config_for
from mcsim.native import abi, fabric, rdma, runtime
from mcsim.native.arrays import i64, u32
from mcsim.native.simulation import Simulation
from mcsim.routing.layout import layout_of

SINKS = """
#include "ns3/mcsim/nic.h"
#include "ns3/mcsim/port.h"
namespace mcsim_test {
/** Counts the events of the trace sources it is connected to. */
struct TraceCounts {
    uint64_t portTx = 0, portRx = 0, portDrop = 0, nicTx = 0, nicRx = 0, nicRxDatagrams = 0, nicRxImmSum = 0;
    void PortTx(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t)
    { portTx++; }
    void PortRx(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t)
    { portRx++; }
    void PortDrop(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t,
                  ns3::mcsim::DropCause)
    { portDrop++; }
    void NicTx(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t)
    { nicTx++; }
    /** Counts every packet; apart, the UD datagrams with immediate from srcHost, and their immediates' sum. */
    void NicRx(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields& f, uint32_t, uint32_t) {
        nicRx++;
        const auto h = ns3::mcsim::TransportHeader::FromFields(f);
        if (h.opcode == ns3::mcsim::Opcode::UD_SEND_ONLY_IMM && h.srcHost == srcHost) {
            nicRxDatagrams++;
            nicRxImmSum += h.imm;
        }
    }
    uint32_t srcHost = 0;
    void Port(ns3::Ptr<ns3::mcsim::Port> p) {
        p->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&TraceCounts::PortTx, this));
        p->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&TraceCounts::PortRx, this));
        p->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&TraceCounts::PortDrop, this));
    }
    /** PFC frames sent and arrived, and of those the XOFFs (a pause time > 0) and the sum of their quanta. */
    uint64_t pfcTx = 0, pfcRx = 0, xoffTx = 0, xoffRx = 0, quantaTx = 0;
    void PfcTx(uint32_t, uint32_t, uint32_t quanta) { pfcTx++; xoffTx += quanta != 0; quantaTx += quanta; }
    void PfcRx(uint32_t, uint32_t, uint32_t quanta) { pfcRx++; xoffRx += quanta != 0; }
    void Pfc(ns3::Ptr<ns3::mcsim::Port> p) {
        p->TraceConnectWithoutContext("PfcTx", ns3::MakeCallback(&TraceCounts::PfcTx, this));
        p->TraceConnectWithoutContext("PfcRx", ns3::MakeCallback(&TraceCounts::PfcRx, this));
    }
    void Nic(ns3::Ptr<ns3::mcsim::Nic> n) {
        n->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&TraceCounts::NicTx, this));
        n->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&TraceCounts::NicRx, this));
    }
};
}
"""


def _counted_ud_stream(g: nx.Graph, src: int, dst: int, count: int) -> object:
    """Run one UD stream with every port and NIC traced; return the counts."""
    cfg = RdmaConfig()
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout_of(g), config=fabric_config_for(cfg, None)))
        lib = sim.lib
        cppyy = runtime.cppyy_module()
        if not hasattr(cppyy.gbl, "mcsim_test") or not hasattr(cppyy.gbl.mcsim_test, "TraceCounts"):
            cppyy.cppdef(SINKS)
        counts = cppyy.gbl.mcsim_test.TraceCounts()
        counts.srcHost = src
        stack = sim.own_stack(rdma.build_stack(fab, cfg))
        work = sim.own_app(abi.Handle(lib, "ns3::mcsim::VerbsWorkload"))
        lib.mcsim_verbs_setup(work, stack)
        lib.mcsim_verbs_add_ud_streams(work, u32([src]), u32([dst]), u32([count]), u32([cfg.mtu_b]), i64([0]), 1)
        fabric_view, stack_view = runtime.cppyy_object(fab.cxx), runtime.cppyy_object(stack)
        for p in range(fabric_view.GetNPorts()):
            counts.Port(fabric_view.GetPort(p))
        for h in range(fab.n_hosts):
            counts.Nic(stack_view.GetNic(h))
        sim.run()
    return counts


def test_ud_stream_fires_one_port_tx_per_packet_and_hop():
    g = topology.resolve("fat-tree-k4")
    hosts = sorted(n for n, d in g.nodes(data=True) if d["role"] == "host")
    src, dst, count = hosts[0], hosts[-1], 50
    hops = nx.shortest_path_length(g, src, dst)  # every ECMP path of a fat tree is this long
    assert hops == 6
    c = _counted_ud_stream(g, src, dst, count)
    assert (c.nicTx, c.nicRx, c.nicRxDatagrams) == (count, count, count)
    assert c.nicRxImmSum == count * (count - 1) // 2  # datagram k carries immediate k
    assert (c.portTx, c.portRx, c.portDrop) == (count * hops, count * hops, 0)


def test_pfc_frames_fire_their_trace_sources_as_the_counters_count_them():
    # a 15:1 incast on one switch with PFC: every PFC frame a port sends fires PfcTx once, and once it arrives
    # PfcRx at its peer; the XOFFs carry the configured pause time
    g = topology.leaf_spine(1, 0, 16, rate_bps=100 * 10**9, delay_ps=100_000)
    config = FabricConfig(flow_control="pfc", header_b=20)
    with Simulation() as sim:
        fab = sim.own_fabric(fabric.build(layout_of(g), config=config))
        cppyy = runtime.cppyy_module()
        if not hasattr(cppyy.gbl, "mcsim_test") or not hasattr(cppyy.gbl.mcsim_test, "TraceCounts"):
            cppyy.cppdef(SINKS)
        counts = cppyy.gbl.mcsim_test.TraceCounts()
        view = runtime.cppyy_object(fab.cxx)
        for p in range(view.GetNPorts()):
            counts.Pfc(view.GetPort(p))
        fab.add_flows([Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in range(1, 16)])
        sim.run()
        r = fab.collect()
    pfc = r.pfc
    sent, arrived = int((pfc["pause_tx"] + pfc["resume_tx"]).sum()), int((pfc["pause_rx"] + pfc["resume_rx"]).sum())
    assert counts.pfcTx == sent > 0 and counts.pfcRx == arrived == sent
    assert counts.xoffTx == int(pfc["pause_tx"].sum()) == counts.xoffRx
    assert counts.quantaTx == counts.xoffTx * config.pfc_pause_quanta
