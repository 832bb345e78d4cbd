"""A memory cgroup with a limit, for the workload only (cgroup v1 or v2)."""

from __future__ import annotations

import errno
import os
import re
import time
from dataclasses import dataclass

from iolab.knobs.base import Knob, KnobError, Placement, errtext, read_raw, write_raw
from iolab.journal import Journal, owner_alive

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
    by the caller, as it needs the live file). /proc/cgroups lists only the
    controllers that have v1 files: a kernel without CONFIG_MEMCG_V1 (7.x)
    leaves "memory" out of it altogether, so its absence says nothing about
    v2 (Documentation/admin-guide/cgroup-v2.rst: "/proc/cgroups is
    meaningless for v2"). A listed "memory" with enabled 0 is a kernel
    booted with cgroup_disable=memory.
    """
    listed, enabled, hierarchy = False, False, 0
    for line in proc_cgroups.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "memory":
            listed, hierarchy, enabled = True, int(parts[1]), parts[3] == "1"
    if listed and not enabled:
        raise KnobError("cgroup memory limit: the memory controller is disabled (/proc/cgroups; "
                        "cgroup_disable=memory on the kernel command line?)")
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
        controllers = read_raw(os.path.join(found.mount, "cgroup.controllers"), "cgroup memory limit").split()
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
                write_raw(home, pid, label)
                moved += 1
            except KnobError:
                if owner_alive(int(pid), None):
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
                raise KnobError(f"{label}: cannot remove cgroup {path}: {errtext(exc)}") from None
            time.sleep(0.02)
    return f"removed cgroup {path}" + (f" after moving {moved} process(es) to {home}" if moved else "")


def undo_cgroup(undo: dict[str, str], label: str) -> str:
    return _remove_cgroup(undo["path"], undo["home"], label)


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
        if self._applied and self.path:
            return read_raw(os.path.join(self.path, cg.limit_file), self.label)
        return self._own_limit(cg)

    def _own_limit(self, cg: MemoryCgroup) -> str:
        """The limit of the cgroup iolab runs in; the v2 root cgroup (a VM
        guest's init runs there) has no memory.max: no limit."""
        path = os.path.join(cg.own, cg.limit_file)
        if cg.version == 2 and os.path.normpath(cg.own) == os.path.normpath(cg.mount) and not os.path.exists(path):
            return "max"
        return read_raw(path, self.label)

    def _parent(self, cg: MemoryCgroup) -> tuple[str, str | None]:
        """(directory to create the cgroup in, root subtree_control we enable memory in or None)."""
        if cg.version == 1:
            return cg.own, None
        d = cg.own
        while True:
            ctl = os.path.join(d, "cgroup.subtree_control")
            if "memory" in read_raw(ctl, self.label).split():
                return d, None
            if os.path.normpath(d) == os.path.normpath(cg.mount) or d in ("/", ""):
                return cg.mount, os.path.join(cg.mount, "cgroup.subtree_control")
            d = os.path.dirname(d)

    def apply(self, journal: Journal | None = None) -> None:
        if self._applied:
            raise KnobError(f"{self.label}: already applied")
        cg = self.cg = memory_cgroup()
        parent, enable = self._parent(cg)
        self.old = self._own_limit(cg)
        MemoryLimit._serial += 1
        path = os.path.join(parent, f"iolab-{self.name}-{os.getpid()}-{MemoryLimit._serial}")
        if enable:
            # enabling a controller at the root is left in place: disabling it
            # again would fail while any other cgroup uses it
            write_raw(enable, "+memory", self.label)
        self._journal_add(journal, {"kind": "cgroup", "path": path, "home": os.path.join(cg.own, "cgroup.procs")})
        try:
            os.mkdir(path)
        except OSError as exc:
            self._journal_done()
            raise KnobError(f"{self.label}: cannot create cgroup {path}: {errtext(exc)}") from None
        self.path = path
        self._applied = True
        limit_file = os.path.join(path, cg.limit_file)
        write_raw(limit_file, str(self.limit), self.label)
        self.new = read_raw(limit_file, self.label)
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
            out["cgroup.memory_peak_bytes"] = float(read_raw(os.path.join(self.path, peak), self.label))
        for line in read_raw(os.path.join(self.path, events), self.label).splitlines():
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


