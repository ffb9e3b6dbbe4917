# SPDX-License-Identifier: GPL-2.0-only
"""What this machine offers a run, and what a fabric costs before it is built.

A leaf module (it imports only mcsim.errors): the topology builders and Scenario use it to refuse, in
milliseconds and with one line, a fabric or a run that cannot fit in memory; the sweeps, compare and the
report to bound their local worker processes (:func:`check_workers`).

The memory a process can still take is the least of: the machine's MemAvailable; its address-space
and data limits (``ulimit -v``, ``ulimit -d``: RLIMIT_AS and RLIMIT_DATA) less what it already maps
(VmSize, VmData); its cgroup's memory limit less the cgroup's use (v2 memory.max - memory.current,
v1 memory.limit_in_bytes - memory.usage_in_bytes). A limit that is not set or cannot be read is no
limit; under ``ulimit -v`` a run would otherwise die after the whole simulation, in numpy or C++.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from mcsim.errors import McsimError, require_int

GRAPH_B_PER_ELEMENT = 350  # networkx: bytes per node or edge with mcsim's attributes (measured ~370)
TABLE_ENTRY_B = 4  # uint32 per routing-table offset or candidate port
CGROUP_ROOT = Path("/sys/fs/cgroup")
# cgroup v2 and v1: the files of a memory limit and of the use it bounds
CGROUP_FILES = (("memory.max", "memory.current"), ("memory.limit_in_bytes", "memory.usage_in_bytes"))
NO_CGROUP_LIMIT = 2**60  # v1 writes "no limit" as a huge number (9223372036854771712)


class Memory(NamedTuple):
    """Bytes a process can still take, and what bounds them ("MemAvailable", "ulimit -v", ...)."""

    available_b: int
    bound: str


def _proc_kb_b(path: str, key: str) -> int | None:
    """A kB field of a /proc file ("MemAvailable" of /proc/meminfo, "VmSize" of /proc/self/status) in
    bytes; None if unknown."""
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024  # the value is in kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _meminfo_b() -> int | None:
    """MemAvailable of /proc/meminfo, else the free physical pages (os.sysconf)."""
    available = _proc_kb_b("/proc/meminfo", "MemAvailable")
    if available is not None:
        return available
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def _status_b(key: str) -> int:
    """A kB field of /proc/self/status ("VmSize", "VmData") in bytes; 0 if unknown."""
    return _proc_kb_b("/proc/self/status", key) or 0


def _rlimits() -> list[Memory]:
    """What the address-space and data limits leave (soft limits; unlimited: none)."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return []
    out = []
    for limit, used, bound in (
        (resource.RLIMIT_AS, "VmSize", "the address-space limit (ulimit -v)"),
        (resource.RLIMIT_DATA, "VmData", "the data-segment limit (ulimit -d)"),
    ):
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY:
            out.append(Memory(max(0, soft - _status_b(used)), bound))
    return out


def _cgroup_dirs() -> list[Path]:
    """The folders that may hold this process's cgroup memory files (v2 unified, v1 memory), own first."""
    own: dict[str, str] = {}
    try:
        for line in Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines():
            _, controllers, path = line.split(":", 2)
            own["memory" if "memory" in controllers.split(",") else controllers or "unified"] = path.lstrip("/")
    except (OSError, ValueError):
        return []
    dirs = []
    for key, mount in (("unified", CGROUP_ROOT), ("memory", CGROUP_ROOT / "memory")):
        if key in own:
            dirs += [mount / own[key], mount]
    return dirs


def _cgroup() -> Memory | None:
    """What this process's cgroup memory limit leaves, if it has one."""
    for folder in _cgroup_dirs():
        for limit_name, used_name in CGROUP_FILES:
            try:
                limit_text = (folder / limit_name).read_text(encoding="ascii").strip()
                used = int((folder / used_name).read_text(encoding="ascii"))
            except (OSError, ValueError):
                continue
            if limit_text == "max" or not limit_text.isdigit() or int(limit_text) >= NO_CGROUP_LIMIT:
                return None
            return Memory(max(0, int(limit_text) - used), f"the cgroup's memory limit ({limit_name})")
    return None


def available_memory() -> Memory | None:
    """The memory this process can still take and what bounds it (see the module doc); None if nothing
    is known."""
    found = [Memory(b, "MemAvailable") for b in (_meminfo_b(),) if b is not None]
    found += _rlimits()
    cgroup = _cgroup()
    if cgroup is not None:
        found.append(cgroup)
    return min(found, default=None, key=lambda m: m.available_b)


def available_memory_b() -> int | None:
    """Bytes this process can still take: :func:`available_memory`'s; None if nothing is known."""
    found = available_memory()
    return None if found is None else found.available_b


def describe_available(available_b: int) -> str:
    """``"this machine has 3.1 GiB available"``, or, when a limit of the process bounds it, ``"this process
    can take 0.4 GiB more (the address-space limit (ulimit -v))"``."""
    gib = available_b / 2**30
    found = available_memory()
    if found is None or found.available_b != available_b or found.bound == "MemAvailable":
        return f"this machine has {gib:.3g} GiB available"
    return f"this process can take {gib:.3g} GiB more ({found.bound})"


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
        raise McsimError(f"{where} needs at least {need_b / 2**30:.1f} GiB, {describe_available(available)}")


# local worker processes at most: each is a process of its own with its C++ runtime (about 60 MB)
MAX_WORKERS = 1024
WORKERS_WHY = " (local worker processes: each is a process of its own with its C++ runtime, about 60 MB)"


def check_workers(where: str, name: str, workers: object) -> int:
    """``workers`` if it is an integer 1..MAX_WORKERS, else one McsimError line naming ``where`` and ``name``."""
    return require_int(where, name, workers, lo=1, hi=MAX_WORKERS, why=WORKERS_WHY)
