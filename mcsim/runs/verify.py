# SPDX-License-Identifier: GPL-2.0-only
"""Verify mode's data: the bytes each rank contributes and the output every rank must end with."""

from __future__ import annotations

import numpy as np


def pattern(source: int, n: int, start: int = 0) -> np.ndarray:
    """The bytes source rank contributes in verify mode (those at offsets start .. start+n-1): they
    depend on the byte's offset, so a chunk delivered to the wrong place, twice or not at all shows."""
    j = np.arange(start, start + n, dtype=np.int64)
    return ((source * 251 + j * 7 + (j >> 9)) % 256).astype(np.uint8)


def expected_output(collective: str, ranks: int, n: int, root: int = 0) -> np.ndarray:
    """Every rank's output buffer when the collective is right: the shards in rank order
    (Allgather) or the root's buffer (Broadcast)."""
    if collective == "broadcast":
        return pattern(root, n)
    return np.concatenate([pattern(s, n) for s in range(ranks)])


def wrong_bytes(outputs: list[np.ndarray], expected: np.ndarray) -> np.ndarray:
    """Per rank: how many bytes of its output buffer differ from the expected one."""
    return np.array([int(np.count_nonzero(out != expected)) for out in outputs], dtype=np.int64)


def int32_sum(buffers: list[np.ndarray]) -> np.ndarray:
    """The element-wise sum of byte buffers read as little-endian 32-bit integers, wrapping as the
    switches' ALUs do (two's complement), as bytes."""
    total = np.zeros(buffers[0].size // 4, dtype="<u4")
    for b in buffers:
        total += b.view("<u4")  # uint32 addition wraps
    return total.view(np.uint8)


class Expected:
    """Verify mode's data rank by rank: what each rank holds before the run and its output buffer
    when the collective is right. Allgather and Broadcast as :func:`expected_output`; a
    Reduce-Scatter's rank holds P blocks of n bytes (pattern(rank, P n), 32-bit integers) and ends
    with its block r summed over all ranks in place; an Allreduce's rank holds n bytes and ends with
    their sum over all ranks; an Alltoall's rank holds P blocks of n (block j for rank j) and ends
    with them and, after them, block r of every rank i's (block i).

    ``region_offset_b``: where the team's buffer begins in each rank's region (TeamSpec.region_offset_b): the
    inputs are written there and the output is read from there (:attr:`span`)."""

    def __init__(self, collective: str, ranks: int, n: int, root: int = 0, region_offset_b: int = 0) -> None:
        self.collective, self.ranks, self.n, self.root = collective, ranks, n, root
        self.region_offset_b = region_offset_b
        self._same: np.ndarray | None = None
        if collective == "alltoall":
            return
        if collective == "reduce":
            self._sum = int32_sum([pattern(r, n) for r in range(ranks)])
            return
        if collective in ("allgather", "broadcast"):
            self._same = expected_output(collective, ranks, n, root)
        elif collective == "allreduce":
            self._same = int32_sum([pattern(r, n) for r in range(ranks)])
        else:  # reduce_scatter: the sum of every block, each rank's own block taken from it
            self._sums = int32_sum([pattern(r, ranks * n) for r in range(ranks)])

    @property
    def output_b(self) -> int:
        """Bytes of :meth:`output`: the output buffer (an Alltoall's: its send and receive buffers)."""
        blocks = {"broadcast": 1, "allreduce": 1, "reduce": 1, "alltoall": 2 * self.ranks}.get(
            self.collective, self.ranks
        )
        return blocks * self.n

    @property
    def span(self) -> slice:
        """Where :meth:`output` is in the rank's region: output_b bytes from region_offset_b on."""
        return slice(self.region_offset_b, self.region_offset_b + self.output_b)

    def input(self, rank: int) -> tuple[int, np.ndarray] | None:
        """(offset in the rank's region, bytes) the rank holds before the run, or None."""
        held = self._input(rank)
        return None if held is None else (self.region_offset_b + held[0], held[1])

    def _input(self, rank: int) -> tuple[int, np.ndarray] | None:
        """(offset in the team's buffer, bytes) the rank holds before the run, or None."""
        if self.collective == "broadcast":
            return (0, pattern(rank, self.n)) if rank == self.root else None
        if self.collective == "allgather":
            return rank * self.n, pattern(rank, self.n)
        if self.collective in ("allreduce", "reduce"):
            return 0, pattern(rank, self.n)
        return 0, pattern(rank, self.ranks * self.n)  # Reduce-Scatter, Alltoall: P blocks

    def wrong_b(self, rank: int, out: np.ndarray, owned: bool = False) -> int:
        """Bytes of the rank's output ``out`` that differ from :meth:`output`; ``owned``: of a Reduce-Scatter only its
        own block (a hierarchical one leaves partial sums in the others)."""
        want = self.output(rank)
        if owned and self.collective == "reduce_scatter":
            block = slice(rank * self.n, (rank + 1) * self.n)
            out, want = out[block], want[block]
        return int(np.count_nonzero(out != want))

    def output(self, rank: int) -> np.ndarray:
        """The rank's output buffer when the collective is right (an Alltoall's: its send buffer as it
        was, then the receive buffer, block i from rank i)."""
        if self._same is not None:
            return self._same
        if self.collective == "reduce":  # the root ends with the sum; the others' buffers stay as they were
            return self._sum if rank == self.root else pattern(rank, self.n)
        if self.collective == "alltoall":
            p, n = self.ranks, self.n
            received = [pattern(i, n, start=rank * n) for i in range(p)]  # block r of rank i's P blocks
            return np.concatenate([pattern(rank, p * n), *received])
        out = pattern(rank, self.ranks * self.n)
        block = slice(rank * self.n, (rank + 1) * self.n)
        out[block] = self._sums[block]
        return out
