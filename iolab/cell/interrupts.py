"""Ctrl-C that cannot cut a teardown in half.

The first Ctrl-C (or SIGTERM) raises KeyboardInterrupt as usual, so a
running workload stops at once. While a teardown runs inside
`deferred()`, a further signal is held back and raised when the teardown
is over, so an unmount or a knob restore is never left half done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_held: list[int] = []
_depth = 0


def _hold(signum: int, frame: object) -> None:
    _held.append(signum)


@contextmanager
def deferred() -> Iterator[None]:
    global _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    if _depth == 0:
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, _hold)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            if _held:
                _held.clear()
                raise KeyboardInterrupt


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def sigterm_interrupts() -> None:
    """Treat SIGTERM like Ctrl-C, so a killed run still cleans up."""
    signal.signal(signal.SIGTERM, _terminate)
