"""What every renderer gets: a Report, built by iolab.analysis.reports from the store.

A Report is computed data: the analysis (the table), the measured samples
it was computed from (exports list them, plots draw them), the
environment rows, and for a comparison of two runs the two runs. A
renderer reads it and returns text; none sees CLI arguments or the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from iolab.analysis import Analysis
from iolab.analysis.envdiff import EnvRow
from iolab.analysis.hosts import Hosts
from iolab.store import RunInfo, Sample


@dataclass(frozen=True)
class Report:
    analysis: Analysis
    samples: tuple[Sample, ...] = ()  # measured cells (ok and failed; no warm-ups), in cell order
    environment: tuple[EnvRow, ...] = ()
    compared: tuple[RunInfo, RunInfo] | None = None  # iolab compare: runs A and B (the variants)
    notes: tuple[str, ...] = ()  # about the comparison of runs (what is left out, and why)
    hosts: Hosts | None = None  # a queued run: which agent ran which round, and the superseded tries
    verbose: bool = False  # the text report's header in full (iolab report --verbose); JSON always has it

    @property
    def kind(self) -> str:
        return "compare" if self.compared else "run"


def as_report(report: Report | Analysis) -> Report:
    """A bare Analysis (a script or test that analysed samples itself) is a
    Report without samples: the table formats need nothing more."""
    return report if isinstance(report, Report) else Report(report)


def ok_samples(report: Report, variant: str, workload: str) -> list[Sample]:
    return [s for s in report.samples if s.status == "ok" and s.variant == variant and s.workload == workload]
