"""Knobs: host settings applied for one cell and restored afterwards.

Each kind of setting is one small class with `show()`, `apply()` and
`restore()`, listed in the `KNOBS` table:

    name        class          config value
    sysctl      SysctlKnob     {"vm.dirty_bytes": 67108864, ...}
    sysfs       SysfsKnob      {"/sys/block/{dev}/queue/rq_affinity": 2, ...}
    loop_dio    LoopDirectIO   true | false      (the target must be a loop device)
    memory_max  MemoryLimit    bytes (int), a multiple of the page size
    cpus        CpuPin         [0, 1]

`build_knobs(config, dev)` turns such a dict into knobs, in the table's
order; `{dev}` in a sysfs path stands for the target's block device name.

Every `apply()` reads the old value, writes the new one and reads it back:
a value the kernel rejects, rounds or ignores raises `KnobError` naming the
knob, the path, the wanted and the read-back value. `applied(knobs)` is the
context manager a cell uses: it restores in reverse order on every exit,
also after an exception or Ctrl-C, and tries every restore even when one
fails.

A crash journal makes "everything is restored" hold even for a killed run:
before a knob changes anything it appends a JSON line saying how to undo it
to the journal file; a successful restore removes the line. `recover(path)`
undoes what a dead process left behind (`iolab doctor` and the next run
call it).

Knobs that decide how the workload is started (a memory cgroup, CPU
pinning) also contribute to a `Placement`, whose `preexec()` is passed to
`subprocess.Popen(preexec_fn=...)`.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import sys
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple


class KnobError(Exception):
    """A knob could not be applied or restored; the message says which, where and why."""


# --------------------------------------------------------------------------
# Reading and writing kernel files


def _errtext(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "?")
    return f"{os.strerror(exc.errno or 0)} ({name})"


def _read_raw(path: str, label: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as exc:
        raise KnobError(f"{label}: cannot read {path}: {_errtext(exc)}") from None


def _write_raw(path: str, value: str, label: str) -> None:
    """One write(2) of the whole value, as sysfs and procfs expect."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as exc:
        raise KnobError(f"{label}: cannot open {path} for writing: {_errtext(exc)}") from None
    try:
        os.write(fd, value.encode())
    except OSError as exc:
        raise KnobError(f"{label}: writing {value!r} to {path} failed: {_errtext(exc)}") from None
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


def _same(wanted: str, got: str) -> bool:
    if wanted == got:
        return True
    try:  # "064" and "64" are the same number; "4" for "5" is not
        return int(wanted) == int(got)
    except ValueError:
        return False


# --------------------------------------------------------------------------
# The crash journal


class Journal:
    """A JSON-lines file of undo actions for knobs that are applied right now.

    One line per applied knob: {"id", "pid", "label", "undo": {...}}. A line
    is appended before the knob changes anything and removed after a
    successful restore, so after a crash the file holds exactly what is
    still to undo. Changes are made under an flock on "<path>.lock".
    """

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
        entry_id = uuid.uuid4().hex
        line = json.dumps({"id": entry_id, "pid": os.getpid(), "label": label, "undo": undo})
        with self._locked():
            with open(self.path, "a") as f:
                f.write(line + "\n")
                f.flush()
                os.fsync(f.fileno())
        return entry_id

    def discard(self, entry_id: str) -> None:
        with self._locked():
            self._rewrite([e for e in self.entries() if e.get("id") != entry_id])

    def _rewrite(self, entries: list[dict[str, Any]]) -> None:
        if not entries:
            self.path.unlink(missing_ok=True)
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text("".join(json.dumps(e) + "\n" for e in entries))
        os.replace(tmp, self.path)


def _as_journal(journal: Journal | str | os.PathLike[str] | None) -> Journal | None:
    if journal is None or isinstance(journal, Journal):
        return journal
    return Journal(journal)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Recovered(NamedTuple):
    """One journal entry looked at by recover()."""

    outcome: str  # "restored", "left" (its process is alive) or "failed"
    text: str


