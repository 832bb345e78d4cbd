"""What else the host did while a cell's workload ran (always on).

Metrics (deltas over the workload):

host.steal_s
    CPU time the hypervisor gave to others (/proc/stat ``steal``), summed
    over CPUs.
host.other_cpu_s
    user + system CPU time of processes that are neither iolab and its
    children (the workload) nor kernel threads, from /proc/<pid>/stat at
    start and stop (a process that started after the start counts with its
    whole time; one that came and went between the two readings is missed,
    so this is a lower bound).
host.disk_busy_ms
    time the host block device behind a loop target's image file was busy
    (/proc/diskstats io_ticks); absent when the image is in RAM (tmpfs has
    no device) or the target is not a loop device.

iolab.analysis.diagnostics marks a round disturbed from these, never from the
measured values.
"""

from __future__ import annotations

import os
from pathlib import Path

from iolab.collectors.base import Collector

PF_KTHREAD = 0x00200000
TICKS = os.sysconf("SC_CLK_TCK")


def _steal_ticks() -> int:
    fields = Path("/proc/stat").read_text().splitlines()[0].split()
    return int(fields[8]) if len(fields) > 8 else 0


def _processes() -> dict[int, tuple[int, int, int]]:
    """pid -> (ppid, flags, utime + stime ticks) of every process now."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        rest = text[text.rindex(")") + 2:].split()
        found[int(entry.name)] = (int(rest[1]), int(rest[6]), int(rest[11]) + int(rest[12]))
    return found


def _ours(processes: dict[int, tuple[int, int, int]]) -> set[int]:
    """This process, its ancestors up to init, and all its descendants."""
    me = os.getpid()
    mine = {me}
    pid = me
    while pid in processes and processes[pid][0] > 1:
        pid = processes[pid][0]
        mine.add(pid)
    changed = True
    while changed:
        changed = False
        for pid, (ppid, _, _) in processes.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                changed = True
    return mine


def _other_ticks(processes: dict[int, tuple[int, int, int]]) -> dict[int, int]:
    mine = _ours(processes)
    return {pid: ticks for pid, (_, flags, ticks) in processes.items()
            if pid not in mine and not flags & PF_KTHREAD}


def backing_disk(device: str | None) -> str | None:
    """The host disk (whole device name) holding a loop device's image file, if any."""
    if not device:
        return None
    backing = Path("/sys/block", device, "loop", "backing_file")
    try:
        image = backing.read_text().strip()
        st = os.stat(image.removesuffix(" (deleted)"))
    except OSError:
        return None
    if os.major(st.st_dev) == 0:  # tmpfs and other virtual filesystems: RAM
        return None
    sysdir = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve()
    if (sysdir / "partition").exists():
        sysdir = sysdir.parent
    return sysdir.name if sysdir.exists() else None


def _io_ticks(disk: str) -> int | None:
    for line in Path("/proc/diskstats").read_text().splitlines():
        fields = line.split()
        if len(fields) > 12 and fields[2] == disk:
            return int(fields[12])
    return None


class HostNoise(Collector):
    name = "host_noise"

    def __init__(self, device: str | None = None):
        self.disk = backing_disk(device)
        self._start: tuple[int, dict[int, int], int | None] | None = None

    def start(self) -> None:
        self._start = (_steal_ticks(), _other_ticks(_processes()), _io_ticks(self.disk) if self.disk else None)

    def stop(self) -> dict[str, float]:
        assert self._start is not None, "stop() before start()"
        steal, before, io = self._start
        after = _other_ticks(_processes())
        other = sum(max(0, ticks - before.get(pid, 0)) for pid, ticks in after.items())
        out = {"host.steal_s": (_steal_ticks() - steal) / TICKS, "host.other_cpu_s": other / TICKS}
        if self.disk and io is not None:
            now = _io_ticks(self.disk)
            if now is not None:
                out["host.disk_busy_ms"] = float(now - io)
        return out
