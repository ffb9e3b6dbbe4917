# SPDX-License-Identifier: GPL-2.0-only
"""The RDMA transport under faults: random loss, a chosen lost packet, a link down and up."""

import numpy as np
import pytest

from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.rdma import RcConfig, RcOp, RdmaConfig
from mcsim.runs.stream import two_hosts
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import Link
from mcsim.units import parse_rate

T16 = Link(rate_bps=parse_rate("1.6Tbps"))
E100 = Link(rate_bps=parse_rate("100Gbps"))
SIZE = 64 << 20


def write(link, size_b, *, loss=0.0, seed=1, faults=None, rdma=None):
    kwargs = {"faults": faults} if faults is not None else {}
    return run_verbs(
        two_hosts(link),
        rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=size_b)],
        fabric=FabricConfig(loss=loss, seed=seed),
        rdma=rdma,
        **kwargs,
    )


def test_rc_write_under_random_loss_delivers_every_byte_once_and_goodput_falls():
    times = []
    for p in (0.0, 1e-4, 1e-3, 1e-2):
        r = write(T16, SIZE, loss=p)
        lost = r.fabric.drops_by_cause()["loss"]
        # the responder accepts only the expected PSN: in order, and exactly once
        assert r.rc_responder["rx_payload"][0] == SIZE, p
        assert r.rc_requester["completed"][0] == 1 and r.rc_requester["errors"][0] == 0
        if p == 0:
            assert lost == 0 and r.rc_requester["retransmits"][0] == 0
        else:
            assert lost > 0, "packets were really lost"
            assert r.rc_requester["retransmits"][0] > 0
            assert r.rc_responder["naks_sent"][0] + r.rc_requester["timeouts"][0] > 0
        # the NIC totals are the sums over its QPs
        assert r.nic["retransmits"].sum() == r.rc_requester["retransmits"].sum() + r.rc_responder["retransmits"].sum()
        assert r.nic["rc_timeouts"].sum() == r.rc_requester["timeouts"].sum() + r.rc_responder["timeouts"].sum()
        times.append(int(r.rc_done_ps[0]))
    assert times == sorted(times) and len(set(times)) == 4, times  # goodput falls as loss rises


def test_a_lost_first_packet_is_naked_once_and_sent_again():
    r = write(E100, 1 << 20, faults=Faults(drops=[(0, 0, 0)]))
    assert r.fabric.drops_by_cause()["chosen"] == 1
    assert r.rc_responder["naks_sent"][0] == 1  # one NAK per sequence error, not one per packet
    assert r.rc_requester["naks_received"][0] == 1
    assert r.rc_requester["retransmits"][0] >= 1
    assert r.rc_responder["out_of_sequence"][0] >= 1
    assert r.rc_responder["rx_payload"][0] == 1 << 20


@pytest.mark.parametrize("p", [1e-3, 1e-2])
def test_rdma_read_under_loss_completes_with_every_byte(p):
    r = run_verbs(
        two_hosts(T16), rc_ops=[RcOp(verb="read", src=0, dst=1, size_b=16 << 20)], fabric=FabricConfig(loss=p)
    )
    assert r.rc_requester["rx_payload"][0] == 16 << 20
    assert r.rc_requester["completed"][0] == 1
    assert r.rc_requester["read_gaps"][0] + r.rc_requester["timeouts"][0] > 0


def test_a_link_down_mid_transfer_is_recovered_by_the_nak_that_follows():
    # 16 MiB at 100 Gbit/s takes ~1.35 ms; the link is down from 0.3 to 0.5 ms: the first packet
    # after it is out of sequence, and its NAK sends the requester back long before a timeout
    r = write(E100, 16 << 20, faults=Faults(link_down=[(0, 1, 300_000_000, 500_000_000)]))
    assert r.fabric.drops_by_cause()["link_down"] > 0
    assert r.rc_responder["naks_sent"][0] == 1 and r.rc_requester["naks_received"][0] == 1
    assert r.rc_requester["timeouts"][0] == 0
    assert r.rc_responder["rx_payload"][0] == 16 << 20
    assert r.rc_requester["errors"][0] == 0
    assert 500_000_000 < r.rc_done_ps[0] < RcConfig().ack_timeout_ps


def test_a_lost_tail_is_recovered_by_the_local_ack_timeout():
    # the link is down from 1.2 ms to 2 ms: the last packets and their ACKs are lost and nothing
    # follows them, so only the local ACK timer (67.1 ms after the last progress) recovers
    r = write(E100, 16 << 20, faults=Faults(link_down=[(0, 1, 1_200_000_000, 2_000_000_000)]))
    assert r.fabric.drops_by_cause()["link_down"] > 0
    assert r.rc_requester["timeouts"][0] == 1
    assert r.rc_responder["rx_payload"][0] == 16 << 20
    assert r.rc_requester["errors"][0] == 0
    timeout = RcConfig().ack_timeout_ps
    assert 1_200_000_000 + timeout < r.rc_done_ps[0] < 1_400_000_000 + timeout


def test_a_link_down_longer_than_the_retries_stops_the_qp():
    # local ACK timeout 4.096 us x 2^3 = 32.8 us, x (retry_cnt 7 + 1) = 262 us < 1 ms down
    rc = RcConfig(ack_timeout_exp=3)
    r = write(E100, 16 << 20, faults=Faults(link_down=[(0, 1, 300_000_000, 1_300_000_000)]), rdma=RdmaConfig(rc=rc))
    assert r.rc_requester["errors"][0] == 1
    assert r.rc_requester["timeouts"][0] == rc.retry_cnt + 1
    assert r.rc_requester["completed"][0] == 0
    assert r.rc_responder["rx_payload"][0] < 16 << 20


def test_same_seed_loses_the_same_packets():
    a, b = write(T16, 8 << 20, loss=1e-3, seed=7), write(T16, 8 << 20, loss=1e-3, seed=7)
    c = write(T16, 8 << 20, loss=1e-3, seed=8)
    np.testing.assert_array_equal(a.fabric.ports["loss_packets"], b.fabric.ports["loss_packets"])
    assert a.rc_done_ps[0] == b.rc_done_ps[0]
    assert not np.array_equal(a.fabric.ports["loss_packets"], c.fabric.ports["loss_packets"])
