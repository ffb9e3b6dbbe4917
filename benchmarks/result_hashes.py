# SPDX-License-Identifier: GPL-2.0-only
"""Hashes of the Results of mcsim's main scenarios: what a refactor or a speed change must keep.

Each line is one scenario and a 16-hex-digit SHA-256 of every number its Result holds (every
array's dtype, shape and bytes, every scalar, walked in field order), so two commits that print
the same line simulated the same thing bit for bit. Run it on both sides of a change:

    python benchmarks/result_hashes.py                  # this checkout
    git worktree add /tmp/before <rev>
    PYTHONPATH=/tmp/before python benchmarks/result_hashes.py

and compare the lines (``--only NAME`` runs one scenario). To see what changed in a scenario whose
hash moved, dump every number on both sides and compare them field by field:

    python benchmarks/result_hashes.py --dump after.npz
    PYTHONPATH=/tmp/before python benchmarks/result_hashes.py --dump before.npz
    python benchmarks/result_hashes.py --diff before.npz after.npz

It uses only the public API (Scenario,
the configs, simulate, run_verbs and saturate from ``mcsim``), so it runs on older commits too. It never
asserts: a hash that changed is for the author of the change to explain.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import time
from collections.abc import Callable

import numpy as np

from mcsim import (
    DpaConfig,
    FabricConfig,
    Faults,
    Flow,
    RcOp,
    RdmaConfig,
    Scenario,
    UdStream,
    run_verbs,
    saturate,
    simulate,
    topology,
)
from mcsim.errors import McsimError

try:
    from mcsim.runs.scenario import artifact_protocol
except ImportError:  # a commit before mcsim/runs/ (issue 31)
    from mcsim.scenario import artifact_protocol  # type: ignore[no-redef]


# fields added to a dataclass after the hashes began, hashed only when set: a result without one keeps its hash
ADDED_LATER = (
    "first_phase",
    "protocol_events",
    "pcap_files",
    "pfc",
    "pfc_deadlock",
    "ecn",
    "congestion",
    "telemetry",
    "queue_trace",
    "unfinished",
    "placement",
    "team_ranks",
)  # Result.first_phase (issue 33), Result.protocol_events, .pcap_files (35), FabricResult.pfc (36), .queue_trace,
# JobResult.unfinished (49: None for a job that completed), Result.placement, .team_ranks (51: hierarchical)


def _walk(h: hashlib._Hash, value: object) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(type(value).__name__.encode())
        for f in dataclasses.fields(value):
            if f.name in ADDED_LATER and getattr(value, f.name) is None:
                continue
            h.update(f.name.encode())
            _walk(h, getattr(value, f.name))
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            h.update(str(key).encode())
            _walk(h, value[key])
    elif isinstance(value, list | tuple):
        h.update(f"[{len(value)}".encode())
        for item in value:
            _walk(h, item)
    elif isinstance(value, np.ndarray):
        h.update(f"{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif value is None or isinstance(value, bool | int | float | str | np.generic):
        h.update(repr(value).encode())
    else:  # an object the walk does not know (e.g. a routing tree): its repr, stable by design
        h.update(repr(value).encode())


def _flatten(value: object, path: str, out: dict[str, np.ndarray]) -> None:
    """Every number of ``value`` as arrays named by their path (the walk's order)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _flatten(getattr(value, f.name), f"{path}.{f.name}", out)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            _flatten(value[key], f"{path}[{key}]", out)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out)
    elif isinstance(value, np.ndarray) and value.dtype.names is None and value.dtype.kind in "biuf":
        out[path] = np.ascontiguousarray(value)
    elif isinstance(value, bool | int | float | np.generic) and not isinstance(value, str):
        out[path] = np.asarray(value)
    else:
        out[path] = np.asarray(repr(value))


def _diff(before_file: str, after_file: str) -> None:
    with np.load(before_file, allow_pickle=False) as b, np.load(after_file, allow_pickle=False) as a:
        names = sorted({k.split(".", 1)[0] for k in [*b.files, *a.files]})
        for scenario in names:
            keys = sorted(k for k in {*b.files, *a.files} if k.split(".", 1)[0] == scenario)
            lines = []
            for k in keys:
                if k not in b.files or k not in a.files:
                    lines.append(f"    {k.split('.', 1)[-1]}: only {'after' if k in a.files else 'before'}")
                    continue
                x, y = b[k], a[k]
                if x.shape != y.shape or x.dtype != y.dtype:
                    lines.append(f"    {k.split('.', 1)[-1]}: {x.dtype}{x.shape} -> {y.dtype}{y.shape}")
                elif not np.array_equal(x, y):
                    if x.dtype.kind in "biuf":
                        d = np.abs(y.astype(np.float64) - x.astype(np.float64))
                        lines.append(
                            f"    {k.split('.', 1)[-1]}: {int(np.count_nonzero(d))} of {d.size} differ, "
                            f"max |diff| {d.max():.6g}, before max {np.max(x):.6g}"
                        )
                    else:
                        lines.append(f"    {k.split('.', 1)[-1]}: {x} -> {y}")
            print(f"{scenario}: {'same' if not lines else f'{len(lines)} fields differ'}")
            if lines:
                print("\n".join(lines))


def digest(result: object) -> str:
    """16 hex digits of SHA-256 over every number of ``result``."""
    h = hashlib.sha256()
    _walk(h, result)
    return h.hexdigest()[:16]


def _simulate(g: object, flows: list[Flow], fabric: FabricConfig) -> object:
    """simulate() with these fabric settings: ``fabric=`` (issue 49), or ``config=`` on a commit before it (which
    refuses ``fabric=`` with a TypeError, its ``config=`` being the only name)."""
    try:
        return simulate(g, flows, fabric=fabric)
    except TypeError as exc:  # "simulate() got an unexpected keyword argument 'fabric'"
        if "'fabric'" not in str(exc):
            raise
        return simulate(g, flows, config=fabric)


def _raw_fabric_lossy() -> object:
    g = topology.resolve("fat-tree-k4")
    flows = [Flow(src=h, dst=(h + 5) % 16, size_b=1 << 20, flow_id=h) for h in range(16)]
    return _simulate(g, flows, FabricConfig(flow_control="lossy", switch_buffer_b=64 << 10))


def _verbs_rc_mixed() -> object:
    g = topology.resolve("fat-tree-k4")
    ops = [
        RcOp(verb=v, src=i, dst=15 - i, size_b=(64 << 10) + 1000 * i)
        for i, v in enumerate(("send", "write", "write_imm", "read"))
    ]
    streams = [UdStream(src=8, dst=3, size_b=4096, count=64), UdStream(src=9, group=0, size_b=2048, count=32)]
    return run_verbs(g, rc_ops=ops, ud_streams=streams, groups=[[9, 10, 11, 12]])


def _link_down() -> object:
    g = topology.resolve("fat-tree-k4")
    u, v = min((u, v) for u, v in g.edges if g.nodes[u]["role"] != "host" and g.nodes[v]["role"] != "host")
    faults = Faults(link_down=[(u, v, 20_000_000, 60_000_000)])
    return Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="256KiB", faults=faults).run()


