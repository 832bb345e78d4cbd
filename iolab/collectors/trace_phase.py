"""Duration of a kernel phase bounded by two tracepoints, from tracefs.

Config: {"name": "cp", "start": "f2fs:f2fs_write_checkpoint",
         "end": "f2fs:f2fs_write_checkpoint", "start_filter": "phase == 0",
         "end_filter": "phase == 2", "pair": "global", "buffer_size_kb": 4096}

Each end of the phase gets its own tracefs instance
(instances/iolab-<pid>-<name>-start and -end), because start and end are
often the same event told apart by a filter, and a filter is per event
and instance. Both instances use the "mono" trace clock, so their
timestamps are comparable across CPUs, and the "raw" output option, which
prints each event as "pid cpu timestamp_ns type: id" (full ns resolution;
the default output has only microseconds). Tracing is switched on at the
end of start() and off at the start of stop(); `trace` is read after the
workload. The instances are removed in close().

Filters use the tracefs filter syntax (Documentation/trace/events.rst),
e.g. 'comm == "fio"' or 'dev == {devt}', where {devt} stands for the
kernel dev_t ((major << 20) | minor) of the target's block device.

Pairing ("pair"):
  "global" (default): an end closes the oldest open start (FIFO), whatever
      the task. Right for phases that do not overlap (a checkpoint) and, as
      a sum, for overlapping ones: when every start finds its end, the sum of
      durations is sum(end times) - sum(start times) whichever pairs form.
  "pid": an end closes the open start of the same task (the thread id of
      the context that hit the tracepoint). Right for a syscall's enter/exit;
      wrong for events hit in interrupt context (block_rq_complete), whose
      pid is whatever task was interrupted.

Emits:
  phase.<name>_ns         sum of the paired durations
  phase.<name>_count      number of pairs
  phase.<name>_last_ns    the duration of the last pair to end (e.g. the
                          checkpoint of a workload's final sync); absent
                          when no pair formed
  phase.<name>_unmatched  starts without an end (e.g. still open at stop)
                          and ends without a start
A ring buffer that overflowed (per_cpu/cpuN/stats "overrun", "commit
overrun" or "dropped events" > 0) is a CollectorError: a phase count from
a buffer that lost events is silently low.
"""

from __future__ import annotations

import errno
import os
import re
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from iolab.collectors.base import Collector, CollectorError
from iolab.collectors.tracefs import tracefs_acquire, tracefs_release
from iolab import journal

