# SPDX-License-Identifier: GPL-2.0-only
"""Chakra execution traces (MLCommons Chakra, the input of ASTRA-sim: one ``.et`` file per rank) as a job.

mcsim reads them with the ``protobuf`` package (``pip install 'mcsim[chakra]'``) from a schema it declares
here, with the field numbers of the public schema (mlcommons/chakra, schema/protobuf/et_def.proto): a
file is a GlobalMetadata message, then Node messages, each after its length as a varint (protobuf's
delimited stream; a gzip file is read through gzip). Fields mcsim does not use are skipped.

A trace becomes one job: every rank running the same graph when rank r's trace has rank 0's nodes,
types, dependencies and collectives (compute may last differently per rank); else a graph per rank, the
collectives matched in order (see _per_rank). COMP_NODE is compute of
its ``duration_micros``; METADATA, MEM_LOAD and MEM_STORE nodes, and CPU operators (attribute
``is_cpu_op`` true: the records of the host's launches, the GPU kernels after them carry the time), are
compute of 0 (they keep their place in the graph); COMM_COLL_NODE is a collective (attribute
``comm_type``, ``comm_size`` the bytes each rank puts in: an Allgather's shard, a Reduce-Scatter's or an
Alltoall's whole input, P blocks, an Allreduce's, Broadcast's or Reduce's buffer). COMM_SEND and
COMM_RECV nodes are point-to-point messages (attributes ``comm_dst`` or ``comm_src``, ``comm_size``,
``comm_tag``): a send on rank a to b is matched with a receive on b from a with the same tag, in the
order they appear in the traces (as MPI does not overtake); a node's position may hold sends on some
ranks and receives on others, and becomes a transfer step. A node's
``data_deps`` are its dependencies, as in Chakra's reference feeder (src/feeder/et_feeder.cpp): its
``ctrl_deps`` name its parent (the CPU operator that launched a kernel, which may itself point back at
the kernel) and order nothing. A dependency on a node the trace does not hold is dropped, as if that
node had ended before the trace began, and counted.
GATHER, SCATTER, REDUCE_SCATTER_BLOCK and BARRIER, and a send or a receive with no partner, are
refused, one line naming the node.
"""

from __future__ import annotations

import dataclasses
import gzip
import math
import zlib
from array import array
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from mcsim.errors import McsimError
from mcsim.units import CLOCK_LIMIT, MAX_SIMULATED_PS, MAX_SIZE_B
from mcsim.util import toml_text
from mcsim.workloads.job import (
    MAX_JOB_STEPS,
    Collective,
    Compute,
    Job,
    Message,
    Step,
    Transfer,
    job_of_graph,
    shown,
)

