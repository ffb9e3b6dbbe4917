# SPDX-License-Identifier: GPL-2.0-only
"""Packet traces (Scenario.run(pcap=...), --pcap): tshark reads every file with no malformed packet or expert
warning, and its InfiniBand fields give back what the model sent: a WRITE of 3 packets and its ACK; a NAK
after a dropped packet and the go-back-N resend; multicast chunks with their chunk ids; repair READ requests
and their responses, as many as the counters count; caps and bad input."""

import ipaddress
import shutil
import struct
import subprocess
import zlib

import pytest

from mcsim import topology
from mcsim.config.fabric import Faults
from mcsim.config.rdma import PcapConfig
from mcsim.errors import McsimError
from mcsim.runs.scenario import Scenario, scenario_of
from mcsim.runs.verify import pattern

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (Debian: apt-get install tshark)")
FIELDS = ("frame.number", "frame.time_epoch", "infiniband.lrh.slid", "infiniband.lrh.dlid", "ip.src", "ip.dst",
          "udp.dstport", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
          "infiniband.reth.dmalen", "infiniband.aeth.syndrome", "infiniband.immdt", "infiniband.deth.srcqp",
          "_ws.malformed", "_ws.expert.message")  # fmt: skip
OP = {"write_first": 6, "write_middle": 7, "write_last_imm": 9, "read_request": 12, "read_response_only": 16,
      "ack": 17, "ud_send_only_imm": 101}  # fmt: skip
MULTICAST_LID = 0xC000
GROUP = -1  # a frame's destination when it is a multicast group
WIRE_FORMATS = ("infiniband", "rocev2")
ROCEV2_PORT = 4791


