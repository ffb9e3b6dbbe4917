# SPDX-License-Identifier: GPL-2.0-only
"""The DPA receive engine's settings as frozen data (DpaConfig, the calibration profiles) and its
closed forms (capacity, threads_needed, ...): no C++, no packet simulation.

The model, its sharing and calibration (the profiles): mcsim/ns3_modules/dpa/doc/dpa.md.
mcsim.runs.dpa simulates it (receive_stream, saturate).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mcsim.config.ns3_attributes import sets
from mcsim.config.rdma import CompletionProcessorConfig, RdmaConfig
from mcsim.errors import McsimError, pick, require_int, require_integer, require_positive
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, PS_PER_S, require_rate_bps

# receive path -> the payload is staged (Completion::staged, RdmaConfig.staging)
RECEIVE_PATHS = {"zero_copy": False, "staging": True}
DPA = "ns3::mcsim::Dpa"  # the C++ type DpaConfig sets attributes of
PLACEMENTS = {"spread": "Spread", "pack": "Pack"}  # -> ns3::mcsim::ThreadPlacement, by its checker's names
# InfiniBand UD datagram with immediate: LRH 8 + BTH 12 + DETH 8 + ImmDt 4 + ICRC 4 + VCRC 2; a
# multicast one also carries a GRH 40
UD_HEADER_B = 38
UD_MULTICAST_HEADER_B = UD_HEADER_B + 40
# measured thread scaling of SDR-RDMA's DPA receive engine (BlueField-3, 4 KiB packets): threads -> Mpps
MEASURED_SCALING_MPPS = {4: 11.6, 8: 22.9, 16: 42.9, 32: 70.5, 64: 92.1}
# the sharing parameters of each profile (module doc); everything else is DpaConfig's default
PROFILES: dict[str, dict[str, float]] = {
    "sc24": {"issue_share": 1 / 16, "core_contention": 0.0},
    "sdr-rdma": {"issue_share": 0.45, "core_contention": 0.012},
}
DEFAULT_PROFILE = "sc24"  # DpaConfig()'s sharing
# Dpa's attribute checkers (dpa/model/dpa.cc): Cores and ThreadsPerCore 1..4096, IssueShare 1e-9..1
MAX_CORES = 4096
CORES_WHY = " (Dpa's Cores and ThreadsPerCore checkers)"
MIN_ISSUE_SHARE = 1e-9


@dataclass(frozen=True, slots=True, kw_only=True)
class DpaConfig:
    """The DPA receive engine (ns3::mcsim::Dpa); defaults: BlueField-3, the "sc24" profile (module doc)."""

    TYPE_ID: ClassVar[str] = DPA
    threads: int = field(default=16, metadata=sets(DPA, "Threads"))  # threads in use, 1..cores * threads_per_core
    cores: int = field(default=16, metadata=sets(DPA, "Cores"))
    threads_per_core: int = field(default=16, metadata=sets(DPA, "ThreadsPerCore"))
    placement: str = field(default="spread", metadata=sets(DPA, "Placement", PLACEMENTS))  # or "pack"
    clock_hz: int = field(default=1_800_000_000, metadata=sets(DPA, "ClockHz"))
    # per completion, a lone thread: 3.12 M/s at 1.8 GHz
    zero_copy_cycles: int = field(default=577, metadata=sets(DPA, "ZeroCopyCycles"))
    staging_cycles: int = field(default=4 * 577, metadata=sets(DPA, "StagingCycles"))  # zero copy + the loopback write
    # of its core's issue slots a lone thread uses
    issue_share: float = field(default=PROFILES[DEFAULT_PROFILE]["issue_share"], metadata=sets(DPA, "IssueShare"))
    # extra cost per other busy core
    core_contention: float = field(
        default=PROFILES[DEFAULT_PROFILE]["core_contention"], metadata=sets(DPA, "CoreContention")
    )
    # NIC loopback writes of staged payloads
    loopback_bps: int = field(default=3_200_000_000_000, metadata=sets(DPA, "LoopbackRate"))

    def __post_init__(self) -> None:
        where = "DpaConfig"
        require_int(where, "cores", self.cores, lo=1, hi=MAX_CORES, why=CORES_WHY)
        require_int(where, "threads_per_core", self.threads_per_core, lo=1, hi=MAX_CORES, why=CORES_WHY)
        require_integer(where, threads=self.threads)
        most = self.cores * self.threads_per_core
        if self.threads < 1:
            raise McsimError(f"{where}: threads={self.threads} must be >= 1; the DPA has 1..{most} threads")
        if self.threads > most:
            raise McsimError(
                f"{where}: threads={self.threads} is more than the DPA has "
                f"(cores={self.cores} x threads_per_core={self.threads_per_core} = {most}); use at most {most}"
            )
        pick("thread placement", self.placement, PLACEMENTS)
        require_int(where, "clock_hz", self.clock_hz, lo=1, hi=2**64 - 1, why=" (uint64 in C++)")
        for name in ("zero_copy_cycles", "staging_cycles"):
            cycles = require_int(where, name, getattr(self, name), lo=0, hi=2**32 - 1, why=" (uint32 in C++)")
            if cycles * PS_PER_S > MAX_SIMULATED_PS * self.clock_hz:  # a lone thread's time per completion
                raise McsimError(
                    f"{where}: {name}={cycles} at clock_hz={self.clock_hz} is {cycles / self.clock_hz:.4g} s per "
                    f"completion, past {CLOCK_LIMIT}"
                )
        require_rate_bps(where, "loopback_bps", self.loopback_bps, lo=1)
        require_positive(where, issue_share=self.issue_share)
        if not self.issue_share <= 1:
            raise McsimError(f"{where}: issue_share={self.issue_share!r} must be in (0, 1]; 1 means no latency hiding")
        if self.issue_share < MIN_ISSUE_SHARE:
            raise McsimError(
                f"{where}: issue_share={self.issue_share!r} must be >= {MIN_ISSUE_SHARE:g} (Dpa's IssueShare checker)"
            )
        if isinstance(self.core_contention, bool) or not isinstance(self.core_contention, int | float):
            raise McsimError(f"{where}: core_contention={self.core_contention!r} must be a number")
        if not self.core_contention >= 0:
            raise McsimError(
                f"{where}: core_contention={self.core_contention!r} must be >= 0; 0 makes cores independent"
            )
        if self.core_contention == math.inf:
            raise McsimError(f"{where}: core_contention=inf must be finite (the share of a completion per busy core)")
        slowest = self._slowest_completion_ps()
        if slowest > MAX_SIMULATED_PS:
            raise McsimError(
                f"{where}: core_contention={self.core_contention!r} and issue_share={self.issue_share!r} make a "
                f"completion take up to {slowest:.3g} ps (every core busy, {min(self.threads, self.threads_per_core)} "
                f"threads on one), past {CLOCK_LIMIT}"
            )

    def _slowest_completion_ps(self) -> float:
        """The longest a completion can take under the sharing model: the costlier path, as many threads busy on
        its core as one holds, every core busy (as service_ps, in floating point: no rounding, no overflow)."""
        on_core = min(self.threads, self.threads_per_core)
        lone_ps = max(self.zero_copy_cycles, self.staging_cycles) * 1e12 / self.clock_hz
        return lone_ps * (1.0 + self.core_contention * (self.cores - 1)) / self.sharing_factor(on_core)

    def core_of(self, thread: int) -> int:
        """The core thread ``thread`` runs on."""
        return thread % self.cores if self.placement == "spread" else thread // self.threads_per_core

    def threads_on_cores(self) -> list[int]:
        """Threads in use on each core."""
        per = [0] * self.cores
        for t in range(self.threads):
            per[self.core_of(t)] += 1
        return per

    def sharing_factor(self, n: int) -> float:
        """f(n): a thread's speed relative to running alone with n busy threads on its core (as Dpa)."""
        u, q, x = float(self.issue_share), 0.0, 1.0
        for k in range(1, n + 1):
            r = u * (1.0 + q)
            x = k / (1.0 - u + r)
            q = x * r
        return x / n if n else 1.0

    def cycles(self, path: str) -> int:
        """Thread cycles per completion on a receive path ("zero_copy" or "staging")."""
        return self.staging_cycles if pick("receive path", path, RECEIVE_PATHS) else self.zero_copy_cycles

    def service_ps(self, path: str, busy_on_core: int = 1, busy_cores: int = 1) -> int:
        """Thread time of one completion while busy_on_core threads of its core and busy_cores
        cores stay busy, rounded up to the ps as ns3::mcsim::Dpa does."""
        lone_ps = self.cycles(path) * 1e12 / self.clock_hz
        rate = self.sharing_factor(busy_on_core) / (1.0 + self.core_contention * (busy_cores - 1))
        return math.ceil(lone_ps / rate)

    def loopback_ps(self, chunk_b: int) -> int:
        """Loopback write time of one staged chunk: bits / loopback_bps, rounded up."""
        return -(-chunk_b * 8 * PS_PER_S // self.loopback_bps)


def profile(name: str, **changes: Any) -> DpaConfig:
    """The DpaConfig of a calibration profile ("sc24", the default, or "sdr-rdma"), with changes."""
    return DpaConfig(**(pick("DPA profile", name, PROFILES) | changes))


def packet_rate(data_rate_bps: int, chunk_b: int, header_b: int = UD_MULTICAST_HEADER_B) -> float:
    """Datagrams per second of a link at data_rate_bps carrying chunk_b payload + header_b each."""
    require_positive("packet_rate", data_rate_bps=data_rate_bps, chunk_b=chunk_b)
    return data_rate_bps / (8 * (chunk_b + header_b))


def thread_rate(path: str, chunk_b: int, dpa: DpaConfig | None = None) -> float:
    """Completions/s of one thread alone on a path (staging: also at most the loopback's rate)."""
    dpa = dpa or DpaConfig()
    require_positive("thread_rate", chunk_b=chunk_b)
    rate = PS_PER_S / dpa.service_ps(path)
    return min(rate, _loopback_rate(dpa, chunk_b)) if RECEIVE_PATHS[path] else rate


def _loopback_rate(dpa: DpaConfig, chunk_b: int) -> float:
    return PS_PER_S / dpa.loopback_ps(chunk_b)


def _core_rates(dpa: DpaConfig, path: str) -> list[tuple[int, float]]:
    """(threads, completions/s of each of them) of every busy core when all threads are busy."""
    per = [n for n in dpa.threads_on_cores() if n]
    rates = {n: PS_PER_S / dpa.service_ps(path, n, len(per)) for n in set(per)}
    return [(n, rates[n]) for n in per]


def capacity(path: str, chunk_b: int, dpa: DpaConfig | None = None) -> float:
    """Completions/s of dpa.threads threads all busy (saturation), under the sharing model.

    The staging path is also capped by the loopback writes (loopback_bps / chunk bits).
    """
    dpa = dpa or DpaConfig()
    require_positive("capacity", chunk_b=chunk_b)
    total = sum(n * rate for n, rate in _core_rates(dpa, path))
    return min(total, _loopback_rate(dpa, chunk_b)) if RECEIVE_PATHS[path] else total


def even_capacity(path: str, chunk_b: int, dpa: DpaConfig | None = None) -> float:
    """Completions/s the threads sustain when the sender spreads chunks evenly over one endpoint
    per thread: every thread gets the same share, so the slowest one decides (threads x slowest).
    """
    dpa = dpa or DpaConfig()
    require_positive("even_capacity", chunk_b=chunk_b)
    total = dpa.threads * min(rate for _, rate in _core_rates(dpa, path))
    return min(total, _loopback_rate(dpa, chunk_b)) if RECEIVE_PATHS[path] else total


def threads_needed(
    data_rate_bps: int,
    chunk_b: int,
    path: str,
    *,
    dpa: DpaConfig | None = None,
    header_b: int = UD_MULTICAST_HEADER_B,
) -> int | None:
    """The fewest threads that sustain line rate: data_rate_bps / ((chunk_b + header_b) * 8) chunks/s
    spread round-robin over one endpoint per thread (even_capacity); None if no count does.

    Parameters
    ----------
    data_rate_bps
        Link data rate in bit/s (after line encoding).
    chunk_b
        Payload bytes per datagram (one completion each).
    path
        "zero_copy" or "staging".
    dpa
        The DPA (its ``threads`` is ignored); default DpaConfig().
    header_b
        Wire header bytes per datagram (default: an InfiniBand UD multicast datagram with
        immediate, 78 B).
    """
    dpa = dpa or DpaConfig()
    pick("receive path", path, RECEIVE_PATHS)
    require_positive("threads_needed", data_rate_bps=data_rate_bps, chunk_b=chunk_b)
    require_int("threads_needed", "header_b", header_b, lo=0)
    need = packet_rate(data_rate_bps, chunk_b, header_b)
    for n in range(1, dpa.cores * dpa.threads_per_core + 1):
        if even_capacity(path, chunk_b, dataclasses.replace(dpa, threads=n)) >= need:
            return n
    return None


def rdma_config(path: str, processor: CompletionProcessorConfig, **rdma: Any) -> RdmaConfig:
    """RdmaConfig for a receive path: "staging" stages UD payloads, "zero_copy" does not."""
    return RdmaConfig(processor=processor, staging=pick("receive path", path, RECEIVE_PATHS), **rdma)


__all__ = [
    "MEASURED_SCALING_MPPS",
    "PROFILES",
    "RECEIVE_PATHS",
    "UD_HEADER_B",
    "UD_MULTICAST_HEADER_B",
    "DpaConfig",
    "capacity",
    "even_capacity",
    "packet_rate",
    "profile",
    "rdma_config",
    "thread_rate",
    "threads_needed",
]
