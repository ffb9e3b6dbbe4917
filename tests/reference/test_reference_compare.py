# SPDX-License-Identifier: GPL-2.0-only
"""mcsim.reference: every published claim is data with an honest kind, and `mcsim compare` gives each
a row with a verdict and a reason, its runs stored in and reused from a sweep store."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mcsim import topology
from mcsim.cli import main
from mcsim.config import dpa
from mcsim.errors import McsimError
from mcsim.reference import claims
from mcsim.reference.claim import INPUT_KINDS, Claim
from mcsim.reference.claims import BY_ID, CLAIMS
from mcsim.reference.compare import VERDICTS, counts, evaluate, exit_status, table_text, verdict, verdict_summary
from mcsim.topology.nodes import nodes_of
from mcsim.units import parse_rate

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
CONDITIONAL = ("dpa-1/16", "dpa-half")
INPUTS = ("dpa-thread", "dpa-zc-4x", "testbed", "h100-ring-ar", "h100-nvls-ar")
NOT_MODELLED = ("b300-nvls-ar", "256gpu-ag", "sharp-fsdp")
NODE_OUTCOMES = ("h100-nvls-ag", "h200-ar", "ndr-nic", "multinode-nvls", "sharp-95")  # simulated on nodes, a fat tree

# the published record sits beside the repository (../shared/PUBLISHED.md), as the issue names it
PUBLISHED = Path(__file__).resolve().parents[3] / "shared" / "PUBLISHED.md"
TRAFFIC = "traffic-2x"  # needs mcsim.reference.traffic (the traffic slice)
SIMULATED = [c.id for c in CLAIMS if c.runs is not None and c.id != TRAFFIC]


# the sections of PUBLISHED.md whose tables' rows are claims (the first cell: the id)
CLAIM_SECTIONS = ("## Claims", "## Nodes of several GPUs", "## In-network reduction (SHARP)")


def published_ids() -> list[str]:
    """The ids of PUBLISHED.md's claim tables: the first cell of each row under CLAIM_SECTIONS."""
    if not PUBLISHED.is_file():
        pytest.skip(f"the published record {PUBLISHED} is not beside this checkout")
    text = PUBLISHED.read_text()
    section = "".join(text.split(head, 1)[1].split("\n## ", 1)[0] for head in CLAIM_SECTIONS)
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


def test_every_claim_has_a_row_with_a_verdict_a_one_line_reason_and_its_note(quick_rows):
    _, rows = quick_rows
    assert set(rows) == set(BY_ID) - {TRAFFIC}
    for row in rows.values():
        assert row.verdict in VERDICTS
        assert row.reason.strip() and "\n" not in row.reason
        assert row.published == BY_ID[row.id].published() != "-"
        assert row.note == BY_ID[row.id].note != ""
        assert bool(row.condition) == (row.verdict == "conditional")


def test_inputs_are_labelled_input_and_match_the_models_constants(quick_rows):
    _, rows = quick_rows
    assert {c.id for c in CLAIMS if c.kind in INPUT_KINDS} == set(INPUTS)
    for cid in INPUTS:
        assert rows[cid].verdict == "input", rows[cid]
    # the testbed is an input by construction: the topology file was built to have these numbers
    assert BY_ID["testbed"].kind == "structure" and rows["testbed"].ratio == 1.0
    assert "188 nodes, 18 switches" in rows["testbed"].simulated
    cfg = dpa.DpaConfig()
    # the constants dpa.py fitted: 577 cycles per completion = 11.9 GiB/s of 4 KiB; staging = 4 x that
    assert dpa.thread_rate("zero_copy", 4096, cfg) * 4096 / 2**30 == pytest.approx(BY_ID["dpa-thread"].value, 1e-3)
    assert cfg.staging_cycles / cfg.zero_copy_cycles == BY_ID["dpa-zc-4x"].value
    assert rows["dpa-thread"].ratio == pytest.approx(1, abs=1e-3)
    # the H100's NVLink data rate is NCCL's model's 18 x 20.6 GB/s: the ring figure is its input
    assert nodes_of(topology.resolve("dgx-h100")).nvlink_bps == 18 * 206 * 10**8 * 8
    assert rows["h100-ring-ar"].ratio == pytest.approx(1, abs=0.05)
    assert rows["h100-nvls-ar"].ratio == pytest.approx(1, abs=0.05)  # the NVSwitch's sum rate is fitted to it


def test_what_mcsim_does_not_model_is_said_and_fails_nothing(quick_rows):
    _, rows = quick_rows
    assert {c.id for c in CLAIMS if c.kind == "not modelled"} == set(NOT_MODELLED)
    for cid in NOT_MODELLED:
        assert rows[cid].verdict == "not modelled" and rows[cid].ratio is None and rows[cid].note
        assert not BY_ID[cid].must_reproduce and BY_ID[cid].runs is None


