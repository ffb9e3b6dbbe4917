# SPDX-License-Identifier: GPL-2.0-only
"""benchmarks/vs_htsim.py: htsim's connection matrices, the closed-form packet-hop count and the
mcsim side of the side-by-side (htsim itself is not installed in CI)."""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from mcsim import topology

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "vs_htsim.py"
_spec = importlib.util.spec_from_file_location("vs_htsim", SCRIPT)
vs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vs)


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("ranks", [2, 3, 6])
def test_ring_allgather_matrix_chains_every_block_through_every_rank(tmp_path, ranks):
    done = cli("write", "ring-allgather", "--hosts", str(ranks), "--bytes", "8KiB", "--out", "ag.cm", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "ag.cm").read_text().splitlines()
    assert f"Nodes {ranks}" in lines and f"Connections {ranks * (ranks - 1)}" in lines
    assert f"Triggers {ranks * (ranks - 2)}" in lines
    conns = [line.split() for line in lines if "->" in line]
    assert len(conns) == ranks * (ranks - 1) and all(c[c.index("size") + 1] == "8192" for c in conns)
    started = [c for c in conns if "start" in c]
    assert [c[0] for c in started] == [f"{b}->{(b + 1) % ranks}" for b in range(ranks)]  # one per block
    fired = {c[c.index("send_done_trigger") + 1]: c[0] for c in conns if "send_done_trigger" in c}
    waits = {c[c.index("trigger") + 1]: c[0] for c in conns if "trigger" in c}
    assert set(fired) == set(waits) and len(fired) == ranks * (ranks - 2)  # each trigger: one firer, one waiter
    for t, hop in fired.items():  # the waiter forwards what the firer delivered
        assert hop.split("->")[1] == waits[t].split("->")[0]
    assert sum(line == f"trigger id {t} oneshot" for line in lines for t in fired) == len(fired)


@pytest.mark.parametrize("k", [4, 8])
@pytest.mark.parametrize("workload", vs.WORKLOADS)
def test_closed_form_hops_are_the_shortest_paths(k, workload):
    g = topology.fat_tree(k, rate_bps=100 * 10**9, delay_ps=100_000)
    hosts = topology.host_count(g)
    conns = vs.workload_connections(workload, hosts, 3 * 4096 + 1)  # 4 packets per transfer
    want = sum(4 * nx.shortest_path_length(g, s, d) for s, d, _ in conns)
    assert vs.data_packet_hops(conns, k) == want


@pytest.mark.parametrize("workload", vs.WORKLOADS)
def test_mcsim_side_counts_what_its_link_counters_count(workload, capsys):
    assert vs.main(["mcsim", workload, "--k", "4", "--bytes", "8KiB"]) == 0
    out = json.loads(capsys.readouterr().out)
    hosts, per = 16, 2
    transfers = hosts if workload == "ring-flows" else hosts * (hosts - 1)
    assert out["hosts"] == hosts and out["counters_agree"] is True
    assert out["data_packet_hops"] == vs.data_packet_hops(vs.workload_connections(workload, hosts, 8192), 4)
    assert out["data_packet_hops"] >= transfers * per * 2  # every transfer crosses at least 2 links
    if workload == "ring-flows":
        assert out["link_traversals"] == out["data_packet_hops"]  # raw flows: no ACKs
    else:
        assert out["link_traversals"] > out["data_packet_hops"]  # plus one RC ACK per message


def test_count_accepts_a_complete_htsim_run_only(tmp_path):
    assert (
        cli("write", "ring-flows", "--hosts", "16", "--bytes", "8KiB", "--out", "rf.cm", cwd=tmp_path).returncode == 0
    )
    finished = [f"Flow roce_{h} {h} finished at {1.5 + h} total bytes 8192" for h in range(16)]
    (tmp_path / "ok.out").write_text("\n".join([*finished, "New: 0 Rtx: 0"]) + "\n")
    (tmp_path / "short.out").write_text("\n".join([*finished[:-1], "New: 0 Rtx: 0"]) + "\n")
    done = cli("count", "--cm", "rf.cm", "--k", "4", "--htsim-log", "ok.out", "--wall-seconds", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # k=4: 2 hosts per ToR, 4 per pod; of the 16 flows h -> h+1 of 2 packets each, 8 stay under a
    # ToR (2 links), 4 cross ToRs in a pod (4 links) and 4 cross pods (6 links)
    assert out["data_packet_hops"] == 2 * (8 * 2 + 4 * 4 + 4 * 6)
    assert (out["finished"], out["finish_us"], out["rtx_packets"]) == (16, 16.5, 0)
    assert out["Mhops_per_s"] == pytest.approx(out["data_packet_hops"] / 2 / 1e6, abs=1e-3)
    short = cli("count", "--cm", "rf.cm", "--k", "4", "--htsim-log", "short.out", cwd=tmp_path)
    assert short.returncode == 1 and "did not finish every flow" in short.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["write", "ring-flows", "--bytes", "4XB", "--out", "a.cm"], r"unknown unit 'XB'"),
        (["write", "ring-flows", "--bytes", "4GiB", "--out", "a.cm"], r"must be 1 B\.\.2147483647 B"),
        (["write", "ring-flows", "--hosts", "1", "--bytes", "4KiB", "--out", "a.cm"], r"--hosts=1 must be >= 2"),
        (["count", "--cm", "missing.cm"], r"--cm='missing.cm': No such file"),
        (["count", "--cm", "a.txt"], r"no 'Nodes N' line"),
        (["mcsim", "ring-flows", "--k", "5", "--bytes", "4KiB"], r"--k=5 must be even"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, message):
    (tmp_path / "a.txt").write_text("hello\n")
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and re.search(message, done.stderr), done.stderr
