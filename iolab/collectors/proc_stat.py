"""System-wide counters from /proc/stat (see proc_stat(5)).

Emits, as deltas over the workload, for the whole machine:
    sys_ctx            context switches            ("ctxt")
    sys_intr           interrupts serviced         (first number of "intr")
    sys_forks          processes/threads created   ("processes")
    sys_cpu.<state>_s  CPU seconds summed over all CPUs in user, nice,
                       system, idle, iowait, irq, softirq, steal
                       (the "cpu" line, in USER_HZ ticks)
"""

from __future__ import annotations

import os

from iolab.collectors.base import CollectorError, Counters

CPU_STATES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read_proc_stat(text: str | None = None) -> dict[str, float]:
    if text is None:
        with open("/proc/stat") as f:
            text = f.read()
    out: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(" ")
        fields = rest.split()
        if key == "ctxt":
            out["sys_ctx"] = float(fields[0])
        elif key == "intr":
            out["sys_intr"] = float(fields[0])
        elif key == "processes":
            out["sys_forks"] = float(fields[0])
        elif key == "cpu":
            for state, ticks in zip(CPU_STATES, fields):
                out[f"sys_cpu.{state}_s"] = float(ticks)  # USER_HZ ticks; seconds in stop()
    if "sys_ctx" not in out:
        raise CollectorError("/proc/stat has no ctxt line")
    return out


class ProcStat(Counters):
    name = "proc_stat"

    def read(self) -> dict[str, float]:
        return read_proc_stat()

    def emit(self, deltas: dict[str, float]) -> dict[str, float]:
        hz = os.sysconf("SC_CLK_TCK")
        return {key: delta / hz if key.startswith("sys_cpu.") else delta for key, delta in deltas.items()}