PS_PER_US = 1_000_000
MAX_DURATION_US = MAX_SIMULATED_PS // PS_PER_US  # a COMP node's duration_micros: within the simulated clock
# What one trace file may hold decompressed (read as a stream, CHUNK_B at a time, never whole): 256 MiB, ~330,000
# nodes of the real PyTorch trace in tests/workloads/data (813 B a node), more than MAX_TRACE_NODES; a gzip bomb
# stops there (or at the nodes' limit first: 64 MB of zeros in 65 KB are 64 million empty messages).
MAX_TRACE_BYTES = 256 << 20
TRACE_BYTES_LIMIT = f"a trace file holds at most {MAX_TRACE_BYTES} B (256 MiB) (mcsim.workloads.chakra.MAX_TRACE_BYTES)"
# The nodes a job's trace files hold together (every rank's trace is read): a node read costs ~1 KB and ~30 us
# here (the real PyTorch trace's, ~50 dependencies each; measured reading it 50 times), so ~0.5 GB and ~15 s at
# most; twice a job's steps: 5 ranks of a big 100,000-node trace, 136 ranks of the real 3,664-node one.
MAX_TRACE_NODES = 2 * MAX_JOB_STEPS
TRACE_NODES_LIMIT = (
    f"a job's traces hold at most {MAX_TRACE_NODES} nodes together (mcsim.workloads.chakra.MAX_TRACE_NODES)"
)
# The dependencies a job's traces hold together: 50 a node at MAX_TRACE_NODES (the real PyTorch trace's
# average), 8 B each as read (200 MB), so that a compressible file of 1-byte dependencies cannot grow past that.
MAX_TRACE_DEPS = 50 * MAX_TRACE_NODES
TRACE_DEPS_LIMIT = (
    f"a job's traces hold at most {MAX_TRACE_DEPS} dependencies together (mcsim.workloads.chakra.MAX_TRACE_DEPS)"
)
# One node's message: 16 MiB, 10,000x the real trace's largest nodes (~1.5 KB, 270 dependencies); protobuf
# holds its packed dependencies at 8 B each as it parses it (128 MB at most for 1-byte ones).
MAX_NODE_BYTES = 16 << 20
NODE_BYTES_LIMIT = f"a trace's node holds at most {MAX_NODE_BYTES} B (16 MiB) (mcsim.workloads.chakra.MAX_NODE_BYTES)"
CHUNK_B = 1 << 20  # a trace file is read 1 MiB at a time
GZIP_MAGIC = b"\x1f\x8b"
INT64 = (-(2**63), 2**63 - 1, " (int64)")
# the attributes mcsim reads as numbers -> (lowest, highest, why): each checked before any arithmetic
ATTR_LIMITS = {
    "comm_size": (0, MAX_SIZE_B, " (2^62 B, mcsim's largest size)"),
    "comm_type": INT64,
    "comm_src": INT64,
    "comm_dst": INT64,
    "comm_tag": INT64,
    "is_cpu_op": INT64,
}
# node types (et_def.proto NodeType)
NODE_TYPES = {
    0: "INVALID_NODE",
    1: "METADATA_NODE",
    2: "MEM_LOAD_NODE",
    3: "MEM_STORE_NODE",
    4: "COMP_NODE",
    5: "COMM_SEND_NODE",
    6: "COMM_RECV_NODE",
    7: "COMM_COLL_NODE",
}
ZERO_TIME_NODES = (1, 2, 3)  # compute of 0: they keep their place in the graph
COMP_NODE, COMM_COLL_NODE = 4, 7
COMM_SEND_NODE, COMM_RECV_NODE = 5, 6  # point-to-point: one transfer step per position
# CollectiveCommType -> (mcsim collective, comm_size per rank is P blocks of bytes_per_rank); the others refused
COMM_TYPES = {
    0: ("allreduce", False),
    1: ("reduce", False),
    2: ("allgather", False),
    5: ("broadcast", False),
    6: ("alltoall", True),
    7: ("reduce_scatter", True),
}
COMM_TYPE_NAMES = {3: "GATHER", 4: "SCATTER", 8: "REDUCE_SCATTER_BLOCK", 9: "BARRIER"}
# the schema versions this reader knows (GlobalMetadata.version, or its "schema" attribute's chakra part):
# the proto3 schema of 0.0.4 (October 2023), unchanged since through the 1.x versions; 0.0.1-0.0.3 differ
READABLE = ("0.0.4", "1.")
# a collective's algorithm when the workload names none (the CLI's defaults)
DEFAULT_ALGORITHMS = {
    "allreduce": "ring",
    "reduce": "binomial",
    "allgather": "mcast",
    "broadcast": "mcast",
    "alltoall": "pairwise",
    "reduce_scatter": "ring",
}


