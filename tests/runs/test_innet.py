# SPDX-License-Identifier: GPL-2.0-only
"""In-network reduction (switches sum up aggregation trees) against closed forms: true sums, bytes
per rank, packets per tree, the latency of one sum, the ALU's time, the buffer's window, and the
FSDP pair multicast Allgather || in-network Reduce-Scatter against PN/BW."""

import networkx as nx
import numpy as np
import pytest

from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.rdma import RdmaConfig
from mcsim.errors import McsimError
from mcsim.routing import routes
from mcsim.routing.layout import layout_of
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.runs.verify import Expected, pattern
from mcsim.topology.physics import Link

MTU = 4096
# a contribution is a UD SEND with immediate: LRH 8 + BTH 12 + DETH 8 + ImmDt 4 + ICRC 4 + VCRC 2,
# and a GRH of 40 when its sum goes to a group (an Allreduce)
UD_IMM_HEADER_B = 38
GRH_B = 40
PS_PER_S = 10**12


def ft4() -> nx.Graph:
    return Scenario(topology="fat-tree-k4").graph()


def fdr(g: nx.Graph) -> Link:
    return Link.from_edge(g.edges[0, next(iter(g.neighbors(0)))])


def trees(g: nx.Graph, ranks: int) -> list[routes.MulticastTree]:
    return routes.aggregation_trees(layout_of(g), range(ranks))


@pytest.mark.parametrize(
    ("topology", "collective", "size", "ranks"),
    [
        ("fat-tree-k4", "reduce_scatter", "16KiB", None),
        ("fat-tree-k4", "reduce_scatter", "6000", 5),  # a short last chunk; 5 ranks on 3 leaves
        ("fat-tree-k4", "allreduce", "64KiB", None),
        ("fat-tree-k4", "allreduce", "4100", 3),
        ("fat-tree-k8", "reduce_scatter", "4KiB", 40),
        ("testbed-188", "allreduce", "64KiB", None),
    ],
)
def test_every_rank_ends_with_the_true_sums(topology, collective, size, ranks):
    r = Scenario(
        topology=topology, collective=collective, algorithm="innet", bytes_per_rank=size, ranks=ranks, verify=True
    ).run()
    assert r.verified and not r.wrong_bytes.any()
    # no single contribution is the answer: a switch that forwarded one instead of summing would fail
    exp = Expected(collective, r.ranks, r.bytes_per_rank_b)
    n = r.bytes_per_rank_b
    for rank in (0, r.ranks - 1):
        block = slice(0, n) if collective == "allreduce" else slice(rank * n, (rank + 1) * n)
        out = exp.output(rank)[: n if collective == "allreduce" else None]
        for source in range(r.ranks):
            held = pattern(source, n if collective == "allreduce" else r.ranks * n)
            assert (out[block] != held[block]).any()


@pytest.mark.parametrize("collective", ["reduce_scatter", "allreduce"])
def test_bytes_packets_and_sums_follow_the_trees(collective):
    g, p, n = ft4(), 16, 64 * 1024
    r = Scenario(topology="fat-tree-k4", collective=collective, algorithm="innet", bytes_per_rank=n).run()
    assert r.complete
    chunks = n // MTU
    sent = chunks if collective == "allreduce" else p * chunks  # contributions per rank
    # a Reduce-Scatter injects all P blocks once and receives its own block's sums; an Allreduce
    # injects its buffer once and receives the whole sum
    assert (r.injected_b == (n if collective == "allreduce" else p * n)).all()
    assert (r.received_b == n).all()
    assert (r.nic["tx_packets"] == sent).all()
    # chunk c goes up tree c mod T: every node but the root sends one packet up, each tree switch
    # sends one sum; the sum goes down the tree (Allreduce) or from the root to one host
    ts = trees(g, p)
    up = down = sums = 0
    for c in range(sent):
        t = ts[c % len(ts)]
        up += len(t.nodes) - 1
        sums += len(t.switch_ports)
        down += len(t.nodes) - 1 if collective == "allreduce" else nx.shortest_path_length(g, t.root, (c % p))
    agg = r.fabric.aggregation
    assert int(agg["contributions"].sum()) == up
    assert int(agg["sums"].sum()) == sums
    assert r.fabric.link_traversals() == up + down
    assert int(agg["waits"].sum()) == 0 and r.fabric.unroutable_packets == 0


