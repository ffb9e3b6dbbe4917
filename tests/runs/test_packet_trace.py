# SPDX-License-Identifier: GPL-2.0-only
"""Packet traces (Scenario.run(pcap=...), --pcap): tshark reads every file with no malformed packet or expert
warning, and its InfiniBand fields give back what the model sent: a WRITE of 3 packets and its ACK; a NAK
after a dropped packet and the go-back-N resend; multicast chunks with their chunk ids; repair READ requests
and their responses, as many as the counters count; caps and bad input."""

import shutil
import subprocess

import pytest

from mcsim import topology
from mcsim.config.fabric import Faults
from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario
from mcsim.runs.scenario_keywords import scenario_of

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (Debian: apt-get install tshark)")
FIELDS = ("frame.number", "infiniband.lrh.slid", "infiniband.lrh.dlid", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.dmalen", "infiniband.aeth.syndrome",
          "infiniband.immdt", "infiniband.deth.srcqp", "_ws.malformed", "_ws.expert.message")  # fmt: skip
OP = {"write_first": 6, "write_middle": 7, "write_last_imm": 9, "read_request": 12, "read_response_only": 16,
      "ack": 17, "ud_send_only_imm": 101}  # fmt: skip
MULTICAST_LID = 0xC000


def frames(path) -> list[dict[str, str]]:
    """tshark's fields of every frame; none may be malformed or carry an expert message."""
    args = ["tshark", "-r", str(path), "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rows = [dict(zip(FIELDS, line.split("|"), strict=True)) for line in out.splitlines()]
    assert rows and all(not r["_ws.malformed"] and not r["_ws.expert.message"] for r in rows)
    return rows


def star(hosts: int):
    g = topology.leaf_spine(1, 0, hosts, rate_bps=100 * 10**9, delay_ps=100_000)
    g.graph.update(name=f"star-{hosts}")
    return g


def sent_by(rows, host: int, to: int | None = None):
    return [r for r in rows if int(r["infiniband.lrh.slid"]) == host + 1
            and (to is None or int(r["infiniband.lrh.dlid"]) == to + 1)]  # fmt: skip


def test_a_write_of_three_packets_and_its_ack(tmp_path):
    # two ranks: rank 0 WRITEs its 3 MTUs to rank 1 (first, middle, last with immediate) and is ACKed
    sc = Scenario(topology=star(2), collective="allgather", algorithm="ring", bytes_per_rank=3 * 4096, ranks=2)
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    ((path, written, skipped),) = r.pcap_files
    rows = frames(path)
    assert skipped == 0 and len(rows) == written == int(r.nic["tx_packets"][0] + r.nic["rx_packets"][0])
    out = [x for x in sent_by(rows, 0, 1) if int(x["infiniband.bth.opcode"]) != OP["ack"]]
    assert [int(x["infiniband.bth.opcode"]) for x in out] == [
        OP["write_first"],
        OP["write_middle"],
        OP["write_last_imm"],
    ]
    assert [int(x["infiniband.bth.psn"]) for x in out] == [0, 1, 2]
    assert int(out[0]["infiniband.reth.dmalen"]) == 3 * 4096 and len({x["infiniband.bth.destqp"] for x in out}) == 1
    acks = [x for x in sent_by(rows, 1, 0) if int(x["infiniband.bth.opcode"]) == OP["ack"]]
    assert [int(a["infiniband.bth.psn"]) for a in acks][-1] == 2 and int(acks[-1]["infiniband.aeth.syndrome"]) == 31


def test_a_nak_after_a_dropped_packet_and_the_go_back_n_resend(tmp_path):
    # host 0's second packet (PSN 1) is lost on its link: host 1 NAKs PSN 1 (PSN sequence error), host 0
    # sends PSN 1 and 2 again
    faults = Faults(drops=[(0, 0, 1)])
    sc = Scenario(
        topology=star(2), collective="allgather", algorithm="ring", bytes_per_rank=3 * 4096, ranks=2, faults=faults
    )
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    rows = frames(r.pcap_files[0][0])
    data = [x for x in sent_by(rows, 0, 1) if int(x["infiniband.bth.opcode"]) != OP["ack"]]
    assert [int(x["infiniband.bth.psn"]) for x in data] == [0, 1, 2, 1, 2]
    (nak,) = [
        x for x in sent_by(rows, 1, 0) if x["infiniband.aeth.syndrome"] and int(x["infiniband.aeth.syndrome"]) == 0x60
    ]
    assert int(nak["infiniband.bth.psn"]) == 1
    assert int(data[2]["frame.number"]) < int(nak["frame.number"]) < int(data[3]["frame.number"])
    assert r.complete


def test_multicast_chunks_carry_their_chunk_ids(tmp_path):
    # rank 0 multicasts its 4 chunks (4 KiB each) to the group: UD SEND with immediate, the chunk's id
    sc = Scenario(topology=star(4), collective="allgather", algorithm="mcast", bytes_per_rank=4 * 4096, ranks=4)
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    rows = frames(r.pcap_files[0][0])
    out = [x for x in sent_by(rows, 0) if int(x["infiniband.lrh.dlid"]) >= MULTICAST_LID]
    assert [int(x["infiniband.bth.opcode"]) for x in out] == [OP["ud_send_only_imm"]] * 4
    assert [int(x["infiniband.immdt"], 16) for x in out] == [0, 1, 2, 3]
    assert {int(x["infiniband.bth.destqp"], 16) for x in out} == {0xFFFFFF}  # a multicast QP
    assert len({x["infiniband.deth.srcqp"] for x in out}) == 1
    received = [
        x for x in rows if int(x["infiniband.lrh.dlid"]) >= MULTICAST_LID and int(x["infiniband.lrh.slid"]) != 1
    ]
    assert len(received) == 3 * 4  # every other rank's chunks


def test_repair_reads_and_their_responses(tmp_path):
    # rank 0's first chunk is lost on its link: every rank repairs it with a READ from its ring neighbour;
    # rank 3 reads it from rank 0, whose trace has the READ request in and the response out
    sc = Scenario(
        topology=star(4), collective="allgather", algorithm="mcast", bytes_per_rank=4 * 4096, ranks=4,
        faults=Faults(drops=[(0, 0, 0)]),
    )  # fmt: skip
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    rows = frames(r.pcap_files[0][0])
    requests = [x for x in sent_by(rows, 3, 0) if int(x["infiniband.bth.opcode"]) == OP["read_request"]]
    responses = [x for x in sent_by(rows, 0, 3) if int(x["infiniband.bth.opcode"]) == OP["read_response_only"]]
    assert len(requests) == len(responses) == int(r.rank["repair_reads"][3]) >= 1
    assert [x["infiniband.bth.psn"] for x in requests] == [x["infiniband.bth.psn"] for x in responses]
    assert int(requests[0]["infiniband.reth.dmalen"]) == 4096 and r.complete


def test_a_cap_keeps_the_first_frames_and_counts_the_rest(tmp_path):
    sc = Scenario(topology=star(2), collective="allgather", algorithm="ring", bytes_per_rank=3 * 4096, ranks=2)
    full = sc.run(pcap=PcapConfig(folder=str(tmp_path / "a"), hosts=(0,))).pcap_files[0]
    capped = sc.run(pcap=PcapConfig(folder=str(tmp_path / "b"), hosts=(0,), max_packets=3)).pcap_files[0]
    assert capped[1] == 3 and capped[1] + capped[2] == full[1]
    assert [x["infiniband.bth.psn"] for x in frames(capped[0])] == [x["infiniband.bth.psn"] for x in frames(full[0])][
        :3
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: PcapConfig(folder=d, hosts=()), r"hosts=\(\) must be a tuple of hosts"),
        (lambda d: PcapConfig(folder=d, hosts=(1, 1)), r"names a host twice"),
        (lambda d: PcapConfig(folder=d, max_packets=-1), r"max_packets=-1 must be >= 0"),
        (lambda d: PcapConfig(folder=""), r"folder='' must be a folder's path"),
        (
            lambda d: Scenario(topology=star(2), ranks=2, bytes_per_rank=4).run(pcap=PcapConfig(folder=d, hosts=(5,))),
            r"^pcap: host 5 is not a host of the topology \(0\.\.1\)$",
        ),
        (
            lambda d: Scenario(topology=star(2), ranks=2, bytes_per_rank=4).run(
                pcap=PcapConfig(folder="/proc/mcsim-pcap")
            ),
            r"^pcap: folder '/proc/mcsim-pcap' cannot be made",
        ),
        (
            lambda d: scenario_of(topology=star(2), ranks=2, bytes_per_rank=4, wire_format="rocev2").run(
                pcap=PcapConfig(folder=d)
            ),
            r"PcapWriter: traces native InfiniBand frames \(the NIC's WireFormat is RoCEv2\)",
        ),
    ],
)
def test_bad_traces_are_one_line(tmp_path, make, message):
    with pytest.raises(McsimError, match=message) as err:
        make(str(tmp_path))
    assert "\n" not in str(err.value)


def test_the_command_traces_each_size_in_a_folder_of_its_own(tmp_path, capsys):
    from mcsim.cli import main

    argv = [
        "allgather",
        "--topology",
        "fat-tree-k4",
        "--size",
        "8KiB,16KiB",
        "--pcap",
        str(tmp_path),
        "--pcap-hosts",
        "0,5",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    for size in (8192, 16384):
        for host in (0, 5):
            path = tmp_path / f"{size}B" / f"host-{host}.pcap"
            rows = frames(path)
            assert f"mcsim: pcap: {path}: {len(rows)} frames" in err
            assert any(int(r["infiniband.lrh.slid"]) == host + 1 for r in rows)
