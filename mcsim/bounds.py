# SPDX-License-Identifier: GPL-2.0-only
"""The closed forms a collective's time is measured against: the bytes each rank's buffers hold and must
receive, and the bytes an algorithm must move through the busiest rank's link (its bound's numerator;
:attr:`mcsim.result.Result.bound_ps` divides it by the link's data rate). Plain integers: nothing here needs
numpy, the fabric or ns-3."""

from __future__ import annotations

# collectives whose output is one buffer of N bytes (the root's, or the sum); the others' is P shards
ONE_BUFFER = ("broadcast", "allreduce", "reduce")


def output_b(collective: str, bytes_per_rank_b: int, ranks: int) -> int:
    """Each rank's output buffer, nccl-tests' size: P shards of N (Allgather, Reduce-Scatter: its input,
    its block summed in place; Alltoall: its send buffer) or one buffer of N (Broadcast, Allreduce,
    Reduce)."""
    return bytes_per_rank_b * (1 if collective in ONE_BUFFER else ranks)


def lacking_b(collective: str, bytes_per_rank_b: int, ranks: int) -> int:
    """Bytes each rank must receive through its link: N(P-1), or N for a Broadcast, an Allreduce or a
    Reduce (the sum of the others' buffers is one buffer); N(P-1)/BW is the receive bound."""
    return bytes_per_rank_b * (1 if collective in ONE_BUFFER else ranks - 1)


def binary_tree_buffers(ranks: int) -> int:
    """Buffers the busiest rank of the binary tree Allreduce (C++ TreeAllreduce: place v's children are
    2v+1 and 2v+2) receives: its children's partial sums, and the sum from its parent (not the root)."""
    children = [sum(1 for c in (2 * v + 1, 2 * v + 2) if c < ranks) for v in range(min(ranks, 3))]
    return max(children[0], *(k + 1 for k in children[1:]))


