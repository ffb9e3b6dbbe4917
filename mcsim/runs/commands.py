# SPDX-License-Identifier: GPL-2.0-only
"""The subcommands of ``mcsim`` that run one kind of run and print its rows: the collectives (allgather,
broadcast, reduce-scatter, allreduce, alltoall, reduce: the checks that refuse an option the combination
would not read, the runs, and nccl-tests' columns; their options: :mod:`mcsim.runs.collective_options`) and
``stream`` (one link, its closed form checked)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcsim.bounds import bound_b
from mcsim.config.collectives import (
    INNET_ALGORITHMS,
    MCAST_ALGORITHMS,
    NVLS_HIERARCHICAL,
    RC_PIPELINES,
    check_algorithm,
)
from mcsim.config.congestion import dcqcn_preset
from mcsim.config.dpa import RECEIVE_PATHS, DpaConfig
from mcsim.config.fabric import DEFAULT_HEADER_BYTES, DEFAULT_MTU_BYTES
from mcsim.config.faults_file import load_faults
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.config.rdma import GPU_RECEIVE, PcapConfig
from mcsim.errors import Interrupted, McsimError, require_positive
from mcsim.native import run_control
from mcsim.result import Result
from mcsim.runs.collective_options import (
    COLLECTIVE_COMMANDS,
    MCAST_ONLY,
    RC_DEFAULTS,
    RDMA_DEFAULTS,
    REDUCING_COMMANDS,
    RETRY_FOREVER,
    ROOTED_COMMANDS,
    ROOTS_COMMANDS,
    UD_ALGORITHMS,
    collective_options,
)
from mcsim.runs.scenario import Scenario, artifact_protocol, scenario_of
from mcsim.runs.stream import MAX_HEADER_B, MAX_MTU_B, check_packet, expected_finish_ps, stream
from mcsim.runs.trace_outputs import event_rows, pcaps_of, queue_rows, queue_trace_of
from mcsim.topology.physics import DEFAULT_DELAY_PS, Link, parse_encoding
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, PS_PER_S, format_time, parse_rate, parse_size, parse_time
from mcsim.util.options import DefaultsHelp, Given, given, parse_hosts, typed, typed_option
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
    if args.algorithm in NVLS_HIERARCHICAL and args.roots is not None:
        raise McsimError(
            f"{typed_option(args, 'roots')}={args.roots} sets the multicast's roots; {args.algorithm}'s NVLS multicast "
            "has every GPU of a node a root at once"
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
        common["rdma"] = dataclasses.replace(
            common.get("rdma", RDMA_DEFAULTS), congestion=dcqcn_preset(args.dcqcn_preset)
        )
    if args.lossy_datagrams:
        common["rdma"] = dataclasses.replace(common.get("rdma", RDMA_DEFAULTS), ud_lossy=True)
    # the options given only (None: the Scenario's default)
    given = {
        "timeout_scale": args.timeout_scale,
        "roots": args.roots,
        "root": args.root,
        "reduce_ps_per_byte": args.reduce_ps_per_byte,
        "nccl_protocol": args.nccl_protocol,
        "ring_chunk": args.ring_chunk,
        "endpoints": args.endpoints,
        "overlap": args.overlap,
        "overlap_algorithm": args.overlap_algorithm,
        "staging": (False if args.processor == "gpu" else None)  # a GPU receives in place
        if args.receive_path is None
        else RECEIVE_PATHS[args.receive_path],
        "processor": _dpa(args.threads)
        if args.processor == "dpa"
        else {"host": None, "gpu": GPU_RECEIVE}[args.processor],
    }
    common |= {k: v for k, v in given.items() if v is not None}
    if args.lossy_hosts is not None:
        if args.flow_control != "pfc":
            raise McsimError(
                f"--lossy-hosts={args.lossy_hosts!r} puts hosts in PFC's lossy class; give --flow-control pfc"
            )
        hosts = scenario_of(**common).setup.layout().hosts
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


def add_parsers(sub: Any) -> None:
    """Add one subcommand per collective to the mcsim command's subparsers."""
    for name in COLLECTIVE_COMMANDS:
        p = sub.add_parser(
            name,
            help=f"simulate one {name} per size; print size, time, bandwidths (exit 1 if a rank missed data "
            "or, with --verify, got a wrong byte)",
            formatter_class=DefaultsHelp,
        )
        collective_options(p, name)
        p.set_defaults(func=cmd_collective, parser=p, simulates=True)