def holds_under(cid: str, profile: str) -> tuple[bool, list[int | None]]:
    """Whether a conditional DPA claim holds under a profile, and the threads it needs there, from
    mcsim.config.dpa's closed forms: staging path, 4 KiB chunks, at most the claim's threads at its rates."""
    rates = ("400Gbps",) if cid == "dpa-1/16" else ("400Gbps", "800Gbps", "1.6Tbps")
    cfg = dpa.profile(profile)
    need = [dpa.threads_needed(parse_rate(r), 4096, "staging", dpa=cfg) for r in rates]
    return all(n is not None and n <= BY_ID[cid].value for n in need), need


@pytest.mark.parametrize("profile", sorted(dpa.PROFILES))
@pytest.mark.parametrize("cid", CONDITIONAL)
def test_dpa_footprint_claims_are_conditional_under_every_profile(cid, profile):
    """dpa-1/16 and dpa-half hold under sc24 (whose sharing was chosen inside their bounds), so they are
    "conditional" under either --profile, the chosen profile's verdict first and the other's beside it."""
    claim = BY_ID[cid]
    assert claim.kind == "conditional" and claim.holds_under == "sc24" and claim.must_reproduce
    (row,) = evaluate([claim], profile=profile)
    assert row.verdict == "conditional"
    parts = row.condition.split("; ")
    assert parts[0].startswith((f"holds under {profile} (", f"{profile}: "))  # the chosen profile first
    assert len(parts) == len(dpa.PROFILES)
    for name in dpa.PROFILES:
        (part,) = [p for p in parts if p.startswith((f"holds under {name} (", f"{name}: "))]
        ok, need = holds_under(cid, name)
        assert part.startswith(f"holds under {name}" if ok else f"{name}: differs"), part
        assert all(f"{'>256' if n is None else n}" in part for n in need), (part, need)
    assert holds_under(cid, "sc24")[0] and not holds_under(cid, "sdr-rdma")[0]  # what the issue found
    # the row's number is the chosen profile's
    _, need = holds_under(cid, profile)
    assert (row.ratio is None) == (None in need)
    if None not in need:
        assert row.ratio == pytest.approx(max(n for n in need if n is not None) / claim.value)
    assert exit_status([row]) == 0  # it holds under its own profile


def test_a_conditional_claim_false_under_its_own_profile_differs():
    strict = dataclasses.replace(BY_ID["dpa-1/16"], holds_under="sdr-rdma")
    (row,) = evaluate([strict])
    assert row.verdict == "differs" and "sdr-rdma: differs" in row.condition and exit_status([row]) == 1


def test_no_input_or_conditional_claim_is_counted_as_reproduced(quick_rows):
    _, rows = quick_rows
    tally = counts(list(rows.values()))
    assert list(tally) == list(VERDICTS)
    assert tally["input"] == len(INPUTS) and tally["conditional"] == len(CONDITIONAL)
    reproduced = {r.id for r in rows.values() if r.verdict in ("reproduced", "within tolerance")}
    assert not reproduced & {*INPUTS, *CONDITIONAL}
    assert f"{len(INPUTS)} input, {len(CONDITIONAL)} conditional" in verdict_summary(list(rows.values()))


def test_kinds_and_the_claim_mcsim_cannot_reproduce(quick_rows):
    _, rows = quick_rows
    ag_rs = BY_ID["ag-rs-2x"]
    assert ag_rs.kind == "outcome" and not ag_rs.must_reproduce
    # quick: 16 ranks cap the offloaded pair's speedup at 2(P-1)/(P+1) = 1.76 (the claim needs ~2, P large)
    assert rows["ag-rs-2x"].verdict == "differs" and "2(P-1)/(P+1) = 1.76" in rows["ag-rs-2x"].reason
    assert 0.9 * 2 * 15 / 17 <= rows["ag-rs-2x"].ratio * BY_ID["ag-rs-2x"].value <= 2 * 15 / 17
    # the DPA claims are closed forms (no sweep); the simulated ones have a quick and a full sweep
    assert all((c.runs is None) == (c.quick_runs is None) for c in CLAIMS)
    assert {c.id for c in CLAIMS if c.runs is not None} == {
        TRAFFIC,
        "scales-1.6T",
        "ring-bound",
        "ag-rs-2x",
        "h100-ring-ar",
        "h100-nvls-ar",
        *NODE_OUTCOMES,
    }
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
    for kind in INPUT_KINDS:
        assert verdict(dataclasses.replace(eq, kind=kind), 2.0) == (1.0, "input")
        assert verdict(dataclasses.replace(eq, kind=kind), 3.0)[1] == "differs"  # an input that no longer matches
    gap = dataclasses.replace(eq, kind="not published", value=None)
    assert verdict(gap, 3.0) == (None, "not published")
    with pytest.raises(McsimError, match="holds_under"):
        dataclasses.replace(eq, kind="conditional")
    with pytest.raises(McsimError, match="holds_under"):
        dataclasses.replace(eq, holds_under="sc24")


