# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.reference: every published claim is data with an honest kind, and `mcsim compare` gives each
a row with a verdict and a reason, its runs stored in and reused from a sweep store."""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from pathlib import Path

import pytest

from mcsim import dpa
from mcsim.cli import main
from mcsim.reference import claims
from mcsim.reference.claims import BY_ID, CLAIMS, Claim
from mcsim.reference.compare import VERDICTS, evaluate, exit_status, verdict

# the published record sits beside the repository (../shared/PUBLISHED.md), as the issue names it
PUBLISHED = Path(__file__).resolve().parents[2] / "shared" / "PUBLISHED.md"
TRAFFIC = "traffic-2x"  # needs mcsim.reference.traffic (the traffic slice)
SIMULATED = [c.id for c in CLAIMS if c.runs is not None and c.id != TRAFFIC]


def published_ids() -> list[str]:
    """The ids of PUBLISHED.md's Claims table: the first cell of each row under "## Claims"."""
    if not PUBLISHED.is_file():
        pytest.skip(f"the published record {PUBLISHED} is not beside this checkout")
    section = PUBLISHED.read_text().split("## Claims", 1)[1].split("\n## ", 1)[0]
    ids = [m.group(1).strip() for m in re.finditer(r"^\|([^|]+)\|", section, re.M)]
    return [i for i in ids if i not in ("id",) and not set(i) <= set("-: ")]


def store_rows(store: Path) -> dict[str, tuple]:
    with sqlite3.connect(store) as db:
        return {row[0]: row for row in db.execute("SELECT * FROM runs ORDER BY key")}


@pytest.fixture(scope="module")
def quick_rows(tmp_path_factory):
    """Every claim but traffic-2x, --quick, into one store (one worker: the machine is shared)."""
    store = tmp_path_factory.mktemp("compare") / "compare.sqlite"
    ids = [c.id for c in CLAIMS if c.id != TRAFFIC]
    return store, {r.id: r for r in evaluate(claims.select(ids, quick=True), quick=True, store=store, workers=1)}


def test_every_published_claim_is_data_with_its_id():
    ids = published_ids()
    assert len(ids) == len(set(ids)) >= 9
    assert sorted(ids) == sorted(BY_ID)


def test_every_claim_has_a_row_with_a_verdict_and_a_one_line_reason(quick_rows):
    _, rows = quick_rows
    assert set(rows) == set(BY_ID) - {TRAFFIC}
    for row in rows.values():
        assert row.verdict in VERDICTS
        assert row.reason.strip() and "\n" not in row.reason
        assert row.published == BY_ID[row.id].published() != "-"


def test_calibrated_claims_are_labelled_so_and_match_the_models_constants(quick_rows):
    _, rows = quick_rows
    calibrated = {c.id for c in CLAIMS if c.kind == "calibrated input"}
    assert calibrated == {"dpa-thread", "dpa-zc-4x"}
    for cid in calibrated:
        assert rows[cid].verdict == "calibrated input"
    cfg = dpa.DpaConfig()
    # the constants dpa.py fitted: 577 cycles per completion = 11.9 GiB/s of 4 KiB; staging = 4 x that
    assert dpa.thread_rate("zero_copy", 4096, cfg) * 4096 / 2**30 == pytest.approx(BY_ID["dpa-thread"].value, 1e-3)
    assert cfg.staging_cycles / cfg.zero_copy_cycles == BY_ID["dpa-zc-4x"].value
    assert rows["dpa-thread"].ratio == pytest.approx(1, abs=1e-3)


def test_the_dpa_footprint_claims_are_outcomes_the_default_profile_reproduces(quick_rows):
    _, rows = quick_rows
    for cid in ("dpa-1/16", "dpa-half"):
        assert BY_ID[cid].kind == "outcome" and BY_ID[cid].must_reproduce
        assert rows[cid].verdict == "reproduced", rows[cid].reason
    # 16 staging threads at 400G (1/16 of 256); at most 63 for 400/800/1600G (<= 128)
    assert rows["dpa-1/16"].simulated.startswith("16 DPA threads")
    assert "63 at 1.6Tbps" in rows["dpa-half"].simulated


def test_kinds_and_the_claim_mcsim_cannot_reproduce(quick_rows):
    _, rows = quick_rows
    assert BY_ID["testbed"].kind == "structure" and rows["testbed"].verdict == "reproduced"
    ag_rs = BY_ID["ag-rs-2x"]
    assert ag_rs.kind == "outcome" and not ag_rs.must_reproduce
    # quick: 16 ranks cap the offloaded pair's speedup at 2(P-1)/(P+1) = 1.76 (the claim needs ~2, P large)
    assert rows["ag-rs-2x"].verdict == "differs" and "2(P-1)/(P+1) = 1.76" in rows["ag-rs-2x"].reason
    assert 0.9 * 2 * 15 / 17 <= rows["ag-rs-2x"].ratio * BY_ID["ag-rs-2x"].value <= 2 * 15 / 17
    # the DPA claims are closed forms (no sweep); the simulated ones have a quick and a full sweep
    assert all((c.runs is None) == (c.quick_runs is None) for c in CLAIMS)
    assert {c.id for c in CLAIMS if c.runs is not None} == {TRAFFIC, "scales-1.6T", "ring-bound", "ag-rs-2x"}
    assert exit_status(list(rows.values())) == 0


