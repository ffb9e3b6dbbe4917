# SPDX-License-Identifier: GPL-2.0-only
"""Evaluate the published claims: simulate (or reuse from the store) what each needs, and give each a
verdict that says what was shown, with a one-line reason and the claim's note.

Every simulated number comes from runs through mcsim.sweep.run_sweep, stored in ``store`` (a second call
reuses them); the DPA claims are closed forms of mcsim.config.dpa under a DPA profile (mcsim.config.dpa.PROFILES;
``profile``), the testbed claim is the topology file itself. Verdicts (VERDICTS):

- "reproduced": an outcome of the model is the published number to its precision, or the published
  bound holds;
- "within tolerance": an outcome within the claim's tolerance of the published number;
- "input": the model was calibrated on the number, or it is true by construction (the topology):
  agreeing with it proves nothing;
- "conditional": an outcome only under a named assumption, the DPA profile the claim ``holds_under``,
  and it holds there; ``condition`` gives every profile's own verdict ("holds under sc24 (16 threads);
  sdr-rdma: differs (22 threads)"), the chosen profile's first;
- "differs": an outcome off its tolerance, an input that no longer matches, or a conditional claim
  false even under its profile;
- "not published": no number to compare;
- "not modelled": a published number of a mechanism mcsim does not model yet (the reason says which).

``exit_status`` is 1 if a must-reproduce claim "differs": so an input must still match and a
conditional claim must hold under its own profile (under another one it may differ: that is what the
"conditional" says).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mcsim.bounds import lacking_b
from mcsim.config.dpa import DEFAULT_PROFILE
from mcsim.errors import McsimError, pick
from mcsim.reference.claim import INPUT_KINDS, Claim
from mcsim.reference.claims import DPA_HALF_THREADS, FDR, QUICK_TOPOLOGY, TESTBED, select
from mcsim.reference.evaluation import Context, Measure, by_algorithm, sweep_rows, where
from mcsim.reference.node_claims import NODE_EVALUATORS
from mcsim.units import PS_PER_S, format_rate, parse_rate
from mcsim.util.machine import check_workers
from mcsim.util.output import Column, Table, check_writable

if TYPE_CHECKING:
    from mcsim.sweep.spec import SweepSpec

DEFAULT_STORE = Path("compare.sqlite")
VERDICTS = ("reproduced", "within tolerance", "input", "conditional", "differs", "not published", "not modelled")
HOLDS = ("reproduced", "within tolerance")  # an outcome's verdicts that say the claim holds
# published numbers are given to 2-3 digits: closer than this is the published number itself
PRECISION = 0.005
CHUNK_B = 4096  # the DPA claims' chunk: one 4 KiB MTU datagram
DPA_CLAIM_RATES = ("400Gbps", "800Gbps", "1.6Tbps")  # dpa-half
# the command's table, in this order; widths follow the rows (the last column as long as it needs)
TABLE_COLUMNS = ("id", "published", "simulated", "ratio", "verdict", "must", "reason", "note")
NUMERIC = ("ratio",)


@dataclass(frozen=True, slots=True)
class Row:
    """One claim's comparison, as `mcsim compare` prints it."""

    id: str
    published: str  # value with unit
    simulated: str  # value with unit, or "-" (a conditional claim: under the chosen profile)
    ratio: float | None  # simulated / published
    verdict: str  # one of VERDICTS
    condition: str  # "conditional" (or "differs" under its profile): every profile's verdict; else ""
    must_reproduce: bool
    reason: str  # one line: how the simulated value was had
    note: str  # the claim's note: why its kind (and must_reproduce) is what it is


class Progress:
    """A line on ``stream`` (None: nothing) as each claim or figure starts: ``mcsim <command>: [i/n]
    <what>: <work>``; sweeps run without their own per-run lines."""

    def __init__(self, stream: TextIO | None, command: str) -> None:
        self.stream, self.command = stream, command

    def line(self, text: str) -> None:
        if self.stream is not None:
            self.stream.write(f"mcsim {self.command}: {text}\n")
            self.stream.flush()


