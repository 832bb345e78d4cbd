"""JSON: every figure of the table, for scripts (schema in README.md)."""

from __future__ import annotations

import json
import math
from typing import Any

from iolab.report import claims, footnotes, headers, reproduce
from iolab.report.figures import json_number
from iolab.analysis import Analysis, Diagnostic, Figure, iorows
from iolab.analysis.series import TOTAL
from iolab.analysis.model import Report
from iolab.store import RunInfo, Sample
from iolab.stats import TESTS

JSON_VERSION = 1


def _figure(figure: Figure) -> dict[str, Any]:
    summary = figure.summary
    return {
        "n": figure.n,
        "failed": figure.failed,
        "center": json_number(figure.center),
        "ci": [json_number(summary.low), json_number(summary.high)] if summary else None,
        "rel_spread": json_number(figure.rel_spread),
        "stddev": json_number(summary.stddev) if summary else None,
        "min": json_number(summary.minimum) if summary else None,
        "max": json_number(summary.maximum) if summary else None,
    }


def _diagnostic(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": d.kind, "workload": d.workload, "label": d.label, "variant": d.variant}
    if d.kind == "spread":
        out["rel_stddev"] = d.value
    elif d.kind in ("drift", "rounds"):
        out.update(tau=d.value, p=d.p)
    elif d.kind == "outliers":
        out["rounds"] = list(d.rounds)
    elif d.kind == "view":
        out["shown_as"] = d.detail
    return out


def _statistics(analysis: Analysis) -> dict[str, Any]:
    report = analysis.experiment.report
    statistics: dict[str, Any] = {
        "view": analysis.view,
        "alpha": report.alpha,
        "correction": report.correction,
        "test": " and ".join(TESTS[t] for t in analysis.tests) or "none",
        "design": analysis.design,
        "primary_comparisons": sum(1 for r in analysis.rows if r.primary for c in r.comparisons.values()
                                   if c.verdict != "insufficient" and c.exact is None),
    }
    planned = analysis.planned
    if planned is not None:  # the test the plan fixed before any data (iolab.plan.test_choice)
        statistics["planned"] = {"test": planned.test or "none", "rounds": planned.rounds,
                                 "comparisons": planned.comparisons, "level": planned.level,
                                 "min_p": planned.min_p, "rounds_needed": planned.needed}
    if any(c.exact for r in analysis.rows for c in r.comparisons.values()):
        statistics["tolerance"] = analysis.experiment.tolerance
    sequential = analysis.sequential
    if sequential is not None:
        statistics.update(
            correction="sequential",
            comparisons=sequential.comparisons,
            looks=[sequential.first_look, sequential.last_look],
            boundary=sequential.boundary,
            look_alpha=sequential.look_alpha,
        )
    return statistics


def _comparison(analysis: Analysis, row: Any, candidate: str, c: Any) -> dict[str, Any]:
    return {
        "workload": row.workload,
        "metric": row.metric.name,
        "unit": row.metric.unit,
        "higher_is_better": row.metric.higher_is_better,
        "baseline": row.against.get(candidate, analysis.baseline),
        "variant": candidate if candidate != TOTAL else _last(row),
        "baseline_value": json_number(row.figures[row.against.get(candidate, analysis.baseline)].center),
        "candidate_value": json_number(row.figures[candidate if candidate != TOTAL else _last(row)].center),
        "delta": json_number(c.delta),
        "delta_ci": [json_number(c.delta_low), json_number(c.delta_high)],
        "p": json_number(c.p),
        "p_adjusted": json_number(c.p_adjusted),
        "n_base": c.n_base,
        "n_cand": c.n_cand,
        "alpha": json_number(c.alpha),
        "verdict": c.verdict,
        "warnings": list(c.warnings),
        "test": c.test,
        "method": c.mwu_method,
        "family": c.family,
        "pairs": c.pairs,
        "dropped_rounds": c.dropped,
        **({"exact": c.exact, "tolerance": c.tolerance, "resolution": c.resolution} if c.exact else {}),
    }


def _last(row: Any) -> str:
    """The step a series row's total ends at: the last step compared."""
    return [key for key in row.comparisons if key != TOTAL][-1]


def _series(analysis: Analysis) -> dict[str, Any] | None:
    series, asked = analysis.series, analysis.experiment.series
    if series is None or asked is None:  # a series result comes only from an experiment with a [series]
        return None
    return {
        "patches": list(asked.patches),
        "strategy": series.strategy,
        "builds": series.builds,
        "rounds": series.rounds,
        "steps": [{"step": s.step, "variant": s.name, "patch": s.patch, "cells": s.cells, "failed": s.failed,
                   "build_error": s.build_error} for s in series.steps],
        "changes": [{"workload": c.workload, "metric": c.metric, "step": c.step, "patch": c.patch,
                     "delta": json_number(c.delta), "delta_ci": [json_number(c.delta_low), json_number(c.delta_high)],
                     "verdict": c.verdict, "exact": c.exact, "family": c.family, "placed": c.placed,
                     "patches": [c.first, c.step]}
                    for c in series.changes],
    }


def _timing(analysis: Analysis) -> dict[str, Any]:
    """What the durations count in instructions mode (the units say insn, never a time);
    a wall-mode document has no "timing"."""
    experiment = analysis.experiment
    model = experiment.vm.device_model
    unseen = [{"workload": c.workload, "metric": c.label, "reference": c.reference, "candidate": c.candidate,
               "before": c.before, "after": c.after, "ratio": c.ratio if math.isfinite(c.ratio) else None}
              for c in iorows.changes(analysis)]
    return {"mode": experiment.timing, "icount_shift": experiment.vm.icount_shift, "sleep": "off",
            "io_changed": unseen, "warnings": headers.io_lines(analysis),
            **({"clock": experiment.clock, "device_model": model.recorded()} if model is not None else {})}


def _run_of(analysis: Analysis) -> dict[str, Any]:
    run = analysis.run
    return {
        "id": run.id,
        "name": run.name,
        "status": run.status,
        "seed": run.seed,
        "started": run.started,
        "finished": run.finished,
        "rounds_done": analysis.rounds_done,
        "iterations": analysis.experiment.run.iterations,
        "stop_reason": run.stop_reason,
        "recheck_of": run.recheck_of,
        "host": run.host,
    }


def _row(row: Any) -> dict[str, Any]:
    return {
        "workload": row.workload,
        "metric": row.metric.name,
        "label": row.metric.label,
        "unit": row.metric.unit,
        "view": row.view,
        "primary": row.primary,
        "figures": {variant: _figure(f) for variant, f in row.figures.items()},
    }


def document(analysis: Analysis) -> dict[str, Any]:
    comparisons = [_comparison(analysis, row, candidate, c)
                   for row in analysis.rows for candidate, c in row.comparisons.items()]
    doc = {
        "iolab_json_version": JSON_VERSION,
        **({"timing": _timing(analysis)} if analysis.experiment.timing != "wall" else {}),
        "run": _run_of(analysis),
        **({"mail": analysis.experiment.mail.model_dump()} if analysis.experiment.mail is not None else {}),
        "statistics": _statistics(analysis),
        "variants": analysis.variants,
        "rows": [_row(row) for row in analysis.rows],
        "comparisons": comparisons,
        **({"series": _series(analysis)} if analysis.series is not None else {}),
        **({"claims": claims.document(analysis)} if analysis.experiment.claims is not None else {}),
        "failures": [
            {"variant": f.variant, "workload": f.workload, "error": f.error, "cells": f.cells,
             **({"expected": f.expected} if f.expected else {})}
            for f in analysis.failures
        ],
        "diagnostics": [_diagnostic(d) for d in analysis.diagnostics],
        "notes": analysis.notes,
        "target_place": analysis.target_place or None,
        "block_sizes": analysis.block_sizes,
        "disturbed_rounds": {str(r): why for r, why in sorted(analysis.disturbed.items())},
        "disturbance_rule": analysis.disturbance_rule,
    }
    if analysis.original is not None:
        doc["rechecked_run"] = document(analysis.original)
    return doc


def _run(run: RunInfo) -> dict[str, Any]:
    return {"id": run.id, "name": run.name, "status": run.status, "seed": run.seed, "started": run.started,
            "finished": run.finished, "host": run.host}


def report_document(report: Report) -> dict[str, Any]:
    """The run's document (or, for two runs compared, the table's) with the
    environment rows; a comparison of runs adds ``kind``, ``runs`` and
    ``compare_notes``."""
    doc = document(report.analysis)
    doc["experiment_sha256"] = reproduce.digest(report.analysis.experiment)  # the reply block's, in full
    doc["header"] = headers.report_header(report)  # the text report's header in full (--verbose)
    doc["environment"] = [
        {"key": row.key, "values": row.values, "differs": row.differs, "checked": row.checked}
        for row in report.environment
    ]
    guests = footnotes.guest_starts(report.samples)  # how the VMs' guests started, where saved states were asked
    if guests:
        doc["guests"] = guests[0]
    if report.hosts is not None:  # a queued run: each sample's host and try, the superseded ones too
        doc["samples"] = [_sample(s, True) for s in report.samples] + [
            _sample(s, False) for s in report.hosts.superseded_samples if not s.warmup]
        doc["attempts"] = [{"round": a.round, "try": a.attempt + 1, "host": a.host, "status": a.status,
                            "error": a.error, "started": a.started, "finished": a.finished}
                           for a in report.hosts.attempts]
    if report.compared is not None:
        a, b = report.compared
        doc = {"kind": "compare", "runs": {"a": _run(a), "b": _run(b)}, "compare_notes": list(report.notes),
               **doc}
    return doc


def _sample(sample: Sample, counted: bool) -> dict[str, Any]:
    return {"seq": sample.seq, "round": sample.round, "try": sample.attempt + 1, "host": sample.host,
            "counted": counted, "variant": sample.variant, "workload": sample.workload, "status": sample.status,
            "error": sample.error, "metrics": {k: json_number(v) for k, v in sorted(sample.metrics.items())}}


def render(report: Report) -> str:
    return json.dumps(report_document(report), indent=2) + "\n"