def recover(journal_path: str | os.PathLike[str]) -> list[Recovered]:
    """Undo what a killed iolab process left applied; one item per entry.

    Entries of a process that is still alive belong to a running cell and are
    left alone. An entry whose path no longer exists (a detached loop
    device) is dropped. An entry whose undo fails is kept, so the next
    recover() reports it again.
    """
    journal = Journal(journal_path)
    done: list[Recovered] = []
    with journal._locked():
        keep = []
        for entry in journal.entries():
            pid = int(entry.get("pid", 0))
            label = entry.get("label", "?")
            if pid != os.getpid() and _pid_alive(pid):
                done.append(Recovered("left", f"{label}: its process {pid} is still running"))
                keep.append(entry)
                continue
            try:
                done.append(Recovered("restored", f"{label}: {_undo(entry['undo'], label)}"))
            except KnobError as exc:
                done.append(Recovered("failed", str(exc)))
                keep.append(entry)
        journal._rewrite(keep)
    return done


def _undo(undo: dict[str, Any], label: str) -> str:
    """Carry out one journal undo action; what was done, or KnobError."""
    kind = undo.get("kind")
    if kind == "write":
        path, value = undo["path"], undo["value"]
        if not os.path.exists(path):
            return f"{path} is gone, nothing to restore"
        _write_raw(path, value, label)
        got = normalise(_read_raw(path, label))
        if not _same(value, got):
            raise KnobError(f"{label}: restore of {path}: wanted {value!r}, read back {got!r}")
        return f"wrote {value!r} to {path}"
    if kind == "cgroup":
        return _remove_cgroup(undo["path"], undo["home"], label)
    if kind == "loop_dio":
        dev = undo["device"]
        if not os.path.exists(_loop_dio_path(dev)):
            return f"{dev} is gone, nothing to restore"
        _set_loop_dio(dev, bool(int(undo["value"])), label)
        return f"set direct I/O of {dev} to {undo['value']}"
    raise KnobError(f"{label}: unknown journal action {kind!r}")


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


class _FileKnob(Knob):
    """A value in one kernel file (sysfs or procfs)."""

    def __init__(self, path: str, value: object):
        super().__init__()
        self.path = path
        self.value = str(value).strip()

    def show(self) -> str:
        return _read_raw(self.path, self.label)

    def _read(self) -> str:
        return normalise(_read_raw(self.path, self.label))

    def _undo_action(self) -> dict[str, Any]:
        return {"kind": "write", "path": self.path, "value": self.old}

    def apply(self, journal: Journal | None = None) -> None:
        if self._applied:
            raise KnobError(f"{self.label}: already applied")
        self.old = self._read()
        self._remember()
        self._journal_add(journal, self._undo_action())
        try:
            _write_raw(self.path, self.value, self.label)
        except KnobError:
            self._journal_done()  # the kernel refused: nothing changed
            raise
        self._applied = True
        self.new = self._read()
        if not _same(self.value, self.new):
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
        _write_raw(self.path, self.old, self.label)
        got = self._read()
        if not _same(self.old, got):
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
            self.partner_old = normalise(_read_raw(self.path_of(self.partner), self.label))

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
        _write_raw(path, value, self.label)
        checks = [(self.path, self.old)]
        if self.partner:
            checks.append((self.path_of(self.partner), self.partner_old))
        for p, want in checks:
            got = normalise(_read_raw(p, self.label))
            if not _same(str(want), got):
                raise KnobError(f"{self.label}: restore wanted {want!r} in {p}, read back {got!r}")
        self._applied = False
        self._journal_done()


# --------------------------------------------------------------------------
# Loop device options

LOOP_SET_DIRECT_IO = 0x4C08  # linux/loop.h


def _loop_dio_path(device: str) -> str:
    return f"/sys/block/{os.path.basename(device)}/loop/dio"


