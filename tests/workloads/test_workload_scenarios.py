# SPDX-License-Identifier: GPL-2.0-only
"""The workload scenario scripts run and print what they say: scenarios/interjob.py (no bubble when the jobs
share no link, one when they do), scenarios/fsdp_iteration.py (every pair's iteration at least its
compute) and scenarios/roce_fabric.py (every collective at or above its bound)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> list[list[str]]:
    out = subprocess.run(
        [sys.executable, "-m", "mcsim", "run", str(REPO / "scenarios" / script), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    return [line.split() for line in out.splitlines()[1:]]


def test_interjob_shows_no_bubble_apart_and_one_side_by_side():
    rows = run("interjob.py", "--layers", "2", "--bytes-per-layer", "1MiB")
    bubble = {(r[0], r[1], r[2]): float(r[5]) for r in rows}
    assert len(bubble) == 12  # 2 placements x 3 neighbours x 2 Allgathers
    for neighbour in ("fsdp", "alltoall", "permutation"):
        assert bubble["contiguous", neighbour, "ring"] == bubble["contiguous", neighbour, "mcast"] == 0.0
        assert bubble["interleaved", neighbour, "ring"] > 0 and bubble["interleaved", neighbour, "mcast"] > 0


def test_fsdp_iteration_runs_every_pair_on_both_rates():
    rows = run("fsdp_iteration.py", "--quick", "--layers", "2", "--bytes-per-layer", "1MiB")
    assert len(rows) == 8  # 2 rates x 4 pairs
    for r in rows:  # fabric (2 words), AG, RS, receive, iteration, compute, exposed, removed
        iteration, compute, exposed = float(r[5]), float(r[6]), float(r[7])
        assert iteration >= compute and abs(iteration - compute - exposed) < 0.2


def test_roce_fabric_runs_each_collective_at_or_above_its_bound():
    rows = run("roce_fabric.py", "--rates", "400Gbps", "--bytes-per-rank", "256KiB", "--neighbour-bytes", "64KiB")
    assert [(r[1], r[2]) for r in rows] == [
        ("allgather", "ring"),
        ("allgather", "mcast"),
        ("reduce_scatter", "ring"),
        ("reduce_scatter", "innet"),
    ]
    for r in rows:  # rate, collective, algorithm, alone, alone/bound, beside, beside/bound, paused, study paused, marks
        assert float(r[4]) >= 1 and float(r[6]) >= 1  # N (P-1) / BW bounds every algorithm here
        assert float(r[7]) >= float(r[8]) >= 0 and int(r[9]) >= 0
    innet = rows[3]
    assert float(innet[4]) >= 8 / 7  # its own bound, P N / BW
