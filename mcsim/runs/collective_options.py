# SPDX-License-Identifier: GPL-2.0-only
"""The options of the collective subcommands of ``mcsim`` (allgather, broadcast, reduce-scatter, allreduce,
alltoall, reduce), named as the Scenario fields, and the tables of which subcommand and algorithm reads
which option. :mod:`mcsim.runs.commands` adds the subcommands, checks the options and runs them."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from typing import Any

from mcsim.config.collectives import (
    EVERY_ALGORITHM,
    INNET_ALGORITHMS,
    MCAST_ALGORITHMS,
    NVLS_HIERARCHICAL,
    RC_PIPELINES,
)
from mcsim.config.congestion import DCQCN_PRESETS, KINDS, kind_of
from mcsim.config.dpa import RECEIVE_PATHS, DpaConfig
from mcsim.config.fabric import FLOW_CONTROLS, FORWARDINGS, FabricConfig
from mcsim.config.protocols import PROTOCOLS
from mcsim.config.queue_trace import DEFAULT_QUEUE_INTERVAL_PS
from mcsim.config.rdma import WIRE_FORMATS, RdmaConfig
from mcsim.runs.scenario import Scenario
from mcsim.units import format_size, format_time
from mcsim.util.options import Given, GivenFlag

SCENARIO_DEFAULTS = {name: p.default for name, p in inspect.signature(Scenario).parameters.items()}
RDMA_DEFAULTS = RdmaConfig()
RC_DEFAULTS = RDMA_DEFAULTS.rc
RETRY_FOREVER = "forever"

# options that only the multicast protocol reads: refused with another algorithm, where they would do nothing
MCAST_ONLY = ("roots", "timeout_scale", "artifact_protocol", "endpoints")
# their datagrams land in staging buffers or in place (--receive-path)
UD_ALGORITHMS = tuple(dict.fromkeys((*MCAST_ALGORITHMS, *INNET_ALGORITHMS)))
MCAST_HELP = ", ".join(MCAST_ALGORITHMS)  # the algorithms the multicast protocol's options are for
ROOTS_COMMANDS = ("allgather", "allreduce")  # --roots: the multicast Allgather's, alone or a second phase
# the algorithms --roots is for: NVLS's multicast has every GPU of a node a root (NVLS_HIERARCHICAL)
ROOTS_ALGORITHMS = tuple(a for a in MCAST_ALGORITHMS if a not in NVLS_HIERARCHICAL)
# --processor: a host CPU thread (HostCpuConfig), the DPA (DpaConfig) or a GPU's own receive (GPU_RECEIVE: zero copy,
# no cost per completion; what NVLS inside a node needs)
PROCESSORS = ("host", "dpa", "gpu")
# subcommand -> (the Scenario's collective, its default algorithm)
COLLECTIVE_COMMANDS = {
    "allgather": ("allgather", "mcast"),
    "broadcast": ("broadcast", "mcast"),
    "reduce-scatter": ("reduce_scatter", "ring"),
    "allreduce": ("allreduce", "ring"),
    "alltoall": ("alltoall", "pairwise"),
    "reduce": ("reduce", "binomial"),
}
ROOTED_COMMANDS = ("broadcast", "reduce")  # --root
REDUCING_COMMANDS = ("reduce-scatter", "allreduce", "reduce")  # --reduce-ps-per-byte, where the hosts sum


def collective_options(p: argparse.ArgumentParser, name: str) -> None:
    """The options of ``mcsim allgather`` and ``mcsim broadcast``, named as the Scenario fields.
    Each is a :class:`Given` (a field given twice is refused); an option that some combination
    does not read defaults to None (not given), its help naming the Scenario's default."""

    def add(*names: str, flag: bool = False, **kwargs: Any) -> None:
        p.add_argument(*names, action=GivenFlag if flag else Given, **kwargs)

    _workload_options(add, name)
    _fabric_options(add)
    _receive_options(add, name)
    _protocol_options(add)
    _output_options(add)


Add = Callable[..., None]  # adds one option to a parser


