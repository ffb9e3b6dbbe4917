# SPDX-License-Identifier: GPL-2.0-only
"""reference/traffic.py: the authors' traffic model and mcsim's count, against closed forms and runs.

Closed forms, derived from the authors' rule (PUBLISHED.md, their sim/estimate_allgather_cost.py):
ranks 0..P-1 on a fat tree of ToRs of 16 hosts and pods of 2 ToRs (32 hosts).

- P <= 16 (one ToR): every send is 2 hops, so ring = linear = recursive doubling = 2P(P-1) (P-1
  shards leave each rank); a multicast crosses P links (the sender's and P-1 down), P of them: P^2.
  The ring ratio is 2(P-1)/P = 2 - 2/P, as the slides say.
- Ring, P = 16m (m ToRs): rank r -> r+1 crosses a ToR boundary at r = 16j - 1 (j = 1..m-1): 4 hops
  within a pod (j odd, m/2 of them), 6 through the core (j even, m/2 - 1 of them); the wrap-around
  P-1 -> 0 is 2 by their rule (a negative distance) and w = 4 (P = 32, one pod) or 6 on a real
  tree. Per round 2P + 2(m/2) + 4(m/2 - 1), times P-1 shards: authors (P-1)(2P + 3m - 4), real
  (P-1)(2P + 3m - 6 + w).
- Linear, P >= 32 a multiple of 32: from each rank 15 peers 2 hops away, 16 at 4, P-32 at 6: real
  P(6P - 98). The authors count the forward half (dst > src) right and the backward half at 2:
  P(6P - 98)/2 + P(P-1) = P(4P - 50). Recursive doubling moves, at step d, d shards between ranks
  whose highest differing bit is d: exactly the peers linear reaches at that distance, so its cost
  equals linear's on both counts (P a power of two).
- Multicast, P > 32: authors P(1 + D + T + P), T = P/16 ToRs, D = T/2 pods; mcsim's tree is rooted
  at the core: D core links, T ToR links, P host links, so P(P + T + D).
"""

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from mcsim import topology
from mcsim.errors import McsimError
from mcsim.reference import traffic
from mcsim.reference.traffic import SCHEDULES, authors_cost, authors_table, mcsim_cost, traffic_reduction
from mcsim.routing.layout import Layout, layout_of
from mcsim.runs.scenario import Scenario

LINK = {"rate_bps": 10**9, "delay_ps": 100_000}
UNICAST = ("ring", "recursive_doubling", "linear")


@pytest.fixture(scope="module")
def tree1024() -> Layout:
    return layout_of(topology.resolve("fat-tree-1024-r32"))


@pytest.fixture(scope="module")
def k4() -> Layout:
    return layout_of(topology.resolve("fat-tree-k4"))


# --- the authors' rule -----------------------------------------------------------------------------


@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_authors_one_tor_closed_forms(p):
    for schedule in UNICAST:
        assert authors_cost(schedule, p) == 2 * p * (p - 1)
    assert authors_cost("multicast", p) == p * p
    assert Fraction(authors_cost("ring", p), authors_cost("multicast", p)) == 2 - Fraction(2, p)


@pytest.mark.parametrize("p", [3, 5, 12, 15])
def test_authors_one_tor_any_p(p):
    assert authors_cost("ring", p) == authors_cost("linear", p) == 2 * p * (p - 1)
    assert authors_cost("multicast", p) == p * p


@pytest.mark.parametrize("p", [32, 64, 128, 256, 512, 1024])
def test_authors_across_tors_closed_forms(p):
    tors = p // 16
    pods = tors // 2
    assert authors_cost("ring", p) == (p - 1) * (2 * p + 3 * tors - 4)
    assert authors_cost("linear", p) == authors_cost("recursive_doubling", p) == p * (4 * p - 50)
    links = p + 2 if p == 32 else 1 + pods + tors + p
    assert authors_cost("multicast", p) == p * links


def test_authors_multicast_truncates_tors():
    # their T = int(P / 16): 40 ranks on 3 ToRs count as 2 ToRs, 1 pod
    assert traffic.authors_multicast_links(40) == 1 + 1 + 2 + 40


