# SPDX-License-Identifier: GPL-2.0-only
"""Collectives on nodes of several GPUs (mcsim.topology.nodes) against their closed forms: inside a node a ring is
bound by the GPUs' NVLink, across nodes by their NICs; every byte lands where it should."""

import pytest

from mcsim import topology
from mcsim.config.rdma import GPU_RECEIVE, RdmaConfig
from mcsim.runs.scenario import Scenario
from mcsim.topology.nodes import GB, NVLS_H100_GBPS, nodes_of
from mcsim.units import PS_PER_S

RAIL_4X4 = "rail-4x4"  # 4 nodes of 4 H100s, a 400G NIC per GPU, 4 rails, 2 spines


def test_a_ring_allgather_inside_an_h100_node_lands_within_2_percent_of_its_nvlink_bound():
    n, gpus = 64 << 20, 8
    nvlink_bps = nodes_of(topology.resolve("dgx-h100")).nvlink_bps
    r = Scenario(topology="dgx-h100", collective="allgather", algorithm="ring", bytes_per_rank="64MiB").run()
    assert r.bound_ps == pytest.approx(n * (gpus - 1) * 8 * PS_PER_S / nvlink_bps, rel=1e-12)  # N(G-1)/B_NVLink
    ratio = r.finish_ps / r.bound_ps
    assert (ratio >= 1).all() and (ratio <= 1.02).all()


def test_a_flat_ring_across_nodes_is_bound_by_the_nics():
    r = Scenario(topology=RAIL_4X4, collective="allgather", algorithm="ring", bytes_per_rank="1MiB").run()
    assert r.bound_ps == pytest.approx((1 << 20) * 15 * 8 * PS_PER_S / (400 * 10**9), rel=1e-12)  # N(P-1)/B_NIC
    # every shard crosses the NIC into a node's first GPU: that rank is the last, within 3 % of the bound
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.03


@pytest.mark.parametrize(
    ("collective", "algorithm"),
    [("allgather", "ring"), ("allgather", "mcast"), ("reduce_scatter", "ring"), ("allreduce", "ring")],
)
def test_collectives_on_nodes_are_byte_exact(collective, algorithm):
    r = Scenario(
        topology=RAIL_4X4, collective=collective, algorithm=algorithm, bytes_per_rank="256KiB", verify=True
    ).run()
    assert r.verified and not r.wrong_bytes.any()


def test_a_node_inside_a_rail_cluster_runs_at_nvlink_rate():
    """Ranks 0..3 are node 0's GPUs: their ring never leaves the node, so its bound is NVLink's."""
    r = Scenario(topology=RAIL_4X4, ranks=4, collective="allgather", algorithm="ring", bytes_per_rank="16MiB").run()
    nvlink_bps = nodes_of(topology.resolve(RAIL_4X4)).nvlink_bps
    assert r.bound_ps == pytest.approx((16 << 20) * 3 * 8 * PS_PER_S / nvlink_bps, rel=1e-12)
    assert 1 <= r.finish_ps.max() / r.bound_ps <= 1.03
    g = topology.resolve(RAIL_4X4)
    parts = [g.nodes[int(node)].get("part") for node in r.fabric.port_node]
    tx = r.fabric.ports["tx_packets"]
    assert sum(int(t) for t, part in zip(tx, parts, strict=True) if part == "nic") == 0  # no NIC sent a packet
    assert sum(int(t) for t, part in zip(tx, parts, strict=True) if part == "nvswitch") > 0


GPU = RdmaConfig(staging=False, processor=GPU_RECEIVE)  # zero copy into GPU memory, no cost per completion


def test_nvls_allgather_injects_each_shard_once_and_the_nvswitch_copies_it():
    """NVLS in mcsim is the switch multicast inside a node: each GPU injects its N once (4096 chunks of 4 KiB) and
    receives the 7 others' shards, 7N."""
    n = 16 << 20
    r = Scenario(topology="dgx-h100", collective="allgather", algorithm="mcast", bytes_per_rank="16MiB", rdma=GPU).run()
    assert r.complete
    assert (r.injected_b == n).all() and (r.received_b == 7 * n).all()
    assert (r.rank["chunks_sent"] == n // 4096).all()


def test_nvls_allreduce_sends_n_and_receives_the_sum_once_at_the_nvswitch_s_rate():
    """The NVSwitch sums (in-network reduction): every GPU sends its N once and receives the N of the sum; the
    NVSwitch's ALU takes the 8 GPUs' 4096 chunks each at its own rate (8 x 275 GB/s: NVLS_H100_GBPS, calibrated),
    which bounds the run (not NVLink)."""
    n = 16 << 20
    r = Scenario(topology="dgx-h100", collective="allreduce", algorithm="innet", bytes_per_rank="16MiB", rdma=GPU).run()
    assert r.complete
    assert (r.injected_b == n).all() and (r.received_b == n).all()
    g = topology.resolve("dgx-h100")
    nvswitch = [d.get("part") for _, d in sorted(g.nodes(data=True)) if d["role"] == "switch"].index("nvswitch")
    agg = {k: int(v[nvswitch]) for k, v in r.fabric.aggregation.items()}
    assert agg["contributions"] == 8 * n // 4096 and agg["sums"] == n // 4096
    assert g.nodes[8 + 8]["aggregation_bps"] == round(8 * NVLS_H100_GBPS * GB)
    assert r.finish_ps.max() >= agg["alu_busy_ps"] > r.bound_ps  # the ALU, not NVLink, is the bound
    assert r.finish_ps.max() <= 1.02 * agg["alu_busy_ps"]
