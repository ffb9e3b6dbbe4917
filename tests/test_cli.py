# SPDX-License-Identifier: GPL-2.0-only
"""The mcsim command: every command works; bad input is one line on stderr and exit code 2."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcsim import topology
from mcsim.cli import build_parser, main
from mcsim.config.faults_file import load_faults
from mcsim.config.rdma import RcConfig, RdmaConfig
from mcsim.errors import Interrupted, McsimError
from mcsim.runs.commands import _collective_scenarios
from mcsim.runs.scenario import Scenario, artifact_protocol, scenario_of
from mcsim.runs.stream import two_hosts
from mcsim.topology.physics import Link
from mcsim.units import format_size
from mcsim.util import machine

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
    assert header.split()[:5] == ["size_B", "count", "time_us", "algbw_GBps", "busbw_GBps"]
    assert [row.split()[:2] for row in rows] == [["65536", "16384"], ["1048576", "262144"]]  # nccl-tests: P x N
    assert "every byte of every output is right" in err


def test_an_overlapped_pair_prints_a_row_for_each_collective(capsys, tmp_path):
    out_file = tmp_path / "pair.jsonl"
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "16KiB", "--overlap", "reduce_scatter"]
    assert main([*argv, "--overlap-algorithm", "ring", "--out", str(out_file)]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[-2:] == ["collective", "algorithm"]
    assert [row.split()[-2:] for row in rows] == [["allgather", "mcast"], ["reduce_scatter", "ring"]]
    r = Scenario(topology="fat-tree-k4", bytes_per_rank="16KiB", overlap="reduce_scatter").run()
    times = [float(row.split()[2]) for row in rows]
    assert times == [round(r.time_ps / 1e6, 2), round(r.concurrent.time_ps / 1e6, 2)]
    written = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [(w["collective"], w["time_us"]) for w in written] == [
        ("allgather", r.time_ps / 1e6),
        ("reduce_scatter", r.concurrent.time_ps / 1e6),
    ]


def test_topo_show_summarises_the_testbed(capsys):
    assert main(["topo", "show", "testbed-188"]) == 0
    out = capsys.readouterr().out
    assert "hosts             188" in out
    assert "switches          18 " in out
    assert "diameter          4 hops" in out
    bisection_tbps = 94 * 54.545454545 / 1000  # 94 hosts per half, one FDR link each
    assert f"bisection         {bisection_tbps:.3f}Tbps" in out


def test_topo_show_reads_a_file(capsys):
    assert main(["topo", "show", str(REPO / "mcsim" / "topologies" / "fat-tree-k8.toml")]) == 0
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
        (["allgather", "--size", ","], "mcsim: error: --size=',' has an empty size; give sizes separated by commas"),
        (["allgather", "--size", "4KiB,,1MiB"], "mcsim: error: --size='4KiB,,1MiB' has an empty size"),
        (["broadcast", "--roots", "7"], "mcsim: error: broadcast: --roots is for allgather and allreduce"),
        (["allgather", "--root", "1"], "mcsim: error: allgather: --root is for broadcast"),
        (["allgather", "--bogus"], "mcsim: error: unrecognized arguments: --bogus (see mcsim allgather --help)\n"),
        (["topo", "show", "a", "b"], "mcsim: error: unrecognized arguments: b (see mcsim topo show --help)\n"),
        (["stream", "--rat", "1G"], "mcsim: error: unrecognized arguments: --rat 1G (see mcsim stream --help)\n"),
        ([], "mcsim: error: the following arguments are required: command (see mcsim --help)\n"),
        (["allgather", "--ranks", "4.5"], "mcsim: error: argument --ranks: invalid int value: '4.5' (see mcsim allg"),
        (  # issue 49: a value that starts with '-' is read as an option; the line says how to give it
            ["stream", "--delay", "-1ns"],
            "mcsim: error: argument --delay: expected one argument; give its value, after '=' if it starts with '-' "
            "(--delay=VALUE) (see mcsim stream --help)\n",
        ),
        (
            ["stream", "--rate", "-5Gbps"],
            "mcsim: error: argument --signalling-rate/--rate: expected one argument; give its value, after '=' if it "
            "starts with '-' (--signalling-rate=VALUE)",
        ),
        (["run", "/tmp"], "mcsim: error: run: '/tmp' is a folder; run takes a Python script (or a folder with a "),
        (["allgather", "--retry-cnt", "8"], "mcsim: error: --retry-cnt='8' must be 0..7 (the InfiniBand retry_cnt) or"),
        (
            ["allgather", "--ack-timeout-exp", "32"],
            "mcsim: error: RcConfig: ack_timeout_exp=32 must be 0..31 (its InfiniBand encoding)",
        ),
        (["allgather", "--loss", "1"], "mcsim: error: FabricConfig: loss=1.0 must be a probability >= 0 and < 1"),
        (["allgather", "--loss", "lots"], "mcsim: error: argument --loss: invalid float value: 'lots'"),
        (["allgather", "--mtu", "9KiB"], "mcsim: error: Scenario: mtu='9KiB' is not an MTU"),
        (["allgather", "--timeout-scale", "-1"], "mcsim: error: Scenario: timeout_scale=-1.0 must be a finite number"),
        (["allgather", "--faults", "no/such.toml"], "mcsim: error: faults file 'no/such.toml' does not exist\n"),
        (["broadcast", "--root", "188"], "mcsim: error: Scenario: root=188 must be 0..187 (a rank)\n"),
        (["allgather", "--ranks", "1"], "mcsim: error: Scenario: ranks=1 must be 2..188 (the hosts of testbed-188)"),
        (
            ["allgather", "--size", "1TiB"],
            f"mcsim: error: Scenario: bytes_per_rank='1TiB' makes {188 * 2**28} multicast",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, message):
    proc = subprocess.run([sys.executable, "-m", "mcsim.cli", *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith(message)
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_argparse_error_names_the_subcommand(capsys):
    with pytest.raises(SystemExit) as info:
        main(["topo", "show"])
    assert info.value.code == 2
    assert capsys.readouterr().err.endswith("(see mcsim topo show --help)\n")


def test_run_takes_a_folder_with_a_main_py_as_python_does(tmp_path, capsys):
    (tmp_path / "__main__.py").write_text("print('from the folder')\n")
    assert main(["run", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "from the folder\n"


def test_run_prints_the_message_a_script_exits_with(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text("import sys\nsys.exit('the fabric has no multicast switch')\n")
    assert main(["run", str(script)]) == 1
    assert capsys.readouterr().err == "the fabric has no multicast switch\n"
    script.write_text("import sys\nsys.exit()\n")
    assert main(["run", str(script)]) == 0


def test_topo_show_gives_two_hosts_on_one_link_a_diameter_of_one_hop(tmp_path, capsys):
    path = tmp_path / "pair.graphml"
    topology.write_topology_file(two_hosts(Link(rate_bps=10**11, encoding_data_bits=1, encoding_line_bits=1)), path)
    assert main(["topo", "show", str(path)]) == 0
    assert "diameter          1 hops host to host" in capsys.readouterr().out


# 5 % loss and no RC retry: the ring's QPs fail at the first loss, so ranks never finish
INCOMPLETE = ["allgather", "--algo", "ring", "--size", "64KiB", "--loss", "0.05", "--retry-cnt", "0"]


def test_an_incomplete_size_prints_incomplete_instead_of_numbers_and_exits_1(capsys, star):
    assert main([*INCOMPLETE, "--topology", star(4)]) == 1
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["size_B", "count", "time_us"]
    size, text = row.split(maxsplit=1)
    assert size == str(4 * 65536)  # nccl-tests' size: P x N
    assert text.startswith("INCOMPLETE: ") and " of 4 did not finish: " in text
    assert "RcConfig.retry_cnt" in text  # the QPs ran out of retries


def test_an_incomplete_size_is_nan_in_csv_and_null_in_json(capsys, star):
    assert main([*INCOMPLETE, "--topology", star(4), "--format", "csv"]) == 1
    out, err = capsys.readouterr()
    header, values = (line.split(",") for line in out.splitlines())
    row = dict(zip(header, values, strict=True))
    assert [row[k] for k in ("time_us", "algbw_GBps", "busbw_GBps")] == ["nan"] * 3
    assert 1 <= int(row["unfinished_ranks"]) <= 4 and row["complete"] == "False"
    assert "mcsim: 65536 B per rank: INCOMPLETE: " in err
    assert main([*INCOMPLETE, "--topology", star(4), "--format", "json"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert "NaN" not in line  # RFC 8259 JSON has no NaN: an incomplete run's time is null
    row = json.loads(line)
    assert row["time_us"] is None and row["busbw_GBps"] is None and row["unfinished_ranks"] >= 1


def test_collective_options_map_to_the_scenario_fields(tmp_path):
    faults = tmp_path / "f.toml"
    faults.write_text("drops = [{node = 0, port = 0, index = 0}]\n")
    argv = ["broadcast", "--topology", "fat-tree-k4", "--size", "4KiB,8KiB", "--root", "3", "--mtu", "2KiB"]
    argv += ["--loss", "0.001", "--timeout-scale", "2.5", "--retry-cnt", "forever", "--ack-timeout-exp", "10"]
    scenarios = _collective_scenarios(build_parser().parse_args([*argv, "--faults", str(faults)]))
    assert [sc.bytes_per_rank for sc in scenarios] == ["4KiB", "8KiB"]
    sc = scenarios[0]
    mtu = format_size(sc.rdma.mtu_b)
    assert (sc.collective, sc.root, mtu, sc.fabric.loss, sc.timeout_scale) == ("broadcast", 3, "2KiB", 0.001, 2.5)
    assert sc.rdma.rc == RcConfig(retry_cnt=None, ack_timeout_exp=10)
    assert sc.faults == load_faults(faults)
    (ag,) = _collective_scenarios(build_parser().parse_args(["allgather", "--roots", "4", "--retry-cnt", "3"]))
    assert ag.roots == 4 and ag.rdma.rc == RcConfig(retry_cnt=3) and ag.faults is None


def test_artifact_protocol_runs_the_presets_scenario():
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "64KiB", "--mtu", "2KiB", "--artifact-protocol"]
    (sc,) = _collective_scenarios(build_parser().parse_args(argv))
    preset = artifact_protocol(RdmaConfig(mtu_b=2048))
    assert sc == Scenario(topology="fat-tree-k4", bytes_per_rank="64KiB", **preset)
    (plain,) = _collective_scenarios(build_parser().parse_args(argv[:-1]))
    assert plain == scenario_of(topology="fat-tree-k4", bytes_per_rank="64KiB", mtu="2KiB")
    ring = build_parser().parse_args(["allgather", "--algorithm", "ring", "--artifact-protocol"])
    message = r"^--artifact-protocol is the multicast protocol's; not for --algorithm ring$"
    with pytest.raises(McsimError, match=message):
        _collective_scenarios(ring)


def test_a_faults_file_drives_the_repair(tmp_path, capsys):
    faults = tmp_path / "f.toml"
    faults.write_text("drops = [{node = 0, port = 0, index = 0}]  # chunk 0 of rank 0, on its way out\n")
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "64KiB", "--faults", str(faults), "--format", "json"]
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["complete"] and row["repaired_chunks"] == 15  # every rank but rank 0 fetched the lost chunk


def test_a_run_that_does_not_fit_in_memory_is_refused_before_it_runs(monkeypatch, capsys):
    monkeypatch.setattr(machine, "available_memory_b", lambda: 512 << 20)
    # verify mode: 16 ranks x 16 MiB of output, twice, + the process: > 512 MiB
    assert main(["allgather", "--topology", "fat-tree-k4", "--size", "4KiB,1MiB", "--verify"]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # not even the 4 KiB size ran
    assert (
        err.startswith("mcsim: error: Scenario: needs ~0.848 GiB (process 0.293, fabric 3.23e-05, verify 0.555")
        and "this machine has 0.5 GiB available" in err
    )
    assert err.count("\n") == 1


def test_ctrl_c_on_the_second_size_keeps_the_first(monkeypatch, tmp_path, capsys):
    run, calls = Scenario.run, []

    def interrupted_second(self):
        calls.append(self.bytes_per_rank)
        if len(calls) == 2:
            raise Interrupted("interrupted: simulated 1.000 us in 0.2 s, 0.01 M events (0.05 M/s)")
        return run(self)

    monkeypatch.setattr(Scenario, "run", interrupted_second)
    out = tmp_path / "r.jsonl"
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "4KiB,8KiB,16KiB", "--out", str(out)]
    assert main(argv) == 130
    stdout, err = capsys.readouterr()
    header, *rows = stdout.splitlines()
    assert header.split()[0] == "size_B" and [r.split()[0] for r in rows] == [str(16 * 4096)]  # P x N
    assert [json.loads(line)["bytes_per_rank_B"] for line in out.read_text().splitlines()] == [4096]
    assert calls == ["4KiB", "8KiB"]  # the third size never started
    assert err.splitlines()[-1] == (
        "mcsim: interrupted: simulated 1.000 us in 0.2 s, 0.01 M events (0.05 M/s) (at 8KiB per rank; 1 of 3 sizes "
        f"finished, their rows above and in {out})"
    )


def test_ctrl_c_on_the_first_size_prints_no_rows_and_writes_nothing(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(Scenario, "run", lambda self: (_ for _ in ()).throw(KeyboardInterrupt()))
    out = tmp_path / "r.csv"
    assert main(["allgather", "--topology", "fat-tree-k4", "--size", "4KiB", "--out", str(out)]) == 130
    stdout, err = capsys.readouterr()
    assert stdout == "" and not out.exists()
    assert err.splitlines()[-1] == "mcsim: interrupted (at 4KiB per rank)"


def test_verify_says_bytes_are_missing_not_wrong_when_a_run_is_incomplete(capsys, star):
    assert main([*INCOMPLETE, "--topology", star(4), "--verify"]) == 1
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.startswith("mcsim: verify: ")]
    assert re.fullmatch(r"mcsim: verify: 65536 B per rank: incomplete: bytes missing at ranks? [0-9, ]+ of 4.*", line)
    assert "WRONG" not in err and "wrong" not in err


def test_the_timeout_note_goes_to_stderr_when_timeouts_may_hold_a_run_up(capsys):
    argv = ["allgather", "--topology", "fat-tree-k4", "--algo", "ring", "--size", "64KiB", "--loss", "0.01"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    (note,) = [line for line in err.splitlines() if line.startswith("mcsim: note: ")]
    assert note.startswith("mcsim: note: 65536 B per rank: RC local ACK timeouts (67.109ms each, ack_timeout_exp=14)")
    assert note.endswith("see RcConfig.ack_timeout_exp (--ack-timeout-exp)")
    assert "note" not in out  # stdout keeps its rows only


@pytest.mark.parametrize(
    "shell",
    [
        "{mcsim} topo show testbed-188 | head -1",  # head may go before or after mcsim writes
        "{mcsim} topo show testbed-188 | true",  # the reader has gone before mcsim writes
    ],
)
def test_output_into_a_closed_pipe_stops_quietly_with_141(shell):
    mcsim = f"{shlex.quote(sys.executable)} -m mcsim"
    script = f"{shell.format(mcsim=mcsim)}; echo status ${{PIPESTATUS[0]}}"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=REPO)
    assert proc.stderr == ""
    *shown, status = proc.stdout.splitlines()
    if "head" in shell:
        assert shown == ["topology testbed-188 (leaf_spine)"] and status in ("status 0", "status 141")
    else:
        assert shown == [] and status == "status 141"
