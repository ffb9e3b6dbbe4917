# SPDX-License-Identifier: GPL-2.0-only
"""Result honesty: an incomplete run has no time and no bandwidth, and says which ranks and why."""

import dataclasses
import math
import re

import numpy as np
import pytest

from mcsim.config.fabric import FOREVER, Faults
from mcsim.config.rdma import RcConfig
from mcsim.errors import IncompleteRun, McsimError
from mcsim.result import (
    NO_KNOWN_CAUSE_REASON,
    RC_ERROR_REASON,
    FabricResult,
    Result,
    VerbsResult,
    cut_off_reason,
    held_up_reason,
    incomplete_lines,
    ranks_text,
    receive_drops_reason,
)
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.units import format_time

RC_ERROR = RC_ERROR_REASON
MISSING = NO_KNOWN_CAUSE_REASON
N = 4096  # bytes per rank


def fabric_result() -> FabricResult:
    """Fabric counters of a run that sent 7 packets over one link (only what summary() reads)."""
    zero = np.zeros(2, dtype=np.uint32)
    return FabricResult(
        port_node=zero,
        port_num=zero,
        port_peer=zero,
        ports={"tx_packets": np.array([7, 0], dtype=np.uint64)},
        hosts={},
        sources={},
        unroutable_packets=0,
        end_ps=0,
    )


def result(finish_ps, rc_errors=None, collective="allgather") -> Result:
    p = len(finish_ps)
    zeros = np.zeros(p, dtype=np.uint64)
    rank = {k: zeros for k in ("receive_drops", "repaired_chunks", "repair_reads")}
    nic = {"retransmits": zeros, "rc_errors": np.asarray(rc_errors if rc_errors is not None else zeros, np.uint64)}
    return Result(
        collective=collective,
        algorithm="mcast",
        ranks=p,
        bytes_per_rank_b=N,
        data_rate_bps=100 * 10**9,
        finish_ps=np.asarray(finish_ps, dtype=np.int64),
        injected_b=np.full(p, N),
        received_b=np.full(p, N * (p - 1)),
        rank=rank,
        nic=nic,
        fabric=fabric_result(),
    )


@pytest.mark.parametrize(("collective", "output_b"), [("allgather", 4 * N), ("broadcast", N)])
def test_a_complete_run_has_time_and_nccl_bandwidths(collective, output_b):
    r = result([1_000_000, 3_000_000, 2_000_000, 4_000_000], collective=collective)
    assert r.complete and r.unfinished_ranks.size == 0 and r.why_unfinished() == {}
    assert r.time_ps == 4_000_000
    assert r.algbw_Bps == output_b * 10**12 / 4_000_000
    assert r.busbw_Bps == pytest.approx(r.algbw_Bps * (0.75 if collective == "allgather" else 1))
    s = r.summary()
    assert s["time_us"] == 4.0 and s["unfinished_ranks"] == 0 and s["complete"]
    assert incomplete_lines("4KiB", {"mcast": r}) == []


def test_an_incomplete_run_names_the_ranks_and_why_instead_of_a_time():
    r = result([-1, 5_000_000, -1, 7_000_000], rc_errors=[0, 0, 2, 0])
    assert not r.complete
    np.testing.assert_array_equal(r.unfinished_ranks, [0, 2])
    held = held_up_reason([2])  # rank 0 waits for data that rank 2's failed QP cannot bring
    assert r.why_unfinished() == {0: held, 2: RC_ERROR}
    for attribute in ("time_ps", "algbw_Bps", "busbw_Bps"):
        with pytest.raises(IncompleteRun) as info:
            getattr(r, attribute)
        message = str(info.value)
        assert f"rank 0 of 4 did not finish: {held}; rank 2 of 4 did not finish: {RC_ERROR}" in message
        assert "\n" not in message
    assert issubclass(IncompleteRun, McsimError)
    assert (
        r.incomplete_line() == f"INCOMPLETE: rank 0 of 4 did not finish: {held}; rank 2 of 4 did not finish: {RC_ERROR}"
    )


def test_an_unfinished_rank_whose_nic_dropped_datagrams_says_so():
    r = result([-1, 5_000_000, -1])
    r.rank["receive_drops"] = np.array([3, 0, 0], dtype=np.uint64)
    assert r.why_unfinished() == {0: receive_drops_reason(3), 2: MISSING}


def test_an_in_network_reduce_scatter_whose_host_cpu_falls_behind_names_the_dropped_sums():
    # 1.6 Tbit/s of sums at each host: its CPU thread's receive queue (rq_depth 128) overruns, and the
    # switches' sums are not repaired: every rank is missing data, and its reason names the drops
    r = scenario_of(topology="fat-tree-k4", collective="reduce_scatter", algorithm="innet", bytes_per_rank="1MiB",
                    ranks=8, rate="1.6Tbps").run()  # fmt: skip
    assert not r.complete
    drops = r.rank["receive_drops"]
    assert (drops > 0).all()
    assert r.why_unfinished() == {rank: receive_drops_reason(int(drops[rank])) for rank in range(8)}
    assert "receive on the DPA" in r.incomplete_line()


