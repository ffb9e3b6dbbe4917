# SPDX-License-Identifier: GPL-2.0-only
"""A completion processed without an event of its own (HostCpuConfig.defer_completions, the default)
gives the results of one event per completion, bit for bit, with fewer events.

Each case runs twice, deferring and not, and compares every number of the two Results (the digest of
benchmarks/result_hashes.py). The cases are the ones where a deferred completion could be seen at the
wrong time: losses and repair READs (which change what stays deferrable), receive queues that overrun
(a datagram's arrival reads how many buffers the processed completions have re-posted), a CPU slower
than the link (long queues), a CPU with no cost (completions ending at one time stamp), staged copies,
several endpoints, loopback, overlapped Reduce-Scatters, a link that goes down, send completions
through a processor, and payloads checked byte for byte.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from mcsim import FabricConfig, Faults, HostCpuConfig, RdmaConfig, Scenario, topology
from mcsim.native import run_control
from mcsim.runs.scenario import artifact_protocol

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "result_hashes.py"
_spec = importlib.util.spec_from_file_location("result_hashes", _SCRIPT)
result_hashes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(result_hashes)


def _with_cpu(sc: Scenario, **cpu: object) -> Scenario:
    rdma = sc.rdma
    return dataclasses.replace(sc, rdma=dataclasses.replace(rdma, processor=dataclasses.replace(rdma.processor, **cpu)))


def _both_ways(sc: Scenario) -> tuple[str, int, str, int]:
    """(digest, events) deferring, then (digest, events) with one event per completion."""
    out = []
    for defer in (True, False):
        result = _with_cpu(sc, defer_completions=defer).run()
        out += [result_hashes.digest(result), run_control.last_run().events]
    return out[0], out[1], out[2], out[3]


def _link_down() -> Faults:
    g = topology.resolve("fat-tree-k4")
    u, v = min((u, v) for u, v in g.edges if g.nodes[u]["role"] != "host" and g.nodes[v]["role"] != "host")
    return Faults(link_down=[(u, v, 5_000_000, 40_000_000)])


FT4 = {"topology": "fat-tree-k4", "algorithm": "mcast"}
CASES = {
    "plain 256KiB": dict(**FT4, bytes_per_rank="256KiB"),
    "slow cpu, short receive queue": dict(
        **FT4, bytes_per_rank="64KiB", rdma=RdmaConfig(rq_depth=8, processor=HostCpuConfig(completion_ps=900_000))
    ),
    "cpu with no cost": dict(
        **FT4, bytes_per_rank="64KiB", rdma=RdmaConfig(staging=False, processor=HostCpuConfig(completion_ps=0))
    ),
    "staged, slow copy": dict(
        **FT4, bytes_per_rank="64KiB", rdma=RdmaConfig(staging=True, processor=HostCpuConfig(memcpy_bps=20 * 10**9))
    ),
    "4 endpoints, loopback": dict(**FT4, bytes_per_rank="64KiB", endpoints=4, rdma=RdmaConfig(multicast_loopback=True)),
    "broadcast": dict(topology="fat-tree-k4", collective="broadcast", bytes_per_rank="256KiB"),
    "|| ring RS": dict(**FT4, bytes_per_rank="64KiB", overlap="reduce_scatter"),
    "|| innet RS": dict(**FT4, bytes_per_rank="64KiB", overlap="reduce_scatter", overlap_algorithm="innet"),
    "link down": dict(**FT4, bytes_per_rank="256KiB", faults=_link_down()),
    "artifact preset": dict(**artifact_protocol(), **FT4, bytes_per_rank="16KiB"),
    "send completions shared": dict(**FT4, bytes_per_rank="64KiB", rdma=RdmaConfig(send_completions="shared")),
    "one chunk per source": dict(**FT4, bytes_per_rank="4KiB"),
    "testbed one chunk per source, loss": dict(
        topology="testbed-188", algorithm="mcast", bytes_per_rank="4KiB", fabric=FabricConfig(loss=1e-3, seed=5)
    ),
    "testbed 4 endpoints, loss": dict(
        topology="testbed-188",
        algorithm="mcast",
        bytes_per_rank="16KiB",
        endpoints=4,
        fabric=FabricConfig(loss=1e-3, seed=3, ecmp_seed=3),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_deferring_completions_changes_no_number(name):
    deferred, deferred_events, evented, evented_events = _both_ways(Scenario(**CASES[name]))
    assert deferred == evented
    assert deferred_events <= evented_events


@pytest.mark.parametrize("seed", range(1, 9))
@pytest.mark.parametrize("loss", [1e-3, 2e-2])
@pytest.mark.parametrize("size", ["4KiB", "8KiB", "64KiB"])
def test_losses_and_repairs_over_seeds_change_no_number(seed, loss, size):
    # the repair READs that come back set chunks outside the datagrams' order (Reconsider); with one
    # or two chunks per source every datagram completes its source, which answers a NEED_FETCH owed
    sc = Scenario(
        **FT4,
        bytes_per_rank=size,
        fabric=FabricConfig(loss=loss, seed=seed, ecmp_seed=seed),
        verify=seed % 2 == 0,
    )
    deferred, _, evented, _ = _both_ways(sc)
    assert deferred == evented


def test_the_lossy_cases_repair_and_owe():
    # the seeds above exercise what they are for: repairs at both loss rates' higher one, and
    # NEED_FETCHes (answered by a completing datagram) at one chunk per source
    runs = [
        Scenario(**FT4, bytes_per_rank=size, fabric=FabricConfig(loss=2e-2, seed=seed, ecmp_seed=seed)).run()
        for size in ("4KiB", "64KiB")
        for seed in range(1, 9)
    ]
    assert all(r.rank["repaired_chunks"].sum() > 0 for r in runs)
    assert sum(r.rank["need_fetches"].sum() for r in runs[:8]) > 0


def test_a_multicast_allgather_runs_one_event_fewer_per_datagram_received():
    # 16 ranks, 64 chunks of 4 KiB each: every rank receives 15 x 64 datagrams, and each that
    # completes neither its source, the output nor a source's last chunk needs no event
    sc = Scenario(**FT4, bytes_per_rank="256KiB")
    _, deferred_events, _, evented_events = _both_ways(sc)
    chunks, ranks = 64, 16
    received = ranks * (ranks - 1) * chunks
    # at most the last chunk of each source (a tail), each source's completing chunk and the
    # output's last one per rank are not deferred
    not_deferred_at_most = ranks * (ranks - 1) * 2 + ranks
    assert evented_events - deferred_events >= received - not_deferred_at_most
