# SPDX-License-Identifier: GPL-2.0-only
"""Evaluate the published claims: simulate (or reuse from the store) what each needs, and give each a
verdict with a one-line reason.

Every simulated number comes from runs through mcsim.sweep.run, stored in ``store`` (a second call
reuses them); the DPA claims are closed forms of mcsim.dpa (no packet simulation, no sweep), the
testbed claim is the topology file itself. Verdicts: "reproduced" (the published number, to its
precision, or the published bound holds), "within tolerance" (|simulated / published - 1| <= the
claim's tolerance), "differs", "calibrated input" (the model was fitted to it: agreement proves
nothing), "not published" (no number to compare).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcsim.errors import McsimError
from mcsim.output import Column, Table
from mcsim.reference.claims import FDR, QUICK_TOPOLOGY, TESTBED, Claim, select
from mcsim.units import format_rate, parse_rate

DEFAULT_STORE = Path("compare.sqlite")
VERDICTS = ("reproduced", "within tolerance", "differs", "calibrated input", "not published")
# published numbers are given to 2-3 digits: closer than this is the published number itself
PRECISION = 0.005
CHUNK_B = 4096  # the DPA claims' chunk: one 4 KiB MTU datagram
DPA_CLAIM_RATES = ("400Gbps", "800Gbps", "1.6Tbps")  # dpa-half


# the command's table: the reason last, as long as it needs
TABLE = Table(
    [
        Column("id", width=11, left=True),
        Column("published", width=29, left=True),
        Column("simulated", width=40, left=True),
        Column("ratio", width=6),
        Column("verdict", width=16, left=True),
        Column("reason", left=True),
    ]
)


@dataclass(frozen=True, slots=True)
class Row:
    """One claim's comparison, as `mcsim compare` prints it."""

    id: str
    published: str  # value with unit
    simulated: str  # value with unit, or "-"
    ratio: float | None  # simulated / published
    verdict: str  # one of VERDICTS
    reason: str  # one line
    must_reproduce: bool


@dataclass(frozen=True, slots=True)
class Measure:
    """What an evaluator found: the value compared with the claim's, as text, and why."""

    simulated: str
    value: float | None  # in the claim's unit; None: none could be had (the reason says why)
    reason: str


def _sweep_rows(claim: Claim, quick: bool, store: Path, workers: int | None) -> list[dict[str, Any]]:
    """The claim's runs (mcsim.sweep.run: stored ones are reused), in spec order, all ended complete."""
    from mcsim.sweep import run

    spec = claim.spec(quick)
    if spec is None:
        raise McsimError(f"claim {claim.id!r} has no runs in {'quick' if quick else 'full'} mode")
    rows, untimed = run(spec, store, workers=workers, progress=False).timed_rows()
    if untimed:
        raise McsimError(f"claim {claim.id!r}: run {untimed[0]}")
    return rows


def _by_algorithm(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["algorithm"]: r for r in rows}


def _where(rows: list[dict[str, Any]]) -> str:
    r = rows[0]
    return f"P={r['ranks']}, {r['bytes_per_rank_b'] // 1024} KiB/rank, {format_rate(r['data_rate_bps'])} data rate"