def frames(path) -> list[dict[str, str]]:
    """tshark's fields of every frame; none may be malformed or carry an expert message. Each row also gets
    "src" and "dst": the hosts the frame's addresses name (LIDs or IPv4 addresses; dst GROUP for multicast)."""
    args = ["tshark", "-r", str(path), "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
    for f in FIELDS:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rows = [dict(zip(FIELDS, line.split("|"), strict=True)) for line in out.splitlines()]
    assert rows and all(not r["_ws.malformed"] and not r["_ws.expert.message"] for r in rows)
    for r in rows:
        if r["ip.src"]:  # RoCEv2: host h is 10.0.0.0 + h + 1, group g is 239.0.0.0 + g; UDP to port 4791
            assert int(r["udp.dstport"]) == ROCEV2_PORT
            src, dst = (int(ipaddress.IPv4Address(r[k])) for k in ("ip.src", "ip.dst"))
            r["src"] = str(src - 0x0A000001)
            r["dst"] = str(GROUP if dst >> 24 == 239 else dst - 0x0A000001)
        else:  # InfiniBand: host h is LID h + 1, group g is LID 0xC000 + g
            r["src"] = str(int(r["infiniband.lrh.slid"]) - 1)
            dlid = int(r["infiniband.lrh.dlid"])
            r["dst"] = str(GROUP if dlid >= MULTICAST_LID else dlid - 1)
    return rows


def star(hosts: int):
    g = topology.leaf_spine(1, 0, hosts, rate_bps=100 * 10**9, delay_ps=100_000)
    g.graph.update(name=f"star-{hosts}")
    return g


def sent_by(rows, host: int, to: int | None = None):
    return [r for r in rows if int(r["src"]) == host and (to is None or int(r["dst"]) == to)]


def opcode(row) -> int:
    return int(row["infiniband.bth.opcode"])


def allgather(hosts: int, n: int, wire_format: str, **kw):
    return scenario_of(topology=star(hosts), collective="allgather", bytes_per_rank=n, ranks=hosts,
                       wire_format=wire_format, **kw)  # fmt: skip


@pytest.mark.parametrize("wire_format", WIRE_FORMATS)
def test_a_write_of_three_packets_and_its_ack(tmp_path, wire_format):
    # two ranks: rank 0 WRITEs its 3 MTUs to rank 1 (first, middle, last with immediate) and is ACKed
    sc = allgather(2, 3 * 4096, wire_format, algorithm="ring")
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    ((path, written, skipped),) = r.pcap_files
    rows = frames(path)
    assert skipped == 0 and len(rows) == written == int(r.nic["tx_packets"][0] + r.nic["rx_packets"][0])
    out = [x for x in sent_by(rows, 0, 1) if opcode(x) != OP["ack"]]
    assert [opcode(x) for x in out] == [OP["write_first"], OP["write_middle"], OP["write_last_imm"]]
    assert [int(x["infiniband.bth.psn"]) for x in out] == [0, 1, 2]
    assert int(out[0]["infiniband.reth.dmalen"]) == 3 * 4096 and len({x["infiniband.bth.destqp"] for x in out}) == 1
    assert int(out[0]["infiniband.bth.destqp"], 16) >= 2  # never a management QP (QP0, QP1)
    acks = [x for x in sent_by(rows, 1, 0) if opcode(x) == OP["ack"]]
    assert [int(a["infiniband.bth.psn"]) for a in acks][-1] == 2 and int(acks[-1]["infiniband.aeth.syndrome"]) == 31


@pytest.mark.parametrize("wire_format", WIRE_FORMATS)
def test_a_nak_after_a_dropped_packet_and_the_go_back_n_resend(tmp_path, wire_format):
    # host 0's second packet (PSN 1) is lost on its link: host 1 NAKs PSN 1 (PSN sequence error), host 0
    # sends PSN 1 and 2 again
    sc = allgather(2, 3 * 4096, wire_format, algorithm="ring", faults=Faults(drops=[(0, 0, 1)]))
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    rows = frames(r.pcap_files[0][0])
    data = [x for x in sent_by(rows, 0, 1) if opcode(x) != OP["ack"]]
    assert [int(x["infiniband.bth.psn"]) for x in data] == [0, 1, 2, 1, 2]
    (nak,) = [
        x for x in sent_by(rows, 1, 0) if x["infiniband.aeth.syndrome"] and int(x["infiniband.aeth.syndrome"]) == 0x60
    ]
    assert int(nak["infiniband.bth.psn"]) == 1
    assert int(data[2]["frame.number"]) < int(nak["frame.number"]) < int(data[3]["frame.number"])
    assert r.complete


@pytest.mark.parametrize("wire_format", WIRE_FORMATS)
def test_multicast_chunks_carry_their_chunk_ids(tmp_path, wire_format):
    # rank 0 multicasts its 4 chunks (4 KiB each) to the group: UD SEND with immediate, the chunk's id
    r = allgather(4, 4 * 4096, wire_format, algorithm="mcast").run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    rows = frames(r.pcap_files[0][0])
    out = [x for x in sent_by(rows, 0) if int(x["dst"]) == GROUP]
    assert [opcode(x) for x in out] == [OP["ud_send_only_imm"]] * 4
    assert [int(x["infiniband.immdt"], 16) for x in out] == [0, 1, 2, 3]
    assert {int(x["infiniband.bth.destqp"], 16) for x in out} == {0xFFFFFF}  # a multicast QP
    assert len({x["infiniband.deth.srcqp"] for x in out}) == 1
    received = [x for x in rows if int(x["dst"]) == GROUP and int(x["src"]) != 0]
    assert len(received) == 3 * 4  # every other rank's chunks


@pytest.mark.parametrize("wire_format", WIRE_FORMATS)
def test_repair_reads_and_their_responses(tmp_path, wire_format):
    # rank 0's first chunk is lost on its link: every rank repairs it with a READ from its ring neighbour;
    # rank 3 reads it from rank 0, whose trace has the READ request in and the response out
    sc = allgather(4, 4 * 4096, wire_format, algorithm="mcast", faults=Faults(drops=[(0, 0, 0)]))
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,)))
    rows = frames(r.pcap_files[0][0])
    requests = [x for x in sent_by(rows, 3, 0) if opcode(x) == OP["read_request"]]
    responses = [x for x in sent_by(rows, 0, 3) if opcode(x) == OP["read_response_only"]]
    assert len(requests) == len(responses) == int(r.rank["repair_reads"][3]) >= 1
    assert [x["infiniband.bth.psn"] for x in requests] == [x["infiniband.bth.psn"] for x in responses]
    assert int(requests[0]["infiniband.reth.dmalen"]) == 4096 and r.complete


