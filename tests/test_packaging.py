# SPDX-License-Identifier: GPL-2.0-only
"""mcsim as a package: the wheel and the sdist carry every C++ source and every ready topology, the
version is written in one place, data is found through the package, and user topology folders work.

The end-to-end check (install the wheel into a fresh environment outside the clone and run it) is
.ci/package-smoke, which CI runs after the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import mcsim
from mcsim import topology
from mcsim.errors import McsimError
from mcsim.util import package_data

REPO = Path(__file__).resolve().parent.parent


def _repository_files(folder: str) -> set[str]:
    """The files under mcsim/<folder> that the repository holds (git's list; a folder walk when this
    is not a git checkout, e.g. an unpacked sdist), relative to mcsim/."""
    root = REPO / "mcsim"
    if (REPO / ".git").exists():
        out = subprocess.run(
            ["git", "ls-files", "-z", f"mcsim/{folder}"], cwd=REPO, check=True, capture_output=True, text=True
        ).stdout
        files = {name.removeprefix("mcsim/") for name in out.split("\0") if name}
    else:
        files = {p.relative_to(root).as_posix() for p in (root / folder).rglob("*") if p.is_file()}
    assert files, f"no files under mcsim/{folder}"
    return files


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and the wheel, built from this checkout as `python -m build` does for a release."""
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _wheel_files(dist: Path) -> set[str]:
    (wheel,) = dist.glob("mcsim-*.whl")
    with zipfile.ZipFile(wheel) as z:
        return {name.removeprefix("mcsim/") for name in z.namelist() if name.startswith("mcsim/")}


def _sdist_files(dist: Path) -> set[str]:
    (sdist,) = dist.glob("mcsim-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = [m.name for m in t.getmembers() if m.isfile()]
    top = f"mcsim-{mcsim.__version__}/mcsim/"
    return {name.removeprefix(top) for name in names if name.startswith(top)}


@pytest.mark.parametrize("folder", [package_data.NS3_MODULES, package_data.TOPOLOGIES, "report/templates"])
@pytest.mark.parametrize("archive", ["wheel", "sdist"])
def test_archives_carry_every_data_file(dist, archive, folder):
    files = _wheel_files(dist) if archive == "wheel" else _sdist_files(dist)
    expected = _repository_files(folder)
    shipped = {name for name in files if name.startswith(f"{folder}/")}
    assert expected - shipped == set(), f"the {archive} lacks these files"
    assert shipped - expected == set(), f"the {archive} has files the repository does not"


def test_wheel_carries_every_python_module(dist):
    modules = {p.relative_to(REPO / "mcsim").as_posix() for p in (REPO / "mcsim").rglob("*.py")}
    modules = {m for m in modules if not m.startswith(("ns3_modules/", "topologies/"))}
    assert modules - _wheel_files(dist) == set()


@pytest.mark.parametrize("archive", ["wheel", "sdist"])
def test_archives_carry_the_typed_marker(dist, archive):
    files = _wheel_files(dist) if archive == "wheel" else _sdist_files(dist)
    assert "py.typed" in files, "PEP 561: type checkers read mcsim's hints only with mcsim/py.typed"


def test_version_is_written_once(dist):
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mcsim.__version__"}
    (wheel,) = dist.glob("mcsim-*.whl")
    with zipfile.ZipFile(wheel) as z:
        metadata = z.read(f"mcsim-{mcsim.__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {mcsim.__version__}\n" in metadata


def test_citation_cff_names_the_software_and_the_paper():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert {"message", "title", "authors", "license"} <= set(cff) and cff["license"] == "GPL-2.0-only"
    (paper,) = cff["references"]
    assert paper["type"] == "conference-paper" and paper["year"] == 2024
    assert paper["title"] == "Network-Offloaded Bandwidth-Optimal Broadcast and Allgather for Distributed AI"
    assert [a["family-names"] for a in paper["authors"]] == [
        "Khalilov", "Di Girolamo", "Chrapek", "Nudelman", "Bloch", "Hoefler"
    ]  # fmt: skip
    assert paper["url"] == "https://arxiv.org/abs/2408.13356"
    assert "doi" not in paper and "doi" not in cff, "no DOI is known: none is given"


def test_changelog_has_unreleased_and_the_current_version():
    headings = [line for line in (REPO / "CHANGELOG.md").read_text().splitlines() if line.startswith("## ")]
    assert headings[0] == "## [Unreleased]"
    assert any(h.startswith(f"## [{mcsim.__version__}]") for h in headings)


def test_python_dash_m_mcsim(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mcsim", "--version"], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert proc.stdout.strip() == f"mcsim {mcsim.__version__}"


def test_data_is_found_inside_the_package():
    root = Path(mcsim.__file__).parent
    assert package_data.source_dir() == root / "ns3_modules"
    assert topology.topology_dirs() == (root / "topologies",)
    assert set(topology.available()) == {p.stem for p in (root / "topologies").glob("*.toml")}


def test_user_topology_folders(monkeypatch, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    shutil.copy(package_data.package_dir("topologies") / "fat-tree-k4.toml", first / "my-k4.toml")
    # a user's file of the same name as a ready topology comes first
    shutil.copy(package_data.package_dir("topologies") / "fat-tree-k8.toml", second / "testbed-188.toml")
    monkeypatch.setenv("MCSIM_TOPOLOGIES", f"{first}:{second}")
    assert {"my-k4", "testbed-188", "fat-tree-k16"} <= set(topology.available())
    assert topology.ready()["my-k4"] == first / "my-k4.toml"
    assert topology.host_count(topology.resolve("my-k4")) == 16
    assert topology.host_count(topology.resolve("testbed-188")) == 128  # the user's (a k8 fat tree)
    known = r"choose one of dgx-h100, fat-tree-1024-r32, fat-tree-k16, .*, my-k4, .*, testbed-188; "
    known += r"did you mean 'my-k4'\?$"
    with pytest.raises(McsimError, match=r"^unknown topology 'my-k5'; " + known):
        topology.resolve("my-k5")


def test_missing_user_topology_folder_is_one_line_when_a_topology_is_looked_up(monkeypatch, tmp_path):
    monkeypatch.setenv("MCSIM_TOPOLOGIES", str(tmp_path / "nowhere"))
    assert "fat-tree-k4" in topology.available()  # listing (the CLI's help) does not fail on it
    with pytest.raises(McsimError, match=r"^\$MCSIM_TOPOLOGIES names '.*nowhere', which is not a folder"):
        topology.resolve("fat-tree-k4")
