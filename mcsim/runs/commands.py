# SPDX-License-Identifier: GPL-2.0-only
"""The collective subcommands of ``mcsim`` (allgather, broadcast, reduce-scatter, allreduce, alltoall,
reduce): their options, named as the Scenario fields, the checks that refuse an option the
combination would not read, the runs, and nccl-tests' columns."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mcsim.bounds import bound_b
from mcsim.config.collectives import (
    EVERY_ALGORITHM,
    INNET_ALGORITHMS,
    MCAST_ALGORITHMS,
    RC_PIPELINES,
    check_algorithm,
)
from mcsim.config.dcqcn import DCQCN_PRESETS, dcqcn_preset
from mcsim.config.dpa import RECEIVE_PATHS, DpaConfig
from mcsim.config.fabric import FLOW_CONTROLS, FORWARDINGS, FabricConfig
from mcsim.config.faults_file import load_faults
from mcsim.config.queue_trace import DEFAULT_QUEUE_INTERVAL_PS, QueueTraceConfig
from mcsim.config.rdma import CONGESTION_CONTROLS, WIRE_FORMATS, PcapConfig, RdmaConfig
from mcsim.errors import Interrupted, McsimError
from mcsim.native import run_control
from mcsim.result import Result
from mcsim.runs.scenario import Scenario, artifact_protocol, scenario_of
from mcsim.runs.trace_outputs import event_rows, pcaps_of, queue_rows, queue_trace_of
from mcsim.units import PS_PER_S, format_size, format_time
from mcsim.util.options import DefaultsHelp, Given, GivenFlag, given, parse_hosts, typed, typed_option
from mcsim.util.output import SUFFIXES, Column, Table, check_distinct, check_writable, rows_text, write_rows

RESULT_TABLE = Table(  # nccl-tests' columns first (its size and count: Result.summary), then mcsim's
    [
        Column("size_B", width=12),
        Column("count", width=12),
        Column("time_us", ".2f", 12),
        Column("algbw_GBps", ".3f", 12),
        Column("busbw_GBps", ".3f", 12),
        Column("bound_us", ".2f", 12),
        Column("bytes_per_rank_B", width=16),
        Column("injected_B_per_rank", ".0f", 20),
        Column("repair_reads", width=12),
        Column("collective", width=14, left=True),
        Column("algorithm", width=18, left=True),
    ]
)


def with_concurrent(results: Sequence[Result]) -> list[Result]:
    """Every result, each followed by the collective that ran at the same time (Scenario.overlap)."""
    return [x for r in results for x in (r, r.concurrent) if x is not None]


def print_results(results: Sequence[Result], fmt: str) -> None:
    """Fixed columns (as OSU and nccl-tests), or CSV, or JSON lines, one row per result and one per
    overlapped collective (its collective and algorithm name it); an incomplete run has NaN time and
    bandwidths (CSV, JSON) or an INCOMPLETE line (table)."""
    shown = with_concurrent(results)
    rows = [r.summary() for r in shown]
    if fmt != "table":
        print(rows_text(rows, "jsonl" if fmt == "json" else fmt), end="")
        return
    print(RESULT_TABLE.header().rstrip())
    overlapped = {id(r.concurrent) for r in results}
    for r, row in zip(shown, rows, strict=True):
        if r.complete:
            print(RESULT_TABLE.row(row).rstrip())
        else:  # an overlapped collective's line names it
            name = f"{r.collective} {r.algorithm} " if id(r) in overlapped else ""
            print(RESULT_TABLE.note(row["size_B"], name + r.incomplete_line()))


SCENARIO_DEFAULTS = {name: p.default for name, p in inspect.signature(Scenario).parameters.items()}
RDMA_DEFAULTS = RdmaConfig()
RC_DEFAULTS = RDMA_DEFAULTS.rc
RETRY_FOREVER = "forever"


def _sizes(args: argparse.Namespace) -> list[str]:
    text, option = args.bytes_per_rank, typed_option(args, "bytes_per_rank")
    sizes = [s.strip() for s in text.split(",")]
    if not all(sizes):
        raise McsimError(
            f"{option}={text!r} has an empty size; give sizes separated by commas, e.g. {option} 4KiB,1MiB"
        )
    return sizes


RETRY_CNTS: dict[str, int | None] = {str(n): n for n in range(8)} | {RETRY_FOREVER: None}


def _retry_cnt(text: str) -> int | None:
    """--retry-cnt: 0..7, or "forever" (RcConfig.retry_cnt=None)."""
    if text not in RETRY_CNTS:
        raise McsimError(f"--retry-cnt={text!r} must be 0..7 (the InfiniBand retry_cnt) or {RETRY_FOREVER!r}")
    return RETRY_CNTS[text]


# options that only the multicast protocol reads: refused with another algorithm, where they would do nothing
MCAST_ONLY = ("roots", "timeout_scale", "artifact_protocol", "endpoints")
# their datagrams land in staging buffers or in place (--receive-path)
UD_ALGORITHMS = tuple(dict.fromkeys((*MCAST_ALGORITHMS, *INNET_ALGORITHMS)))
MCAST_HELP = ", ".join(MCAST_ALGORITHMS)  # the algorithms the multicast protocol's options are for
ROOTS_COMMANDS = ("allgather", "allreduce")  # --roots: the multicast Allgather's, alone or a second phase
PROCESSORS = ("host", "dpa")  # --processor: a host CPU thread (HostCpuConfig) or the DPA (DpaConfig)
# subcommand -> (the Scenario's collective, its default algorithm)
COLLECTIVE_COMMANDS = {
    "allgather": ("allgather", "mcast"),
    "broadcast": ("broadcast", "mcast"),
    "reduce-scatter": ("reduce_scatter", "ring"),
    "allreduce": ("allreduce", "ring"),
    "alltoall": ("alltoall", "pairwise"),
    "reduce": ("reduce", "binomial"),
}
ROOTED_COMMANDS = ("broadcast", "reduce")  # --root
REDUCING_COMMANDS = ("reduce-scatter", "allreduce", "reduce")  # --reduce-ps-per-byte, where the hosts sum


def _refuse_unread(args: argparse.Namespace) -> None:
    """Options that would do nothing in this combination are refused, one line each."""
    if args.command not in ROOTS_COMMANDS and args.roots is not None:
        raise McsimError(
            f"{args.command}: --roots is for allgather and allreduce (the multicast Allgather: K roots at a time)"
        )
    if args.command not in ROOTED_COMMANDS and args.root is not None:
        raise McsimError(f"{args.command}: --root is for broadcast and reduce (the rank that sends or gets the buffer)")
    if args.command not in REDUCING_COMMANDS and args.reduce_ps_per_byte is not None:
        raise McsimError(
            f"{args.command}: --reduce-ps-per-byte is for {', '.join(REDUCING_COMMANDS)} (the hosts' sums)"
        )
    check_algorithm(COLLECTIVE_COMMANDS[args.command][0], args.algorithm)  # an unknown algorithm first
    _refuse_unread_receive(args)
    algorithm = typed_option(args, "algorithm")
    if args.algorithm in INNET_ALGORITHMS and args.reduce_ps_per_byte is not None:
        raise McsimError(f"--reduce-ps-per-byte is the hosts' reduction's; not for {algorithm} {args.algorithm}")
    if args.algorithm not in RC_PIPELINES and args.ring_chunk is not None:
        raise McsimError(
            f"{typed_option(args, 'ring_chunk')}={args.ring_chunk!r} sizes the RDMA WRITEs of the RC algorithms; "
            f"not for {algorithm} {args.algorithm}, which sends datagrams of one MTU"
        )
    if args.algorithm in MCAST_ALGORITHMS:
        return
    for dest in MCAST_ONLY:
        for option, value in given(args).get(dest, ()):
            algorithm = typed_option(args, "algorithm")
            raise McsimError(
                f"{typed(option, value)} is the multicast protocol's; not for {algorithm} {args.algorithm}"
            )


def _refuse_unread_receive(args: argparse.Namespace) -> None:
    """The receive side's and the overlap's options, where they would do nothing."""
    if args.threads is not None and args.processor != "dpa":
        raise McsimError(f"{typed('--threads', args.threads)} is the DPA's; give --processor dpa")
    if args.receive_path is not None and args.algorithm not in UD_ALGORITHMS:
        udp = ", ".join(UD_ALGORITHMS)
        raise McsimError(f"--receive-path is for datagrams ({udp}); {args.algorithm} receives RDMA WRITEs in place")
    if args.overlap is not None and args.command != "allgather":
        raise McsimError(f"{args.command}: --overlap is for allgather (FSDP's Allgather || Reduce-Scatter)")
    if args.overlap_algorithm is not None and args.overlap is None:
        raise McsimError("--overlap-algorithm goes with --overlap reduce_scatter")
    if args.lossy_datagrams and args.flow_control != "pfc":
        raise McsimError("--lossy-datagrams puts datagrams in PFC's lossy class; give --flow-control pfc")
    if args.lossy_datagrams and args.algorithm not in MCAST_ALGORITHMS:
        mcast = ", ".join(MCAST_ALGORITHMS)
        raise McsimError(
            f"--lossy-datagrams is for the multicast's datagrams ({mcast}); {args.algorithm} multicasts none "
            "(the in-network reductions' contributions stay lossless: nothing repairs a lost one)"
        )


def _dpa(threads: int | None) -> DpaConfig:
    """--processor dpa: the DPA with --threads threads (DpaConfig checks them: 0 is no thread), else its default."""
    return DpaConfig() if threads is None else DpaConfig(threads=threads)


def _collective_scenarios(args: argparse.Namespace) -> list[Scenario]:
    """One Scenario per --bytes-per-rank size, every option (and --out, --faults) checked before anything runs."""
    _refuse_unread(args)
    outputs = (
        ("--out", args.out),
        ("--events", args.events),
        ("--queue-trace", args.queue_trace),
        ("--pcap", args.pcap),
    )
    check_distinct(args.command, outputs, inputs=(("--faults", args.faults), ("--topology", args.topology)))
    for option, path in (("--out", args.out), ("--events", args.events)):
        if path is not None:
            if Path(path).suffix not in SUFFIXES:
                raise McsimError(f"{option}={path!r} must end in {', '.join(SUFFIXES)} (the file's format)")
            check_writable(path, option)
    common: dict[str, Any] = {
        "topology": args.topology,
        "rate": args.rate,
        "collective": COLLECTIVE_COMMANDS[args.command][0],
        "algorithm": args.algorithm,
        "ranks": args.ranks,
        "seed": args.seed,
        "verify": args.verify,
        "loss": args.loss,
        "forwarding": args.forwarding,
        "flow_control": args.flow_control,
        "ecn": args.ecn,
        "congestion_control": args.congestion_control,
        "wire_format": args.wire_format,
        "mtu": args.mtu,
        "faults": load_faults(args.faults) if args.faults is not None else None,
        "rc": dataclasses.replace(
            RC_DEFAULTS, retry_cnt=_retry_cnt(args.retry_cnt), ack_timeout_exp=args.ack_timeout_exp
        ),
    }
    if args.artifact_protocol:  # its timeout rule is --timeout-scale's default, 5
        common |= {k: v for k, v in artifact_protocol().items() if k != "timeout_scale"}
    if args.dcqcn_preset is not None:
        if args.congestion_control != "dcqcn":
            raise McsimError(
                f"--dcqcn-preset={args.dcqcn_preset!r} sets DCQCN's parameters; give --congestion-control dcqcn"
            )
        common["rdma"] = dataclasses.replace(common.get("rdma", RDMA_DEFAULTS), **dcqcn_preset(args.dcqcn_preset))
    if args.lossy_datagrams:
        common["rdma"] = dataclasses.replace(common.get("rdma", RDMA_DEFAULTS), ud_lossy=True)
    # the options given only (None: the Scenario's default)
    given = {
        "timeout_scale": args.timeout_scale,
        "roots": args.roots,
        "root": args.root,
        "reduce_ps_per_byte": args.reduce_ps_per_byte,
        "ring_chunk": args.ring_chunk,
        "endpoints": args.endpoints,
        "overlap": args.overlap,
        "overlap_algorithm": args.overlap_algorithm,
        "staging": None if args.receive_path is None else RECEIVE_PATHS[args.receive_path],
        "processor": None if args.processor == "host" else _dpa(args.threads),
    }
    common |= {k: v for k, v in given.items() if v is not None}
    if args.lossy_hosts is not None:
        if args.flow_control != "pfc":
            raise McsimError(
                f"--lossy-hosts={args.lossy_hosts!r} puts hosts in PFC's lossy class; give --flow-control pfc"
            )
        hosts = scenario_of(**common)._layout().hosts
        common["lossy_hosts"] = parse_hosts(args.lossy_hosts, hosts, "--lossy-hosts")
    scenarios = [scenario_of(bytes_per_rank=size, **common) for size in _sizes(args)]
    for sc in scenarios:
        sc.check_resources()
    return scenarios


def _report(args: argparse.Namespace, scenarios: Sequence[Scenario], results: Sequence[Result]) -> None:
    """The rows of the finished runs (stdout and --out), then on stderr: incomplete runs (when the
    table did not say so), verify mode's verdict per run, and a note where RC timeouts may have
    held a run up."""
    if not results:
        return
    # the files first: a stdout that cannot take the rows (full, closed, another encoding) loses none of them
    if args.out is not None:
        write_rows(args.out, [r.summary() for r in with_concurrent(results)])
    if args.events is not None:
        write_rows(args.events, [row for r in results for row in event_rows(r)])
    if args.queue_trace is not None:
        write_rows(args.queue_trace, [row for r in results for row in queue_rows(r)])
    print_results(results, args.format)
    for sc, r in zip(scenarios, results, strict=False):
        size = f"{r.bytes_per_rank_b} B per rank"
        if args.format != "table" and not r.complete:
            print(f"mcsim: {size}: {r.incomplete_line()}", file=sys.stderr)
        if args.verify:
            print(f"mcsim: verify: {size}: {r.verify_text()}", file=sys.stderr)
        note = r.timeout_note(sc.rdma.rc)
        if note is not None:
            print(f"mcsim: note: {size}: {note}", file=sys.stderr)


def _run_one(sc: Scenario, events: bool, pcap: PcapConfig | None, queue_trace: QueueTraceConfig | None) -> Result:
    """One size's run, with its protocol events, packet trace and queue trace if asked; a line per trace on
    stderr."""
    if not events and pcap is None and queue_trace is None:
        return sc.run()
    r = sc.run(events=events, pcap=pcap, queue_trace=queue_trace)
    for path, written, over in r.pcap_files or ():
        print(f"mcsim: pcap: {path}: {written} frames" + (f" ({over} over its caps)" if over else ""), file=sys.stderr)
    if (trace := r.fabric.queue_trace) is not None:
        left = f", {trace.left_out} more per port not kept" if trace.left_out else ""
        print(
            f"mcsim: queue trace: {sc.bytes_per_rank}: {len(trace.ports)} ports x {trace.time_ps.size} samples, "
            f"every {format_time(trace.interval_ps)}{left}",
            file=sys.stderr,
        )
    return r


def bound_ps(sc: Scenario) -> float:
    """The run's bound in simulated ps, known before it runs (what its Result.bound_ps will be)."""
    return bound_b(sc.collective, sc.algorithm, sc.bytes_per_rank_b, sc.n_ranks) * 8 * PS_PER_S / sc.data_rate_bps


