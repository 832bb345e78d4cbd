"""The knob interface and what every knob shares: reading and writing kernel
files, verified; the `Placement` of the workload process."""

from __future__ import annotations

import errno
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from iolab.journal import UndoError

if TYPE_CHECKING:
    from iolab.journal import Journal


class KnobError(UndoError):
    """A knob could not be applied or restored; the message says which, where and why."""


def errtext(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "?")
    return f"{os.strerror(exc.errno or 0)} ({name})"


def read_raw(path: str, label: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as exc:
        raise KnobError(f"{label}: cannot read {path}: {errtext(exc)}") from None


def write_raw(path: str, value: str, label: str) -> None:
    """One write(2) of the whole value, as sysfs and procfs expect."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as exc:
        raise KnobError(f"{label}: cannot open {path} for writing: {errtext(exc)}") from None
    try:
        os.write(fd, value.encode())
    except OSError as exc:
        raise KnobError(f"{label}: writing {value!r} to {path} failed: {errtext(exc)}") from None
    finally:
        os.close(fd)


_SELECTED = re.compile(r"\[([^\]]*)\]")


def normalise(text: str) -> str:
    """A kernel file's value as one compares it.

    "[mq-deadline] none" (a choice list, as in queue/scheduler) gives the
    selected entry "mq-deadline"; otherwise runs of whitespace become one
    space ("4096\\t131072" -> "4096 131072").
    """
    text = text.strip()
    words = text.split()
    if len(words) > 1 or (words and _SELECTED.fullmatch(words[0])):
        selected = [w for w in words if _SELECTED.fullmatch(w)]
        if len(selected) == 1:
            return selected[0][1:-1]
    return " ".join(words)


def same(wanted: str, got: str) -> bool:
    if wanted == got:
        return True
    try:  # "064" and "64" are the same number; "4" for "5" is not
        return int(wanted) == int(got)
    except ValueError:
        return False



# --------------------------------------------------------------------------
# The knob interface


class Knob(ABC):
    """A host setting for one cell: show it, apply it (verified), restore it."""

    kind: ClassVar[str]
    label: str

    def __init__(self) -> None:
        self._applied = False
        self._journal: Journal | None = None
        self._entry: str | None = None
        self.old: str | None = None  # as read before apply
        self.new: str | None = None  # as read back after apply

    @abstractmethod
    def show(self) -> str:
        """The current value as the kernel reports it."""

    @abstractmethod
    def apply(self, journal: Journal | None = None) -> None:
        """Remember the old value, write the new one, read it back; KnobError if it differs."""

    @abstractmethod
    def restore(self) -> None:
        """Put the old value back (verified); idempotent; nothing if apply never changed anything."""

    def place(self, placement: Placement) -> None:
        """Add what this knob needs to how the workload process is started."""

    # journal bookkeeping shared by the subclasses
    def _journal_add(self, journal: Journal | None, undo: dict[str, Any]) -> None:
        self._journal = journal
        self._entry = journal.add(self.label, undo) if journal else None

    def _journal_done(self) -> None:
        if self._journal and self._entry:
            self._journal.discard(self._entry)
        self._entry = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label}>"



def format_cpus(cpus: set[int]) -> str:
    """{0, 1, 2, 5} -> "0-2,5" (the kernel's cpulist format)."""
    out: list[str] = []
    run: list[int] = []
    for cpu in sorted(cpus):
        if run and cpu == run[-1] + 1:
            run.append(cpu)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [cpu]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)



# --------------------------------------------------------------------------
# Placement of the workload process


@dataclass
class Placement:
    """How the workload process is started: the cgroups it joins, the CPUs it may use."""

    cgroup_procs: list[str] = field(default_factory=list)
    cpus: set[int] | None = None

    def preexec(self) -> None:
        """For subprocess.Popen(preexec_fn=...): runs in the child before exec.

        Joins the cgroups first (so everything the workload allocates is
        charged to them), then sets the CPU affinity. An error here makes
        Popen raise SubprocessError; the parent checks the files beforehand
        with check().
        """
        pid = str(os.getpid()).encode()
        for procs in self.cgroup_procs:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)
        if self.cpus is not None:
            os.sched_setaffinity(0, self.cpus)

    def check(self) -> None:
        """Raise KnobError in the parent if preexec() would fail."""
        for procs in self.cgroup_procs:
            if not os.access(procs, os.W_OK):
                raise KnobError(f"placement: cannot write to {procs}")
        if self.cpus is not None and not self.cpus:
            raise KnobError("placement: CPU pins of different knobs do not overlap")

    def environment(self) -> dict[str, str]:
        out = {}
        if self.cgroup_procs:
            out["cgroups"] = " ".join(os.path.dirname(p) for p in self.cgroup_procs)
        if self.cpus is not None:
            out["cpus"] = format_cpus(self.cpus)
        return out


def placement_for(knobs: Sequence[Knob]) -> Placement:
    """The placement the applied knobs ask for (call inside `applied()`)."""
    placement = Placement()
    for knob in knobs:
        knob.place(placement)
    return placement