def runs_text(specs: Sequence[SweepSpec], store: Path) -> str:
    """How many runs ``specs`` have and how many of them ``store`` holds already (ok or failed: not
    run again), e.g. ``"4 runs: 2 from the store, 2 to simulate"``."""
    if not specs:
        return "closed form, nothing to simulate"
    from mcsim.sweep.runner import key_of, versions
    from mcsim.sweep.store import Store

    vers = versions()
    keys = {key_of(r, vers) for spec in specs for r in spec.runs()}
    stored = 0
    if store.is_file():
        with Store(store, create=False) as db:
            stored = len(db.status(keys))
    return f"{len(keys)} run{'s' * (len(keys) != 1)}: {stored} from the store, {len(keys) - stored} to simulate"


def _ring_bound(claim: Claim, ctx: Context) -> Measure:
    rows = sweep_rows(claim, ctx)
    by = by_algorithm(rows)
    ring, mcast = by["ring"]["time_over_bound"], by["mcast"]["time_over_bound"]
    worst = max(ring, mcast)
    return Measure(
        f"ring {ring:.3f}, mcast {mcast:.3f} x N(P-1)/BW",
        worst,
        f"simulated time / receive bound, the worse of ring and multicast ({where(rows)})",
    )


def _traffic(claim: Claim, ctx: Context) -> Measure:
    from mcsim.routing.layout import layout_of
    from mcsim.topology.files import resolve

    # the traffic slice's module (the authors' model and mcsim's count of the same schedules)
    try:
        traffic = importlib.import_module("mcsim.reference.traffic")
    except ModuleNotFoundError:
        raise McsimError(f"claim {claim.id!r} needs mcsim.reference.traffic, which this install lacks") from None

    rows = sweep_rows(claim, ctx)
    by = by_algorithm(rows)
    simulated = by["ring"]["link_traversals"] / by["mcast"]["link_traversals"]
    topology = QUICK_TOPOLOGY if ctx.quick else TESTBED
    p = int(by["ring"]["ranks"])
    counted = traffic.traffic_reduction(p, layout_of(resolve(topology)), "ring")
    authors = traffic.authors_cost("ring", p) / traffic.authors_cost("multicast", p)
    return Measure(
        f"{simulated:.2f} x simulated, {counted:.2f} x counted",
        simulated,
        f"ring / multicast link traversals on {topology} ({where(rows)}): simulated packets (RC ACKs and the "
        f"multicast's TOKEN/FIN SENDs included), and mcsim's routes counted for the data alone "
        f"(mcsim.reference.traffic); the authors' rule gives {authors:.2f} x for P={p} on their 1024-host tree, "
        "where it counts a backward send as 2 hops (mcsim report: traffic-vs-p)",
    )


def _finish_ps(row: dict[str, Any]) -> int:
    """When both collectives of an AG || RS run had finished."""
    return max(int(row["time_ps"]), int(row["concurrent_time_ps"]))


def _ag_rs(claim: Claim, ctx: Context) -> Measure:
    rows = sweep_rows(claim, ctx)
    by = {(r["algorithm"], r["overlap_algorithm"]): r for r in rows}
    pairs = (("ring", "ring"), ("mcast", "innet"), ("mcast", "ring"))
    rings, offloaded, mcast_ring = (_finish_ps(by[pair]) for pair in pairs)
    p = int(by["ring", "ring"]["ranks"])
    return Measure(
        f"{rings / offloaded:.2f} x speedup",
        rings / offloaded,
        f"AG||RS finish, ring || ring over multicast AG || in-network RS ({where(rows)}); at most "
        f"2(P-1)/(P+1) = {2 * (p - 1) / (p + 1):.2f}: two rings move 2(P-1)N through each link, the offloaded pair "
        f"(P+1)N. Multicast AG || ring RS gives {rings / mcast_ring:.2f}x: every rank still receives (P-1)N for "
        "the ring RS",
    )


