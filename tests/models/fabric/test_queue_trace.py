# SPDX-License-Identifier: GPL-2.0-only
"""Queue traces (QueueTraceConfig; FabricResult.queue_trace): a switch port's output queue sampled every interval
matches the closed form of a constant-rate incast sample by sample, an idle port's is 0, the count is the run's
length over the interval, a trace changes no result of the run, memory is capped and the cap said, and every bad
value is one line."""

import dataclasses
import logging

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import FABRIC_HEADER_BYTES, FabricConfig, Flow
from mcsim.config.queue_trace import QUEUE_TRACE_MAX_SAMPLES, QueueTraceConfig
from mcsim.errors import McsimError
from mcsim.result import FabricResult
from mcsim.runs.flows import simulate
from mcsim.runs.scenario import scenario_of

RATE_BPS = 100 * 10**9
DELAY_PS = 100_000
MTU_B = 4096
HEADER_B = 10  # FabricConfig's header_b: an InfiniBand packet's 26 header bytes less the FabricHeader's 16
WIRE_B = MTU_B + FABRIC_HEADER_BYTES + HEADER_B  # a raw flow's packet on the wire
TX_PS = WIRE_B * 8 * 10**12 // RATE_BPS  # its serialization: 329,760 ps, exact at 100 Gbit/s
LRH_PS = 8 * 8 * 10**12 // RATE_BPS  # the 8 bytes a cut-through switch needs before it forwards
LATENCY_PS = 170_000  # FabricConfig's switch_latency_ps
PACKETS = (1 << 20) // MTU_B  # per sender
SWITCH = 3  # leaf_spine(1, 0, 3): hosts 0..2, then the switch; its port p faces host p


def two_to_one(**kw):
    """Hosts 1 and 2 send 1 MiB each to host 0 at their line rate, through one switch whose buffer never fills:
    its port to host 0 takes two packets per serialization time and sends one."""
    g = topology.leaf_spine(1, 0, 3, rate_bps=RATE_BPS, delay_ps=DELAY_PS)
    flows = [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in (1, 2)]
    return simulate(g, flows, fabric=FabricConfig(flow_control="lossy", switch_buffer_b=1 << 30), **kw)


