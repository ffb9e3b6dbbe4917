# SPDX-License-Identifier: GPL-2.0-only
"""The oracles the collectives' tests share: one step's closed form on star_graph, a lossy verified run
over seeds, and the packets and WRITEs of a buffer sent in chunks."""

import pytest

from mcsim.config.rdma import DEFAULT_NIC_LATENCY_PS, HostCpuConfig
from mcsim.runs.scenario import scenario_of

WRITE_IMM_HEADER_B = 8 + 12 + 16 + 4 + 4 + 2  # InfiniBand LRH + BTH + RETH + ImmDt + ICRC + VCRC
STAR_PS_PER_B = 80  # star_graph's links: 100 Gbit/s of data
STAR_CABLE_PS = 100_000  # star_graph's cable delay


@pytest.fixture
def star_step():
    """star_step(fabric, payload_b) -> ps of one step on star_graph: an RDMA WRITE with immediate of
    payload_b bytes from one host to another, until its receive completion is processed: the sender
    NIC's latency, the packet on the host link up to the switch's routing header (cut-through) and
    then whole on the switch's egress, the switch latency, two cable delays, the receiver NIC's
    latency and the host CPU's completion. ``fabric``: the Scenario's (its header_b, routing header)."""

    def step(fabric, payload_b: int) -> int:
        wire = fabric.routing_header_b + WRITE_IMM_HEADER_B + fabric.header_b + payload_b
        fixed = 2 * DEFAULT_NIC_LATENCY_PS + fabric.switch_latency_ps + 2 * STAR_CABLE_PS
        return fixed + HostCpuConfig().completion_ps + STAR_PS_PER_B * wire

    return step


@pytest.fixture
def lossy_verified():
    """lossy_verified(seeds, **scenario) -> (packets lost, RC retransmits), summed over runs at loss 1e-3
    in verify mode, one per seed; each run must be complete and byte-exact."""

    def runs(seeds, **scenario) -> tuple[int, int]:
        lost = resent = 0
        for seed in seeds:
            r = scenario_of(loss=1e-3, seed=seed, verify=True, **scenario).run()
            assert r.complete and r.verified, f"seed {seed}: {r.wrong_bytes}"
            lost += r.fabric.drops_by_cause()["loss"]
            resent += r.summary()["retransmits"]
        return lost, resent

    return runs


@pytest.fixture
def chunked():
    """chunked(n, chunk_b, mtu) -> (packets, WRITEs) that carry n bytes as WRITEs of chunk_b cut at mtu."""

    def count(n: int, chunk_b: int, mtu: int) -> tuple[int, int]:
        return (n // chunk_b) * -(-chunk_b // mtu) + -(-(n % chunk_b) // mtu), -(-n // chunk_b)

    return count
