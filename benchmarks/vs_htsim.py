# SPDX-License-Identifier: GPL-2.0-only
"""mcsim beside htsim (Broadcom csg-htsim): the same two workloads on a k-ary fat tree, for a
side-by-side of simulator speed (data packet-hops per wall second). The recipe, with figures
measured here, is benchmarks/vs_htsim.md; htsim cannot be installed by CI, so it is run by hand.

Workloads, on hosts 0..H-1 (htsim and mcsim both number a fat tree's hosts pod by pod, ToR by
ToR, so host h sits at the same place on both):

  ring-flows      every host h sends --bytes to host (h+1) mod H, all at time 0.
  ring-allgather  a ring Allgather of P = H ranks, shard N = --bytes: P-1 steps; in step s every
                  rank sends N bytes to its successor, and a rank's step s+1 send starts when its
                  step-s transfer has completed.

Subcommands:

  write WORKLOAD  write htsim's connection matrix (.cm) for it. ring-allgather chains each
                  block's P-1 hops with one-shot triggers: hop s+1 of block b starts on hop s's
                  send_done_trigger, which htsim's RoCE source fires when hop s's last ACK arrives
                  (htsim_roce ignores recv_done_trigger). P(P-1) connections, P(P-2) triggers.
  count           the data packet-hops of a .cm on a k-ary fat tree (closed form: per connection
                  ceil(bytes / MTU) packets, each crossing 2 links within a ToR, 4 within a pod, 6
                  between pods; htsim routes only minimal up-down paths, so every ECMP choice has
                  that length) and, with --htsim-log, the flows htsim finished and its
                  retransmissions: the closed form is the run's count only if every flow finished
                  and none was sent again (exit 1 otherwise). htsim_roce has no hop counter.
  mcsim WORKLOAD  run it in mcsim on fat-tree-k<k> at 100 Gbit/s with 4096-byte packets: raw
                  lossless fabric flows (ring-flows) or mcsim's RC ring Allgather with one chunk per
                  shard (ring-allgather); time Simulator::Run() alone, and print the data
                  packet-hops (the same closed form, checked against mcsim's own link counters).

Each prints one JSON line. Bad input is one line on stderr and exit status 2.

Run:
  python benchmarks/vs_htsim.py write ring-allgather --hosts 128 --bytes 64KiB --out ring_ag.cm
  python benchmarks/vs_htsim.py count --cm ring_ag.cm --htsim-log ring_ag.out --k 8 --wall-seconds 3.8
  python benchmarks/vs_htsim.py mcsim ring-allgather --k 8 --bytes 64KiB
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from mcsim.errors import McsimError
from mcsim.units import parse_size
from mcsim.util.output import write_atomic

WORKLOADS = ("ring-flows", "ring-allgather")
MTU_B = 4096
MAX_FLOW_B = 2**31 - 1  # htsim reads a connection's size with stoi into an int


def fat_tree_links(src: int, dst: int, k: int) -> int:
    """Links on every minimal path from host src to host dst of a 3-tier k-ary fat tree."""
    if src // (k // 2) == dst // (k // 2):
        return 2  # host - ToR - host
    if src // (k * k // 4) == dst // (k * k // 4):
        return 4  # host - ToR - Agg - ToR - host
    return 6  # host - ToR - Agg - Core - Agg - ToR - host


def data_packet_hops(conns: list[tuple[int, int, int]], k: int) -> int:
    """Closed form: every (src, dst, bytes) connection sends ceil(bytes / MTU) packets over its path."""
    return sum(-(-size // MTU_B) * fat_tree_links(src, dst, k) for src, dst, size in conns)


def workload_connections(workload: str, hosts: int, size_b: int) -> list[tuple[int, int, int]]:
    """(src, dst, bytes) of every transfer of a workload."""
    if workload == "ring-flows":
        return [(h, (h + 1) % hosts, size_b) for h in range(hosts)]
    return [((b + s) % hosts, (b + s + 1) % hosts, size_b) for b in range(hosts) for s in range(hosts - 1)]


def cm_lines(workload: str, hosts: int, size_b: int) -> tuple[list[str], list[str]]:
    """htsim's connection and trigger lines of a workload. ring-allgather: connection n is hop
    n mod (P-1) of block n // (P-1); every hop but a block's first waits for the trigger the hop
    before it fires when it is done (ids 1.. without gaps)."""
    steps = hosts - 1
    conns, triggers = [], []
    for n, (src, dst, size) in enumerate(workload_connections(workload, hosts, size_b)):
        block, step = divmod(n, steps)
        chained = workload == "ring-allgather"
        line = f"{src}->{dst} id {n + 1}"
        line += f" trigger {block * (steps - 1) + step}" if chained and step > 0 else " start 0"
        line += f" size {size}"
        if chained and step + 1 < steps:
            fires = block * (steps - 1) + step + 1
            line += f" send_done_trigger {fires}"
            triggers.append(f"trigger id {fires} oneshot")
        conns.append(line)
    return conns, triggers


def read_cm(path: str) -> tuple[int, list[tuple[int, int, int]]]:
    """(Nodes, [(src, dst, bytes)]) of an htsim connection matrix."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise McsimError(f"--cm={path!r}: {getattr(e, 'strerror', None) or e}") from None
    nodes, conns = None, []
    for number, line in enumerate(lines, 1):
        tokens = line.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        if tokens[0] == "Nodes" and len(tokens) == 2 and tokens[1].isdigit():
            nodes = int(tokens[1])
        elif "->" in tokens[0]:
            src, _, dst = tokens[0].partition("->")
            size = tokens[tokens.index("size") + 1] if "size" in tokens[1:-1] else ""
            if not (src.isdigit() and dst.isdigit() and size.isdigit()):
                raise McsimError(f"--cm={path!r} line {number}: a connection is 'SRC->DST ... size BYTES'")
            conns.append((int(src), int(dst), int(size)))
    if nodes is None:
        raise McsimError(f"--cm={path!r} has no 'Nodes N' line: not an htsim connection matrix")
    return nodes, conns