STREAM_TABLE = Table(
    [
        Column("size_B", width=12),
        Column("packets", width=9),
        Column("time_us", ".3f", 12),
        Column("goodput_Gbps", ".3f", 13),
        Column("closed_form_us", ".3f", 15),
    ]
)


def cmd_stream(args: argparse.Namespace) -> int:
    """Stream ``args.size`` bytes over one link; exit 1 if the time differs from the closed form."""
    data_bits, line_bits = parse_encoding(args.encoding)
    rate_option = typed_option(args, "signalling_rate")
    link = Link(
        rate_bps=parse_rate(args.signalling_rate, what=rate_option),
        encoding_data_bits=data_bits,
        encoding_line_bits=line_bits,
        delay_ps=parse_time(args.delay, what=typed_option(args, "delay")),
    )
    header_option, mtu_option = typed_option(args, "header_bytes"), typed_option(args, "mtu")
    header_b = parse_size(args.header_bytes, what=header_option)
    size_b = parse_size(args.size, what=typed_option(args, "size"))
    mtu_b = parse_size(args.mtu, what=mtu_option)
    require_positive("stream", size_b=size_b, mtu_b=mtu_b)
    check_packet(mtu_b, header_b, mtu=f"{mtu_option}={args.mtu!r}", header=f"{header_option}={args.header_bytes!r}")
    bound_ps = expected_finish_ps(link, size_b, mtu_b, header_b)
    if bound_ps > MAX_SIMULATED_PS:  # the simulated clock would wrap: refuse before the run
        raise McsimError(
            f"stream: {rate_option}={args.signalling_rate!r} takes {format_time(bound_ps)} for --size={args.size!r} "
            f"(--delay={args.delay!r}), past {CLOCK_LIMIT}; give a higher rate, a smaller size or a shorter delay"
        )
    with run_control.against_bound(bound_ps):  # the progress line: the share of the closed form done, an ETA
        result = stream(link, size_b, mtu_b=mtu_b, header_b=header_b)
    print(STREAM_TABLE.header())
    row = {
        "size_B": result.size_b,
        "packets": result.packets,
        "time_us": result.finish_ps / 1e6,
        "goodput_Gbps": result.goodput_bps() / 1e9,
        "closed_form_us": bound_ps / 1e6,
    }
    print(STREAM_TABLE.row(row))
    ok = result.received_b == size_b and result.finish_ps == bound_ps
    return 0 if ok else 1


def add_stream_parser(sub: Any) -> None:
    """Add ``mcsim stream`` (one link, its closed form checked) to the mcsim command's subparsers."""
    p = sub.add_parser(
        "stream",
        help="stream bytes over one link; exit 1 if the time differs from the closed form",
        formatter_class=DefaultsHelp,
    )
    p.add_argument(
        "--signalling-rate",
        "--rate",
        action=Given,
        default="56.25Gbps",
        metavar="RATE",
        help="the link's signalling rate, before the line code (Link.rate_bps; --rate: the same)",
    )
    p.add_argument("--encoding", action=Given, default="64b/66b", help="line encoding, data bits/line bits")
    p.add_argument(
        "--header-bytes",
        action=Given,
        default=str(DEFAULT_HEADER_BYTES),
        help=f"wire bytes per packet beyond the payload and the 16-byte fabric header (IB RC: 10; at most "
        f"{MAX_HEADER_B}, an RDMA packet's most in either wire format)",
    )
    p.add_argument("--delay", action=Given, default=format_time(DEFAULT_DELAY_PS), help="propagation delay")
    p.add_argument("--size", action=Given, default="64MiB", help="payload bytes to send")
    p.add_argument(
        "--mtu",
        action=Given,
        default=f"{DEFAULT_MTU_BYTES}",
        help=f"payload bytes per packet, at most {MAX_MTU_B} (InfiniBand's largest MTU)",
    )
    p.set_defaults(func=cmd_stream, parser=p, simulates=True)
