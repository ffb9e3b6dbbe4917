# SPDX-License-Identifier: GPL-2.0-only
"""Ctrl-C (SIGINT) held over a block that must not be interrupted halfway, then raised as it would have been.

Python raises a Ctrl-C as KeyboardInterrupt in whatever Python code runs next, and some code loses it: an import
that a C extension makes through ``PyCapsule_Import`` turns it into an ImportError (``xml.etree.ElementTree`` then
falls back to its Python version: networkx imports it), a weakref callback or ``__del__`` only prints it, and
``subprocess`` leaves running a child it forked when interrupted before it returns the Popen. Held, the Ctrl-C is
recorded and raised when the block ends, once; the block itself runs to its end.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


@contextlib.contextmanager
def interrupt_held() -> Iterator[None]:
    """Hold a SIGINT that comes during the block; when the block ends (also by an exception), call the handler it
    would have run (Python's default raises KeyboardInterrupt). Only in the main thread and where SIGINT has a
    Python handler; elsewhere (ignored, default action, another thread) the block runs as it is."""
    previous = signal.getsignal(signal.SIGINT)
    handler = previous if callable(previous) else None
    held: list[FrameType | None] = []  # the frame each SIGINT came in
    if handler is not None:
        try:
            signal.signal(signal.SIGINT, lambda _signum, frame: held.append(frame))
        except ValueError:  # not the main thread: no handler can be set there (and none runs there)
            handler = None
    try:
        yield
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
            if held:
                handler(signal.SIGINT, held[0])