def read_htsim_log(path: str) -> tuple[int, float, int | None]:
    """(flows finished, last finish in us, retransmitted packets or None) from htsim_roce's output:
    lines "Flow NAME ID finished at T_US ..." and "New: N Rtx: R"."""
    finished, last_us, rtx = 0, 0.0, None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if m := re.match(r"Flow \S+ \d+ finished at ([0-9.eE+-]+) ", line):
                    finished, last_us = finished + 1, max(last_us, float(m[1]))
                elif m := re.match(r"New: \d+ Rtx: (\d+)", line):
                    rtx = int(m[1])
    except OSError as e:
        raise McsimError(f"--htsim-log={path!r}: {e.strerror}") from None
    return finished, last_us, rtx


def size_arg(text: str) -> int:
    size = parse_size(text, what="--bytes")
    if not 1 <= size <= MAX_FLOW_B:
        raise McsimError(f"--bytes={text!r} must be 1 B..{MAX_FLOW_B} B (htsim keeps a flow's size in an int)")
    return size


def write(args: argparse.Namespace) -> dict:
    if args.hosts < 2:
        raise McsimError(f"--hosts={args.hosts} must be >= 2")
    size = size_arg(args.bytes)
    conns, triggers = cm_lines(args.workload, args.hosts, size)
    head = [f"# vs_htsim.py write {args.workload} --hosts {args.hosts} --bytes {size}"]
    head += [f"Nodes {args.hosts}", f"Connections {len(conns)}", f"Triggers {len(triggers)}"]
    write_atomic(args.out, "\n".join(head + conns + triggers) + "\n")
    return {"out": args.out, "connections": len(conns), "triggers": len(triggers), "nodes": args.hosts}


def count(args: argparse.Namespace) -> tuple[dict, bool]:
    nodes, conns = read_cm(args.cm)
    if nodes != args.k**3 // 4:
        raise McsimError(f"--cm={args.cm!r} has Nodes {nodes}; a k={args.k} fat tree has {args.k**3 // 4} hosts")
    if any(not (s < nodes and d < nodes) or s == d for s, d, _ in conns):
        raise McsimError(f"--cm={args.cm!r}: a connection is not between two hosts 0..{nodes - 1}")
    out = {"connections": len(conns), "data_packet_hops": data_packet_hops(conns, args.k)}
    ok = True
    if args.htsim_log is not None:
        finished, last_us, rtx = read_htsim_log(args.htsim_log)
        out |= {"finished": finished, "finish_us": last_us, "rtx_packets": rtx}
        ok = finished == len(conns) and rtx == 0
    if args.wall_seconds is not None:
        out |= {"wall_s": args.wall_seconds, "Mhops_per_s": round(out["data_packet_hops"] / args.wall_seconds / 1e6, 3)}
    return out, ok


