# SPDX-License-Identifier: GPL-2.0-only
"""Training-iteration generators: an FSDP iteration (per layer an Allgather of its parameters before its
forward and its backward compute, a Reduce-Scatter of its gradients after its backward) and a
data-parallel one (Allreduces of gradient buckets overlapping the backward); and background traffic
(rounds of an Alltoall or of a random permutation, with idle gaps)."""

from __future__ import annotations

import math

import numpy as np

from mcsim.errors import McsimError, pick, require_int
from mcsim.units import CLOCK_LIMIT, MAX_RATE_BPS, MAX_SIMULATED_PS, MAX_SIZE_B, PS_PER_S
from mcsim.workloads.job import Collective, Compute, Job, Message, Step, Transfer, check_step_count, job_of_graph

SIZE_LIMIT = " (2^62 B, mcsim's largest size)"
RATE_LIMIT = " (1 Pbit/s, mcsim's largest rate)"


def _check(name: str, **values: object) -> None:
    """A training job's layers (>= 1), bytes per layer (1..2^62) and compute times (0..the clock's limit): one
    line for the first wrong."""
    for what, value in values.items():
        if what.endswith("_ps"):
            require_int(f"job {name!r}", what, value, lo=0, hi=MAX_SIMULATED_PS, why=f" ({CLOCK_LIMIT})")
        elif what.startswith("bytes"):
            require_int(f"job {name!r}", what, value, lo=1, hi=MAX_SIZE_B, why=SIZE_LIMIT)
        else:
            require_int(f"job {name!r}", what, value, lo=1)


