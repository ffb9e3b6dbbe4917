# SPDX-License-Identifier: GPL-2.0-only
"""Another commit's mcsim beside this one: its tree outside the repository and its C++ models in their own
build cache entry, so that a benchmark runs both builds in the same run (issue 52).

``checkout(rev)`` writes the commit's tree (``git archive``) to ``<checkouts>/<full sha>/``, where
``<checkouts>`` is $MCSIM_CHECKOUTS, else ``<temp>/mcsim-checkouts-<uid>`` (/tmp/...). The tree is unpacked into a
hidden staging folder, a marker naming the commit is written last and the folder is renamed into place, all
under the folder's lock: a materialisation cut short leaves only a staging folder (removed by the next call),
never a half tree under the commit's name, and a folder under that name is reused only when its marker names
the commit and every file of the commit is there. ``child_env(path)`` is the environment of a process that
imports that checkout's mcsim (PYTHONPATH); such a process's ``runtime.load()`` builds the checkout's
ns3_modules/ into the same build cache under its own key (the key hashes the sources, so a commit with the same
C++ as another shares its build). ``prepare(rev)`` does both and returns the path and the build key.

The other benchmarks run their children on both builds with :func:`interleaved` (each repeat, every side once,
the one that goes first rotating) and compare them with :func:`paired` (the ratio of the medians and the
min-max of the per-repeat ratios).

Run: python benchmarks/builds.py REV      # prepares REV, prints its full sha, path and build key
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

REPO = Path(__file__).resolve().parents[1]
MARKER = ".mcsim-checkout.json"  # written last into a staged tree: the tree is whole
STAGING = ".staging-"  # prefix of a tree being unpacked (never taken as a checkout)
CHECKOUTS_ENV = "MCSIM_CHECKOUTS"  # another folder for the trees
SIDE = TypeVar("SIDE")

# the child that builds a checkout: it imports that checkout's mcsim, builds its C++ (or finds it in the
# cache) and says where its mcsim came from and under which key it was built
_BUILD_CHILD = """
import json, sys
import mcsim
from mcsim.errors import McsimError
from mcsim.native import library
try:
    info = library.ensure_built()
except McsimError as exc:
    sys.exit(f"error: {exc}")
print(json.dumps({"mcsim": mcsim.__file__, "key": info.key, "path": str(info.path)}))
"""


class BuildError(Exception):
    """A revision that cannot be checked out or built, as one line for the user."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A commit ready to run: its tree and the build cache entry of its C++ models."""

    sha: str
    path: Path
    key: str


def _git(*args: str, repo: Path = REPO) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True)
    except FileNotFoundError:
        raise BuildError("git is not on PATH; it reads the commits (apt-get install git)") from None


def resolve(rev: str, *, repo: Path = REPO) -> str:
    """The full sha of the commit ``rev`` names in ``repo``; BuildError if it names none."""
    done = _git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", repo=repo)
    if done.returncode != 0 or not rev or rev.startswith("-"):
        raise BuildError(f"{rev!r} is not a commit of {repo} (git rev-parse); give a sha, tag or branch")
    return done.stdout.decode().strip()


def checkouts_dir() -> Path:
    """Where the trees go: $MCSIM_CHECKOUTS, else ``<temp>/mcsim-checkouts-<uid>`` (not mcsim's build cache:
    mcsim's build skips every source under a folder whose name starts with a dot, such as ~/.cache)."""
    env = os.environ.get(CHECKOUTS_ENV)
    return Path(env) if env else Path(tempfile.gettempdir()) / f"mcsim-checkouts-{os.getuid()}"


def _files(sha: str, repo: Path) -> list[str]:
    """The paths of every file (blob) of the commit's tree."""
    listing = _git("ls-tree", "-r", "-z", sha, repo=repo).stdout.decode()
    entries = (e.split("\t", 1) for e in listing.split("\0") if e)
    return [path for meta, path in entries if meta.split()[1] == "blob"]


def is_whole(path: Path, sha: str, *, repo: Path = REPO) -> bool:
    """True if ``path`` is a finished checkout of ``sha``: its marker names the commit and every file of the
    commit is there (files added since, such as __pycache__, do not matter)."""
    try:
        if json.loads((path / MARKER).read_text())["sha"] != sha:
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return all(os.path.lexists(path / name) for name in _files(sha, repo))


def _remove_staging(root: Path) -> None:
    """Remove the staging folders of materialisations cut short: called under the folder's lock, which
    every materialisation holds until its tree is in place, so any staging folder there is left over."""
    for old in root.glob(f"{STAGING}*"):
        shutil.rmtree(old, ignore_errors=True)


