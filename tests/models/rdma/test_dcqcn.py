# SPDX-License-Identifier: GPL-2.0-only
"""DCQCN (RdmaConfig(congestion=DcqcnConfig())): a receiver answers CE-marked packets with CNPs (at most one
per QP per N), the sender's reaction point cuts its QP's rate and the NIC paces it; against the same incast
without it: far fewer pauses, results that change, fair shares, a bottleneck queue held between the marking
thresholds instead of at PFC's, CNPs as RoCEv2 frames; NVIDIA's firmware preset beside the paper's."""

import csv
import io
import itertools
import shutil
import subprocess

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.congestion import DCQCN_PRESETS, DcqcnConfig, dcqcn_preset
from mcsim.config.fabric import DEFAULT_BUFFER_BYTES, DEFAULT_PFC_RESUME_OFFSET_BYTES, FabricConfig
from mcsim.config.queue_trace import QueueTraceConfig
from mcsim.config.rdma import MAX_WIRE_HEADER_B, PHYSICAL_OVERHEAD_BYTES, PcapConfig, RcOp, RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import scenario_of
from mcsim.runs.verbs import run_verbs

RATE_BPS = 100 * 10**9
DELAY_PS = 100_000
MTU_B = 4096


PAPER = DcqcnConfig()


def incast(cc: str, n: int = 15, size_b: int = 4 << 20, queue_trace: QueueTraceConfig | None = None, dcqcn=PAPER):
    """n hosts WRITE size_b each to host 0 on one switch (node n + 1, its port 0 to host 0), RoCEv2 with PFC;
    cc "dcqcn" (with ``dcqcn``'s parameters) or "none"."""
    g = topology.leaf_spine(1, 0, n + 1, rate_bps=RATE_BPS, delay_ps=DELAY_PS)
    ops = [RcOp(verb="write", src=s, dst=0, size_b=size_b) for s in range(1, n + 1)]
    config = RdmaConfig(wire_format="rocev2", congestion=dcqcn if cc == "dcqcn" else None)
    fabric = FabricConfig(flow_control="pfc")
    return run_verbs(g, rc_ops=ops, rdma=config, fabric=fabric, queue_trace=queue_trace)