@cache
def message_classes() -> tuple[Any, Any]:
    """(GlobalMetadata, Node) message classes, built from mcsim's declaration of the public schema."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ModuleNotFoundError:
        raise McsimError("reading Chakra traces needs protobuf: pip install 'mcsim[chakra]'") from None
    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="mcsim_chakra.proto", package="mcsim_chakra", syntax="proto3")

    def message(name: str, fields: Sequence[tuple[str, int, int, int, str]], oneof: str = "") -> None:
        m = proto.message_type.add(name=name)
        if oneof:
            m.oneof_decl.add(name=oneof)
        for field_name, number, kind, label, type_name in fields:
            fd = m.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                fd.type_name = f".mcsim_chakra.{type_name}"
            if oneof and number >= 3:
                fd.oneof_index = 0

    one, many = f.LABEL_OPTIONAL, f.LABEL_REPEATED
    scalars = [
        ("double_val", 3, f.TYPE_DOUBLE), ("float_val", 5, f.TYPE_FLOAT), ("int32_val", 7, f.TYPE_INT32),
        ("int64_val", 9, f.TYPE_INT64), ("uint32_val", 11, f.TYPE_UINT32), ("uint64_val", 13, f.TYPE_UINT64),
        ("sint32_val", 15, f.TYPE_SINT32), ("sint64_val", 17, f.TYPE_SINT64), ("fixed32_val", 19, f.TYPE_FIXED32),
        ("fixed64_val", 21, f.TYPE_FIXED64), ("sfixed32_val", 23, f.TYPE_SFIXED32),
        ("sfixed64_val", 25, f.TYPE_SFIXED64), ("bool_val", 27, f.TYPE_BOOL), ("string_val", 29, f.TYPE_STRING),
        ("bytes_val", 31, f.TYPE_BYTES),
    ]  # fmt: skip
    message(
        "AttributeProto",
        [("name", 1, f.TYPE_STRING, one, ""), ("doc_string", 2, f.TYPE_STRING, one, "")]
        + [(n, k, t, one, "") for n, k, t in scalars],
        oneof="value",
    )
    message(
        "GlobalMetadata",
        [("version", 1, f.TYPE_STRING, one, ""), ("attr", 2, f.TYPE_MESSAGE, many, "AttributeProto")],
    )
    message(
        "Node",
        [
            ("id", 1, f.TYPE_UINT64, one, ""), ("name", 2, f.TYPE_STRING, one, ""), ("type", 3, f.TYPE_INT32, one, ""),
            ("ctrl_deps", 4, f.TYPE_UINT64, many, ""), ("data_deps", 5, f.TYPE_UINT64, many, ""),
            ("start_time_micros", 6, f.TYPE_UINT64, one, ""), ("duration_micros", 7, f.TYPE_UINT64, one, ""),
            ("attr", 10, f.TYPE_MESSAGE, many, "AttributeProto"),
        ],
    )  # fmt: skip
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    get = message_factory.GetMessageClass
    return get(pool.FindMessageTypeByName("mcsim_chakra.GlobalMetadata")), get(
        pool.FindMessageTypeByName("mcsim_chakra.Node")
    )


def _varint(data: bytes | bytearray, at: int, where: str) -> tuple[int, int] | None:
    """The varint at ``at`` and the offset after it; None if ``data`` ends inside it."""
    value = shift = 0
    while True:
        if at >= len(data):
            return None
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise McsimError(f"{where}: not a Chakra trace (a length is longer than 64 bits at byte {at})")


def _chunks(path: str | Path, where: str) -> Iterator[bytes]:
    """The file's bytes (through gzip when it starts with gzip's magic), CHUNK_B at a time, at most
    MAX_TRACE_BYTES in all; one line for a file that cannot be read, a broken gzip stream or a file past the
    limit."""
    total = 0
    try:
        with open(path, "rb") as raw:
            f: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if raw.read(2) == GZIP_MAGIC else raw  # type: ignore[assignment]
            raw.seek(0)
            while chunk := f.read(CHUNK_B):
                total += len(chunk)
                if total > MAX_TRACE_BYTES:
                    raise McsimError(f"{where}: holds more than {MAX_TRACE_BYTES} B decompressed; {TRACE_BYTES_LIMIT}")
                yield chunk
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise McsimError(f"{where}: not a Chakra trace (a broken gzip stream: {exc})") from None
    except OSError as exc:
        raise toml_text.unreadable(where, exc) from None


def messages(path: str | Path, where: str) -> Iterator[bytes]:
    """The delimited stream's messages (each after its length as a varint), read as they arrive."""
    buf = bytearray()
    for chunk in _chunks(path, where):
        buf += chunk
        at = 0
        while (head := _varint(buf, at, where)) is not None and head[1] + head[0] <= len(buf):
            size, start = head
            yield bytes(buf[start : start + size])
            at = start + size
        if head is not None and head[0] > MAX_NODE_BYTES:
            raise McsimError(f"{where}: a message of {head[0]} B; {NODE_BYTES_LIMIT}")
        del buf[:at]
    if buf:
        head = _varint(buf, 0, where)
        if head is None:
            raise McsimError(f"{where}: not a Chakra trace (a length runs past the end of the file)")
        raise McsimError(f"{where}: not a Chakra trace (a message of {head[0]} B runs past the end of the file)")