def test_an_incomplete_summary_has_nan_never_a_plausible_number():
    r = result([-1, -1, -1, -1])  # no rank finished: a max() of finish_ps would be -1 ps
    s = r.summary()
    assert all(math.isnan(s[k]) for k in ("time_us", "algbw_GBps", "busbw_GBps"))
    assert s["unfinished_ranks"] == 4 and s["complete"] is False
    assert s["bound_us"] > 0 and s["link_traversals"] == 7  # what was measured stays


def test_the_message_lists_at_most_ten_ranks_per_reason():
    r = result([-1] * 25, rc_errors=[1] * 3 + [0] * 22)
    text = r.unfinished_text()
    assert text == (
        f"ranks 0, 1, 2 of 25 did not finish: {RC_ERROR}; "
        f"ranks 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ... and 12 more of 25 did not finish: {held_up_reason([0, 1, 2])}"
    )


def test_table_rows_print_one_incomplete_line_per_incomplete_run():
    done, bad = result([1, 2]), result([1, -1])
    assert incomplete_lines("  4KiB", {"ring": done, "mcast": bad}) == [
        f"  4KiB mcast INCOMPLETE: rank 1 of 2 did not finish: {MISSING}"
    ]


def test_a_real_run_whose_rc_gives_up_is_incomplete_and_says_why(star_graph):
    # 5 % loss with retry_cnt=0: the first NAK or timeout puts an RC QP in the error state, so
    # the repair reads and tokens of some ranks never complete
    topology = star_graph(4)
    sc = scenario_of(topology=topology, bytes_per_rank="64KiB", loss=0.05, seed=1, rc=RcConfig(retry_cnt=0))
    r = sc.run()
    assert not r.complete
    why = r.why_unfinished()
    assert sorted(why) == r.unfinished_ranks.tolist() and (r.finish_ps[r.unfinished_ranks] == -1).all()
    failed = [rank for rank in range(4) if r.nic["rc_errors"][rank] > 0]
    for rank, reason in why.items():
        others = [c for c in failed if c != rank]
        assert reason == (RC_ERROR if rank in failed else held_up_reason(others))
    assert RC_ERROR in why.values() and any(v.startswith("it misses data that") for v in why.values()), (
        "this seed shows both causes"
    )
    with pytest.raises(IncompleteRun, match=r"of 4 did not finish"):
        _ = r.time_ps
    assert math.isnan(r.summary()["time_us"])


def test_a_host_cut_off_for_good_is_named_and_the_others_wait_for_it():
    # host 1's only link (to the fat tree's first edge switch) dies 20 us in and never returns: the
    # subnet manager cannot route around it
    faults = Faults(link_down=[(1, 16, 20_000_000, FOREVER)], reroute_delay_ps=1_000_000)
    r = Scenario(topology="fat-tree-k4", algorithm="mcast", bytes_per_rank="64KiB", faults=faults).run()
    assert not r.complete
    why = r.why_unfinished()
    assert why[1] == cut_off_reason(20_000_000) == "its only link went down for good at 20.000 us (Faults.link_down)"
    # rank 0 talks to rank 1 directly (it is rank 1's ring predecessor in the repair chain): its RC
    # QP gives up; every other rank waits for data that ranks 0 and 1 cannot deliver
    assert why[0] == RC_ERROR
    assert all(why[rank] == held_up_reason([0, 1]) for rank in range(2, 16))
    assert MISSING not in why.values()


def verified(finish_ps, wrong) -> Result:
    wrong = np.asarray(wrong, dtype=np.int64)
    return dataclasses.replace(result(finish_ps), verified=bool((wrong == 0).all()), wrong_bytes=wrong)


@pytest.mark.parametrize(
    ("finish_ps", "wrong", "text"),
    [
        ([1, 2, 3, 4], [0, 0, 0, 0], "every byte of every output is right"),
        ([1, 2, 3, 4], [0, 5, 0, 2], "complete, but 7 wrong bytes in the outputs of ranks 1, 3 of 4"),
        # an unfinished rank's output is not whole: its differing bytes are missing, not judged wrong
        (
            [1, -1, 3, 4],
            [0, 4096, 0, 0],
            "incomplete: bytes missing at rank 1 of 4; the finished ranks' outputs are right",
        ),
        (
            [1, -1, -1, 4],
            [3, 4096, 0, 0],
            "incomplete: bytes missing at ranks 1, 2 of 4; 3 wrong bytes in the outputs of rank 0 of 4, which finished",
        ),
        ([-1, -1, -1, -1], [4096, 0, 9, 4096], "incomplete: bytes missing at ranks 0, 1, 2, 3 of 4"),
    ],
)
def test_verify_says_what_is_true_of_each_run(finish_ps, wrong, text):
    assert verified(finish_ps, wrong).verify_text() == text


