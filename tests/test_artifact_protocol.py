# SPDX-License-Identifier: GPL-2.0-only
"""The SC'24 artifact's protocol options against closed forms: each changes the result in the
direction and by the amount the closed form says."""

import pytest

from mcsim.errors import McsimError
from mcsim.fabric import Faults
from mcsim.physics import Link
from mcsim.rdma import RdmaConfig
from mcsim.scenario import Scenario

MTU = 4096
MCAST_HEADER_B = 78  # UD SEND with immediate to a group: LRH 8 + GRH 40 + BTH 12 + DETH 8 + ImmDt 4 + ICRC 4 + VCRC 2


@pytest.mark.parametrize("send_latency_ps", [300_000, 2_000_000])
@pytest.mark.parametrize(
    ("kwargs", "chunks", "sources"),
    [
        ({"collective": "broadcast", "bytes_per_rank": "1MiB", "batch": 32}, 256, 1),
        # one sequence of 16 roots, each after its predecessor's whole shard: their delays add up
        ({"collective": "allgather", "roots": 1, "bytes_per_rank": "64KiB", "batch": 4}, 16, 16),
    ],
)
def test_stop_and_wait_batches_idle_the_link_for_a_doorbell_per_batch(kwargs, chunks, sources, send_latency_ps):
    """With the artifact's batches a root posts the next batch only when the last one's signalled
    completion is in (as its last datagram leaves); its first byte then leaves SendLatency later, so
    the link idles for SendLatency less one datagram's serialization after every batch but the
    last, where a sliding window keeps it busy. At FDR with 300 ns of SendLatency a 4 KiB datagram
    outlasts the doorbell: nothing changes."""
    rdma = RdmaConfig(send_latency_ps=send_latency_ps)

    def time_ps(batching: str) -> int:
        return Scenario(topology="fat-tree-k4", algorithm="mcast", batching=batching, rdma=rdma, **kwargs).run().time_ps

    link = Link.from_edge(Scenario(topology="fat-tree-k4").graph().edges[0, 16])
    bubble_ps = max(0, send_latency_ps - link.tx_ps(MTU + MCAST_HEADER_B))
    batches = -(-chunks // kwargs["batch"])
    assert time_ps("stop_and_wait") - time_ps("window") == sources * (batches - 1) * bubble_ps


def test_unknown_batching_is_one_line():
    with pytest.raises(McsimError, match=r"^unknown batching 'sync'; choose one of stop_and_wait, window$"):
        Scenario(topology="fat-tree-k4", batching="sync")


def test_the_timeout_rule_divides_by_the_link_bw_it_is_given():
    """The data phase ends timeout_scale x N(P-1)/LINK_BW after the start (the artifact's rule;
    LINK_BW = the hosts' data rate unless timeout_rate sets it). A Broadcast whose last chunk is
    lost waits for that timeout before it repairs: halving LINK_BW shifts the finish by exactly the
    timeout's growth."""
    n = 256 * 1024
    base = {"topology": "fat-tree-k4", "algorithm": "mcast", "collective": "broadcast", "bytes_per_rank": n}
    drop = Faults(drops=[(0, 0, n // MTU - 1)])  # the root's last datagram: every receiver misses it
    default = Scenario(**base, faults=drop)
    data_rate = default.data_rate_bps
    half = Scenario(**base, faults=drop, timeout_rate=f"{data_rate // 2}bps")
    assert default.data_timeout_ps() == int(5.0 * (n * 8 * 10**12 // data_rate))
    assert half.data_timeout_ps() == int(5.0 * (n * 8 * 10**12 // (data_rate // 2)))
    a, b = default.run(), half.run()
    assert (a.rank["data_timeouts"][1:] == 1).all() and (b.rank["data_timeouts"][1:] == 1).all()  # receivers
    assert b.time_ps - a.time_ps == half.data_timeout_ps() - default.data_timeout_ps()
    # the artifact's LINK_BW as a nominal figure: 56 Gbit/s for FDR's 54.5 of data, a shorter timeout
    nominal = Scenario(**base, timeout_rate="56Gbps")
    assert nominal.data_timeout_ps() == int(5.0 * (n * 8 * 10**12 // 56_000_000_000)) < default.data_timeout_ps()


@pytest.mark.parametrize("bad", ["fast", "0Gbps", 56])
def test_bad_timeout_rate_is_one_line(bad):
    with pytest.raises(McsimError, match=r"timeout_rate") as err:
        Scenario(topology="fat-tree-k4", timeout_rate=bad)
    assert "\n" not in str(err.value)