def test_authors_distance_quirk():
    # a negative rank difference counts as "within the ToR" however far: the ring's wrap-around
    src, dst = [1023, 15, 31, 16], [0, 16, 32, 15]
    assert traffic.authors_hops(np.asarray(src), np.asarray(dst)).tolist() == [2, 4, 6, 2]


def test_authors_table_shape():
    rows = authors_table()
    assert [r["p"] for r in rows] == [2**i for i in range(1, 11)]
    for r in rows:
        assert set(r) == {"p", *SCHEDULES, *(f"reduction_{s}" for s in SCHEDULES)}
        for s in SCHEDULES:
            assert r[f"reduction_{s}"] == r[s] / r["multicast"]
        assert r["reduction_multicast"] == 1.0
        assert 1 <= r["reduction_ring"] < 2  # never quite the 2x
        assert r["reduction_linear"] == r["reduction_recursive_doubling"] >= r["reduction_ring"]
    ring = [r["reduction_ring"] for r in rows]
    assert ring == sorted(ring) and ring[0] == 1.0


@pytest.mark.parametrize(
    ("schedule", "p", "message"),
    [
        ("tree", 4, r"unknown traffic schedule 'tree'"),
        ("ring", 1, r"authors_cost: p=1 must be"),
        ("ring", 1025, r"authors_cost: p=1025 must be"),
        ("recursive_doubling", 12, r"authors_cost: p=12 must be a power of two for recursive_doubling"),
    ],
)
def test_authors_cost_rejects_bad_input(schedule, p, message):
    with pytest.raises(McsimError, match=message):
        authors_cost(schedule, p)


# --- mcsim's count on a topology ------------------------------------------------------------------


@pytest.mark.parametrize(("hosts", "p"), [(4, 4), (8, 8), (8, 5), (16, 16)])
def test_mcsim_cost_on_one_switch(hosts, p):
    star = layout_of(topology.leaf_spine(1, 0, hosts, **LINK))  # every unicast: host-switch-host, 2 links
    assert mcsim_cost("ring", p, star) == mcsim_cost("linear", p, star) == 2 * p * (p - 1)
    if p & (p - 1) == 0:
        assert mcsim_cost("recursive_doubling", p, star) == 2 * p * (p - 1)
    assert mcsim_cost("multicast", p, star) == p * p  # the tree: the p members' links only
    assert traffic_reduction(p, star) == 2 * p * (p - 1) / (p * p)  # 2 - 2/p, as the same float


def test_mcsim_cost_on_fat_tree_k4(k4):
    # 2 hosts per edge switch, 4 per pod: r -> r+1 is 2 hops (r even), 4 (r = 1 mod 4), 6 (r = 3 mod 4)
    assert mcsim_cost("ring", 4, k4) == 3 * (2 + 4 + 2 + 4)
    assert mcsim_cost("ring", 8, k4) == 7 * (2 + 4 + 2 + 6 + 2 + 4 + 2 + 6)
    assert mcsim_cost("ring", 16, k4) == 15 * (8 * 2 + 4 * 4 + 4 * 6)
    # a rank sees 1 peer at 2 hops, 2 at 4, the other 12 at 6
    assert mcsim_cost("linear", 16, k4) == mcsim_cost("recursive_doubling", 16, k4) == 16 * (2 + 2 * 4 + 12 * 6)
    # trees: one pod: an aggregation switch, 2 edge links + 4 host links; 2 pods: a core, 2 + 4 + 8;
    # all: a core, 4 aggregation + 8 edge + 16 host links
    assert mcsim_cost("multicast", 4, k4) == 4 * 6
    assert mcsim_cost("multicast", 8, k4) == 8 * 14
    assert mcsim_cost("multicast", 16, k4) == 16 * 28


@pytest.mark.parametrize("p", [32, 64, 1024])
def test_mcsim_cost_on_the_authors_tree(tree1024, p):
    tors = p // 16
    pods = tors // 2
    wrap = 4 if p == 32 else 6  # rank P-1 -> 0: within the pod, or through the core
    ring = (p - 1) * (2 * p + 3 * tors - 6 + wrap)
    assert mcsim_cost("ring", p, tree1024) == ring
    assert mcsim_cost("linear", p, tree1024) == mcsim_cost("recursive_doubling", p, tree1024) == p * (6 * p - 98)
    tree = p + 2 if p == 32 else p + tors + pods
    assert mcsim_cost("multicast", p, tree1024) == p * tree
    assert traffic_reduction(p, tree1024) == ring / (p * tree)
    assert traffic_reduction(p, tree1024, "linear") == (6 * p - 98) / tree


