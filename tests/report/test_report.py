# SPDX-License-Identifier: GPL-2.0-only
"""`mcsim report`: one self-contained HTML page with every figure (and its numbers and re-run recipe)
and the compare table; it renders in a real browser (headless Chromium) with no console error, its
plotted numbers are the stored runs' and the closed forms', and a second report reuses every run."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sqlite3
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mcsim.cli import main
from mcsim.config import dpa
from mcsim.errors import McsimError
from mcsim.reference.claims import CLAIMS
from mcsim.reference.compare import VERDICTS
from mcsim.reference.traffic import POWERS, authors_table
from mcsim.report import collective_figures, figures
from mcsim.report.page import report
from mcsim.sweep import SweepSpec
from mcsim.sweep.runner import run_key, versions
from mcsim.units import format_rate, parse_rate

pytest.importorskip("matplotlib")
pytest.importorskip("jinja2")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# as root in a sandbox without a network: no sandbox, no GPU, no background connections
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Page(HTMLParser):
    """What the page holds: sections by id, the figures' svg elements, tables' rows, <pre> texts, and
    every reference to another file (src, href, url()) that would make it not self-contained."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.figures: dict[str, int] = {}  # data-figure -> svg elements inside
        self.external: list[str] = []
        self.pres: list[str] = []
        self.rows: list[list[str]] = []
        self.row_attrs: list[dict[str, str]] = []  # each row's <tr> attributes (class, data-verdict)
        self.summary: dict[str, str] = {}  # the compare summary's spans: verdict -> "<n> <verdict>" and class
        self.scripts = 0
        self._figure: str | None = None
        self._pre: list[str] | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a and tag == "section":
            self.ids.append(a["id"])
        if tag == "figure":
            self._figure = a.get("data-figure")
            self.figures[self._figure] = 0
        if tag == "svg" and self._figure is not None:
            self.figures[self._figure] += 1
        if tag == "script":
            self.scripts += 1
        for name in ("src", "href"):
            if name in a and not a[name].startswith("#"):
                self.external.append(a[name])
        if tag == "link":
            self.external.append(str(a))
        if tag == "pre":
            self._pre = []
        if tag == "tr":
            self._row = []
            self.row_attrs.append(a)
        if tag == "span" and "data-count" in a:
            self.summary[a["data-count"]] = a["class"]
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None
        if tag == "pre" and self._pre is not None:
            self.pres.append("".join(self._pre))
            self._pre = None
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._pre is not None:
            self._pre.append(data)
        if self._cell is not None:
            self._cell.append(data)


