# SPDX-License-Identifier: GPL-2.0-only
"""The multicast repair and RDMA READ recovery under loss: the cases that once livelocked, and the
paper's testbed, end complete and byte-exact; a loss-free run never retransmits."""

import numpy as np
import pytest

from mcsim.config.fabric import FabricConfig, Faults
from mcsim.config.rdma import RcConfig, RcOp
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.runs.stream import two_hosts
from mcsim.runs.verbs import run_verbs
from mcsim.topology.physics import Link
from mcsim.units import parse_rate


def assert_recovered(r):
    assert r.complete, r.finish_ps
    assert r.verified, r.wrong_bytes
    assert int(r.nic["rc_errors"].sum()) == 0


def test_two_repair_reads_on_one_qp_with_the_first_response_lost_complete():
    # rank 0 misses two separate chunks of one source (its leaf's port 0 loses them) and READs them
    # from rank 1 with two READs on one QP; the first READ's response (packet 193, from 0, to rank 0
    # with today's defaults; the index moves with the timing: 171 with store-and-forward switches
    # and no NIC latency) is lost and the second's arrives: an implied NAK must re-request the
    # first (this livelocked when the second response acknowledged past the first READ)
    faults = Faults(drops=[(16, 0, 154), (16, 0, 157), (16, 0, 193)])
    r = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", verify=True, faults=faults).run()
    assert_recovered(r)
    assert int(r.rank["repair_reads"][0]) == 2 and int(r.rank["repaired_chunks"][0]) == 2
    assert r.fabric.drops_by_cause()["chosen"] == 3
    # both READ requests went out again (go-back-N from the first READ) and no timer was needed
    assert int(r.nic["retransmits"][0]) == 2 and int(r.nic["rc_timeouts"][0]) == 0


def test_the_reproducer_of_the_livelock_report_completes():
    # the drop set of the original report (with today's timing the lost packets fall elsewhere)
    faults = Faults(drops=[(16, 0, 154), (16, 0, 157), (16, 0, 244)])
    r = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", verify=True, faults=faults).run()
    assert_recovered(r)
    assert r.fabric.drops_by_cause()["chosen"] == 3


@pytest.mark.parametrize("seed", range(1, 9))
def test_a_lone_1_mib_read_at_5_percent_loss_completes_with_every_byte(seed):
    r = run_verbs(
        two_hosts(Link(rate_bps=parse_rate("56Gbps"))),
        rc_ops=[RcOp(verb="read", src=0, dst=1, size_b=1 << 20)],
        fabric=FabricConfig(loss=0.05, seed=seed),
    )
    assert r.fabric.drops_by_cause()["loss"] > 0
    assert r.rc_requester["completed"][0] == 1 and r.rc_requester["errors"][0] == 0
    assert r.rc_requester["rx_payload"][0] == 1 << 20  # each byte accepted exactly once, in order
    assert r.rc_requester["read_gaps"][0] > 0  # recovered by implied NAKs, not only by timeouts


@pytest.mark.parametrize("collective", ["allgather", "broadcast"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fat_tree_multicast_at_1e_2_loss_completes_byte_exact(collective, seed):
    r = scenario_of(
        topology="fat-tree-k4", collective=collective, algorithm="mcast", bytes_per_rank="64KiB", verify=True,
        loss=1e-2, seed=seed,
    ).run()  # fmt: skip
    assert r.fabric.drops_by_cause()["loss"] > 0
    assert_recovered(r)


@pytest.mark.parametrize("collective", ["allgather", "broadcast"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fat_tree_multicast_at_1e_1_loss_completes_byte_exact_given_retries(collective, seed):
    # 10 % per link is ~47 % per 6-hop path: an RC QP that may retry only 7 times in a row (the IB
    # maximum) sometimes gives up, so this takes unlimited retries; see the next test for the limit
    r = scenario_of(
        topology="fat-tree-k4", collective=collective, algorithm="mcast", bytes_per_rank="64KiB", verify=True,
        loss=1e-1, seed=seed, rc=RcConfig(retry_cnt=None),
    ).run()  # fmt: skip
    assert_recovered(r)


def test_at_1e_1_loss_with_the_ib_retry_limit_a_failed_qp_is_counted_and_finished_ranks_are_exact():
    outcomes = []
    for seed in (1, 2, 3):
        r = scenario_of(
            topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", verify=True, loss=1e-1, seed=seed
        ).run()
        outcomes.append(r.complete)
        done = r.finish_ps >= 0
        assert (r.wrong_bytes[done] == 0).all()  # whatever finished is byte exact
        if not r.complete:
            assert int(r.nic["rc_errors"].sum()) > 0  # the cause is visible: a QP gave up
    assert not all(outcomes), "at this loss IB's 7 retries are not always enough"


@pytest.mark.slow
@pytest.mark.parametrize("collective", ["allgather", "broadcast"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_testbed_188_multicast_at_1e_3_loss_completes_byte_exact(collective, seed):
    size = "64KiB" if collective == "allgather" else "1MiB"
    r = scenario_of(
        topology="testbed-188", collective=collective, algorithm="mcast", bytes_per_rank=size, verify=True,
        loss=1e-3, seed=seed,
    ).run()  # fmt: skip
    assert r.fabric.drops_by_cause()["loss"] > 0
    assert_recovered(r)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_a_loss_free_testbed_188_allgather_never_times_out_or_retransmits(algorithm):
    r = Scenario(topology="testbed-188", algorithm=algorithm, bytes_per_rank="1MiB").run()
    assert r.complete
    assert r.fabric.drops_by_cause() == {"tail": 0, "loss": 0, "chosen": 0, "link_down": 0}
    assert int(r.nic["rc_timeouts"].sum()) == 0
    assert int(r.nic["retransmits"].sum()) == 0
    assert np.all(r.rank["repair_reads"] == 0)


@pytest.mark.parametrize("algorithm", ["ring", "mcast"])
def test_a_loss_free_fat_tree_allgather_never_times_out_or_retransmits(algorithm):
    r = Scenario(topology="fat-tree-k4", algorithm=algorithm, bytes_per_rank="1MiB").run()
    assert r.complete
    assert int(r.nic["rc_timeouts"].sum()) == 0 and int(r.nic["retransmits"].sum()) == 0


def test_a_lost_chunk_before_a_source_s_last_is_repaired_at_once_not_after_the_data_timeout():
    sc = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", verify=True)
    bound = 16 * 15 * 4096 * 8 * 10**12 // sc.data_rate_bps  # 15 shards of 16 chunks through one link
    # host 0 (a root) loses its 6th chunk on its own link: every other rank misses it, sees host 0's
    # last chunk arrive after it, and asks its neighbour for it then
    r = Scenario(**_fields(sc), faults=Faults(drops=[(0, 0, 5)])).run()
    assert_recovered(r)
    assert int(r.rank["data_timeouts"].sum()) == 0
    assert int(r.rank["repaired_chunks"].sum()) == 15 and int(r.rank["need_fetches"].sum()) == 15
    assert r.time_ps < 1.25 * bound < sc.data_timeout_ps()
    # the last chunk itself lost: nothing follows it, so only the data timeout reveals it
    tail = Scenario(**_fields(sc), faults=Faults(drops=[(0, 0, 15)])).run()
    assert_recovered(tail)
    assert int(tail.rank["data_timeouts"].sum()) == 15
    assert tail.time_ps > sc.data_timeout_ps()


def _fields(sc):
    return {k: getattr(sc, k) for k in ("topology", "algorithm", "bytes_per_rank", "verify")}
