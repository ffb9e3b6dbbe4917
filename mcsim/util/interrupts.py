# SPDX-License-Identifier: GPL-2.0-only
"""Ctrl-C (SIGINT) that no code can lose: held over a block, or noted beside its KeyboardInterrupt.

Python raises a Ctrl-C as KeyboardInterrupt in whatever Python code runs next, and some code loses it: an import
that a C extension makes through ``PyCapsule_Import`` turns it into an ImportError (``xml.etree.ElementTree`` then
falls back to its Python version: networkx imports it), a weakref callback or ``__del__`` only prints it, and
``subprocess`` leaves running a child it forked when interrupted before it returns the Popen. Held
(:func:`interrupt_held`), the Ctrl-C is recorded and raised when the block ends, once; the block runs to its end.
Noted (:func:`interrupts_noted`), it is raised at once as always, and the caller sees afterwards that one came.
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


@contextlib.contextmanager
def interrupts_noted() -> Iterator[list[FrameType | None]]:
    """Run the block with SIGINT raising KeyboardInterrupt as Python's default handler does, each one also noted in
    the list yielded: a block that ends without the KeyboardInterrupt and a note had it lost by code it called. Only
    in the main thread and where SIGINT has Python's default handler; elsewhere the list stays empty."""
    noted: list[FrameType | None] = []

    def note_and_raise(signum: int, frame: FrameType | None) -> None:
        noted.append(frame)
        signal.default_int_handler(signum, frame)

    installed = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if installed:
        try:
            signal.signal(signal.SIGINT, note_and_raise)
        except ValueError:  # not the main thread
            installed = False
    try:
        yield noted
    finally:
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
