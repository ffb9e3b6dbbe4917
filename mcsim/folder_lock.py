# SPDX-License-Identifier: GPL-2.0-only
"""One exclusive lock per folder, across processes (the build cache, a build's cling/ folder)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s exclusive lock (``folder/lock``, made with the folder if missing) while the
    block runs: one process at a time makes what the folder holds."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
