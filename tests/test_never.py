# SPDX-License-Identifier: GPL-2.0-only
"""One encoding of "never happened": result.NEVER in every time array (C++ writes UINT64_MAX)."""

import numpy as np

from mcsim import topology
from mcsim.config.fabric import Flow
from mcsim.config.rdma import RcOp, RdmaConfig
from mcsim.result import NEVER, times_ps
from mcsim.runs.flows import simulate
from mcsim.runs.stream import two_hosts
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import Link

LINK = Link(rate_bps=100 * 10**9, delay_ps=100_000)


def test_times_ps_maps_uint64_max_to_never_and_keeps_every_other_time():
    raw = np.array([0, 5, 2**63 - 1, 2**64 - 1], dtype=np.uint64)
    np.testing.assert_array_equal(times_ps(raw), [0, 5, 2**63 - 1, NEVER])
    assert times_ps(raw).dtype == np.int64


def test_a_host_that_receives_nothing_reports_never_not_zero():
    g = topology.leaf_spine(1, 0, 3, rate_bps=LINK.rate_bps, delay_ps=LINK.delay_ps)
    r = simulate(g, [Flow(src=0, dst=1, size_b=8192)])
    assert r.hosts["rx_packets"].tolist() == [0, 2, 0]  # the condition under test: hosts 0 and 2 got nothing
    assert r.hosts["first_arrival_ps"][[0, 2]].tolist() == [NEVER, NEVER]
    assert r.hosts["last_arrival_ps"][[0, 2]].tolist() == [NEVER, NEVER]
    assert 0 < r.hosts["first_arrival_ps"][1] < r.hosts["last_arrival_ps"][1]
    assert r.finish_ps == r.hosts["last_arrival_ps"][1]


def test_a_write_has_no_responder_completion_and_a_send_has_one():
    r = run_verbs(
        two_hosts(LINK),
        rc_ops=[RcOp(verb="write", src=0, dst=1, size_b=4096), RcOp(verb="send", src=0, dst=1, size_b=4096)],
        rdma=RdmaConfig(send_latency_ps=0, receive_latency_ps=0),
    )
    assert r.rc_responder_done_ps[0] == NEVER
    assert 0 < r.rc_responder_done_ps[1] < r.rc_done_ps[1]  # without NIC latency: before the ACK is back
    assert (r.rc_done_ps > 0).all()
