# SPDX-License-Identifier: GPL-2.0-only
"""`mcsim workload`'s outputs and its --faults file, through the real command in a fresh process: two outputs that
name one file (however spelt) are one line before any work; the --out and --timeline files are written before the
rows are printed (a stdout that cannot take a row loses no file); --faults FILE.toml applies the file's faults to
the run as every collective command's does (a host cut off: its job INCOMPLETE, saying why), and is refused in one
line beside the workload's own [options] faults."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

WORKLOAD = (
    'topology = "fat-tree-k4"\nrate = "100Gbps"\n{options}[[jobs]]\nname = "NAME"\nhosts = [0, 1, 2, 3]\n'
    'kind = "fsdp"\nlayers = 1\nbytes_per_layer = "4KiB"\nforward = "1us"\nbackward = "1us"\n'
)
# host 3's only link (to leaf 17 of fat-tree-k4), down from 0 for good
CUT_HOST_3 = 'link_down = [{u = 3, v = 17, down = "0us", up = "forever"}]\n'
CUT_OFF = r"rank 3 of 4 did not finish: its only link went down for good at 0\.000 us \(Faults\.link_down\)"
ENV = os.environ | {"MCSIM_PROGRESS": "0"}


def mcsim(tmp: Path, *argv: str, env: dict[str, str] = ENV) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcsim", "workload", *argv],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=env,
        timeout=300,
    )


def files(tmp: Path, name: str = "train", options: str = "") -> None:
    (tmp / "w.toml").write_text(WORKLOAD.format(options=options).replace("NAME", name), encoding="utf-8")
    (tmp / "cut.toml").write_text(CUT_HOST_3)
    (tmp / "bad.toml").write_text(CUT_HOST_3.replace("v = 17", "v = 5"))  # no link of fat-tree-k4


def one_line(proc: subprocess.CompletedProcess[str], line: str) -> None:
    """Exit 2, no traceback, exactly one stderr line: the error."""
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert proc.stderr.count("\n") == 1, proc.stderr[-3000:]
    assert re.fullmatch(f"mcsim: error: {line}\n", proc.stderr), proc.stderr


# (case, the command's arguments after w.toml, the one line)
CASES = [
    (
        "out-and-timeline-one-file",
        ["--out", "x.csv", "--timeline", "./x.csv"],
        r"workload: --out='x\.csv' and --timeline='\./x\.csv' name one file \(/\S+/x\.csv\); give each output a "
        r"file of its own",
    ),
    (
        "out-and-timeline-one-file-through-a-symlink",
        ["--out", "x.csv", "--timeline", "link.csv"],
        r"workload: --out='x\.csv' and --timeline='link\.csv' name one file \(/\S+/x\.csv\); give each output a "
        r"file of its own",
    ),
    (
        "out-over-the-workload-file",
        ["--out", "./w.toml"],
        r"workload: --out='\./w\.toml' names FILE='w\.toml', the file it reads \(/\S+/w\.toml\); writing it would "
        r"overwrite that file: give the output another name",
    ),
    (
        "timeline-over-the-faults-file",
        ["--faults", "cut.toml", "--timeline", "cut.toml"],
        r"workload: --timeline='cut\.toml' names --faults='cut\.toml', the file it reads \(/\S+/cut\.toml\); "
        r"writing it would overwrite that file: give the output another name",
    ),
    (
        "a-faults-file-beside-the-workloads-own",
        ["--faults", "cut.toml"],
        r"w\.toml: --faults='cut\.toml' and the file's \[options\] faults both give the run's faults; keep one "
        r"\(leave out --faults, or \[options\] faults\)",
    ),
    (
        "a-missing-faults-file",
        ["--faults", "nope.toml"],
        r"faults file 'nope\.toml' does not exist",
    ),
    (
        "a-faults-file-link-the-topology-does-not-have",
        ["--faults", "bad.toml"],
        r"faults file 'bad\.toml': link_down\[0\]=\(3, 5, 0, None\): \(3, 5\) is not an edge of fat-tree-k4; node 3 "
        r"links to 17",
    ),
]


@pytest.mark.parametrize(("argv", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_workload_command_is_one_line(tmp_path, argv, line):
    own = 'faults = "cut.toml"\n' if "--faults" in argv and "cut.toml" in argv else ""
    files(tmp_path, options=f"[options]\n{own}" if own else "")
    (tmp_path / "link.csv").symlink_to(tmp_path / "x.csv")
    one_line(mcsim(tmp_path, "w.toml", *argv), line)
    assert not (tmp_path / "x.csv").exists()


def test_a_faults_file_cuts_a_host_off_and_its_job_says_why(tmp_path):
    files(tmp_path)
    proc = mcsim(tmp_path, "w.toml", "--faults", "cut.toml", "--format", "json")
    assert proc.returncode == 1, proc.stderr[-3000:]
    (row,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert row["complete"] is False
    assert re.search(CUT_OFF, row["why_incomplete"]), row["why_incomplete"]
    # the same faults from the workload's own [options]: the same run
    files(tmp_path, options='[options]\nfaults = "cut.toml"\n')
    again = mcsim(tmp_path, "w.toml", "--format", "json")
    assert [json.loads(line) for line in again.stdout.splitlines()] == [row]


def test_the_files_are_written_before_a_row_stdout_cannot_take(tmp_path):
    """A non-ASCII job name under the C locale: stdout cannot print its row, one line says so, and the --out
    and --timeline files hold the run (they were lost)."""
    files(tmp_path, name="\u5927\u89c4\u6a21-job")
    env = ENV | {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    env.pop("PYTHONIOENCODING", None)
    proc = mcsim(tmp_path, "w.toml", "--out", "o.json", "--timeline", "t.csv", env=env)
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("mcsim: workload ")]
    assert proc.returncode == 2 and len(errors) == 1, proc.stderr[-3000:]
    assert errors[0].startswith("mcsim: error: stdout's encoding, ascii, cannot write '\\u5927'"), errors[0]
    (row,) = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert row["name"] == "\u5927\u89c4\u6a21-job" and row["complete"] is True
    assert "\u5927\u89c4\u6a21-job" in (tmp_path / "t.csv").read_text(encoding="utf-8")