def start_line(args: argparse.Namespace, sc: Scenario) -> str:
    """``allgather mcast 4KiB on fat-tree-k4 (<= 560 packet-hops) ...``: the estimate left out where it
    is unknown (Scenario.estimate() counts no packet of the algorithm: 0)."""
    hops = sc.estimate()["packets"]
    estimate = f" (<= {hops:.3g} packet-hops)" if hops > 0 else ""
    return f"{args.command} {args.algorithm} {sc.bytes_per_rank} on {args.topology}{estimate} ..."


def cmd_collective(args: argparse.Namespace) -> int:
    scenarios = _collective_scenarios(args)
    pcaps = pcaps_of(args, scenarios)
    queue_trace = queue_trace_of(args, scenarios)
    results: list[Result] = []
    try:
        for sc in scenarios:
            print(f"mcsim: {start_line(args, sc)}", file=sys.stderr)
            with run_control.against_bound(bound_ps(sc)):  # the progress line's share done and its ETA
                results.append(_run_one(sc, args.events is not None, pcaps[len(results)], queue_trace))
    except KeyboardInterrupt as exc:  # keep the finished sizes: their rows, then the interrupted line
        _report(args, scenarios, results)
        written = f" and in {args.out}" if args.out is not None else ""
        kept = f"; {len(results)} of {len(scenarios)} sizes finished, their rows above{written}" if results else ""
        size = scenarios[len(results)].bytes_per_rank
        raise Interrupted(f"{str(exc) or 'interrupted'} (at {size} per rank{kept})") from None
    _report(args, scenarios, results)
    ok = all(r.complete and r.verified is not False for r in results)
    return 0 if ok else 1


