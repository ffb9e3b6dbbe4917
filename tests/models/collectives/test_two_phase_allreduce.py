# SPDX-License-Identifier: GPL-2.0-only
"""The two-phase Allreduces (ring or in-network Reduce-Scatter, then the multicast Allgather of the sums):
byte-exact sums at odd and non-power-of-two P, with loss where the transport repairs it; the second
phase begins when the first has ended everywhere (on one switch the time is exactly the two phases'
times run alone), their link traversals add up, and the bound is the sum of the phases' bounds."""

import numpy as np
import pytest

from mcsim.config.collectives import TWO_PHASE, TeamSpec, ring_blocks
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario

ALGORITHMS = [a for _, a in TWO_PHASE]  # ring_mcast, innet_mcast
FIRST = {a: phases[0] for (_, a), phases in TWO_PHASE.items()}  # the Reduce-Scatter's algorithm
MTU = 4096


def alone(topology, algorithm: str, n: int, ranks: int | None = None):
    """The two phases of an Allreduce of n bytes, each run alone on an idle fabric: (Reduce-Scatter, Allgather)."""
    p = ranks or Scenario(topology=topology).n_ranks
    block = ring_blocks("allreduce", n, p)[1]
    rs = Scenario(
        topology=topology, ranks=ranks, collective="reduce_scatter", algorithm=FIRST[algorithm], bytes_per_rank=block
    )
    ag = Scenario(topology=topology, ranks=ranks, collective="allgather", algorithm="mcast", bytes_per_rank=block)
    return rs.run(), ag.run()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("ranks", [2, 3, 16])