def _write(path: str, value: str, what: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    except OSError as exc:
        raise CollectorError(f"tracefs: cannot open {path} ({what}): {os.strerror(exc.errno or 0)}") from None
    try:
        os.write(fd, value.encode())
    except OSError as exc:
        detail = ""
        if path.endswith("/filter"):  # the kernel explains a bad filter when read back
            try:
                with open(path) as f:
                    detail = " | ".join(x.strip() for x in f.read().splitlines() if x.strip())
            except OSError:
                pass
        raise CollectorError(
            f"tracefs: writing {value!r} to {path} ({what}) failed: {os.strerror(exc.errno or 0)}"
            + (f": {detail}" if detail else "")
        ) from None
    finally:
        os.close(fd)


def dev_t(device: str) -> int:
    """The kernel's dev_t of a block device as tracepoints record it: (major << 20) | minor."""
    name = os.path.basename(os.path.realpath(device) if "/" in device else device)
    try:
        with open(f"/sys/class/block/{name}/dev") as f:
            major, minor = f.read().strip().split(":")
    except OSError:
        raise ValueError(f"no block device {name!r} in /sys/class/block") from None
    return (int(major) << 20) | int(minor)


def parse_raw_trace(text: str) -> tuple[list[tuple[int, int]], int]:
    """[(timestamp_ns, pid)] from a `trace` file in raw format, and the number
    of events it says were lost ("CPU:N [LOST M EVENTS]" lines)."""
    events, lost = [], 0
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.search(r"\[LOST (\d+) EVENTS\]", line)
        if m:
            lost += int(m.group(1))
            continue
        parts = line.split(None, 3)
        if len(parts) >= 3 and parts[0].isdigit():
            events.append((int(parts[2]), int(parts[0])))
    return events, lost


def pair_phases(
    starts: Iterable[tuple[int, int]], ends: Iterable[tuple[int, int]], mode: str
) -> tuple[int, int, int]:
    """(total ns, pairs, unmatched) for start and end events [(ts, pid)]."""
    durations, unmatched = paired_durations(starts, ends, mode)
    return sum(durations), len(durations), unmatched


def paired_durations(
    starts: Iterable[tuple[int, int]], ends: Iterable[tuple[int, int]], mode: str
) -> tuple[list[int], int]:
    """([duration ns of each pair, in the order the pairs end], unmatched)."""
    merged = sorted([(ts, 0, pid) for ts, pid in starts] + [(ts, 1, pid) for ts, pid in ends])
    durations: list[int] = []
    unmatched = 0
    fifo: deque[int] = deque()
    open_by_pid: dict[int, int] = {}
    for ts, is_end, pid in merged:
        if mode == "global":
            if not is_end:
                fifo.append(ts)
            elif fifo:
                durations.append(ts - fifo.popleft())
            else:
                unmatched += 1
        else:
            if not is_end:
                if pid in open_by_pid:
                    unmatched += 1
                open_by_pid[pid] = ts
            elif pid in open_by_pid:
                durations.append(ts - open_by_pid.pop(pid))
            else:
                unmatched += 1
    return durations, unmatched + len(fifo) + len(open_by_pid)


def lost_events(instance: str) -> list[tuple[int, int]]:
    """[(cpu, events lost)] from an instance's per_cpu/cpu*/stats."""
    out = []
    per_cpu = os.path.join(instance, "per_cpu")
    for cpu_dir in sorted(os.listdir(per_cpu)):
        if not cpu_dir.startswith("cpu"):
            continue
        with open(os.path.join(per_cpu, cpu_dir, "stats")) as f:
            stats = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        lost = sum(int(stats.get(k, "0").split()[0]) for k in ("overrun", "commit overrun", "dropped events"))
        if lost:
            out.append((int(cpu_dir[3:]), lost))
    return out


class TracePhase(Collector):
    name = "phase"

    def __init__(
        self,
        name: str,
        start: str,
        end: str,
        start_filter: str | None = None,
        end_filter: str | None = None,
        pair: str = "global",
        buffer_size_kb: int = 4096,
        device: str | None = None,
    ):
        if not re.fullmatch(r"[A-Za-z0-9_]+", name):
            raise ValueError(f"phase: name must be letters, digits and '_': {name!r}")
        if pair not in ("global", "pid"):
            raise ValueError(f"phase {name}: pair must be 'global' or 'pid', not {pair!r}")
        if not isinstance(buffer_size_kb, int) or buffer_size_kb <= 0:
            raise ValueError(f"phase {name}: buffer_size_kb must be a positive integer")
        self.phase = name
        self.pair = pair
        self.buffer_size_kb = buffer_size_kb
        self.ends: list[tuple[str, str, str | None]] = []
        for role, event, flt in (("start", start, start_filter), ("end", end, end_filter)):
            m = re.fullmatch(r"([A-Za-z0-9_]+)[:/]([A-Za-z0-9_]+)", event or "")
            if not m:
                raise ValueError(f"phase {name}: {role} must be a tracepoint 'system:event', not {event!r}")
            if flt and "{devt}" in flt:
                if not device:
                    raise ValueError(f"phase {name}: {role}_filter uses {{devt}} and the target has no device")
                flt = flt.replace("{devt}", str(dev_t(device)))
            self.ends.append((role, f"{m.group(1)}/{m.group(2)}", flt))
        self._root: str | None = None
        self._instances: list[str] = []
        self._entries: dict[str, str | None] = {}  # run journal entry of each instance

    @classmethod
    def from_config(cls, value: Any, device: str | None) -> list[Collector]:
        items = value if isinstance(value, list) else [value]
        out: list[Collector] = []
        for item in items:
            if not isinstance(item, dict):
                raise ValueError(f"phase: expected a table with name, start and end, not {item!r}")
            known = {"name", "start", "end", "start_filter", "end_filter", "pair", "buffer_size_kb"}
            extra = set(item) - known
            if extra:
                raise ValueError(f"phase: unknown key(s) {sorted(extra)}; known: {', '.join(sorted(known))}")
            missing = {"name", "start", "end"} - set(item)
            if missing:
                raise ValueError(f"phase: missing {', '.join(sorted(missing))}")
            out.append(cls(**item, device=device))
        return out

    def start(self) -> None:
        self._root = tracefs_acquire()
        for role, event, flt in self.ends:
            inst = os.path.join(self._root, "instances", f"iolab-{os.getpid()}-{self.phase}-{role}")
            run_journal = journal.current()  # a killed run's instance (events on) is reclaimed
            entry = run_journal.add(f"tracefs instance {inst}", {"kind": "tracefs_instance", "path": inst}) \
                if run_journal else None
            try:
                os.mkdir(inst)
            except OSError as exc:
                if run_journal and entry:
                    run_journal.discard(entry)
                raise CollectorError(f"tracefs: cannot create instance {inst}: {os.strerror(exc.errno or 0)}") from None
            self._instances.append(inst)
            self._entries[inst] = entry
            _write(f"{inst}/tracing_on", "0", "pause")
            _write(f"{inst}/buffer_size_kb", str(self.buffer_size_kb), "buffer size")
            _write(f"{inst}/trace_clock", "mono", "clock")
            _write(f"{inst}/options/raw", "1", "raw output")
            evdir = f"{inst}/events/{event}"
            if not os.path.isdir(evdir):
                raise CollectorError(
                    f"phase {self.phase}: no tracepoint {event.replace('/', ':')} in this kernel "
                    "(module not loaded, or a different kernel version?)"
                )
            if flt:
                _write(f"{evdir}/filter", flt, f"{role} filter")
            _write(f"{evdir}/enable", "1", f"{role} event")
        for inst in self._instances:
            _write(f"{inst}/tracing_on", "1", "start tracing")

    def stop(self) -> dict[str, float]:
        if len(self._instances) != 2:
            raise CollectorError(f"phase {self.phase}: stop() without start()")
        for inst in self._instances:
            _write(f"{inst}/tracing_on", "0", "stop tracing")
        found = []
        for inst in self._instances:
            lost = lost_events(inst)
            with open(f"{inst}/trace") as f:
                events, lost_lines = parse_raw_trace(f.read())
            if lost or lost_lines:
                total = sum(n for _, n in lost) or lost_lines
                cpus = ",".join(str(c) for c, _ in lost) or "?"
                raise CollectorError(
                    f"tracefs lost {total} events on cpu {cpus} (phase {self.phase}, "
                    f"{os.path.basename(inst)}); enlarge buffer_size_kb (now {self.buffer_size_kb})"
                )
            found.append(events)
        durations, unmatched = paired_durations(found[0], found[1], self.pair)
        p = f"phase.{self.phase}"
        out = {f"{p}_ns": float(sum(durations)), f"{p}_count": float(len(durations)),
               f"{p}_unmatched": float(unmatched)}
        if durations:
            out[f"{p}_last_ns"] = float(durations[-1])
        return out

    def close(self) -> None:
        failures = []
        while self._instances:
            inst = self._instances.pop()
            deadline = time.monotonic() + 5.0
            while os.path.isdir(inst):
                try:
                    os.rmdir(inst)
                except OSError as exc:
                    if exc.errno == errno.EBUSY and time.monotonic() < deadline:
                        time.sleep(0.05)
                        continue
                    failures.append(f"cannot remove instance {inst}: {os.strerror(exc.errno or 0)}")
                    break
            entry, run_journal = self._entries.pop(inst, None), journal.current()
            if entry and run_journal and not os.path.isdir(inst):
                run_journal.discard(entry)
        if self._root is not None:
            self._root = None
            tracefs_release()
        if failures:
            raise CollectorError("tracefs: " + "; ".join(failures))
