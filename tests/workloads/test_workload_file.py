# SPDX-License-Identifier: GPL-2.0-only
"""Workload files (``mcsim workload FILE.toml``): placement rules, the FSDP kind, the command's rows and
timeline, and bad files as one line each."""

import csv
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mcsim import topology
from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.runs.jobs import DPA_RECEIVE, run_jobs, run_workload
from mcsim.runs.scenario import Scenario
from mcsim.workloads import Compute, workload_file
from mcsim.workloads.chakra import chakra_job
from mcsim.workloads.training import background_job, data_parallel_job, fsdp_job
from mcsim.workloads.workload_file import leaf_of, read_workload, workload_of

US = 1_000_000  # ps

FSDP = {
    "kind": "fsdp",
    "layers": 2,
    "bytes_per_layer": "256KiB",
    "forward": "10us",
    "backward": "20us",
}


def doc(*jobs, **top):
    return {"topology": "fat-tree-k4", **top, "jobs": [dict(FSDP, **j) for j in jobs]}


def test_contiguous_takes_the_lowest_free_hosts_job_after_job():
    w = workload_of(doc({"name": "a", "ranks": 4}, {"name": "b", "ranks": 3}), "w")
    assert [j.hosts for j in w.jobs] == [(0, 1, 2, 3), (4, 5, 6)]


def test_interleaved_takes_one_host_of_each_leaf_in_turn():
    g = topology.resolve("fat-tree-k4")  # 8 leaves of 2 hosts
    w = workload_of(doc({"name": "a", "ranks": 8, "placement": "interleaved"}), "w")
    (a,) = w.jobs
    assert len({leaf_of(g, h) for h in a.hosts}) == 8  # every leaf once
    w2 = workload_of(
        doc(
            {"name": "a", "ranks": 8, "placement": "interleaved"}, {"name": "b", "ranks": 8, "placement": "interleaved"}
        ),
        "w",
    )
    assert sorted(w2.jobs[0].hosts + w2.jobs[1].hosts) == list(range(16))


def test_random_placement_is_the_seed_s():
    one = workload_of(doc({"name": "a", "ranks": 5, "placement": "random"}, seed=3), "w")
    two = workload_of(doc({"name": "a", "ranks": 5, "placement": "random"}, seed=3), "w")
    other = workload_of(doc({"name": "a", "ranks": 5, "placement": "random"}, seed=4), "w")
    assert one.jobs[0].hosts == two.jobs[0].hosts != other.jobs[0].hosts


def test_the_fsdp_kind_is_the_generator_s_job():
    w = workload_of(doc({"name": "a", "hosts": [3, 5, 9], "prefetch": 0, "allgather": "ring"}), "w")
    assert w.jobs[0] == fsdp_job(
        "a",
        (3, 5, 9),
        layers=2,
        bytes_per_layer=256 << 10,
        forward_ps=10_000_000,
        backward_ps=20_000_000,
        prefetch=0,
        allgather="ring",
    )


def test_the_data_parallel_kind_is_the_generator_s_job():
    table = {"name": "a", "hosts": [0, 1], "kind": "data_parallel", "bucket_layers": 2, "allreduce": "tree"}
    w = workload_of(doc(table), "w")
    assert w.jobs[0] == data_parallel_job(
        "a",
        (0, 1),
        layers=2,
        bytes_per_layer=256 << 10,
        forward_ps=10_000_000,
        backward_ps=20_000_000,
        bucket_layers=2,
        allreduce="tree",
    )