def test_verify_text_is_none_when_bytes_were_not_checked():
    assert result([1, 2]).verify_text() is None


def test_a_real_incomplete_verify_run_says_bytes_are_missing(star_graph):
    sc = scenario_of(topology=star_graph(4), bytes_per_rank="64KiB", loss=0.05, rc=RcConfig(retry_cnt=0), verify=True)
    r = sc.run()
    assert not r.complete and r.verified is False  # verified stays False: not every byte is right
    assert r.verify_text().startswith(f"incomplete: bytes missing at {ranks_text(r.unfinished_ranks.tolist())} of 4")


def with_timeouts(finish_ps, fired, end_ps=0) -> Result:
    r = result(finish_ps)
    nic = {**r.nic, "rc_timeouts": np.asarray(fired, dtype=np.uint64)}
    return dataclasses.replace(r, nic=nic, fabric=dataclasses.replace(r.fabric, end_ps=end_ps))


RC14 = RcConfig()  # 4.096 us x 2^14 = 67.108864 ms


@pytest.mark.parametrize(
    ("finish_ps", "fired", "rc", "note"),
    [
        (
            [1, 200_000_000_000],
            [3, 1],
            RC14,
            "RC local ACK timeouts (67.109ms each, ack_timeout_exp=14) fired 4 times (268.435ms summed over queue "
            "pairs); the run took 200ms, 610352 x its bound; see RcConfig.ack_timeout_exp (--ack-timeout-exp)",
        ),
        ([1, 200_000_000_000], [0, 0], RC14, None),  # no timeout fired
        ([1, 67_108_863_999], [2, 0], RC14, None),  # the run ended before a timeout could fire
        ([1, 67_108_864_000], [0, 1], RC14, "fired 1 time (67.109ms summed"),  # one timeout long: it could have
        ([1, 200_000_000_000], [2, 0], RcConfig(ack_timeout_exp=0), None),  # no timeout at all
        ([-1, 200_000_000_000], [2, 0], RC14, None),  # incomplete: its line says why
    ],
)
def test_the_timeout_note_says_only_what_the_counters_show(finish_ps, fired, rc, note):
    text = with_timeouts(finish_ps, fired, end_ps=300_000_000_000).timeout_note(rc)
    assert text == note if note is None or note.startswith("RC") else note in text


def test_the_timeout_note_of_a_lossy_run_matches_its_counters():
    sc = scenario_of(topology="fat-tree-k4", algorithm="ring", bytes_per_rank="64KiB", loss=0.01)
    r = sc.run()
    fired, timeout_ps = int(r.nic["rc_timeouts"].sum()), sc.rdma.rc.ack_timeout_ps
    assert fired > 0 and timeout_ps == 4_096_000 << 14
    assert r.time_ps >= timeout_ps  # a timeout fires one timeout length after its QP's last progress
    note = r.timeout_note(sc.rdma.rc)
    summed = format_time(fired * timeout_ps)  # the closed form: timeouts x timeout length
    assert f"(67.109ms each, ack_timeout_exp=14) fired {fired} times ({summed} summed over queue pairs)" in note
    assert f"the run took {format_time(r.time_ps)}, {r.time_ps / r.receive_bound_ps:.0f} x its bound" in note
    # a timeout that fired after the run had finished is no note: this Broadcast finishes in us
    sc = scenario_of(topology="fat-tree-k4", collective="broadcast", bytes_per_rank="64KiB", loss=0.01)
    b = sc.run()
    assert int(b.nic["rc_timeouts"].sum()) > 0 and b.time_ps < sc.rdma.rc.ack_timeout_ps
    assert b.timeout_note(sc.rdma.rc) is None


def test_a_result_repr_is_one_short_line():
    sc = Scenario(topology="fat-tree-k4", bytes_per_rank="64KiB", verify=True)
    r = sc.run()
    text = repr(r)
    assert len(text) < 300 and "\n" not in text
    assert re.fullmatch(
        r"<Result allgather mcast, P=16, 64KiB per rank: \d+\.\d+us = \d\.\d+ x bound, complete, verified=True>", text
    )
    assert len(repr(r.fabric)) < 300 and repr(r.fabric).startswith("<FabricResult 96 ports, 16 hosts, 0 flows, end ")
    cut = repr(result([-1, 5, -1, 7]))
    assert cut == "<Result allgather mcast, P=4, 4KiB per rank: incomplete (2 of 4 ranks unfinished), verified=None>"
    verbs = VerbsResult(
        fabric=r.fabric,
        rc_done_ps=np.array([5, -1, 7]),
        rc_responder_done_ps=np.full(3, -1),
        rc_requester={},
        rc_responder={},
        ud={"host": np.arange(20)},
        nic={},
    )
    assert repr(verbs).startswith("<VerbsResult 3 RC ops (2 completed), 20 UD QPs; <FabricResult 96 ports")
    assert len(repr(verbs)) < 300
