# SPDX-License-Identifier: GPL-2.0-only
"""cling's precompiled header for one build: made once, so that no process parses headers at load.

Without it, every process that loads mcsim has cling parse ns-3's and mcsim's headers as text
(about 0.7 s). cppyy starts cling from one precompiled header (PCH) of the standard library, which
``$CLING_STANDARD_PCH`` may replace; :func:`ensure` makes a PCH of the same standard headers plus
the headers mcsim.native.runtime includes, with the build's include folder and defines, by the same
``rootcling -generate-pch`` that cppyy uses for its own. It lives in the build's folder
(``<build>/cling/``, so it goes when the build goes; cling knows headers by path, so a PCH serves
only the build it was made from), under a name that hashes everything else it depends on (the
cppyy backend, cling's arguments, the headers, the defines).

A new PCH is used only after a fresh process has loaded it and found mcsim's classes in it without
parsing a header. When it cannot be made, or fails that check, ``<name>.failed`` records why and
mcsim loads by parsing the headers, as before: slower, never broken. Nothing here imports cppyy.
Making one says so on stderr (one line); finding one says nothing.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mcsim.util import folder_lock

log = logging.getLogger(__name__)

PCH_FORMAT = 1  # bump when the way the PCH is made changes
ENV = "CLING_STANDARD_PCH"  # the variable cppyy reads, once, when it starts cling
CHECK_CLASS = "ns3::mcsim::Fabric"  # a class of mcsim's headers: the check looks it up without an include
MAKE_TIMEOUT_S = 600
MAKING = "mcsim: making cling's precompiled header of this build's headers (once per build, about 10 s) ..."


def _backend() -> Path:
    """The cppyy backend's package folder (rootcling, its PCH recipe), found without importing cppyy."""
    dist = importlib.metadata.distribution("cppyy_backend")
    return Path(str(dist.locate_file("cppyy_backend"))).resolve()


def name(includes: Sequence[str], defines: Sequence[str]) -> str:
    """The PCH's file name: a hash of what it depends on besides the build's own headers."""
    what = {
        "format": PCH_FORMAT,
        "cppyy_backend": importlib.metadata.version("cppyy_backend"),
        "cppyy_cling": importlib.metadata.version("cppyy_cling"),
        "cling_args": os.environ.get("EXTRA_CLING_ARGS", ""),
        "includes": list(includes),
        "defines": list(defines),
    }
    return "mcsim-" + hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16] + ".pch"


def _make(out: Path, include_dirs: Sequence[Path], includes: Sequence[str], defines: Sequence[str]) -> str:
    """Make the PCH at ``out`` (rootcling, as cppyy's etc/dictpch/makepch.py does); "" or why not."""
    pkg = _backend()
    dictpch = pkg / "etc" / "dictpch"
    flags = [ln.strip() for ln in (dictpch / "allCppflags.txt").read_text().splitlines()]
    flags = [f for f in flags if f and f not in ("-fno-plt", "-isystem")]  # as makepch.py: cling refuses them
    with tempfile.TemporaryDirectory(prefix="mcsim-pch-") as tmp:
        argv = [
            str(pkg / "bin" / "rootcling"),
            "-rootbuild",
            "-generate-pch",
            "-f",
            str(Path(tmp) / "allDict.cxx"),
            "-noDictSelection",
            "-D__CLING__",
            "-DROOT_PCH",
            *(f"-I{p}" for p in (pkg / "include", pkg / "etc", dictpch, pkg / "etc" / "cling", *include_dirs)),
            *(f"-D{d}=1" for d in defines),
            "-cxxflags",
            " ".join(flags),
            str(dictpch / "allHeaders.h"),
            *includes,
            str(dictpch / "allLinkDefs.h"),
        ]
        env = dict(
            os.environ,
            LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(pkg / "lib"), os.environ.get("LD_LIBRARY_PATH")])),
        )
        try:
            proc = subprocess.run(argv, cwd=pkg, env=env, capture_output=True, text=True, timeout=MAKE_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"rootcling did not run: {exc}"
        made = Path(tmp) / "allDict_rdict.pch"
        if proc.returncode != 0 or not made.is_file():
            tail = " | ".join(ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip())[-600:]
            return f"rootcling failed (exit {proc.returncode}): {tail}"
        os.replace(made, out)  # same file system: out's folder is where the temporary file goes next
    return ""


_CHECK = """
import sys, cppyy
cls = getattr(cppyy.gbl.ns3.mcsim, sys.argv[1].rsplit("::", 1)[1])  # declared by the PCH alone
print(cls.__cpp_name__)
"""


def _check(pch: Path) -> str:
    """Start cling from ``pch`` in a fresh process and find mcsim's class without an include; "" or
    why not."""
    env = dict(os.environ, **{ENV: str(pch)})
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHECK, CHECK_CLASS],
            env=env,
            capture_output=True,
            text=True,
            timeout=MAKE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the check process did not run: {exc}"
    if proc.returncode != 0 or proc.stdout.strip() != CHECK_CLASS:
        tail = " | ".join(ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip())[-600:]
        return f"a process with it does not know {CHECK_CLASS} (exit {proc.returncode}): {tail}"
    return ""


def ensure(
    build_dir: Path, include_dirs: Sequence[Path], includes: Sequence[str], defines: Sequence[str]
) -> Path | None:
    """The PCH of the build in ``build_dir`` (made and checked now if it is not there yet), or None
    if it cannot be had (the reason is in ``<name>.failed``, logged once when it happens).

    Parameters
    ----------
    build_dir
        The completed build's folder (mcsim.native.library.BuildInfo.path); the PCH goes to its cling/.
    include_dirs, includes, defines
        The include folders (the ns3 wheel's, the build's), the headers and the macros (each
        defined as 1) that mcsim.native.runtime.load gives cling.
    """
    folder = build_dir / "cling"
    try:
        pch = folder / name(includes, defines)
    except importlib.metadata.PackageNotFoundError as exc:  # a cppyy without its backend's metadata
        log.warning("no precompiled header (cppyy's backend is not an installed distribution: %s)", exc)
        return None
    failed = pch.with_name(pch.name + ".failed")
    if pch.is_file():
        return pch
    if failed.is_file():
        return None
    with folder_lock.locked(folder):
        if pch.is_file():
            return pch
        if failed.is_file():
            return None
        log.info("making cling's precompiled header for this build (once): %s", pch)
        sys.stderr.write(f"{MAKING}\n")  # a first cppyy_ns() after a build waits on it: say why
        sys.stderr.flush()
        stage = pch.with_name(f"{pch.name}.tmp-{os.getpid()}")
        why = _make(stage, include_dirs, includes, defines) or _check(stage)
        if why:
            stage.unlink(missing_ok=True)
            failed.write_text(why + "\n")
            log.warning("no precompiled header, so every load parses the headers (slower): %s", why)
            return None
        os.replace(stage, pch)
    return pch