def fsdp_job(
    name: str,
    hosts: tuple[int, ...],
    *,
    layers: int,
    bytes_per_layer: int,
    forward_ps: int,
    backward_ps: int,
    prefetch: int = 1,
    allgather: str = "mcast",
    reduce_scatter: str = "ring",
) -> Job:
    """One FSDP iteration (parameters resharded after the forward pass, so gathered again for the backward).

    The compute runs in sequence, C_0 .. C_2L-1 = forward of layers 0 .. L-1, then backward of L-1 .. 0;
    before C_k its layer's parameters are all-gathered (G_k: each rank's shard, ceil(bytes_per_layer / P)
    bytes, the Allgathers one after the other as on one stream); G_k may start once C_{k-1-prefetch} has
    ended (prefetch = how many Allgathers may run ahead of the compute that needs the next one: 0 none);
    after a layer's backward its gradients are reduce-scattered (blocks of ceil(bytes_per_layer / P)), the
    Reduce-Scatters one after the other on a stream of their own.
    """
    _check(name, layers=layers, bytes_per_layer=bytes_per_layer, forward_ps=forward_ps, backward_ps=backward_ps)
    require_int(f"job {name!r}", "prefetch", prefetch, lo=0)
    check_step_count(f"job {name!r}", "layers", layers, 5 * layers, per="5 per layer")
    if len(hosts) < 2:
        raise McsimError(f"job {name!r}: has {len(hosts)} host; a job needs 2")
    shard = -(-bytes_per_layer // len(hosts))
    computes = [("F", layer, forward_ps) for layer in range(layers)]
    computes += [("B", layer, backward_ps) for layer in reversed(range(layers))]
    nodes: dict[str, tuple[Step, tuple[str, ...]]] = {}
    last_rs = None
    for k, (phase, layer, ps) in enumerate(computes):
        gather: tuple[str, ...] = (f"G{k - 1}",) if k else ()
        if k - 1 - prefetch >= 0:
            gather += (f"C{k - 1 - prefetch}",)
        nodes[f"G{k}"] = (
            Collective(label=f"AG {phase}{layer}", collective="allgather", algorithm=allgather, bytes_per_rank=shard),
            gather,
        )
        nodes[f"C{k}"] = (Compute(label=f"{phase}{layer}", duration_ps=ps), (f"G{k}", *((f"C{k - 1}",) if k else ())))
        if phase == "B":
            deps = (f"C{k}", *((last_rs,) if last_rs else ()))
            nodes[f"R{k}"] = (
                Collective(
                    label=f"RS {layer}", collective="reduce_scatter", algorithm=reduce_scatter, bytes_per_rank=shard
                ),
                deps,
            )
            last_rs = f"R{k}"
    return job_of_graph(name, hosts, nodes)


def data_parallel_job(
    name: str,
    hosts: tuple[int, ...],
    *,
    layers: int,
    bytes_per_layer: int,
    forward_ps: int,
    backward_ps: int,
    bucket_layers: int = 1,
    allreduce: str = "ring",
) -> Job:
    """One data-parallel iteration: forward of layers 0 .. L-1, then backward of L-1 .. 0, all compute in
    sequence; the gradients (bytes_per_layer per layer on every rank) go in buckets of ``bucket_layers``
    layers, the last bucket holding what is left, in the order the backward fills them; a bucket's
    Allreduce starts once the backward of its last layer has ended, the Allreduces one after the other (as
    on one stream), overlapping the backward of the layers below."""
    _check(name, layers=layers, bytes_per_layer=bytes_per_layer, forward_ps=forward_ps, backward_ps=backward_ps)
    require_int(f"job {name!r}", "bucket_layers", bucket_layers, lo=1)
    steps = 2 * layers + -(-layers // bucket_layers)
    check_step_count(f"job {name!r}", "layers", layers, steps, per="2 per layer and 1 per bucket")
    nodes: dict[str, tuple[Step, tuple[str, ...]]] = {}
    previous: tuple[str, ...] = ()
    for layer in range(layers):
        nodes[f"F{layer}"] = (Compute(label=f"F{layer}", duration_ps=forward_ps), previous)
        previous = (f"F{layer}",)
    order = list(reversed(range(layers)))
    last_ar: tuple[str, ...] = ()
    for b in range(0, layers, bucket_layers):
        bucket = order[b : b + bucket_layers]
        for layer in bucket:
            nodes[f"B{layer}"] = (Compute(label=f"B{layer}", duration_ps=backward_ps), previous)
            previous = (f"B{layer}",)
        label = f"AR {bucket[0]}" if len(bucket) == 1 else f"AR {bucket[0]}-{bucket[-1]}"
        nodes[label] = (
            Collective(
                label=label, collective="allreduce", algorithm=allreduce, bytes_per_rank=len(bucket) * bytes_per_layer
            ),
            (*previous, *last_ar),
        )
        last_ar = (label,)
    return job_of_graph(name, hosts, nodes)


# a background job's traffic: an Alltoall (every rank to every other; its algorithm) or a permutation (every
# rank to one other and from one other, a random derangement per round drawn with the seed)
BACKGROUND_PATTERNS = ("alltoall", "permutation")
# a background round's bytes per peer when none is given: 1 MiB, the size of ASTRA-sim's example
# microbenchmark workloads (examples/workload/microbenchmarks/*/*_1MB) and mid-range in nccl-tests' sweeps
BACKGROUND_BYTES = 1 << 20


def derangement(n: int, rng: np.random.Generator) -> tuple[int, ...]:
    """A uniformly random permutation of 0..n-1 with no fixed point (rejection: ~e draws)."""
    while True:
        p = rng.permutation(n)
        if not (p == np.arange(n)).any():
            return tuple(int(x) for x in p)


def _gap_ps(where: str, load: float, bound_ps: int) -> int:
    """A round's idle gap, bound x (1/load - 1), at most the simulated clock's limit (a load near 0 would make
    it past any clock, or overflow)."""
    gap = bound_ps * (1 / load - 1)  # a float: inf past the largest, never an OverflowError
    if not gap <= MAX_SIMULATED_PS:
        lowest = bound_ps / (bound_ps + MAX_SIMULATED_PS)
        raise McsimError(
            f"{where}: load={load!r} makes each idle gap {gap:.3g} ps, more than {MAX_SIMULATED_PS} ({CLOCK_LIMIT}); "
            f"give load >= {_up(lowest)}"
        )
    return round(gap)


def _up(x: float) -> str:
    """``x`` to 3 significant digits, rounded up (a load at least that keeps the gap within the clock)."""
    exp = math.floor(math.log10(x)) - 2
    return f"{math.ceil(x / 10.0**exp) * 10.0**exp:.3g}"


def background_job(
    name: str,
    hosts: tuple[int, ...],
    *,
    load: float,
    data_rate_bps: int,
    bytes_per_peer: int = BACKGROUND_BYTES,
    rounds: int | None = None,
    duration_ps: int | None = None,
    pattern: str = "alltoall",
    algorithm: str = "all_at_once",
    seed: int = 1,
) -> Job:
    """Background traffic as a job: ``rounds`` rounds, each an Alltoall of ``bytes_per_peer`` from every rank
    to every other (pattern alltoall, by ``algorithm``) or a permutation (every rank sends ``bytes_per_peer``
    to one other rank and receives as much from one, a random derangement drawn with ``seed`` for each
    round), followed by an idle gap, so that on an idle fabric the job offers ``load`` of each rank's link: a
    round at its bound, (P-1) x bytes_per_peer (alltoall) or bytes_per_peer (permutation) over the hosts'
    data rate, and a gap of that bound x (1/load - 1) (load 1: no gap). On a busy fabric the rounds take
    longer and the offered load is lower. ``rounds``, or ``duration_ps``: as many rounds as its offered
    load lasts that long on an idle fabric, ceil(duration / (bound + gap)); neither: one round."""
    where = f"job {name!r}"
    pick(f"pattern of {where}", pattern, {p: p for p in BACKGROUND_PATTERNS})
    require_int(where, "bytes_per_peer", bytes_per_peer, lo=1, hi=MAX_SIZE_B, why=SIZE_LIMIT)
    require_int(where, "data_rate_bps", data_rate_bps, lo=1, hi=MAX_RATE_BPS, why=RATE_LIMIT)
    require_int(where, "seed", seed, lo=0)
    if isinstance(load, bool) or not isinstance(load, int | float) or not 0 < load <= 1:
        raise McsimError(f"{where}: load={load!r} must be a number in (0, 1]: the share of each rank's link offered")
    peers = len(hosts) - 1 if pattern == "alltoall" else 1
    bound_ps = peers * bytes_per_peer * 8 * PS_PER_S // data_rate_bps
    gap_ps = _gap_ps(where, load, bound_ps)
    if rounds is not None and duration_ps is not None:
        raise McsimError(f"{where}: give rounds or a duration, not both")
    # a round's steps: the round and its gap; a permutation round's messages: one per rank
    messages = len(hosts) if pattern == "permutation" else 0
    if duration_ps is not None:
        require_int(where, "duration_ps", duration_ps, lo=1, hi=MAX_SIMULATED_PS, why=f" ({CLOCK_LIMIT})")
        rounds = max(1, -(-duration_ps // max(1, bound_ps + gap_ps)))  # a round of 0 ps (1 B at 1 Pbit/s): 1 ps
        per = f"{rounds} rounds of {bound_ps + gap_ps} ps"
        check_step_count(where, "duration_ps", duration_ps, 2 * rounds, messages * rounds, per)
    rounds = require_int(where, "rounds", 1 if rounds is None else rounds, lo=1)
    per = f"2 steps and {messages} messages a round" if messages else "2 steps a round"
    check_step_count(where, "rounds", rounds, 2 * rounds, messages * rounds, per)
    rng = np.random.default_rng(seed)
    nodes: dict[str, tuple[Step, tuple[str, ...]]] = {}
    for i in range(rounds):
        after = (f"idle{i - 1}",) if i else ()
        if pattern == "alltoall":
            step: Step = Collective(
                label=f"A2A {i}", collective="alltoall", algorithm=algorithm, bytes_per_rank=bytes_per_peer
            )
        else:
            to = derangement(len(hosts), rng)
            step = Transfer(label=f"perm {i}", messages=tuple(Message(r, d, bytes_per_peer) for r, d in enumerate(to)))
        nodes[f"round{i}"] = (step, after)
        nodes[f"idle{i}"] = (Compute(label=f"idle {i}", duration_ps=gap_ps), (f"round{i}",))
    return job_of_graph(name, hosts, nodes)