@dataclass(frozen=True, slots=True)
class Trace:
    """One rank's trace: its schema version and its nodes."""

    version: str
    nodes: tuple[Node, ...]


def version_of(metadata: Any) -> str:
    """The trace's schema version: GlobalMetadata.version, or its "schema" attribute (e.g.
    "1.0.2-chakra.0.0.4": the part after "chakra.")."""
    if metadata.version:
        return str(metadata.version)
    for a in metadata.attr:
        if a.name == "schema" and a.WhichOneof("value") == "string_val":
            return str(a.string_val).rpartition("chakra.")[2]
    return ""


def read_trace(path: str | Path, max_nodes: int = MAX_TRACE_NODES, max_deps: int = MAX_TRACE_DEPS) -> Trace:
    """One rank's trace from its file (at most ``max_nodes`` nodes and ``max_deps`` dependencies: what is left of
    its job's MAX_TRACE_NODES and MAX_TRACE_DEPS); McsimError (one line naming the file) for a file that is not
    one, a schema version this reader does not know, a number out of its range, or a file past the limits."""
    from google.protobuf.message import DecodeError

    where = str(path)
    metadata_cls, node_cls = message_classes()
    stream = messages(path, where)
    first = next(stream, None)
    if first is None:
        raise McsimError(f"{where}: not a Chakra trace (empty)")
    nodes: list[Node] = []
    deps = 0
    try:
        metadata = metadata_cls.FromString(first)
        for raw in stream:
            if len(nodes) == max_nodes:
                before = "" if max_nodes == MAX_TRACE_NODES else " (with its job's traces before it)"
                raise McsimError(f"{where}: holds more than {max_nodes} nodes{before}; {TRACE_NODES_LIMIT}")
            nodes.append(_checked(node_cls.FromString(raw), where))
            deps += len(nodes[-1].data_deps)
            if deps > max_deps:
                before = "" if max_deps == MAX_TRACE_DEPS else " (with its job's traces before it)"
                raise McsimError(f"{where}: holds more than {max_deps} dependencies{before}; {TRACE_DEPS_LIMIT}")
    except DecodeError as exc:
        raise McsimError(f"{where}: not a Chakra trace ({exc})") from None
    version = version_of(metadata)
    if version and not (version == READABLE[0] or version.startswith(READABLE[1])):
        raise McsimError(
            f"{where}: Chakra schema version {version!r}, which this reader cannot read (it reads 0.0.4 and 1.x)"
        )
    return Trace(version, tuple(nodes))


@dataclass(frozen=True, slots=True)
class Node:
    """A trace node as mcsim reads it: the fields it uses and its numeric attributes (ATTR_LIMITS), checked;
    a fraction of the protobuf message's memory (~4 KB each as parsed)."""

    id: int
    name: str
    type: int
    data_deps: array[int]  # uint64: 8 B a dependency (a PyTorch trace's node has ~50)
    duration_micros: int
    attrs: dict[str, int]


def _checked(node: Any, where: str) -> Node:
    """The Node of a parsed message, its numbers in range: its duration within the simulated clock, its
    attributes' numbers whole, finite and within their ranges (a NaN or 1e300 size is one line, not a
    traceback or an overflow)."""
    what = f"{where}: node {node.id} ({_shown(node.name)})"
    if node.duration_micros > MAX_DURATION_US:
        raise McsimError(f"{what}: duration_micros={node.duration_micros} must be 0..{MAX_DURATION_US} ({CLOCK_LIMIT})")
    attrs: dict[str, int] = {}
    seen = set()
    for a in node.attr:
        if a.name in ATTR_LIMITS and a.name not in seen:  # the first of a name counts
            seen.add(a.name)
            kind = a.WhichOneof("value")
            value = getattr(a, kind) if kind else None
            if not isinstance(value, int | float):
                continue  # a string or bytes: no number (as if it were not given)
            lo, hi, why = ATTR_LIMITS[a.name]
            if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
                raise McsimError(f"{what}: {a.name}={value!r} must be a whole number {lo}..{hi}{why}")
            if not lo <= value <= hi:
                raise McsimError(f"{what}: {a.name}={value!r} must be {lo}..{hi}{why}")
            attrs[a.name] = int(value)
    return Node(
        int(node.id), str(node.name), int(node.type), array("Q", node.data_deps), int(node.duration_micros), attrs
    )