def _collective_options(p: argparse.ArgumentParser, name: str) -> None:
    """The options of ``mcsim allgather`` and ``mcsim broadcast``, named as the Scenario fields.
    Each is a :class:`Given` (a field given twice is refused); an option that some combination
    does not read defaults to None (not given), its help naming the Scenario's default."""

    def add(*names: str, flag: bool = False, **kwargs: Any) -> None:
        p.add_argument(*names, action=GivenFlag if flag else Given, **kwargs)

    _workload_options(add, name)
    _fabric_options(add)
    _receive_options(add, name)
    _protocol_options(add)
    _output_options(add)


Add = Callable[..., None]  # adds one option to a parser


def _workload_options(add: Add, name: str) -> None:
    """What runs: the topology, the algorithm, the sizes, the ranks and roots."""
    d = SCENARIO_DEFAULTS
    add("--topology", default=d["topology"], help="a name from topologies/ or a file")
    collective, default = COLLECTIVE_COMMANDS[name]
    algorithms = " or ".join(sorted(a for c, a in EVERY_ALGORITHM if c == collective))
    add("--algorithm", "--algo", default=default, help=f"{algorithms} (--algo: the same)")
    add(
        "--bytes-per-rank",
        "--size",
        default=d["bytes_per_rank"],
        metavar="SIZE",
        help="bytes per rank; several: 4KiB,64KiB,1MiB (--size: the same)",
    )
    add("--rate", default=None, help="every link at this rate (56Gbps = FDR); default: the file's")
    add(
        "--ring-chunk",
        default=None,
        metavar="SIZE",
        help=f"{', '.join(RC_PIPELINES)}: bytes per RDMA WRITE, the pipelining unit (default: {d['ring_chunk']})",
    )
    add("--ranks", type=int, default=None, help="ranks on hosts 0..ranks-1; default: every host")
    hidden = argparse.SUPPRESS  # an option of another subcommand: refused with a hint
    roots = f"{MCAST_HELP}: roots multicasting at once (default: {d['roots']})"
    add("--roots", type=int, default=None, metavar="K", help=roots if name in ROOTS_COMMANDS else hidden)
    root = f"the root rank (default: {d['root']})"
    add("--root", type=int, default=None, metavar="R", help=root if name in ROOTED_COMMANDS else hidden)
    reduce = f"time the host takes to add one received byte (default: {d['reduce_ps_per_byte']}; 0: free)"
    reduces = name in REDUCING_COMMANDS
    add("--reduce-ps-per-byte", type=int, default=None, metavar="PS", help=reduce if reduces else hidden)


