"""Kprobe events iolab creates for a cell and removes after it.

A kprobe event counts the calls of a kernel function that no tracepoint
marks (the bio completion work of Linux 7.3, for one): ``p:iolab/NAME
SYMBOL`` written to tracefs' kprobe_events makes the event iolab:NAME,
which perf stat counts like a tracepoint; ``-:iolab/NAME`` removes it.
A probe of the same name left by a killed run is replaced. The kernel needs
CONFIG_KPROBE_EVENTS (iolab's base config has it); a function it cannot
probe (no such symbol, inlined everywhere, on the kprobe blacklist) is a
CollectorError with the kernel's words from tracefs' error_log.
"""

from __future__ import annotations

import errno
import os
import re

from iolab.collectors.base import CollectorError

GROUP = "iolab"
SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,127}")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def event(name: str) -> str:
    """The perf event a kprobe named `name` is counted as."""
    return f"{GROUP}:{name}"


def _write(root: str, line: str) -> None:
    # os.open, not open(..., "a"): Python seeks to the end of a file opened
    # for appending, and kprobe_events (a seq_file) refuses SEEK_END with
    # EINVAL, so open() failed before the kernel saw the line
    fd = os.open(os.path.join(root, "kprobe_events"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _last_error(root: str) -> str:
    try:
        with open(os.path.join(root, "error_log")) as f:
            lines = [x.strip() for x in f.read().splitlines() if x.strip()]
    except OSError:
        return ""
    # an entry is "[time] trace_kprobe: error: WHY", "Command: LINE" and a caret line
    reasons = [x.split("error:", 1)[1].strip() for x in lines if "error:" in x]
    return reasons[-1] if reasons else ""


def add(root: str, name: str, symbol: str) -> None:
    """Create iolab:NAME on SYMBOL's entry under the tracefs at root."""
    if not NAME.fullmatch(name) or not SYMBOL.fullmatch(symbol):
        raise CollectorError(f"kprobe: not a probe name and kernel function: {name!r}, {symbol!r}")
    if not os.path.exists(os.path.join(root, "kprobe_events")):
        raise CollectorError("kprobe: this kernel has no kprobe_events in tracefs (CONFIG_KPROBE_EVENTS is off)")
    if os.path.isdir(os.path.join(root, "events", GROUP, name)):
        remove(root, name)  # left by a killed run
    try:
        _write(root, f"p:{GROUP}/{name} {symbol}")
    except OSError as error:
        detail = _last_error(root) or os.strerror(error.errno or errno.EINVAL)
        raise CollectorError(f"kprobe on {symbol}: the kernel refused it ({detail})") from None


def remove(root: str, name: str) -> None:
    """Remove iolab:NAME; a probe already gone is fine."""
    try:
        _write(root, f"-:{GROUP}/{name}")
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise CollectorError(f"kprobe {GROUP}/{name} could not be removed: {error.strerror}") from None
