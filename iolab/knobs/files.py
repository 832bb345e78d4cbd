"""Knobs that are a value in one kernel file: sysfs and sysctl."""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar

from iolab.knobs.base import Knob, KnobError, normalise, read_raw, same, write_raw
from iolab.journal import Journal

def undo_write(undo: dict[str, Any], label: str) -> str:
    path, value = undo["path"], undo["value"]
    if not os.path.exists(path):
        return f"{path} is gone, nothing to restore"
    write_raw(path, value, label)
    got = normalise(read_raw(path, label))
    if not same(value, got):
        raise KnobError(f"{label}: restore of {path}: wanted {value!r}, read back {got!r}")
    return f"wrote {value!r} to {path}"


class _FileKnob(Knob):
    """A value in one kernel file (sysfs or procfs)."""

    def __init__(self, path: str, value: object):
        super().__init__()
        self.path = path
        self.value = str(value).strip()

    def show(self) -> str:
        return read_raw(self.path, self.label)

    def _read(self) -> str:
        return normalise(read_raw(self.path, self.label))

    def _undo_action(self) -> dict[str, Any]:
        return {"kind": "write", "path": self.path, "value": self.old}

    def apply(self, journal: Journal | None = None) -> None:
        if self._applied:
            raise KnobError(f"{self.label}: already applied")
        self.old = self._read()
        self._remember()
        self._journal_add(journal, self._undo_action())
        try:
            write_raw(self.path, self.value, self.label)
        except KnobError:
            self._journal_done()  # the kernel refused: nothing changed
            raise
        self._applied = True
        self.new = self._read()
        if not same(self.value, self.new):
            raise KnobError(
                f"{self.label}: wanted {self.value!r}, read back {self.new!r} from {self.path} "
                "(the kernel rounded or ignored the value)"
            )

    def _remember(self) -> None:
        """Read anything else restore() needs (subclass hook)."""

    def restore(self) -> None:
        if not self._applied:
            return
        assert self.old is not None
        write_raw(self.path, self.old, self.label)
        got = self._read()
        if not same(self.old, got):
            raise KnobError(f"{self.label}: restore wanted {self.old!r}, read back {got!r} from {self.path}")
        self._applied = False
        self._journal_done()


class SysfsKnob(_FileKnob):
    """A value in a sysfs file, e.g. /sys/block/loop0/queue/scheduler."""

    kind = "sysfs"

    def __init__(self, path: str, value: object):
        real = os.path.realpath(path)
        if not (real + "/").startswith("/sys/") or not path.startswith("/sys/"):
            raise ValueError(f"sysfs knob path must be under /sys: {path!r}")
        super().__init__(path, value)
        self.label = f"sysfs {path}"


class SysctlKnob(_FileKnob):
    """A sysctl, e.g. vm.dirty_bytes (/proc/sys/vm/dirty_bytes).

    vm.dirty_bytes and vm.dirty_ratio are one setting in two units: writing
    either zeroes the other (same for the dirty_background pair). apply()
    remembers both, and restore() writes back whichever was in force, then
    checks both read back at their old values.
    """

    kind = "sysctl"
    PAIRED: ClassVar[dict[str, str]] = {
        "vm.dirty_bytes": "vm.dirty_ratio",
        "vm.dirty_ratio": "vm.dirty_bytes",
        "vm.dirty_background_bytes": "vm.dirty_background_ratio",
        "vm.dirty_background_ratio": "vm.dirty_background_bytes",
    }

    def __init__(self, key: str, value: object):
        key = key.strip().replace("/", ".")
        if not re.fullmatch(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)+", key):
            raise ValueError(f"not a sysctl key: {key!r} (example: vm.dirty_bytes)")
        super().__init__(self.path_of(key), value)
        self.key = key
        self.label = f"sysctl {key}"
        self.partner = self.PAIRED.get(key)
        self.partner_old: str | None = None

    @staticmethod
    def path_of(key: str) -> str:
        return "/proc/sys/" + key.replace(".", "/")

    def _remember(self) -> None:
        if self.partner:
            self.partner_old = normalise(read_raw(self.path_of(self.partner), self.label))

    def _restore_write(self) -> tuple[str, str]:
        """The (path, value) whose write brings back the old state of the pair."""
        assert self.old is not None
        if self.partner and self.partner_old is not None and self.old == "0":
            return self.path_of(self.partner), self.partner_old
        return self.path, self.old

    def _undo_action(self) -> dict[str, Any]:
        path, value = self._restore_write()
        return {"kind": "write", "path": path, "value": value}

    def restore(self) -> None:
        if not self._applied:
            return
        path, value = self._restore_write()
        write_raw(path, value, self.label)
        checks = [(self.path, self.old)]
        if self.partner:
            checks.append((self.path_of(self.partner), self.partner_old))
        for p, want in checks:
            got = normalise(read_raw(p, self.label))
            if not same(str(want), got):
                raise KnobError(f"{self.label}: restore wanted {want!r} in {p}, read back {got!r}")
        self._applied = False
        self._journal_done()