def _workload_options(add: Add, name: str) -> None:
    """What runs: the topology, the algorithm, the sizes, the ranks and roots."""
    d = SCENARIO_DEFAULTS
    add("--topology", default=d["topology"], help="a name from topologies/ or a file")
    collective, default = COLLECTIVE_COMMANDS[name]
    algorithms = " or ".join(sorted(a for c, a in EVERY_ALGORITHM if c == collective))
    add("--algorithm", "--algo", default=default, help=f"{algorithms} (--algo: the same)")
    add(
        "--bytes-per-rank",
        "--size",
        default=d["bytes_per_rank"],
        metavar="SIZE",
        help="bytes per rank; several: 4KiB,64KiB,1MiB (--size: the same)",
    )
    add("--rate", default=None, help="every link at this rate (56Gbps = FDR); default: the file's")
    add(
        "--ring-chunk",
        default=None,
        metavar="SIZE",
        help=f"{', '.join(RC_PIPELINES)}: bytes per RDMA WRITE, the pipelining unit (default: {d['ring_chunk']})",
    )
    add("--ranks", type=int, default=None, help="ranks on hosts 0..ranks-1; default: every host")
    hidden = argparse.SUPPRESS  # an option of another subcommand: refused with a hint
    roots = f"{', '.join(ROOTS_ALGORITHMS)}: roots multicasting at once (default: {d['roots']})"
    add("--roots", type=int, default=None, metavar="K", help=roots if name in ROOTS_COMMANDS else hidden)
    root = f"the root rank (default: {d['root']})"
    add("--root", type=int, default=None, metavar="R", help=root if name in ROOTED_COMMANDS else hidden)
    reduce = f"time the host takes to add one received byte (default: {d['reduce_ps_per_byte']}; 0: free)"
    reduces = name in REDUCING_COMMANDS
    add("--reduce-ps-per-byte", type=int, default=None, metavar="PS", help=reduce if reduces else hidden)
    add(
        "--nccl-protocol",
        choices=tuple(PROTOCOLS),
        default=None,
        help=f"ring, hier_ring, tree, double_tree, hier_tree: NCCL's protocol, its lines on the wire and its latencies "
        f"(default: "
        f"{d['nccl_protocol']}, mcsim's own; see The collectives)",
    )


def _fabric_options(add: Add) -> None:
    """The packets and the fabric: MTU, loss, faults, forwarding."""
    add(
        "--mtu",
        default=format_size(RDMA_DEFAULTS.mtu_b),
        metavar="SIZE",
        help="payload bytes per packet (an InfiniBand MTU: 256B..4KiB)",
    )
    add(
        "--loss",
        type=float,
        default=FabricConfig().loss,
        metavar="P",
        help="probability that a packet is lost, on every link",
    )
    add("--faults", default=None, metavar="FILE.toml", help="per-link loss, chosen drops, links down")
    add(
        "--forwarding",
        choices=tuple(FORWARDINGS),
        default=FabricConfig().forwarding,
        help="switches send a packet on once its routing header (cut_through) or all of it is in",
    )
    add(
        "--flow-control",
        choices=tuple(FLOW_CONTROLS),
        default=FabricConfig().flow_control,
        help="lossless: InfiniBand credits; lossy: tail drop; pfc: Priority Flow Control (each ingress queue "
        "pauses its upstream port; see The fabric model)",
    )
    add(
        "--lossy-hosts",
        default=None,
        metavar="HOSTS",
        help="pfc: these hosts (0,3,5, 0-15 or all) send in PFC's lossy class: never paused, tail-dropped "
        "(FabricConfig.lossy_hosts; see The fabric model)",
    )
    add(
        "--lossy-datagrams",
        flag=True,
        help="pfc: the multicast's datagrams go in PFC's lossy class, its RC repair and the in-network "
        "contributions stay lossless (RdmaConfig.ud_lossy; see The fabric model)",
    )
    add(
        "--ecn",
        flag=True,
        help="ECN: the hosts send ECN-capable packets and every switch port marks CE with RED on its output "
        "queue (FabricConfig.ecn; see The fabric model)",
    )
    add(
        "--congestion-control",
        choices=tuple(KINDS),
        default=kind_of(RDMA_DEFAULTS.congestion),
        help="the NICs' congestion control: none, dcqcn (CNPs for the switches' ECN marks, a rate per RC QP; "
        "it turns --ecn on) or hpcc (a window and rate per RC QP from the switches' INT records)",
    )
    add(
        "--dcqcn-preset",
        choices=tuple(DCQCN_PRESETS),
        default=None,
        help="dcqcn: its parameters as the DCQCN paper sets them (RdmaConfig's defaults) or as NVIDIA's ConnectX "
        "firmware does (mcsim.config.congestion)",
    )
    add(
        "--wire-format",
        choices=tuple(WIRE_FORMATS),
        default=RDMA_DEFAULTS.wire_format,
        help="packets' headers and framing on the wire: native InfiniBand, or RoCEv2 (Ethernet, IPv4, UDP)",
    )