@pytest.mark.parametrize("n", [4, 40_004, 100_000])  # one element; N not a multiple of P's blocks (padded)
def test_every_rank_ends_with_the_exact_sum_on_fat_tree_k4(algorithm, ranks, n):
    r = Scenario(
        topology="fat-tree-k4", ranks=ranks, collective="allreduce", algorithm=algorithm, bytes_per_rank=n, verify=True
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    assert r.first_phase is not None and r.first_phase.complete
    assert r.first_phase.collective == "reduce_scatter" and r.first_phase.algorithm == FIRST[algorithm]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_188_ranks_of_the_testbed_sum_exactly(algorithm):
    r = Scenario(
        topology="testbed-188", collective="allreduce", algorithm=algorithm, bytes_per_rank="64KiB", verify=True
    ).run()
    assert r.complete and r.verified and r.ranks == 188


def test_lost_packets_are_resent_or_repaired_and_the_sums_stay_exact(lossy_verified):
    # the ring Reduce-Scatter goes back N over RC; the multicast Allgather repairs with READs
    lost, resent = lossy_verified(
        range(6), topology="fat-tree-k4", collective="allreduce", algorithm="ring_mcast", bytes_per_rank="64KiB"
    )
    assert lost > 0 and resent > 0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("hosts", [2, 3, 8])
@pytest.mark.parametrize("n", [4, 40_000, 1 << 20])
def test_on_one_switch_the_time_is_the_two_phases_run_alone(algorithm, hosts, n, star_graph):
    # the second team starts in the event where the last rank of the first finished; on one switch
    # nothing of the first is left on the wire then, and no path depends on a QP number
    topo = star_graph(hosts)
    r = Scenario(topology=topo, collective="allreduce", algorithm=algorithm, bytes_per_rank=n).run()
    rs, ag = alone(topo, algorithm, n)
    assert r.first_phase.time_ps == rs.time_ps
    assert r.time_ps == rs.time_ps + ag.time_ps
    np.testing.assert_array_equal(r.finish_ps, rs.time_ps + ag.finish_ps)
    # every rank's counters are the two phases' (its times the Allgather's)
    np.testing.assert_array_equal(r.rank["chunks_received"], rs.rank["chunks_received"] + ag.rank["chunks_received"])
    np.testing.assert_array_equal(r.rank["chunks_sent"], rs.rank["chunks_sent"] + ag.rank["chunks_sent"])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize(("topology", "ranks"), [("fat-tree-k4", None), ("fat-tree-k4", 5), ("testbed-188", 40)])
def test_link_traversals_are_the_two_phases(algorithm, topology, ranks):
    # on a multi-path fabric the second team's QP numbers move its RC paths (times may differ from the
    # phases alone), never a path's length
    r = Scenario(
        topology=topology, ranks=ranks, collective="allreduce", algorithm=algorithm, bytes_per_rank="40KiB"
    ).run()
    rs, ag = alone(topology, algorithm, 40 << 10, ranks)
    assert r.fabric.link_traversals() == rs.fabric.link_traversals() + ag.fabric.link_traversals()
    np.testing.assert_array_equal(r.injected_b, rs.injected_b + ag.injected_b)


@pytest.mark.parametrize("hosts", [4, 8])
def test_link_traversals_on_one_switch_are_the_schedule_s_packets(hosts, star_graph):
    # 8 KiB blocks in WRITEs of 8 KiB: the ring Reduce-Scatter's P-1 steps each move 2 packets and an ACK
    # per rank over 2 links; the multicast Allgather's 2 datagrams per shard cross 1 + (P-1) links, its
    # control a token per rank but the K = 2 heads and a FIN per rank (0-byte SENDs, each ACKed, 2 links);
    # the in-network Reduce-Scatter's P x P x 2 contributions go up, P x 2 sums down
    n = 8192 * hosts
    packets = 8192 // MTU
    ring = Scenario(
        topology=star_graph(hosts), collective="allreduce", algorithm="ring_mcast", bytes_per_rank=n, ring_chunk="8KiB"
    ).run()
    innet = Scenario(
        topology=star_graph(hosts), collective="allreduce", algorithm="innet_mcast", bytes_per_rank=n
    ).run()
    allgather = hosts * hosts * packets + 4 * (hosts - 2) + 4 * hosts
    assert ring.fabric.link_traversals() == 2 * hosts * (hosts - 1) * (packets + 1) + allgather
    assert innet.fabric.link_traversals() == hosts * hosts * packets + hosts * packets + allgather


@pytest.mark.parametrize(
    ("algorithm", "bound_b"),
    [("ring_mcast", lambda n, p: 2 * n * (p - 1) / p), ("innet_mcast", lambda n, p: n + n * (p - 1) / p)],
)
def test_the_bound_is_the_two_phases_bounds(algorithm, bound_b):
    # ring: N(P-1)/P in per phase; in-network: N out to the switches, then N(P-1)/P in
    r = Scenario(topology="fat-tree-k4", collective="allreduce", algorithm=algorithm, bytes_per_rank="1MiB").run()
    p, n = r.ranks, 1 << 20
    assert r.bound_ps == pytest.approx(bound_b(n, p) * 8e12 / r.data_rate_bps)
    assert r.time_ps >= r.bound_ps
    # the first phase's own bound: a ring rank receives N(P-1)/P, an in-network rank sends its P blocks
    first, block = r.first_phase, ring_blocks("allreduce", n, p)[1]
    first_b = block * (p - 1) if algorithm == "ring_mcast" else block * p
    assert first.bound_ps == pytest.approx(first_b * 8e12 / r.data_rate_bps)
    assert first.time_ps >= first.bound_ps


def test_a_team_spec_is_one_team():
    with pytest.raises(McsimError, match=r"^TeamSpec: allreduce ring_mcast is two teams \(TWO_PHASE, SPLIT\)$"):
        TeamSpec(collective="allreduce", algorithm="ring_mcast", hosts=(0, 1), bytes_per_rank_b=8)


def test_the_record_has_the_first_phase_s_time():
    r = Scenario(topology="fat-tree-k4", collective="allreduce", algorithm="ring_mcast", bytes_per_rank="16KiB").run()
    rec = r.record()
    assert rec["first_phase_time_ps"] == r.first_phase.time_ps < rec["time_ps"]
    np.testing.assert_array_equal(r.rank_arrays()["first_phase.finish_ps"], r.first_phase.finish_ps)