def _fabric_options(add: Add) -> None:
    """The packets and the fabric: MTU, loss, faults, forwarding."""
    add(
        "--mtu",
        default=format_size(RDMA_DEFAULTS.mtu_b),
        metavar="SIZE",
        help="payload bytes per packet (an InfiniBand MTU: 256B..4KiB)",
    )
    add(
        "--loss",
        type=float,
        default=FabricConfig().loss,
        metavar="P",
        help="probability that a packet is lost, on every link",
    )
    add("--faults", default=None, metavar="FILE.toml", help="per-link loss, chosen drops, links down")
    add(
        "--forwarding",
        choices=tuple(FORWARDINGS),
        default=FabricConfig().forwarding,
        help="switches send a packet on once its routing header (cut_through) or all of it is in",
    )
    add(
        "--flow-control",
        choices=tuple(FLOW_CONTROLS),
        default=FabricConfig().flow_control,
        help="lossless: InfiniBand credits; lossy: tail drop; pfc: Priority Flow Control (each ingress queue "
        "pauses its upstream port; see The fabric model)",
    )
    add(
        "--lossy-hosts",
        default=None,
        metavar="HOSTS",
        help="pfc: these hosts (0,3,5, 0-15 or all) send in PFC's lossy class: never paused, tail-dropped "
        "(FabricConfig.lossy_hosts; see The fabric model)",
    )
    add(
        "--lossy-datagrams",
        flag=True,
        help="pfc: the multicast's datagrams go in PFC's lossy class, its RC repair and the in-network "
        "contributions stay lossless (RdmaConfig.ud_lossy; see The fabric model)",
    )
    add(
        "--ecn",
        flag=True,
        help="ECN: the hosts send ECN-capable packets and every switch port marks CE with RED on its output "
        "queue (FabricConfig.ecn; see The fabric model)",
    )
    add(
        "--congestion-control",
        choices=tuple(CONGESTION_CONTROLS),
        default=RDMA_DEFAULTS.congestion_control,
        help="the NICs' congestion control: none, dcqcn (CNPs for the switches' ECN marks, a rate per RC QP; "
        "it turns --ecn on) or hpcc (a window and rate per RC QP from the switches' INT records)",
    )
    add(
        "--dcqcn-preset",
        choices=tuple(DCQCN_PRESETS),
        default=None,
        help="dcqcn: its parameters as the DCQCN paper sets them (RdmaConfig's defaults) or as NVIDIA's ConnectX "
        "firmware does (mcsim.config.dcqcn)",
    )
    add(
        "--wire-format",
        choices=tuple(WIRE_FORMATS),
        default=RDMA_DEFAULTS.wire_format,
        help="packets' headers and framing on the wire: native InfiniBand, or RoCEv2 (Ethernet, IPv4, UDP)",
    )


