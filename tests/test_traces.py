# SPDX-License-Identifier: GPL-2.0-only
"""Trace sources of ports and NICs, counted by C++ sinks against closed forms."""

import cppyy
import networkx as nx
import numpy as np

from mcsim import fabric, rdma, runtime, topology

SINKS = """
#include "ns3/mcsim/nic.h"
#include "ns3/mcsim/port.h"
namespace mcsim_test {
/** Counts the events of the trace sources it is connected to. */
struct TraceCounts {
    uint64_t portTx = 0, portRx = 0, portDrop = 0, nicTx = 0, nicRx = 0;
    void PortTx(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t)
    { portTx++; }
    void PortRx(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t)
    { portRx++; }
    void PortDrop(ns3::Ptr<const ns3::Packet>, const ns3::mcsim::FabricHeader::Fields&, uint32_t, uint32_t,
                  ns3::mcsim::DropCause)
    { portDrop++; }
    void NicTx(ns3::Ptr<const ns3::Packet>, uint32_t, uint32_t) { nicTx++; }
    void NicRx(ns3::Ptr<const ns3::Packet>, uint32_t, uint32_t) { nicRx++; }
    void Port(ns3::Ptr<ns3::mcsim::Port> p) {
        p->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&TraceCounts::PortTx, this));
        p->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&TraceCounts::PortRx, this));
        p->TraceConnectWithoutContext("Drop", ns3::MakeCallback(&TraceCounts::PortDrop, this));
    }
    void Nic(ns3::Ptr<ns3::mcsim::Nic> n) {
        n->TraceConnectWithoutContext("Tx", ns3::MakeCallback(&TraceCounts::NicTx, this));
        n->TraceConnectWithoutContext("Rx", ns3::MakeCallback(&TraceCounts::NicRx, this));
    }
};
}
"""


def _u32(value: int) -> np.ndarray:
    return np.array([value], dtype=np.uint32)


def _counted_ud_stream(g: nx.Graph, src: int, dst: int, count: int) -> object:
    """Run one UD stream with every port and NIC traced; return the counts."""
    cfg = rdma.RdmaConfig()
    with fabric.build(g, config=rdma.fabric_config_for(cfg, None)) as fab:
        ns = fab.ns
        if not hasattr(cppyy.gbl, "mcsim_test"):
            cppyy.cppdef(SINKS)
        counts = cppyy.gbl.mcsim_test.TraceCounts()
        stack = rdma.build_stack(fab, cfg)
        work = ns.CreateObject[ns.mcsim.VerbsWorkload]()
        work.Setup(stack)
        work.AddUdStreams(_u32(src), _u32(dst), _u32(count), _u32(cfg.mtu_b), np.zeros(1, dtype=np.int64), 1)
        for p in range(fab.cxx.GetNPorts()):
            counts.Port(fab.cxx.GetPort(p))
        for h in range(fab.n_hosts):
            counts.Nic(stack.GetNic(h))
        try:
            fab.run()
        finally:
            runtime.dispose(work, stack)
    return counts


def test_ud_stream_fires_one_port_tx_per_packet_and_hop():
    g = topology.resolve("fat-tree-k4")
    hosts = sorted(n for n, d in g.nodes(data=True) if d["role"] == "host")
    src, dst, count = hosts[0], hosts[-1], 50
    hops = nx.shortest_path_length(g, src, dst)  # every ECMP path of a fat tree is this long
    assert hops == 6
    c = _counted_ud_stream(g, src, dst, count)
    assert (c.nicTx, c.nicRx) == (count, count)
    assert (c.portTx, c.portRx, c.portDrop) == (count * hops, count * hops, 0)
