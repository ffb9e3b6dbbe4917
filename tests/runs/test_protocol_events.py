# SPDX-License-Identifier: GPL-2.0-only
"""Protocol events per rank (Scenario.run(events=True), Result.events(), --events): a multicast Allgather
with K roots activates its ranks in the K sequences the protocol defines (heads at floor(jP/K), each other
rank once the token from r-1 is in), every repair READ and NEED_FETCH the counters count appears, each rank
starts, sends its FIN and finishes once (at its finish time); recording changes nothing simulated; a run
without it says so in one line."""

import csv
import itertools

import numpy as np
import pytest

from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.runs.scenario import scenario_of


def mcast(ranks: int, roots: int, **kw):
    return scenario_of(
        topology="fat-tree-k4", collective="allgather", algorithm="mcast", bytes_per_rank="32KiB", ranks=ranks,
        roots=roots, **kw,
    )  # fmt: skip


def of(ev: np.ndarray, kind: str, rank: int) -> np.ndarray:
    return ev[(ev["kind"] == kind) & (ev["rank"] == rank)]


@pytest.mark.parametrize(("ranks", "roots"), [(8, 1), (8, 2), (7, 3), (16, 4)])
def test_the_roots_sequences_follow_the_tokens(ranks, roots):
    r = mcast(ranks, roots).run(events=True)
    ev = r.events()
    heads = {j * ranks // roots for j in range(roots)}
    start = {rank: int(of(ev, "data_start", rank)["time_ps"][0]) for rank in range(ranks)}
    activate = {rank: int(of(ev, "activate", rank)["time_ps"][0]) for rank in range(ranks)}
    for rank in range(ranks):
        assert len(of(ev, "activate", rank)) == 1
        if rank in heads:  # a head multicasts as its data phase starts, and takes no token
            assert activate[rank] == start[rank] and len(of(ev, "token_in", rank)) == 0
            continue
        (token,) = of(ev, "token_in", rank)
        assert token["source"] == rank - 1 and activate[rank] == token["time_ps"]
        (sent,) = of(ev, "token_out", rank - 1)  # r-1 passed it on once its own shard was out
        assert sent["time_ps"] < token["time_ps"] and activate[rank - 1] < sent["time_ps"]
    assert (ev["kind"] == "token_out").sum() == ranks - roots
    # within each sequence the ranks activate one after the other, in rank order
    for lo, hi in itertools.pairwise([*sorted(heads), ranks]):
        times = [activate[rank] for rank in range(lo, hi)]
        assert times == sorted(times) and len(set(times)) == len(times)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_every_repair_the_counters_count_is_an_event(seed):
    r = mcast(8, 2, loss=2e-3, seed=seed).run(events=True)
    ev = r.events()
    assert r.complete
    for rank in range(8):
        outs, ins = of(ev, "read_out", rank), of(ev, "read_in", rank)
        assert len(outs) == len(ins) == r.rank["repair_reads"][rank]
        assert len(of(ev, "need_fetch_out", rank)) == r.rank["need_fetches"][rank]
        # each READ comes back after it went out, for the chunks it asked for
        for o in outs:
            back = ins[(ins["source"] == o["source"]) & (ins["value"] == o["value"])]
            assert len(back) == 1 and back["count"][0] == o["count"] and back["time_ps"][0] > o["time_ps"]
        assert int(ins["count"].sum()) >= r.rank["repaired_chunks"][rank]
    assert r.rank["repair_reads"].sum() > 0  # the loss made repairs in these seeds


def test_each_rank_starts_sends_its_fin_and_finishes_once():
    r = mcast(8, 1).run(events=True)
    ev = r.events()
    for rank in range(8):
        for kind in ("start", "data_start", "fin_out", "fin_in", "finish"):
            assert len(of(ev, kind, rank)) == 1, (rank, kind)
        assert of(ev, "finish", rank)["time_ps"][0] == r.finish_ps[rank]
        assert of(ev, "fin_out", rank)["source"][0] == rank and of(ev, "fin_in", rank)["source"][0] == (rank - 1) % 8
        times = ev["time_ps"][ev["rank"] == rank]
        assert (np.diff(times) >= 0).all()  # a rank's events in the order they happened


def test_recording_changes_nothing_simulated():
    sc = mcast(8, 2, loss=1e-3, seed=7)
    a, b = sc.run(), sc.run(events=True)
    np.testing.assert_array_equal(a.finish_ps, b.finish_ps)
    for name in a.rank:
        np.testing.assert_array_equal(a.rank[name], b.rank[name])
    assert a.fabric.link_traversals() == b.fabric.link_traversals()


def test_other_algorithms_record_their_finish_and_a_plain_run_none():
    r = scenario_of(topology="fat-tree-k4", collective="allgather", algorithm="ring", bytes_per_rank="8KiB").run(
        events=True
    )
    ev = r.events()
    assert list(ev["kind"]) == ["finish"] * 16 and list(ev["time_ps"]) == list(r.finish_ps)
    with pytest.raises(McsimError, match=r"^Result\.events: this run recorded none; run it with"):
        mcast(4, 1).run().events()


def test_the_command_writes_every_event(tmp_path, capsys):
    out = tmp_path / "ev.csv"
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "16KiB", "--roots", "2", "--events", str(out)]
    assert main(argv) == 0
    rows = list(csv.DictReader(out.open()))
    direct = (
        scenario_of(topology="fat-tree-k4", collective="allgather", algorithm="mcast", bytes_per_rank="16KiB", roots=2)
        .run(events=True)
        .events()
    )
    assert [(int(r["rank"]), int(r["time_ps"]), r["kind"]) for r in rows] == [
        (int(e["rank"]), int(e["time_ps"]), str(e["kind"])) for e in direct
    ]
    assert all(row["bytes_per_rank_B"] == "16384" for row in rows)
    assert main([*argv[:-1], str(tmp_path / "ev.pdf")]) == 2
    assert "--events=" in capsys.readouterr().err