def _set_loop_dio(device: str, on: bool, label: str) -> None:
    dev = device if device.startswith("/dev/") else f"/dev/{device}"
    try:
        fd = os.open(dev, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise KnobError(f"{label}: cannot open {dev}: {_errtext(exc)}") from None
    try:
        fcntl.ioctl(fd, LOOP_SET_DIRECT_IO, int(on))
    except OSError as exc:
        raise KnobError(f"{label}: LOOP_SET_DIRECT_IO {int(on)} on {dev} failed: {_errtext(exc)}") from None
    finally:
        os.close(fd)


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
        return _read_raw(_loop_dio_path(self.device), self.label)

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


# --------------------------------------------------------------------------
# Memory cgroup


@dataclass(frozen=True)
class MemoryCgroup:
    """Where the memory controller lives and where iolab itself runs in it."""

    version: int  # 1 or 2
    mount: str  # mount point of the hierarchy holding the memory controller
    own: str  # directory of the cgroup this process is in

    @property
    def limit_file(self) -> str:
        return "memory.limit_in_bytes" if self.version == 1 else "memory.max"


def _mounts(mountinfo: str) -> list[tuple[str, str, str, str]]:
    """(root, mount point, fstype, super options) of each line of /proc/self/mountinfo."""
    out = []
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        unescape = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)  # noqa: E731
        out.append((unescape(fields[3]), unescape(fields[4]), rfields[0], rfields[2]))
    return out


def detect_memory_cgroup(proc_cgroups: str, mountinfo: str, self_cgroup: str) -> MemoryCgroup:
    """Find the memory controller from the text of /proc/cgroups,
    /proc/self/mountinfo and /proc/self/cgroup.

    The controller is on cgroup v1 when /proc/cgroups gives it a nonzero
    hierarchy id and a v1 cgroup mount carries the "memory" option; else on
    v2 when the cgroup2 mount lists "memory" in cgroup.controllers (checked
    by the caller, as it needs the live file).
    """
    enabled, hierarchy = False, 0
    for line in proc_cgroups.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "memory":
            hierarchy, enabled = int(parts[1]), parts[3] == "1"
    if not enabled:
        raise KnobError("cgroup memory limit: the memory controller is disabled (/proc/cgroups)")
    paths: dict[str, str] = {}
    for line in self_cgroup.splitlines():
        hid, controllers, path = line.split(":", 2)
        if hid == "0":
            paths["v2"] = path
        elif "memory" in controllers.split(","):
            paths["v1"] = path
    mounts = _mounts(mountinfo)

    def own_dir(root: str, mountpoint: str, path: str) -> str:
        rel = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
        return os.path.normpath(os.path.join(mountpoint, rel))

    if hierarchy != 0:
        for root, mountpoint, fstype, opts in mounts:
            if fstype == "cgroup" and "memory" in opts.split(","):
                return MemoryCgroup(1, mountpoint, own_dir(root, mountpoint, paths.get("v1", "/")))
        raise KnobError("cgroup memory limit: the memory controller is on cgroup v1 but not mounted")
    for root, mountpoint, fstype, _ in mounts:
        if fstype == "cgroup2":
            return MemoryCgroup(2, mountpoint, own_dir(root, mountpoint, paths.get("v2", "/")))
    raise KnobError("cgroup memory limit: no cgroup v1 memory mount and no cgroup2 mount")


def memory_cgroup() -> MemoryCgroup:
    def text(p: str) -> str:
        with open(p) as f:
            return f.read()

    found = detect_memory_cgroup(text("/proc/cgroups"), text("/proc/self/mountinfo"), text("/proc/self/cgroup"))
    if found.version == 2:
        controllers = _read_raw(os.path.join(found.mount, "cgroup.controllers"), "cgroup memory limit").split()
        if "memory" not in controllers:
            raise KnobError(
                f"cgroup memory limit: the memory controller is on neither cgroup v1 nor "
                f"the cgroup2 mount at {found.mount}"
            )
    return found


