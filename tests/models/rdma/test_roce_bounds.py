# SPDX-License-Identifier: GPL-2.0-only
"""Collectives on a RoCE fabric (RoCEv2 packets, PFC) against closed forms: the ring Allgather within 2 % of
N(P-1)/BW once BW is the data rate less RoCEv2's framing, and ECN and PFC acting on the multicast's replicated
packets as on any other."""

import numpy as np
import pytest

from mcsim.runs.scenario import scenario_of

MTU_B = 4096
# a RoCEv2 WRITE packet's wire bytes beyond its payload: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4,
# preamble, SFD and gap 20 (the first packet's RETH and the last's immediate are 20 bytes more, once per message)
ROCEV2_PACKET_OVERHEAD_B = 82


def roce(collective="allgather", algorithm="ring", ranks=16, **kw):
    return scenario_of(
        topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank="1MiB", ranks=ranks,
        rate="400Gbps", wire_format="rocev2", flow_control="pfc", **kw,
    )  # fmt: skip


@pytest.mark.parametrize("cc", ["none", "dcqcn"])
@pytest.mark.parametrize("ranks", [8, 16])
def test_the_ring_allgather_is_within_2pct_of_the_framed_bound(cc, ranks):
    # against the data rate alone the bound cannot hold: RoCEv2's 82 B per 4 KiB packet are 2.0 % by themselves
    r = roce(ranks=ranks, congestion_control=cc).run()
    framed = r.bound_ps * (MTU_B + ROCEV2_PACKET_OVERHEAD_B) / MTU_B
    assert r.complete
    assert framed <= r.time_ps <= 1.02 * framed


def test_every_replicated_multicast_packet_is_ecn_capable_and_pfc_paces_them():
    r = roce(algorithm="mcast", ecn=True, verify=True).run()
    assert r.complete and r.verified
    f = r.fabric
    switch = f.port_node >= 16
    # a switch port takes every packet it sends, each a replica of the multicast or a repair's RC packet, as
    # ECN-capable (the hosts stamp ECT(0)): counted once each as it joins the queue, none lost
    assert np.array_equal(f.ecn["ect_packets"][switch], f.ports["tx_packets"][switch])
    assert int(f.ecn["ect_packets"][~switch].sum()) == 0
    # the multicast's incast at every host pauses the switch ports toward it, and nothing is dropped
    assert int(f.pfc["pause_rx"][switch].sum()) > 0
    assert int(f.ports["drop_packets"].sum()) == 0 and int(f.pfc["ingress_drops"].sum()) == 0
