# SPDX-License-Identifier: GPL-2.0-only
"""Bad workload input, one line each (issue 49): a workload file's keys, a Chakra trace's bytes and numbers, and the
same through the real commands (`mcsim workload FILE`, a workload sweep whose axis gives the bad value): never a
traceback, an overflow or unbounded work before the first line. (The API's jobs and generators: test_bad_job_input.py.)
"""

import gzip
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcsim.config.fabric import Faults
from mcsim.errors import McsimError
from mcsim.runs.job_planning import check_workload
from mcsim.sweep import SweepSpec
from mcsim.workloads.chakra import chakra_job, message_classes
from mcsim.workloads.workload_file import read_workload, workload_of

DATA = Path(__file__).parent / "data"
H2 = (0, 1)
BIG = 2**70  # past int64 and the simulated clock
CLOCK = r"\(2\^62 ps = 53\.4 days, the simulated clock's limit\)"
STEPS = r"a job holds at most 250000 steps \(mcsim\.workloads\.job\.MAX_JOB_STEPS\)"
SIZE = r"\(2\^62 B, mcsim's largest size\)"
TRAINING = {"bytes_per_layer": 1 << 20, "forward_ps": 1, "backward_ps": 1}


# ---- workload files ------------------------------------------------------------------------------------------

FSDP = {
    "name": "a",
    "ranks": 4,
    "kind": "fsdp",
    "layers": 1,
    "bytes_per_layer": "4KiB",
    "forward": "1us",
    "backward": "1us",
}
BACKGROUND = {"name": "a", "ranks": 4, "kind": "background", "load": 1}


def _doc(**job):
    base = BACKGROUND if job.get("kind") == "background" else FSDP
    return {"topology": "fat-tree-k4", "jobs": [base | job]}


def _trace(path: Path, nodes: list[dict], version: str = "0.0.4", compress: bool = False) -> Path:
    """A trace file: GlobalMetadata, then each node (attributes as int64 or, for a float, double values)."""
    metadata_cls, node_cls = message_classes()
    out = [metadata_cls(version=version).SerializeToString()]
    for n in nodes:
        node = node_cls(id=n["id"], name=n["name"], type=n["type"], duration_micros=n.get("us", 0))
        node.data_deps.extend(n.get("deps", ()))
        for key, value in n.get("attr", {}).items():
            node.attr.add(name=key, **({"double_val": value} if isinstance(value, float) else {"int64_val": value}))
        out.append(node.SerializeToString())
    data = b"".join(_varint(len(m)) + m for m in out)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _chakra(traces: object, **job) -> dict:
    return {"topology": "fat-tree-k4", "jobs": [{"name": "a", "kind": "chakra", "traces": traces, **job}]}


def _nan_trace(tmp: Path) -> dict:
    path = str(
        _trace(tmp / "t.0.et", [{"id": 1, "name": "x", "type": 7, "attr": {"comm_type": 0, "comm_size": math.nan}}])
    )
    return _chakra([path, path])


