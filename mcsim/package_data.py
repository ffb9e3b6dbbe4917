# SPDX-License-Identifier: GPL-2.0-only
"""Where mcsim's data files are: the C++ sources (ns3_modules/) and the ready topologies
(topologies/) ship inside the package, in a wheel, an sdist and an editable install alike.

They are found through importlib.resources, never written to: the C++ build compiles a snapshot of
the sources in the user's cache (mcsim.runtime), so an install may be read-only.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from mcsim.errors import McsimError

NS3_MODULES = "ns3_modules"  # the C++ models: one CMake project, one ns-3 module per subfolder
TOPOLOGIES = "topologies"  # the ready topologies, one .toml file each


def package_dir(name: str) -> Path:
    """The folder ``name`` inside the installed mcsim package, as a real path on disk (CMake and
    the topology loader read files from it)."""
    found = importlib.resources.files("mcsim") / name
    if not isinstance(found, Path):
        raise McsimError(f"mcsim's {name}/ is inside an archive ({found}); install mcsim unpacked (pip install does)")
    return found