def test_one_sum_takes_the_closed_form_latency():
    """One 4 KiB Allreduce on fat-tree-k4, every link idle: each level of the tree waits for its
    last contribution's last bit, sums it (its ALU takes the other contributions' bytes at 4 ports'
    rate) and sends the sum on after the switch latency; the root multicasts it down, cutting
    through."""
    g = ft4()
    link = fdr(g)
    cfg = RdmaConfig()
    fab = FabricConfig()
    r = Scenario(topology="fat-tree-k4", collective="allreduce", algorithm="innet", bytes_per_rank=MTU).run()
    wire = MTU + UD_IMM_HEADER_B + GRH_B
    assert int(r.fabric.ports["tx_wire_bytes"][0]) == wire
    tx, lrh, d, lat = link.tx_ps(wire), link.tx_ps(8), link.delay_ps, fab.switch_latency_ps
    alu_bps = 4 * link.data_rate_bps  # every fat-tree-k4 switch has 4 ports
    work = -(-wire * 8 * PS_PER_S // alu_bps)
    edge = cfg.send_latency_ps + tx + d + 1 * work  # 2 hosts per edge switch
    agg = edge + lat + tx + d + 1 * work  # 2 edge switches per aggregation switch
    core = agg + lat + tx + d + 3 * work  # 4 pods below the root
    arrival = core + lat + tx + 2 * (lat + lrh) + 3 * d  # core -> agg -> edge -> host
    assert (r.fabric.hosts["last_arrival_ps"][:16] == arrival).all()
    assert (r.finish_ps >= arrival + cfg.receive_latency_ps).all()


def test_a_slow_alu_sets_the_pace():
    """At half a link's rate the ALU of every edge switch sums 2 contributions per chunk, each
    taking twice its serialization: the edge ALUs, busy for exactly that, pace the reduction."""
    g, p, n = ft4(), 16, 64 * 1024
    link = fdr(g)
    alu_bps = link.data_rate_bps // 2
    fabric = FabricConfig(aggregation_rate_bps=alu_bps)
    r = Scenario(
        topology="fat-tree-k4", collective="reduce_scatter", algorithm="innet", bytes_per_rank=n, fabric=fabric
    ).run()
    wire = MTU + UD_IMM_HEADER_B
    work = -(-wire * 8 * PS_PER_S // alu_bps)
    busy = r.fabric.aggregation["alu_busy_ps"]
    contributions = r.fabric.aggregation["contributions"]
    assert (busy == contributions * work).all()  # every contribution is one full chunk
    edges = [s - 16 for s in range(16, 36) if any(v < 16 for v in g.neighbors(s))]
    edge_busy = 2 * p * (n // MTU) * work  # every chunk, 2 contributions
    assert (busy[edges] == edge_busy).all()
    assert busy.max() == edge_busy
    fast = Scenario(topology="fat-tree-k4", collective="reduce_scatter", algorithm="innet", bytes_per_rank=n).run()
    # at most: the edge ALUs' busy time, the last chunk's 2 + 4 contributions at the aggregation
    # and core ALUs, and the rest of the path (the fast run's time beyond its injection)
    path_ps = fast.time_ps - p * (n // MTU) * link.tx_ps(wire)
    assert edge_busy <= r.time_ps <= edge_busy + (2 + 4) * work + path_ps
    assert r.time_ps > 1.8 * fast.time_ps


def slow_host_ft4() -> nx.Graph:
    """fat-tree-k4 with host 0's link at a quarter of the rate: host 0 lags, the others run ahead."""
    g = ft4()
    leaf = next(iter(g.neighbors(0)))
    g.edges[0, leaf]["rate_bps"] //= 4
    return g


@pytest.mark.parametrize(
    "kwargs",
    [
        {"collective": "allreduce", "bytes_per_rank": "256KiB", "verify": True},
        {"collective": "reduce_scatter", "bytes_per_rank": "32KiB", "verify": True},
        {"collective": "reduce_scatter", "bytes_per_rank": "32KiB", "ranks": 7, "verify": True},
        {
            "collective": "allgather",
            "algorithm": "mcast",
            "overlap": "reduce_scatter",
            "overlap_algorithm": "innet",
            "bytes_per_rank": "64KiB",
        },
    ],
)
def test_the_smallest_window_waits_but_never_deadlocks(kwargs):
    # 2 slots of 4 KiB per tree on the switches in the most trees (every edge switch is in all 4)
    fabric = FabricConfig(aggregation_buffer_b=2 * 4 * MTU)
    kwargs = {"topology": slow_host_ft4(), "algorithm": "innet"} | kwargs
    r = Scenario(fabric=fabric, **kwargs).run()
    done = r if r.concurrent is None else r.concurrent
    assert r.complete and done.complete and (r.verified or not kwargs.get("verify"))
    agg = r.fabric.aggregation
    assert agg["waits"].sum() > 0  # the window binds: contributions of the fast hosts wait
    assert (agg["peak_slots"] <= 4 * 2).all()  # 4 trees of 2 slots at most on any switch
    big = Scenario(**kwargs).run()
    assert big.fabric.aggregation["waits"].sum() == 0
    # the slow host's link paces both (its bytes at a quarter of the rate); the window only
    # reorders the ALUs' work
    slow_ps = Link.from_edge(kwargs["topology"].edges[0, 16]).tx_ps(int(r.fabric.ports["tx_wire_bytes"][0]))
    small_ps, big_ps = max(r.time_ps, done.time_ps), max(big.time_ps, (big.concurrent or big).time_ps)
    assert min(small_ps, big_ps) >= slow_ps
    assert abs(small_ps - big_ps) <= 1e-3 * big_ps


def injection_bound_ps(r, p: int, n: int) -> float:
    """What each rank's link must carry of the pair: its multicast shard and all P blocks."""
    mcast = -(-n // MTU) * (UD_IMM_HEADER_B + GRH_B) + n
    innet = p * (-(-n // MTU) * UD_IMM_HEADER_B + n)
    return (mcast + innet) * 8 * PS_PER_S / r.data_rate_bps


def pair_ps(r) -> int:
    return max(r.time_ps, r.concurrent.time_ps)


def test_the_fsdp_pair_with_in_network_reduce_scatter_is_near_the_injection_bound():
    p, n = 16, 1 << 20
    base = {"topology": "fat-tree-k4", "bytes_per_rank": n, "overlap": "reduce_scatter"}
    innet = Scenario(**base, algorithm="mcast", overlap_algorithm="innet").run()
    rings = Scenario(**base, algorithm="ring").run()
    bound = injection_bound_ps(innet, p, n)
    assert bound <= pair_ps(innet) <= 1.10 * bound
    # each host's NIC: the Allgather's (P - 1) N and its own block's sums N in, its shard and all P
    # blocks out
    assert (innet.received_b == p * n).all() and (innet.injected_b == (p + 1) * n).all()
    chunks = n // MTU
    assert (innet.concurrent.rank["chunks_received"] == chunks).all()
    assert (innet.concurrent.rank["chunks_sent"] == p * chunks).all()
    # two rings move 2 (P - 1) N through each link; the pair (P + 1) N
    assert pair_ps(rings) / pair_ps(innet) >= 0.9 * 2 * (p - 1) / (p + 1)


@pytest.mark.slow
def test_testbed_fsdp_pair_is_within_10_percent_of_pn_over_bw_and_1_8x_faster_than_two_rings():
    n = 1 << 20
    base = {"topology": "testbed-188", "bytes_per_rank": n, "overlap": "reduce_scatter"}
    innet = Scenario(**base, algorithm="mcast", overlap_algorithm="innet").run()
    rings = Scenario(**base, algorithm="ring").run()
    p = innet.ranks
    pn_ps = p * n * 8 * PS_PER_S / innet.data_rate_bps
    assert pair_ps(innet) <= 1.10 * pn_ps
    assert pair_ps(rings) >= 1.8 * pair_ps(innet)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"flow_control": "lossy"},
            r"innet\) needs flow_control='lossless' \(or 'pfc' with its computed headroom\), loss=0 and no faults",
        ),
        (
            {"loss": 1e-4},
            r"needs flow_control='lossless' \(or 'pfc' with its computed headroom\), loss=0 and no faults",
        ),
        (
            {"fabric": FabricConfig(flow_control="pfc", pfc_headroom_b=4096)},
            r"needs flow_control='lossless' \(or 'pfc' with its computed headroom\)",
        ),
        (
            {"faults": Faults(drops=[(0, 0, 0)])},
            r"needs flow_control='lossless' \(or 'pfc' with its computed headroom\), loss=0 and no faults",
        ),
        ({"verify": True, "bytes_per_rank": 1002}, r"not a whole number of 32-bit integers"),
        (
            {"fabric": FabricConfig(aggregation_buffer_b=4 * MTU)},
            r"holds 1 slots of 4096 B for each of the 4 aggregation trees of switch 16; it needs >= 2",
        ),
        ({"collective": "allgather"}, r"unknown algorithm for allgather 'innet'"),
        # the two-phase Allreduce's in-network Reduce-Scatter: the same needs
        (
            {"collective": "allreduce", "algorithm": "innet_mcast", "loss": 1e-4},
            r"needs flow_control='lossless' \(or 'pfc' with its computed headroom\), loss=0 and no faults",
        ),
        (
            {"collective": "allreduce", "algorithm": "innet_mcast", "flow_control": "lossy"},
            r"innet\) needs flow_control='lossless' \(or 'pfc' with its computed headroom\), loss=0 and no faults",
        ),
        (
            {"collective": "allreduce", "algorithm": "innet_mcast", "verify": True, "bytes_per_rank": 1002},
            r"not a whole number of 32-bit integers",
        ),
    ],
)
def test_bad_in_network_input_is_one_line(kwargs, message):
    kwargs = {"topology": "fat-tree-k4", "collective": "reduce_scatter", "algorithm": "innet"} | kwargs
    with pytest.raises(McsimError, match=message) as err:
        scenario_of(**kwargs).run()  # a Scenario's fields and the short names
    assert "\n" not in str(err.value)


def test_a_config_without_aggregation_buffer_is_one_line():
    with pytest.raises(McsimError, match=r"^FabricConfig: aggregation_buffer_b=0 must be > 0$"):
        FabricConfig(aggregation_buffer_b=0)


def test_bad_overlap_algorithm_is_one_line():
    with pytest.raises(McsimError, match=r"unknown overlap_algorithm 'sharp'; choose one of innet, ring"):
        Scenario(topology="fat-tree-k4", overlap="reduce_scatter", overlap_algorithm="sharp")


def test_aggregation_trees_start_at_every_best_root():
    g = ft4()
    ts = trees(g, 16)
    assert [t.root for t in ts] == list(routes.best_roots(layout_of(g), range(16))) == [32, 33, 34, 35]  # the 4 cores
    for t in ts:
        parents = routes.tree_parents(t, layout_of(g))
        assert parents[t.root] is None and len(parents) == len(t.switch_ports)
        assert all(port in t.switch_ports[s] for s, port in parents.items() if port is not None)
    assert len(routes.aggregation_trees(layout_of(g), range(16), count=2)) == 2
    np.testing.assert_array_equal(sorted({t.root for t in ts}), [32, 33, 34, 35])
