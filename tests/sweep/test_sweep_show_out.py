# SPDX-License-Identifier: GPL-2.0-only
"""`mcsim sweep show STORE --out FILE`: an --out that names the store itself (however spelt) is refused in one
line before anything is written, so the store is not overwritten with its own rows as CSV (issue 49)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcsim.cli import main
from mcsim.sweep.store import Store


@pytest.fixture
def store_dir(tmp_path, monkeypatch) -> Path:
    """A folder with store.csv: a sweep store (one sweep's members, no runs) named with an output's suffix, and
    alias.csv, a symbolic link to it."""
    monkeypatch.chdir(tmp_path)
    with Store(tmp_path / "store.csv") as store:
        store.add_members("sizes", [("k", "bytes_per_rank=4KiB", {"bytes_per_rank": "4KiB"})])
    (tmp_path / "alias.csv").symlink_to(tmp_path / "store.csv")
    return tmp_path


@pytest.mark.parametrize("out", ["store.csv", "./store.csv", "alias.csv", "ABSOLUTE"])
def test_out_naming_the_store_is_refused_and_the_store_kept(store_dir, capsys, out):
    out = str(store_dir / "store.csv") if out == "ABSOLUTE" else out
    before = (store_dir / "store.csv").read_bytes()
    assert main(["sweep", "show", "store.csv", "--out", out]) == 2
    err = capsys.readouterr().err
    real = re.escape(str((store_dir / "store.csv").resolve()))
    assert re.match(
        rf"^mcsim: error: sweep show: STORE='store\.csv' and --out='{re.escape(out)}' name one file \({real}\); "
        r"--out would overwrite the store\n$",
        err,
    ), err
    assert (store_dir / "store.csv").read_bytes() == before
    with Store(store_dir / "store.csv", create=False) as store:  # still a sweep store
        assert store.sweeps() == ["sizes"]


def test_out_naming_another_file_is_written(store_dir, capsys):
    assert main(["sweep", "show", "store.csv", "--out", "rows.csv"]) == 0
    assert (store_dir / "rows.csv").is_file()