@pytest.mark.parametrize("wire_format", WIRE_FORMATS)
def test_a_switch_port_sees_its_link_both_ways(tmp_path, wire_format):
    # the switch's port 0 leads to host 0: its file holds host 0's frames, each direction in the same order,
    # a frame out of host 0 arriving at the port (at its last bit) after host 0 sent it
    sc = allgather(4, 4 * 4096, wire_format, algorithm="ring")
    r = sc.run(pcap=PcapConfig(folder=str(tmp_path), hosts=(0,), ports=((4, 0),)))
    (host_path, _, _), (port_path, _, _) = r.pcap_files
    assert port_path.endswith("node-4-port-0.pcap")
    at_host, at_port = frames(host_path), frames(port_path)

    def key(x):
        return (x["src"], x["dst"], opcode(x), x["infiniband.bth.psn"])

    for out_of_host in (True, False):
        h = [x for x in at_host if (int(x["src"]) == 0) == out_of_host]
        p = [x for x in at_port if (int(x["src"]) == 0) == out_of_host]
        assert [key(x) for x in h] == [key(x) for x in p] and h
        if out_of_host:
            assert all(float(b["frame.time_epoch"]) > float(a["frame.time_epoch"]) for a, b in zip(h, p, strict=True))


def pcap_records(path) -> list[bytes]:
    """The captured bytes of every record of a little-endian pcap file (after an ERF header for InfiniBand)."""
    data = open(path, "rb").read()
    linktype = struct.unpack_from("<I", data, 20)[0]
    out, at = [], 24
    while at < len(data):
        cap = struct.unpack_from("<I", data, at + 8)[0]
        out.append(data[at + 16 + (16 if linktype == 197 else 0) : at + 16 + cap])
        at += 16 + cap
    return out


def icrc(frame: bytes, wire_format: str) -> int:
    """The ICRC as IBA 7.8.1 and Annex A17.3.3 define it, computed here with zlib: CRC-32 over the frame from
    the LRH (RoCEv2: 8 bytes of ones, then the IP header) through the pad, its variant fields as ones."""
    b = bytearray(frame)
    if wire_format == "rocev2":
        b = bytearray(b"\xff" * 8) + b[14:]
        b[8 + 1] = b[8 + 8] = b[8 + 10] = b[8 + 11] = 0xFF  # IPv4 TOS, TTL, checksum
        b[8 + 20 + 6] = b[8 + 20 + 7] = 0xFF  # UDP checksum
        bth = 8 + 20 + 8
    else:
        b[0] |= 0xF0  # VL
        bth = 8
        if b[1] & 3 == 3:  # LNH: a GRH follows
            b[8] |= 0x0F
            b[9] = b[10] = b[11] = b[15] = 0xFF  # TClass, FlowLabel, HopLmt
            bth = 48
    b[bth + 4] = 0xFF  # the BTH's reserved byte
    return zlib.crc32(bytes(b))


def vcrc(frame: bytes) -> int:
    """The VCRC as IBA 7.8.2 reads: CRC-16 of polynomial 0x100B over the LRH through the ICRC, bits least
    significant first, seed all ones, the remainder inverted (computed here bit by bit, MSB-first on the
    reversed bytes)."""
    crc = 0xFFFF
    for byte in frame:
        crc ^= int(f"{byte:08b}"[::-1], 2) << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x100B if crc & 0x8000 else crc << 1) & 0xFFFF
    return int(f"{crc ^ 0xFFFF:016b}"[::-1], 2)