def test_table_csv_and_json_carry_the_verdict_its_condition_and_the_note(capsys):
    ids = "dpa-1/16,dpa-thread,testbed"
    assert main(["compare", "--only", ids]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "published", "simulated", "ratio", "verdict", "must", "reason", "note"]
    table = {line.split()[0]: line for line in lines[1:]}
    assert "conditional: holds under sc24 (16 threads); sdr-rdma: differs (" in table["dpa-1/16"]
    assert re.search(r" input +yes ", table["testbed"]) and " reproduced" not in table["testbed"]
    for cid, line in table.items():
        assert line.endswith(BY_ID[cid].note)
        assert len(line) - len(BY_ID[cid].note) == lines[0].rindex("note")  # the note column, aligned
    assert main(["compare", "--only", ids, "--format", "json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["dpa-1/16"]["verdict"] == "conditional" and rows["dpa-1/16"]["condition"].startswith("holds under")
    assert rows["testbed"]["verdict"] == "input" and rows["testbed"]["condition"] == ""
    assert all(r["note"] == BY_ID[cid].note for cid, r in rows.items())
    assert main(["compare", "--only", ids, "--format", "csv", "--profile", "sdr-rdma"]) == 0
    head, *body = capsys.readouterr().out.splitlines()
    assert head == "id,published,simulated,ratio,verdict,condition,must_reproduce,reason,note"
    first = next(line for line in body if line.startswith("dpa-1/16,"))
    assert ",conditional,sdr-rdma: differs (" in first and "; holds under sc24 (16 threads)" in first


def test_table_text_of_no_rows_is_the_header():
    assert table_text([]).split() == ["id", "published", "simulated", "ratio", "verdict", "must", "reason", "note"]


def test_a_must_reproduce_claim_that_differs_gives_exit_status_1(quick_rows):
    store, rows = quick_rows
    strict = dataclasses.replace(BY_ID["ring-bound"], tolerance=0.0)  # the published number exactly
    (row,) = evaluate([strict], quick=True, store=store, workers=1)
    assert row.ratio == rows["ring-bound"].ratio and row.ratio is not None and row.ratio > 1.005
    assert row.verdict == "differs" and exit_status([row]) == 1
    assert exit_status([dataclasses.replace(row, must_reproduce=False)]) == 0


def test_compare_command_reuses_its_store_and_says_so_on_stderr(tmp_path, capsys):
    store = tmp_path / "c.sqlite"
    argv = ["compare", "--quick", "--only", "ring-bound,dpa-1/16,testbed", "--store", str(store), "--workers", "1"]
    assert main(argv) == 0
    first = store_rows(store)
    out, err = capsys.readouterr()
    out = out.splitlines()
    assert out[0].split()[:4] == ["id", "published", "simulated", "ratio"]
    assert len(out) == 4 and out[1].startswith("ring-bound ")
    assert len(first) == 2  # ring and multicast
    # a progress line per claim as it starts (i of n, runs from the store / to simulate), then the counts
    assert err.splitlines() == [
        "mcsim compare: claim [1/3] ring-bound: 2 runs: 0 from the store, 2 to simulate",
        "mcsim compare: claim [2/3] dpa-1/16: closed form (profile sc24), nothing to simulate",
        "mcsim compare: claim [3/3] testbed: the topology file, nothing to simulate",
        "mcsim compare: 3 claims: 1 within tolerance, 1 input, 1 conditional",
    ]
    assert main([*argv, "--format", "json"]) == 0
    assert store_rows(store) == first  # nothing ran again: every stored row is byte-identical
    out, err = capsys.readouterr()
    assert '"verdict"' in out
    assert err.splitlines()[0] == "mcsim compare: claim [1/3] ring-bound: 2 runs: 2 from the store, 0 to simulate"


def test_unknown_claim_id_is_one_error_line_naming_the_ids(capsys):
    assert main(["compare", "--only", "ring-bound,nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'nope'" in err and all(cid in err for cid in BY_ID)


# (arguments, the one error line); {tmp}: the test's folder. Each is refused before any work.
BAD_OPTIONS = [
    (["--only", ""], r"compare: --only='' names nothing; give ids"),
    (["--only", " , "], r"compare: --only=' , ' names nothing"),
    (["--only", "testbed,,dpa-1/16"], r"compare: --only='testbed,,dpa-1/16' has an empty id"),
    (["--only", "testbed,"], r"compare: --only='testbed,' has an empty id"),
    (["--only", "testbed,testbed"], r"compare: --only='testbed,testbed' names 'testbed' twice"),
    (["--only", "nope"], r"unknown claim id 'nope'; the ids: traffic-2x, "),
    (["--workers", "0"], r"compare: --workers=0 must be 1\.\.1024"),
    (["--workers", "-2"], r"compare: --workers=-2 must be 1\.\.1024"),
    (["--workers", str(2**64)], r"compare: --workers=18446744073709551616 must be 1\.\.1024"),
    (["--workers", "two"], r"argument --workers: invalid int value: 'two'"),
    (["--only", "dpa-1/16,testbed", "--workers", "2"], r"compare: --workers=2 does nothing: dpa-1/16, testbed "),
    (["--profile", "sdr"], r"compare: --profile='sdr': unknown DPA profile 'sdr'; choose one of sc24, sdr-rdma"),
    (["--profile", ""], r"compare: --profile='': unknown DPA profile ''"),
    (["--format", "xml"], r"argument --format: invalid choice: 'xml'"),
    (["--only", "ring-bound", "--store", "{tmp}/nope/s.sqlite"], r"--store='.*/nope/s.sqlite': folder .* not exist"),
    (["--only", "ring-bound", "--store", "{tmp}"], r"compare: --store='.*' is a folder; give a file name"),
    (["--only", "ring-bound", "--store", "/proc/s.sqlite"], r"compare: --store='/proc/s.sqlite' cannot be written"),
]  # fmt: skip


def exit_code(argv: list[str]) -> int:
    """main()'s exit status, also where argparse exits (a bad int, an unknown choice)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(str(exc.code))


@pytest.mark.parametrize(("args", "message"), BAD_OPTIONS)
def test_bad_compare_options_are_one_error_line_before_any_work(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default store, compare.sqlite, would go here
    argv = ["compare", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    assert exit_code(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("mcsim: error: "), err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []  # no store made, nothing ran


def test_api_refuses_what_the_command_refuses(tmp_path):
    with pytest.raises(McsimError, match=r"^compare: ids=\[\] names no claim"):
        claims.select([])
    with pytest.raises(McsimError, match=r"^compare: workers=0 must be 1\.\.1024"):
        evaluate([BY_ID["ring-bound"]], workers=0, store=tmp_path / "s.sqlite")
    with pytest.raises(McsimError, match=r"^compare: profile='x': unknown DPA profile 'x'"):
        evaluate([BY_ID["dpa-1/16"]], profile="x")
    with pytest.raises(McsimError, match=r"^compare: store='.*' is a folder"):
        evaluate([BY_ID["ring-bound"]], store=tmp_path)


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

    script = Path(__file__).resolve().parents[2] / "scenarios" / "testbed_188_allgather.py"
    argv = [sys.executable, "-m", "mcsim", "run", str(script), "--sizes", "1MiB", "--store", str(tmp_path / "s.sqlite")]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    tail = proc.stdout.split("The published claims these runs check", 1)[1].splitlines()
    assert tail[1].split()[:2] == ["id", "published"]
    rows = {line.split()[0]: line for line in tail[2:] if line.strip()}
    assert set(rows) == {"traffic-2x", "ring-bound"}
    assert all(any(v in line for v in VERDICTS) for line in rows.values())
    assert len(store_rows(tmp_path / "s.sqlite")) == 2  # compare ran nothing more


def run_script(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcsim", "run", str(SCENARIOS / name), *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("profile", sorted(dpa.PROFILES))
def test_dpa_scaling_script_gives_no_verdict_for_an_input(profile, tmp_path):
    """dpa_scaling.py labels each claim by what agreement shows (the kinds of mcsim.reference.claims):
    an INPUT gets no verdict, a CONDITIONAL claim says whether it holds under the profile it ran."""
    proc = run_script("dpa_scaling.py", "--quick", "--no-sim", "--profile", profile, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "REPRODUCED" not in proc.stdout.upper()
    lines = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith("  ") and line.split()}
    for cid in ("dpa-thread", "dpa-zc-4x"):
        assert lines[cid].split()[1] == "INPUT" and lines[cid].count("no verdict") == 1
    for cid in CONDITIONAL:
        ok, _ = holds_under(cid, profile)
        line = lines[cid]
        assert line.split()[1] == "CONDITIONAL"
        # --quick has 400G and 1.6T: dpa-half under sdr-rdma holds at 400G only
        said = "HOLDS" if ok else ("DOES NOT HOLD" if cid == "dpa-1/16" else "HOLDS at 400Gbps ONLY")
        assert line.endswith(f"under {profile}: {said}"), line


def test_fsdp_script_says_it_checked_completion_not_bytes(tmp_path):
    proc = run_script("fsdp_ag_rs.py", "--sizes", "16KiB", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("every run complete: every rank of both collectives had its whole output")
    assert "bytes not verified" in last and "received every byte" not in proc.stdout
