# SPDX-License-Identifier: GPL-2.0-only
"""What this machine offers a run, and what a fabric costs before it is built.

A leaf module (it imports only mcsim.errors): the topology builders and Scenario use it to refuse, in
milliseconds and with one line, a fabric or a run that cannot fit in memory.
"""

from __future__ import annotations

import os

from mcsim.errors import McsimError

GRAPH_B_PER_ELEMENT = 350  # networkx: bytes per node or edge with mcsim's attributes (measured ~370)
TABLE_ENTRY_B = 4  # uint32 per routing-table offset or candidate port


def available_memory_b() -> int | None:
    """Memory this machine can still give a process: MemAvailable of /proc/meminfo, else the free
    physical pages (os.sysconf); None if neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # the value is in kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def fabric_memory_b(hosts: int, switches: int, edges: int) -> int:
    """A lower bound of the memory a fabric takes to build and route: the graph, plus the unicast
    tables (every switch has an offset and at least one candidate port toward every host), held once
    in Python and once in the C++ switches."""
    graph = (hosts + switches + edges) * GRAPH_B_PER_ELEMENT
    tables = 2 * TABLE_ENTRY_B * switches * (2 * hosts + 1)
    return graph + tables


def require_fits(where: str, need_b: int, available_b: int | None = None) -> None:
    """Raise McsimError (one line) if need_b exceeds the memory available (unknown: no check)."""
    available = available_memory_b() if available_b is None else available_b
    if available is not None and need_b > available:
        gib = 2**30
        raise McsimError(
            f"{where} needs at least {need_b / gib:.1f} GiB, this machine has {available / gib:.1f} GiB available"
        )
