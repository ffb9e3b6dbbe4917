# SPDX-License-Identifier: GPL-2.0-only
"""The logarithmic Allgathers (recursive doubling, Bruck) and the ring, simulated: byte-exact, lossy,
their link traversals equal to the traffic model's count of the same schedule, their latency."""

import numpy as np
import pytest

from mcsim.config.rdma import HostCpuConfig
from mcsim.errors import McsimError
from mcsim.reference import traffic
from mcsim.routing.layout import layout_of
from mcsim.runs.scenario import Scenario
from mcsim.topology import resolve

RANKS = {"recursive_doubling": [2, 4, 8, 16], "bruck": [2, 3, 5, 7, 16]}


@pytest.mark.parametrize(("algorithm", "ranks"), [(a, p) for a, ps in RANKS.items() for p in ps])
@pytest.mark.parametrize("n", [8, 100_000])
def test_every_rank_ends_with_every_shard(algorithm, ranks, n):
    r = Scenario(
        topology="fat-tree-k4", algorithm=algorithm, ranks=ranks, bytes_per_rank=n, ring_chunk="16KiB", verify=True
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    np.testing.assert_array_equal(r.received_b, np.full(ranks, n * (ranks - 1)))  # each shard once


def test_bruck_on_the_188_ranks_of_the_testbed():
    r = Scenario(topology="testbed-188", algorithm="bruck", bytes_per_rank="4KiB", verify=True).run()
    assert r.complete and r.verified and r.ranks == 188


@pytest.mark.parametrize("algorithm", list(RANKS))
def test_lost_packets_are_resent_and_every_shard_arrives(algorithm, lossy_verified):
    lost, resent = lossy_verified(
        range(4),
        topology="fat-tree-k4",
        algorithm=algorithm,
        bytes_per_rank="32KiB",
        ring_chunk="8KiB",
    )
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


def _bruck_sends(p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The test's own Bruck schedule: in step d = 1, 2, 4, ... rank r sends the min(d, P-d) shards r, r+1,
    ... to r-d, as one WRITE, or two where they wrap past shard P-1 (src, dst, shards, writes)."""
    src, dst, shards, writes = [], [], [], []
    d = 1
    while d < p:
        for r in range(p):
            count = min(d, p - d)
            src.append(r)
            dst.append((r - d) % p)
            shards.append(count)
            writes.append(2 if r + count > p else 1)
        d *= 2
    return np.array(src), np.array(dst), np.array(shards), np.array(writes)


@pytest.mark.parametrize(
    ("algorithm", "ranks"), [("ring", 16), ("recursive_doubling", 16), ("bruck", 16), ("bruck", 11)]
)
def test_link_traversals_are_the_traffic_model_s_count(algorithm, ranks):
    # one packet a shard (N = the MTU) and one WRITE a send (ring_chunk holds P/2 shards): the data
    # cross the links of their routes once per shard (mcsim.reference.traffic counts exactly that),
    # and every WRITE's ACK crosses its route back once
    layout = layout_of(resolve("fat-tree-k4"))
    r = Scenario(topology="fat-tree-k4", algorithm=algorithm, ranks=ranks, bytes_per_rank="4KiB").run()
    if algorithm == "bruck":
        src, dst, shards, writes = _bruck_sends(ranks)
        data = int((traffic.unicast_hops(layout, src, dst) * shards).sum())
    else:
        src, dst, shards = traffic.sends(algorithm, ranks)
        data = traffic.mcsim_cost(algorithm, ranks, layout)
        writes = shards if algorithm == "ring" else np.ones_like(shards)  # the ring WRITEs a shard at a time
    hops = traffic.unicast_hops(layout, src, dst)
    assert r.complete
    assert r.fabric.link_traversals() == data + int((hops * writes).sum())


@pytest.mark.parametrize(("algorithm", "ranks"), [("recursive_doubling", 2), ("recursive_doubling", 8), ("bruck", 5)])
def test_small_shards_take_log2_p_steps_of_a_ring_step(algorithm, ranks, star_graph, star_step):
    # 4 bytes a shard on one switch: ceil(log2 P) steps; a step ends when the partner's WRITEs are in
    # (the ACK of one's own is back before: test_alltoall), so each is a ring step when the step's
    # shards are one packet: the NIC's latencies, the switch, the cables, the host CPU, and the
    # packet (its header and its shards' 4 bytes each) on the wire
    sc = Scenario(topology=star_graph(ranks), algorithm=algorithm, bytes_per_rank=4)
    r, fabric = sc.run(), sc.fabric
    steps, d = [], 1
    while d < ranks:
        shards = d if algorithm == "recursive_doubling" else min(d, ranks - d)
        steps.append(star_step(fabric, 4 * shards))
        d *= 2
    if algorithm == "recursive_doubling":
        assert r.time_ps == sum(steps)
    else:  # Bruck's shards may wrap past P-1: two WRITEs, whose completions queue at the host CPU
        assert sum(steps) <= r.time_ps <= sum(steps) + len(steps) * HostCpuConfig().completion_ps


def test_recursive_doubling_needs_a_power_of_2_ranks():
    with pytest.raises(
        McsimError, match=r"^Scenario: algorithm='recursive_doubling' needs a power of 2 ranks, not 6; "
    ):
        Scenario(topology="fat-tree-k4", algorithm="recursive_doubling", ranks=6)