FILES = {
    "hosts-of-arrays": (
        lambda t: _doc(hosts=[[0, 1], [2, 3]]),
        r"^w: jobs\[0\]: hosts=\[\[0, 1\], \[2, 3\]\] must be a "
        r"list of host numbers, e\.g\. hosts = \[0, 1, 2, 3\]$",
    ),
    "hosts-of-tables": (
        lambda t: _doc(hosts=[{"a": 1}, {"b": 2}]),
        r"^w: jobs\[0\]: hosts=\[\{'a': 1\}, \{'b': 2\}\] "
        r"must be a list of host numbers",
    ),
    "hosts-a-string": (
        lambda t: _doc(hosts="0-3"),
        r"^w: jobs\[0\]: hosts='0-3' must be a list of host numbers, e\.g\. "
        r"hosts = \[0, 1, 2, 3\]$",
    ),
    "hosts-negative": (lambda t: _doc(hosts=[0, -1]), r"^w: jobs\[0\]: hosts=\[0, -1\] must be a list of host numbers"),
    "ranks-not-the-hosts": (
        lambda t: _doc(hosts=[0, 1], ranks=4),
        r"^w: jobs\[0\]: ranks=4 but hosts holds 2 hosts; "
        r"give one of them \(the ranks are the hosts, in order\), or both agreeing$",
    ),
    "layers-1e8": (
        lambda t: _doc(layers=100_000_000),
        rf"^job 'a': layers=100000000 makes 500000000 steps \(5 per "
        rf"layer\); {STEPS}$",
    ),
    "rounds-1e9": (
        lambda t: _doc(kind="background", rounds=1_000_000_000),
        r"^job 'a': rounds=1000000000 makes "
        r"2000000000 steps",
    ),
    "duration-long": (
        lambda t: _doc(kind="background", bytes_per_peer=8, duration="1000000s"),
        r"^job 'a': "
        r"duration_ps=1000000000000000000 makes \d+ steps \(\d+ rounds of \d+ ps\)",
    ),
    "load-1e-300": (
        lambda t: _doc(kind="background", load=1e-300),
        r"^job 'a': load=1e-300 makes each idle gap inf ps",
    ),
    "load-nan": (lambda t: _doc(kind="background", load=math.nan), r"^job 'a': load=nan must be a number in \(0, 1\]"),
    "compute-units-past-uint32": (
        lambda t: _doc(compute_units=2**40),
        r"^w: jobs\[0\]: compute_units=1099511627776 "
        r"must be 0\.\.4294967295$",
    ),
    "seed-past-uint64": (
        lambda t: _doc() | {"seed": 2**64},
        r"^w: seed=18446744073709551616 must be "
        r"0\.\.18446744073709551615$",
    ),
    "steps-of-the-jobs-together": (
        lambda t: {
            "topology": "fat-tree-k4",
            "jobs": [FSDP | {"name": f"j{i}", "ranks": 2, "layers": 40_000} for i in range(2)],
        },
        r"^w: jobs\[1\]: the jobs hold 400000 steps together; a workload's jobs hold at most 250000 together",
    ),
    "traces-prefix-missing": (
        lambda t: _chakra(str(t / "nope" / "name"), ranks=2),
        r"^w: jobs\[0\]: traces='.*/nope/name': no file .*/nope/name\.0\.et or .*/nope/name\.0\.et\.gz \(rank 0's "
        r"trace: a prefix names files <prefix>\.0\.et, <prefix>\.1\.et, \.\.\., or \.et\.gz\)$",
    ),
    "traces-a-folder": (
        lambda t: _chakra([str(t), str(t)]),
        r"^.* is a folder, not a file$",
    ),
    "faults-with-a-bad-time": (
        lambda t: _doc() | {"options": {"faults": {"link_down": [{"u": 16, "v": 20, "down": "1x", "up": "forever"}]}}},
        r"^w: \[options\] faults: link_down\[0\]: down='1x': unknown unit 'x'",
    ),
    "faults-in-picoseconds": (
        lambda t: _doc() | {"options": {"faults": {"link_down": [[16, 20, 0, None]], "reroute_delay_ps": 5}}},
        r"^w: \[options\] faults: unknown key 'reroute_delay_ps'",
    ),
    "faults-file-missing": (
        lambda t: _doc() | {"options": {"faults": "missing-faults.toml"}},
        r"^w: \[options\] faults: faults file '.*missing-faults\.toml' does not exist$",
    ),
    "faults-a-number": (
        lambda t: _doc() | {"options": {"faults": 5}},
        r"^w: \[options\] faults: faults=5 must be a faults file \(its path\) or a table in its format, e\.g\. ",
    ),
    "rate-past-the-largest": (
        lambda t: _doc() | {"rate": "1e30Gbps"},
        r"^w: rate='1e30Gbps' is more than 1000Tbps \(1 Pbit/s, mcsim's largest rate\)$",
    ),
    "background-rate-past-the-largest": (
        lambda t: _doc(kind="background") | {"rate": "1e30Gbps"},
        r"^w: rate='1e30Gbps' is more than 1000Tbps",
    ),
    "option-in-the-file-s-words": (
        lambda t: _doc() | {"options": {"endpoints": 0}},
        r"^w: \[options\] endpoints=0 must be 1\.\.16383: ",
    ),
    "option-hosts-a-string": (
        lambda t: _doc() | {"options": {"lossy_hosts": "0-3"}},
        r"^w: \[options\] lossy_hosts='0-3' must be host ids \(integers >= 0\)$",
    ),
    "option-roots-a-string": (
        lambda t: _doc() | {"options": {"roots": "01"}},
        r"^w: \[options\] roots='01' must be an integer ",
    ),
    "topology-unknown": (lambda t: _doc() | {"topology": "nope"}, r"^w: unknown topology 'nope'; choose one of "),
    "faults-not-an-edge": (
        lambda t: _doc() | {"options": {"faults": {"link_down": [{"u": 0, "v": 9, "down": "1us", "up": "forever"}]}}},
        r"^w: \[options\] faults: link_down\[0\]=\(0, 9, 1000000, None\): \(0, 9\) is not an edge of fat-tree-k4",
    ),
    "faults-not-a-probability": (
        lambda t: _doc() | {"options": {"faults": {"link_loss": [{"u": 0, "v": 16, "p": 1.5}]}}},
        r"^w: \[options\] faults: link_loss\[\(0, 16\)\]: p=1\.5 must be a probability >= 0 and < 1",
    ),
    "chakra-algorithm-not-a-string": (
        lambda t: _chakra([str(DATA / "chakra-feeder.0.et.gz")] * 2, allreduce=5),
        r"^w: jobs\[0\]: allreduce=5 must be a string, e\.g\. 'ring'$",
    ),
    "comm-size-nan": (
        _nan_trace,
        r"^.*t\.0\.et: node 1 \(x\): comm_size=nan must be a whole number 0\.\.4611686018427387904 " + SIZE + "$",
    ),
}


