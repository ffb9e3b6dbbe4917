# SPDX-License-Identifier: GPL-2.0-only
"""mcsim: a packet-level simulator of collective communication, a Python frontend over ns-3.

Python plans a run and reads its results; C++ models in ns3_modules/ simulate every packet. The
configs (mcsim.config) are frozen data; only mcsim.native calls C++ (mcsim.native.runtime loads it with
ctypes; mcsim.native.abi is its C ABI), and only when a simulation is built (mcsim.runs).

The public API is importable from here (``from mcsim import Scenario, FabricConfig, Result``).
Each name is imported from its module on first use, so ``import mcsim`` stays cheap: it loads
neither numpy, networkx nor ns-3.
"""

from __future__ import annotations

import importlib

# typing.TYPE_CHECKING without importing typing (~10 ms at start-up, before mcsim.cli's Ctrl-C guard)
TYPE_CHECKING = False

__version__ = "0.1.0"

# public name -> the module that defines it
API = {
    "Scenario": "mcsim.runs.scenario",
    "GraphTopology": "mcsim.config.codec",
    "TeamSpec": "mcsim.config.collectives",
    "FabricConfig": "mcsim.config.fabric",
    "Faults": "mcsim.config.fabric",
    "Flow": "mcsim.config.fabric",
    "simulate": "mcsim.runs.flows",
    "RdmaConfig": "mcsim.config.rdma",
    "RcConfig": "mcsim.config.rdma",
    "HostCpuConfig": "mcsim.config.rdma",
    "RcOp": "mcsim.config.rdma",
    "UdStream": "mcsim.config.rdma",
    "run_verbs": "mcsim.runs.verbs",
    "DpaConfig": "mcsim.config.dpa",
    "DcqcnConfig": "mcsim.config.congestion",
    "HpccConfig": "mcsim.config.congestion",
    "receive_stream": "mcsim.runs.dpa",
    "saturate": "mcsim.runs.dpa",
    "ReceiveResult": "mcsim.runs.dpa",
    "SaturationResult": "mcsim.runs.dpa",
    "Link": "mcsim.topology.physics",
    "stream": "mcsim.runs.stream",
    "StreamResult": "mcsim.runs.stream",
    "Result": "mcsim.result",
    "FabricResult": "mcsim.result",
    "VerbsResult": "mcsim.result",
    "load_faults": "mcsim.config.faults_file",
    "write_rows": "mcsim.util.output",
    "Table": "mcsim.util.output",
    "Column": "mcsim.util.output",
    "McsimError": "mcsim.errors",
    "IncompleteRun": "mcsim.errors",
    "SweepSpec": "mcsim.sweep.spec",
    "Job": "mcsim.workloads.job",
    "Compute": "mcsim.workloads.job",
    "Collective": "mcsim.workloads.job",
    "Transfer": "mcsim.workloads.job",
    "Message": "mcsim.workloads.job",
    "run_jobs": "mcsim.runs.jobs",
    "JobResult": "mcsim.runs.jobs",
    "WorkloadResult": "mcsim.runs.jobs",
}
__all__ = sorted(API)

if TYPE_CHECKING:  # for type checkers only: at run time __getattr__ imports on first use
    from typing import Any

    from mcsim.config.codec import GraphTopology as GraphTopology
    from mcsim.config.collectives import TeamSpec as TeamSpec
    from mcsim.config.congestion import DcqcnConfig as DcqcnConfig
    from mcsim.config.congestion import HpccConfig as HpccConfig
    from mcsim.config.dpa import DpaConfig as DpaConfig
    from mcsim.config.fabric import FabricConfig as FabricConfig
    from mcsim.config.fabric import Faults as Faults
    from mcsim.config.fabric import Flow as Flow
    from mcsim.config.faults_file import load_faults as load_faults
    from mcsim.config.rdma import HostCpuConfig as HostCpuConfig
    from mcsim.config.rdma import RcConfig as RcConfig
    from mcsim.config.rdma import RcOp as RcOp
    from mcsim.config.rdma import RdmaConfig as RdmaConfig
    from mcsim.config.rdma import UdStream as UdStream
    from mcsim.errors import IncompleteRun as IncompleteRun
    from mcsim.errors import McsimError as McsimError
    from mcsim.result import FabricResult as FabricResult
    from mcsim.result import Result as Result
    from mcsim.result import VerbsResult as VerbsResult
    from mcsim.runs.dpa import ReceiveResult as ReceiveResult
    from mcsim.runs.dpa import SaturationResult as SaturationResult
    from mcsim.runs.dpa import receive_stream as receive_stream
    from mcsim.runs.dpa import saturate as saturate
    from mcsim.runs.flows import simulate as simulate
    from mcsim.runs.jobs import JobResult as JobResult
    from mcsim.runs.jobs import WorkloadResult as WorkloadResult
    from mcsim.runs.jobs import run_jobs as run_jobs
    from mcsim.runs.scenario import Scenario as Scenario
    from mcsim.runs.stream import StreamResult as StreamResult
    from mcsim.runs.stream import stream as stream
    from mcsim.runs.verbs import run_verbs as run_verbs
    from mcsim.sweep.spec import SweepSpec as SweepSpec
    from mcsim.topology.physics import Link as Link
    from mcsim.util.output import Column as Column
    from mcsim.util.output import Table as Table
    from mcsim.util.output import write_rows as write_rows
    from mcsim.workloads.job import Collective as Collective
    from mcsim.workloads.job import Compute as Compute
    from mcsim.workloads.job import Job as Job
    from mcsim.workloads.job import Message as Message
    from mcsim.workloads.job import Transfer as Transfer


def __getattr__(name: str) -> Any:
    if name not in API:
        raise AttributeError(f"module 'mcsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(API[name]), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *API})
