"""Where tracefs is, mounting it for the time iolab needs it.

tracefs is often not mounted on a bare host or in a VM guest. The first
tracefs_acquire() mounts it at /sys/kernel/tracing if nothing has (a
debugfs with a tracing/ directory also does); the last tracefs_release()
unmounts it again, but only if iolab mounted it and nothing holds it busy.
"""

from __future__ import annotations

import os

from iolab import process
from iolab.collectors.base import CollectorError

TRACEFS = "/sys/kernel/tracing"
_users = 0
_we_mounted = False


def _mountpoint(fstype: str) -> str | None:
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[:1] == [fstype]:
                return left.split()[4]
    return None


def tracefs_acquire() -> str:
    """The tracefs root, mounting it at /sys/kernel/tracing if nothing has.

    Counted: the last tracefs_release() unmounts it again if we mounted it.
    """
    global _users, _we_mounted
    root = _mountpoint("tracefs")
    if root is None:
        debugfs = _mountpoint("debugfs")
        if debugfs and os.path.isdir(os.path.join(debugfs, "tracing", "instances")):
            root = os.path.join(debugfs, "tracing")
    if root is None:
        done = process.run(["mount", "-t", "tracefs", "tracefs", TRACEFS])
        if done.returncode != 0:
            raise CollectorError(f"cannot mount tracefs at {TRACEFS}: {done.stderr.strip()}")
        _we_mounted = True
        root = TRACEFS
    _users += 1
    return root


def tracefs_release() -> None:
    global _users, _we_mounted
    _users = max(0, _users - 1)
    if _users == 0 and _we_mounted:
        done = process.run(["umount", TRACEFS])
        if done.returncode == 0:  # busy (another process uses it): leave it mounted
            _we_mounted = False