def _receive_options(add: Add, name: str) -> None:
    """Who processes the receive completions and where datagrams land; the overlapped Reduce-Scatter."""
    add("--processor", choices=PROCESSORS, default="host", help="receive completions on a host CPU thread or the DPA")
    add("--threads", type=int, default=None, metavar="N", help=f"dpa: threads in use (default: {DpaConfig().threads})")
    add(
        "--receive-path",
        choices=tuple(RECEIVE_PATHS),
        default=None,
        help=f"{', '.join(UD_ALGORITHMS)}: datagrams land in staging buffers and are copied, or in place "
        "(default: staging)",
    )
    add(
        "--endpoints",
        type=int,
        default=None,
        metavar="E",
        help=f"{MCAST_HELP}: UD QPs per rank, a DPA thread each (default: 1)",
    )
    hidden = argparse.SUPPRESS
    add(
        "--overlap",
        choices=("reduce_scatter",),
        default=None,
        help="a Reduce-Scatter on the same ranks at the same time (FSDP)" if name == "allgather" else hidden,
    )
    add(
        "--overlap-algorithm",
        choices=("ring", "innet"),
        default=None,
        help="the overlapped Reduce-Scatter's algorithm (default: ring)" if name == "allgather" else hidden,
    )


def _protocol_options(add: Add) -> None:
    """The protocols' timeouts and retries, and the artifact's preset."""
    d = SCENARIO_DEFAULTS
    add(
        "--timeout-scale",
        type=float,
        default=None,
        metavar="X",
        help=f"{MCAST_HELP}: data phase timeout, x receive bound (default: {d['timeout_scale']:g})",
    )
    add(
        "--retry-cnt",
        default=str(RC_DEFAULTS.retry_cnt),
        metavar="N",
        help=f"RC retries (timeouts, NAKs) before a QP fails: 0..7, or {RETRY_FOREVER}",
    )
    add(
        "--ack-timeout-exp",
        type=int,
        default=RC_DEFAULTS.ack_timeout_exp,
        metavar="N",
        help="RC local ACK timeout 4.096us x 2^N (14: 67.1ms); 0: none",
    )
    add(
        "--artifact-protocol",
        flag=True,
        help=f"{MCAST_HELP}: the SC'24 artifact's protocol options (2 barriers, stop-and-wait batches of 128, one "
        "repair READ, FIN wait, multicast loopback, a TX thread)",
    )