def _shown(name: str) -> str:
    """A node's name as a message shows it (mcsim.workloads.job.shown: cut), or "unnamed"."""
    return shown(name) if name else "unnamed"


def _attr(node: Node, name: str) -> int | None:
    return node.attrs.get(name)


def _shape(node: Node) -> tuple[Any, ...]:
    """What must be the same on every rank: id, type (a send or a receive: point-to-point), dependencies,
    collective and size (a point-to-point node's are its own)."""
    if node.type in (COMM_SEND_NODE, COMM_RECV_NODE):
        return node.id, "p2p", tuple(node.data_deps)
    return node.id, node.type, tuple(node.data_deps), _attr(node, "comm_type"), _attr(node, "comm_size")


def _p2p_side(node: Node, rank: int, ranks: int, where: str) -> tuple[tuple[int, int, int], int]:
    """A send's or a receive's (sender, receiver, tag) and bytes, checked."""
    what = f"{where}: rank {rank}'s node {node.id} ({_shown(node.name)})"
    send = node.type == COMM_SEND_NODE
    peer, size, tag = _attr(node, "comm_dst" if send else "comm_src"), _attr(node, "comm_size"), _attr(node, "comm_tag")
    if peer is None or not 0 <= peer < ranks or peer == rank:
        raise McsimError(f"{what}: {'comm_dst' if send else 'comm_src'}={peer!r}; give another rank (0..{ranks - 1})")
    if size is None or size <= 0:
        raise McsimError(f"{what}: comm_size={size!r}; a message needs its bytes (> 0)")
    return ((rank, peer, tag or 0) if send else (peer, rank, tag or 0)), size


def _pairs(read: Sequence[Trace], where: str) -> list[tuple[int, Any, int, Any, int]]:
    """Every message, (sender, its send node, receiver, its receive node, bytes): each send matched with the
    receive of the same sender, receiver and tag, the k-th with the k-th; one line for a send or a receive
    with no partner or of another size."""
    sends: defaultdict[tuple[int, int, int], deque[tuple[Any, int]]] = defaultdict(deque)
    recvs: defaultdict[tuple[int, int, int], deque[tuple[Any, int]]] = defaultdict(deque)
    for r, trace in enumerate(read):
        for node in trace.nodes:
            if node.type in (COMM_SEND_NODE, COMM_RECV_NODE):
                key, size = _p2p_side(node, r, len(read), where)
                (sends if node.type == COMM_SEND_NODE else recvs)[key].append((node, size))
    out = []
    for key in sorted(set(sends) | set(recvs)):
        s, q = sends[key], recvs[key]
        if len(s) != len(q):
            side, rank = ("send", key[0]) if len(s) > len(q) else ("receive", key[1])
            node = (s if len(s) > len(q) else q)[min(len(s), len(q))][0]
            raise McsimError(
                f"{where}: rank {rank}'s {side} node {node.id} (from rank {key[0]} to rank {key[1]}, tag {key[2]}) "
                "has no partner in the other rank's trace"
            )
        for (send, size), (recv, got) in zip(s, q, strict=True):
            if size != got:
                raise McsimError(
                    f"{where}: rank {key[0]}'s send node {send.id} of {size} B is received by rank {key[1]}'s node "
                    f"{recv.id} as {got} B"
                )
            out.append((key[0], send, key[1], recv, size))
    return out


