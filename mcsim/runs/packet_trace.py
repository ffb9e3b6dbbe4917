# SPDX-License-Identifier: GPL-2.0-only
"""A run's packet trace (Scenario.run(pcap=PcapConfig(...))), checked before any C++ exists: a C++ PcapWriter per
traced host or port (mcsim.runs.assemble opens them) writes the frames its NIC or port sends and receives as they go
(no Python per packet), closed after the run."""

from __future__ import annotations

import os

from mcsim.config.congestion import uses_int
from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
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
