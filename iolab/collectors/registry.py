"""The collector table (COLLECTORS), building an experiment's collectors, and
collecting around a workload (re-exported by iolab.collectors)."""


from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from iolab.collectors import diskstats, proc_stat, rusage, vmstat
from iolab.collectors.base import Collector, CollectorError
from iolab.collectors.diskstats import DiskStats
from iolab.collectors.perf_counts import PerfCounts
from iolab.collectors.proc_stat import ProcStat
from iolab.collectors.rusage import Rusage
from iolab.collectors.trace_phase import TracePhase
from iolab.collectors.vmstat import VmStat

# In the order they start (collecting() stops them in reverse). perf first: it
# is a process, and its start-up (exec, its pages, the "enable" handshake) and
# its "disable" then lie outside the others' counts. Started after them, it put
# 63-1016 context switches of its own into a 7.3 guest's sys_ctx (the enable
# handshake alone, 1 vCPU, instructions mode), as many as seed 003's delay
# changes in a cell.
COLLECTORS: dict[str, type[Collector]] = {
    "perf": PerfCounts,
    "proc_stat": ProcStat,
    "rusage": Rusage,
    "vmstat": VmStat,
    "diskstats": DiskStats,
    "phase": TracePhase,
}


def table_of(collect: Mapping[str, Any], device: str | None) -> dict[str, Any]:
    """The collector table (build_collectors) of an experiment's validated
    [collect] section (iolab.spec.Collect) for a cell on ``device``."""
    table: dict[str, Any] = {
        "proc_stat": collect.get("proc_stat", True),
        "vmstat": collect.get("vmstat", True),
        "rusage": collect.get("rusage", False),
    }
    if collect.get("diskstats", True) and device:
        table["diskstats"] = True
    perf = [e if isinstance(e, str) else {k: v for k, v in e.items() if v} for e in collect.get("perf", [])]
    if perf:
        table["perf"] = perf
    if collect.get("phase"):
        table["phase"] = [dict(phase) for phase in collect["phase"]]
    return {key: value for key, value in table.items() if value}


HOST_NOISE = ("host.steal_s", "host.other_cpu_s", "host.disk_busy_ms")  # host_noise.HostNoise, in every cell


def metric_names(collect: Mapping[str, Any]) -> set[str]:
    """The metric names the collectors of a validated [collect] section can
    give, as fnmatch patterns where a name is known only when the cell runs
    (the /proc/vmstat keys a pattern selects, a perf wildcard's events)."""
    names = set(HOST_NOISE)
    if collect.get("proc_stat", True):
        names |= {"sys_ctx", "sys_intr", "sys_forks", *(f"sys_cpu.{s}_s" for s in proc_stat.CPU_STATES)}
    keys = collect.get("vmstat", True)
    if keys:
        names |= {f"vmstat.{key}" for key in (vmstat.DEFAULT_KEYS if keys is True else keys)}
    if collect.get("diskstats", True):
        names |= {f"disk.{field}" for field in (*diskstats.FIELDS, *diskstats.DERIVED)}
    if collect.get("rusage", False):
        names |= {*rusage.NAMES, "rusage.ctx"}
    for event in collect.get("perf", []):
        names.add(f"perf.{event}" if isinstance(event, str) else f"perf.{event.get('name') or event.get('event')}")
    for phase in collect.get("phase", []):
        names |= {f"phase.{phase['name']}_{end}" for end in ("ns", "count", "unmatched", "last_ns")}
    return names


def build_collectors(config: Mapping[str, Any], device: str | None = None) -> list[Collector]:
    """Collectors from an experiment's collector table; ValueError for a bad one."""
    unknown = set(config) - set(COLLECTORS)
    if unknown:
        raise ValueError(f"unknown collector(s) {sorted(unknown)}; known: {', '.join(COLLECTORS)}")
    out: list[Collector] = []
    for name, cls in COLLECTORS.items():
        if name in config:
            out += cls.from_config(config[name], device)
    return out


@contextmanager
def collecting(collectors: Sequence[Collector]) -> Iterator[dict[str, float]]:
    """Start the collectors (in order) around the block; stop them (in reverse
    order) when it ends normally and fill the yielded dict with their metrics.

        with collecting(cs) as metrics:
            engine.run()
        # metrics now holds every collector's values

    If the block raises, nothing is stopped; every collector is closed on
    every exit. A CollectorError from stop() propagates: the cell failed.
    Two collectors emitting the same metric name is a CollectorError.
    """
    with ExitStack() as stack:
        for c in collectors:
            stack.callback(c.close)
            c.start()
        metrics: dict[str, float] = {}
        yield metrics
        for c in reversed(collectors):
            for key, value in c.stop().items():
                if key in metrics:
                    raise CollectorError(f"two collectors emit the metric {key!r}")
                metrics[key] = value