def pfc_xoff_b() -> int:
    """A switch ingress's XOFF in force: its buffer less the computed headroom (fabric.md, "Priority Flow
    Control"): the largest frame twice (the one its port is sending delays the PFC frame; the upstream port
    finishes its own), the PFC frame, and a link delay of bytes each way."""
    frame_b = MTU_B + MAX_WIRE_HEADER_B + PHYSICAL_OVERHEAD_BYTES["rocev2"]
    delay_b = -(-DELAY_PS * RATE_BPS // (8 * 10**12))
    return DEFAULT_BUFFER_BYTES - (2 * frame_b + 64 + PHYSICAL_OVERHEAD_BYTES["rocev2"] + 2 * delay_b)


def conserved(r, n: int, size_b: int) -> bool:
    """Every WRITE completed and host 0 got each byte once: nothing dropped, nothing sent again."""
    return (
        bool((r.rc_done_ps >= 0).all())
        and int(r.nic["rx_payload"][0]) == n * size_b
        and sum(r.fabric.drops_by_cause().values()) == 0
        and int(r.nic["retransmits"].sum()) == 0
    )


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


def test_the_bottleneck_queue_stays_between_the_marking_thresholds_after_convergence():
    # 4 long WRITEs into one port. With the paper's parameters at 100 Gbit/s the flows converge in ~30 ms (the
    # line-rate start overshoots and the cuts halve the rates; R_AI 40 Mbit/s per 55 us climbs back slowly, and
    # hyper increase waits for 5 byte-counter steps of 10 MB), so each WRITE is 256 MiB (~95 ms): in the second
    # half of the time all four send, the sampled queue's median lies between RED's Kmin and Kmax in force, the
    # link never idles, and the queue, all four ingresses' shares together, stays below one ingress's XOFF: no
    # pause comes after the start (twice the bytes, the same pauses). Without DCQCN the same queue sits at the
    # four ingresses' XOFF: each pauses its sender there and resumes it at XON, the offset lower.
    n, size_b, port = 4, 256 << 20, (5, 0)
    trace = QueueTraceConfig(ports=(port,), interval_ps=1_000_000)
    cc, none = incast("dcqcn", n, size_b, trace), incast("none", n, size_b, trace)
    xoff = pfc_xoff_b()
    for r in (cc, none):
        assert conserved(r, n, size_b)
        assert xoff < int(r.fabric.pfc["max_ingress_bytes"].max()) <= xoff + MTU_B + MAX_WIRE_HEADER_B
    medians = {}
    for name, r in (("dcqcn", cc), ("none", none)):
        q = r.fabric.queue_trace
        first = int(r.rc_done_ps.min())
        second_half = (q.time_ps >= first // 2) & (q.time_ps <= first)
        medians[name] = float(np.median(q.queue_b[0][second_half]))
        busy = float(np.mean(q.queue_b[0][second_half] > 0))
        assert busy == 1.0, f"{name}: the bottleneck idled in {1 - busy:.1%} of the second half's samples"
    kmin, kmax = int(cc.fabric.queue_trace.ecn_kmin_b[0]), int(cc.fabric.queue_trace.ecn_kmax_b[0])
    assert (kmin, kmax) == (12_500, 500_000)  # DCQCN's 5 KB and 200 KB at 40 Gbit/s, scaled to 100 Gbit/s
    assert kmin < medians["dcqcn"] < kmax and medians["dcqcn"] < xoff
    assert n * (xoff - DEFAULT_PFC_RESUME_OFFSET_BYTES) <= medians["none"] <= n * (xoff + MTU_B + MAX_WIRE_HEADER_B)
    half = incast("dcqcn", n, size_b // 2)
    assert int(half.fabric.pfc["pause_tx"].sum()) == int(cc.fabric.pfc["pause_tx"].sum()) > 0
    assert int(none.fabric.pfc["pause_tx"].sum()) > 100 * int(cc.fabric.pfc["pause_tx"].sum())


def test_the_firmware_preset_differs_from_the_paper_and_both_conserve_bytes():
    # the 15:1 incast with NVIDIA's firmware defaults (mcsim.config.congestion) and with the paper's: both finish,
    # every byte once; the presets' pauses and finish times differ (README, "The fabric model", gives the figures)
    n, size_b = 15, 4 << 20
    paper, nvidia = incast("dcqcn"), incast("dcqcn", dcqcn=dcqcn_preset("nvidia"))
    assert conserved(paper, n, size_b) and conserved(nvidia, n, size_b)
    pauses = [int(r.fabric.pfc["pause_tx"].sum()) for r in (paper, nvidia)]
    finish = [int(r.rc_done_ps.max()) for r in (paper, nvidia)]
    assert pauses[0] != pauses[1] and finish[0] != finish[1]
    assert dcqcn_preset("paper") == DcqcnConfig()  # the paper's: DcqcnConfig's defaults
    assert dcqcn_preset("nvidia").g == 5 / 1024  # dce_tcp_g 1019: 1 - 1019/1024


def test_one_cut_per_reduce_period():
    # a CNP comes at most every N = 50 us per QP: a reduce period shorter than that never holds a cut (the
    # results are the period 0's, every CNP cutting at once, bit for bit); one of 200 us holds most of them
    plain = incast("dcqcn")
    short = incast("dcqcn", dcqcn=DcqcnConfig(rate_reduce_period_ps=1_000_000))
    held = incast("dcqcn", dcqcn=DcqcnConfig(rate_reduce_period_ps=200_000_000))
    for name in ("rc_done_ps", "rc_responder_done_ps"):
        assert np.array_equal(getattr(plain, name), getattr(short, name))
    for table in ("ports", "hosts"):
        assert all(np.array_equal(v, getattr(short.fabric, table)[k]) for k, v in getattr(plain.fabric, table).items())
    assert int(plain.fabric.ecn["ce_marked"].sum()) > 0  # marks, and so CNPs and cuts, happened
    assert not np.array_equal(plain.rc_done_ps, held.rc_done_ps) and conserved(held, 15, 4 << 20)


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
        ({"g": 0}, r"^DcqcnConfig: g=0 must be a number in \(0, 1\]"),
        ({"g": True}, r"^DcqcnConfig: g=True must be a number"),
        ({"rate_timer_ps": 0}, r"^DcqcnConfig: rate_timer_ps=0 must be >= 1"),
        ({"rai_bps": -1}, r"^DcqcnConfig: rai_bps=-1 must be >= 0"),
        ({"cnp_interval_ps": 1.5}, r"^DcqcnConfig: cnp_interval_ps=1\.5 must be an integer"),
        ({"rate_reduce_period_ps": -1}, r"^DcqcnConfig: rate_reduce_period_ps=-1 must be >= 0"),
    ],
)
def test_bad_dcqcn_settings_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        DcqcnConfig(**kw)
    assert "\n" not in str(err.value)


def test_an_unknown_congestion_control_is_one_line():
    with pytest.raises(McsimError, match=r"^unknown congestion control 'xcp'; choose one of dcqcn, hpcc, none$"):
        scenario_of(congestion_control="xcp")
    with pytest.raises(McsimError, match=r"is not a congestion control config; use DcqcnConfig\(\), HpccConfig"):
        RdmaConfig(congestion="dcqcn")


def test_an_unknown_preset_is_one_line_and_the_option_reaches_the_run(capsys):
    from mcsim.cli import main

    with pytest.raises(McsimError, match=r"^unknown DCQCN preset 'cx7'; choose one of nvidia, paper$"):
        dcqcn_preset("cx7")
    assert set(DCQCN_PRESETS) == {"paper", "nvidia"}
    times = {}
    for preset in DCQCN_PRESETS:
        argv = ["alltoall", "--topology", "fat-tree-k4", "--size", "256KiB", "--flow-control", "pfc", "--wire-format",
                "rocev2", "--congestion-control", "dcqcn", "--dcqcn-preset", preset, "--format", "csv"]  # fmt: skip
        assert main(argv) == 0
        (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
        times[preset] = float(row["time_us"])
    assert times["paper"] != times["nvidia"]
