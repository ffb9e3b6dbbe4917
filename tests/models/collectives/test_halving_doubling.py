# SPDX-License-Identifier: GPL-2.0-only
"""Rabenseifner's Allreduce (recursive halving, then recursive doubling) against closed forms."""

import pytest

from mcsim.config.collectives import HOST_REDUCE_PS_PER_BYTE
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario


@pytest.mark.parametrize("ranks", [2, 4, 8, 16])
@pytest.mark.parametrize("n", [8, 12, 100_000])
def test_every_rank_ends_with_the_exact_sum(ranks, n):
    # 8 and 12 bytes on 4 or more ranks leave blocks empty; 100,000 B splits unevenly
    r = Scenario(
        topology="fat-tree-k4",
        collective="allreduce",
        algorithm="halving_doubling",
        ranks=ranks,
        bytes_per_rank=n,
        ring_chunk="16KiB",
        verify=True,
    ).run()
    assert r.complete and r.verified, r.wrong_bytes
    # every block leaves P-1 ranks in the halving (partial sums) and P-1 in the doubling (the sum)
    assert int(r.injected_b.sum()) == 2 * (ranks - 1) * n


def test_128_ranks_of_the_testbed_sum_exactly():
    r = Scenario(
        topology="testbed-188",
        collective="allreduce",
        algorithm="halving_doubling",
        ranks=128,
        bytes_per_rank="8KiB",
        verify=True,
    ).run()
    assert r.complete and r.verified


def test_lost_packets_are_resent_and_the_sums_stay_exact(lossy_verified):
    lost, resent = lossy_verified(
        range(4),
        topology="fat-tree-k4",
        collective="allreduce",
        algorithm="halving_doubling",
        bytes_per_rank="128KiB",
        ring_chunk="8KiB",
    )
    assert lost > 0 and resent > 0, "packets were really lost, and RC went back N for them"


@pytest.mark.parametrize("hosts", [2, 4, 8])
def test_small_buffers_take_2_log2_p_steps(hosts, star_graph, star_step):
    # one 4-byte element per rank and block: every step moves whole blocks of 4 B (halving: P/2, P/4,
    # ... 1 block; doubling: 1, 2, ... P/2) as one WRITE; a step is a ring step (test_ring_reductions)
    # for its packet, plus the reduction of its bytes in the halving
    sc = Scenario(
        topology=star_graph(hosts), collective="allreduce", algorithm="halving_doubling", bytes_per_rank=4 * hosts
    )
    r, fabric = sc.run(), sc.fabric
    halving, doubling = [], []
    blocks = hosts // 2
    while blocks >= 1:
        halving.append(star_step(fabric, 4 * blocks) + 4 * blocks * HOST_REDUCE_PS_PER_BYTE)
        doubling.insert(0, star_step(fabric, 4 * blocks))
        blocks //= 2
    assert r.time_ps == sum(halving) + sum(doubling)


def test_on_one_switch_it_is_near_the_host_allreduce_bound(star_graph):
    r = Scenario(
        topology=star_graph(8),
        rate="56Gbps",
        collective="allreduce",
        algorithm="halving_doubling",
        bytes_per_rank="8MiB",
    ).run()
    bound = 2 * (8 << 20) * 7 / 8 * 8 * 1e12 / r.data_rate_bps
    assert r.bound_ps == pytest.approx(bound)
    # each halving step's last chunk is summed after it arrives, and steps wait for acknowledgements
    assert bound <= r.time_ps <= 1.1 * bound


def test_halving_doubling_needs_a_power_of_2_ranks():
    with pytest.raises(McsimError, match=r"^Scenario: algorithm='halving_doubling' needs a power of 2 ranks, not 6; "):
        Scenario(topology="fat-tree-k4", collective="allreduce", algorithm="halving_doubling", ranks=6)