def _step(node: Node, durations: tuple[int, ...], ranks: int, algorithms: dict[str, str], where: str) -> Step:
    label = node.name or f"node {node.id}"
    what = f"{where}: node {node.id} ({_shown(label)})"
    if _attr(node, "is_cpu_op") == 1:
        return Compute(label=label, duration_ps=0)
    if node.type == COMP_NODE or node.type in ZERO_TIME_NODES:
        ps = tuple(d * PS_PER_US for d in durations) if node.type == COMP_NODE else (0,)
        return Compute(label=label, duration_ps=ps[0] if len(set(ps)) == 1 else ps)
    if node.type != COMM_COLL_NODE:
        kind = NODE_TYPES.get(node.type, f"type {node.type}")
        raise McsimError(
            f"{what} is a {kind}, which mcsim does not run (it runs COMP, COMM_COLL, COMM_SEND and COMM_RECV nodes)"
        )
    comm_type, size = _attr(node, "comm_type"), _attr(node, "comm_size")
    if comm_type not in COMM_TYPES:
        name = COMM_TYPE_NAMES.get(comm_type, f"comm_type {comm_type}") if comm_type is not None else "no comm_type"
        raise McsimError(f"{what}: a {name} collective, which mcsim does not run")
    if size is None or size <= 0:
        raise McsimError(f"{what}: comm_size={size!r}; a collective needs its bytes (> 0)")
    collective, blocks = COMM_TYPES[comm_type]
    n = -(-size // ranks) if blocks else size
    return Collective(label=label, collective=collective, algorithm=algorithms[collective], bytes_per_rank=n)


def chakra_job(
    name: str, hosts: tuple[int, ...], traces: Sequence[str | Path], algorithms: dict[str, str] | None = None
) -> tuple[Job, int]:
    """(the job of one trace file per rank, rank r on hosts[r]; the dependencies it dropped, on nodes the
    trace does not hold); ``algorithms`` picks each collective's algorithm (default: DEFAULT_ALGORITHMS).
    Traces of one graph (every rank the same nodes, dependencies and collectives) are one graph of steps;
    else each rank's nodes are its own steps and only the collectives are the job's (see _per_rank)."""
    if isinstance(traces, str | bytes | Path) or not isinstance(traces, Sequence):
        raise McsimError(f"job {name!r}: traces={traces!r} must be a list of trace files, one per rank")
    if len(traces) != len(hosts):
        raise McsimError(f"job {name!r}: {len(traces)} trace files for {len(hosts)} ranks; give one per rank")
    algos = DEFAULT_ALGORITHMS | (algorithms or {})
    read: list[Trace] = []
    nodes = deps = 0
    for t in traces:
        read.append(read_trace(t, MAX_TRACE_NODES - nodes, MAX_TRACE_DEPS - deps))
        nodes += len(read[-1].nodes)
        deps += sum(len(n.data_deps) for n in read[-1].nodes)
    for r, trace in enumerate(read):
        if len({node.id for node in trace.nodes}) != len(trace.nodes):
            raise McsimError(f"job {name!r}: {traces[r]}: a node id appears twice")
    first = read[0].nodes
    if all(len(t.nodes) == len(first) and all(map(_same, first, t.nodes)) for t in read[1:]):
        return _one_graph(name, hosts, read, algos, str(traces[0]))
    return _per_rank(name, hosts, read, algos, traces)


def _same(a: Node, b: Node) -> bool:
    return _shape(a) == _shape(b)


def _one_graph(
    name: str, hosts: tuple[int, ...], read: list[Trace], algos: dict[str, str], trace0: str
) -> tuple[Job, int]:
    """Every rank one graph: a step per node (a COMP node's duration per rank)."""
    first = read[0].nodes
    nodes: dict[str, tuple[Step, tuple[str, ...]]] = {}
    ids = {node.id for node in first}
    dropped = 0
    positions = {node.id: i for i, node in enumerate(first)}
    messages: defaultdict[int, list[Message]] = defaultdict(list)
    for a, send, b, recv, size in _pairs(read, f"job {name!r}"):
        messages[positions[send.id]].append(Message(a, b, size, into=str(recv.id)))
    for i, node in enumerate(first):
        durations = tuple(int(t.nodes[i].duration_micros) for t in read)
        if node.type in (COMM_SEND_NODE, COMM_RECV_NODE):
            step: Step = Transfer(label=node.name or f"node {node.id}", messages=tuple(messages[i]))
        else:
            step = _step(node, durations, len(hosts), algos, f"job {name!r}: {trace0}")
        deps = tuple(node.data_deps)
        dropped += sum(d not in ids for d in deps)
        nodes[str(node.id)] = (step, tuple(str(d) for d in deps if d in ids))
    return job_of_graph(name, hosts, nodes), dropped


def _collectives(name: str, read: list[Trace], traces: Sequence[str | Path]) -> None:
    """Every rank's trace holds the job's collectives in one order: the same count, types and sizes."""
    colls = [[n for n in t.nodes if n.type == COMM_COLL_NODE] for t in read]
    for r, mine in enumerate(colls[1:], 1):
        if len(mine) != len(colls[0]):
            raise McsimError(
                f"job {name!r}: rank {r}'s trace ({traces[r]}) holds {len(mine)} collectives, rank 0's "
                f"{len(colls[0])} (every rank runs the job's collectives, in one order)"
            )
        for k, (a, b) in enumerate(zip(colls[0], mine, strict=True)):
            if _shape(a)[3:] != _shape(b)[3:]:
                raise McsimError(
                    f"job {name!r}: collective {k} is rank 0's node {a.id} and rank {r}'s node {b.id}, of another "
                    "type or size (every rank runs the job's collectives, in one order)"
                )


def _per_rank(
    name: str, hosts: tuple[int, ...], read: list[Trace], algos: dict[str, str], traces: Sequence[str | Path]
) -> tuple[Job, int]:
    """A graph per rank (pipeline stages): each rank's COMP, SEND, RECV and other nodes are its own steps (they
    pass at once on the other ranks); the k-th collective of every rank is the job's k-th collective step,
    which waits on each rank for that rank's dependencies. A collective's dependency on another that not
    every rank's trace has goes through a step of that rank's own that passes at once (a relay), so that it
    holds on those ranks only."""
    _collectives(name, read, traces)
    ranks, where = len(read), f"job {name!r}"
    key_of: dict[tuple[int, int], str] = {}
    for r, trace in enumerate(read):
        colls = (n for n in trace.nodes if n.type == COMM_COLL_NODE)
        key_of |= {(r, n.id): f"c{k}" for k, n in enumerate(colls)}
        key_of |= {(r, n.id): f"{r}:{n.id}" for n in trace.nodes if n.type != COMM_COLL_NODE}
    sent = {
        (a, send.id): Message(a, b, size, into=key_of[b, recv.id]) for a, send, b, recv, size in _pairs(read, where)
    }
    nodes: dict[str, tuple[Step, tuple[str, ...]]] = {}
    waits: defaultdict[str, dict[str, set[int]]] = defaultdict(dict)  # collective -> its dependency -> ranks
    dropped = 0
    for r, trace in enumerate(read):
        for node in trace.nodes:
            deps = [key_of[r, d] for d in node.data_deps if (r, d) in key_of]
            dropped += len(node.data_deps) - len(deps)
            key = key_of[r, node.id]
            if node.type == COMM_COLL_NODE:
                nodes.setdefault(key, (_step(node, (0,), ranks, algos, f"{where}: {traces[r]}"), ()))
                for d in deps:
                    waits[key].setdefault(d, set()).add(r)
                continue
            label = node.name or f"node {node.id}"
            if node.type in (COMM_SEND_NODE, COMM_RECV_NODE):
                step: Step = Transfer(label=label, messages=(sent[r, node.id],) if (r, node.id) in sent else (), rank=r)
            else:
                compute = _step(node, (int(node.duration_micros),), ranks, algos, f"{where}: {traces[r]}")
                assert isinstance(compute, Compute)  # a node of no other kind is refused
                step = dataclasses.replace(compute, rank=r)
            nodes[key] = (step, tuple(deps))
    for key, on in waits.items():
        deps = []
        for d, held in on.items():
            if not d.startswith("c") or len(held) == ranks:
                deps.append(d)
                continue
            for r in sorted(held):  # a dependency between collectives that only some ranks' traces have
                nodes[f"{r}:relay:{d}:{key}"] = (Transfer(label=f"{d} before {key}", messages=(), rank=r), (d,))
                deps.append(f"{r}:relay:{d}:{key}")
        nodes[key] = (nodes[key][0], tuple(deps))
    return job_of_graph(name, hosts, nodes), dropped