def test_mcsim_cost_rejects_bad_input(k4):
    with pytest.raises(McsimError, match=r"mcsim_cost: p=17 must be"):
        mcsim_cost("ring", 17, k4)
    with pytest.raises(McsimError, match=r"mcsim_cost: p=6 must be a power of two for recursive_doubling"):
        mcsim_cost("recursive_doubling", 6, k4)


# --- against simulated runs ------------------------------------------------------------------------


def _hops(g: nx.Graph, a: int, b: int) -> int:
    return int(nx.shortest_path_length(g, a, b))


@pytest.mark.parametrize("p", [4, 16])
def test_ring_run_crosses_the_counted_links(k4, p):
    """A ring Allgather of 4 KiB shards: P(P-1) RDMA WRITEs of one 4 KiB packet each, every one
    answered by one RC ACK from r+1 back to r over a path as long as the data's (minimal routes).
    ``link_traversals`` counts every packet on every link (per-port tx_packets, data and ACKs), so
    it is exactly twice the data's shard-link traversals."""
    r = Scenario(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="4KiB", ranks=p).run()
    assert int(r.nic["tx_packets"].sum()) == 2 * p * (p - 1)  # data + one ACK each
    assert r.fabric.link_traversals() == 2 * mcsim_cost("ring", p, k4)


@pytest.mark.parametrize("p", [4, 16])
def test_mcast_run_crosses_the_counted_links(k4, p):
    """A multicast Allgather of 4 KiB shards: P datagrams of one 4 KiB packet, each crossing every
    link of the group's tree once (mcsim_cost). Besides them, with no loss, the protocol sends
    0-byte RC SENDs to r+1: a TOKEN from every rank whose successor does not head one of the K = 2
    sequences (heads 0 and P/2: all but ranks P/2-1 and P-1) and a FIN from every rank; each SEND
    is answered by one RC ACK back over a path as long. ``link_traversals`` (per-port tx_packets)
    counts all of them: data + 2 x the control SENDs' hops."""
    r = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="4KiB", ranks=p).run()
    tokens = [rank for rank in range(p) if rank not in (p // 2 - 1, p - 1)]
    assert int(r.nic["tx_packets"].sum()) == p + 2 * (len(tokens) + p)  # data, SENDs, their ACKs
    control_hops = sum(_hops(k4.graph, rank, rank + 1) for rank in tokens)
    control_hops += sum(_hops(k4.graph, rank, (rank + 1) % p) for rank in range(p))
    assert r.fabric.link_traversals() == mcsim_cost("multicast", p, k4) + 2 * control_hops
    (tree,) = r.fabric.trees
    assert tree is not None and p * len(tree.tree_links) == mcsim_cost("multicast", p, k4)


# The authors' script's own output: sim/estimate_allgather_cost.py of github.com/spcl/muliticast-based-allgather
# at commit b3a3121, run with python3 (its CSV: nodes,linear,ring,recdoubling,multicast). Published data,
# not an earlier mcsim run: authors_cost must give exactly these numbers.
AUTHORS_SCRIPT_CSV = """\
nodes,linear,ring,recdoubling,multicast
2,4,4,4,4
4,24,24,24,16
8,112,112,112,64
16,480,480,480,256
32,2496,2046,2496,1088
64,13184,8568,13184,4544
128,59136,35052,59136,18048
256,249344,141780,249344,71936
512,1022976,570276,1022976,287232
1024,4143104,2287428,4143104,1147904
"""


def test_authors_table_is_the_authors_scripts_output():
    header, *lines = AUTHORS_SCRIPT_CSV.splitlines()
    columns = {"linear": "linear", "ring": "ring", "recdoubling": "recursive_doubling", "multicast": "multicast"}
    names = header.split(",")[1:]
    rows = {row["p"]: row for row in authors_table()}
    for line in lines:
        p, *costs = map(int, line.split(","))
        for name, cost in zip(names, costs, strict=True):
            assert authors_cost(columns[name], p) == cost, (name, p)
            assert rows[p][columns[name]] == cost, (name, p)
