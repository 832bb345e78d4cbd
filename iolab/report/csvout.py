"""CSV of the raw samples: one line per sample and metric (a long table that
a spreadsheet, pandas or R reads as it is); a failed cell is one line with
its error and no value."""

from __future__ import annotations

import csv
import io

from iolab.analysis import metrics
from iolab.analysis.model import Report

COLUMNS = ["run", "seq", "round", "iteration", "variant", "workload", "status", "metric", "value", "unit",
           "higher_is_better", "error"]


def _run_of(report: Report, variant: str) -> int:
    if report.compared is None:
        return report.analysis.run.id
    a, b = report.compared
    return a.id if variant == f"run {a.id}" else b.id


def render(report: Report) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    timing = report.analysis.experiment.clock
    for sample in report.samples:
        where = [_run_of(report, sample.variant), sample.seq, sample.round, sample.iteration, sample.variant,
                 sample.workload, sample.status]
        if sample.status != "ok":
            writer.writerow([*where, "", "", "", "", sample.error or ""])
            continue
        for name, value in sorted(sample.metrics.items()):
            metric = metrics.lookup(name, timing)
            writer.writerow([*where, name, repr(float(value)), metric.unit, int(metric.higher_is_better), ""])
    return out.getvalue()
