# SPDX-License-Identifier: GPL-2.0-only
"""ECN marking (FabricConfig(ecn=True)): hosts send ECT(0), switch ports RED-mark CE on what joins an output
queue above Kmin (every packet from Kmax on, Pmax (q - Kmin) / (Kmax - Kmin) in between), against closed forms
and the law's monotonicity; marks are reproducible for a seed and show in RoCEv2 frames' IP ECN field."""

import shutil
import subprocess

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import FabricConfig, Flow
from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
from mcsim.runs.flows import simulate
from mcsim.runs.scenario import scenario_of

PACKETS = 15 * (1 << 20) // 4096


def incast(seed: int = 1, **kw):
    """15 hosts send 1 MiB each to host 0 on one switch (node 16; its port 0 faces host 0), PFC below."""
    g = topology.leaf_spine(1, 0, 16, rate_bps=100 * 10**9, delay_ps=100_000)
    flows = [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in range(1, 16)]
    config = FabricConfig(flow_control="pfc", header_b=20, ecn=True, seed=seed, **kw)
    return simulate(g, flows, fabric=config)


def to_host0(r) -> int:
    return int(np.flatnonzero((r.port_node == 16) & (r.port_num == 0))[0])


def test_hosts_send_ect_and_the_congested_port_sees_every_packet():
    r = incast()
    e, out = r.ecn, to_host0(r)
    hosts = r.port_node < 16
    assert int(e["ect_stamped"][hosts].sum()) == PACKETS and int(e["ect_stamped"][~hosts].sum()) == 0
    assert int(e["ect_packets"][out]) == PACKETS  # the switch's port to host 0 took them all
    assert int(e["ce_marked"][~(r.port_node == 16)].sum()) == 0  # hosts' ports never mark


def test_step_marking_marks_all_but_the_packet_that_found_the_queue_empty():
    # Kmin = Kmax = 1 B: a packet is marked iff the queue it joins holds more than 1 B; the 15 first packets
    # arrive together, so only the first of them finds it empty
    r = incast(ecn_kmin_b=1, ecn_kmax_b=1)
    assert int(r.ecn["ce_marked"][to_host0(r)]) == PACKETS - 1
    far = incast(ecn_kmin_b=10**12, ecn_kmax_b=10**12)  # thresholds above any queue: no mark
    assert int(far.ecn["ce_marked"].sum()) == 0


def test_a_lone_flow_never_queues_past_the_default_kmin():
    # default thresholds at 100 Gbit/s: 5 KB x 100/40 = 12.5 KB; one flow queues at most a packet
    g = topology.leaf_spine(1, 0, 2, rate_bps=100 * 10**9, delay_ps=100_000)
    r = simulate(g, [Flow(src=1, dst=0, size_b=1 << 20)], fabric=FabricConfig(header_b=20, ecn=True))
    assert int(r.ecn["ect_packets"].sum()) == 256 and int(r.ecn["ce_marked"].sum()) == 0


def test_the_marking_law_is_monotone_in_pmax_and_reproducible_for_a_seed():
    # Kmax above any queue: every mark is a draw u < Pmax (q - Kmin) / (Kmax - Kmin); raw flows do not react
    # to marks, so the queues (and the draws) are the same at every Pmax: the marks only grow with it
    kw = {"ecn_kmin_b": 4000, "ecn_kmax_b": 8 << 20}
    marks = {p: int(incast(ecn_pmax=p, **kw).ecn["ce_marked"].sum()) for p in (0.0, 0.25, 0.5, 1.0)}
    assert marks[0.0] == 0 < marks[0.25] <= marks[0.5] <= marks[1.0] < PACKETS
    # the expected count is linear in Pmax: half of it, within a binomial spread
    assert abs(marks[0.5] - marks[1.0] / 2) <= 4 * np.sqrt(marks[1.0]) + 1
    again = int(incast(ecn_pmax=0.5, **kw).ecn["ce_marked"].sum())
    other = int(incast(seed=2, ecn_pmax=0.5, **kw).ecn["ce_marked"].sum())
    assert again == marks[0.5] and other != marks[0.5]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (Debian: apt-get install tshark)")
def test_rocev2_frames_carry_the_marks(tmp_path):
    # a multicast Allgather on one switch: the port to host 0 marks some datagrams CE; its trace shows them as
    # IP ECN 3, and every frame host 0 sends as ECT(0), 2
    sc = scenario_of(
        topology=topology.leaf_spine(1, 0, 8, rate_bps=100 * 10**9, delay_ps=100_000), collective="allgather",
        algorithm="mcast", bytes_per_rank=256 * 1024, ranks=8, wire_format="rocev2",
        fabric=FabricConfig(ecn=True, ecn_kmin_b=1, ecn_kmax_b=1),
    )  # fmt: skip
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,), ports=((8, 0),)))
    (host_file, _, _), (port_file, _, _) = r.pcap_files
    fields = ["-T", "fields", "-e", "ip.src", "-e", "ip.dsfield.ecn"]

    def rows(path):
        out = subprocess.run(["tshark", "-r", path, *fields], capture_output=True, text=True, check=True).stdout
        return [line.split("\t") for line in out.splitlines()]

    out_of_switch = [ecn for src, ecn in rows(port_file) if src != "10.0.0.1"]
    marked = int(
        r.fabric.ecn["ce_marked"][int(np.flatnonzero((r.fabric.port_node == 8) & (r.fabric.port_num == 0))[0])]
    )
    assert marked > 0 and out_of_switch.count("3") == marked
    assert {ecn for src, ecn in rows(host_file) if src == "10.0.0.1"} == {"2"}


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"ecn": 1}, r"ecn=1 must be True or False"),
        ({"ecn_pmax": 1.5}, r"ecn_pmax=1\.5 must be a probability in \[0, 1\]"),
        ({"ecn_pmax": float("nan")}, r"ecn_pmax=nan must be a probability"),
        ({"ecn_pmax": "1%"}, r"ecn_pmax='1%' must be a probability"),
        ({"ecn_kmin_b": -1}, r"ecn_kmin_b=-1 must be an integer >= 0"),
        ({"ecn_kmin_b": 2000, "ecn_kmax_b": 1000}, r"ecn_kmin_b=2000 must be <= ecn_kmax_b=1000"),
    ],
)
def test_bad_ecn_settings_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        FabricConfig(**kw)
    assert "\n" not in str(err.value)


def test_the_short_name_and_the_option_reach_the_fabric(capsys):
    from mcsim.cli import main

    sc = scenario_of(topology="fat-tree-k4", bytes_per_rank=4096, ecn=True, flow_control="pfc")
    assert sc.fabric.ecn is True and sc.run().fabric.ecn is not None
    with pytest.raises(McsimError, match=r"^Scenario: ecn='yes' must be True or False$") as err:
        scenario_of(topology="fat-tree-k4", ecn="yes")
    assert "\n" not in str(err.value)
    argv = ["allgather", "--topology", "fat-tree-k4", "--size", "64KiB", "--ecn", "--format", "json"]
    assert main(argv) == 0 and '"complete": true' in capsys.readouterr().out
