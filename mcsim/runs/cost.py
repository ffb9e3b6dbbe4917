# SPDX-License-Identifier: GPL-2.0-only
"""What a collective run will cost, before it runs: packets on links and memory (Scenario.estimate).

Plain arithmetic over a :class:`RunShape` (no graph walk, no C++); the Scenario fills in the shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcsim.errors import McsimError
from mcsim.util import machine

# memory besides the run's own buffers, and what each buffer byte costs
# Python, numpy, networkx and the ns-3 libraries: measured ~210-300 MB while runs imported cppyy,
# ~60-100 MB since they call C++ through ctypes (benchmarks/startup.py); kept as a margin
PROCESS_B = 300 << 20
PATTERN_TEMP_B_PER_BYTE = 24  # verify.pattern(): int64 temporaries per byte of a shard (measured: 24)
RC_WQE_B = 64  # one posted RDMA WRITE in a QP's send queue (RcQp::Wqe in a std::deque)


def packets(size_b: int, message_b: int, mtu_b: int) -> int:
    """Packets that carry size_b bytes sent as messages of message_b bytes, each cut at mtu_b."""
    full, rest = divmod(size_b, message_b)
    return full * -(-message_b // mtu_b) + -(-rest // mtu_b)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunShape:
    """The numbers of one collective run that its cost depends on; sizes in bytes."""

    hosts: int
    switches: int
    links: int  # graph edges
    ranks: int  # P
    shard_b: int  # bytes per rank
    output_b: int  # each rank's output buffer
    sources: int  # ranks that contribute a shard (1 for a Broadcast)
    ring_phases: int  # phases of P-1 steps of the run's ring collectives (an Allreduce has 2)
    ring_block_b: int  # bytes of a ring's largest block (N, or an Allreduce's N/P)
    buffer_transfers: int = 0  # whole buffers sent over RC (a chain or binomial Broadcast: P-1)
    mcast_shard_b: int  # bytes each source multicasts (0: the collective does not multicast)
    mtu_b: int
    ring_chunk_b: int
    verify: bool
    # chunks (of mtu_b) each rank sends into the switches' sums (Reduce-Scatter: P blocks' of N; Allreduce: N's)
    innet_chunks: int = 0
    halving_b: int = 0  # a halving-doubling Allreduce's buffer N (0: another algorithm)
    # a hierarchical collective's teams (each on k ranks): its ring teams' k(k-1) x their block's packets (each
    # crosses at most hops links), its multicast teams' k x their shard's chunks (each crosses its tree once)
    team_ring_packets: int = 0
    team_mcast_chunks: int = 0


def halving_packets(s: RunShape) -> int:
    """Packets a halving-doubling Allreduce sends: log2 P halving steps, in which every rank sends half of the
    blocks it still holds (P/2, P/4, ..., 1 blocks of at most ceil(N/P) bytes, rounded up to 4), then the
    doubling steps, the same sizes back."""
    if not s.halving_b:
        return 0
    p = s.ranks
    block = 4 * -(-s.halving_b // (4 * p))
    steps = [(p >> k) * block for k in range(1, p.bit_length())]  # P is a power of 2: log2 P steps
    return 2 * p * sum(packets(b, s.ring_chunk_b, s.mtu_b) for b in steps)


def memory_parts_b(s: RunShape) -> dict[str, int]:
    """The parts of :func:`estimate`'s ``memory_b``, in bytes."""
    parts = {
        "process_b": PROCESS_B,
        "fabric_b": machine.fabric_memory_b(s.hosts, s.switches, s.links),
        "verify_b": 0,
        "bitmap_b": 0,
        "send_queue_b": 0,
    }
    p, n = s.ranks, s.shard_b
    if s.verify:
        # the NIC regions and the copies read back (2 per rank), the expected buffer and the
        # comparison's temporary (1 each), pattern()'s int64 temporaries for one shard
        parts["verify_b"] = 2 * p * s.output_b + 2 * s.output_b + PATTERN_TEMP_B_PER_BYTE * n
    if s.mcast_shard_b:  # one byte per chunk of the output on every rank
        parts["bitmap_b"] = p * s.sources * -(-s.mcast_shard_b // s.mtu_b)
    # every rank of a ring posts the WRITEs of its first block at once
    parts["send_queue_b"] = s.ring_phases * p * -(-s.ring_block_b // s.ring_chunk_b) * RC_WQE_B
    return parts


def estimate(s: RunShape, hops: int) -> dict[str, int]:
    """What the run will cost; ``hops`` is the topology's largest host-to-host hop count.

    Returns
    -------
    dict
        ``packets``: an upper bound of the payload packets the collective puts on links, counted
        once per link they cross: the packets sent over RC (the rings', halving-doubling's, the
        buffers of the tree, pairwise and logarithmic algorithms) cross at most ``hops_bound`` links
        each; a multicast chunk crosses each link of its tree once (at most ``tree_links_bound``);
        an in-network chunk goes up its aggregation tree and its sum comes down it (at most twice
        ``tree_links_bound``); control, ACKs and repair not counted.
        A hierarchical collective's teams count as such collectives of their own (``team_ring_packets``,
        ``team_mcast_chunks``; a team's tree is within the P ranks' bound).
        ``hops_bound``: ``hops``. ``tree_links_bound``: the P host links plus the switch links of
        the tree, at most (switches - 1) and at most (P-1) x (hops_bound - 2) (the tree is a BFS
        tree from its centre). ``memory_b``: a conservative bound of the process's RAM, the sum of
        ``process_b`` (Python and the libraries), ``fabric_b`` (the graph and the routing tables:
        machine.fabric_memory_b), ``verify_b`` (verify mode: 2 x ranks x output_b for the NIC
        regions and the copies read back, the expected output, pattern temporaries), ``bitmap_b``
        (multicast: one byte per chunk of the output on every rank, P x P x chunks) and
        ``send_queue_b`` (ring: every rank posts its first block's WRITEs at once).
    """
    p, n = s.ranks, s.shard_b
    tree_links = p + max(0, min(s.switches - 1, (p - 1) * (hops - 2)))
    total = s.ring_phases * p * (p - 1) * packets(s.ring_block_b, s.ring_chunk_b, s.mtu_b) * hops
    total += s.buffer_transfers * packets(n, s.ring_chunk_b, s.mtu_b) * hops
    total += s.sources * -(-s.mcast_shard_b // s.mtu_b) * tree_links
    # in-network reduction: each chunk goes up its aggregation tree (one packet on each of its links, the
    # switches' sums included) and its sum comes down it (at most one on each link again)
    total += 2 * s.innet_chunks * tree_links
    total += halving_packets(s) * hops
    total += s.team_ring_packets * hops + s.team_mcast_chunks * tree_links
    memory = memory_parts_b(s)
    return {
        "packets": total,
        "hops_bound": hops,
        "tree_links_bound": tree_links,
        "memory_b": sum(memory.values()),
        **memory,
    }


def check_memory(s: RunShape, available_b: int | None = None) -> None:
    """Raise McsimError (one line) if the run needs more memory than the process can still take
    (``available_b`` defaults to :func:`machine.available_memory_b`: MemAvailable, ulimit -v and -d,
    the cgroup's limit; unknown: no check)."""
    available = machine.available_memory_b() if available_b is None else available_b
    if available is None:
        return
    parts = memory_parts_b(s)
    need = sum(parts.values())
    if need <= available:
        return
    gib = 2**30
    detail = ", ".join(f"{name[:-2].replace('_', ' ')} {b / gib:.3g}" for name, b in parts.items() if b)
    raise McsimError(
        f"Scenario: needs ~{need / gib:.3g} GiB ({detail} GiB), {machine.describe_available(available)}; "
        "use fewer ranks or a smaller bytes_per_rank" + (", or verify=False" if parts["verify_b"] else "")
    )
