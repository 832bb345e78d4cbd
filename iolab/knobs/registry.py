"""The knob table (KNOBS), building a cell's knobs, and applying them around
a cell with every restore tried on every exit (re-exported by iolab.knobs)."""


from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from iolab.knobs.base import Knob, KnobError
from iolab.journal import Journal, Recovered, Undo, as_journal
from iolab.process import reclaim
from iolab.journal import recover as recover_journal
from iolab.knobs.cgroup import MemoryLimit, undo_cgroup
from iolab.knobs.cpus import CpuPin
from iolab.knobs.files import SysctlKnob, SysfsKnob, undo_write
from iolab.knobs.loop import LoopDirectIO, undo_loop_dio



@contextmanager
def applied(
    knobs: Sequence[Knob], journal: Journal | str | os.PathLike[str] | None = None
) -> Iterator[dict[str, tuple[str, str]]]:
    """Apply the knobs in order; restore them in reverse order on exit.

    Restores on normal exit, on an exception and on KeyboardInterrupt, and
    tries every restore even when one fails. Yields {label: (old, new)} for
    the sample's environment record. If restores fail, KnobError lists them
    all (chained to the exception that ended the block, if any); a
    KeyboardInterrupt that ended the block is re-raised as such, with the
    restore failures added as a note, so Ctrl-C still stops the run.
    """
    jrnl = as_journal(journal)
    started: list[Knob] = []
    record: dict[str, tuple[str, str]] = {}
    try:
        for knob in knobs:
            started.append(knob)  # restore() is a no-op if apply changed nothing
            knob.apply(jrnl)
            record[knob.label] = (knob.old or "", knob.new or "")
        yield record
    finally:
        failures, interrupt = _restore_all(reversed(started))
        ending = sys.exc_info()[1]
        if isinstance(ending, KeyboardInterrupt) and interrupt is None:
            interrupt = ending
        if failures:
            message = "restore failed, the host is NOT as before: " + "; ".join(failures)
            if interrupt is None:
                raise KnobError(message)
            interrupt.add_note(message)
        if interrupt is not None and interrupt is not ending:
            raise interrupt


def _restore_all(knobs: Iterable[Knob]) -> tuple[list[str], KeyboardInterrupt | None]:
    """Restore each knob; (failure messages, a Ctrl-C that came meanwhile).

    A Ctrl-C during one restore retries that restore once, and the others
    still run; the caller re-raises the KeyboardInterrupt afterwards.
    """
    failures: list[str] = []
    interrupt: KeyboardInterrupt | None = None
    for knob in knobs:
        for attempt in (1, 2):
            try:
                knob.restore()
                break
            except KeyboardInterrupt as exc:
                interrupt = exc
                if attempt == 2:
                    failures.append(f"{knob.label}: restore interrupted twice by Ctrl-C")
            except KnobError as exc:
                failures.append(str(exc))
                break
            except Exception as exc:  # noqa: BLE001 - every knob still gets its restore
                failures.append(f"{knob.label}: restore failed: {exc!r}")
                break
    return failures, interrupt


# --------------------------------------------------------------------------
# The table of knob kinds and building knobs from an experiment's config

KNOBS: dict[str, type[Knob]] = {
    "sysctl": SysctlKnob,
    "sysfs": SysfsKnob,
    "loop_dio": LoopDirectIO,
    "memory_max": MemoryLimit,
    "cpus": CpuPin,
}


def build_knobs(config: Mapping[str, Any], dev: str | None = None, name: str = "workload") -> list[Knob]:
    """Knobs from a variant's or workload's settings, in the order of KNOBS.

    `dev` is the target's block device ("loop3", "/dev/vda"); it replaces
    `{dev}` in sysfs paths and is the device of loop_dio.
    """
    unknown = set(config) - set(KNOBS)
    if unknown:
        raise ValueError(f"unknown knob kind(s) {sorted(unknown)}; known: {', '.join(KNOBS)}")
    devname = os.path.basename(dev) if dev else None
    knobs: list[Knob] = []
    for kind in KNOBS:
        if kind not in config:
            continue
        value = config[kind]
        if kind == "sysctl":
            knobs += [SysctlKnob(k, v) for k, v in dict(value).items()]
        elif kind == "sysfs":
            for path, v in dict(value).items():
                if "{dev}" in path:
                    if devname is None:
                        raise ValueError(f"sysfs path {path!r} needs a block device, and the target has none")
                    path = path.replace("{dev}", devname)
                knobs.append(SysfsKnob(path, v))
        elif kind == "loop_dio":
            if devname is None:
                raise ValueError("loop_dio needs a loop device target")
            knobs.append(LoopDirectIO(devname, bool(value)))
        elif kind == "memory_max":
            knobs.append(MemoryLimit(value, name))
        elif kind == "cpus":
            knobs.append(CpuPin(value))
    return knobs


# The undo action of each kind of journal entry a knob writes.
UNDO: dict[str, Undo] = {"write": undo_write, "loop_dio": undo_loop_dio, "cgroup": undo_cgroup}


def recover(journal_path: str | os.PathLike[str], extra: Mapping[str, Undo] | None = None,
            only_pid: int | None = None) -> list[Recovered]:
    """Undo what dead iolab processes left in a journal (iolab.journal.recover)
    with the undo actions of the cell side: what cells create
    (iolab.process.reclaim.ACTIONS), knobs (UNDO), and `extra` ones."""
    return recover_journal(journal_path, {**reclaim.ACTIONS, **UNDO, **(extra or {})}, only_pid)
