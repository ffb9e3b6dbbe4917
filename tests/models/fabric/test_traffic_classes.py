# SPDX-License-Identifier: GPL-2.0-only
"""PFC's traffic classes (FabricConfig(lossy_hosts=...); fabric.md, "Traffic classes") against closed forms: a
pause holds only the lossless class, so a lossy flow behind a paused port passes where a lossless one is held
(the victim of head-of-line blocking); the lossy class takes no PFC ingress and is tail-dropped, the lossless
class beside it never is; RDMA collectives in the lossy class repair their drops byte-exact."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from mcsim import topology
from mcsim.config.fabric import FABRIC_HEADER_BYTES, FabricConfig, Flow
from mcsim.config.rdma import PcapConfig, RdmaConfig
from mcsim.errors import McsimError
from mcsim.runs.flows import simulate
from mcsim.runs.jobs import DPA_RECEIVE, run_jobs
from mcsim.runs.scenario import scenario_of
from mcsim.workloads.job import Collective, Job
from mcsim.workloads.training import background_job

ETH_B = 20  # preamble, SFD and inter-frame gap
MTU_B = 4096
WIRE_B = MTU_B + FABRIC_HEADER_BYTES + ETH_B
RATE = 100 * 10**9
DELAY_PS = 100_000
SIZE_B = 4 << 20


def config(**kw) -> FabricConfig:
    return FabricConfig(flow_control="pfc", header_b=ETH_B, pfc_max_frame_b=MTU_B + FABRIC_HEADER_BYTES, **kw)


def port_index(r, node: int, port: int) -> int:
    return int(np.flatnonzero((r.port_node == node) & (r.port_num == port))[0])


def wire_ps(nbytes: int) -> int:
    return -(-nbytes * 8 * 10**12 // RATE)


def victim(lossy: tuple[int, ...]):
    """Two leaves (hosts 0..3 and 4..7) under one spine. Hosts 0, 5 and 6 send to host 4: a 3:1 incast at leaf
    B whose ingress from the spine pauses the spine, and the spine leaf A's uplink. Host 1 sends to host 7: its
    packets cross the same paused uplinks, and nothing of its own is congested."""
    g = topology.leaf_spine(2, 1, 4, rate_bps=RATE, delay_ps=DELAY_PS)
    flows = [Flow(src=s, dst=4, size_b=SIZE_B, flow_id=s) for s in (0, 5, 6)]
    flows.append(Flow(src=1, dst=7, size_b=SIZE_B, flow_id=9))
    return simulate(g, flows, fabric=config(lossy_hosts=lossy))


def test_a_pause_holds_the_lossless_victim_and_not_the_lossy_one():
    packets = SIZE_B // MTU_B
    alone_ps = wire_ps(packets * WIRE_B)  # the victim's bytes at line rate
    held, free = victim(()), victim((1,))
    for r in (held, free):
        assert sum(r.drops_by_cause().values()) == 0 and int(r.hosts["rx_packets"][7]) == packets
        assert int(r.hosts["rx_packets"][4]) == 3 * packets
        # the incast's bottleneck, busy all along, either way
        incast_ps = wire_ps(3 * packets * WIRE_B)
        assert incast_ps < int(r.hosts["last_arrival_ps"][4]) <= 1.01 * incast_ps
    # lossless, the victim's packets wait behind host 0's at every paused port: more than both flows' bytes
    # on the uplink they share
    assert int(held.hosts["last_arrival_ps"][7]) > 2 * alone_ps
    # lossy, no pause holds it: the uplink never idles while it waits, so it is done once the uplink has sent
    # its bytes and at most host 0's (plus the path's latency: three hops' delay and the switches')
    latency_ps = 3 * (DELAY_PS + 170_000) + 3 * wire_ps(WIRE_B)
    assert alone_ps < int(free.hosts["last_arrival_ps"][7]) <= 2 * alone_ps + latency_ps
    # its host is never paused, and its packets hold no PFC ingress anywhere
    sender = port_index(free, 1, 0)
    assert int(free.pfc["pause_rx"][sender]) == 0 and int(held.pfc["pause_rx"][sender]) > 0
    leaf_a = 8  # the first switch: leaf A (hosts 0..7, then the leaves, then the spine)
    ingress = port_index(free, leaf_a, 1)  # leaf A's port facing host 1
    assert int(free.pfc["max_ingress_bytes"][ingress]) == 0 and int(held.pfc["max_ingress_bytes"][ingress]) > 0


def test_the_lossy_class_is_dropped_beside_a_lossless_class_that_never_is():
    # one switch; hosts 1..7 send 1 MiB each to host 0 in the lossless class, hosts 8..15 in the lossy class
    # with packets of another size: every tail drop is one of theirs, by its size
    g = topology.leaf_spine(1, 0, 16, rate_bps=RATE, delay_ps=DELAY_PS)
    lossy_mtu = 2048
    flows = [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s) for s in range(1, 8)]
    flows += [Flow(src=s, dst=0, size_b=1 << 20, flow_id=s, mtu_b=lossy_mtu) for s in range(8, 16)]
    r = simulate(g, flows, fabric=config(lossy_hosts=tuple(range(8, 16))))
    lossy_wire = lossy_mtu + FABRIC_HEADER_BYTES + ETH_B
    drops = int(r.ports["drop_packets"].sum())
    assert drops > 0 and int(r.ports["drop_bytes"].sum()) == drops * lossy_wire
    assert int(r.pfc["ingress_drops"].sum()) == 0
    lossless_packets, lossy_packets = 7 * (1 << 20) // MTU_B, 8 * (1 << 20) // lossy_mtu
    assert int(r.hosts["rx_packets"][0]) == lossless_packets + lossy_packets - drops
    # pauses come only from the switch's ingresses of the lossless senders
    sw = 16
    lossless_ingress = {port_index(r, sw, p) for p in range(1, 8)}
    assert set(np.flatnonzero(r.pfc["pause_tx"])) <= lossless_ingress and r.pfc["pause_tx"].sum() > 0


def test_the_lossy_class_has_its_own_share_of_the_buffer():
    # host 1 (lossless) and host 2 (lossy) send to host 0 at once: the lossless packets wait in the output queue
    # (the ingress pauses host 1), yet the lossy packets are dropped only once switch_buffer_b of their own is
    # queued: the lossy queue holds buffer / wire packets, the rest of a 2:1 incast's surplus is dropped
    g = topology.leaf_spine(1, 0, 3, rate_bps=RATE, delay_ps=DELAY_PS)
    flows = [Flow(src=s, dst=0, size_b=SIZE_B, flow_id=s) for s in (1, 2)]
    buffer_b = 256 * 1024
    r = simulate(g, flows, fabric=config(lossy_hosts=(2,), switch_buffer_b=buffer_b))
    drops = int(r.ports["drop_packets"].sum())
    assert drops > 0 and int(r.pfc["ingress_drops"].sum()) == 0
    # host 0 got every lossless packet and the lossy ones not dropped
    assert int(r.hosts["rx_packets"][0]) == 2 * (SIZE_B // MTU_B) - drops
    # no lossy packet is dropped before the lossy queue holds buffer_b less one packet
    assert drops <= SIZE_B // MTU_B - (buffer_b // WIRE_B - 1)


def small_buffers(algorithm: str, lossy: tuple[int, ...] = (), ud_lossy: bool = False, collective: str = "allgather"):
    """A collective of 512 KiB per rank on fat-tree-k4 with PFC and 32 KiB switch buffers, RoCEv2, verified."""
    fab = FabricConfig(flow_control="pfc", switch_buffer_b=32 * 1024, lossy_hosts=lossy)
    return scenario_of(
        topology="fat-tree-k4", collective=collective, algorithm=algorithm, bytes_per_rank=512 * 1024,
        fabric=fab, wire_format="rocev2", rdma=RdmaConfig(ud_lossy=ud_lossy), verify=True,
    ).run()  # fmt: skip


def test_allgathers_in_the_lossy_class_are_byte_exact():
    # every rank lossy, on small switch buffers. The ring congests no port: the class changes nothing. The
    # multicast's 15:1 incast at every host overflows them: its datagrams are dropped where the lossless class
    # paused, and the READ repair makes it byte-exact
    ring = small_buffers("ring", tuple(range(16)))
    assert ring.verified and sum(ring.fabric.drops_by_cause().values()) == 0
    assert (ring.finish_ps == small_buffers("ring").finish_ps).all()
    mcast, paused = small_buffers("mcast", tuple(range(16))), small_buffers("mcast")
    assert mcast.verified and paused.verified
    assert mcast.fabric.drops_by_cause()["tail"] > 0 == sum(paused.fabric.drops_by_cause().values())
    assert int(mcast.fabric.pfc["pause_tx"].sum()) == 0 < int(paused.fabric.pfc["pause_tx"].sum())
    assert int(mcast.fabric.pfc["max_ingress_bytes"].max()) == 0


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"lossy_hosts": (1,)}, r"lossy_hosts needs flow_control='pfc' .* with 'lossless' every packet is lossless"),
        ({"lossy_hosts": (1,), "flow_control": "lossy"}, r"with 'lossy' every packet is lossy"),
        ({"lossy_hosts": (1, 1), "flow_control": "pfc"}, r"lossy_hosts names host 1 twice"),
        ({"lossy_hosts": (-1,), "flow_control": "pfc"}, r"lossy_hosts=\(-1,\) must be host ids"),
        ({"lossy_hosts": ("1",), "flow_control": "pfc"}, r"must be host ids"),
        ({"lossy_hosts": 3, "flow_control": "pfc"}, r"lossy_hosts=3 must be host ids"),
        ({"lossy_hosts": (True,), "flow_control": "pfc"}, r"must be host ids"),
    ],
)
def test_bad_lossy_hosts_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        FabricConfig(**kw)
    assert "\n" not in str(err.value)


def test_a_lossy_host_that_is_no_host_is_one_line():
    g = topology.leaf_spine(1, 0, 3, rate_bps=RATE, delay_ps=DELAY_PS)
    with pytest.raises(McsimError, match=r"lossy_hosts: 3 is not a host \(hosts are 0\.\.2\)") as err:
        simulate(g, [Flow(src=1, dst=0, size_b=4096)], fabric=config(lossy_hosts=(3,)))
    assert "\n" not in str(err.value)


def test_lossy_hosts_are_stored_sorted():
    assert FabricConfig(flow_control="pfc", lossy_hosts=[5, 2, 9]).lossy_hosts == (2, 5, 9)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (Debian: apt-get install tshark)")
def test_rocev2_frames_carry_their_class_as_dscp(tmp_path):
    # a ring Allgather on one switch, hosts 1 and 2 in the lossy class: their frames carry DSCP CS1 (8), every
    # other frame DSCP 0, and each frame keeps its ECN codepoint beside it (ECT(0): 2)
    sc = scenario_of(
        topology=topology.leaf_spine(1, 0, 4, rate_bps=RATE, delay_ps=DELAY_PS), collective="allgather",
        algorithm="ring", bytes_per_rank=64 * 1024, ranks=4, wire_format="rocev2",
        fabric=FabricConfig(flow_control="pfc", ecn=True, lossy_hosts=(1, 2)),
    )  # fmt: skip
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), ports=((4, 0),)))
    (port_file, _, _) = r.pcap_files[0]
    fields = ["-T", "fields", "-e", "ip.src", "-e", "ip.dsfield.dscp", "-e", "ip.dsfield.ecn"]
    out = subprocess.run(["tshark", "-r", port_file, *fields], capture_output=True, text=True, check=True).stdout
    rows = {tuple(line.split("\t")) for line in out.splitlines()}
    # into host 0: its ring predecessor's data (host 3, lossless) and its successor's ACKs (host 1, lossy)
    by_src = {src: {(dscp, ecn) for s, dscp, ecn in rows if s == src} for src, _, _ in rows}
    assert by_src["10.0.0.4"] == {("0", "2")}  # host 3: lossless, ECT(0)
    assert by_src["10.0.0.2"] == {("8", "2")}  # host 1: lossy (its ACKs), ECT(0)


def test_the_option_puts_hosts_in_the_lossy_class(capsys):
    from mcsim.cli import main

    # the option reaches the fabric: the multicast Allgather in the lossy class is byte-exact and takes another
    # time than paused by PFC (the API's figures, which the tests above explain)
    argv = ["allgather", "--topology", "fat-tree-k4", "--algorithm", "mcast", "--size", "256KiB", "--verify",
            "--flow-control", "pfc", "--wire-format", "rocev2", "--format", "json"]  # fmt: skip
    times = {}
    for lossy in ((), ("--lossy-hosts", "all")):
        assert main([*argv, *lossy]) == 0
        out = capsys.readouterr()
        assert "every byte of every output is right" in out.err
        times[lossy] = json.loads(out.out)["time_us"]
    api = {
        hosts: scenario_of(
            topology="fat-tree-k4", algorithm="mcast", bytes_per_rank=256 * 1024, wire_format="rocev2",
            fabric=FabricConfig(flow_control="pfc", lossy_hosts=hosts),
        ).run().finish_ps.max() / 1e6
        for hosts in ((), tuple(range(16)))
    }  # fmt: skip
    assert times[()] == pytest.approx(api[()]) and times[("--lossy-hosts", "all")] == pytest.approx(
        api[tuple(range(16))]
    )
    assert api[()] != api[tuple(range(16))]
    assert main(["allgather", "--topology", "fat-tree-k4", "--lossy-hosts", "0-3"]) == 2
    assert "--lossy-hosts='0-3' puts hosts in PFC's lossy class; give --flow-control pfc" in capsys.readouterr().err


def test_lossy_datagrams_beside_lossless_rc():
    # RdmaConfig(ud_lossy=True): the multicast's datagrams in the lossy class, its READ repair (RC) lossless. The
    # datagrams are dropped where they paused the fabric; no RC packet is ever lost (no retransmission, no
    # timeout), and the READs repair every gap
    lossy, paused = small_buffers("mcast", ud_lossy=True), small_buffers("mcast")
    assert lossy.verified and paused.verified
    assert lossy.fabric.drops_by_cause()["tail"] > 0 == paused.fabric.drops_by_cause()["tail"]
    assert int(lossy.nic["retransmits"].sum()) == 0 and int(lossy.nic["rc_timeouts"].sum()) == 0
    assert lossy.summary()["repair_reads"] > 0 == paused.summary()["repair_reads"]
    assert int(lossy.fabric.pfc["pause_tx"].sum()) < int(paused.fabric.pfc["pause_tx"].sum())
    # a ring sends no datagram: the setting changes nothing
    assert (small_buffers("ring", ud_lossy=True).finish_ps == small_buffers("ring").finish_ps).all()


def test_in_network_contributions_stay_lossless():
    # nothing repairs a lost contribution (the reduction would never end): with ud_lossy the in-network
    # Reduce-Scatter's contributions, and the sums made of them, stay lossless: the same run to the ps
    lossy = small_buffers("innet", ud_lossy=True, collective="reduce_scatter")
    lossless = small_buffers("innet", collective="reduce_scatter")
    assert lossy.verified and (lossy.finish_ps == lossless.finish_ps).all()
    assert lossy.fabric.drops_by_cause()["tail"] == 0


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"fabric": FabricConfig()}, r"ud_lossy=True puts datagrams in PFC's lossy class; .* \(not 'lossless'\)"),
        ({"fabric": FabricConfig(flow_control="lossy")}, r"\(not 'lossy'\)"),
    ],
)
def test_lossy_datagrams_without_pfc_are_one_line(kw, message):
    with pytest.raises(McsimError, match=message) as err:
        scenario_of(topology="fat-tree-k4", rdma=RdmaConfig(ud_lossy=True), **kw)
    assert "\n" not in str(err.value)
    with pytest.raises(McsimError, match=r"ud_lossy=1 must be True or False"):
        RdmaConfig(ud_lossy=1)


def test_the_option_puts_datagrams_in_the_lossy_class(capsys):
    from mcsim.cli import main

    argv = ["allgather", "--topology", "fat-tree-k4", "--algorithm", "mcast", "--size", "256KiB", "--flow-control",
            "pfc", "--wire-format", "rocev2", "--lossy-datagrams", "--format", "json"]  # fmt: skip
    assert main(argv) == 0
    time_us = json.loads(capsys.readouterr().out)["time_us"]
    api = scenario_of(
        topology="fat-tree-k4", algorithm="mcast", bytes_per_rank=256 * 1024, wire_format="rocev2",
        fabric=FabricConfig(flow_control="pfc"), rdma=RdmaConfig(ud_lossy=True),
    ).run()  # fmt: skip
    assert time_us == pytest.approx(api.finish_ps.max() / 1e6)


def test_a_lossy_hosts_in_network_reduction_keeps_its_contributions_lossless():
    # every host lossy at 1.6T: an in-network Reduce-Scatter on every other host beside an Alltoall on the rest.
    # The Alltoall's packets are dropped; the reduction's contributions (and so its sums) stay lossless, so it
    # ends (with lost contributions it never would: nothing repairs one)
    rs = Collective(label="RS", collective="reduce_scatter", algorithm="innet", bytes_per_rank=1 << 20)
    study = Job(name="study", hosts=tuple(range(0, 16, 2)), steps=(rs,))
    neighbour = background_job(
        "neighbour", tuple(range(1, 16, 2)), load=1.0, data_rate_bps=1600 * 10**9, bytes_per_peer=256 * 1024,
        duration_ps=300_000_000,
    )  # fmt: skip
    fab = FabricConfig(flow_control="pfc", lossy_hosts=tuple(range(16)))
    both = run_jobs([study, neighbour], topology="fat-tree-k4", rate="1.6Tbps", wire_format="rocev2", fabric=fab,
                    **DPA_RECEIVE)  # fmt: skip
    assert both.fabric.drops_by_cause()["tail"] > 0
    assert both.job("study").iteration_ps > 0
