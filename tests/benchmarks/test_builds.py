# SPDX-License-Identifier: GPL-2.0-only
"""benchmarks/builds.py (another commit's tree and build beside this one) and the comparison it gives
benchmarks/collectives_testbed.py: a bad revision is one line, a checkout is reused only when whole, the
sides are interleaved with the first one alternating, and the ratios are the medians' and the pairs'. On a
small git repository made here and on fake timings: nothing is compiled or timed."""

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
from argparse import Namespace
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    sys.path.insert(0, str(BENCHMARKS))  # collectives_testbed imports builds and event_rate beside it
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up; the testbed's `import builds` finds it
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


builds = _load("builds")
testbed = _load("collectives_testbed")
scale = _load("scale")


@pytest.fixture
def repo(tmp_path):
    """A git repository of two commits: (its path, the first commit's sha, the second's)."""
    path = tmp_path / "repo"
    (path / "sub").mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    shas = []
    for text in ("one", "two"):
        (path / "a.txt").write_text(text)
        (path / "sub" / "b.txt").write_text(text * 2)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", text], check=True)
        shas.append(subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip())
    return path, shas[0], shas[1]


def test_a_bad_revision_is_one_line_without_a_traceback():
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "builds.py"), "no-such-rev"], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: 'no-such-rev' is not a commit of {BENCHMARKS.parent} (git rev-parse); give a sha, tag or branch"
    ]


def test_collectives_testbed_against_a_bad_revision_is_one_line_before_any_run():
    argv = [sys.executable, str(BENCHMARKS / "collectives_testbed.py"), "--against", "no-such-rev"]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    why = f"'no-such-rev' is not a commit of {BENCHMARKS.parent} (git rev-parse); give a sha, tag or branch"
    assert done.stderr.splitlines() == [f"error: --against: {why}"]


def test_resolve_gives_the_full_sha_and_refuses_what_is_not_a_commit(repo):
    path, first, second = repo
    assert builds.resolve(first[:7], repo=path) == first
    assert builds.resolve("HEAD~1", repo=path) == first and builds.resolve("HEAD", repo=path) == second
    tree = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD^{tree}"], capture_output=True, text=True)
    for bad in ("", "--all", "nope", tree.stdout.strip()):  # a tree is an object but not a commit
        with pytest.raises(builds.BuildError, match="is not a commit of"):
            builds.resolve(bad, repo=path)


def test_a_checkout_is_the_commits_tree_and_is_reused(repo, tmp_path):
    path, first, second = repo
    root = tmp_path / "checkouts"
    got = builds.checkout(first[:10], repo=path, root=root)
    assert got == root / first
    assert (got / "a.txt").read_text() == "one" and (got / "sub" / "b.txt").read_text() == "oneone"
    assert json.loads((got / builds.MARKER).read_text())["sha"] == first
    (got / "__pycache__").mkdir()  # what a run adds (bytecode) does not make it another tree
    (got / "__pycache__" / "x.pyc").write_bytes(b"")
    marker_ns = (got / builds.MARKER).stat().st_mtime_ns
    assert builds.checkout(first, repo=path, root=root) == got
    assert (got / builds.MARKER).stat().st_mtime_ns == marker_ns and (got / "__pycache__" / "x.pyc").exists()
    assert (builds.checkout("HEAD", repo=path, root=root) / "a.txt").read_text() == "two"
    assert sorted(p.name for p in root.iterdir()) == sorted([first, second, "lock"])  # no staging folder left


@pytest.mark.parametrize("damage", ["no marker", "another commit's marker", "a file missing"])
def test_a_half_made_checkout_is_not_taken_but_made_again(repo, tmp_path, damage):
    path, first, second = repo
    root = tmp_path / "checkouts"
    got = builds.checkout(first, repo=path, root=root)
    if damage == "no marker":
        (got / builds.MARKER).unlink()
    elif damage == "another commit's marker":
        (got / builds.MARKER).write_text(json.dumps({"sha": second}))
    else:
        (got / "sub" / "b.txt").unlink()
    assert not builds.is_whole(got, first, repo=path)
    (got / "left.txt").write_text("from the half tree")
    assert builds.checkout(first, repo=path, root=root) == got
    assert builds.is_whole(got, first, repo=path) and not (got / "left.txt").exists()
    assert (got / "sub" / "b.txt").read_text() == "oneone"


def test_an_interrupted_checkout_leaves_nothing_that_is_taken(repo, tmp_path, monkeypatch):
    path, first, _ = repo
    root = tmp_path / "checkouts"

    def cut_short(self, where, **kw):  # one file written, then the interruption (Ctrl-C)
        (Path(where) / "a.txt").write_text("one")
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(tarfile.TarFile, "extractall", cut_short)
        with pytest.raises(KeyboardInterrupt):
            builds.checkout(first, repo=path, root=root)
    assert [p.name for p in root.iterdir()] == ["lock"]  # neither the tree nor its staging folder
    # a staging folder left by a killed process (no finally ran) is removed by the next checkout, not taken
    stale = root / f"{builds.STAGING}{first[:12]}-killed"
    (stale / "sub").mkdir(parents=True)
    got = builds.checkout(first, repo=path, root=root)
    assert builds.is_whole(got, first, repo=path) and not stale.exists()


