"""The run journal: what a run changed or created, written before it exists.

One JSON line per live change: a knob (its old value), a loop device, an
image, a mount, a scratch directory, a cgroup, a child process, a stored
run that is `running`. Each line is appended (and fsynced) *before* the
thing it describes exists, and removed once it is undone, so after a
SIGKILL the file holds exactly what is left to reclaim. A line is
{"id", "pid", "start", "label", "undo": {"kind": ..., ...}}; `start` is the
owning process's start time (clock ticks since boot, /proc/PID/stat), so
that a recycled PID is not taken for a live owner.

`recover(path, actions)` undoes what dead processes left, newest first (a
mount before its loop device, a loop device before its image), and leaves
the entries of live processes alone. `actions` maps each kind to its undo
action, given explicitly by the caller: iolab.process.reclaim.ACTIONS (paths,
loop devices, mounts, processes, tracefs instances), iolab.knobs.UNDO (knob
writes, loop direct I/O, cgroups) and the runner's "run" entries
(iolab.run.recovery); an entry of a kind not given is kept.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

Undo = Callable[[dict[str, Any], str], str]  # (undo action, label) -> what was done


class UndoError(Exception):
    """An undo action that failed; the message names the entry and why."""


def process_start(pid: int) -> int | None:
    """A process's start time (clock ticks after boot), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def owner_alive(pid: int, start: int | None) -> bool:
    """Is the process that wrote an entry still running (the same process,
    not a later one that got its PID)?"""
    now = process_start(pid)
    return now is not None and (start is None or now == start)


class Journal:
    """The JSON-lines journal file; changes are made under an flock on "<path>.lock"."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{self.path}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def entries(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash mid-append: nothing was changed yet
        return out

    def add(self, label: str, undo: dict[str, Any]) -> str:
        """Append an entry (fsynced) and return its id; call before making the change."""
        entry_id = uuid.uuid4().hex
        pid = os.getpid()
        line = json.dumps({"id": entry_id, "pid": pid, "start": process_start(pid), "label": label, "undo": undo})
        with self._locked():
            with open(self.path, "a") as f:
                f.write(line + "\n")
                f.flush()
                os.fsync(f.fileno())
        return entry_id

    def discard(self, entry_id: str) -> None:
        """Remove an entry: what it describes is undone (or never came to be)."""
        with self._locked():
            self._rewrite([e for e in self.entries() if e.get("id") != entry_id])

    def _rewrite(self, entries: list[dict[str, Any]]) -> None:
        if not entries:
            self.path.unlink(missing_ok=True)
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w") as f:
            f.write("".join(json.dumps(e) + "\n" for e in entries))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def as_journal(journal: Journal | str | os.PathLike[str] | None) -> Journal | None:
    if journal is None or isinstance(journal, Journal):
        return journal
    return Journal(journal)


# The journal of the cell being run in this process (set by the cell executor),
# for code that creates things several calls down (targets, engines).
_current: list[Journal] = []


@contextmanager
def using(journal: Journal | str | os.PathLike[str] | None) -> Iterator[Journal | None]:
    jrnl = as_journal(journal)
    if jrnl is None:
        yield None
        return
    _current.append(jrnl)
    try:
        yield jrnl
    finally:
        _current.remove(jrnl)


def current() -> Journal | None:
    return _current[-1] if _current else None


@contextmanager
def entry(label: str, undo: dict[str, Any], journal: Journal | None = None) -> Iterator[str | None]:
    """Journal `undo` for the block (written before the block creates the
    thing); the entry is removed when the block ends without an exception,
    and kept when it fails, so a later recover() tries again."""
    jrnl = journal or current()
    entry_id = jrnl.add(label, undo) if jrnl else None
    yield entry_id
    if jrnl and entry_id:
        jrnl.discard(entry_id)


class Recovered(NamedTuple):
    """One journal entry looked at by recover()."""

    outcome: str  # "restored", "left" (its process is alive) or "failed"
    text: str


def recover(
    journal_path: str | os.PathLike[str], actions: Mapping[str, Undo], only_pid: int | None = None
) -> list[Recovered]:
    """Undo what dead iolab processes left, newest entry first; one item per entry.

    Entries of a live process belong to a running cell and are left alone
    (this process's own are undone: whoever calls this has no cell running).
    With `only_pid`, only that process's entries are looked at. An entry
    whose undo fails is kept, so the next recover() reports it again.
    """
    journal = Journal(journal_path)
    done: list[Recovered] = []
    with journal._locked():
        keep = []
        for item in reversed(journal.entries()):
            pid = int(item.get("pid", 0))
            label = str(item.get("label", "?"))
            if only_pid is not None and pid != only_pid:
                keep.append(item)
                continue
            if pid != os.getpid() and owner_alive(pid, item.get("start")):
                done.append(Recovered("left", f"{label}: its process {pid} is still running"))
                keep.append(item)
                continue
            try:
                undo = item["undo"]
                action = actions.get(undo.get("kind"))
                if action is None:  # a kind the caller does not reclaim
                    keep.append(item)
                    continue
                done.append(Recovered("restored", f"{label}: {action(undo, label)}"))
            except (UndoError, OSError) as exc:
                done.append(Recovered("failed", f"{label}: {exc}" if isinstance(exc, OSError) else str(exc)))
                keep.append(item)
        journal._rewrite(list(reversed(keep)))
    return done
