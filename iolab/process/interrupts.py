"""Ctrl-C that cannot cut a teardown in half.

The first Ctrl-C (or SIGTERM) raises KeyboardInterrupt as usual, so a
running workload stops at once. While a teardown runs inside
`deferred()`, a further signal is held back and raised when the teardown
is over, so an unmount or a knob restore is never left half done. A
teardown that fails while an interrupt is on its way out does not replace
the interrupt: its error becomes a note on the KeyboardInterrupt, so the
run still stops and is marked interrupted.

SIGTERM (`kill PID`, `timeout`) is the same as Ctrl-C once
`sigterm_interrupts()` is called (the command line does).
"""

from __future__ import annotations

import signal
import sys
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
    pending = sys.exc_info()[1]  # the exception this teardown runs under, if any
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
    except Exception as error:
        if not isinstance(pending, KeyboardInterrupt):
            raise
        pending.add_note(f"teardown after the interrupt: {error}")
        raise pending from None
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
    """Treat SIGTERM like Ctrl-C, so a killed run still cleans up; and SIGINT
    to the PID too, even when iolab was started with SIGINT ignored (a
    background job of a script: `iolab run ... &`)."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)
