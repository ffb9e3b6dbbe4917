# SPDX-License-Identifier: GPL-2.0-only
"""The one table formatter and the one CSV/JSON writer, and the CLI's --out."""

import csv
import io
import json
import math
import os
from pathlib import Path

import pytest

from mcsim.cli import main
from mcsim.errors import McsimError
from mcsim.util.output import (
    Column,
    GuardedStdout,
    StdoutError,
    Table,
    check_distinct,
    check_writable,
    csv_text,
    json_text,
    jsonl_text,
    rows_text,
    same_path,
    write_rows,
)

ROWS = [
    {"size_B": 4096, "time_us": 1.5, "complete": True, "verified": None},
    {"size_B": 65536, "time_us": math.nan, "complete": False, "verified": None},
]


def test_table_aligns_columns_at_least_as_wide_as_their_names():
    t = Table([Column("size_B", width=8), Column("time_us", ".2f"), Column("name", left=True, width=6)])
    assert t.header() == "  size_B time_us name  "
    assert t.row({"size_B": 4096, "time_us": 1.5, "name": "ab"}) == "    4096    1.50 ab    "
    assert t.note(65536, "INCOMPLETE: rank 3") == "   65536 INCOMPLETE: rank 3"
    assert len({len(line) for line in (t.header(), t.row({"size_B": 1, "time_us": 2, "name": "c"}))}) == 1


def test_a_row_without_a_column_is_one_line():
    with pytest.raises(McsimError, match=r"^Table: row has no time_us; it has size_B$"):
        Table(["size_B", "time_us"]).row({"size_B": 1})


def _strict(text):
    """json.loads that refuses NaN and Infinity (not RFC 8259 JSON)."""

    def refuse(name):
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_csv_and_json_carry_every_row_and_nan_as_null():
    rows = list(csv.DictReader(io.StringIO(csv_text(ROWS))))
    assert [r["size_B"] for r in rows] == ["4096", "65536"] and rows[1]["time_us"] == "nan"
    assert rows[0]["complete"] == "True" and rows[0]["verified"] == ""
    array = _strict(json_text(ROWS))
    assert array[0] == ROWS[0] and array[1]["time_us"] is None
    lines = [_strict(line) for line in jsonl_text(ROWS).splitlines()]
    assert lines[1]["time_us"] is None and json.loads(jsonl_text([{"x": math.inf}])) == {"x": None}
    assert lines[0] == ROWS[0] and len(lines) == 2
    assert rows_text([], "csv") == "" and json.loads(rows_text([], "json")) == []


