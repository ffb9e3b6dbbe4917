# SPDX-License-Identifier: GPL-2.0-only
"""Sweeps: one spec (a base Scenario plus axes) -> many runs on local worker processes or a Dask
cluster, each stored in a SQLite result store as it finishes, resumable, with progress::

    from mcsim.sweep import SweepSpec, read_dataframe, run_sweep
    spec = SweepSpec(name="sizes", base={"topology": "fat-tree-k4"},
                     axes={"bytes_per_rank": ["4KiB", "64KiB"], "algorithm": ["ring", "mcast"]})
    report = run_sweep(spec, "sizes.sqlite")    # or SweepSpec.from_toml("spec.toml"); client=... for Dask
    report.rows()                               # the runs' axis values and metrics, in spec order
    read_dataframe("sizes.sqlite")              # every stored run as a pandas DataFrame

``import mcsim.sweep`` loads neither ns-3, pandas nor Dask.
"""

from mcsim.sweep.runner import SweepReport, has_time, plan, run_key, run_sweep, versions, why_no_time
from mcsim.sweep.spec import Run, SweepSpec
from mcsim.sweep.store import Store, read_dataframe, show_rows

__all__ = [
    "Run",
    "Store",
    "SweepReport",
    "SweepSpec",
    "has_time",
    "plan",
    "read_dataframe",
    "run_key",
    "run_sweep",
    "show_rows",
    "versions",
    "why_no_time",
]
