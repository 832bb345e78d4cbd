"""Event counts, system-wide, from `perf stat -a`.

perf runs as a subprocess for the whole cell but counts only inside the
window: it starts with its events disabled (-D -1) and start()/stop() send
"enable"/"disable" over its control pipe (--control fd:CTL,ACK) and wait
for its "ack", so perf's own start-up and exit are not counted. Then
SIGINT makes it write the counts as CSV (-x,) to a file. For
tracepoints tracefs is mounted first (iolab.collectors.tracefs), so the
mount perf would otherwise make for good is undone at close().

Emits `perf.<event>` per event as perf prints it, e.g.
perf.block:block_rq_complete; a wildcard (block:*) gives one metric per
event it matches. An event may also be a table with a tracepoint filter
and a name: {event = "block:block_rq_complete", filter = "dev == {devt}",
name = "rq_complete"} counts only the target's requests ({devt} is the
target's dev_t as tracepoints record it) and emits perf.rq_complete.
{kprobe = "bio_complete_work_fn", name = "work_runs"} counts the calls of a
kernel function: iolab creates the kprobe event for the cell and removes it
after (iolab.collectors.kprobes), and emits perf.work_runs. "<not supported>" or "<not counted>", an event that was
not counted for the whole window, or an event perf does not know is a
CollectorError naming it. Tracepoints work on this host; hardware counters
(cycles, instructions) need a PMU, which VMs often lack.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iolab.collectors import kprobes
from iolab.collectors.base import Collector, CollectorError
from iolab.collectors.trace_phase import dev_t
from iolab.collectors.tracefs import tracefs_acquire, tracefs_release
from iolab import process

ACK_TIMEOUT = 20.0  # s; perf opens one counter per event and CPU before it acks
_EVENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_:.*/=,\-]*")

GUEST_MARK = "iolab.bus="  # on the kernel command line of every iolab VM guest (iolab.hosts.vm.qemu)


def ack_timeout(cmdline: str = "/proc/cmdline") -> float | None:
    """How long to wait for perf's "ack" by this machine's clock: ACK_TIMEOUT,
    or no limit in an iolab VM guest. There the host limits the cell in its own
    real time ([vm] timeout), and the guest's clock is no measure of a wait: in
    instructions mode (-icount sleep=off) an idle guest's clock jumps to its next
    timer, so while perf waits for pages the host serves (9p) the guest's seconds
    pass in an instant (measured in a 1-vCPU 7.3 guest: the "enable" handshake
    took 0.05 to 18.9 guest s, and 4 of 16 cells ran out of 20 s)."""
    try:
        with open(cmdline) as handle:
            guest = GUEST_MARK in handle.read()
    except OSError:
        guest = False
    return None if guest else ACK_TIMEOUT


def _tail(path: str, lines: int = 4) -> str:
    try:
        with open(path, errors="replace") as f:
            text = [x.strip() for x in f.read().splitlines() if x.strip()]
    except OSError:
        return "(no output)"
    text = [x for x in text if not x.startswith("Events ")]
    return " / ".join(text[-lines:]) or "(no output)"


def parse_perf_csv(text: str) -> dict[str, tuple[str, float]]:
    """event -> (raw value field, percentage of the window it was counted)
    from `perf stat -x,` output (value,unit,event,run time,percent,...)."""
    out: dict[str, tuple[str, float]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 5:
            continue  # "Events enabled" and other messages
        value, event, pct = fields[0].strip(), fields[2].strip(), fields[4].strip()
        try:
            percent = float(pct) if pct else 0.0
        except ValueError:
            percent = 0.0
        out[event] = (value, percent)
    return out


@dataclass(frozen=True)
class PerfEvent:
    event: str
    filter: str = ""  # tracepoint filter (perf stat --filter)
    name: str = ""  # metric name; the event's own name if empty
    kprobe: str = ""  # a kernel function: the event is the kprobe iolab makes on it (iolab:<name>)

    @property
    def metric(self) -> str:
        return self.name or self.event


def _event(entry: Any, device: str | None) -> PerfEvent:
    if isinstance(entry, str):
        return PerfEvent(entry)
    if isinstance(entry, dict) and set(entry) == {"kprobe", "name"}:
        symbol, name = str(entry["kprobe"]), str(entry["name"])
        if not kprobes.SYMBOL.fullmatch(symbol) or not kprobes.NAME.fullmatch(name):
            raise ValueError("perf: a kprobe is {kprobe = \"<kernel function>\", name = \"<identifier>\"}")
        return PerfEvent(kprobes.event(name), "", name, symbol)
    if not isinstance(entry, dict) or set(entry) - {"event", "filter", "name"} or "event" not in entry:
        raise ValueError(f"perf: an event is a name, a table {{event, filter, name}} or {{kprobe, name}}, "
                         f"not {entry!r}")
    flt = str(entry.get("filter", ""))
    if "{devt}" in flt:
        if device is None:
            raise ValueError(f"perf: filter {flt!r} uses {{devt}} and the target has no block device")
        flt = flt.replace("{devt}", str(dev_t(device)))
    if flt and (":" not in entry["event"] or "*" in entry["event"]):
        raise ValueError(f"perf: a filter needs one tracepoint, not {entry['event']!r}")
    return PerfEvent(str(entry["event"]), flt, str(entry.get("name", "")))


class PerfCounts(Collector):
    name = "perf"

    def __init__(self, events: Sequence[str | PerfEvent]):
        if not events:
            raise ValueError("perf: name at least one event")
        self.specs = [ev if isinstance(ev, PerfEvent) else PerfEvent(ev) for ev in events]
        for spec in self.specs:
            if not _EVENT.fullmatch(spec.event):
                raise ValueError(f"perf: not an event name: {spec.event!r}")
        self.events = [spec.event for spec in self.specs]
        if len(set(self.events)) != len(self.events):
            raise ValueError(f"perf: each event can be counted once per cell: {self.events}")
        self._proc: process.Child | None = None
        self._ctl: int | None = None
        self._ack: int | None = None
        self._dir: str | None = None
        self._tracefs = False
        self._kprobes: list[str] = []  # the names of the kprobes made, removed at close()
        self._root = ""  # tracefs, while this collector holds it
        self.ack_timeout = ack_timeout()  # s, or None: wait for perf's acks (and its exit) without a limit

    @classmethod
    def from_config(cls, value: Any, device: str | None) -> list[Collector]:
        if isinstance(value, (str, dict)):
            value = [value]
        if isinstance(value, (list, tuple)):
            return [cls([_event(entry, device) for entry in value])] if value else []
        raise ValueError(f"perf: expected a list of events, not {value!r}")

    @property
    def _out(self) -> str:
        assert self._dir
        return os.path.join(self._dir, "counts.csv")

    @property
    def _err(self) -> str:
        assert self._dir
        return os.path.join(self._dir, "stderr")

    def start(self) -> None:
        perf = shutil.which("perf")
        if perf is None:
            raise CollectorError("perf not found: install the Debian package linux-perf (apt-get install linux-perf)")
        if any(":" in ev for ev in self.events):
            # perf finds tracepoints in tracefs and would mount it for good itself
            self._root = tracefs_acquire()
            self._tracefs = True
            for spec in self.specs:
                if spec.kprobe:
                    kprobes.add(self._root, spec.name, spec.kprobe)
                    self._kprobes.append(spec.name)
        self._dir = tempfile.mkdtemp(prefix="iolab-perf-")
        ctl_r, self._ctl = os.pipe()
        self._ack, ack_w = os.pipe()
        argv = [perf, "stat", "-a", "-x", ",", "-D", "-1", "--control", f"fd:{ctl_r},{ack_w}", "-o", self._out]
        for spec in self.specs:
            argv += ["-e", spec.event]
            if spec.filter:
                argv += ["--filter", spec.filter]
        try:
            with open(self._err, "wb") as err:  # it dies with iolab: a perf stat -a left running would count forever
                self._proc = process.start(argv, pass_fds=(ctl_r, ack_w), stdin=subprocess.DEVNULL, stdout=err,
                                           stderr=err)
        finally:
            os.close(ctl_r)
            os.close(ack_w)
        self._command("enable")

    def _command(self, command: str) -> None:
        """Send a control command to perf and wait for its ack. One wait on the
        ack pipe, no polling timer: perf holds the pipe's only write end, so its
        exit wakes the wait too (end of file); a timer that fired every fraction
        of a second would add its own wake-ups (context switches) to the cell and,
        in a guest whose clock jumps to its next timer, run that clock forward."""
        assert self._proc and self._ctl is not None and self._ack is not None
        try:
            os.write(self._ctl, command.encode() + b"\n")
        except BrokenPipeError:
            pass  # perf is gone; reported below
        deadline = None if self.ack_timeout is None else time.monotonic() + self.ack_timeout
        got = b""
        while b"ack" not in got:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise CollectorError(f"perf did not acknowledge {command!r} within {self.ack_timeout:g} s")
            ready, _, _ = select.select([self._ack], [], [], left)
            if ready:
                chunk = os.read(self._ack, 64)
                if not chunk:  # perf exited
                    break
                got += chunk
        if b"ack" not in got:
            self._proc.wait()
            raise CollectorError(
                f"perf stat failed (exit {self._proc.returncode}) for events {', '.join(self.events)}: {_tail(self._err)}"
            )

    def stop(self) -> dict[str, float]:
        if self._proc is None:
            raise CollectorError("perf: stop() without start()")
        self._command("disable")
        self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(timeout=self.ack_timeout)
        except subprocess.TimeoutExpired:
            raise CollectorError(f"perf stat did not exit within {self.ack_timeout:g} s of SIGINT") from None
        try:
            with open(self._out) as f:
                counts = parse_perf_csv(f.read())
        except FileNotFoundError:
            counts = {}
        return self._metrics(counts)

    def _metrics(self, counts: dict[str, tuple[str, float]]) -> dict[str, float]:
        """perf prints one line per event, in the order given (a wildcard may
        expand to several); named events take their name."""
        out: dict[str, float] = {}
        named = {spec.event: spec.metric for spec in self.specs}
        for event, (value, percent) in counts.items():
            if value.startswith("<"):
                raise CollectorError(f"perf: event {event} is {value} on this machine")
            if percent < 100.0:
                raise CollectorError(
                    f"perf: event {event} was counted for only {percent:.1f}% of the window (multiplexed)"
                )
            out[f"perf.{named.get(event, event)}"] = float(value)
        missing = [ev for ev in self.events if "*" not in ev and ev not in counts]
        if missing:
            raise CollectorError(f"perf printed no count for {', '.join(missing)}: {_tail(self._err)}")
        return out

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.send_signal(signal.SIGINT)
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            process.end(self._proc)  # killed if SIGINT did not stop it
        for fd in (self._ctl, self._ack):
            if fd is not None:
                os.close(fd)
        self._ctl = self._ack = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        if self._tracefs:
            try:
                for name in self._kprobes:
                    kprobes.remove(self._root, name)
            finally:
                self._kprobes = []
                self._tracefs = False
                tracefs_release()