@pytest.mark.parametrize("wire_format", WIRE_FORMATS)
def test_verify_mode_frames_are_whole_with_their_payload_and_crcs(tmp_path, wire_format):
    # rank 0's 3 WRITE packets carry its shard's bytes (verify mode's pattern), then ICRC and VCRC or FCS
    n = 3 * 4096
    r = allgather(2, n, wire_format, algorithm="ring", verify=True).run(pcap=PcapConfig(folder=str(tmp_path)))
    path = r.pcap_files[0][0]
    rows, records = frames(path), pcap_records(path)
    assert r.verified and len(rows) == len(records)
    trailer = 8 if wire_format == "rocev2" else 6  # ICRC + FCS, ICRC + VCRC
    payload = b""
    for row, frame in zip(rows, records, strict=True):
        assert int.from_bytes(frame[-trailer : -trailer + 4], "little") == icrc(frame[:-trailer], wire_format)
        if wire_format == "infiniband":
            assert int.from_bytes(frame[-2:], "little") == vcrc(frame[:-2])
        if int(row["src"]) == 0 and opcode(row) != OP["ack"]:
            headers = {OP["write_first"]: 16, OP["write_last_imm"]: 4}.get(opcode(row), 0)
            start = (14 + 20 + 8 if wire_format == "rocev2" else 8) + 12 + headers
            payload += frame[start:-trailer]
    assert payload == pattern(0, n).tobytes()
    if wire_format == "rocev2":  # Wireshark checks the FCS and the IPv4 header checksum itself
        prefs = ["-o", "eth.fcs:TRUE", "-o", "eth.check_fcs:TRUE", "-o", "ip.check_checksum:TRUE"]
        args = ["tshark", "-r", path, *prefs, "-T", "fields", "-e", "eth.fcs.status", "-e", "ip.checksum.status"]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
        assert out == ["1"] * (2 * len(records))  # 1: good


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
        (lambda d: PcapConfig(folder=d, hosts=()), r"hosts=\(\), ports=\(\): give a tuple of hosts"),
        (lambda d: PcapConfig(folder=d, hosts=(1, 1)), r"hosts=\(1, 1\) names one twice"),
        (lambda d: PcapConfig(folder=d, ports=((4, 0), (4, 0))), r"ports=\(\(4, 0\), \(4, 0\)\) names one twice"),
        (lambda d: PcapConfig(folder=d, ports=((4,),)), r"each port is a \(node, port\) pair, not \(4,\)"),
        (lambda d: PcapConfig(folder=d, ports=((4, -1),)), r"ports=-1 must be >= 0"),
        (lambda d: PcapConfig(folder=d, ports=[(4, 0)]), r"give a tuple of hosts"),
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
            lambda d: Scenario(topology=star(2), ranks=2, bytes_per_rank=4).run(
                pcap=PcapConfig(folder=d, ports=((3, 0),))
            ),
            r"^pcap: port 3:0: node 3 is not a node of the topology \(0\.\.2\)$",
        ),
        (
            lambda d: Scenario(topology=star(2), ranks=2, bytes_per_rank=4).run(
                pcap=PcapConfig(folder=d, ports=((0, 1),))
            ),
            r"^pcap: port 0:1: node 0 has ports 0\.\.0$",
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
        "--pcap-ports",
        "edge0:0",
    ]
    assert main(argv) == 0
    err = capsys.readouterr().err
    for size in (8192, 16384):
        for host in (0, 5):
            path = tmp_path / f"{size}B" / f"host-{host}.pcap"
            rows = frames(path)
            assert f"mcsim: pcap: {path}: {len(rows)} frames" in err
            assert any(int(r["src"]) == host for r in rows)
        # edge0 is node 16 (hosts 0..15 first); its port 0 leads to host 0, so it sees host 0's frames
        at_port, at_host = frames(tmp_path / f"{size}B" / "node-16-port-0.pcap"), frames(path.with_name("host-0.pcap"))
        assert sorted((r["src"], r["infiniband.bth.psn"]) for r in at_port) == sorted(
            (r["src"], r["infiniband.bth.psn"]) for r in at_host
        )


def test_topo_show_lists_every_nodes_ports_where_they_lead(capsys):
    from mcsim.cli import main

    assert main(["topo", "show", "fat-tree-k4", "--ports"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = lines.index(next(x for x in lines if x.startswith("ports ")))
    listed = lines[first + 1 :]
    assert len(listed) == 16 + 20  # hosts, then 20 switches
    assert listed[0] == "  0 (h0): 0->16" and listed[16].startswith("  16 (edge0): 0->0, 1->1, ")
    assert all(len(x.split(": ", 1)[1].split(", ")) == 4 for x in listed[16:])  # k=4: 4 ports a switch
