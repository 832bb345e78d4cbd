"""What the host saw of one boot of a VM (iolab.hosts.vm.host): its
start-up's steps, how it ended, the console's last lines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab.hosts.vm import guest as guest_side

CONSOLE_TAIL = 25  # console lines kept in the error of a cell without a sample
# the guest's start-up as the host sees it (Boot.marks): step -> (file in the
# exchange dir, a line in it; None: the file's appearance). In order: the
# kernel has booted (init's first line on the console), init starts the
# command, Python runs guest.py, the executor is imported, the guest is ready
MARKS: dict[str, tuple[str, str | None]] = {
    "init": ("console.log", "iolab-init: up"),
    "command": ("init.json", None),
    "python": ("guest.log", f"{guest_side.MARK} python"),
    "imported": ("guest.log", f"{guest_side.MARK} imported"),
    "ready": ("guest.json", None),
}


@dataclass
class Boot:
    """What the host saw of one boot."""

    argv: list[str]
    xchg: Path
    accel: str = "tcg"
    boot_timeout: float = 0.0  # seconds from QEMU's start to the ready marker
    started: float = 0.0  # time.monotonic()
    ready_s: float | None = None  # QEMU start -> the guest ready to run its first cell
    exited_s: float | None = None  # QEMU start -> QEMU gone
    last_sample_s: float | None = None
    qemu_rc: int | None = None
    guest_rc: int | None = None
    timed_out: bool = False
    stalled: bool = False  # killed at boot_timeout, before the ready marker
    stopped: bool = False  # ended by the run (another batch failed, or Ctrl-C), not by the guest
    ended_early: bool = False  # ended by the host once every cell had its sample (no guest exit status then)
    guest: dict[str, Any] | None = None
    # the host's seconds from QEMU's start to each step of the guest's start-up
    # it saw (the guest's own uptimes are instructions plus idle jumps under
    # icount, not the host's time): the first time each marker was there
    marks: dict[str, float] = field(default_factory=dict)
    # how the guest was started (iolab.hosts.vm.saved): {"kind": "cold"}, or restored from a saved
    # state, or saved in this boot, and which state; recorded with each sample (env["vm"]["start"])
    start: dict[str, Any] = field(default_factory=lambda: {"kind": "cold"})
    number: int = 0  # this boot's number in its VMHost, from 1 (env["vm"]["boot"])

    def see_marks(self, now: float) -> None:
        """Note the start-up steps that appeared since the last look."""
        for step, (name, text) in MARKS.items():
            if step in self.marks:
                continue
            path = self.xchg / name
            try:
                found = path.exists() if text is None else text in path.read_text(errors="replace")
            except OSError:
                found = False
            if found:
                self.marks[step] = round(now - self.started, 3)

    def console_tail(self, lines: int = CONSOLE_TAIL) -> list[str]:
        text = ""
        for name in ("console.log", "guest.log"):
            path = self.xchg / name
            if path.exists():
                text += path.read_text(errors="replace")
        return [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]

    def outcome(self) -> str:
        if self.stalled:
            return (f"the guest did not come up within [vm] boot_timeout ({self.boot_timeout:g} s) "
                    f"under {self.accel.upper()}; the VM was killed")
        if self.timed_out:
            return "the VM was killed: nothing from the guest for [vm] timeout"
        if self.stopped:
            return "the VM was stopped: the run was ending"
        if self.guest_rc is not None:
            return f"the guest's iolab exited with status {self.guest_rc}"
        stderr = self.xchg / "qemu.stderr"
        detail = stderr.read_text(errors="replace").strip().splitlines()[-2:] if stderr.exists() else []
        if self.qemu_rc not in (0, None):
            return f"QEMU failed (exit {self.qemu_rc}): {' / '.join(detail)}"
        return "the VM stopped before its command ended (crash or panic)"