def test_verdict_rules():
    eq = Claim(id="x", statement="s", value=2.0, unit="x", source="s", kind="outcome", tolerance=0.1,
               must_reproduce=True, quick=True)  # fmt: skip
    assert verdict(eq, 2.0) == (1.0, "reproduced")
    assert verdict(eq, 2.1) == (pytest.approx(1.05), "within tolerance")
    assert verdict(eq, 1.5)[1] == verdict(eq, None)[1] == "differs"
    at_most = dataclasses.replace(eq, relation="at_most")
    assert verdict(at_most, 0.5) == (0.25, "reproduced")  # the bound holds
    assert verdict(at_most, 2.4)[1] == "differs"
    assert verdict(dataclasses.replace(eq, kind="calibrated input"), 2.0) == (1.0, "calibrated input")
    gap = dataclasses.replace(eq, kind="not published", value=None)
    assert verdict(gap, 3.0) == (None, "not published")


def test_a_must_reproduce_claim_that_differs_gives_exit_status_1(quick_rows):
    store, rows = quick_rows
    strict = dataclasses.replace(BY_ID["ring-bound"], tolerance=0.0)  # the published number exactly
    (row,) = evaluate([strict], quick=True, store=store, workers=1)
    assert row.ratio == rows["ring-bound"].ratio and row.ratio is not None and row.ratio > 1.005
    assert row.verdict == "differs" and exit_status([row]) == 1
    assert exit_status([dataclasses.replace(row, must_reproduce=False)]) == 0


def test_compare_command_reuses_its_store(tmp_path, capsys):
    store = tmp_path / "c.sqlite"
    argv = ["compare", "--quick", "--only", "ring-bound", "--store", str(store), "--workers", "1"]
    assert main(argv) == 0
    first = store_rows(store)
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["id", "published", "simulated", "ratio"]
    assert len(out) == 2 and out[1].startswith("ring-bound ")
    assert len(first) == 2  # ring and multicast
    assert main([*argv, "--format", "json"]) == 0
    assert store_rows(store) == first  # nothing ran again: every stored row is byte-identical
    assert '"verdict"' in capsys.readouterr().out


def test_unknown_claim_id_is_one_error_line_naming_the_ids(capsys):
    assert main(["compare", "--only", "ring-bound,nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'nope'" in err and all(cid in err for cid in BY_ID)


def test_traffic_claim_reports_simulated_and_counted_traversals(tmp_path):
    pytest.importorskip("mcsim.reference.traffic")
    (row,) = evaluate([BY_ID[TRAFFIC]], quick=True, store=tmp_path / "t.sqlite", workers=1)
    assert row.verdict in VERDICTS and "simulated" in row.simulated and "counted" in row.simulated
    assert row.ratio is not None


def test_claims_of_finds_the_claims_whose_runs_were_all_made():
    from mcsim.reference.compare import claims_of
    from mcsim.sweep.runner import run_key, versions

    vers = versions()
    ring_bound = BY_ID["ring-bound"]
    keys = [run_key(r.scenario, vers) for r in ring_bound.quick_runs.runs()]
    # traffic-2x's quick runs are the same Scenarios (ring and mcast, 1 MiB, fat-tree-k4): both covered
    assert [c.id for c in claims_of(keys, quick=True)] == ["traffic-2x", "ring-bound"]
    assert claims_of(keys[:1], quick=True) == []  # one of two runs is not enough
    assert claims_of(keys) == []  # full mode wants testbed-188's runs


def test_the_main_scenario_ends_with_the_compare_rows_of_what_it_ran(tmp_path):
    """`make run`'s scenario (testbed_188_allgather.py) ends with the compare table of the claims its
    runs reproduce: its 1 MiB runs on all 188 ranks are ring-bound's and traffic-2x's runs."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scenarios" / "testbed_188_allgather.py"
    argv = [sys.executable, "-m", "mcsim", "run", str(script), "--sizes", "1MiB", "--store", str(tmp_path / "s.sqlite")]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    tail = proc.stdout.split("The published claims these runs reproduce", 1)[1].splitlines()
    assert tail[1].split()[:2] == ["id", "published"]
    rows = {line.split()[0]: line for line in tail[2:] if line.strip()}
    assert set(rows) == {"traffic-2x", "ring-bound"}
    assert all(any(v in line for v in VERDICTS) for line in rows.values())
    assert len(store_rows(tmp_path / "s.sqlite")) == 2  # compare ran nothing more
