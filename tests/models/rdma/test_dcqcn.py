# SPDX-License-Identifier: GPL-2.0-only
"""DCQCN (RdmaConfig(congestion_control="dcqcn")): a receiver answers CE-marked packets with CNPs (at most one
per QP per N), the sender's reaction point cuts its QP's rate and the NIC paces it; against the same incast
without it: far fewer pauses, results that change, fair shares, and CNPs as RoCEv2 frames."""

import itertools
import shutil
import subprocess

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import FabricConfig
from mcsim.config.rdma import PcapConfig, RcOp, RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario_keywords import scenario_of
from mcsim.runs.verbs import run_verbs

RATE_BPS = 100 * 10**9


def incast(cc: str, n: int = 15, size_b: int = 4 << 20, **rdma):
    """n hosts WRITE size_b each to host 0 on one switch, RoCEv2 with PFC."""
    g = topology.leaf_spine(1, 0, n + 1, rate_bps=RATE_BPS, delay_ps=100_000)
    ops = [RcOp(verb="write", src=s, dst=0, size_b=size_b) for s in range(1, n + 1)]
    config = RdmaConfig(wire_format="rocev2", congestion_control=cc, **rdma)
    return run_verbs(g, rc_ops=ops, rdma=config, config=FabricConfig(flow_control="pfc"))


def test_dcqcn_answers_marks_and_pauses_far_less_than_pfc_alone():
    alone, cc = incast("none"), incast("dcqcn")
    assert alone.fabric.ecn is None and cc.fabric.ecn is not None  # DCQCN turns the switches' marking on
    assert (alone.rc_done_ps >= 0).all() and (cc.rc_done_ps >= 0).all()
    pauses = {k: int(r.fabric.pfc["pause_tx"].sum()) for k, r in (("none", alone), ("dcqcn", cc))}
    assert pauses["dcqcn"] * 10 < pauses["none"]  # far fewer
    assert int(cc.fabric.ecn["ce_marked"].sum()) > 0
    assert not np.array_equal(alone.rc_done_ps, cc.rc_done_ps)  # turning it on changes the results


def test_flows_on_one_bottleneck_get_fair_shares():
    # 4 long flows to one receiver: each one's throughput (its bytes over its time) within Jain's index 0.99
    r = incast("dcqcn", n=4, size_b=16 << 20)
    rates = (16 << 20) / r.rc_done_ps.astype(float)
    assert rates.sum() ** 2 / (len(rates) * (rates**2).sum()) >= 0.99


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (Debian: apt-get install tshark)")
def test_cnps_go_to_the_senders_as_rocev2_frames(tmp_path):
    # a ring Allgather on one switch with every packet marked: receivers send CNPs (opcode 0x81) to the QP
    # that sent the marked data, no more than one per QP per N
    sc = scenario_of(
        topology=topology.leaf_spine(1, 0, 4, rate_bps=RATE_BPS, delay_ps=100_000), collective="allgather",
        algorithm="ring", bytes_per_rank=1 << 20, ranks=4, wire_format="rocev2", congestion_control="dcqcn",
        fabric=FabricConfig(ecn_kmin_b=1, ecn_kmax_b=1),
    )  # fmt: skip
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(1,)))
    assert r.complete and r.congestion is not None
    out = subprocess.run(
        ["tshark", "-r", r.pcap_files[0][0], "-T", "fields", "-e", "ip.src", "-e", "ip.dst", "-e",
         "infiniband.bth.opcode", "-e", "frame.time_epoch", "-e", "_ws.malformed"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rows = [line.split("\t") for line in out.splitlines()]
    cnps = [row for row in rows if row[2] == "129"]
    assert not any(row[4] for row in rows)
    assert len([c for c in cnps if c[0] == "10.0.0.2"]) == int(r.congestion["cnp_tx"][1]) > 0
    assert len([c for c in cnps if c[1] == "10.0.0.2"]) == int(r.congestion["cnp_rx"][1])
    sent = sorted(float(c[3]) for c in cnps if c[0] == "10.0.0.2")  # host 1's one RC QP that receives
    assert all(b - a >= 50e-6 - 1e-12 for a, b in itertools.pairwise(sent))


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"congestion_control": "xcp"}, r"unknown congestion control 'xcp'; choose one of dcqcn, hpcc, none"),
        ({"dcqcn_g": 0}, r"dcqcn_g=0 must be a number in \(0, 1\]"),
        ({"dcqcn_g": True}, r"dcqcn_g=True must be a number"),
        ({"dcqcn_rate_timer_ps": 0}, r"dcqcn_rate_timer_ps=0 must be >= 1"),
        ({"dcqcn_rai_bps": -1}, r"dcqcn_rai_bps=-1 must be >= 0"),
        ({"dcqcn_cnp_interval_ps": 1.5}, r"dcqcn_cnp_interval_ps=1\.5 must be an integer"),
    ],
)
def test_bad_dcqcn_settings_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        RdmaConfig(**kw)
    assert "\n" not in str(err.value)