def store_rows(store: Path) -> dict[str, tuple]:
    with sqlite3.connect(store) as db:
        return {row[0]: row for row in db.execute("SELECT * FROM runs ORDER BY key")}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The --quick report, made once through the command (one worker: the machine is shared)."""
    folder = tmp_path_factory.mktemp("report")
    out, store = folder / "report.html", folder / "compare.sqlite"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["report", "--quick", "--store", str(store), "-o", str(out), "--workers", "1"]) == 0
    panels = figures.panels(True, store, 1)  # all reused from the store: the numbers the page plotted
    return out, store, panels, err.getvalue()


def test_page_has_every_figure_as_inline_svg_and_is_self_contained(made):
    out, *_ = made
    page = Page(out.read_text(encoding="utf-8"))
    assert set(page.figures) == set(figures.FIGURES)
    assert all(n >= 1 for n in page.figures.values())
    assert page.ids == [*figures.FIGURES, "compare"]
    assert page.external == [] and page.scripts == 0  # nothing from the network, no script
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # a normal file, not mkstemp's 0600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_compare_table_has_a_row_per_claim_with_its_verdict_and_note(made):
    out, *_ = made
    page = Page(out.read_text(encoding="utf-8"))
    rows = {r[0]: (r, a) for r, a in zip(page.rows, page.row_attrs, strict=True) if len(r) == 7 and r[0] != "id"}
    assert set(rows) == {c.id for c in CLAIMS}
    for claim in CLAIMS:
        cells, attrs = rows[claim.id]
        kind = attrs["data-verdict"]
        assert kind in VERDICTS and attrs["class"] == f"verdict-{kind.replace(' ', '-')}"
        assert cells[1] == claim.published()
        assert cells[4].startswith(kind) and cells[4].endswith(" (must reproduce)") == claim.must_reproduce
        assert cells[5].strip()  # a reason
        assert cells[6] == claim.note
    # inputs and conditional claims have their own verdicts and colours, never the reproduced ones
    for cid in ("dpa-thread", "dpa-zc-4x", "testbed"):
        assert rows[cid][1]["data-verdict"] == "input"
    for cid in ("dpa-1/16", "dpa-half"):
        assert rows[cid][1]["data-verdict"] == "conditional"
        shown = rows[cid][0][4]
        assert shown.startswith("conditional: holds under sc24 (") and "; sdr-rdma: differs (" in shown
    # the summary counts each verdict once, in its own colour
    said = [a["data-verdict"] for _, a in rows.values()]
    assert page.summary == {v: f"verdict-{v.replace(' ', '-')}" for v in VERDICTS if v in said}
    text = out.read_text(encoding="utf-8")
    assert all(f"{said.count(v)} {v}</span>" in text for v in set(said))
    css = text.split("<style>", 1)[1].split("</style>", 1)[0]
    colour = {m[0]: m[1] for m in re.findall(r"\.verdict-([a-z-]+) \{ background: (#[0-9a-f]+); \}", css)}
    assert colour["input"] != colour["reproduced"] != colour["conditional"] != colour["within-tolerance"]
    assert {colour["input"], colour["conditional"]}.isdisjoint({colour["reproduced"], colour["within-tolerance"]})


def test_progress_lines_name_each_figure_and_claim(made):
    *_, err = made
    lines = err.splitlines()
    figs = [line for line in lines if line.startswith("mcsim report: figure [")]
    claims = [line for line in lines if line.startswith("mcsim report: claim [")]
    n = len(figures.FIGURES)
    assert [line.split("] ")[1].split(":")[0] for line in figs] == list(figures.FIGURES)
    assert all(f"[{i}/{n}]" in line for i, line in enumerate(figs, 1))
    assert figs[0] == f"mcsim report: figure [1/{n}] busbw-vs-size: 10 runs: 0 from the store, 10 to simulate"
    assert figs[3].endswith("dpa-threads: closed form, nothing to simulate")
    assert figs[7].endswith("fsdp-timeline: 2 workload runs, simulated (not stored)")  # not "closed form"
    assert [line.split("] ")[1].split(":")[0] for line in claims] == [c.id for c in CLAIMS]
    assert lines[-1].startswith(f"mcsim report: {len(CLAIMS)} claims: ")
    assert len(lines) == n + len(CLAIMS) + 1  # one line each, no per-run lines


def test_every_sweep_of_a_figure_reruns_from_the_toml_on_the_page(made):
    """The page shows each figure's sweep spec as TOML: read back, it gives the same runs (store keys)."""
    out, _, panels, _ = made
    page = Page(out.read_text(encoding="utf-8"))
    specs = [s for p in panels for s in p.specs]
    # busbw, rate (host and DPA), traffic, ag-rs (rings and the offloaded pair), bcast-vs-p, allreduce
    assert len(specs) == 8
    vers = versions()
    for spec in specs:
        (text,) = [t for t in page.pres if t.startswith(f'name = "{spec.name}"')]
        again = SweepSpec.from_dict(tomllib.loads(text))
        assert [run_key(r.scenario, vers) for r in again.runs()] == [run_key(r.scenario, vers) for r in spec.runs()]
    assert any("threads_needed" in t for t in page.pres) and any("authors_table" in t for t in page.pres)