def checkout(rev: str, *, repo: Path = REPO, root: Path | None = None) -> Path:
    """The tree of commit ``rev`` in ``root/<full sha>`` (default :func:`checkouts_dir`), written once and
    reused while it is whole. BuildError for a revision that is not a commit."""
    from mcsim.util import folder_lock

    sha = resolve(rev, repo=repo)
    root = (checkouts_dir() if root is None else root).resolve()
    dotted = [part for part in root.parts if part.startswith(".")]
    if dotted:
        raise BuildError(
            f"the checkouts folder {root} is under {dotted[0]!r}: mcsim's build skips every source under a folder "
            f"named with a leading dot; set {CHECKOUTS_ENV} to another folder"
        )
    final = root / sha
    with folder_lock.locked(root):
        if is_whole(final, sha, repo=repo):
            return final
        _remove_staging(root)
        if final.exists():  # not whole: no checkout ever renamed into place looks so; someone changed it
            shutil.rmtree(final)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING}{sha[:12]}-", dir=root))
        try:
            archive = _git("archive", "--format=tar", sha, repo=repo)
            if archive.returncode != 0:
                raise BuildError(f"git archive {sha[:12]} failed: {archive.stderr.decode().strip()}")
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                tar.extractall(staging, filter="data")
            (staging / MARKER).write_text(json.dumps({"sha": sha, "rev": rev}) + "\n")
            staging.chmod(0o755)  # mkdtemp's 0700 otherwise
            staging.rename(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # gone if it was renamed
    return final


def child_env(path: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child process that imports the mcsim of the checkout at ``path``: ``base``
    (default os.environ) with PYTHONPATH the checkout alone and no $MCSIM_NS3_MODULES (which would build
    other C++ sources). Run the child in ``path`` (``cwd=path``): ``python -c`` puts its working folder
    ahead of PYTHONPATH, and another checkout's mcsim there would be imported instead."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = str(path)
    env.pop("MCSIM_NS3_MODULES", None)
    return env


def build(path: Path) -> str:
    """Build the C++ models of the checkout at ``path`` into mcsim's build cache (a compile shows its
    progress on stderr; a build in the cache is found at once) and return its build key."""
    argv = [sys.executable, "-c", _BUILD_CHILD]
    done = subprocess.run(argv, env=child_env(path), stdout=subprocess.PIPE, text=True, cwd=path)
    if done.returncode != 0:
        raise BuildError(f"building the C++ models of {path} failed (exit {done.returncode}); its error is above")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(out["mcsim"]).resolve().is_relative_to(path.resolve()):
        raise BuildError(
            f"the child imported {out['mcsim']}, not the mcsim of {path} (an install ahead of PYTHONPATH?)"
        )
    return str(out["key"])


def prepare(rev: str, *, repo: Path = REPO, root: Path | None = None) -> Prepared:
    """:func:`checkout` then :func:`build`: commit ``rev`` ready to run."""
    path = checkout(rev, repo=repo, root=root)
    return Prepared(sha=path.name, path=path, key=build(path))


def rotated(i: int, sides: Sequence[SIDE]) -> tuple[SIDE, ...]:
    """The sides in the order repeat ``i`` runs them: the one that goes first rotates from one repeat to the
    next (two sides: this, other; other, this; ...)."""
    first = i % len(sides)
    return (*sides[first:], *sides[:first])


def interleaved(repeat: int, sides: Sequence[SIDE]) -> Iterator[tuple[int, SIDE]]:
    """(repeat index, side) in the order to run them: each repeat runs every side once, in :func:`rotated`
    order."""
    for i in range(repeat):
        for side in rotated(i, sides):
            yield i, side


@dataclass(frozen=True, slots=True)
class Paired:
    """Two sides measured in the same repeats: their medians, the ratio of the medians (``ratio`` =
    ``top`` / ``bottom``) and the lowest and highest of the per-repeat ratios."""

    top: float
    bottom: float
    ratio: float
    low: float
    high: float


def paired(top: Sequence[float], bottom: Sequence[float]) -> Paired:
    """Compare ``top[i]`` with ``bottom[i]`` (repeat i of each side): medians, their ratio, the ratios'
    range. Speedup of this build over another: ``paired(other_run_s, this_run_s)``."""
    if len(top) != len(bottom) or not top:
        raise ValueError(f"paired: {len(top)} against {len(bottom)} figures; want the same number, at least one")
    ratios = [t / b for t, b in zip(top, bottom, strict=True)]
    med_top, med_bottom = statistics.median(top), statistics.median(bottom)
    return Paired(med_top, med_bottom, med_top / med_bottom, min(ratios), max(ratios))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="a git revision of this repository (sha, tag, branch)")
    args = parser.parse_args(argv)
    try:
        ready = prepare(args.rev)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{ready.sha} {ready.path} build {ready.key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