def test_a_checkouts_folder_under_a_dot_folder_is_refused(repo, tmp_path):
    path, first, _ = repo
    with pytest.raises(builds.BuildError, match=r"under '\.cache': mcsim's build skips every source"):
        builds.checkout(first, repo=path, root=tmp_path / ".cache" / "checkouts")
    assert not (tmp_path / ".cache").exists()


def test_the_child_env_imports_the_checkouts_mcsim(tmp_path):
    fake = tmp_path / "checkout"
    (fake / "mcsim").mkdir(parents=True)
    (fake / "mcsim" / "__init__.py").write_text("")
    env = builds.child_env(fake, {"PYTHONPATH": "/elsewhere", "MCSIM_NS3_MODULES": "/x", "HOME": "/h"})
    assert env == {"PYTHONPATH": str(fake), "HOME": "/h"}
    code = "import mcsim; print(mcsim.__file__)"
    done = subprocess.run([sys.executable, "-c", code], env=builds.child_env(fake), cwd=fake, capture_output=True)
    assert Path(done.stdout.decode().strip()) == fake / "mcsim" / "__init__.py"  # not the installed mcsim


def test_sides_are_interleaved_with_the_first_one_alternating():
    assert list(builds.interleaved(3, ["this", "rev"])) == [
        (0, "this"), (0, "rev"), (1, "rev"), (1, "this"), (2, "this"), (2, "rev"),
    ]  # fmt: skip
    assert [builds.rotated(i, "abc") for i in range(4)] == [
        ("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b"), ("a", "b", "c"),
    ]  # fmt: skip


def test_paired_gives_the_medians_ratio_and_the_range_of_the_pairs():
    p = builds.paired([2.0, 4.0, 6.0], [1.0, 2.0, 4.0])  # per pair: 2, 2, 1.5
    assert (p.top, p.bottom, p.ratio, p.low, p.high) == (4.0, 2.0, 2.0, 1.5, 2.0)
    p = builds.paired([3.0, 9.0], [4.0, 2.0])  # even counts: the median is the mean of the middle two
    assert (p.top, p.bottom, p.ratio, p.low, p.high) == (6.0, 3.0, 2.0, 0.75, 4.5)
    for top, bottom in (([1.0], [1.0, 2.0]), ([], [])):
        with pytest.raises(ValueError, match="want the same number, at least one"):
            builds.paired(top, bottom)


def _sample(run_s, hops=1000):
    return {"run_s": run_s, "hops": hops, "events": hops, "wall_s": run_s + 1, "rss_mb": 100.0, "sim_us": 2.0}


def test_measure_runs_every_side_each_repeat_with_the_first_alternating(monkeypatch):
    calls = []

    def fake_child(side, algo, size, pick):
        calls.append((side.label, algo))
        return _sample(float(len(calls)))

    monkeypatch.setattr(testbed, "run_child", fake_child)
    monkeypatch.setattr(testbed.event_rate, "ceiling", lambda: 1e7)
    sides = [testbed.Side(label, "", "testbed-188", Path("/")) for label in ("this", "rev")]
    samples, ceiling = testbed.measure(sides, Namespace(repeat=3, size="1MiB", pick_at_handover=False))
    assert ceiling == 1e7
    assert calls == [
        ("this", "mcast"), ("rev", "mcast"), ("this", "ring"), ("rev", "ring"),
        ("rev", "mcast"), ("this", "mcast"), ("rev", "ring"), ("this", "ring"),
        ("this", "mcast"), ("rev", "mcast"), ("this", "ring"), ("rev", "ring"),
    ]  # fmt: skip
    # per side, per algorithm, repeat by repeat: the call numbers above (1-based) are the fake run_s
    assert [s["run_s"] for s in samples[0]["mcast"]] == [1, 6, 9]
    assert [s["run_s"] for s in samples[1]["mcast"]] == [2, 5, 10]
    assert [s["run_s"] for s in samples[1]["ring"]] == [4, 7, 12]


def test_the_speedup_table_is_the_other_builds_run_over_this_ones(capsys):
    this = {"mcast": [_sample(2.0), _sample(1.0), _sample(4.0)], "ring": [_sample(5.0), _sample(4.0), _sample(6.0)]}
    rev = {"mcast": [_sample(4.0), _sample(3.0), _sample(4.0)], "ring": [_sample(5.0), _sample(6.0), _sample(9.0, 7)]}
    testbed.print_against(this, rev, "00fb2d2")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["algorithm", "run_s", "run_s_00fb2d2", "speedup", "pairs", "same_hops"]
    assert lines[1].split() == ["mcast", "2.00", "4.00", "2.00", "1.00-3.00", "yes"]  # pairs: 2, 3, 1
    assert lines[2].split() == ["ring", "5.00", "6.00", "1.20", "1.00-1.50", "NO"]  # a run moved other hops
    assert lines[3] == "target (issue 52): speedup = 00fb2d2's Run() / this one's >= 1.5, both algorithms"