def test_plotted_numbers_hold_their_bounds_and_closed_forms(made):
    """busbw never above the link's data rate; time never below the receive bound; the traffic and DPA
    figures' numbers are exactly the closed forms'."""
    _, store, panels, _ = made
    by = {p.id: p for p in panels}
    busbw = by["busbw-vs-size"]
    assert len(busbw.rows) == 2 * len(figures.SIZES) and not busbw.notes
    runs, _ = figures.Runs(store, 1)(figures.busbw_spec(True))
    (data_bps,) = {r["data_rate_bps"] for r in runs}  # FDR after its 64b/66b line code
    assert 54e9 < data_bps < 56e9
    data_gbps = data_bps / 1e9
    assert all(0 < gbps <= data_gbps for _, _, gbps in busbw.rows)
    rate = by["time-vs-rate"]
    assert len(rate.rows) == 3 * len(figures.RATES)
    assert all(t >= 1.0 for _, _, t in rate.rows)
    traffic = by["traffic-vs-p"]
    authors = {r["p"]: r for r in authors_table()}
    for source, p, ring, linear in traffic.rows:
        if source == "authors":
            assert (ring, linear) == (round(authors[p]["reduction_ring"], 4), round(authors[p]["reduction_linear"], 4))
    assert {p for s, p, *_ in traffic.rows if s == "mcsim counted"} == set(POWERS)
    assert {p for s, p, *_ in traffic.rows if s == "mcsim simulated"} == set(figures.QUICK_TRAFFIC_RANKS)
    for profile, path, rate_text, threads in by["dpa-threads"].rows:
        need = dpa.threads_needed(parse_rate(rate_text), figures.CHUNK_B, path, dpa=dpa.profile(profile))
        assert threads == ("not sustainable" if need is None else need)
    assert {format_rate(parse_rate(r)) for r in figures.RATES} == {r for _, _, r, _ in by["dpa-threads"].rows}
    assert {p for p, *_ in by["dpa-threads"].rows} == set(dpa.PROFILES)  # the chosen one and the other
    ag_rs = by["ag-rs"]
    offloaded = [f for pair, _, f in ag_rs.rows if "in-network" in pair]
    assert len(offloaded) == len(figures.AG_RS_SIZES)
    # with a ring RS no pair beats both receive bounds; the offloaded pair sends (P+1)N per rank
    # (16 ranks: (P+1)/(P-1) = 17/15 receive bounds) and beats them
    assert all(f >= 2.0 for pair, _, f in ag_rs.rows if "in-network" not in pair)
    assert all(17 / 15 <= f < 2.0 for f in offloaded)
    # Broadcast vs P: none below N/BW, the binomial tree's root sends ceil(log2 P) buffers, and the
    # multicast is the fastest at every P > 2 (at 2 ranks all three send the buffer once)
    bcast = {(a, p): t for a, p, t in by["bcast-vs-p"].rows}
    assert {p for _, p in bcast} == set(collective_figures.QUICK_BCAST_RANKS) and len(bcast) == 3 * 4
    assert all(t >= 1.0 for t in bcast.values())
    assert all(bcast["binomial", p] >= (p - 1).bit_length() for p in collective_figures.QUICK_BCAST_RANKS)
    assert all(bcast["mcast", p] < min(bcast["chain", p], bcast["binomial", p]) for p in (4, 8, 16))
    # Allreduce: the host-summed ones never below 2(P-1)/P of N/BW (16 ranks: 15/8), in-network never below 1,
    # its two-phase variant never below (2P-1)/P (31/16)
    allreduce = {(a, size): t for a, size, t in by["allreduce"].rows}
    assert len(allreduce) == 4 * len(collective_figures.ALLREDUCE_SIZES)
    assert all(t >= 15 / 8 for (a, _), t in allreduce.items() if a in ("ring", "ring_mcast"))
    assert all(t >= 1.0 for (a, _), t in allreduce.items() if a == "innet")
    assert all(t >= 31 / 16 for (a, _), t in allreduce.items() if a == "innet_mcast")
    # the FSDP timeline: both pairs, each iteration its compute plus its exposed communication, the network's
    # pair exposing less
    fsdp = {pair: (it, comp, exp) for pair, it, comp, exp in by["fsdp-timeline"].rows}
    assert set(fsdp) == {"AG ring, RS ring", "AG mcast, RS innet"}
    assert all(it == pytest.approx(comp + exp, abs=0.2) and exp >= 0 for it, comp, exp in fsdp.values())
    assert fsdp["AG mcast, RS innet"][2] < fsdp["AG ring, RS ring"][2]


def test_second_report_reuses_every_run(made, tmp_path):
    out, store, *_ = made
    before = store_rows(store)
    again = tmp_path / "again.html"
    assert main(["report", "--quick", "--store", str(store), "-o", str(again), "--workers", "1"]) == 0
    assert store_rows(store) == before  # nothing ran again
    strip = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")  # the time the page was made
    assert strip.sub("", again.read_text()) == strip.sub("", out.read_text())  # the same page


