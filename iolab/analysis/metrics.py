"""What each metric is: label, unit, which direction is better, where it comes from.

Engines produce metrics by name; reports and statistics look them up here.
A metric that is a percentile of a latency histogram names the histogram,
so its value across iterations is taken from the merged histogram, never
from an average of per-iteration percentiles.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Metric:
    name: str
    label: str  # short row label for a 72-column table
    unit: str
    higher_is_better: bool
    histogram: str | None = None  # merged histogram this percentile is read from
    quantile: float | None = None  # percentile in (0, 100]
    scale: float = 1.0  # histogram unit (ns) -> metric unit


def _fio_metrics() -> list[Metric]:
    metrics = []
    for direction, short in (("read", "rd"), ("write", "wr")):
        hist = f"{direction}_clat"
        metrics += [
            Metric(f"{direction}_bw", f"{short} BW MiB/s", "MiB/s", True),
            Metric(f"{direction}_iops", f"{short} IOPS", "IOPS", True),
            Metric(f"{direction}_lat_mean", f"{short} mean us", "us", False),
            Metric(f"{direction}_p50", f"{short} p50 us", "us", False, hist, 50.0, 1e-3),
            Metric(f"{direction}_p99", f"{short} p99 us", "us", False, hist, 99.0, 1e-3),
            Metric(f"{direction}_p99.9", f"{short} p99.9 us", "us", False, hist, 99.9, 1e-3),
        ]
    metrics += [  # fsync / fdatasync / sync_file_range calls (fio's "sync" latency)
        Metric("sync_lat_mean", "sync mean us", "us", False),
        Metric("sync_p50", "sync p50 us", "us", False, "sync_lat", 50.0, 1e-3),
        Metric("sync_p99", "sync p99 us", "us", False, "sync_lat", 99.0, 1e-3),
        Metric("sync_p99.9", "sync p99.9 us", "us", False, "sync_lat", 99.9, 1e-3),
        Metric("syncs", "syncs", "count", True),
    ]
    metrics += [
        Metric("ctx", "ctx switches", "count", False),
        Metric("cs_per_io", "cs/io", "ratio", False),
        Metric("cpu_usr", "usr CPU %", "%", False),
        Metric("cpu_sys", "sys CPU %", "%", False),
        Metric("ios", "I/Os", "count", True),
    ]
    return metrics


def _probe_metrics() -> list[Metric]:
    """iolab-probe (iolab/engines/probe.py). Latency in ns per op, as the
    f2fs DIO seed reports it; batch in usecs/call, as libMicro does."""
    return [
        Metric("lat_p50", "median ns/op", "ns", False, "lat", 50.0),
        Metric("lat_p99", "p99 ns/op", "ns", False, "lat", 99.0),
        Metric("lat_p99.9", "p99.9 ns/op", "ns", False, "lat", 99.9),
        Metric("lat_mean", "mean ns/op", "ns", False),
        Metric("iops", "IOPS", "IOPS", True),
        Metric("bw", "BW MiB/s", "MiB/s", True),
        Metric("ops", "ops", "count", True),
        Metric("per_call", "us/call", "us", False),
        Metric("per_call_min", "min us/call", "us", False),
        Metric("calls", "calls", "count", True),
        Metric("phase_ns", "phase ns", "ns", False),
        Metric("total_ns", "all phases ns", "ns", False),
    ]


def _io_metrics() -> list[Metric]:
    """The device's I/O counters (iolab.collectors.diskstats; the guest's own in a VM) and the page
    cache's misses where /proc/vmstat gives them (it counts no page-cache miss as such: major faults
    and refaults of evicted file pages are the misses it names). Deterministic where the workload is:
    the same kernel issues the same requests."""
    return [
        Metric("disk.ios", "disk I/Os", "count", False),
        Metric("disk.reads", "disk reads", "count", False),
        Metric("disk.writes", "disk writes", "count", False),
        Metric("disk.read_kib", "disk rd KiB", "KiB", False),
        Metric("disk.write_kib", "disk wr KiB", "KiB", False),
        Metric("disk.read_req_kib", "rd KiB/req", "KiB", True),
        Metric("disk.write_req_kib", "wr KiB/req", "KiB", True),
        Metric("disk.read_merges", "rd merges", "count", True),
        Metric("disk.write_merges", "wr merges", "count", True),
        Metric("vmstat.pgmajfault", "major faults", "count", False),
        Metric("vmstat.workingset_refault_file", "refaults", "count", False),
    ]


KNOWN: dict[str, Metric] = {m.name: m for m in _fio_metrics() + _probe_metrics() + _io_metrics()}

# The I/O pattern's rows (iolab.analysis.iorows): a workload's table shows each that moved between
# the variants, beside its instruction or time rows; the first, the count of I/Os, heads the rows
# of a workload whose I/O pattern is the point ([[workload]] io = "primary").
IO_ROWS = tuple(m.name for m in _io_metrics())
IO_COUNT = "disk.ios"

# Rows a report shows when the experiment names none, in this order, for
# whichever of them the workload produced: fio's BW and latency per
# direction, and of its fsync/fdatasync calls; the probe's headline of each mode (lat/uring: median and p99
# ns/op; batch: usecs/call; churn: the reported phase).
DEFAULT_ROWS = (
    "read_bw", "read_p50", "read_p99", "write_bw", "write_p50", "write_p99", "sync_p50", "sync_p99",
    "lat_p50", "lat_p99", "per_call", "phase_ns",
)


# The question an experiment asks when it declares none ([report] primary,
# [[workload]] primary): the workload's headline throughput and latency --
# fio's BW and median completion latency per direction with I/O, the probe's
# median ns/op, usecs/call or reported phase. Holm runs over these only; the
# other rows are exploratory.
PRIMARY = ("read_bw", "read_p50", "write_bw", "write_p50", "lat_p50", "per_call", "phase_ns")


# Instructions mode (spec.VM.timing): the guest's clock counts instructions,
# one per guest nanosecond (icount shift 0). A duration keeps its stored value
# under the instruction unit of the same scale; a rate per guest second is a
# rate per 10^9 instructions (Ginsn, an "instruction-second").
INSTRUCTION_UNITS = {"ns": "insn", "us": "kinsn", "ms": "Minsn", "s": "Ginsn", "MiB/s": "MiB/Ginsn",
                     "IOPS": "ops/Ginsn"}
# Suffixes of metrics outside the catalogue that are guest durations (a
# collector's CPU seconds, a derived time), with their unit
TIME_SUFFIXES = (("_ns", "ns"), ("_us", "us"), ("_ms", "ms"), ("_s", "s"))
SIZE_SUFFIXES = (("_kib", "KiB"), ("_bytes", "B"))
HOST_TIMED = ("vm.",)  # measured by the host, in real time, in either mode (vm.boot_s)
# Guest times that hold waiting, not work: with sleep=off an idle guest's clock
# jumps to its next timer, so a settle's pauses, the device's busy time and the
# CPUs' idle time count instructions plus those jumps. In instructions mode their
# unit is the guest clock's ("guest s"), never an instruction count nor a time. So
# are all the host.* seconds (iolab.collectors.host_noise: a settle, steal, other
# processes' CPU time in clock ticks): what the machine beside the workload did,
# never the workload's instructions.
CLOCK_TIMED = ("host.", "disk.", "sys_cpu.idle_s", "sys_cpu.iowait_s", "sys_cpu.steal_s")
GUEST_CLOCK = "guest"  # the prefix of such a unit: guest s, guest ms


# Instructions mode with a modeled device ([vm] disk = "model"): the guest's clock
# counts instructions plus the device's modeled waits (its timer completions), so
# a duration the workload measures is modeled time: "modeled ns", never "ns".
# The CPU time at work (rusage, sys_cpu) stays instructions, a wait on the guest
# clock stays the guest clock's (CLOCK_TIMED).
MODELED = "modeled"
MODELED_UNITS = {"ns": "modeled ns", "us": "modeled us", "ms": "modeled ms", "s": "modeled s",
                 "MiB/s": "MiB/modeled s", "IOPS": "ops/modeled s"}
MODELED_FROM = ("phase.",)  # outside the catalogue: a workload's phases, a traced kernel phase


def counts_instructions(unit: str) -> bool:
    """Whether a unit (as lookup gives it) is a count of instructions or a rate per one."""
    return unit in INSTRUCTION_UNITS.values()


def _in_units(metric: Metric, units: dict[str, str]) -> Metric:
    """The metric with its time unit replaced, in its label too (us/call -> kinsn/call)."""
    unit = units.get(metric.unit)
    if unit is None:
        return metric
    words = [units.get(word, word) for word in metric.label.split(" ")]
    words = [word.replace(f"{metric.unit}/", f"{unit}/") for word in words]  # us/call, ns/op
    return replace(metric, label=" ".join(words), unit=unit)


def in_instructions(metric: Metric) -> Metric:
    """The metric as instructions mode shows it: no time unit anywhere."""
    return _in_units(metric, INSTRUCTION_UNITS)


def in_modeled(metric: Metric) -> Metric:
    """The metric as instructions mode with a modeled device shows it: modeled time."""
    return _in_units(metric, MODELED_UNITS)


def _outside_catalogue(name: str, timing: str) -> Metric:
    """A metric by its name's suffix: a duration in its time unit (in
    instructions mode a guest clock's unit for a wait; lookup makes a guest's
    work instructions), a size in bytes or KiB; else no unit."""
    if name.startswith("phase.") and name.endswith("_ns"):
        return Metric(name, f"{name[6:-3]} ns"[:14], "ns", False)
    for suffix, unit in TIME_SUFFIXES + SIZE_SUFFIXES:
        if not name.endswith(suffix):
            continue
        if timing != "instructions" or name.startswith(HOST_TIMED):
            return Metric(name, name[:14], unit, False)
        if name.startswith(CLOCK_TIMED) and (suffix, unit) in TIME_SUFFIXES:
            unit = f"{GUEST_CLOCK} {unit}"
        return Metric(name, f"{name[:-len(suffix)]} {unit}", unit, False)
    return Metric(name, name[:14], "", False)


def named(text: str) -> str:
    """A metric's name from its name or its row label as a table shows it
    ("rd BW MiB/s" -> read_bw; an instructions-mode label too); else the text."""
    if text in KNOWN:
        return text
    wanted = " ".join(text.split()).lower()
    for metric in KNOWN.values():
        if wanted in (metric.label.lower(), in_instructions(metric).label.lower()):
            return metric.name
    return text


def lookup(name: str, timing: str = "wall") -> Metric:
    """The metric's description; an unknown name (a collector's counter, a
    derived metric) is shown under its own name and counted lower-is-better.
    A churn phase of the probe (phase.<name>_ns) is labelled by its name.
    ``timing = "instructions"``: in the units of instructions mode; ``"modeled"``
    (instructions mode with a modeled device): a workload's durations and
    rates in modeled time, the CPU time at work in instructions."""
    known = KNOWN.get(name) or _outside_catalogue(name, "instructions" if timing == MODELED else timing)
    if timing not in ("instructions", MODELED) or name.startswith(HOST_TIMED + CLOCK_TIMED):
        return known  # a host's real time, a guest clock's wait: no instruction unit
    if timing == MODELED and (name in KNOWN or name.startswith(MODELED_FROM)):
        return in_modeled(known)  # what the workload timed: its work and the device's modeled waits
    return in_instructions(known)
