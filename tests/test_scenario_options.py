# SPDX-License-Identifier: GPL-2.0-only
"""The scenario scripts' bad options, through `mcsim run` in a fresh process: one `mcsim: error:` line on stderr,
exit 2, before any output (issue 49: dpa_scaling.py printed four lines of usage and took --max-datagrams -5)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        (
            "dpa_scaling.py",
            ["--max-datagrams", "-5", "--quick"],
            r"--max-datagrams=-5 must be >= 1 \(the most datagrams of one simulated burst\) \(see dpa_scaling\.py "
            r"--help\)",
        ),
        ("dpa_scaling.py", ["--max-datagrams", "0"], r"--max-datagrams=0 must be >= 1 "),
        ("dpa_scaling.py", ["--bogus"], r"unrecognized arguments: --bogus \(see dpa_scaling\.py --help\)"),
        ("dpa_scaling.py", ["--max-datagrams", "x"], r"argument --max-datagrams: invalid int value: 'x' "),
        ("dpa_scaling.py", ["--profile", "nope"], r"argument --profile: invalid choice: 'nope' "),
        ("fsdp_iteration.py", ["--layers", "-1", "--quick"], r"--layers=-1 must be >= 1 \(see fsdp_iteration\.py "),
        ("fsdp_iteration.py", ["--prefetch", "-1", "--quick"], r"--prefetch=-1 must be >= 0 "),
        ("interjob.py", ["--layers", "0"], r"--layers=0 must be >= 1 \(see interjob\.py --help\)"),
        ("fsdp_ag_rs.py", ["--reduce-ps-per-byte", "-1"], r"--reduce-ps-per-byte=-1 must be >= 0 "),
        ("testbed_188_allgather.py", ["--rat", "5"], r"unrecognized arguments: --rat 5 "),  # no abbreviations
        (
            "testbed_188_allgather.py",
            ["--full", "--sizes", "4KiB"],
            r"--full is the sizes 4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,8MiB; give --full or --sizes, not both ",
        ),
        ("roce_fabric.py", ["--congestion-control", "x"], r"argument --congestion-control: invalid choice: 'x' "),
        ("link_speed_sweep.py", ["--sizes", "1KiB"], r"unrecognized arguments: --sizes 1KiB "),
    ],
)
def test_a_bad_option_of_a_scenario_script_is_one_line_and_exit_2(tmp_path, script, args, message):
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", str(REPO)))
    run = subprocess.run(
        [sys.executable, "-m", "mcsim", "run", str(REPO / "scenarios" / script), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1, run.stderr
    assert re.match(rf"^mcsim: error: {message}", lines[0]), lines[0]
    assert run.stdout == ""  # refused before any output