def _receive_options(add: Add, name: str) -> None:
    """Who processes the receive completions and where datagrams land; the overlapped Reduce-Scatter."""
    add(
        "--processor",
        choices=PROCESSORS,
        default="host",
        help="receive completions on a host CPU thread, the DPA, or a GPU's own receive (zero copy, in place: "
        "NVLS on nodes of GPUs)",
    )
    add("--threads", type=int, default=None, metavar="N", help=f"dpa: threads in use (default: {DpaConfig().threads})")
    add(
        "--receive-path",
        choices=tuple(RECEIVE_PATHS),
        default=None,
        help=f"{', '.join(UD_ALGORITHMS)}: datagrams land in staging buffers and are copied, or in place "
        "(default: staging)",
    )
    add(
        "--endpoints",
        type=int,
        default=None,
        metavar="E",
        help=f"{MCAST_HELP}: UD QPs per rank, a DPA thread each (default: 1)",
    )
    hidden = argparse.SUPPRESS
    add(
        "--overlap",
        choices=("reduce_scatter",),
        default=None,
        help="a Reduce-Scatter on the same ranks at the same time (FSDP)" if name == "allgather" else hidden,
    )
    add(
        "--overlap-algorithm",
        choices=("ring", "innet"),
        default=None,
        help="the overlapped Reduce-Scatter's algorithm (default: ring)" if name == "allgather" else hidden,
    )


def _protocol_options(add: Add) -> None:
    """The protocols' timeouts and retries, and the artifact's preset."""
    d = SCENARIO_DEFAULTS
    add(
        "--timeout-scale",
        type=float,
        default=None,
        metavar="X",
        help=f"{MCAST_HELP}: data phase timeout, x receive bound (default: {d['timeout_scale']:g})",
    )
    add(
        "--retry-cnt",
        default=str(RC_DEFAULTS.retry_cnt),
        metavar="N",
        help=f"RC retries (timeouts, NAKs) before a QP fails: 0..7, or {RETRY_FOREVER}",
    )
    add(
        "--ack-timeout-exp",
        type=int,
        default=RC_DEFAULTS.ack_timeout_exp,
        metavar="N",
        help="RC local ACK timeout 4.096us x 2^N (14: 67.1ms); 0: none",
    )
    add(
        "--artifact-protocol",
        flag=True,
        help=f"{MCAST_HELP}: the SC'24 artifact's protocol options (2 barriers, stop-and-wait batches of 128, one "
        "repair READ, FIN wait, multicast loopback, a TX thread)",
    )


def _output_options(add: Add) -> None:
    """The seed, verify mode and what is written where."""
    add("--seed", type=int, default=FabricConfig().seed, help="random seed (ECMP hash, loss)")
    add("--verify", flag=True, help="carry real bytes and check every output byte")
    add("--format", choices=("table", "csv", "json"), default="table", help="stdout format (json: one object a line)")
    add(
        "--out",
        default=None,
        metavar="FILE",
        help="also write the result rows to FILE: .csv, .json (an array) or .jsonl (one object a line)",
    )
    add(
        "--pcap",
        default=None,
        metavar="DIR",
        help="write the frames that --pcap-hosts send and receive to DIR/host-<h>.pcap (with several sizes, "
        "DIR/<size>B/host-<h>.pcap): native InfiniBand in ERF records or RoCEv2 in Ethernet frames, as tshark "
        "and Wireshark read them; truncated after the headers, whole with --verify",
    )
    add(
        "--pcap-hosts",
        default=None,
        metavar="HOSTS",
        help="hosts to trace: 0,3,5, ranges 0-15 or all (default 0, none if only --pcap-ports is given)",
    )
    add(
        "--pcap-ports",
        default=None,
        metavar="PORTS",
        help="switch (or host) ports to trace, as NODE:PORT,...: a node's number or name, its port's number "
        "(`mcsim topo show` lists them); each to DIR/node-<n>-port-<p>.pcap, the frames it sends and receives",
    )
    add(
        "--queue-trace",
        default=None,
        metavar="FILE",
        help="sample the output queues of --queue-ports every --queue-interval and write the samples to FILE "
        "(.csv, .json or .jsonl): bytes_per_rank_B, node, port, time_ps, queue_b (wire bytes queued and waiting, "
        "as ECN marking reads them); sampling changes no result",
    )
    add(
        "--queue-ports",
        default=None,
        metavar="PORTS",
        help="ports whose output queues --queue-trace samples, as NODE:PORT,... (as --pcap-ports)",
    )
    add(
        "--queue-interval",
        default=None,
        metavar="TIME",
        help=f"time between two samples of --queue-trace (default: {format_time(DEFAULT_QUEUE_INTERVAL_PS)})",
    )
    add(
        "--events",
        default=None,
        metavar="FILE",
        help="record every rank's protocol events (tokens, FINs, NEED_FETCH/FETCH_OK, repair READs, finish) and "
        "write them to FILE: .csv, .json or .jsonl, one row per event",
    )
