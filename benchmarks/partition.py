# SPDX-License-Identifier: GPL-2.0-only
"""How one run would split over cores: the traffic that crosses a pod boundary, and the lookahead.

A parallel discrete-event simulation (ns-3's MPI simulator, or Unison-style threads) gives each
logical process (LP) a part of the fabric; an event whose cause lies in another LP is a message
between them, and LPs may run ahead of each other only by the lookahead, the least delay with
which one LP can affect another. The natural parts here are the pods: the fabric less its top-tier
switches falls apart into pods (racks of a leaf-spine fabric such as testbed-188, pods of a fat
tree), and each top-tier switch is an LP of its own. So every packet-hop on a link to a top-tier
switch crosses LPs, and the lookahead is that link's delay plus the serialisation of the smallest
packet on it (a switch acts on a packet once it has all of it).

Prints, per workload: LPs, the share of packet-hops that cross an LP boundary, the lookahead, the
collective's simulated time, and the events of the whole run per lookahead window, in all and per LP: how much
work each LP would have between two synchronisations. Counts come from the run's own port counters
and event counter; no timing is involved, so the figures are exact for the seed.

Run: python benchmarks/partition.py [--quick]
"""

import argparse
import sys

import networkx as nx
import numpy as np

WORKLOADS = (  # topology, algorithm, bytes per rank
    ("testbed-188", "ring", "256KiB"),
    ("testbed-188", "mcast", "256KiB"),
    ("fat-tree-k8", "ring", "256KiB"),
    ("fat-tree-k8", "mcast", "256KiB"),
    ("fat-tree-k16", "ring", "16KiB"),
    ("fat-tree-k16", "mcast", "16KiB"),
)
QUICK = WORKLOADS[2:4]
ACK_WIRE_B = 30  # the smallest packet: an RC ACK on InfiniBand (LRH 8 + BTH 12 + AETH 4 + CRCs 6)


def parts(g: nx.Graph) -> tuple[dict[int, int], set[int]]:
    """node -> LP (pods of the fabric less its top tier; each top-tier switch its own), and the top tier."""
    top_tier = max(d["tier"] for _, d in g.nodes(data=True))
    top = {n for n, d in g.nodes(data=True) if d["tier"] == top_tier}
    lp: dict[int, int] = {}
    for i, pod in enumerate(nx.connected_components(g.subgraph(set(g) - top))):
        lp.update(dict.fromkeys(pod, i))
    first = max(lp.values()) + 1
    lp.update({n: first + i for i, n in enumerate(sorted(top))})
    return lp, top


def _lookahead_ps(link: dict) -> int:
    """A link's delay plus the serialisation of the smallest packet at its signalling rate and code."""
    wire_bits = ACK_WIRE_B * 8 * link["encoding_line_bits"] // link["encoding_data_bits"]
    return link["delay_ps"] + -(-wire_bits * 10**12 // link["rate_bps"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fat-tree-k8 only")
    args = parser.parse_args()
    from mcsim.native import run_control, runtime
    from mcsim.runs.scenario import Scenario

    runtime.load()
    print(
        f"{'topology':<13} {'algo':<5} {'size':>6} {'LPs':>4} {'hops':>10} {'cross_share':>11} "
        f"{'lookahead_ns':>12} {'time_us':>9} {'events':>10} {'ev/window':>9} {'ev/window/LP':>12}"
    )
    for topo, algo, size in QUICK if args.quick else WORKLOADS:
        sc = Scenario(topology=topo, algorithm=algo, bytes_per_rank=size, rate="56Gbps")
        g = sc.graph()
        lp, top = parts(g)
        r = sc.run()
        f = r.fabric
        node, peer_node = f.port_node, f.port_node[f.port_peer]
        tx = f.ports["tx_packets"].astype(np.int64)
        lps = np.array([lp[int(n)] for n in node]), np.array([lp[int(n)] for n in peer_node])
        crossing = int(tx[lps[0] != lps[1]].sum())
        boundary = [d for u, v, d in g.edges(data=True) if u in top or v in top]
        lookahead_ps = min(_lookahead_ps(d) for d in boundary)
        windows = r.time_ps / lookahead_ps  # until the collective finished (timers may run on after it)
        n_lps = len(set(lp.values()))
        events = run_control.last_run().events  # the events of Simulator::Run()
        print(
            f"{topo:<13} {algo:<5} {size:>6} {n_lps:>4} {int(tx.sum()):>10} {crossing / tx.sum():>11.3f} "
            f"{lookahead_ps / 1000:>12.1f} {r.time_ps / 1e6:>9.1f} {events:>10} {events / windows:>9.1f} "
            f"{events / windows / n_lps:>12.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