def test_the_background_kind_is_the_generator_s_job():
    table = {"name": "bg", "hosts": [0, 1, 2], "kind": "background", "bytes_per_peer": "8KiB", "load": 0.5, "rounds": 2}
    w = workload_of({"topology": "fat-tree-k4", "rate": "100Gbps", "jobs": [table]}, "w")
    rate_bps = Scenario(
        topology="fat-tree-k4", rate="100Gbps", ranks=2, algorithm="ring", bytes_per_rank=4
    ).data_rate_bps
    assert w.jobs[0] == background_job(
        "bg", (0, 1, 2), bytes_per_peer=8 << 10, load=0.5, rounds=2, data_rate_bps=rate_bps
    )
    with pytest.raises(McsimError, match=r"kind 'background' needs 'load'"):
        workload_of({"topology": "fat-tree-k4", "jobs": [dict(table, load=None)]}, "w")
    # a permutation's rounds are drawn with the file's seed plus the job's index
    perm = dict(table, pattern="permutation")
    w = workload_of({"topology": "fat-tree-k4", "rate": "100Gbps", "seed": 4, "jobs": [perm, perm | {"name": "b",
                     "hosts": [3, 4, 5]}]}, "w")  # fmt: skip
    for i, hosts in enumerate(((0, 1, 2), (3, 4, 5))):
        assert w.jobs[i] == background_job(
            w.jobs[i].name, hosts, bytes_per_peer=8 << 10, load=0.5, rounds=2, data_rate_bps=rate_bps,
            pattern="permutation", seed=4 + i,
        )  # fmt: skip