def _output_options(add: Add) -> None:
    """The seed, verify mode and what is written where."""
    add("--seed", type=int, default=FabricConfig().seed, help="random seed (ECMP hash, loss)")
    add("--verify", flag=True, help="carry real bytes and check every output byte")
    add("--format", choices=("table", "csv", "json"), default="table", help="stdout format (json: one object a line)")
    add(
        "--out",
        default=None,
        metavar="FILE",
        help="also write the result rows to FILE: .csv, .json (an array) or .jsonl (one object a line)",
    )
    add(
        "--pcap",
        default=None,
        metavar="DIR",
        help="write the frames that --pcap-hosts send and receive to DIR/host-<h>.pcap (with several sizes, "
        "DIR/<size>B/host-<h>.pcap): native InfiniBand in ERF records or RoCEv2 in Ethernet frames, as tshark "
        "and Wireshark read them; truncated after the headers, whole with --verify",
    )
    add(
        "--pcap-hosts",
        default=None,
        metavar="HOSTS",
        help="hosts to trace: 0,3,5, ranges 0-15 or all (default 0, none if only --pcap-ports is given)",
    )
    add(
        "--pcap-ports",
        default=None,
        metavar="PORTS",
        help="switch (or host) ports to trace, as NODE:PORT,...: a node's number or name, its port's number "
        "(`mcsim topo show` lists them); each to DIR/node-<n>-port-<p>.pcap, the frames it sends and receives",
    )
    add(
        "--queue-trace",
        default=None,
        metavar="FILE",
        help="sample the output queues of --queue-ports every --queue-interval and write the samples to FILE "
        "(.csv, .json or .jsonl): bytes_per_rank_B, node, port, time_ps, queue_b (wire bytes queued and waiting, "
        "as ECN marking reads them); sampling changes no result",
    )
    add(
        "--queue-ports",
        default=None,
        metavar="PORTS",
        help="ports whose output queues --queue-trace samples, as NODE:PORT,... (as --pcap-ports)",
    )
    add(
        "--queue-interval",
        default=None,
        metavar="TIME",
        help=f"time between two samples of --queue-trace (default: {format_time(DEFAULT_QUEUE_INTERVAL_PS)})",
    )
    add(
        "--events",
        default=None,
        metavar="FILE",
        help="record every rank's protocol events (tokens, FINs, NEED_FETCH/FETCH_OK, repair READs, finish) and "
        "write them to FILE: .csv, .json or .jsonl, one row per event",
    )


def add_parsers(sub: Any) -> None:
    """Add one subcommand per collective to the mcsim command's subparsers."""
    for name in COLLECTIVE_COMMANDS:
        p = sub.add_parser(
            name,
            help=f"simulate one {name} per size; print size, time, bandwidths (exit 1 if a rank missed data "
            "or, with --verify, got a wrong byte)",
            formatter_class=DefaultsHelp,
        )
        _collective_options(p, name)
        p.set_defaults(func=cmd_collective, parser=p, simulates=True)
