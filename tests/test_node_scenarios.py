# SPDX-License-Identifier: GPL-2.0-only
"""The scenario scripts of nodes of several GPUs run and print what they say: scenarios/node_h100.py (the ring
Allgather inside an H100 node within 2 % of N(G-1)/B_NVLink; the published rows only where their setup applies)
and scenarios/rail_cluster.py (the hierarchical collectives send nothing through the spines; each NIC's wire
carries N(nodes-1) for the hierarchical ring, N for the multicast); their bad options are one line."""

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NVLINK_BPS = 18 * 20.6e9 * 8  # NCCL's H100 NVLink: 18 links x 20.6 GB/s
MIB = 1 << 20


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", str(REPO)))
    return subprocess.run(
        [sys.executable, "-m", "mcsim", "run", str(REPO / "scenarios" / script), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
    )


def table(script: str, *args: str) -> list[list[str]]:
    """The rows of the script's table: the lines after its header, up to the first blank line."""
    done = run(script, *args)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] in (["size_B"], ["collective"])) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


@pytest.mark.parametrize("protocol", ["none", "simple"])
def test_node_h100_ring_allgather_is_within_2_percent_of_its_nvlink_bound(protocol):
    """mcsim's own ring within 2 % of N(G-1)/B_NVLink; NCCL's Simple (the scenario's default) adds at most its launch
    and the 7 steps' latency (NCCL's 8.4 us and 7 x 3.4 us: mcsim.config.protocols)."""
    rows = table("node_h100.py", "--sizes", "128MiB", "--nccl-protocol", protocol)  # nccl-tests' size: 16 MiB a GPU
    assert [(r[2], r[3], r[4]) for r in rows] == [
        ("allgather", "ring", "RING"),
        ("allgather", "mcast", "NVLS"),
        ("reduce_scatter", "ring", "RING"),
        ("reduce_scatter", "innet", "NVLS"),
        ("allreduce", "ring", "RING"),
        ("allreduce", "innet", "NVLS"),
    ]
    for r in rows:  # size, count, collective, algorithm, NCCL_ALGO, time, algbw, busbw, time/bound, published...
        assert int(r[0]) == 128 * MIB and int(r[1]) == 32 * MIB  # 4-byte floats
        assert float(r[8]) >= 1
        assert r[9:] == ["-", "-", "-"]  # below 1 GiB no published row's setup applies
    ring = rows[0]
    bound_us = 16 * MIB * 7 * 8 / NVLINK_BPS * 1e6  # N(G-1)/B_NVLink
    latency_us = (8.4 + 7 * 3.4) if protocol == "simple" else 0
    assert 1 <= float(ring[5]) / bound_us  # RC headers (26 B a 4 KiB packet) and the ring's start: 2 % at most
    assert float(ring[5]) <= 1.02 * bound_us + latency_us
    if protocol == "simple":
        assert float(ring[5]) >= bound_us + 8.4  # the launch at least
    assert float(ring[7]) == pytest.approx(7 / 8 * 128 * MIB / float(ring[5]) / 1e3, rel=2e-3)  # busbw = algbw 7/8


def test_node_h100_verdicts():
    script = runpy.run_path(str(REPO / "scenarios" / "node_h100.py"), run_name="node_h100")
    rows = {(p.collective, p.algorithm): p for p in script["PUBLISHED"]}
    verdict = script["verdict"]
    assert verdict(rows["allreduce", "ring"], 300.0) == "input"  # calibrated on it: never "reproduced"
    assert verdict(rows["allreduce", "innet"], 624.0) == "input"  # the NVSwitch's sum rate is fitted to it
    assert verdict(rows["allgather", "mcast"], 310.0) == "agrees"  # within 10 % of ~300
    assert verdict(rows["allgather", "mcast"], 363.0) == "higher 1.21x"
    assert verdict(rows["allgather", "mcast"], 240.0) == "lower 0.80x"


def test_rail_cluster_quick_keeps_the_hierarchical_collectives_on_their_rails():
    rows = table("rail_cluster.py", "--quick")  # rail-4x4, 1 MiB a GPU
    assert [(r[0], r[1]) for r in rows] == [
        ("allgather", "ring"),
        ("allgather", "hier_ring"),
        ("allgather", "hier_mcast"),
        ("reduce_scatter", "ring"),
        ("reduce_scatter", "hier_ring"),
    ]
    # collective, algorithm, time, bound, time/bound, time/ring_bound, busbw, nic_tx, nic_rx, nvlink_tx, spine
    for r in rows:
        assert float(r[4]) >= 1
        hierarchical = r[1].startswith("hier")
        assert (float(r[10]) == 0) == hierarchical  # no packet of a hierarchical collective crosses rails
    ring_bound_us = MIB * 15 * 8 / 400e9 * 1e6  # the flat ring's N(P-1)/B_NIC
    assert float(rows[0][3]) == pytest.approx(ring_bound_us, abs=0.1)
    assert float(rows[0][4]) == float(rows[0][5])  # the flat ring's own bound is N(P-1)/B_NIC
    ring, mcast = rows[1], rows[2]
    assert 3 <= float(ring[7]) <= 3 * 1.02 and 3 <= float(ring[8]) <= 3 * 1.02  # N(nodes-1) each way, + headers
    assert 1 <= float(mcast[7]) <= 1.03 and 3 <= float(mcast[8]) <= 3 * 1.03  # sent once, N(nodes-1) received
    assert 1 <= float(ring[4]) <= 1.05  # two phases' start latency at 1 MiB


@pytest.mark.slow
def test_rail_cluster_16x8_hierarchical_ring_is_within_2_percent_of_its_bound():
    rows = table("rail_cluster.py")  # rail-16x8, 1 MiB a GPU: ~30 s
    hier = [r for r in rows if r[1] == "hier_ring"]
    assert len(rows) == 5 and len(hier) == 2
    for r in hier:
        assert 1 <= float(r[4]) <= 1.02 and float(r[10]) == 0
        assert 15 <= float(r[7]) <= 15 * 1.02  # N(nodes-1) on each NIC's wire


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        ("node_h100.py", ["--sizes", "1000"], r"--sizes=1000: 1000 is not a positive multiple of 32 B "),
        ("node_h100.py", ["--sizes", "1MiB,0"], r"--sizes=1MiB,0: 0 is not a positive multiple of 32 B "),
        ("node_h100.py", ["--sizes", "x"], r"--sizes="),
        ("rail_cluster.py", ["--quick", "--topology", "rail-4x4"], r"--quick is --topology rail-4x4; give --quick "),
        ("rail_cluster.py", ["--topology", "dgx-h100"], r"--topology=dgx-h100 is not nodes of several GPUs joined "),
        ("rail_cluster.py", ["--topology", "fat-tree-k4"], r"--topology=fat-tree-k4 is not nodes of several GPUs "),
        ("rail_cluster.py", ["--bytes-per-rank", "0"], r"--bytes-per-rank=0 must be > 0 "),
        ("rail_cluster.py", ["--mcast-receive", "cpu"], r"argument --mcast-receive: invalid choice: 'cpu' "),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(script, args, message):
    done = run(script, *args)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert re.match(rf"^mcsim: error: {message}", lines[0]), lines[0]
    assert done.stdout == ""