def test_the_command_prints_a_row_per_job_and_writes_the_timeline(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text(
        'topology = "fat-tree-k4"\n[[jobs]]\nname = "a"\nranks = 4\nkind = "fsdp"\nlayers = 2\n'
        'bytes_per_layer = "256KiB"\nforward = "10us"\nbackward = "20us"\n'
    )
    assert main(["workload", str(path), "--timeline", str(tmp_path / "t.csv"), "--format", "json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = run_jobs([workload_of(doc({"name": "a", "ranks": 4}), "w").jobs[0]], topology="fat-tree-k4").jobs[0]
    assert row == json.loads(json.dumps(expected.summary()))
    with open(tmp_path / "t.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(expected.job.steps) * 4
    assert max(int(r["end_ps"]) for r in rows) == expected.iteration_ps


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            doc({"name": "a", "ranks": 4, "kind": "trace"}),
            r"unknown kind of w: jobs\[0\] 'trace'; choose one of background, chakra, data_parallel, fsdp",
        ),
        (doc({"name": "a", "ranks": 4, "placement": "nearby"}), r"unknown placement of w: jobs\[0\] 'nearby'"),
        (doc({"name": "a", "ranks": 4, "colour": 1}), r"^w: jobs\[0\]: unknown key 'colour'; the keys are"),
        (doc({"name": "a", "ranks": 17}), r"^w: jobs\[0\]: ranks=17 but only 16 hosts are free \(of 16\)$"),
        (doc({"name": "a", "ranks": 10}, {"name": "b", "ranks": 10}), r"^w: jobs\[1\]: ranks=10 but only 6 hosts"),
        (doc({"name": "a", "ranks": 4, "layers": 0}), r"layers=0 must be"),
        (doc({"name": "a", "ranks": 4, "forward": 10}), r"forward=10 must be a string"),
        (
            doc({"name": "a", "hosts": [0, 1], "placement": "contiguous"}),
            r"give hosts = \[\.\.\] \(a list\) or a placement",
        ),
        ({"topology": "fat-tree-k4"}, r"^w: needs \[\[jobs\]\] tables, one per job$"),
        ({"topology": "fat-tree-k4", "jobs": [], "flavour": 1}, r"^w: unknown key 'flavour'"),
    ],
)
def test_a_bad_workload_file_is_one_line(data, message):
    with pytest.raises(McsimError, match=message) as err:
        workload_of(data, "w")
    assert "\n" not in str(err.value)


def test_the_command_refuses_a_bad_output_before_running(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text("not toml = = 1")
    assert main(["workload", str(path)]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    assert main(["workload", str(tmp_path / "none.toml")]) == 2
    assert main(["workload", str(path), "--timeline", str(tmp_path / "t.svg")]) == 2


def test_the_timeline_figure_has_a_lane_per_job_and_kind(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "w.toml"
    path.write_text(
        'topology = "fat-tree-k4"\n[[jobs]]\nname = "a"\nranks = 4\nkind = "fsdp"\nlayers = 2\n'
        'bytes_per_layer = "256KiB"\nforward = "10us"\nbackward = "20us"\n'
        '[[jobs]]\nname = "b"\nranks = 4\nkind = "data_parallel"\nlayers = 2\n'
        'bytes_per_layer = "64KiB"\nforward = "10us"\nbackward = "20us"\n'
        '[[jobs]]\nname = "c"\nranks = 4\nkind = "background"\npattern = "permutation"\nbytes_per_peer = "16KiB"\n'
        "load = 0.5\nrounds = 2\n"
    )
    assert main(["workload", str(path), "--timeline", str(tmp_path / "t.svg")]) == 0
    svg = (tmp_path / "t.svg").read_text()
    assert svg.startswith("<svg")
    for lane in ("a: compute", "a: allgather", "a: reduce-scatter", "b: compute", "b: allreduce", "c: transfer"):
        assert lane in svg
    assert "b: allgather" not in svg and "a: transfer" not in svg


def test_the_chakra_kind_reads_a_trace_per_rank_relative_to_the_file(tmp_path, capsys):
    real = Path(__file__).parent / "data" / "chakra-feeder.0.et.gz"
    (tmp_path / "traces").mkdir()
    for r in range(4):
        (tmp_path / "traces" / f"real.{r}.et").write_bytes(real.read_bytes())
    path = tmp_path / "w.toml"
    path.write_text(
        'topology = "fat-tree-k4"\n[[jobs]]\nname = "real"\nranks = 4\nkind = "chakra"\n'
        'traces = "traces/real"\nallreduce = "tree"\n'
    )
    assert main(["workload", str(path), "--format", "json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    job, _ = chakra_job("real", (0, 1, 2, 3), [real] * 4, {"allreduce": "tree"})
    assert row == json.loads(json.dumps(run_jobs([job], topology="fat-tree-k4").jobs[0].summary()))
    listed = workload_of(
        {
            "topology": "fat-tree-k4",
            "jobs": [{"name": "r", "kind": "chakra", "traces": [str(real)] * 3, "compute_units": 0}],
        },
        "w",
    )
    assert listed.jobs[0].hosts == (0, 1, 2) and listed.jobs[0].compute_units == 0
    with pytest.raises(McsimError, match=r"traces=7 must be a list of files, one per rank, or a prefix string"):
        workload_of(
            {"topology": "fat-tree-k4", "jobs": [{"name": "r", "kind": "chakra", "traces": 7, "ranks": 2}]}, "w"
        )


def test_a_topology_file_is_relative_to_the_workload_file(tmp_path, capsys, monkeypatch):
    # the workload names a copy of fat-tree-k4's file beside it; run from another folder, it is that fabric
    folder = tmp_path / "study"
    folder.mkdir()
    source = Path(__file__).parents[2] / "mcsim" / "topologies" / "fat-tree-k4.toml"
    (folder / "mine.toml").write_text(source.read_text())
    (folder / "w.toml").write_text(
        'topology = "mine.toml"\n[[jobs]]\nname = "a"\nranks = 4\nkind = "fsdp"\nlayers = 1\n'
        'bytes_per_layer = "64KiB"\nforward = "1us"\nbackward = "1us"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    w = read_workload(folder / "w.toml")
    assert w.topology == str(folder / "mine.toml")
    assert main(["workload", str(folder / "w.toml"), "--format", "json"]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    direct = run_jobs(list(w.jobs), topology="fat-tree-k4").jobs[0].summary()
    assert row == json.loads(json.dumps(direct))
    (folder / "w.toml").write_text((folder / "w.toml").read_text().replace("mine.toml", "none.toml"))
    assert main(["workload", str(folder / "w.toml")]) == 2
    assert "none.toml" in capsys.readouterr().err


def documented_example() -> str:
    """The TOML example of workload_file's docstring: the format's core, as the workload issue gives it."""
    doc = workload_file.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    return textwrap.dedent(block)


def test_the_file_format_s_core_reads_as_its_jobs(tmp_path):
    # the format's core as the workload issue gives it (workload_file's example): an FSDP job, a permutation neighbour
    # (1 MiB per peer and one round by default), each interleaved across the testbed's leaves
    path = tmp_path / "w.toml"
    path.write_text(documented_example())
    w = read_workload(path)
    g = topology.resolve("testbed-188")
    train, neighbour = w.jobs
    assert len(train.hosts) == len(neighbour.hosts) == 64 and not set(train.hosts) & set(neighbour.hosts)
    assert len({leaf_of(g, h) for h in train.hosts}) == len({leaf_of(g, h) for h in range(188)})  # every leaf
    rate_bps = Scenario(
        topology="testbed-188", rate="56Gbps", ranks=2, algorithm="ring", bytes_per_rank=4
    ).data_rate_bps
    assert train == fsdp_job(
        "train", train.hosts, layers=8, bytes_per_layer=16 << 20, forward_ps=200 * US, backward_ps=400 * US,
        prefetch=1, allgather="mcast", reduce_scatter="ring",
    )  # fmt: skip
    assert neighbour == background_job(
        "neighbour", neighbour.hosts, bytes_per_peer=1 << 20, load=0.5, rounds=1, data_rate_bps=rate_bps,
        pattern="permutation", seed=2,
    )  # fmt: skip


def test_a_background_s_duration_sets_its_rounds():
    # a round lasts its bound over the load on an idle fabric: 64 KiB at 100 Gbit/s is 5,242,880 ps, at load
    # 0.5 a round of 10,485,760 ps; 50 us is 4.77 rounds: 5
    table = {"name": "bg", "hosts": [0, 1, 2], "kind": "background", "pattern": "permutation",
             "bytes_per_peer": "64KiB", "load": 0.5}  # fmt: skip
    data = {"topology": "fat-tree-k4", "rate": "100Gbps"}
    w = workload_of(data | {"jobs": [table | {"duration": "50us"}]}, "w")
    assert sum(isinstance(s, Compute) for s in w.jobs[0].steps) == 5
    w = workload_of(data | {"jobs": [table | {"duration": "10485760ps"}]}, "w")
    assert sum(isinstance(s, Compute) for s in w.jobs[0].steps) == 1
    with pytest.raises(McsimError, match=r"^job 'bg': give rounds or a duration, not both$"):
        workload_of(data | {"jobs": [table | {"duration": "50us", "rounds": 2}]}, "w")
    with pytest.raises(McsimError, match=r"duration=5 must be a string"):
        workload_of(data | {"jobs": [table | {"duration": 5}]}, "w")


def test_run_options_reach_every_step_and_bad_ones_are_one_line():
    # [options]: the multicast Allgathers received on a 16-thread DPA with 16 endpoints, datagrams in place
    table = {"name": "a", "ranks": 8, "kind": "fsdp", "layers": 2, "bytes_per_layer": "1MiB", "forward": "5us",
             "backward": "10us"}  # fmt: skip
    options = {"processor": {"kind": "dpa", "threads": 16}, "endpoints": 16, "staging": False}
    w = workload_of({"topology": "fat-tree-k4", "options": options, "jobs": [table]}, "w")
    assert w.options == DPA_RECEIVE
    got = run_workload(w).jobs[0]
    want = run_jobs(list(w.jobs), topology="fat-tree-k4", seed=1, **DPA_RECEIVE).jobs[0]
    np.testing.assert_array_equal(got.timeline, want.timeline)
    plain = run_jobs(list(w.jobs), topology="fat-tree-k4").jobs[0]
    assert got.iteration_ps != plain.iteration_ps  # the options made a difference
    for bad, message in (
        ({"warp": 9}, r"^w: \[options\]: unknown run option 'warp'; choose one of"),
        ({"algorithm": "ring"}, r"unknown run option 'algorithm'"),
        ({"seed": 2}, r"unknown run option 'seed'"),  # the file's own top key
        ({"processor": {"kind": "gpu"}}, r"^w: \[options\] processor: unknown processor kind 'gpu'"),
        ({"processor": {"kind": "dpa", "warp": 2}}, r"^w: \[options\] processor: .*unknown DpaConfig field 'warp'"),
        ([1], r"\[options\]"),
    ):
        with pytest.raises(McsimError, match=message) as err:
            workload_of({"topology": "fat-tree-k4", "options": bad, "jobs": [table]}, "w")
        assert "\n" not in str(err.value)
    bad = workload_of({"topology": "fat-tree-k4", "options": {"endpoints": 0}, "jobs": [table]}, "w")
    with pytest.raises(McsimError, match=r"endpoints=0") as err:  # a bad value: before any C++ object exists
        run_workload(bad)
    assert "\n" not in str(err.value)
