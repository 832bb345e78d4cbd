"""Guests restored from a state saved after their start-up ([vm] start = "saved").

A cold boot of a cell's VM under TCG spends about 3 of its 5.5 s of QEMU's
CPU before the first cell: the kernel's boot, Python's start and the
executor's imports (bench/data/pace-*). Here a boot's guest starts from a
state QEMU saved at the point where those are done.

QEMU refuses to save a guest that has a 9p share mounted, and a cold
guest's Python runs from the host's root over 9p. So a guest to be saved
boots with a second initrd after the kernel's initramfs: /pyroot, a copy of
every file the guest's Python maps or reads up to the end of the executor's
imports (guest_files: what a Python on this host loaded doing the same
imports), and /saved.sh, which starts that Python chrooted in /pyroot
(iolab.kernels.initramfs's init with iolab.saved=1). Its imports done, the
guest says so on the console (guest.SAVE_MARK) and waits; the host stops it
and migrates it to a file (QMP), then lets it run on and sends it a line
on its console (a socket): init then mounts the host's root over 9p onto
/pyroot (what Python mapped stays the copy it was loaded from), the
exchange dir, and tells Python to go on, which runs the cells as a cold
boot does. A later boot of the same key starts QEMU with ``-incoming``
from that file and sends the line once the guest runs.

Every boot of a run starts from a state of its own: the i-th boot of a
kernel in a run restores state i, made by the i-th boot of the first run
that had one (itself a cold boot that was saved, then ran its cells). The
boots' values then differ as cold boots' do (instructions mode's exact rule
compares rounds that booted apart, iolab.hosts.vm.variants); the same boot
of two runs starts from one state. Each sample says how its guest started
(env["vm"]["start"]: cold, saved in that boot, or restored, and which
state).

The states are a cache (~/.cache/iolab/vm-states) keyed by what went into
them: the kernel image's and the initrd's sha256 (the initramfs, and the
copied files with their contents: iolab's code among them), QEMU's version
and command line (with the boot's own paths left out), each disk's size.
Written to a partial file and renamed; a partial file of a process that is
gone (a killed run) is removed by the next save, and only the newest
KEEP_STATES states stay. Where a state cannot be made or used, the boot is a
cold one and the run says why once (stderr; env["vm"]["start"]["not_saved"]
of its samples, and the report's notes: iolab.report.footnotes.guest_starts);
the run never fails for it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from iolab.hosts.vm import guest as guest_side
from iolab.hosts.vm.boot import Boot
from iolab.hosts.vm.qemu import Disk, Saving, qemu_version
from iolab.kernels import Kernel
from iolab.kernels.initramfs import Cpio

FORMAT = 3  # bump when what goes into a state changes in a way its key does not show
KEEP_STATES = 16  # the newest states kept in the cache (each 60-100 MiB)
KEEP_INITRDS = 4
STRIP_FROM = 64 << 10  # shared objects from this size are copied without their debug sections
POLL_S = 0.01
FAILED_MARK = "iolab-guest: ended"  # on the console: the guest's Python ended before its go (saved.sh)
# what the guest's Python loads: the same imports on this host, then every file
# a module came from (its source and bytecode) and every file mapped
FILES_PROGRAM = r"""
import json, os, sys
sys.path += json.loads(sys.argv[1])
from iolab.hosts.vm import guest, guest_root
guest.unused_in_guest()
from iolab.cell import executor
from iolab.cell.cellspec import CellSpec
files = set()
for module in list(sys.modules.values()):
    for name in ("__file__", "__cached__"):
        path = getattr(module, name, None)
        if isinstance(path, str) and os.path.isfile(path):
            files.add(os.path.abspath(path))
for line in open("/proc/self/maps"):
    fields = line.split()
    if len(fields) >= 6 and fields[5].startswith("/") and os.path.isfile(fields[5]):
        files.add(fields[5])
print(json.dumps(sorted(files)))
"""
# what the dynamic loader and Python's start read that neither list shows
EXTRA_FILES = ("/etc/ld.so.cache", "/lib64/ld-linux-x86-64.so.2")


class SavedError(Exception):
    """A state cannot be made or used; the message says why."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base, "iolab", "vm-states")