@pytest.mark.parametrize("case", list(FILES))
def test_a_bad_workload_file_is_one_line(case, tmp_path):
    make, message = FILES[case]
    with pytest.raises(McsimError, match=message) as err:
        check_workload(workload_of(make(tmp_path), "w", tmp_path))  # what a run checks before any C++ exists
    assert "\n" not in str(err.value)


# ---- Chakra traces -------------------------------------------------------------------------------------------

COLL = {"id": 2, "name": "x", "type": 7}


def _gzip_of_zeros(path: Path, n: int) -> Path:
    """A gzip file of ``n`` zero bytes, compressed a MiB at a time (never ``n`` bytes in memory)."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(n >> 20):
            f.write(bytes(1 << 20))
    return path


def _gzip_of_big_nodes(path: Path, count: int) -> Path:
    """A gzip trace of ``count`` nodes of 1 MiB each (a name of 1 MiB): small compressed, large decompressed."""
    _, node_cls = message_classes()
    node = node_cls(id=1, name="n" * (1 << 20), type=4).SerializeToString()
    with gzip.open(path, "wb") as f:
        f.write(b"\x00")  # an empty GlobalMetadata
        for _ in range(count):
            f.write(_varint(len(node)) + node)
    return path


def _gzip_of_dependencies(path: Path, count: int) -> Path:
    """A gzip trace of ``count`` nodes, each of 1,000,000 dependencies on node 1 (1 byte each, packed)."""
    _, node_cls = message_classes()
    node = node_cls(id=2, name="d", type=4)
    node.data_deps.extend([1] * 1_000_000)
    raw = node.SerializeToString()
    with gzip.open(path, "wb") as f:
        f.write(b"\x00")
        for _ in range(count):
            f.write(_varint(len(raw)) + raw)
    return path


def _corrupt_deflate(path: Path) -> Path:
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\xff\xfe\xfd" * 50)
    return path


def _truncated_gzip(path: Path) -> Path:
    data = gzip.compress((DATA / "msccl-ring-allreduce" / "custom_allreduce.0.et.gz").read_bytes())
    path.write_bytes(gzip.compress(gzip.decompress(data))[:200])
    return path


TRACES = {
    "corrupt-deflate": (
        lambda t: _corrupt_deflate(t / "bad.et.gz"),
        r"^.*bad\.et\.gz: not a Chakra trace \(a broken "
        r"gzip stream: .*\)$",
    ),
    "truncated-gzip": (
        lambda t: _truncated_gzip(t / "cut.et.gz"),
        r"^.*cut\.et\.gz: not a Chakra trace \(a broken "
        r"gzip stream: .*\)$",
    ),
    "gzip-of-64MB-of-zeros": (
        lambda t: _gzip_of_zeros(t / "zeros.et.gz", 64 << 20),
        r"^.*zeros\.et\.gz: holds more "
        r"than 500000 nodes; a job's traces hold at most 500000 nodes together",
    ),
    "decompresses-past-the-limit": (
        lambda t: _gzip_of_big_nodes(t / "big.et.gz", 300),
        r"^.*big\.et\.gz: holds more "
        r"than 268435456 B decompressed; a trace file holds at most 268435456 B \(256 MiB\)",
    ),
    "a-message-past-the-limit": (
        lambda t: (t / "long.et").write_bytes(b"\x00" + _varint(1 << 40)) and t / "long.et",
        r"^.*long\.et: a message of 1099511627776 B; a trace's node holds at most 16777216 B \(16 MiB\)",
    ),
    "gzip-of-1-byte-dependencies": (
        lambda t: _gzip_of_dependencies(t / "deps.et.gz", 30),
        r"^.*deps\.et\.gz: holds more than 25000000 dependencies; a job's traces hold at most 25000000 dependencies",
    ),
    "long-name-cut": (
        lambda t: _trace(t / "n.et", [COLL | {"name": "n" * 100_000, "attr": {"comm_type": 0, "comm_size": math.nan}}]),
        r"^.*n\.et: node 2 \(n{117}\.\.\.\): comm_size=nan must be a whole number",
    ),
    "comm-size-inf": (
        lambda t: _trace(t / "i.et", [COLL | {"attr": {"comm_type": 0, "comm_size": math.inf}}]),
        r"^.*i\.et: node 2 \(x\): comm_size=inf must be a whole number 0\.\.4611686018427387904",
    ),
    "comm-size-fraction": (
        lambda t: _trace(t / "f.et", [COLL | {"attr": {"comm_type": 0, "comm_size": 1.5}}]),
        r"^.*f\.et: node 2 \(x\): comm_size=1\.5 must be a whole number",
    ),
    "comm-size-past-the-largest-size": (
        lambda t: _trace(t / "s.et", [COLL | {"attr": {"comm_type": 0, "comm_size": 2**63 - 1}}]),
        r"^.*s\.et: node 2 \(x\): comm_size=9223372036854775807 must be 0\.\.4611686018427387904 " + SIZE + "$",
    ),
    "comm-dst-nan": (
        lambda t: _trace(
            t / "d.et", [{"id": 2, "name": "s", "type": 5, "attr": {"comm_dst": math.nan, "comm_size": 8}}]
        ),
        r"^.*d\.et: node 2 \(s\): comm_dst=nan must be a whole number -9223372036854775808\.\.9223372036854775807 "
        r"\(int64\)$",
    ),
    "duration-past-the-clock": (
        lambda t: _trace(t / "c.et", [{"id": 1, "name": "c", "type": 4, "us": 2**63}], compress=True),
        rf"^.*c\.et: node 1 \(c\): duration_micros=9223372036854775808 must be 0\.\.4611686018427 {CLOCK}$",
    ),
    "bad-utf8-name": (
        lambda t: (t / "u.et").write_bytes(b"\x00\x04\x12\x02\xff\xfe") and t / "u.et",
        r"^.*u\.et: not a Chakra trace \(Error parsing message",
    ),
    "truncated-message": (
        lambda t: (t / "m.et").write_bytes(b"\x00\x09\x08\x01") and t / "m.et",
        r"^.*m\.et: not a Chakra trace \(a message of 9 B runs past the end of the file\)$",
    ),
}


@pytest.mark.parametrize("case", list(TRACES))
def test_a_bad_trace_is_one_line_naming_its_file(case, tmp_path):
    make, message = TRACES[case]
    path = make(tmp_path)
    with pytest.raises(McsimError, match=message) as err:
        chakra_job("j", H2, [path, path])
    assert "\n" not in str(err.value)


# ---- what a workload file now takes --------------------------------------------------------------------------


def test_a_traces_prefix_finds_the_gzipped_traces_mcsim_ships(tmp_path):
    folder = DATA / "msccl-ring-allreduce"
    path = tmp_path / "w.toml"
    path.write_text(
        f'topology = "fat-tree-k4"\n[[jobs]]\nname = "m"\nkind = "chakra"\nranks = 8\n'
        f'traces = "{os.path.relpath(folder, tmp_path)}/custom_allreduce"\n'
    )
    (job,) = read_workload(path).jobs
    assert len(job.steps) == 35  # 14 sends, 14 receives and 7 computes a rank (data/README.md)


def test_options_faults_take_the_faults_file_format(tmp_path):
    link_down = [{"u": 16, "v": 24, "down": "20us", "up": "forever"}]
    (tmp_path / "f.toml").write_text('link_down = [{u = 16, v = 24, down = "20us", up = "forever"}]\n')
    expected = Faults(link_down=[(16, 24, 20_000_000, None)])
    for faults in ("f.toml", {"link_down": link_down}):
        w = workload_of(_doc() | {"options": {"faults": faults}}, "w", tmp_path)
        assert w.options["faults"] == expected
        check_workload(w)  # an edge of the fabric


def test_a_sweep_reads_a_workload_s_faults_file_into_its_base(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "f.toml").write_text('link_down = [{u = 16, v = 24, down = "20us", up = "forever"}]\n')
    (tmp_path / "w" / "w.toml").write_text(
        f'topology = "fat-tree-k4"\n[options]\nfaults = "f.toml"\n[[jobs]]\n{FSDP_KEYS}name = "a"\nranks = 4\n'
    )
    (tmp_path / "s.toml").write_text('name = "s"\nworkload = "w/w.toml"\n[axes]\nseed = [1, 2]\n')
    runs = SweepSpec.from_toml(tmp_path / "s.toml").runs()
    for run in runs:  # relative to the workload file; its content in the run's data (so in its key)
        assert run.workload.data["options"]["faults"] == {
            "link_down": [{"u": 16, "v": 24, "down": "20us", "up": "forever"}]
        }
        assert run.workload.workload.options["faults"] == Faults(link_down=[(16, 24, 20_000_000, None)])


# ---- the commands --------------------------------------------------------------------------------------------

WORKLOAD = 'topology = "fat-tree-k4"\n[[jobs]]\nname = "a"\n'
FSDP_KEYS = 'kind = "fsdp"\nlayers = 1\nbytes_per_layer = "4KiB"\nforward = "1us"\nbackward = "1us"\n'
COMMAND_FILES = {
    "hosts-of-arrays.toml": f"{WORKLOAD}hosts = [[0, 1], [2]]\n{FSDP_KEYS}",
    "hosts-a-string.toml": f'{WORKLOAD}hosts = "0-3"\n{FSDP_KEYS}',
    "ranks-not-hosts.toml": f"{WORKLOAD}hosts = [0, 1]\nranks = 4\n{FSDP_KEYS}",
    "load.toml": f'{WORKLOAD}ranks = 4\nkind = "background"\nload = 1e-300\n',
    "layers.toml": f"{WORKLOAD}ranks = 4\n{FSDP_KEYS.replace('layers = 1', 'layers = 100000000')}",
    "rounds.toml": f'{WORKLOAD}ranks = 4\nkind = "background"\nload = 1\nrounds = 1000000000\n',
    "duration.toml": f'{WORKLOAD}ranks = 4\nkind = "background"\nload = 1\nbytes_per_peer = 8\nduration = "1000000s"\n',
    "faults.toml": f'{WORKLOAD}ranks = 4\n{FSDP_KEYS}[options.faults]\nlink_down = [{{u = 0, v = 16, down = "1x"}}]\n',
    "zeros.toml": f'{WORKLOAD}ranks = 2\nkind = "chakra"\ntraces = "zeros"\n',
    "corrupt.toml": f'{WORKLOAD}ranks = 2\nkind = "chakra"\ntraces = "corrupt"\n',
    "nan.toml": f'{WORKLOAD}ranks = 2\nkind = "chakra"\ntraces = "nan"\n',
    "base.toml": f"{WORKLOAD}hosts = [0, 1, 2, 3]\n{FSDP_KEYS}",
    "sweep-ranks.toml": 'name = "s"\nworkload = "base.toml"\n[axes]\n"jobs.a.ranks" = [4, 8]\n',
    "sweep-hosts.toml": 'name = "s"\nworkload = "base.toml"\n[axes]\n"jobs.a.hosts" = ["0-3"]\n',
    "sweep-layers.toml": 'name = "s"\nworkload = "base.toml"\n[axes]\n"jobs.a.layers" = [100000000]\n',
    "sweep-endpoints.toml": 'name = "s"\nworkload = "base.toml"\n[axes]\n"options.endpoints" = [0]\n',
    "sweep-faults.toml": 'name = "s"\nworkload = "base.toml"\n[axes]\n"options.faults" = [{reroute_delay = "1x"}]\n',
}
COMMANDS = {
    "hosts-of-arrays": (["workload", "hosts-of-arrays.toml"], r"hosts=\[\[0, 1\], \[2\]\] must be a list of host"),
    "hosts-a-string": (["workload", "hosts-a-string.toml"], r"hosts='0-3' must be a list of host numbers"),
    "ranks-not-hosts": (["workload", "ranks-not-hosts.toml"], r"ranks=4 but hosts holds 2 hosts"),
    "load-1e-300": (["workload", "load.toml"], r"^job 'a': load=1e-300 makes each idle gap inf ps"),
    "layers-1e8": (["workload", "layers.toml"], r"^job 'a': layers=100000000 makes 500000000 steps"),
    "rounds-1e9": (["workload", "rounds.toml"], r"^job 'a': rounds=1000000000 makes 2000000000 steps"),
    "duration-long": (["workload", "duration.toml"], r"^job 'a': duration_ps=1000000000000000000 makes \d+ steps"),
    "faults-bad-time": (
        ["workload", "faults.toml"],
        r"^.*faults\.toml: \[options\] faults: link_down\[0\] has no 'up'",
    ),
    "trace-of-zeros": (["workload", "zeros.toml"], r"zeros\.0\.et\.gz: holds more than 500000 nodes"),
    "trace-corrupt-deflate": (["workload", "corrupt.toml"], r"corrupt\.0\.et\.gz: not a Chakra trace \(a broken gzip"),
    "trace-comm-size-nan": (["workload", "nan.toml"], r"nan\.0\.et: node 2 \(x\): comm_size=nan must be a whole"),
    "sweep-ranks-not-hosts": (
        ["sweep", "sweep-ranks.toml", "--dry-run"],
        r"^sweep 's' run 0 \(jobs\.a\.ranks=4\): workload: jobs\[0\]: ranks=4 but hosts holds 4 hosts|"
        r"^sweep 's' run 1 \(jobs\.a\.ranks=8\): workload: jobs\[0\]: ranks=8 but hosts holds 4 hosts",
    ),
    "sweep-hosts-a-string": (
        ["sweep", "sweep-hosts.toml", "--dry-run"],
        r"^sweep 's' run 0 \(jobs\.a\.hosts=0-3\): "
        r"workload: jobs\[0\]: hosts='0-3' must be a list of host numbers",
    ),
    "sweep-layers-1e8": (
        ["sweep", "sweep-layers.toml", "--dry-run"],
        r"^sweep 's' run 0 \(jobs\.a\.layers=100000000\):"
        r" job 'a': layers=100000000 makes 500000000 steps",
    ),
    "sweep-endpoints": (
        ["sweep", "sweep-endpoints.toml", "--dry-run"],
        r"^sweep 's' run 0 \(options\.endpoints=0\): "
        r"workload: \[options\] endpoints=0 must be 1\.\.16383",
    ),
    "sweep-faults": (
        ["sweep", "sweep-faults.toml", "--dry-run"],
        r"^sweep 's' run 0 .*: workload: \[options\] faults: "
        r"reroute_delay='1x': unknown unit 'x'",
    ),
}


@pytest.fixture(scope="module")
def command_dir(tmp_path_factory) -> Path:
    """The commands' files, written once (a 64 MB gzip bomb among them)."""
    tmp = tmp_path_factory.mktemp("commands")
    for name, text in COMMAND_FILES.items():
        (tmp / name).write_text(text)
    _gzip_of_zeros(tmp / "zeros.0.et.gz", 64 << 20)
    (tmp / "zeros.1.et.gz").write_bytes((tmp / "zeros.0.et.gz").read_bytes())
    _corrupt_deflate(tmp / "corrupt.0.et.gz")
    (tmp / "corrupt.1.et.gz").write_bytes((tmp / "corrupt.0.et.gz").read_bytes())
    for r in range(2):
        _trace(tmp / f"nan.{r}.et", [COLL | {"attr": {"comm_type": 0, "comm_size": math.nan}}])
    return tmp


@pytest.mark.parametrize("case", list(COMMANDS))
def test_a_bad_workload_through_the_command_is_one_line_and_exit_2(case, command_dir):
    argv, message = COMMANDS[case]
    proc = subprocess.run(
        [sys.executable, "-m", "mcsim", *argv], capture_output=True, text=True, cwd=command_dir, timeout=120
    )
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("mcsim: error: "), proc.stderr[-2000:]
    assert re.search(message, lines[0].removeprefix("mcsim: error: ")), lines[0]