def _cgroup_procs(path: str) -> list[str]:
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def _remove_cgroup(path: str, home: str, label: str) -> str:
    """Move leftover processes to `home` (a cgroup.procs file), then rmdir."""
    if not os.path.isdir(path):
        return f"{path} is gone already"
    moved = 0
    for _ in range(3):  # a forking leftover may add processes while we move them
        pids = _cgroup_procs(path)
        if not pids:
            break
        for pid in pids:
            try:
                _write_raw(home, pid, label)
                moved += 1
            except KnobError:
                if _pid_alive(int(pid)):
                    raise
    deadline = time.monotonic() + 5.0
    while True:
        try:
            os.rmdir(path)
            break
        except FileNotFoundError:
            break
        except OSError as exc:  # EBUSY while an exiting task is still counted
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise KnobError(f"{label}: cannot remove cgroup {path}: {_errtext(exc)}") from None
            time.sleep(0.02)
    return f"removed cgroup {path}" + (f" after moving {moved} process(es) to {home}" if moved else "")


class MemoryLimit(Knob):
    """A fresh memory cgroup with a limit, for the workload only.

    Detects where the memory controller is: cgroup v1 (memory.limit_in_bytes,
    as on hosts that still mount v1) or cgroup v2 (memory.max). On v1 the
    cgroup is made below the cgroup iolab runs in. On v2 it is made below
    the nearest cgroup, from iolab's own upwards, that delegates the memory
    controller (cgroup.subtree_control), else below the root, enabling
    +memory there (a v2 cgroup with processes cannot delegate). Swap is not
    limited (memory.memsw / memory.swap.max are left alone).

    restore() moves processes still in the cgroup to iolab's own cgroup and
    removes it. `procs_path` is the cgroup.procs file the workload joins
    (see Placement). `usage()` reads the peak usage and OOM kills before
    restore.
    """

    kind = "memory_max"
    _serial = 0

    def __init__(self, limit_bytes: int, name: str = "workload"):
        super().__init__()
        page = os.sysconf("SC_PAGE_SIZE")
        if isinstance(limit_bytes, bool) or not isinstance(limit_bytes, int) or limit_bytes <= 0:
            raise ValueError(f"memory limit must be a positive number of bytes, not {limit_bytes!r}")
        if limit_bytes % page:
            raise ValueError(f"memory limit {limit_bytes} is not a multiple of the page size ({page}); the kernel would round it")
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise ValueError(f"cgroup name must be letters, digits, '_', '-', '.': {name!r}")
        self.limit = limit_bytes
        self.name = name
        self.label = f"cgroup memory limit {limit_bytes} ({name})"
        self.cg: MemoryCgroup | None = None
        self.path: str | None = None

    @property
    def procs_path(self) -> str:
        if not self._applied or self.path is None:
            raise KnobError(f"{self.label}: not applied, there is no cgroup to join")
        return os.path.join(self.path, "cgroup.procs")

    def show(self) -> str:
        cg = self.cg or memory_cgroup()
        where = self.path if self._applied and self.path else cg.own
        return _read_raw(os.path.join(where, cg.limit_file), self.label)

    def _parent(self, cg: MemoryCgroup) -> tuple[str, str | None]:
        """(directory to create the cgroup in, root subtree_control we enable memory in or None)."""
        if cg.version == 1:
            return cg.own, None
        d = cg.own
        while True:
            ctl = os.path.join(d, "cgroup.subtree_control")
            if "memory" in _read_raw(ctl, self.label).split():
                return d, None
            if os.path.normpath(d) == os.path.normpath(cg.mount) or d in ("/", ""):
                return cg.mount, os.path.join(cg.mount, "cgroup.subtree_control")
            d = os.path.dirname(d)

    def apply(self, journal: Journal | None = None) -> None:
        if self._applied:
            raise KnobError(f"{self.label}: already applied")
        cg = self.cg = memory_cgroup()
        parent, enable = self._parent(cg)
        self.old = _read_raw(os.path.join(cg.own, cg.limit_file), self.label)
        MemoryLimit._serial += 1
        path = os.path.join(parent, f"iolab-{self.name}-{os.getpid()}-{MemoryLimit._serial}")
        if enable:
            # enabling a controller at the root is left in place: disabling it
            # again would fail while any other cgroup uses it
            _write_raw(enable, "+memory", self.label)
        self._journal_add(journal, {"kind": "cgroup", "path": path, "home": os.path.join(cg.own, "cgroup.procs")})
        try:
            os.mkdir(path)
        except OSError as exc:
            self._journal_done()
            raise KnobError(f"{self.label}: cannot create cgroup {path}: {_errtext(exc)}") from None
        self.path = path
        self._applied = True
        limit_file = os.path.join(path, cg.limit_file)
        _write_raw(limit_file, str(self.limit), self.label)
        self.new = _read_raw(limit_file, self.label)
        if self.new != str(self.limit):
            raise KnobError(f"{self.label}: wanted {self.limit}, read back {self.new!r} from {limit_file}")

    def usage(self) -> dict[str, float]:
        """Peak memory use and OOM kills of the cgroup so far (read before restore)."""
        if not self._applied or self.path is None or self.cg is None:
            return {}
        out: dict[str, float] = {}
        peak = "memory.max_usage_in_bytes" if self.cg.version == 1 else "memory.peak"
        events = "memory.oom_control" if self.cg.version == 1 else "memory.events"
        if os.path.exists(os.path.join(self.path, peak)):
            out["cgroup.memory_peak_bytes"] = float(_read_raw(os.path.join(self.path, peak), self.label))
        for line in _read_raw(os.path.join(self.path, events), self.label).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                out["cgroup.oom_kill"] = float(value)
        return out

    def restore(self) -> None:
        if not self._applied:
            return
        assert self.path is not None and self.cg is not None
        _remove_cgroup(self.path, os.path.join(self.cg.own, "cgroup.procs"), self.label)
        self._applied = False
        self._journal_done()

    def place(self, placement: Placement) -> None:
        placement.cgroup_procs.append(self.procs_path)