def _ring_bound(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    rows = _sweep_rows(claim, quick, store, workers)
    by = _by_algorithm(rows)
    ring, mcast = by["ring"]["time_over_bound"], by["mcast"]["time_over_bound"]
    worst = max(ring, mcast)
    return Measure(
        f"ring {ring:.3f}, mcast {mcast:.3f} x N(P-1)/BW",
        worst,
        f"simulated time / receive bound, the worse of ring and multicast ({_where(rows)})",
    )


def _traffic(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    from mcsim.topology_files import resolve

    # the traffic slice's module (the authors' model and mcsim's count of the same schedules)
    try:
        traffic = importlib.import_module("mcsim.reference.traffic")
    except ModuleNotFoundError:
        raise McsimError(f"claim {claim.id!r} needs mcsim.reference.traffic, which this install lacks") from None

    rows = _sweep_rows(claim, quick, store, workers)
    by = _by_algorithm(rows)
    simulated = by["ring"]["link_traversals"] / by["mcast"]["link_traversals"]
    topology = QUICK_TOPOLOGY if quick else TESTBED
    p = int(by["ring"]["ranks"])
    counted = traffic.traffic_reduction(p, resolve(topology), "ring")
    authors = traffic.authors_cost("ring", p) / traffic.authors_cost("multicast", p)
    return Measure(
        f"{simulated:.2f} x simulated, {counted:.2f} x counted",
        simulated,
        f"ring / multicast link traversals on {topology} ({_where(rows)}): simulated packets (RC ACKs and the "
        f"multicast's TOKEN/FIN SENDs included), and mcsim's routes counted for the data alone "
        f"(mcsim.reference.traffic); the authors' rule gives {authors:.2f} x for P={p} on their 1024-host tree, "
        "where it counts a backward send as 2 hops (mcsim report: traffic-vs-p)",
    )


def _finish_ps(row: dict[str, Any]) -> int:
    """When both collectives of an AG || RS run had finished."""
    return max(int(row["time_ps"]), int(row["concurrent_time_ps"]))


def _ag_rs(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    rows = _sweep_rows(claim, quick, store, workers)
    by = {(r["algorithm"], r["overlap_algorithm"]): r for r in rows}
    pairs = (("ring", "ring"), ("mcast", "innet"), ("mcast", "ring"))
    rings, offloaded, mcast_ring = (_finish_ps(by[pair]) for pair in pairs)
    p = int(by["ring", "ring"]["ranks"])
    return Measure(
        f"{rings / offloaded:.2f} x speedup",
        rings / offloaded,
        f"AG||RS finish, ring || ring over multicast AG || in-network RS ({_where(rows)}); at most "
        f"2(P-1)/(P+1) = {2 * (p - 1) / (p + 1):.2f}: two rings move 2(P-1)N through each link, the offloaded pair "
        f"(P+1)N. Multicast AG || ring RS gives {rings / mcast_ring:.2f}x: every rank still receives (P-1)N for "
        "the ring RS",
    )


def _scales(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    rows = _sweep_rows(claim, quick, store, workers)
    r = rows[0]
    received_bps = r["bytes_per_rank_b"] * (r["ranks"] - 1) * 8 * 1e12 / r["time_ps"]
    return Measure(
        f"{received_bps / 1e12:.2f} Tbit/s",
        received_bps / 1e12,
        f"bytes each rank received per second, multicast Allgather at 1.6 Tbit/s links on the zero-copy path "
        f"with 128 DPA threads ({_where(rows)}; {r['time_over_bound']:.2f} x N(P-1)/BW)",
    )


def _dpa_sixteenth(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    from mcsim import dpa

    need = dpa.threads_needed(parse_rate("400Gbps"), CHUNK_B, "staging")
    most = dpa.DpaConfig().cores * dpa.DpaConfig().threads_per_core
    return Measure(
        "-" if need is None else f"{need} DPA threads (1/{most // need} of {most})",
        None if need is None else float(need),
        "closed form (mcsim.dpa.threads_needed, no packet simulation): fewest threads for line rate at "
        "400 Gbit/s, 4 KiB chunks, staging (datagram) path",
    )


def _dpa_zero_copy(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    from mcsim import dpa

    cfg = dpa.DpaConfig()
    rate = parse_rate("400Gbps")
    zc, st = (dpa.threads_needed(rate, CHUNK_B, path) for path in ("zero_copy", "staging"))
    return Measure(
        f"{cfg.staging_cycles / cfg.zero_copy_cycles:g} x",
        cfg.staging_cycles / cfg.zero_copy_cycles,
        f"{claim.note}; threads for 400 Gbit/s 4 KiB (closed form): staging {st}, zero copy {zc}",
    )


def _dpa_half(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    from mcsim import dpa

    cfg = dpa.DpaConfig()
    most = cfg.cores * cfg.threads_per_core
    need = {r: dpa.threads_needed(parse_rate(r), CHUNK_B, "staging") for r in DPA_CLAIM_RATES}
    text = ", ".join(f"{'>' + str(most) if n is None else n} at {r}" for r, n in need.items())
    peak = dpa.capacity("staging", CHUNK_B, dataclasses.replace(cfg, threads=most))
    short = [r for r, n in need.items() if n is None]
    worst = None if short else float(max(n for n in need.values() if n is not None))
    why = "closed form (mcsim.dpa.threads_needed, no packet simulation), staging path, 4 KiB chunks"
    if short:
        rates = ", ".join(f"{dpa.packet_rate(parse_rate(r), CHUNK_B) / 1e6:.1f} at {r}" for r in short)
        why += (
            f": all {most} threads peak at {peak / 1e6:.1f} M datagrams/s, {rates} needed; the model's staging "
            "cost is 4x zero copy (dpa-zc-4x), its sharing the default (sc24) profile's"
        )
    return Measure(f"threads {text}", worst, why)


def _dpa_thread(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    from mcsim import dpa

    cfg = dpa.DpaConfig()
    per_thread = dpa.thread_rate("zero_copy", CHUNK_B, cfg) * CHUNK_B / 2**30
    half = dpa.capacity("zero_copy", CHUNK_B, dataclasses.replace(cfg, threads=128))
    need = dpa.packet_rate(parse_rate("1.6Tbps"), CHUNK_B)
    return Measure(
        f"{per_thread:.2f} GiB/s",
        per_thread,
        f"{claim.note}; outcome beside it: 128 threads do {half / 1e6:.1f} M chunks/s, 1.6 Tbit/s needs "
        f"{need / 1e6:.1f} M (closed form)",
    )


def _testbed(claim: Claim, quick: bool, store: Path, workers: int | None) -> Measure:
    from mcsim.topology_files import resolve
    from mcsim.topology_summary import summary

    s = summary(resolve(TESTBED))
    rates = {rate for tier in s["tiers"].values() for rate in tier["rates_bps"]}
    fdr = parse_rate(FDR)
    ok = s["switches"] == 18 and all(abs(rate / fdr - 1) <= 0.01 for rate in rates)
    shown = ", ".join(format_rate(rate) for rate in sorted(rates))
    return Measure(
        f"{s['hosts']} nodes, {s['switches']} switches, {shown} links",
        float(s["hosts"]) if ok else None,
        f"{TESTBED} by construction: hosts, switches (18 published) and link rates (56 Gbit/s FDR)"
        + ("" if ok else ": switches or link rate DIFFER")
        + "; the wiring is mcsim's assumption",
    )


Evaluator = Callable[[Claim, bool, Path, int | None], Measure]
EVALUATORS: dict[str, Evaluator] = {
    "traffic-2x": _traffic,
    "scales-1.6T": _scales,
    "ring-bound": _ring_bound,
    "ag-rs-2x": _ag_rs,
    "dpa-1/16": _dpa_sixteenth,
    "dpa-zc-4x": _dpa_zero_copy,
    "dpa-half": _dpa_half,
    "dpa-thread": _dpa_thread,
    "testbed": _testbed,
}


def verdict(claim: Claim, value: float | None) -> tuple[float | None, str]:
    """(ratio simulated / published, verdict) of a claim whose evaluation found ``value``."""
    if claim.kind == "not published" or claim.value is None:
        return None, "not published"
    ratio = None if value is None else value / claim.value
    if claim.kind == "calibrated input":
        return ratio, "calibrated input"
    if ratio is None:
        return None, "differs"
    off = ratio - 1 if claim.relation == "at_most" else abs(ratio - 1)
    if off <= PRECISION:
        return ratio, "reproduced"
    return ratio, "within tolerance" if off <= claim.tolerance else "differs"


def evaluate(
    claims: Sequence[Claim],
    *,
    quick: bool = False,
    store: str | os.PathLike[str] = DEFAULT_STORE,
    workers: int | None = None,
) -> list[Row]:
    """One Row per claim, in order (runs through mcsim.sweep.run into ``store``)."""
    rows = []
    for claim in claims:
        if claim.id not in EVALUATORS:
            raise McsimError(f"claim {claim.id!r} has no evaluator; the ids: {', '.join(EVALUATORS)}")
        found = EVALUATORS[claim.id](claim, quick, Path(store), workers)
        ratio, said = verdict(claim, found.value)
        reason = found.reason if said != "calibrated input" or claim.note in found.reason else claim.note
        rows.append(Row(claim.id, claim.published(), found.simulated, ratio, said, reason, claim.must_reproduce))
    return rows


def compare(
    ids: Sequence[str] | None = None,
    quick: bool = False,
    store: str | os.PathLike[str] = DEFAULT_STORE,
    workers: int | None = None,
) -> list[Row]:
    """Compare the claims named by ``ids`` (all if None) with mcsim; --quick: smaller runs."""
    return evaluate(select(None if ids is None else list(ids), quick=quick), quick=quick, store=store, workers=workers)


def claims_of(keys: Iterable[str], *, quick: bool = False) -> list[Claim]:
    """The claims whose runs (quick or full mode) are all among the store ``keys`` of runs already made
    (mcsim.sweep.SweepReport.keys): those a sweep's results can be compared on without running more."""
    from mcsim.sweep.runner import run_key, versions

    have, vers = set(keys), versions()
    chosen = []
    for claim in select(None, quick=quick):
        spec = claim.spec(quick)
        if spec is not None and {run_key(r.scenario, vers) for r in spec.runs()} <= have:
            chosen.append(claim)
    return chosen


def exit_status(rows: Sequence[Row]) -> int:
    """1 if a must-reproduce claim differs, else 0."""
    return 1 if any(r.must_reproduce and r.verdict == "differs" for r in rows) else 0


def table_text(rows: Sequence[Row]) -> str:
    """The rows as the terminal table `mcsim compare` prints (header, a line per claim)."""
    lines = [TABLE.header()]
    for r in rows:
        lines.append(TABLE.row(dataclasses.asdict(r) | {"ratio": "-" if r.ratio is None else f"{r.ratio:.3f}"}))
    return "\n".join(lines) + "\n"
