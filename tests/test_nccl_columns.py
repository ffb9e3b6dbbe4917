# SPDX-License-Identifier: GPL-2.0-only
"""Every collective's output columns against nccl-tests' definitions (its doc/PERFORMANCE.md and the
*_perf programs): size is the bytes of the buffer nccl-tests names, count its 4-byte floats, algbw
size / time, busbw algbw times the collective's factor."""

import pytest

from mcsim.config.codec import GraphTopology
from mcsim.config.collectives import EVERY_ALGORITHM, HIERARCHICAL, NVLS_HIERARCHICAL
from mcsim.config.rdma import GPU_RECEIVE, RdmaConfig
from mcsim.runs.scenario import Scenario
from mcsim.topology.nodes import rail_optimised

P, N = 4, 4096
# nccl-tests' size for N bytes per rank (mcsim's bytes_per_rank): the received buffer of all_gather
# (recvcount x nranks), the send buffer of reduce_scatter and alltoall (nranks blocks), the buffer
# of all_reduce and broadcast; the bus bandwidth factor of each
NCCL = {
    "allgather": (P * N, (P - 1) / P),
    "reduce_scatter": (P * N, (P - 1) / P),
    "alltoall": (P * N, (P - 1) / P),
    "allreduce": (N, 2 * (P - 1) / P),
    "broadcast": (N, 1.0),
    "reduce": (N, 1.0),
}


@pytest.mark.parametrize(("collective", "algorithm"), sorted(EVERY_ALGORITHM))
def test_size_count_algbw_and_busbw_are_nccl_tests(collective, algorithm):
    # a hierarchical algorithm runs on nodes: P = 2 nodes of 2 GPUs, 400G NICs
    nodes = GraphTopology.of(rail_optimised(nodes=2, gpus_per_node=2, rate_bps=400 * 10**9, delay_ps=100_000))
    topology = nodes if (collective, algorithm) in HIERARCHICAL else "fat-tree-k4"
    # NVLS's node phases need the GPU's own receive (a host CPU's cannot take NVLink's rate: one line otherwise)
    gpu = {"rdma": RdmaConfig(staging=False, processor=GPU_RECEIVE)} if algorithm in NVLS_HIERARCHICAL else {}
    row = (
        Scenario(topology=topology, collective=collective, algorithm=algorithm, ranks=P, bytes_per_rank=N, **gpu)
        .run()
        .summary()
    )
    size, factor = NCCL[collective]
    assert (row["size_B"], row["count"], row["bytes_per_rank_B"]) == (size, size // 4, N)
    assert row["algbw_GBps"] == pytest.approx(size / (row["time_us"] * 1e-6) / 1e9)
    assert row["busbw_GBps"] == pytest.approx(row["algbw_GBps"] * factor)


def test_every_collective_has_an_nccl_tests_definition():
    assert {c for c, _ in EVERY_ALGORITHM} == set(NCCL)
