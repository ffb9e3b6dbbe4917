# SPDX-License-Identifier: GPL-2.0-only
"""Verify mode's data: the bytes each rank contributes and the output every rank must end with."""

from __future__ import annotations

import numpy as np


def pattern(source: int, n: int) -> np.ndarray:
    """The bytes source rank contributes in verify mode: they depend on the byte's offset, so a
    chunk delivered to the wrong place, twice or not at all shows."""
    j = np.arange(n, dtype=np.int64)
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