def tree_halves(bytes_per_rank_b: int) -> tuple[int, int]:
    """A double tree's halves of N: the first ceil(E/2) of its E elements (4 bytes when N is a multiple of 4,
    else bytes), then the rest (0 bytes when E is 1)."""
    granule = 4 if bytes_per_rank_b % 4 == 0 else 1
    first = -(-(bytes_per_rank_b // granule) // 2) * granule
    return first, bytes_per_rank_b - first


def in_order_degrees(ranks: int) -> list[int]:
    """Per rank, its children and parent in the first tree of NCCL's double binary tree (C++
    TreeAllreduce::InOrder: rank r hangs below r with its lowest set bit cleared and the next one set, or
    only cleared where that is past the last rank)."""
    degree = [0] * ranks
    for r in range(1, ranks):
        low = r & -r
        up = (r ^ low) | (low << 1)
        degree[r] += 1
        degree[up if up < ranks else r ^ low] += 1
    return degree


def double_tree_bound_b(bytes_per_rank_b: int, ranks: int) -> int:
    """The bytes the busiest rank of the double binary tree Allreduce receives: per tree, its half from
    each child (up) and from its parent (down); the second tree is the first's mirror (P even: rank
    P-1-r's place) or shifted by one (P odd: rank r-1's place)."""
    first, second = tree_halves(bytes_per_rank_b)
    d = in_order_degrees(ranks)
    other = [d[ranks - 1 - r] if ranks % 2 == 0 else d[(r - 1) % ranks] for r in range(ranks)]
    return max(d[r] * first + other[r] * second for r in range(ranks))


def bound_b(collective: str, algorithm: str, bytes_per_rank_b: int, ranks: int) -> float:
    """Bytes the algorithm must move through the busiest rank's link, its bound's numerator:

    - 2N(P-1)/P for an Allreduce summed by the hosts (each rank receives the others' shares of its block,
      then the other blocks' sums: no host-based Allreduce receives less, Patarasuk and Yuan, JPDC 2009),
      ring_mcast's too (each of its phases receives N(P-1)/P);
    - the most a rank of a tree Allreduce receives: :func:`binary_tree_buffers` (3 N from P = 5 on), or
      :func:`double_tree_bound_b` (2N for even P from 4 on);
    - ceil(log2 P) N for the binomial Broadcast and Reduce (the root sends the buffer to, or receives it
      from, that many children through its link);
    - P N for the in-network Reduce-Scatter (a rank sends its P blocks of N, its own too: the switches sum
      them all); N(2P-1)/P for the in-network Reduce-Scatter then multicast Allgather (every rank sends its
      N to the switches, then receives the P-1 other sums of N/P: the second phase starts when the first
      has ended);
    - else :func:`lacking_b` (an in-network Allreduce receives the sum, N)."""
    if collective == "allreduce" and algorithm == "tree":
        return binary_tree_buffers(ranks) * bytes_per_rank_b
    if collective == "allreduce" and algorithm == "double_tree":
        return double_tree_bound_b(bytes_per_rank_b, ranks)
    if collective == "allreduce" and algorithm == "innet_mcast":  # N out, then N(P-1)/P in: one after the other
        return bytes_per_rank_b * (2 * ranks - 1) / ranks
    if collective == "reduce_scatter" and algorithm == "innet":  # all P blocks go out to the switches
        return bytes_per_rank_b * ranks
    if collective == "allreduce" and algorithm != "innet":
        return 2 * bytes_per_rank_b * (ranks - 1) / ranks
    if collective in ("broadcast", "reduce") and algorithm == "binomial":
        return (ranks - 1).bit_length() * bytes_per_rank_b
    return lacking_b(collective, bytes_per_rank_b, ranks)


def allreduce_block_b(bytes_per_rank_b: int, ranks: int) -> int:
    """The largest of the P blocks an Allreduce of N bytes is split into: 4-byte elements when N is a multiple of
    4, else bytes, the first N mod P elements' blocks one longer (C++ RingRank::BlockBytes)."""
    granule = 4 if bytes_per_rank_b % 4 == 0 else 1
    return -(-(bytes_per_rank_b // granule) // ranks) * granule


# hierarchical algorithms by what their phases move (mcsim.config.collectives.HIERARCHICAL: a test holds these to it)
TREE_ACROSS_NODES = ("hier_tree", "nvls_tree")  # an Allreduce per rail on NCCL's double binary tree
NVLS_NODE_PHASES = ("nvls_ring", "nvls_tree")  # node phases in the NVSwitch: innet Reduce-Scatter, mcast Allgather


def hierarchical_b(
    collective: str, bytes_per_rank_b: int, nodes: int, gpus: int, *, algorithm: str = ""
) -> tuple[int, int]:
    """(bytes through each GPU's NIC, bytes through its NVLink) that a hierarchical collective on ``nodes`` nodes of
    ``gpus`` GPUs must move, one phase after the other: n(nodes-1) in a rail phase (each GPU gets, or gives, the
    shards of its rail), nodes x n(gpus-1) in a node phase (the other rails' blocks of nodes x n); n is N, and an
    Allgather or a Reduce-Scatter has one phase of each, an Allreduce (its blocks n, allreduce_block_b) two of each
    (the Reduce-Scatter, then the Allgather). ``algorithm``: the hierarchical algorithm, where it changes the bytes:
    the tree Allreduce across nodes (TREE_ACROSS_NODES) has the same two node phases and, between them, a double
    binary tree per rail on its nodes x n: through the NIC what the busiest rank of the flat double tree on ``nodes``
    ranks receives (:func:`double_tree_bound_b`: 2 nodes x n from 4 nodes on, even); an NVLS node Reduce-Scatter
    (NVLS_NODE_PHASES) sends all its gpus blocks of nodes x n into the NVSwitch, gpus x nodes x n (the in-network
    Reduce-Scatter's P N, :func:`bound_b`), where the ring's gets nodes x n (gpus-1); the NVLS Allgather receives
    the ring's nodes x n (gpus-1)."""
    nvls = algorithm in NVLS_NODE_PHASES
    if collective == "allreduce":
        n = allreduce_block_b(bytes_per_rank_b, nodes * gpus)
        network = double_tree_bound_b(nodes * n, nodes) if algorithm in TREE_ACROSS_NODES else 2 * n * (nodes - 1)
        return network, nodes * n * ((gpus if nvls else gpus - 1) + gpus - 1)
    node = nodes * bytes_per_rank_b * (gpus if nvls and collective == "reduce_scatter" else gpus - 1)
    return bytes_per_rank_b * (nodes - 1), node