def closed_form_b(t_ps: np.ndarray) -> np.ndarray:
    """The queue of the switch's port to host 0 at the end of t: packet j of each sender starts at j TX_PS and
    reaches the switch's port LRH_PS + DELAY_PS later (cut-through); the port sends back to back from the first
    commit plus the switch latency, each packet counted until its last bit has left."""
    first = LRH_PS + DELAY_PS
    committed = np.where(t_ps >= first, 2 * np.minimum((t_ps - first) // TX_PS + 1, PACKETS), 0)
    sent = np.maximum(0, (t_ps - first - LATENCY_PS) // TX_PS)
    return WIRE_B * (committed - sent)


def test_an_incast_queue_is_its_closed_form_sample_by_sample():
    r = two_to_one(queue_trace=QueueTraceConfig(ports=((SWITCH, 0), (SWITCH, 1)), interval_ps=1_000_000))
    trace = r.queue_trace
    queue = trace.of(SWITCH, 0)[:, 1]
    assert np.array_equal(queue, closed_form_b(trace.time_ps))
    # while both send it grows at the line rate, R/8 bytes per ps, within 3 packets (one arrival and one
    # departure at most between samples, the two first packets at once)
    growing = (trace.time_ps > 0) & (trace.time_ps < PACKETS * TX_PS)
    fluid = RATE_BPS * (trace.time_ps[growing] - LRH_PS - DELAY_PS + LATENCY_PS) // (8 * 10**12)
    assert ((queue[growing] - fluid >= 0) & (queue[growing] - fluid < 3 * WIRE_B)).all()
    assert queue.max() > 1 << 20  # it held a MiB
    # it empties as the last bit leaves, one link delay before the run ends (that bit's arrival)
    last_departure = np.array([r.end_ps - DELAY_PS - 1, r.end_ps - DELAY_PS])
    assert closed_form_b(last_departure).tolist() == [WIRE_B, 0]
    # the port's own peak (max_queue_bytes, at a commit) is the closed form's, which the samples miss by a packet
    commits = LRH_PS + DELAY_PS + TX_PS * np.arange(PACKETS)
    peak = int(r.ports["max_queue_bytes"][r.port_index(SWITCH, 0)])
    assert peak == closed_form_b(commits).max() == queue.max() + WIRE_B


def test_the_count_is_the_run_over_the_interval_and_an_idle_port_samples_zero():
    interval = 777_777
    r = two_to_one(queue_trace=QueueTraceConfig(ports=((SWITCH, 1), (0, 0)), interval_ps=interval))
    trace = r.queue_trace
    assert trace.time_ps.size == r.end_ps // interval + 1 and trace.left_out == 0
    assert np.array_equal(trace.time_ps, np.arange(trace.time_ps.size) * interval)
    assert trace.queue_b.shape == (2, trace.time_ps.size)
    assert not trace.queue_b.any()  # the switch's port to host 1 sends nothing; host 0 only receives
    assert trace.ports == ((SWITCH, 1), (0, 0)) and not trace.ecn_kmin_b.any()  # no ECN: no thresholds
    with pytest.raises(McsimError, match=r"^QueueTrace: port 3:0 was not traced; traced: \(\(3, 1\), \(0, 0\)\)$"):
        trace.of(SWITCH, 0)


def _same(a: object, b: object, path: str = "") -> None:
    """Every number of two results equal (the queue trace apart)."""
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            if not (isinstance(a, FabricResult) and f.name == "queue_trace"):
                _same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}[{k}]")
    elif isinstance(a, np.ndarray):
        assert np.array_equal(a, b), path
    else:
        assert a == b or repr(a) == repr(b), path


def test_a_trace_changes_no_result():
    # raw flows, and a multicast Allgather with PFC, ECN and DCQCN (marks, pauses, CNPs, paced QPs, deferred
    # completions): bit for bit the untraced run's, its end time included; the traced queue did fill
    plain = two_to_one()
    traced = two_to_one(queue_trace=QueueTraceConfig(ports=((SWITCH, 0),), interval_ps=12_345))
    _same(plain, traced)
    sc = scenario_of(
        topology="fat-tree-k4", algorithm="mcast", bytes_per_rank=256 * 1024, wire_format="rocev2",
        flow_control="pfc", congestion_control="dcqcn", fabric=FabricConfig(ecn_kmin_b=1000, ecn_kmax_b=20_000),
    )  # fmt: skip
    plain_r, traced_r = sc.run(), sc.run(queue_trace=QueueTraceConfig(ports=((16, 0), (16, 2)), interval_ps=1000))
    _same(plain_r, traced_r)
    assert int(plain_r.congestion["cnp_rx"].sum()) > 0 and traced_r.fabric.queue_trace.queue_b.max() > 20_000


def test_samples_past_max_samples_are_counted_and_said(caplog):
    full = two_to_one(queue_trace=QueueTraceConfig(ports=((SWITCH, 0),))).queue_trace
    with caplog.at_level(logging.WARNING):
        capped = two_to_one(queue_trace=QueueTraceConfig(ports=((SWITCH, 0),), max_samples=10)).queue_trace
    assert capped.time_ps.size == 10 and capped.left_out == full.time_ps.size - 10 > 0
    assert np.array_equal(capped.queue_b, full.queue_b[:, :10])
    assert f"queue trace: {capped.left_out} samples per port past the first max_samples=10 were not kept" in (
        caplog.text
    )


def test_the_trace_names_the_ecn_thresholds_in_force():
    # at 100 Gbit/s the defaults scale DCQCN's 5 KB and 200 KB at 40 Gbit/s by 2.5; a host's port marks nothing
    g = topology.leaf_spine(1, 0, 3, rate_bps=RATE_BPS, delay_ps=DELAY_PS)
    r = simulate(
        g, [Flow(src=1, dst=0, size_b=4096)], fabric=FabricConfig(ecn=True),
        queue_trace=QueueTraceConfig(ports=((SWITCH, 0), (1, 0))),
    )  # fmt: skip
    assert r.queue_trace.ecn_kmin_b.tolist() == [12_500, 0] and r.queue_trace.ecn_kmax_b.tolist() == [500_000, 0]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"ports": ()}, r"ports=\(\): give a tuple of \(node, port\) pairs"),
        ({"ports": [(3, 0)]}, r"ports=\[\(3, 0\)\]: give a tuple of \(node, port\) pairs"),
        ({"ports": ((3,),)}, r"each port is a \(node, port\) pair, not \(3,\)"),
        ({"ports": ((3, -1),)}, r"ports=-1 must be >= 0"),
        ({"ports": ((3, 0), (3, 0))}, r"names one twice"),
        ({"interval_ps": 0}, r"interval_ps=0 must be 1\.\.4611686018427387904 \(2\^62 ps"),
        ({"interval_ps": -5}, r"interval_ps=-5 must be 1\.\."),
        ({"interval_ps": 1.5}, r"interval_ps=1\.5 must be an integer"),
        ({"interval_ps": True}, r"interval_ps=True must be an integer"),
        ({"interval_ps": "1us"}, r"interval_ps='1us' must be an integer"),
        ({"interval_ps": 2**62 + 1}, r"interval_ps=4611686018427387905 must be 1\.\."),
        ({"max_samples": 0}, r"max_samples=0 must be >= 1"),
        (
            {"ports": ((3, 0), (3, 1)), "max_samples": QUEUE_TRACE_MAX_SAMPLES},
            r"2 ports x max_samples=134217728 = 268435456 samples is more than a trace keeps \(134217728 samples, "
            r"1 GiB\); trace fewer ports or lower max_samples$",
        ),
    ],
)
def test_bad_trace_settings_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        QueueTraceConfig(**({"ports": ((3, 0),)} | kw))
    assert "\n" not in str(err.value) and str(err.value).startswith("QueueTraceConfig: ")


