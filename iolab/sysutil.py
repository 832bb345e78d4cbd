"""System tools: where they are, which package has them, children that die
with iolab, and their errors in a few lines (iolab.process runs them)."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
from collections.abc import Callable

# Which Debian package provides each tool iolab runs.
PACKAGE_OF = {
    "fio": "fio",
    "losetup": "mount",
    "mount": "mount",
    "umount": "mount",
    "mkfs.ext4": "e2fsprogs",
    "mkfs.xfs": "xfsprogs",
    "mkfs.btrfs": "btrfs-progs",
    "mkfs.erofs": "erofs-utils",
    "mkfs.f2fs": "f2fs-tools",
    "perf": "linux-perf",
    "qemu-system-x86_64": "qemu-system-x86",
    "apt-get": "apt",
    "apt-cache": "apt",
    "dpkg-deb": "dpkg",
    "depmod": "kmod",
    "zstd": "zstd",
}


class ToolError(Exception):
    """A system tool is missing or failed; the message says which and why."""


def require(tool: str, error: type[ToolError] = ToolError) -> str:
    path = shutil.which(tool)
    if path is None:
        package = PACKAGE_OF.get(tool, tool)
        raise error(f"{tool} not found: install it with 'apt-get install {package}'")
    return path


_PR_SET_PDEATHSIG = 1
# the C library, for the system calls Python has no function for (prctl, mount, umount2)
LIBC = ctypes.CDLL(None, use_errno=True)


def die_with_parent(then: Callable[[], None] | None = None) -> Callable[[], None]:
    """A preexec_fn: the child gets SIGKILL when iolab dies (even by SIGKILL),
    then runs `then` (a Placement's preexec). If iolab died before the child
    got this far, the child exits at once."""
    parent = os.getpid()

    def preexec() -> None:
        LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        if then is not None:
            then()

    return preexec


def error_lines(text: str) -> str:
    """A tool's error, without the usage text some tools print after it."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.lstrip().lower().startswith("usage:") and index > 0:
            return last_lines("\n".join(lines[:index]), 3)
    return last_lines(text, 3)


def last_lines(text: str, count: int) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-count:]) if lines else "(no output)"
