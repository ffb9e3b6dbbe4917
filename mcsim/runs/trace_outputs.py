# SPDX-License-Identifier: GPL-2.0-only
"""The collective commands' trace outputs: the packet traces (--pcap, --pcap-hosts, --pcap-ports) and the
queue trace (--queue-trace, --queue-ports, --queue-interval) each run takes, checked before anything runs,
and the rows --events and --queue-trace write."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcsim.config.queue_trace import DEFAULT_QUEUE_INTERVAL_PS, QueueTraceConfig
from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
from mcsim.result import Result
from mcsim.runs import packet_trace
from mcsim.runs.scenario import Scenario
from mcsim.units import parse_time
from mcsim.util.options import parse_hosts, parse_ports
from mcsim.util.output import SUFFIXES, check_writable


def event_rows(r: Result) -> list[dict[str, Any]]:
    """A run's protocol events as rows (--events): its size per rank, then each event's fields."""
    ev = r.events()
    names = ev.dtype.names or ()
    return [{"bytes_per_rank_B": r.bytes_per_rank_b, **{k: e[k].item() for k in names}} for e in ev]


def pcaps_of(args: argparse.Namespace, scenarios: Sequence[Scenario]) -> list[PcapConfig | None]:
    """Per size, its packet trace (--pcap, --pcap-hosts, --pcap-ports): a folder of its own when there are
    several sizes."""
    if args.pcap is None:
        for option in ("pcap_hosts", "pcap_ports"):
            if getattr(args, option) is not None:
                raise McsimError(f"--{option.replace('_', '-')} goes with --pcap DIR (the folder of the traces)")
        return [None] * len(scenarios)
    packet_trace.check_traceable(scenarios[0].rdma.congestion)
    layout = scenarios[0].setup.layout()
    ports = parse_ports(args.pcap_ports, layout.graph) if args.pcap_ports is not None else ()
    hosts = parse_hosts(args.pcap_hosts or "0", layout.hosts, "--pcap-hosts") if args.pcap_hosts or not ports else ()
    folder = Path(args.pcap)
    pcaps: list[PcapConfig | None] = [
        PcapConfig(
            folder=str(folder / f"{sc.bytes_per_rank_b}B" if len(scenarios) > 1 else folder), hosts=hosts, ports=ports
        )
        for sc in scenarios
    ]
    for pcap in pcaps:  # its folders made (or one line) before anything runs
        if pcap is not None:
            packet_trace.check_pcap(pcap, layout)
    return pcaps


def queue_trace_of(args: argparse.Namespace, scenarios: Sequence[Scenario]) -> QueueTraceConfig | None:
    """The queue trace of every size (--queue-trace, --queue-ports, --queue-interval), checked with its file
    before anything runs."""
    if args.queue_trace is None:
        for option in ("queue_ports", "queue_interval"):
            if getattr(args, option) is not None:
                raise McsimError(f"--{option.replace('_', '-')} goes with --queue-trace FILE (where the samples go)")
        return None
    if Path(args.queue_trace).suffix not in SUFFIXES:
        raise McsimError(f"--queue-trace={args.queue_trace!r} must end in {', '.join(SUFFIXES)} (the file's format)")
    check_writable(args.queue_trace, "--queue-trace")
    if args.queue_ports is None:
        raise McsimError("--queue-trace goes with --queue-ports NODE:PORT,... (the ports whose queues to sample)")
    layout = scenarios[0].setup.layout()
    interval_ps = DEFAULT_QUEUE_INTERVAL_PS
    if args.queue_interval is not None:
        interval_ps = parse_time(args.queue_interval, what="--queue-interval")
        if interval_ps == 0:
            raise McsimError(f"--queue-interval={args.queue_interval!r} must be > 0; e.g. 1us")
    ports = parse_ports(args.queue_ports, layout.graph, "--queue-ports")
    config = QueueTraceConfig(ports=ports, interval_ps=interval_ps)
    config.check(layout)
    return config


def queue_rows(r: Result) -> list[dict[str, int]]:
    """A run's queue trace as rows (--queue-trace): its size per rank, the port, each sample's time and bytes."""
    trace = r.fabric.queue_trace
    if trace is None:
        return []
    return [
        {"bytes_per_rank_B": r.bytes_per_rank_b, "node": node, "port": port, "time_ps": int(t), "queue_b": int(q)}
        for (node, port), queue in zip(trace.ports, trace.queue_b, strict=True)
        for t, q in zip(trace.time_ps, queue, strict=True)
    ]