def test_rows_with_different_columns_are_refused():
    with pytest.raises(McsimError, match=r"^rows: row 1 has columns a; row 0 has a, b$"):
        csv_text([{"a": 1, "b": 2}, {"a": 1}])


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl"])
def test_write_rows_picks_the_format_by_suffix(tmp_path, suffix):
    path = tmp_path / f"out{suffix}"
    write_rows(path, ROWS)
    assert path.read_text() == rows_text(ROWS, suffix[1:])
    assert os.listdir(tmp_path) == [path.name]  # no temporary file left


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "out.csv"
    write_rows(path, ROWS[:1])
    before = path.read_text()

    def dies(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", dies)
    with pytest.raises(OSError, match="disk full"):
        write_rows(path, ROWS)
    assert path.read_text() == before and os.listdir(tmp_path) == ["out.csv"]


@pytest.mark.parametrize(
    ("name", "message"),
    [("out.pkl", r"^unknown output file suffix '.pkl'; choose one of .csv, .json, .jsonl"), ("no/out.csv", "does not")],
)
def test_bad_output_paths_are_one_line(tmp_path, name, message):
    with pytest.raises(McsimError, match=message):
        write_rows(tmp_path / name, ROWS)


def test_cli_out_writes_the_summary_rows(tmp_path, capsys, star):
    out = tmp_path / "r.json"
    argv = ["allgather", "--topology", star(4), "--algorithm", "ring", "--bytes-per-rank", "4KiB,8KiB"]
    assert main([*argv, "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [r["bytes_per_rank_B"] for r in rows] == [4096, 8192] and all(r["complete"] for r in rows)
    assert [(r["size_B"], r["count"]) for r in rows] == [(4 * 4096, 4096), (4 * 8192, 8192)]  # nccl-tests
    table = capsys.readouterr().out.splitlines()
    assert len(table) == 3 and table[0].split()[0] == "size_B"
    assert main([*argv, "--format", "json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows


def test_cli_refuses_an_out_suffix_before_running(tmp_path, capsys):
    assert main(["allgather", "--topology", "fat-tree-k4", "--out", str(tmp_path / "r.pickle")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcsim: error: --out=") and "must end in .csv, .json, .jsonl" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "no" / "x.csv", r"^--out='.*/no/x.csv': folder '.*/no' does not exist$"),
        (lambda d: d, r"^--out='.*' is a folder; give a file name$"),
        (lambda d: Path("/etc/passwd/x.csv"), r"^--out='/etc/passwd/x.csv': folder '/etc/passwd' does not exist$"),
        (lambda d: d / ("a" * 300 + ".csv"), r"^--out='.*' cannot be written \(File name too long\)$"),
    ],
)
def test_an_output_that_cannot_be_written_is_one_line_before_any_work(tmp_path, make, message):
    with pytest.raises(McsimError, match=message):
        check_writable(make(tmp_path), "--out")


def test_a_folder_where_no_file_can_be_made_is_refused(tmp_path):
    with pytest.raises(McsimError, match=r"^--out='/proc/x.csv' cannot be written \("):
        check_writable("/proc/x.csv", "--out")  # a folder that takes no new file, even as root


def test_a_writable_path_is_returned(tmp_path):
    assert check_writable(tmp_path / "x.csv", "--out") == tmp_path / "x.csv"


def _spellings(tmp):
    """Pairs of paths naming one file, as a user may spell them."""
    (tmp / "sub").mkdir()
    (tmp / "alias.csv").symlink_to(tmp / "x.csv")  # a symlink to a file not yet written
    (tmp / "y.csv").write_text("")
    os.link(tmp / "y.csv", tmp / "hard.csv")  # two names of one existing file
    return {
        "same": (tmp / "x.csv", tmp / "x.csv"),
        "dot-slash": (f"{tmp}/./x.csv", tmp / "x.csv"),
        "dot-dot": (tmp / "sub" / ".." / "x.csv", tmp / "x.csv"),
        "symlink": (tmp / "alias.csv", tmp / "x.csv"),
        "hard-link": (tmp / "hard.csv", tmp / "y.csv"),
    }


@pytest.mark.parametrize("case", ["same", "dot-slash", "dot-dot", "symlink", "hard-link"])
def test_two_outputs_naming_one_file_are_refused_however_spelt(tmp_path, case):
    a, b = _spellings(tmp_path)[case]
    outputs = [("--out", str(a)), ("--pcap", None), ("--events", str(b))]
    with pytest.raises(McsimError, match=r"^cmd: --out='.*' and --events='.*' name one file \(.*\); give each output "):
        check_distinct("cmd", outputs)


def test_outputs_naming_different_files_are_accepted(tmp_path):
    (tmp_path / "y.csv").write_text("")
    check_distinct("cmd", [("--out", str(tmp_path / "x.csv")), ("--events", str(tmp_path / "y.csv")), ("-o", None)])
    assert not same_path(tmp_path / "x.csv", tmp_path / "X.csv")


class _Refusing(io.StringIO):
    """A stream whose device refuses writes or flushes with ``error``."""

    def __init__(self, error):
        super().__init__()
        self.error = error

    def write(self, text):
        raise self.error

    def flush(self):
        raise self.error


GUARDED = [  # (the stream under the guard, what a write raises: an exception type, and the line's pattern)
    (_Refusing(OSError(28, "No space left on device")), StdoutError, r"^cannot write to stdout \(No space left on "),
    (_Refusing(OSError(5, "Input/output error")), StdoutError, r"^cannot write to stdout \(Input/output error\)$"),
    (_Refusing(BrokenPipeError(32, "Broken pipe")), BrokenPipeError, r"Broken pipe"),  # the CLI's exit 141
    (
        io.TextIOWrapper(io.BytesIO(), encoding="latin-1"),
        StdoutError,
        r"^stdout's encoding, latin-1, cannot write '\\u5927' \(U\+5927\); set PYTHONIOENCODING=utf-8 or a UTF-8 ",
    ),
]


@pytest.mark.parametrize(("stream", "raised", "message"), GUARDED)
def test_a_stdout_that_cannot_take_the_output_is_one_line(stream, raised, message):
    with pytest.raises(raised, match=message):
        GuardedStdout(stream).write("name: \u5927\n")


def test_the_guard_passes_everything_else_to_its_stream():
    stream = io.StringIO()
    guarded = GuardedStdout(stream)
    assert guarded.write("row\n") == 4
    guarded.flush()
    assert stream.getvalue() == "row\n" and guarded.getvalue() == "row\n" and not guarded.isatty()