def _roce_ring_beside_alltoall() -> object:
    """scenarios/roce_fabric.py's 400G ring Allgather beside its neighbour's Alltoalls (PFC, DCQCN, two jobs)."""
    # imported here: a commit before them runs the other scenarios (main says this one is not in it)
    from mcsim.workloads.job import Collective, Job

    try:  # a run of jobs is a kind of run (mcsim.runs.jobs); before: mcsim.workloads.run
        from mcsim.runs.jobs import run_jobs
    except ImportError:
        from mcsim.workloads.run import run_jobs  # type: ignore[no-redef]
    from mcsim.workloads.training import background_job

    step = Collective(label="C", collective="allgather", algorithm="ring", bytes_per_rank=1 << 20)
    study = Job(name="study", hosts=tuple(range(0, 16, 2)), steps=(step,))
    neighbour = background_job(
        "neighbour",
        tuple(range(1, 16, 2)),
        load=1.0,
        data_rate_bps=400 * 10**9,
        bytes_per_peer=256 * 1024,
        duration_ps=450_000_000,
    )
    return run_jobs(
        [study, neighbour],
        topology="fat-tree-k4",
        rate="400Gbps",
        wire_format="rocev2",
        flow_control="pfc",
        congestion_control="dcqcn",
    )


def _raw_incast_pfc() -> object:
    """A 15:1 incast of 1 MiB flows on one 100G switch with PFC (64 KiB XOFF): pauses, refreshes and XONs."""
    g = topology.leaf_spine(1, 0, 16, rate_bps=100 * 10**9, delay_ps=100_000)
    flows = [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in range(1, 16)]
    return _simulate(g, flows, FabricConfig(flow_control="pfc", header_b=20, pfc_xoff_b=64 << 10))


def _hpcc_rdma() -> RdmaConfig:
    """RoCEv2 with HPCC at its defaults: RdmaConfig(congestion=HpccConfig()), or before issue 50 its field."""
    try:
        from mcsim.config.congestion import HpccConfig
    except ImportError:  # a commit before mcsim.config.congestion (issue 50)
        return RdmaConfig(wire_format="rocev2", congestion_control="hpcc")  # type: ignore[call-arg]
    return RdmaConfig(wire_format="rocev2", congestion=HpccConfig())