def _scales(claim: Claim, ctx: Context) -> Measure:
    from mcsim.config import dpa

    rows = sweep_rows(claim, ctx)
    r = rows[0]
    received_bps = lacking_b("allgather", r["bytes_per_rank_b"], r["ranks"]) * 8 * PS_PER_S / r["time_ps"]
    threads = DPA_HALF_THREADS
    have = ", ".join(
        f"{name} {dpa.even_capacity('zero_copy', CHUNK_B, dpa.profile(name, threads=threads)) / 1e6:.0f} M"
        for name in dpa.PROFILES
    )
    return Measure(
        f"{received_bps / 1e12:.2f} Tbit/s",
        received_bps / 1e12,
        f"bytes each rank received per second, multicast Allgather at 1.6 Tbit/s links on the zero-copy path "
        f"with {threads} DPA threads ({where(rows)}; {r['time_over_bound']:.2f} x N(P-1)/BW); the runs use the "
        f"default (sc24) sharing; closed form, {threads} threads: {have} chunks/s, "
        f"{dpa.packet_rate(parse_rate('1.6Tbps'), CHUNK_B) / 1e6:.1f} M needed",
    )


def _threads(n: int | None, most: int) -> str:
    return f">{most}" if n is None else str(n)


def _dpa_sixteenth(claim: Claim, ctx: Context) -> Measure:
    from mcsim.config import dpa

    cfg = ctx.dpa()
    need = dpa.threads_needed(parse_rate("400Gbps"), CHUNK_B, "staging", dpa=cfg)
    most = cfg.cores * cfg.threads_per_core
    return Measure(
        "-" if need is None else f"{need} DPA threads ({need}/{most})",
        None if need is None else float(need),
        f"closed form (mcsim.config.dpa.threads_needed, profile {ctx.profile}, no packet simulation): fewest threads "
        "for line rate at 400 Gbit/s, 4 KiB chunks, staging (datagram) path",
        f"{_threads(need, most)} threads",
    )


def _dpa_zero_copy(claim: Claim, ctx: Context) -> Measure:
    from mcsim.config import dpa

    cfg = ctx.dpa()
    rate = parse_rate("400Gbps")
    zc, st = (dpa.threads_needed(rate, CHUNK_B, path, dpa=cfg) for path in ("zero_copy", "staging"))
    return Measure(
        f"{cfg.staging_cycles / cfg.zero_copy_cycles:g} x",
        cfg.staging_cycles / cfg.zero_copy_cycles,
        f"DpaConfig.staging_cycles / zero_copy_cycles; threads for 400 Gbit/s of 4 KiB (closed form, profile "
        f"{ctx.profile}): staging {st}, zero copy {zc}",
    )


def _dpa_half(claim: Claim, ctx: Context) -> Measure:
    from mcsim.config import dpa

    cfg = ctx.dpa()
    most = cfg.cores * cfg.threads_per_core
    need = {r: dpa.threads_needed(parse_rate(r), CHUNK_B, "staging", dpa=cfg) for r in DPA_CLAIM_RATES}
    text = ", ".join(f"{_threads(n, most)} at {r}" for r, n in need.items())
    peak = dpa.capacity("staging", CHUNK_B, dataclasses.replace(cfg, threads=most))
    short = [r for r, n in need.items() if n is None]
    worst = None if short else float(max(n for n in need.values() if n is not None))
    why = (
        f"closed form (mcsim.config.dpa.threads_needed, profile {ctx.profile}, no packet simulation), staging path, "
        "4 KiB chunks"
    )
    if short:
        rates = ", ".join(f"{dpa.packet_rate(parse_rate(r), CHUNK_B) / 1e6:.1f} at {r}" for r in short)
        why += (
            f": all {most} threads peak at {peak / 1e6:.1f} M datagrams/s, {rates} needed; the model's staging "
            f"cost is 4x zero copy (dpa-zc-4x), its sharing the {ctx.profile} profile's"
        )
    return Measure(f"threads {text}", worst, why, f"threads {text}")


def _dpa_thread(claim: Claim, ctx: Context) -> Measure:
    from mcsim.config import dpa

    cfg = ctx.dpa()
    per_thread = dpa.thread_rate("zero_copy", CHUNK_B, cfg) * CHUNK_B / 2**30
    half = dpa.capacity("zero_copy", CHUNK_B, dataclasses.replace(cfg, threads=128))
    need = dpa.packet_rate(parse_rate("1.6Tbps"), CHUNK_B)
    return Measure(
        f"{per_thread:.2f} GiB/s",
        per_thread,
        f"one lone thread's zero-copy completions of 4 KiB (closed form); beside it, profile {ctx.profile}: 128 "
        f"threads do {half / 1e6:.1f} M chunks/s, 1.6 Tbit/s needs {need / 1e6:.1f} M",
    )