def test_page_renders_in_headless_chromium(made, tmp_path):
    """A real browser loads the page: no console error or page error, every figure laid out with a
    size, and a screenshot that is not blank."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    import matplotlib.image

    out, *_ = made
    shot = tmp_path / "page.png"
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on(
                "console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
            )
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
            page.goto(out.as_uri(), wait_until="load")
            boxes = {
                fid: page.locator(f'figure[data-figure="{fid}"] svg').first.bounding_box() for fid in figures.FIGURES
            }
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert problems == []
    for fid, box in boxes.items():
        assert box is not None and box["width"] > 300 and box["height"] > 200, (fid, box)
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[0] > 2000  # the whole page: five figures and the table
    ink = (pixels < 0.9).any(axis=-1).mean()  # share of pixels that are not white
    assert 0.02 < ink < 0.9
    assert len({tuple(p) for p in pixels[::7, ::7].reshape(-1, 3).round(2).tolist()}) > 20  # colours: the plots


def test_unknown_figure_is_one_error_line(tmp_path, capsys):
    assert main(["report", "--figures", "busbw-vs-size,nope", "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'nope'" in err and all(f in err for f in figures.FIGURES)


def test_missing_report_extra_is_one_error_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)  # as if the report extra were not installed
    assert main(["report", "--quick", "-o", str(tmp_path / "r.html"), "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install 'mcsim[report]'" in err
    assert not (tmp_path / "s.sqlite").exists()  # nothing ran


def test_report_into_a_missing_folder_is_one_error_line(tmp_path):
    with pytest.raises(McsimError, match="does not exist"):
        report(tmp_path / "nope" / "r.html", quick=True, store=tmp_path / "s.sqlite")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"figures": []}, r"^report: figures=\[\] names no figure"),
        ({"workers": 0}, r"^report: workers=0 must be 1\.\.1024"),
        ({"profile": "x"}, r"^report: profile='x': unknown DPA profile 'x'"),
        ({"store": "{tmp}/r.html"}, r"^report: out='.*r.html' is the store"),
    ],
)
def test_report_api_refuses_what_the_command_refuses(changes, message, tmp_path):
    kwargs = {"quick": True, "store": tmp_path / "s.sqlite"} | {
        k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) and k == "store" else v for k, v in changes.items()
    }
    with pytest.raises(McsimError, match=message):
        report(tmp_path / "r.html", **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_profile_sets_the_dpa_closed_forms_of_the_page(made, tmp_path):
    """--profile sdr-rdma: the DPA figure draws that profile first, and the conditional claims give its
    verdict first, sc24's beside it; the runs are reused."""
    _, store, *_ = made
    before = store_rows(store)
    out = tmp_path / "sdr.html"
    report(out, store=store, quick=True, workers=1, figures=["dpa-threads"], profile="sdr-rdma")
    assert store_rows(store) == before
    page = Page(out.read_text(encoding="utf-8"))
    rows = {r[0]: r for r in page.rows if len(r) == 7}
    need = dpa.threads_needed(parse_rate("400Gbps"), figures.CHUNK_B, "staging", dpa=dpa.profile("sdr-rdma"))
    assert rows["dpa-1/16"][4].startswith(f"conditional: sdr-rdma: differs ({need} threads); holds under sc24 (")
    assert "profile sdr-rdma" in out.read_text(encoding="utf-8")


# (arguments, the one error line); {tmp}: the test's folder. Each is refused before any work.
BAD_OPTIONS = [
    (["--figures", ""], r"report: --figures='' names nothing"),
    (["--figures", ",,"], r"report: --figures=',,' names nothing"),
    (["--figures", "ag-rs,,dpa-threads"], r"report: --figures='ag-rs,,dpa-threads' has an empty id"),
    (["--figures", "ag-rs,ag-rs"], r"report: --figures='ag-rs,ag-rs' names 'ag-rs' twice"),
    (["--figures", "nope"], r"unknown figure 'nope'; the figures: busbw-vs-size, "),
    (["--workers", "0"], r"report: --workers=0 must be 1\.\.1024"),
    (["--workers", "-1"], r"report: --workers=-1 must be 1\.\.1024"),
    (["--profile", "sc"], r"report: --profile='sc': unknown DPA profile 'sc'"),
    (["-o", "{tmp}/nope/r.html"], r"report: -o='.*/nope/r.html': folder '.*/nope' does not exist"),
    (["-o", "{tmp}"], r"report: -o='.*' is a folder; give a file name"),
    (["-o", ""], r"report: -o='' is a folder; give a file name"),
    (["-o", "/proc/r.html"], r"report: -o='/proc/r.html' cannot be written"),
    (["--store", "{tmp}/nope/s.sqlite"], r"report: --store='.*/nope/s.sqlite': folder '.*/nope' does not exist"),
    (["--store", "/proc/s.sqlite"], r"report: --store='/proc/s.sqlite' cannot be written"),
    (["--store", "{tmp}/same", "-o", "{tmp}/same"], r"report: -o='.*/same' is the --store; the page would overwrite"),
    (["--store", "{tmp}/s.html", "-o", "{tmp}/./s.html"], r"report: -o='.*/\./s\.html' is the --store; the page "),
    # issue 49: the page is HTML, whatever -o ends in (r.pdf held HTML)
    (["-o", "{tmp}/r.pdf"], r"report: -o='.*/r\.pdf' must end in \.html \(the report is one HTML page; a browser "),
    (["-o", "{tmp}/r"], r"report: -o='.*/r' must end in \.html"),
]


@pytest.mark.parametrize(("args", "message"), BAD_OPTIONS)
def test_bad_report_options_are_one_error_line_before_any_work(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default report.html and compare.sqlite would go here
    argv = ["report", "--quick", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("mcsim: error: "), err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []  # no page, no store: nothing ran


def test_a_figure_that_simulates_outside_a_sweep_is_not_called_a_closed_form(tmp_path):
    """fsdp-timeline runs two workloads (no sweep): its progress line says simulated, dpa-threads' closed form."""
    assert figures.FIGURES["fsdp-timeline"].runs_text(True, tmp_path / "s.sqlite") == (
        "2 workload runs, simulated (not stored)"
    )
    assert figures.FIGURES["dpa-threads"].runs_text(True, tmp_path / "s.sqlite") == "closed form, nothing to simulate"
