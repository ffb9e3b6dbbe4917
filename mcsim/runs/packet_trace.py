# SPDX-License-Identifier: GPL-2.0-only
"""A run's packet trace (Scenario.run(pcap=PcapConfig(...))): a C++ PcapWriter per traced host or port, each
writing the frames its NIC or port sends and receives as they go (no Python per packet), closed after the run."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from mcsim.config.congestion import uses_int
from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
from mcsim.native import rdma
from mcsim.native.simulation import Simulation
from mcsim.routing.layout import Layout


def check_pcap(pcap: PcapConfig, layout: Layout) -> None:
    """Its hosts and ports exist in the fabric of ``layout`` and its folder can take the files (made if
    missing): one line if not."""
    bad = [h for h in pcap.hosts if h >= layout.hosts]
    if bad:
        raise McsimError(f"pcap: host {bad[0]} is not a host of the topology (0..{layout.hosts - 1})")
    for node, port in pcap.ports:
        layout.check_port("pcap", node, port)
    try:
        os.makedirs(pcap.folder, exist_ok=True)
    except OSError as exc:
        raise McsimError(f"pcap: folder {pcap.folder!r} cannot be made ({exc.strerror or exc})") from None
    if not os.access(pcap.folder, os.W_OK):
        raise McsimError(f"pcap: folder {pcap.folder!r} is not writable")


def check_traceable(congestion: object) -> None:
    """One line if a run with this congestion control (its config) cannot be traced: HPCC's INT header has no wire
    layout."""
    if uses_int(congestion):
        raise McsimError(
            "pcap: HPCC's INT header (42 B on each data packet and ACK) has no wire layout in mcsim's frames; "
            "trace a run without congestion_control='hpcc'"
        )


def open_writers(sim: Simulation, stack: Any, fabric: Any, pcap: PcapConfig, layout: Layout) -> list[tuple[str, Any]]:
    """A writer per host and per port (owned by the simulation), checked first: (its file, the writer)."""
    check_pcap(pcap, layout)
    files: list[tuple[str, tuple[Sequence[int], Sequence[tuple[int, int]]]]] = [
        (pcap.path(h), ((h,), ())) for h in pcap.hosts
    ] + [(pcap.port_path(n, p), ((), ((n, p),))) for n, p in pcap.ports]
    return [
        (path, sim.own_app(rdma.open_pcap(stack, fabric, path, traced, pcap.max_packets, pcap.max_bytes)))
        for path, traced in files
    ]


def close_writers(writers: list[tuple[str, Any]]) -> tuple[tuple[str, int, int], ...]:
    """Close the files: per file (its path, frames written, frames over a cap)."""
    return tuple((path, *rdma.close_pcap(w)) for path, w in writers)