def _testbed(claim: Claim, ctx: Context) -> Measure:
    from mcsim.topology.files import resolve
    from mcsim.topology.summary import summary

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


Evaluator = Callable[[Claim, Context], Measure]
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
    **NODE_EVALUATORS,
}


def verdict(claim: Claim, value: float | None) -> tuple[float | None, str]:
    """(ratio simulated / published, verdict) of a claim whose evaluation found ``value``: "input" for
    an input that matches; a conditional claim gets an outcome's verdict here (under one profile), which
    :func:`evaluate` turns into "conditional" or "differs"."""
    if claim.kind == "not published" or claim.value is None:
        return None, "not published"
    if claim.kind == "not modelled":
        return None, "not modelled"
    if value is None:
        return None, "differs"
    ratio = value / claim.value
    off = ratio - 1 if claim.relation == "at_most" else abs(ratio - 1)
    said = "reproduced" if off <= PRECISION else "within tolerance" if off <= claim.tolerance else "differs"
    return ratio, "input" if claim.kind in INPUT_KINDS and said in HOLDS else said


def _conditional(claim: Claim, ctx: Context) -> tuple[Measure, float | None, str, str]:
    """A conditional claim under the chosen profile and every other: (the chosen profile's measure and
    ratio, "conditional" if it holds under ``claim.holds_under`` else "differs", the condition text)."""
    from mcsim.config.dpa import PROFILES

    names = [ctx.profile, *(name for name in PROFILES if name != ctx.profile)]
    found = {name: EVALUATORS[claim.id](claim, dataclasses.replace(ctx, profile=name)) for name in names}
    said = {name: verdict(claim, m.value) for name, m in found.items()}
    parts = []
    for name in names:
        brief = found[name].brief or found[name].simulated
        holds = said[name][1] in HOLDS
        parts.append(f"holds under {name} ({brief})" if holds else f"{name}: {said[name][1]} ({brief})")
    kind = "conditional" if said[claim.holds_under or DEFAULT_PROFILE][1] in HOLDS else "differs"
    return found[ctx.profile], said[ctx.profile][0], kind, "; ".join(parts)


def _row(claim: Claim, ctx: Context) -> Row:
    if claim.id not in EVALUATORS:
        raise McsimError(f"claim {claim.id!r} has no evaluator; the ids: {', '.join(EVALUATORS)}")
    condition = ""
    if claim.kind == "conditional":
        found, ratio, said, condition = _conditional(claim, ctx)
    else:
        found = EVALUATORS[claim.id](claim, ctx)
        ratio, said = verdict(claim, found.value)
    return Row(
        id=claim.id,
        published=claim.published(),
        simulated=found.simulated,
        ratio=ratio,
        verdict=said,
        condition=condition,
        must_reproduce=claim.must_reproduce,
        reason=found.reason,
        note=claim.note,
    )


def check_profile(profile: str, where: str, name: str) -> None:
    """``profile`` must name a DPA profile (mcsim.config.dpa.PROFILES): else one McsimError line."""
    from mcsim.config.dpa import PROFILES

    try:
        pick("DPA profile", profile, PROFILES)
    except McsimError as exc:
        raise McsimError(f"{where}: {name}={profile!r}: {exc}") from None


def check_options(
    claims: Sequence[Claim], *, store: str | os.PathLike[str], workers: int | None, profile: str, where: str
) -> None:
    """Refuse, before any work, a profile not in mcsim.config.dpa.PROFILES, workers < 1, and a store that
    cannot be written (when a claim has runs); ``where`` names the caller (e.g. "compare")."""
    check_profile(profile, where, "profile")
    if workers is not None:
        check_workers(where, "workers", workers)
    if any(c.runs is not None for c in claims):
        check_writable(store, f"{where}: store")


