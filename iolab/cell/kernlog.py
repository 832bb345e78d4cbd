"""The kernel log lines written while a step ran, for its error text.

`mount` says only "wrong fs type, bad option, bad superblock ...; dmesg(1)
may have more information": the reason (`xfs: Unknown parameter 'noatimee'`)
is in the kernel log. `watching()` opens /dev/kmsg before the step and
seeks to its end; `lines()` then reads, without blocking, the records
written since. Each read of /dev/kmsg returns one record,
"prio,seq,usec,flags;text" with continuation lines (" KEY=value") below.
Where /dev/kmsg cannot be read (no permission, no devtmpfs) there is nothing
to add and nothing fails. The same in the VM guest: only os and re.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

_RECORD = 8192  # larger than the longest record the kernel writes (printk's 1024 plus the dictionary)
_DEVICE = re.compile(r"\b(loop\d+|[shv]d[a-z]+\d*|nvme\d+n\d+(?:p\d+)?|dm-\d+|md\d+|zram\d+)\b")


class Watch:
    """The kernel log from the moment it was made on."""

    def __init__(self, fd: int | None):
        self._fd = fd

    def lines(self) -> list[str]:
        """The records' texts written since (or since the last call)."""
        found: list[str] = []
        while self._fd is not None:
            try:
                record = os.read(self._fd, _RECORD)
            except BrokenPipeError:  # records overwritten before they were read: the next read goes on
                continue
            except OSError:  # EAGAIN: no more records
                break
            if not record:
                break
            text = record.decode(errors="replace").partition(";")[2]
            found.append(text.split("\n", 1)[0].strip())
        return found


@contextmanager
def watching() -> Iterator[Watch]:
    fd: int | None = None
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        if fd is not None:
            os.close(fd)
        fd = None
    try:
        yield Watch(fd)
    finally:
        if fd is not None:
            os.close(fd)


def about(lines: list[str], device: str, fs: str, most: int = 4) -> list[str]:
    """The lines about this device or this filesystem (`xfs: ...`,
    `XFS (loop3): ...`), leaving out those naming another device (another
    run's mounts on this machine), each once, at most ``most``."""
    name = os.path.basename(device)
    own = re.compile(rf"\b{re.escape(name)}\b")
    kind = re.compile(rf"\b{re.escape(fs)}\b", re.IGNORECASE)
    chosen: list[str] = []
    for line in lines:
        others = {found for found in _DEVICE.findall(line) if found != name}
        if line not in chosen and (own.search(line) or (kind.search(line) and not others)):
            chosen.append(line)
    return chosen[:most]
