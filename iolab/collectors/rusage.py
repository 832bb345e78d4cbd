"""The workload's own resource use: getrusage(RUSAGE_CHILDREN) deltas.

Counts the children of this process (and their descendants) that were
waited for during the window, all their threads included: the workload
process started by the engine, but not a child still running at stop().

Emits (deltas):
    rusage.utime_s, rusage.stime_s   CPU seconds in user and kernel mode
    rusage.nvcsw, rusage.nivcsw      voluntary and involuntary context switches
    rusage.ctx                       nvcsw + nivcsw
    rusage.minflt, rusage.majflt     page faults without and with I/O
    rusage.inblock, rusage.oublock   block input/output operations (512-byte units)
"""

from __future__ import annotations

import resource

from iolab.collectors.base import Counters

FIELDS = ("utime", "stime", "nvcsw", "nivcsw", "minflt", "majflt", "inblock", "oublock")


NAMES = tuple(f"rusage.{f}_s" if f in ("utime", "stime") else f"rusage.{f}" for f in FIELDS)  # and rusage.ctx


def _read() -> dict[str, float]:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {key: float(getattr(ru, f"ru_{f}")) for f, key in zip(FIELDS, NAMES)}


class Rusage(Counters):
    name = "rusage"

    def read(self) -> dict[str, float]:
        return _read()

    def emit(self, deltas: dict[str, float]) -> dict[str, float]:
        return {**deltas, "rusage.ctx": deltas["rusage.nvcsw"] + deltas["rusage.nivcsw"]}