@functools.cache
def guest_files(python: str, path: tuple[str, ...]) -> tuple[str, ...]:
    """The files the guest's Python maps or reads up to the end of the
    executor's imports: listed by a Python on this host doing the same
    imports (0.15 s), or the last list while none of its files changed (a
    change to what the guest imports changes a module that imports it)."""
    listed = cache_dir() / f"files-{hashlib.sha256(json.dumps([python, *path]).encode()).hexdigest()[:24]}.json"
    try:
        known = json.loads(listed.read_text())
        if all(_identity(name) == identity for name, identity in known.items()):
            return tuple(sorted(known))
    except (OSError, ValueError, AttributeError):
        pass
    # from /, as the guest's command runs: python -c puts its working directory first on the path
    done = subprocess.run([python, "-S", "-c", FILES_PROGRAM, json.dumps(list(path))], capture_output=True,
                          text=True, check=False, timeout=120, cwd="/",
                          env={"PYDANTIC_DISABLE_PLUGINS": "__all__", "PYTHONDONTWRITEBYTECODE": "1",
                               "LANG": "C.UTF-8", "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    if done.returncode != 0:
        raise SavedError(f"the guest's imports fail on this host: {done.stderr.strip()[-300:]}")
    venv = Path(python).parent.parent / "pyvenv.cfg"
    extra = [python, *EXTRA_FILES, *([str(venv)] if venv.exists() else [])]
    files = tuple(sorted(set(json.loads(done.stdout)) | {p for p in extra if os.path.exists(p)}))
    listed.parent.mkdir(parents=True, exist_ok=True)
    _write_once(listed, json.dumps({name: _identity(name) for name in files}).encode(), anew=True)
    return files


def _entries(files: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each file, every directory and symlink on the way to it (a symlink's
    target too), by path: ("dir" | "file", "") or ("link", target)."""
    found: dict[str, tuple[str, str]] = {}

    def add(path: str, depth: int = 0) -> None:
        if depth > 40:
            raise SavedError(f"too many symlinks on the way to {path}")
        parts = Path(path).parts[1:]
        for index in range(1, len(parts) + 1):
            here = "/" + "/".join(parts[:index])
            if os.path.islink(here):
                target = os.readlink(here)
                found[here] = ("link", target)
                rest = "/".join(parts[index:])
                add(os.path.normpath(os.path.join(os.path.dirname(here), target, rest)), depth + 1)
                return
            found.setdefault(here, ("file", "") if index == len(parts) and os.path.isfile(here) else ("dir", ""))

    for path in files:
        add(path)
        if ".so" in os.path.basename(path):  # the names the loader asks for (libffi.so.8 -> libffi.so.8.1.2)
            _library_names(path, add)
    for entry in sorted(os.listdir("/")):  # the host's top-level symlinks (/lib -> usr/lib) as they are
        if os.path.islink("/" + entry):
            found["/" + entry] = ("link", os.readlink("/" + entry))
    return found


def _library_names(path: str, add: Callable[[str], None]) -> None:
    """Add the symlinks beside a shared library that name it."""
    directory = os.path.dirname(path)
    real = os.path.realpath(path)
    for name in os.listdir(directory):
        link = os.path.join(directory, name)
        if os.path.islink(link) and os.path.realpath(link) == real:
            add(link)


def _contents(path: str) -> bytes:
    """A file's bytes for /pyroot; a shared object or program without its
    debug sections (objcopy --strip-debug: the same code and data; this
    host's libpython is 22 MiB with them, 6 MiB without), which the state
    would otherwise hold twice (the initrd and its unpacked copy)."""
    data = Path(path).read_bytes()
    if not data.startswith(b"\x7fELF") or len(data) < STRIP_FROM:
        return data
    with tempfile.TemporaryDirectory(prefix="iolab-strip-") as scratch:
        out = Path(scratch, "out")
        done = subprocess.run(["objcopy", "--strip-debug", path, str(out)], capture_output=True, check=False)
        return out.read_bytes() if done.returncode == 0 and out.exists() else data


def pyroot(files: Sequence[str], python: str, path: Sequence[str]) -> bytes:
    """The second initrd: /pyroot (the files, at their paths under it, and
    the mount points init uses) and /saved.sh, the guest's command."""
    archive = Cpio()
    for name in ("pyroot/run", "pyroot/proc", "pyroot/sys", "pyroot/dev", "pyroot/newroot"):
        archive.directory(name)
    for where, (kind, target) in sorted(_entries(files).items()):
        name = "pyroot" + where
        if kind == "dir":
            archive.directory(name)
        elif kind == "link":
            archive.directory(str(Path(name).parent))
            archive.symlink(name, target)
        else:
            archive.directory(str(Path(name).parent))
            archive.file(name, _contents(where), 0o755 if os.access(where, os.X_OK) else 0o644,
                         int(os.stat(where).st_mtime))
    command = ("export PYDANTIC_DISABLE_PLUGINS=__all__ PYTHONDONTWRITEBYTECODE=1\n"
               f"chroot /pyroot {shlex.quote(python)} -S -c {shlex.quote(guest_side.program(list(path)))} "
               f"--saved /run/iolab || {{ rc=$?; echo {FAILED_MARK} $rc; exit $rc; }}\n")
    archive.file("saved.sh", command.encode(), 0o755)
    return archive.finish()


@functools.cache
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


def _write_once(path: Path, data: bytes, anew: bool = False) -> None:
    """A cache file written whole or not at all (replacing one there: ``anew``)."""
    if path.exists() and not anew:
        return
    partial = path.with_name(f"{path.name}.partial-{os.getpid()}-{threading.get_ident()}")
    partial.write_bytes(data)
    partial.rename(path)


def _identity(path: str) -> list[int]:
    stat = os.stat(path)
    return [stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def initrd(kernel: Kernel, python: str, path: Sequence[str]) -> Path:
    """The kernel's initramfs with the guest's Python root after it (the
    kernel unpacks both), in the cache under a hash of what it is made of:
    each file's path, inode, size, modification and change times."""
    files = guest_files(python, tuple(path))
    made_of = {"format": FORMAT, "python": python, "path": list(path), "initramfs": str(kernel.initramfs),
               "files": {name: _identity(name) for name in [str(kernel.initramfs), *files]}}
    out = cache_dir() / f"initrd-{hashlib.sha256(json.dumps(made_of).encode()).hexdigest()[:32]}.cpio"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        _write_once(out, kernel.initramfs.read_bytes() + pyroot(files, python, path))
    return out


def state_key(kernel: Kernel, argv: Sequence[str], disks: Sequence[Disk], qemu: str) -> str:
    """What a state is keyed by: argv is the boot's command line with its
    own paths replaced (Placeholders), its initrd named by its hash."""
    what = {"format": FORMAT, "qemu": qemu_version(qemu), "argv": list(argv),
            "kernel_sha256": sha256(kernel.image),
            "disks": [os.path.getsize(disk.path) if disk.image else disk.path for disk in disks]}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reclaim(directory: Path) -> None:
    """Partial files of processes that are gone, and all but the newest states and initrds."""
    for partial in directory.glob("*.partial-*"):
        pid = partial.name.rsplit(".partial-", 1)[1].split("-")[0]
        if not pid.isdigit() or not _alive(int(pid)):
            partial.unlink(missing_ok=True)
    for pattern, keep in (("*.state", KEEP_STATES), ("initrd-*.cpio", KEEP_INITRDS)):
        files = sorted(directory.glob(pattern), key=lambda p: p.stat().st_mtime if p.exists() else 0, reverse=True)
        for old in files[keep:]:
            old.unlink(missing_ok=True)


class QMP:
    """QEMU's machine protocol over its unix socket: one command at a time, events skipped."""

    def __init__(self, path: Path, alive: Callable[[], bool], deadline: float) -> None:
        while True:
            self.sock = socket.socket(socket.AF_UNIX)
            try:
                connect(self.sock, path)
                break
            except OSError:
                self.sock.close()
                if not alive() or time.monotonic() > deadline:
                    raise SavedError("QEMU's QMP socket did not open") from None
                time.sleep(POLL_S)
        self.sock.settimeout(max(1.0, deadline - time.monotonic()))
        self.file = self.sock.makefile("rw")
        self.file.readline()
        self.call("qmp_capabilities")

    def call(self, command: str, **arguments: Any) -> Any:
        self.file.write(json.dumps({"execute": command, **({"arguments": arguments} if arguments else {})}) + "\n")
        self.file.flush()
        while True:
            line = self.file.readline()
            if not line:
                raise SavedError(f"QEMU closed QMP during {command}")
            reply = json.loads(line)
            if "error" in reply:
                raise SavedError(f"QMP {command}: {reply['error'].get('desc')}")
            if "return" in reply:
                return reply["return"]

    def close(self) -> None:
        self.file.close()
        self.sock.close()


@dataclass
class Plan:
    """One boot's part in the saved states: the QEMU side (Saving) and the state's file."""

    saving: Saving
    state: Path
    restoring: bool
    where: Path  # QEMU's working directory, where its sockets are


class SavedStates:
    """The saved states of one kernel's VM (iolab.hosts.vm.host.VMHost): which
    state each boot of the run starts from, making the ones missing."""

    def __init__(self, kernel: Kernel, python: str, path: Sequence[str], qemu: str) -> None:
        self.kernel = kernel
        self.python = python
        self.path = list(path)
        self.qemu = qemu
        self.boots = 0
        self.lock = threading.Lock()
        self.initrd: Path | None = None
        self.broken: str | None = None  # why this run's boots of the kernel are cold

    def plan(self, xchg: Path, disks: Sequence[Disk],
             argv_for: Callable[[Path, Sequence[Disk], Saving], list[str]]) -> Plan | None:
        """The next boot's plan, or None (a cold boot: the states cannot be made here)."""
        with self.lock:
            if self.broken is None and not all(disk.image for disk in disks):
                # a device's contents are not the state's: the guest read it at its start
                self.failed("a guest with a device as its disk is not saved")
            if self.broken is not None:
                return None
            index = self.boots
            self.boots += 1
            try:
                if self.initrd is None:
                    self.initrd = initrd(self.kernel, self.python, self.path)
                # the boot's own paths left out: its exchange dir, sockets, disk images (fresh, of one size)
                placeholders = argv_for(Path("/XCHG"), [replace(disk, path=f"/DISK{index}") for index, disk in
                                                        enumerate(disks)], Saving(self.initrd, Path("/C"), Path("/Q")))
                key = state_key(self.kernel, placeholders, disks, self.qemu)
            except (OSError, SavedError, subprocess.SubprocessError, ValueError) as error:
                self.failed(f"the guest's saved state cannot be made: {error}")
                return None
        state = cache_dir() / f"{key}-{index}.state"
        # the sockets by names relative to QEMU's directory (xchg's parent; Plan.where): a socket's
        # address takes 108 bytes at most, and a scratch dir's path may be longer
        return Plan(Saving(self.initrd, Path(f"{xchg.name}.console"), Path(f"{xchg.name}.qmp"),
                           state if state.exists() else None), state, state.exists(), xchg.parent)

    def failed(self, reason: str) -> None:
        """No more saved states for this kernel in this run: said once, its later boots cold."""
        if self.broken is None:
            self.broken = reason
            print(f"iolab: {reason}; cold boots for {self.kernel.name} in this run", file=sys.stderr)

    def begin(self, plan: Plan, boot: Boot, alive: Callable[[], bool]) -> None:
        """Bring a launched boot to where its guest runs on: restored, or
        saved then continued; then send the go line. SavedError: the boot is
        of no use (the caller ends QEMU and boots cold)."""
        deadline = boot.started + boot.boot_timeout
        try:
            qmp = QMP(plan.where / plan.saving.qmp, alive, deadline)
            try:
                if plan.restoring:
                    self._restored(qmp, alive, deadline)
                    os.utime(plan.state)
                    boot.start = {"kind": "restored", "state": plan.state.name}
                else:
                    seconds = self._save(qmp, boot, plan.state, alive, deadline)
                    boot.start = {"kind": "saved", "state": plan.state.name, "save_s": round(seconds, 3)}
            finally:
                qmp.close()
            go(plan.where / plan.saving.console)
        except (OSError, ValueError) as error:  # QEMU gone, a socket closed, a reply not JSON
            raise SavedError(f"QEMU: {error}") from None
        boot.marks["go"] = round(time.monotonic() - boot.started, 3)

    @staticmethod
    def _restored(qmp: QMP, alive: Callable[[], bool], deadline: float) -> None:
        while True:
            status = qmp.call("query-status")["status"]
            if status == "running":
                return
            if status in ("paused", "postmigrate"):
                qmp.call("cont")
            if not alive() or time.monotonic() > deadline:
                raise SavedError(f"the restored guest did not run (QEMU's status: {status})")
            time.sleep(POLL_S)

    def _save(self, qmp: QMP, boot: Boot, state: Path, alive: Callable[[], bool], deadline: float) -> float:
        console = boot.xchg / "console.log"
        while guest_side.SAVE_MARK not in (text := console.read_text(errors="replace") if console.exists() else ""):
            if not alive() or time.monotonic() > deadline or FAILED_MARK in text:
                raise SavedError("the guest to be saved did not come up; console: "
                                 + " | ".join(boot.console_tail(4)))
            time.sleep(POLL_S)
        began = time.monotonic()
        boot.marks["save"] = round(began - boot.started, 3)
        state.parent.mkdir(parents=True, exist_ok=True)
        reclaim(state.parent)
        partial = state.with_name(f"{state.name}.partial-{os.getpid()}-{threading.get_ident()}")
        qmp.call("stop")
        qmp.call("migrate", uri=f"exec:cat > {shlex.quote(str(partial))}")
        while (status := qmp.call("query-migrate").get("status")) not in ("completed", "failed", "cancelled"):
            if not alive() or time.monotonic() > deadline:
                break
            time.sleep(POLL_S)
        if status != "completed":
            partial.unlink(missing_ok=True)
            raise SavedError(f"QEMU did not save the guest (migration {status})")
        partial.rename(state)
        qmp.call("cont")
        return time.monotonic() - began


def go(console: Path) -> None:
    """The go line on the guest's console (its init reads it); the socket is
    closed at once, so QEMU never waits on a reader of the console's output
    (it keeps writing it to its log)."""
    with socket.socket(socket.AF_UNIX) as sock:
        connect(sock, console)
        sock.sendall(b"go\n")


def connect(sock: socket.socket, path: Path) -> None:
    """Connect to a unix socket whose path may be longer than a socket's
    address takes (108 bytes): through its directory's descriptor."""
    directory = os.open(path.parent, os.O_PATH)
    try:
        sock.connect(f"/proc/self/fd/{directory}/{path.name}")
    finally:
        os.close(directory)
