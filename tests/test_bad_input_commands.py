# SPDX-License-Identifier: GPL-2.0-only
"""Every bad input a new user was seen to meet, through the real command in a fresh process: one
`mcsim: error:` line on stderr, exit 2, no traceback and no C++ abort, before any work (each case
is fast: nothing is simulated). The exact messages are tested beside each check; this table is the
guard that none of them turns back into a traceback."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcsim.sweep.store import Store

GRAPHML = """<?xml version="1.0"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
<key id="r" for="node" attr.name="role" attr.type="string"/>
<key id="t" for="node" attr.name="tier" attr.type="long"/>
<key id="n" for="node" attr.name="name" attr.type="string"/>
<key id="d" for="edge" attr.name="delay_ps" attr.type="double"/>
<key id="b" for="edge" attr.name="rate_bps" attr.type="double"/>
<graph edgedefault="undirected">
<node id="0"><data key="r">host</data><data key="t">0</data><data key="n">h0</data></node>
<node id="1"><data key="r">host</data><data key="t">0</data><data key="n">h1</data></node>
<node id="2"><data key="r">switch</data><data key="t">1</data><data key="n">s0</data></node>
<edge source="0" target="2"><data key="d">DELAY</data><data key="b">56250000000</data></edge>
<edge source="1" target="2"><data key="d">100000</data><data key="b">56250000000</data></edge>
</graph></graphml>
"""
SWEEP_HUGE = """name = "huge"
[base]
topology = "fat-tree-k4"
[axes]
seed = {seeds}
bytes_per_rank = {sizes}
ranks = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
"""

IB_SWITCH = 'Switch\t8 "S-02"\t\t# "s" base port 0 lid 2 lmc 0\n'  # an ibnetdiscover Switch block's first line


def _files(tmp: Path) -> dict[str, str]:
    """The files the cases read, written into tmp; name -> path."""
    made = {
        "faults-1e400": 'link_down = [{u = 16, v = 20, down = "1e400s", up = "forever"}]\n',
        "faults-ok": 'link_down = [{u = 16, v = 20, down = "20us", up = "forever"}]\n',
        "graphml-4e18.graphml": GRAPHML.replace("DELAY", "4e18"),
        "graphml-1e30.graphml": GRAPHML.replace("DELAY", "1e30"),
        "tiny.toml": 'name = "tiny"\n[base]\ntopology = "fat-tree-k4"\nbytes_per_rank = "4KiB"\n',
        "workload.toml": 'topology = "fat-tree-k4"\n[[jobs]]\nname = "a"\nranks = 4\nkind = "fsdp"\nlayers = 1\n'
        'bytes_per_layer = "4KiB"\nforward = "1us"\nbackward = "1us"\n',
        "workload-option.toml": '[options]\nwarp = 9\n[[jobs]]\nname = "a"\nranks = 4\nkind = "background"\nload = 1\n',
        "workload-endpoints.toml": 'topology = "fat-tree-k4"\n[options]\nendpoints = 0\n[[jobs]]\nname = "a"\n'
        'ranks = 4\nkind = "background"\nload = 1\n',
        "workload-duration.toml": 'topology = "fat-tree-k4"\n[[jobs]]\nname = "a"\nranks = 4\nkind = "background"\n'
        'load = 1\nduration = "1us"\nrounds = 2\n',
        "workload-sweep.toml": 'name = "w"\nworkload = "workload.toml"\n[axes]\n"jobs.a.allgather" = ["ring", "x"]\n',
        "huge.toml": SWEEP_HUGE.format(seeds=list(range(10_000)), sizes=[f"{k}KiB" for k in range(1, 3001)]),
        "ib-empty.topo": "",
        "ib-malformed.topo": f"{IB_SWITCH}not a port line\n",
        "ib-undeclared.topo": f'{IB_SWITCH}[1]\t"H-01"[1](2) \t\t# "a" lid 1 4xEDR\n',
        "ib-speed.topo": f'{IB_SWITCH}[1]\t"H-01"[1](2) \t\t# "a" lid 1 4xZDR\n',
    }
    paths = {}
    for name, text in made.items():
        path = tmp / (name if "." in name else f"{name}.toml")
        path.write_text(text)
        paths[name] = str(path)
    for name in ("zero.toml", "zero.graphml", "zero.topo"):  # a file with no end: read no further than the limit
        (tmp / name).symlink_to("/dev/zero")
        paths[name] = str(tmp / name)
    binary = tmp / "binary.toml"
    binary.write_bytes(bytes(range(256)) * 8)
    paths["binary"] = str(binary)
    paths["man"] = str(Path(__file__).parent / "topology" / "data" / "ibnetdiscover-man-example.topo")
    (tmp / "ib.graphml").write_text(Path(paths["man"]).read_text())  # an ibnetdiscover file with -o's suffix
    paths["ib.graphml"] = str(tmp / "ib.graphml")
    (tmp / "alias.csv").symlink_to(tmp / "target.csv")  # another name of target.csv (which does not exist yet)
    paths["alias.csv"] = str(tmp / "alias.csv")
    with Store(tmp / "store.csv"):  # an empty sweep store whose name ends in an output's suffix
        pass
    paths["store.csv"] = str(tmp / "store.csv")
    return paths


FT4 = ["--topology", "fat-tree-k4", "--size", "4KiB"]
QT = ["--queue-trace", "q.csv", "--queue-ports", "16:0"]  # a queue trace of one port
CASES = {
    "rate-overflow": (["allgather", *FT4, "--rate", "1e30Gbps"], {}),
    "stream-rate-overflow": (["stream", "--rate", "1e20Tbps"], {}),
    "stream-delay-overflow": (["stream", "--delay", "1e20s"], {}),
    "stream-1bps": (["stream", "--rate", "1bps"], {}),
    "faults-1e400s": (["allgather", *FT4, "--faults", "@faults-1e400"], {}),
    "graphml-delay-4e18": (["topo", "show", "@graphml-4e18.graphml"], {}),
    "graphml-delay-1e30": (["topo", "show", "@graphml-1e30.graphml"], {}),
    "topology-binary": (["topo", "show", "@binary"], {}),
    "topology-long-path": (["topo", "show", "a" * 10_000 + ".toml"], {}),
    "topo-draw-bad-group": (["topo", "draw", "fat-tree-k4", "--group", "5-2", "-o", "f.svg"], {}),
    "topo-draw-group-past-hosts": (["topo", "draw", "fat-tree-k4", "--group", "0-99", "-o", "f.svg"], {}),
    "topo-draw-pdf": (["topo", "draw", "fat-tree-k4", "-o", "f.pdf"], {}),
    "topo-draw-aggregation-alone": (["topo", "draw", "fat-tree-k4", "--aggregation", "-o", "f.svg"], {}),
    "topo-draw-unwritable": (["topo", "draw", "fat-tree-k4", "-o", "/nonexistent/f.svg"], {}),
    "topo-draw-binary": (["topo", "draw", "@binary", "-o", "f.svg"], {}),
    "cache-under-a-file": (["build"], {"MCSIM_CACHE_DIR": "/etc/passwd/mcsim"}),
    "cache-in-proc": (["build"], {"MCSIM_CACHE_DIR": "/proc/mcsim"}),
    # ... before any work of a command that simulates (not after its first progress line)
    "cache-allgather": (["allgather", *FT4], {"MCSIM_CACHE_DIR": "/proc/mcsim"}),
    "cache-stream": (["stream"], {"MCSIM_CACHE_DIR": "/proc/mcsim"}),
    "cache-sweep": (["sweep", "@tiny.toml", "--store", "s.sqlite"], {"MCSIM_CACHE_DIR": "/proc/mcsim"}),
    "cache-compare": (["compare", "--quick", "--only", "ring-bound"], {"MCSIM_CACHE_DIR": "/proc/mcsim"}),
    "xdg-cache-under-a-file": (["allgather", *FT4], {"XDG_CACHE_HOME": "/etc/passwd", "MCSIM_CACHE_DIR": ""}),
    "out-unwritable": (["allgather", *FT4, "--out", "/nonexistent/x.csv"], {}),
    "workload-file-without-end": (["workload", "@zero.toml"], {}),
    "faults-file-without-end": (["allgather", *FT4, "--faults", "@zero.toml"], {}),
    "sweep-spec-without-end": (["sweep", "@zero.toml", "--dry-run"], {}),
    "topology-file-without-end": (["topo", "show", "@zero.graphml"], {}),
    "ibnetdiscover-file-without-end": (["topo", "import", "ibnetdiscover", "@zero.topo"], {}),
    "out-over-the-faults-file": (["allgather", *FT4, "--faults", "@faults-ok", "--out", "@faults-ok"], {}),
    "events-over-the-topology-file": (
        ["allgather", "--topology", "@graphml-4e18.graphml", "--size", "4KiB", "--events", "@graphml-4e18.graphml"],
        {},
    ),
    "events-unwritable": (["allgather", *FT4, "--events", "/nonexistent/e.csv"], {}),
    "pcap-hosts-without-pcap": (["allgather", *FT4, "--pcap-hosts", "0,1"], {}),
    "pcap-hosts-past-the-topology": (["allgather", *FT4, "--pcap", "tr", "--pcap-hosts", "0-99"], {}),
    "pcap-folder-unmakeable": (["allgather", *FT4, "--pcap", "/proc/mcsim-pcap"], {}),
    "flow-control-unknown": (["allgather", *FT4, "--flow-control", "credits"], {}),
    "lossy-hosts-without-pfc": (["allgather", *FT4, "--lossy-hosts", "0-3"], {}),
    "lossy-datagrams-without-pfc": (["allgather", *FT4, "--lossy-datagrams"], {}),
    "lossy-datagrams-of-innet": (
        ["reduce-scatter", *FT4, "--algorithm", "innet", "--flow-control", "pfc", "--lossy-datagrams"],
        {},
    ),
    "lossy-datagrams-of-a-ring": (
        ["allgather", *FT4, "--algorithm", "ring", "--flow-control", "pfc", "--lossy-datagrams"],
        {},
    ),
    "lossy-hosts-past-the-topology": (["allgather", *FT4, "--flow-control", "pfc", "--lossy-hosts", "0-99"], {}),
    "lossy-hosts-not-hosts": (["reduce-scatter", *FT4, "--flow-control", "pfc", "--lossy-hosts", "edge0"], {}),
    "wire-format-unknown": (["allgather", *FT4, "--wire-format", "ethernet"], {}),
    "congestion-control-unknown": (["allgather", *FT4, "--congestion-control", "xcp"], {}),
    "pcap-of-an-hpcc-run": (["allgather", *FT4, "--pcap", "tr", "--congestion-control", "hpcc"], {}),
    "pcap-ports-without-pcap": (["allgather", *FT4, "--pcap-ports", "16:0"], {}),
    "pcap-ports-not-node-port": (["allgather", *FT4, "--pcap", "tr", "--pcap-ports", "16"], {}),
    "pcap-ports-unknown-node-name": (["allgather", *FT4, "--pcap", "tr", "--pcap-ports", "spine9:0"], {}),
    "pcap-ports-node-past-the-topology": (["allgather", *FT4, "--pcap", "tr", "--pcap-ports", "99:0"], {}),
    "pcap-ports-port-past-the-node": (["allgather", *FT4, "--pcap", "tr", "--pcap-ports", "edge0:4"], {}),
    "pcap-ports-twice": (["allgather", *FT4, "--pcap", "tr", "--pcap-ports", "16:0,edge0:0"], {}),
    "events-not-a-table": (["broadcast", *FT4, "--events", "e.pdf"], {}),
    "queue-ports-without-queue-trace": (["allgather", *FT4, "--queue-ports", "16:0"], {}),
    "queue-interval-without-queue-trace": (["allgather", *FT4, "--queue-interval", "1us"], {}),
    "queue-trace-without-ports": (["allgather", *FT4, "--queue-trace", "q.csv"], {}),
    "queue-trace-not-a-table": (["allgather", *FT4, "--queue-ports", "16:0", "--queue-trace", "q.pdf"], {}),
    "queue-trace-unwritable": (["allgather", *FT4, "--queue-ports", "16:0", "--queue-trace", "/nonexistent/q.csv"], {}),
    "queue-ports-not-node-port": (["allgather", *FT4, "--queue-trace", "q.csv", "--queue-ports", "16"], {}),
    "queue-ports-unknown-node": (["allgather", *FT4, "--queue-trace", "q.csv", "--queue-ports", "spine9:0"], {}),
    "queue-ports-node-past-the-topology": (["allgather", *FT4, "--queue-trace", "q.csv", "--queue-ports", "99:0"], {}),
    "queue-ports-port-past-the-node": (["allgather", *FT4, "--queue-trace", "q.csv", "--queue-ports", "edge0:4"], {}),
    "queue-ports-twice": (["allgather", *FT4, "--queue-trace", "q.csv", "--queue-ports", "16:0,edge0:0"], {}),
    "queue-interval-zero": (["allgather", *FT4, *QT, "--queue-interval", "0ns"], {}),
    "queue-interval-negative": (["allgather", *FT4, *QT, "--queue-interval=-1us"], {}),
    "queue-interval-no-unit": (["allgather", *FT4, *QT, "--queue-interval", "5"], {}),
    "queue-interval-past-the-clock": (["allgather", *FT4, *QT, "--queue-interval", "1e30s"], {}),
    "dcqcn-preset-without-dcqcn": (["allgather", *FT4, "--dcqcn-preset", "nvidia"], {}),
    "dcqcn-preset-unknown": (["allgather", *FT4, "--congestion-control", "dcqcn", "--dcqcn-preset", "cx7"], {}),
    "report-out-unwritable": (["report", "--quick", "-o", "/nonexistent/r.html"], {}),
    "workload-unknown-option": (["workload", "@workload-option.toml"], {}),
    "workload-bad-option-value": (["workload", "@workload-endpoints.toml"], {}),
    "workload-rounds-and-duration": (["workload", "@workload-duration.toml"], {}),
    "sweep-workload-bad-algorithm": (["sweep", "@workload-sweep.toml", "--store", "s.sqlite"], {}),
    "sweep-huge-dry-run": (["sweep", "@huge.toml", "--dry-run"], {}),
    "ring-with-roots": (["allgather", *FT4, "--algorithm", "ring", "--roots", "2"], {}),
    "ring-with-timeout-scale": (["allgather", *FT4, "--algorithm", "ring", "--timeout-scale", "3"], {}),
    "allgather-with-root": (["allgather", *FT4, "--root", "1"], {}),
    "allreduce-with-roots": (["allreduce", *FT4, "--roots", "2"], {}),
    "allgather-with-reduce-cost": (["allgather", *FT4, "--reduce-ps-per-byte", "5"], {}),
    "innet-with-reduce-cost": (["reduce-scatter", *FT4, "--algorithm", "innet", "--reduce-ps-per-byte", "5"], {}),
    "mcast-with-ring-chunk": (["broadcast", *FT4, "--ring-chunk", "8KiB"], {}),
    "size-given-twice": (["allgather", "--topology", "fat-tree-k4", "--size", "4KiB", "--bytes-per-rank", "1MiB"], {}),
    "tls-without-scheduler": (["sweep", "@huge.toml", "--tls-cert", "c.pem"], {}),
    "sweep-show-dry-run": (["sweep", "show", "x.sqlite", "--dry-run"], {}),
    "compare-only-empty": (["compare", "--only", ""], {}),
    "compare-workers-0": (["compare", "--workers", "0"], {}),
    "ibnetdiscover-empty": (["topo", "import", "ibnetdiscover", "@ib-empty.topo"], {}),
    "ibnetdiscover-binary": (["topo", "import", "ibnetdiscover", "@binary"], {}),
    "ibnetdiscover-malformed-line": (["topo", "import", "ibnetdiscover", "@ib-malformed.topo"], {}),
    "ibnetdiscover-undeclared-node": (["topo", "import", "ibnetdiscover", "@ib-undeclared.topo"], {}),
    "ibnetdiscover-unknown-speed": (["topo", "import", "ibnetdiscover", "@ib-speed.topo"], {}),
    "ibnetdiscover-missing": (["topo", "import", "ibnetdiscover", "nope.topo"], {}),
    "ibnetdiscover-unknown-root": (["topo", "import", "ibnetdiscover", "@man", "--root", "S-99"], {}),
    "ibnetdiscover-out-toml": (["topo", "import", "ibnetdiscover", "@man", "-o", "x.toml"], {}),
    "ibnetdiscover-out-unwritable": (["topo", "import", "ibnetdiscover", "@man", "-o", "/nonexistent/x.graphml"], {}),
    # two outputs of one command naming one file (the second would overwrite the first), however spelt
    "out-and-events-one-file": (["allgather", *FT4, "--out", "x.csv", "--events", "x.csv"], {}),
    "out-and-events-dot-slash": (["broadcast", *FT4, "--out", "./x.csv", "--events", "x.csv"], {}),
    "out-and-events-symlink": (["allreduce", *FT4, "--out", "@alias.csv", "--events", "target.csv"], {}),
    "out-and-queue-trace-one-file": (["allgather", *FT4, *QT, "--out", "q.csv"], {}),
    "events-and-queue-trace-one-file": (["reduce-scatter", *FT4, *QT, "--events", "./q.csv"], {}),
    "out-and-pcap-one-path": (["allgather", *FT4, "--out", "x.csv", "--pcap", "x.csv"], {}),
    "sweep-show-out-is-the-store": (["sweep", "show", "@store.csv", "--out", "@store.csv"], {}),
    "sweep-show-out-is-the-store-dot-slash": (["sweep", "show", "@store.csv", "--out", "./store.csv"], {}),
    "ibnetdiscover-out-is-the-input": (["topo", "import", "ibnetdiscover", "@ib.graphml", "-o", "./ib.graphml"], {}),
    "report-pdf": (["report", "--quick", "--figures", "dpa-threads", "-o", "r.pdf"], {}),
    # an int option at 0 or below, where it means nothing
    "threads-0": (["allgather", *FT4, "--processor", "dpa", "--threads", "0"], {}),
    "stream-mtu-past-4096": (["stream", "--mtu", "5000"], {}),
    "stream-header-bytes-huge": (["stream", "--header-bytes", "1MiB"], {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_input_is_one_error_line_and_exit_2(case, tmp_path):
    argv, env = CASES[case]
    files = _files(tmp_path)
    argv = [files[a[1:]] if a.startswith("@") else a for a in argv]
    proc = subprocess.run(
        [sys.executable, "-m", "mcsim", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=os.environ | env,
        timeout=120,
    )
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("mcsim: error: "), proc.stderr[-2000:]
    assert len(lines[0]) < 1000  # a path of 10,000 characters is shortened, not echoed whole


def test_a_missing_topologies_folder_breaks_no_command_that_needs_none(tmp_path):
    env = os.environ | {"MCSIM_TOPOLOGIES": str(tmp_path / "nonexistent")}
    mcsim = [sys.executable, "-m", "mcsim"]
    version = subprocess.run([*mcsim, "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith("mcsim ") and version.stderr == ""
    shown = subprocess.run([*mcsim, "topo", "show", "x"], capture_output=True, text=True, env=env)
    assert shown.returncode == 2 and len(shown.stderr.splitlines()) == 1


def test_output_into_a_closed_pipe_is_no_traceback():
    proc = subprocess.run(
        f"{sys.executable} -m mcsim topo show testbed-188 | head -1", shell=True, capture_output=True, text=True
    )
    assert proc.stdout.startswith("topology testbed-188") and "Traceback" not in proc.stderr
    assert proc.stderr == ""


@pytest.mark.parametrize("case", ["out-over-the-faults-file", "events-over-the-topology-file"])
def test_an_output_over_a_file_the_command_reads_is_refused_and_the_file_kept(case, tmp_path):
    argv, _ = CASES[case]
    files = _files(tmp_path)
    read = files[argv[argv.index("--out" if "--out" in argv else "--events") + 1][1:]]
    before = Path(read).read_bytes()
    argv = [files[a[1:]] if a.startswith("@") else a for a in argv]
    proc = subprocess.run([sys.executable, "-m", "mcsim", *argv], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert re.fullmatch(
        r"mcsim: error: allgather: --(out|events)='.+' names --(faults|topology)='.+', the file it "
        r"reads \(.+\); writing it would overwrite that file: give the output another name\n",
        proc.stderr,
    ), proc.stderr
    assert Path(read).read_bytes() == before


@pytest.mark.parametrize("case", [c for c in CASES if c.endswith("-without-end")])
def test_a_file_without_end_is_read_no_further_than_its_limit(case, tmp_path):
    argv, _ = CASES[case]
    files = _files(tmp_path)
    argv = [files[a[1:]] if a.startswith("@") else a for a in argv]
    proc = subprocess.run([sys.executable, "-m", "mcsim", *argv], capture_output=True, text=True, cwd=tmp_path)
    limit = "268435456 B (256 MiB)" if "topo" in argv[0] else "16777216 B (16 MiB)"
    assert re.fullmatch(
        rf"mcsim: error: .*zero\.\w+'? holds more than {re.escape(limit)}, the most mcsim reads of such a file "
        r"\(mcsim.util.toml_text: parsed, a file takes several times its size in memory\)\n",
        proc.stderr,
    ), proc.stderr