# --------------------------------------------------------------------------
# CPU pinning


def format_cpus(cpus: set[int]) -> str:
    """{0, 1, 2, 5} -> "0-2,5" (the kernel's cpulist format)."""
    out, run = [], []
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


class CpuPin(Knob):
    """Pin the workload to CPUs. Changes no kernel state; only the placement."""

    kind = "cpus"

    def __init__(self, cpus: set[int] | Sequence[int]):
        super().__init__()
        cpus = set(cpus)
        if not cpus or not all(isinstance(c, int) and c >= 0 for c in cpus):
            raise ValueError(f"cpus must be a non-empty set of CPU numbers, not {cpus!r}")
        self.cpus = cpus
        self.label = f"cpu pin {format_cpus(cpus)}"

    def show(self) -> str:
        return format_cpus(os.sched_getaffinity(0))

    def apply(self, journal: Journal | None = None) -> None:
        allowed = os.sched_getaffinity(0)
        if not self.cpus <= allowed:
            raise KnobError(
                f"{self.label}: CPU(s) {format_cpus(self.cpus - allowed)} not available "
                f"(this process may run on {format_cpus(allowed)})"
            )
        self.old = format_cpus(allowed)
        self.new = format_cpus(self.cpus)
        self._applied = True

    def restore(self) -> None:
        self._applied = False

    def place(self, placement: Placement) -> None:
        placement.cpus = set(self.cpus) if placement.cpus is None else placement.cpus & self.cpus


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


# --------------------------------------------------------------------------
# Applying a set of knobs for one cell


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
    jrnl = _as_journal(journal)
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