@pytest.mark.parametrize(
    ("port", "message"),
    [
        ((9, 0), r"^queue trace: port 9:0: node 9 is not a node of the topology \(0\.\.3\)$"),
        ((SWITCH, 3), r"^queue trace: port 3:3: node 3 has ports 0\.\.2$"),
        ((0, 1), r"^queue trace: port 0:1: node 0 has ports 0\.\.0$"),
    ],
)
def test_a_port_the_topology_lacks_is_one_line(port, message):
    with pytest.raises(McsimError, match=message):
        two_to_one(queue_trace=QueueTraceConfig(ports=(port,)))


def test_the_collective_commands_write_the_trace(tmp_path, capsys):
    from mcsim.cli import main

    out = tmp_path / "q.csv"
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "4KiB,16KiB", "--queue-trace", str(out),
            "--queue-ports", "16:0,edge0:2", "--queue-interval", "500ns"]  # fmt: skip
    assert main(argv) == 0
    assert "mcsim: queue trace: 4KiB: 2 ports x " in capsys.readouterr().err
    rows = np.genfromtxt(out, delimiter=",", names=True, dtype=np.int64)
    assert rows.dtype.names == ("bytes_per_rank_B", "node", "port", "time_ps", "queue_b")
    assert set(rows["bytes_per_rank_B"]) == {4096, 16384} and set(rows["node"]) == {16}
    assert set(rows["port"]) == {0, 2} and (rows["time_ps"] % 500_000 == 0).all()
    assert rows["queue_b"].max() > 0
