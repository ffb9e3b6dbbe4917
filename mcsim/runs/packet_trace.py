# SPDX-License-Identifier: GPL-2.0-only
"""A run's packet trace (Scenario.run(pcap=PcapConfig(...))): a C++ PcapWriter per traced host, each writing
the frames its NIC sends and receives as they go (no Python per packet), closed after the run."""

from __future__ import annotations

import os
from typing import Any

from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
from mcsim.native import rdma
from mcsim.native.simulation import Simulation


def check_pcap(pcap: PcapConfig, n_hosts: int) -> None:
    """Its hosts exist and its folder can take the files (made if missing): one line if not."""
    bad = [h for h in pcap.hosts if h >= n_hosts]
    if bad:
        raise McsimError(f"pcap: host {bad[0]} is not a host of the topology (0..{n_hosts - 1})")
    try:
        os.makedirs(pcap.folder, exist_ok=True)
    except OSError as exc:
        raise McsimError(f"pcap: folder {pcap.folder!r} cannot be made ({exc.strerror or exc})") from None
    if not os.access(pcap.folder, os.W_OK):
        raise McsimError(f"pcap: folder {pcap.folder!r} is not writable")


def open_writers(sim: Simulation, stack: Any, pcap: PcapConfig, n_hosts: int) -> list[tuple[str, Any]]:
    """A writer per host (owned by the simulation), its hosts and folder checked first: (its file, the writer)."""
    check_pcap(pcap, n_hosts)
    return [
        (pcap.path(h), sim.own_app(rdma.open_pcap(stack, pcap.path(h), (h,), pcap.max_packets, pcap.max_bytes)))
        for h in pcap.hosts
    ]


def close_writers(writers: list[tuple[str, Any]]) -> tuple[tuple[str, int, int], ...]:
    """Close the files: per file (its path, frames written, frames over a cap)."""
    return tuple((path, *rdma.close_pcap(w)) for path, w in writers)
