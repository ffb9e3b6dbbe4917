# SPDX-License-Identifier: GPL-2.0-only
"""Result.record() and Result.rank_arrays(): the flat metrics and per-rank arrays a sweep stores,
checked against the Result's own properties and closed forms on real fat-tree-k4 runs."""

import json

import numpy as np
import pytest

from mcsim.config.fabric import FOREVER, Faults
from mcsim.result import Result
from mcsim.runs.scenario import Scenario

N = 4096  # bytes per rank
P = 16  # fat-tree-k4 hosts = ranks


def run(**kw) -> Result:
    return Scenario(topology="fat-tree-k4", bytes_per_rank=N, **kw).run()


@pytest.fixture(scope="module")
def lossless() -> dict[str, Result]:
    return {alg: run(algorithm=alg) for alg in ("ring", "mcast")}


@pytest.fixture(scope="module")
def cut_off() -> Result:
    """Host 1's only link goes down at 0 ps and never comes back: no rank can finish."""
    return run(algorithm="mcast", faults=Faults(link_down=[(1, 16, 0, FOREVER)], reroute_delay_ps=1_000_000))


def is_json_scalar(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | str)


@pytest.mark.parametrize("alg", ["ring", "mcast"])
def test_record_of_a_lossless_allgather_agrees_with_the_result_and_closed_forms(lossless, alg):
    r = lossless[alg]
    rec = r.record()
    assert all(is_json_scalar(v) for v in rec.values())
    json.dumps(rec, allow_nan=False)
    assert (rec["collective"], rec["algorithm"], rec["ranks"], rec["bytes_per_rank_b"]) == ("allgather", alg, P, N)
    assert rec["output_b"] == P * N and rec["data_rate_bps"] == r.data_rate_bps
    # every rank receives the P-1 shards it lacks, exactly once (no loss, no repair)
    assert rec["received_b"] == int(r.received_b.sum()) == P * (P - 1) * N
    # ring: each rank sends every shard but its successor's own; multicast: each its own once
    assert rec["injected_b"] == int(r.injected_b.sum()) == (P * (P - 1) * N if alg == "ring" else P * N)
    assert rec["time_ps"] == r.time_ps == int(r.finish_ps.max())
    assert rec["receive_bound_ps"] == pytest.approx((P - 1) * N * 8e12 / r.data_rate_bps)
    assert rec["time_ps"] >= rec["receive_bound_ps"]
    assert rec["time_over_bound"] == pytest.approx(rec["time_ps"] / rec["receive_bound_ps"])
    assert rec["algbw_Bps"] == pytest.approx(P * N * 1e12 / rec["time_ps"])
    assert rec["busbw_Bps"] == pytest.approx(rec["algbw_Bps"] * (P - 1) / P)
    assert rec["link_traversals"] == r.fabric.link_traversals() == int(r.fabric.ports["tx_packets"].sum())
    assert rec["wire_b"] == int(r.fabric.ports["tx_wire_bytes"].sum()) > rec["received_b"]  # headers, hops
    for name in ("retransmits", "rc_timeouts", "receive_drops", "repaired_chunks", "repair_reads", "need_fetches"):
        assert rec[name] == 0, name
    assert {k: v for k, v in rec.items() if k.startswith("drop_")} == {
        f"drop_{cause}_packets": 0 for cause in ("tail", "loss", "chosen", "link_down")
    }
    assert rec["unroutable_packets"] == 0 and rec["complete"] is True and rec["unfinished_ranks"] == 0
    assert rec["verified"] is None and rec["end_ps"] == r.fabric.end_ps >= rec["time_ps"]
    assert not any(k.startswith("concurrent") for k in rec)


def test_record_keeps_summary_as_it_was(lossless):
    r = lossless["ring"]
    assert r.summary()["time_us"] == r.record()["time_ps"] / 1e6
    assert "size_B" in r.summary() and "size_B" not in r.record()


@pytest.mark.parametrize("alg", ["ring", "mcast"])
def test_rank_arrays_are_numeric_copies_one_entry_per_rank(lossless, alg):
    r = lossless[alg]
    arrays = r.rank_arrays()
    assert {"finish_ps", "injected_b", "received_b", "link_down_for_good_ps"} <= arrays.keys()
    assert {f"rank.{k}" for k in r.rank} | {f"nic.{k}" for k in r.nic} <= arrays.keys()
    assert "wrong_bytes" not in arrays and "concurrent.finish_ps" not in arrays
    for name, values in arrays.items():
        assert values.shape == (P,) and values.dtype.kind in "iuf" and values.flags.c_contiguous, name
    np.testing.assert_array_equal(arrays["finish_ps"], r.finish_ps)
    np.testing.assert_array_equal(arrays["nic.rx_payload"], r.received_b)
    assert int(arrays["received_b"].sum()) == r.record()["received_b"]
    arrays["finish_ps"][0] = 0
    assert r.finish_ps[0] != 0  # a copy: the Result is untouched


def test_an_incomplete_run_records_no_time_and_stays_strict_json(cut_off):
    r = cut_off
    assert not r.complete  # the condition under test happened
    rec = r.record()
    for name in ("time_ps", "time_over_bound", "algbw_Bps", "busbw_Bps"):
        assert rec[name] is None, name
    assert rec["complete"] is False and rec["unfinished_ranks"] == r.unfinished_ranks.size > 0
    assert rec["receive_bound_ps"] == r.receive_bound_ps  # the bound needs no finish
    assert rec["drop_link_down_packets"] == r.fabric.drops_by_cause()["link_down"] > 0
    assert rec["rc_timeouts"] == int(r.nic["rc_timeouts"].sum()) > 0
    assert rec["data_timeouts"] == int(r.rank["data_timeouts"].sum())
    json.loads(json.dumps(rec, allow_nan=False))
    down = r.rank_arrays()["link_down_for_good_ps"]
    assert down[1] == 0 and (np.delete(down, 1) == -1).all()


def test_a_concurrent_collective_and_verify_mode_are_recorded():
    both = run(algorithm="mcast", overlap="reduce_scatter")
    rec = both.record()
    assert rec["concurrent_collective"] == "reduce_scatter" and rec["concurrent_algorithm"] == "ring"
    assert rec["concurrent_complete"] is True
    assert rec["concurrent_time_ps"] == int(both.concurrent.finish_ps.max())
    np.testing.assert_array_equal(both.rank_arrays()["concurrent.finish_ps"], both.concurrent.finish_ps)
    checked = run(algorithm="mcast", verify=True)
    assert checked.record()["verified"] is True
    np.testing.assert_array_equal(checked.rank_arrays()["wrong_bytes"], np.zeros(P))
