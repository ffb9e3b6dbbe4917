# SPDX-License-Identifier: GPL-2.0-only
"""The mcsim command: every command works; bad input is one line on stderr and exit code 2."""

import subprocess
import sys
from pathlib import Path

import pytest

from mcsim.cli import main

REPO = Path(__file__).resolve().parent.parent


def test_build_reports_the_library(capsys):
    assert main(["build"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(("up to date: ", "built in ")) and out.strip().endswith("libmcsim-ns3.so")


def test_info_lists_versions_paths_and_cache(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    for field in ("mcsim", "ns3", "3.44.post0", "cppyy", "cmake", "c++ compiler", "sources", "cache", "build"):
        assert field in out


def test_stream_prints_columns_and_matches_closed_form(capsys):
    assert main(["stream", "--rate", "1.6Tbps", "--encoding", "none", "--size", "1MiB"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["size_B", "packets", "time_us", "goodput_Gbps", "closed_form_us"]
    assert row.split()[:2] == ["1048576", "256"]
    assert row.split()[2] == row.split()[4]


def test_allgather_prints_columns_and_verifies(capsys):
    assert main(["allgather", "--topology", "fat-tree-k4", "--algo", "mcast", "--size", "4KiB,64KiB", "--verify"]) == 0
    out, err = capsys.readouterr()
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["size_B", "time_us", "algbw_GBps", "busbw_GBps"]
    assert [row.split()[0] for row in rows] == ["4096", "65536"]
    assert "every byte of every output is right" in err


def test_topo_show_summarises_the_testbed(capsys):
    assert main(["topo", "show", "testbed-188"]) == 0
    out = capsys.readouterr().out
    assert "hosts             188" in out
    assert "switches          18 " in out
    assert "diameter          4 hops" in out
    bisection_tbps = 94 * 54.545454545 / 1000  # 94 hosts per half, one FDR link each
    assert f"bisection         {bisection_tbps:.3f}Tbps" in out


def test_topo_show_reads_a_file(capsys):
    assert main(["topo", "show", str(REPO / "topologies" / "fat-tree-k8.toml")]) == 0
    assert "hosts             128" in capsys.readouterr().out


def test_run_executes_a_script_with_its_arguments(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\nsys.exit(3)\n")
    assert main(["run", str(script), "--size", "1MiB"]) == 3
    assert "args ['--size', '1MiB']" in capsys.readouterr().out


def test_run_the_main_scenario(capsys):
    assert main(["run", str(REPO / "scenarios" / "link_stream.py"), "--size", "256KiB"]) == 0
    assert "every stream matches its closed form" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["stream", "--rate", "0Gbps"], "mcsim: error: --rate='0Gbps' must be > 0 bit/s"),
        (["stream", "--size=-1MiB"], "mcsim: error: --size='-1MiB' must not be negative"),
        (["stream", "--size", "0"], "mcsim: error: stream: size_b=0 must be > 0"),
        (["stream", "--encoding", "8b/10"], "mcsim: error: encoding='8b/10' is not a line code"),
        (["stream", "--rat", "1G"], "mcsim: error: unrecognized arguments: --rat 1G"),
        (["run", "no/such/script.py"], "mcsim: error: run: script 'no/such/script.py' does not exist"),
        (["frobnicate"], "mcsim: error: argument command: invalid choice: 'frobnicate'"),
        ([], "mcsim: error: the following arguments are required: command"),
        (["topo", "show", "testbed-189"], "mcsim: error: unknown topology 'testbed-189'; choose one of"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, message):
    proc = subprocess.run([sys.executable, "-m", "mcsim.cli", *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message)
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
