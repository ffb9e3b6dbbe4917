# SPDX-License-Identifier: GPL-2.0-only
"""One exclusive lock per folder, across processes (the build cache, a build's cling/ folder)."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(folder: Path, on_wait: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Hold ``folder``'s exclusive lock (``folder/lock``, made with the folder if missing) while the
    block runs: one process at a time makes what the folder holds. ``on_wait(lock_path)`` is called
    once, before blocking, if another process holds the lock (so the caller can say why it waits)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait(folder / "lock")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