def evaluate(
    claims: Sequence[Claim],
    *,
    quick: bool = False,
    store: str | os.PathLike[str] = DEFAULT_STORE,
    workers: int | None = None,
    profile: str = DEFAULT_PROFILE,
    progress: Progress | None = None,
) -> list[Row]:
    """One Row per claim, in order (runs through mcsim.sweep.run_sweep into ``store``; the DPA claims' closed
    forms under ``profile``, the conditional ones under every profile); ``progress``: a line per claim."""
    check_options(claims, store=store, workers=workers, profile=profile, where="compare")
    ctx = Context(quick=quick, store=Path(store), workers=workers, profile=profile)
    rows = []
    for i, claim in enumerate(claims, 1):
        if progress is not None:
            spec = claim.spec(quick)
            work = runs_text([spec] if spec is not None else [], ctx.store)
            if spec is None:
                work = "the topology file" if claim.kind == "structure" else f"closed form (profile {profile})"
                work += ", nothing to simulate"
            progress.line(f"claim [{i}/{len(claims)}] {claim.id}: {work}")
        rows.append(_row(claim, ctx))
    if progress is not None:
        progress.line(verdict_summary(rows))
    return rows


def compare(
    ids: Sequence[str] | None = None,
    quick: bool = False,
    store: str | os.PathLike[str] = DEFAULT_STORE,
    workers: int | None = None,
    *,
    profile: str = DEFAULT_PROFILE,
    progress: Progress | None = None,
) -> list[Row]:
    """Compare the claims named by ``ids`` (all if None) with mcsim; --quick: smaller runs; ``profile``:
    the DPA profile of the closed forms (mcsim.config.dpa.PROFILES)."""
    chosen = select(None if ids is None else list(ids), quick=quick)
    return evaluate(chosen, quick=quick, store=store, workers=workers, profile=profile, progress=progress)


def claims_of(keys: Iterable[str], *, quick: bool = False) -> list[Claim]:
    """The claims whose runs (quick or full mode) are all among the store ``keys`` of runs already made
    (mcsim.sweep.SweepReport.keys): those a sweep's results can be compared on without running more."""
    from mcsim.sweep.runner import key_of, versions

    have, vers = set(keys), versions()
    chosen = []
    for claim in select(None, quick=quick):
        spec = claim.spec(quick)
        if spec is not None and {key_of(r, vers) for r in spec.runs()} <= have:
            chosen.append(claim)
    return chosen


def exit_status(rows: Sequence[Row]) -> int:
    """1 if a must-reproduce claim's verdict is "differs" (an input that no longer matches, a conditional
    claim false under its own profile, an outcome off its tolerance), else 0."""
    return 1 if any(r.must_reproduce and r.verdict == "differs" for r in rows) else 0


def counts(rows: Sequence[Row]) -> dict[str, int]:
    """How many rows have each verdict, in VERDICTS' order (an input or conditional claim is never
    counted as reproduced)."""
    have = Counter(r.verdict for r in rows)
    return {v: have[v] for v in VERDICTS}


def verdict_summary(rows: Sequence[Row]) -> str:
    """``"9 claims: 2 reproduced, 1 within tolerance, 3 input, 2 conditional, 1 differs"`` (verdicts
    with no claim left out)."""
    shown = ", ".join(f"{n} {v}" for v, n in counts(rows).items() if n)
    return f"{len(rows)} claim{'s' * (len(rows) != 1)}" + (f": {shown}" if shown else "")


def verdict_text(row: Row) -> str:
    """The verdict as the table and the report show it: with its condition, e.g. "conditional: holds
    under sc24 (16 threads); sdr-rdma: differs (22 threads)"."""
    return f"{row.verdict}: {row.condition}" if row.condition else row.verdict


def table_text(rows: Sequence[Row]) -> str:
    """The rows as the terminal table `mcsim compare` prints (header, a line per claim; each column as
    wide as its widest cell, the note last)."""
    cells = [
        dataclasses.asdict(r)
        | {
            "ratio": "-" if r.ratio is None else f"{r.ratio:.3f}",
            "verdict": verdict_text(r),
            "must": "yes" if r.must_reproduce else "no",
        }
        for r in rows
    ]
    widths = {name: max([len(name), *(len(str(c[name])) for c in cells)]) for name in TABLE_COLUMNS}
    widths[TABLE_COLUMNS[-1]] = 0
    table = Table([Column(n, width=widths[n], left=n not in NUMERIC) for n in TABLE_COLUMNS])
    return "\n".join([table.header(), *(table.row(c).rstrip() for c in cells)]) + "\n"
