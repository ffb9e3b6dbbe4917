# SPDX-License-Identifier: GPL-2.0-only
"""Where mcsim's files are: the C++ sources (ns3_modules/) and the ready topologies (topologies/)
ship inside the package, in a wheel, an sdist and an editable install alike; the C++ builds go to
the user's cache folder.

The package's files are found through importlib.resources, never written to: the C++ build
compiles a snapshot of the sources in the user's cache (mcsim.native.runtime), so an install may be
read-only. ``$MCSIM_NS3_MODULES`` names other sources, ``$MCSIM_CACHE_DIR`` another cache; each
unusable one is one McsimError line naming the variable, its value and why.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

from mcsim.errors import McsimError
from mcsim.util.output import probe_write

NS3_MODULES = "ns3_modules"  # the C++ models: one CMake project, one ns-3 module per subfolder
TOPOLOGIES = "topologies"  # the ready topologies, one .toml file each
CACHE_ENV = "MCSIM_CACHE_DIR"  # the build cache folder (else $XDG_CACHE_HOME/mcsim, else ~/.cache/mcsim)
SOURCES_ENV = "MCSIM_NS3_MODULES"  # another ns3_modules/ to build (else the installed package's)


def package_dir(name: str) -> Path:
    """The folder ``name`` inside the installed mcsim package, as a real path on disk (CMake and
    the topology loader read files from it)."""
    found = importlib.resources.files("mcsim") / name
    if not isinstance(found, Path):
        raise McsimError(f"mcsim's {name}/ is inside an archive ({found}); install mcsim unpacked (pip install does)")
    return found


def source_dir() -> Path:
    """Return ns3_modules/: $MCSIM_NS3_MODULES, else the copy inside the installed mcsim package."""
    env = os.environ.get(SOURCES_ENV)
    path = Path(env) if env else package_dir(NS3_MODULES)
    if (path / "CMakeLists.txt").is_file():
        return path
    why = "does not exist" if not path.exists() else "is not a folder" if not path.is_dir() else "has no CMakeLists.txt"
    if env:
        raise McsimError(
            f"C++ sources: {SOURCES_ENV}={env!r} {why}; point it at an ns3_modules folder "
            "(the one with CMakeLists.txt) or unset it"
        )
    raise McsimError(
        f"C++ sources: the installed mcsim package's {path} {why}; "
        "reinstall mcsim (pip install --force-reinstall mcsim)"
    )


def _cache_choice() -> tuple[Path, str, str]:
    """The build cache folder, what chose it and how to choose another (for a message)."""
    hint = f"set {CACHE_ENV} to a folder you can write"
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env), f"{CACHE_ENV}={env!r}", f"point {CACHE_ENV} at a folder you can write, or unset it"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):  # the XDG spec: a relative path is invalid and ignored
        path = Path(xdg) / "mcsim"
        return path, f"XDG_CACHE_HOME={xdg!r} (the cache {str(path)!r})", hint
    try:
        path = Path.home() / ".cache" / "mcsim"
    except RuntimeError:  # no $HOME and no password entry
        raise McsimError(f"build cache: no {CACHE_ENV}, XDG_CACHE_HOME or HOME to put it in; {hint}") from None
    return path, f"the default cache {str(path)!r}", hint


def cache_dir() -> Path:
    """Return the build cache folder (not created): $MCSIM_CACHE_DIR, else $XDG_CACHE_HOME/mcsim (an
    absolute XDG_CACHE_HOME), else ~/.cache/mcsim."""
    return _cache_choice()[0]


def writable_cache(cache: Path | None = None) -> Path:
    """Return the build cache folder (``cache``, else :func:`cache_dir`), made if missing, once a file
    was written in it; else raise McsimError naming the variable that chose it, the path and why."""
    path, chosen, hint = (cache, f"cache={str(cache)!r}", "give a folder you can write") if cache else _cache_choice()
    step = "making it"
    try:
        path.mkdir(parents=True, exist_ok=True)
        step = "writing a file in it"
        probe_write(path, ".mcsim-probe-")
    except OSError as exc:  # under a file, in /proc, read-only, no permission, a name too long ...
        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file" if blocker else f"{step}: {exc.strerror or exc}"
        raise McsimError(f"build cache: {chosen} is not a folder mcsim can write ({why}); {hint}") from None
    return path
