"""What each metric is: label, unit, which direction is better, where it comes from.

Engines produce metrics by name; reports and statistics look them up here.
A metric that is a percentile of a latency histogram names the histogram,
so its value across iterations is taken from the merged histogram, never
from an average of per-iteration percentiles.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    metrics += [
        Metric("ctx", "ctx switches", "count", False),
        Metric("cs_per_io", "cs/io", "ratio", False),
        Metric("cpu_usr", "usr CPU %", "%", False),
        Metric("cpu_sys", "sys CPU %", "%", False),
        Metric("ios", "I/Os", "count", True),
    ]
    return metrics


KNOWN: dict[str, Metric] = {m.name: m for m in _fio_metrics()}

# Rows a report shows when the experiment names none, in this order, for
# whichever of them the workload produced.
DEFAULT_ROWS = ("read_bw", "read_p50", "read_p99", "write_bw", "write_p50", "write_p99")


def lookup(name: str) -> Metric:
    """The metric's description; an unknown name (a collector's counter, a
    derived metric) is shown under its own name and counted lower-is-better."""
    return KNOWN.get(name) or Metric(name, name[:14], "", False)
