"""One run at a time changes machine-wide state.

A run that changes what other runs would measure under (a sysctl, a sysfs
value not of its own device, dropping the page cache, a memory cgroup, a
device target, tracefs events) holds an exclusive flock on
``$XDG_STATE_HOME/iolab/machine.lock``; any other run holds it shared, so
runs on loop images of their own (or in VMs, whose knobs are the guests')
proceed side by side, but never beside a run that changes the machine. A run that cannot get the lock
is refused at once with the holder named (pid, run, experiment, why). The
kernel drops an flock when its process dies, even by SIGKILL: a killed run
never blocks the next one.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from iolab.journal import owner_alive, process_start, state_dir
from iolab.spec import Experiment
from iolab.sysutil import ToolError


class Busy(ToolError):
    """Another run holds the machine; the message names it."""


def machine_wide(experiment: Experiment) -> str | None:
    """What in the experiment changes machine-wide state, or None. Cells
    that all run in VMs change their guests' sysctls, cgroups, caches and
    tracefs, not this machine's: only a device target is this machine's."""
    if experiment.target.kind == "device":
        return f"device {experiment.target.device}"
    if all(variant.kernel is not None for variant in experiment.variant):
        return None
    for item in [*experiment.variant, *experiment.workload]:
        if item.sysctl:
            return f"sysctl {', '.join(sorted(item.sysctl))}"
        shared = [path for path in item.sysfs if "{dev}" not in path]
        if shared:
            return f"sysfs {', '.join(sorted(shared))}"
        if item.memory_max is not None:
            return "a memory cgroup"
    if experiment.cell.drop_caches:
        return "drop_caches"
    if experiment.collect.perf or experiment.collect.phase:
        return "tracefs events"
    return None


class Holder:
    """This run's hold on the machine lock; `update(run_id=...)` names the run once stored."""

    def __init__(self, handle: IO[str], record: Path, info: dict[str, Any]):
        self.handle, self.record, self.info = handle, record, info

    def update(self, **info: Any) -> None:
        self.info.update(info)
        self.record.write_text(json.dumps(self.info))


def _describe(info: dict[str, Any]) -> str:
    run = f"run {info['run_id']}, " if info.get("run_id") is not None else ""
    why = f", changes {info['why']}" if info.get("why") else ""
    return f"pid {info.get('pid')} ({run}{info.get('experiment', '?')!r}{why})"


def holders(directory: Path) -> list[dict[str, Any]]:
    """The live holders' records (stale ones of dead processes are removed)."""
    found = []
    for record in sorted(directory.glob("*.json")):
        try:
            info = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if owner_alive(int(info.get("pid", 0)), info.get("start")):
            found.append(info)
        else:
            record.unlink(missing_ok=True)
    return found


def _take(handle: IO[str], mode: int, waiting: Callable[[], bool] | None) -> None:
    """flock without blocking; with `waiting`, try again every 0.2 s while it returns True."""
    while True:
        try:
            fcntl.flock(handle, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if waiting is None or not waiting():
                raise
            time.sleep(0.2)


@contextmanager
def machine_lock(experiment: Experiment, where: Path | None = None, *, exclusive: bool = False,
                 waiting: Callable[[], bool] | None = None, **info: Any) -> Iterator[Holder]:
    """Hold the machine lock for a run of `experiment` (Busy if another run has it).

    An agent (iolab.run.agent) holds it ``exclusive`` for each round, whatever
    the experiment changes: a test host runs one round at a time, and gives
    ``waiting`` (called while another holds the lock; False stops waiting:
    Busy). ``info`` goes into the holder's record (the agent, its round)."""
    where = where or state_dir()
    directory = where / "holders"
    directory.mkdir(parents=True, exist_ok=True)
    why = machine_wide(experiment) or ("the machine, for an agent's round" if exclusive else None)
    handle = open(where / "machine.lock", "a+")
    try:
        try:
            _take(handle, fcntl.LOCK_EX if why else fcntl.LOCK_SH, waiting)
        except BlockingIOError:
            others = [info for info in holders(directory) if info.get("pid") != os.getpid()]
            if not why:  # only a run that changes the machine keeps a shared one out
                others = [info for info in others if info.get("why")]
            named = "; ".join(_describe(info) for info in others) or "another iolab process"
            mine = f"this run changes {why}" if why else "this run needs a machine no other run changes"
            raise Busy(f"another run holds the machine: {named}; {mine}. Wait for it to end, "
                       "or stop it (kill PID: it is interrupted cleanly)") from None
        holders(directory)  # drop the records of holders that died (a SIGKILL leaves its record)
        pid = os.getpid()
        info = {"pid": pid, "start": process_start(pid), "experiment": experiment.name, "why": why, **info}
        holder = Holder(handle, directory / f"{pid}.json", info)
        holder.update()
        try:
            yield holder
        finally:
            holder.record.unlink(missing_ok=True)
    finally:
        handle.close()