def test_the_per_hop_table_is_this_fabrics_rate_over_the_others(capsys):
    k16 = {a: [_sample(2.0, 8_000_000), _sample(4.0, 8_000_000), _sample(1.0, 8_000_000)] for a in ("mcast", "ring")}
    tb = {a: [_sample(1.0, 5_000_000), _sample(2.0, 5_000_000), _sample(1.0, 5_000_000)] for a in ("mcast", "ring")}
    testbed.print_per_hop(k16, tb, "fat-tree-k16", "testbed-188")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["algorithm", "Mhops/s", "Mhops/s_testbed-188", "ratio", "pairs"]
    # rates 4, 2, 8 against 5, 2.5, 5 Mhops/s: medians 4 and 5, pairs 0.8, 0.8, 1.6
    assert lines[1].split() == ["mcast", "4.00", "5.00", "0.80", "0.80-1.60"]
    assert lines[3].startswith("target (issues 15, 52): fat-tree-k16 >= 0.85 of testbed-188's packet-hops/s")


def test_a_child_that_imports_another_mcsim_stops_the_run(monkeypatch, tmp_path):
    class Done:
        returncode, stderr = 0, ""
        stdout = json.dumps({**_sample(1.0), "mcsim": os.path.join(str(tmp_path), "elsewhere", "__init__.py")})

    monkeypatch.setattr(testbed.subprocess, "run", lambda *a, **kw: Done())
    side = testbed.Side("00fb2d2", "", "testbed-188", tmp_path / "checkout" / "mcsim")
    with pytest.raises(SystemExit, match=r"the 00fb2d2 child imported .*elsewhere.*, not .*checkout"):
        testbed.run_child(side, "ring", "1MiB", False)


def test_scale_runs_each_k_on_both_builds_with_the_first_alternating(monkeypatch, capsys):
    calls = []

    def fake_child(path, args, env, cwd):
        calls.append((path.name, env["B"]))
        if (path.name, env["B"]) == ("fat-tree-k8.toml", "rev"):
            return 3  # its exit status: the k=8 pair is incomplete
        s = {"built_mb": 2.0, "graph_mb": 1.0, "hosts": 16, "switch_ports": 32, "switches": 20, "plan_s": 1.0}
        return {**s, "hops": 100, "events": 100, "run_s": float(len(calls)), "peak_mb": 3.0, "complete": True}

    monkeypatch.setattr(scale, "run_child", fake_child)
    sides = [("this", {"B": "this"}, None), ("0123abc", {"B": "rev"}, Path("/checkout"))]
    pairs = scale.run_radixes([4, 8, 16], sides, Namespace(), 1e7)
    assert calls == [
        ("fat-tree-k4.toml", "this"), ("fat-tree-k4.toml", "rev"),
        ("fat-tree-k8.toml", "rev"), ("fat-tree-k8.toml", "this"),
        ("fat-tree-k16.toml", "this"), ("fat-tree-k16.toml", "rev"),
    ]  # fmt: skip
    rows = capsys.readouterr().out.splitlines()
    assert [row.split()[-1] for row in rows] == ["this", "0123abc", "0123abc", "this", "this", "0123abc"]
    assert rows[2] == "  8 failed (exit 3); its error is above  0123abc"
    assert [(k, this["run_s"], other["run_s"]) for k, this, other in pairs] == [(4, 1.0, 2.0), (16, 5.0, 6.0)]
    scale.print_against(pairs, "0123abc")
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["k", "run_s", "run_s_0123abc", "speedup", "same_hops"]
    assert lines[2].split() == ["4", "1.0", "2.0", "2.00", "yes"] and lines[3].split() == [
        "16",
        "5.0",
        "6.0",
        "1.20",
        "yes",
    ]


def test_a_side_names_the_build_its_children_loaded_and_says_when_they_loaded_several():
    def loaded(*keys):
        return {"mcast": [{"library": f"/c/builds/{key}/lib/libmcsim-ns3.so"} for key in keys]}

    rev = testbed.Side("00fb2d2", "00fb2d26d5ccbd914cfc", "testbed-188", Path("/"))
    assert testbed.describe(rev, loaded("bacbed30", "bacbed30")) == "00fb2d2 (00fb2d26d5cc, build bacbed30)"
    this = testbed.Side("this", "", "testbed-188", Path("/"))
    assert testbed.describe(this, loaded("d1a1", "0b2c", "d1a1")) == (
        "this (build 0b2c, d1a1) (NOTE: 2 builds: its C++ sources changed during the run)"
    )


def test_without_git_a_revision_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git there
    with pytest.raises(builds.BuildError, match=r"^git is not on PATH; it reads the commits"):
        builds.resolve("HEAD")