def run_mcsim(args: argparse.Namespace) -> dict:
    """The workload in mcsim on fat-tree-k<k> at 100 Gbit/s; Simulator::Run() timed alone."""
    from mcsim import topology
    from mcsim.native import run_control, runtime
    from mcsim.topology.physics import preset
    from mcsim.units import parse_rate

    size = size_arg(args.bytes)
    name = f"fat-tree-k{args.k}"
    g = topology.with_link(topology.resolve(name), preset(parse_rate("100Gbps")))
    hosts = topology.host_count(g)
    data = data_packet_hops(workload_connections(args.workload, hosts, size), args.k)
    runtime.load()
    if args.workload == "ring-flows":
        from mcsim.config.fabric import FabricConfig, Flow
        from mcsim.native.fabric import build
        from mcsim.native.simulation import Simulation
        from mcsim.routing.layout import layout_of

        with Simulation() as sim:
            fab = sim.own_fabric(build(layout_of(g), config=FabricConfig()))
            fab.add_flows([Flow(src=h, dst=(h + 1) % hosts, size_b=size, mtu_b=MTU_B) for h in range(hosts)])
            sim.run()
            r = fab.collect()
        # raw flows carry no ACK: every packet on a link is data
        counted, finish_ps = r.link_traversals(), r.finish_ps
        complete = counted == data and int(r.hosts["rx_packets"].sum()) == hosts * -(-size // MTU_B)
    else:
        from mcsim.config.rdma import RdmaConfig
        from mcsim.runs.scenario import Scenario

        res = Scenario(
            topology=name,
            rate="100Gbps",
            algorithm="ring",
            bytes_per_rank=size,
            ring_chunk=size,
            rdma=RdmaConfig(mtu_b=MTU_B),
        ).run()
        # RC ACKs: one per message, each back over its message's path to the rank before
        acks = res.nic["tx_packets"].astype(int) - (hosts - 1) * -(-size // MTU_B)
        links = [fat_tree_links(h, (h + 1) % hosts, args.k) for h in range(hosts)]
        expected = data + sum(int(acks[h]) * links[h - 1] for h in range(hosts))
        counted, finish_ps = res.fabric.link_traversals(), res.time_ps
        complete = res.complete and counted == expected
    run_s = run_control.last_run().wall_s  # Simulator::Run() alone
    return {
        "topology": name,
        "hosts": hosts,
        "bytes": size,
        "data_packet_hops": data,
        "link_traversals": counted,
        "counters_agree": bool(complete),
        "run_s": round(run_s, 3),
        "Mhops_per_s": round(data / run_s / 1e6, 3),
        "finish_us": finish_ps / 1e6,
    }


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # one line, exit 2
        raise McsimError(message)


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="vs_htsim.py", description="mcsim beside htsim: the same workloads on a fat tree")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="write htsim's connection matrix (.cm) of a workload")
    w.add_argument("workload", choices=WORKLOADS)
    w.add_argument("--hosts", type=int, default=128, help="H: htsim's -nodes (default 128, a k=8 fat tree)")
    w.add_argument("--bytes", required=True, help="bytes per flow (ring-flows) or per shard (ring-allgather)")
    w.add_argument("--out", required=True, help="the .cm file to write")
    c = sub.add_parser("count", help="data packet-hops of a .cm on a k-ary fat tree, checked against htsim's log")
    c.add_argument("--cm", required=True, help="the connection matrix htsim ran")
    c.add_argument("--htsim-log", help="htsim_roce's standard output of the run")
    c.add_argument("--k", type=int, default=8, help="fat-tree radix (default 8: 128 hosts)")
    c.add_argument("--wall-seconds", type=float, help="the run's wall time, for packet-hops per second")
    m = sub.add_parser("mcsim", help="run a workload in mcsim on fat-tree-k<k> at 100 Gbit/s")
    m.add_argument("workload", choices=WORKLOADS)
    m.add_argument("--k", type=int, default=8, help="fat-tree radix (default 8: 128 hosts)")
    m.add_argument("--bytes", required=True, help="bytes per flow (ring-flows) or per shard (ring-allgather)")
    for p in (w, c, m):
        p.error = parser.error  # type: ignore[method-assign]
    try:
        args = parser.parse_args(argv)
        if getattr(args, "k", 8) < 2 or getattr(args, "k", 8) % 2:
            raise McsimError(f"--k={args.k} must be even and >= 2")
        ok = True
        if args.command == "write":
            out = write(args)
        elif args.command == "count":
            if args.wall_seconds is not None and not args.wall_seconds > 0:
                raise McsimError(f"--wall-seconds={args.wall_seconds} must be > 0")
            out, ok = count(args)
        else:
            out = run_mcsim(args)
    except McsimError as e:
        print(f"vs_htsim.py: error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    if not ok:
        print(
            "vs_htsim.py: htsim did not finish every flow, or sent packets again: the count is not its run's",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