def _mcast_lossy_class() -> object:
    """A multicast Allgather on PFC with every other host in the lossy class and its datagrams lossy."""
    return Scenario(
        topology="fat-tree-k4",
        algorithm="mcast",
        bytes_per_rank="256KiB",
        fabric=FabricConfig(flow_control="pfc", switch_buffer_b=64 << 10, lossy_hosts=tuple(range(0, 16, 2))),
        rdma=RdmaConfig(wire_format="rocev2", ud_lossy=True),
        verify=True,
    ).run()


SCENARIOS: dict[str, Callable[[], object]] = {
    "ft4 mcast 256KiB": lambda: Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="256KiB").run(),
    "ft4 ring 256KiB 400G": lambda: Scenario(
        topology="fat-tree-k4", algorithm="ring", bytes_per_rank="256KiB", rate="400Gbps"
    ).run(),
    "testbed mcast 64KiB loss 1e-3 verify": lambda: Scenario(
        topology="testbed-188",
        algorithm="mcast",
        bytes_per_rank="64KiB",
        fabric=FabricConfig(loss=1e-3, seed=7, ecmp_seed=7),
        verify=True,
    ).run(),
    "testbed ring 64KiB": lambda: Scenario(topology="testbed-188", algorithm="ring", bytes_per_rank="64KiB").run(),
    "ft4 bcast 1MiB": lambda: Scenario(topology="fat-tree-k4", collective="broadcast", bytes_per_rank="1MiB").run(),
    "testbed mcast 4 endpoints 16KiB": lambda: Scenario(
        topology="testbed-188", algorithm="mcast", bytes_per_rank="16KiB", endpoints=4
    ).run(),
    "ft4 mcast || ring RS 256KiB": lambda: Scenario(
        topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="256KiB", overlap="reduce_scatter"
    ).run(),
    "ft4 mcast || innet RS 64KiB": lambda: Scenario(
        topology="fat-tree-k4",
        algorithm="mcast",
        bytes_per_rank="64KiB",
        overlap="reduce_scatter",
        overlap_algorithm="innet",
    ).run(),
    "ft4 innet allreduce verify 64KiB": lambda: Scenario(
        topology="fat-tree-k4", collective="allreduce", algorithm="innet", bytes_per_rank="64KiB", verify=True
    ).run(),
    "ft4 mcast link down 20..60 us": _link_down,
    "testbed mcast artifact preset 4KiB": lambda: Scenario(
        **artifact_protocol(), topology="testbed-188", algorithm="mcast", bytes_per_rank="4KiB"
    ).run(),
    "ft4 mcast dpa 64KiB 400G": lambda: Scenario(
        topology="fat-tree-k4",
        algorithm="mcast",
        bytes_per_rank="64KiB",
        rate="400Gbps",
        rdma=RdmaConfig(processor=DpaConfig()),
    ).run(),
    "raw fabric lossy": _raw_fabric_lossy,
    "verbs rc mixed + ud": _verbs_rc_mixed,
    "dpa saturate staging": lambda: saturate(DpaConfig(), path="staging", completions=4000),
    "ft4 ring AG beside Alltoall 400G pfc dcqcn": _roce_ring_beside_alltoall,
    "ft4 mcast pfc lossy class 256KiB verify": _mcast_lossy_class,
    "raw incast 15:1 pfc 100G": _raw_incast_pfc,
    "ft4 mcast 1MiB pfc hpcc": lambda: Scenario(
        topology="fat-tree-k4",
        algorithm="mcast",
        bytes_per_rank="1MiB",
        fabric=FabricConfig(flow_control="pfc"),
        rdma=_hpcc_rdma(),
    ).run(),
}
# the scenarios a commit before their features cannot run (it prints that, not a hash)
NEWER = (
    "ft4 ring AG beside Alltoall 400G pfc dcqcn",
    "ft4 mcast pfc lossy class 256KiB verify",
    "raw incast 15:1 pfc 100G",
    "ft4 mcast 1MiB pfc hpcc",
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="run only this scenario (repeatable)")
    parser.add_argument("--dump", metavar="FILE.npz", help="also write every number of every Result there")
    parser.add_argument(
        "--diff", nargs=2, metavar=("BEFORE.npz", "AFTER.npz"), help="compare two dumps, field by field"
    )
    args = parser.parse_args()
    if args.diff:
        _diff(*args.diff)
        return 0
    names = args.only or list(SCENARIOS)
    arrays: dict[str, np.ndarray] = {}
    for name in names:
        if name not in SCENARIOS:
            print(f"result_hashes.py: unknown scenario {name!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        try:
            result = SCENARIOS[name]()
        except (ImportError, TypeError, McsimError) as exc:
            if name not in NEWER:
                raise
            print(f"{'-' * 16}  {name}  (not in this commit: {type(exc).__name__}: {exc})", flush=True)
            continue
        h = digest(result)
        _flatten(result, name, arrays)
        print(f"{h}  {name}  ({time.perf_counter() - t0:.1f} s)", flush=True)
    if args.dump:
        np.savez(args.dump, **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main())
