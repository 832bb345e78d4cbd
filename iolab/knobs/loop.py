"""Loop device options as knobs (direct I/O to the backing file)."""

from __future__ import annotations

import fcntl
import os
import re
from typing import Any

from iolab.knobs.base import Knob, KnobError, errtext, read_raw
from iolab.journal import Journal

LOOP_SET_DIRECT_IO = 0x4C08  # linux/loop.h


def _loop_dio_path(device: str) -> str:
    return f"/sys/block/{os.path.basename(device)}/loop/dio"


def _set_loop_dio(device: str, on: bool, label: str) -> None:
    dev = device if device.startswith("/dev/") else f"/dev/{device}"
    try:
        fd = os.open(dev, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise KnobError(f"{label}: cannot open {dev}: {errtext(exc)}") from None
    try:
        fcntl.ioctl(fd, LOOP_SET_DIRECT_IO, int(on))
    except OSError as exc:
        raise KnobError(f"{label}: LOOP_SET_DIRECT_IO {int(on)} on {dev} failed: {errtext(exc)}") from None
    finally:
        os.close(fd)


def undo_loop_dio(undo: dict[str, Any], label: str) -> str:
    dev = undo["device"]
    if not os.path.exists(_loop_dio_path(dev)):
        return f"{dev} is gone, nothing to restore"
    _set_loop_dio(dev, bool(int(undo["value"])), label)
    return f"set direct I/O of {dev} to {undo['value']}"


class LoopDirectIO(Knob):
    """Direct I/O of a loop device to its backing file (losetup --direct-io).

    Read back from /sys/block/loopN/loop/dio. The logical block size is not
    a knob: it must be set before mkfs (losetup --sector-size at attach).
    """

    kind = "loop_dio"

    def __init__(self, device: str, on: bool):
        super().__init__()
        name = os.path.basename(device)
        if not re.fullmatch(r"loop\d+", name):
            raise ValueError(f"loop_dio needs a loop device, not {device!r}")
        self.device = f"/dev/{name}"
        self.on = bool(on)
        self.label = f"loop {self.device} direct-io"

    def show(self) -> str:
        return read_raw(_loop_dio_path(self.device), self.label)

    def apply(self, journal: Journal | None = None) -> None:
        if self._applied:
            raise KnobError(f"{self.label}: already applied")
        self.old = self.show()
        self._journal_add(journal, {"kind": "loop_dio", "device": self.device, "value": self.old})
        try:
            _set_loop_dio(self.device, self.on, self.label)
        except KnobError:
            self._journal_done()
            raise
        self._applied = True
        self.new = self.show()
        if self.new != str(int(self.on)):
            raise KnobError(
                f"{self.label}: wanted {int(self.on)}, read back {self.new!r} from "
                f"{_loop_dio_path(self.device)} (backing file or block size refuses O_DIRECT?)"
            )

    def restore(self) -> None:
        if not self._applied:
            return
        assert self.old is not None
        _set_loop_dio(self.device, self.old == "1", self.label)
        got = self.show()
        if got != self.old:
            raise KnobError(f"{self.label}: restore wanted {self.old!r}, read back {got!r}")
        self._applied = False
        self._journal_done()


