"""JSON: every figure of the table, for scripts (schema in README.md)."""

from __future__ import annotations

import json
import math
from typing import Any

from iolab.analysis import Analysis, Diagnostic, Figure
from iolab.stats import TESTS

JSON_VERSION = 1


def _num(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _figure(figure: Figure) -> dict[str, Any]:
    summary = figure.summary
    return {
        "n": figure.n,
        "failed": figure.failed,
        "center": _num(figure.center),
        "ci": [_num(summary.low), _num(summary.high)] if summary else None,
        "rel_spread": _num(figure.rel_spread),
        "stddev": _num(summary.stddev) if summary else None,
        "min": _num(summary.minimum) if summary else None,
        "max": _num(summary.maximum) if summary else None,
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
                                   if c.verdict != "insufficient"),
    }
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


def document(analysis: Analysis) -> dict[str, Any]:
    run, experiment = analysis.run, analysis.experiment
    comparisons = []
    for row in analysis.rows:
        for candidate, c in row.comparisons.items():
            comparisons.append(
                {
                    "workload": row.workload,
                    "metric": row.metric.name,
                    "unit": row.metric.unit,
                    "higher_is_better": row.metric.higher_is_better,
                    "baseline": analysis.baseline,
                    "variant": candidate,
                    "baseline_value": _num(row.figures[analysis.baseline].center),
                    "candidate_value": _num(row.figures[candidate].center),
                    "delta": _num(c.delta),
                    "delta_ci": [_num(c.delta_low), _num(c.delta_high)],
                    "p": _num(c.p),
                    "p_adjusted": _num(c.p_adjusted),
                    "n_base": c.n_base,
                    "n_cand": c.n_cand,
                    "alpha": _num(c.alpha),
                    "verdict": c.verdict,
                    "warnings": list(c.warnings),
                    "test": c.test,
                    "method": c.mwu_method,
                    "family": c.family,
                    "pairs": c.pairs,
                    "dropped_rounds": c.dropped,
                }
            )
    doc = {
        "iolab_json_version": JSON_VERSION,
        "run": {
            "id": run.id,
            "name": run.name,
            "status": run.status,
            "seed": run.seed,
            "started": run.started,
            "finished": run.finished,
            "rounds_done": analysis.rounds_done,
            "iterations": experiment.run.iterations,
            "stop_reason": run.stop_reason,
            "recheck_of": run.recheck_of,
            "host": run.host,
        },
        "statistics": _statistics(analysis),
        "variants": analysis.variants,
        "rows": [
            {
                "workload": row.workload,
                "metric": row.metric.name,
                "label": row.metric.label,
                "unit": row.metric.unit,
                "view": row.view,
                "primary": row.primary,
                "figures": {variant: _figure(f) for variant, f in row.figures.items()},
            }
            for row in analysis.rows
        ],
        "comparisons": comparisons,
        "failures": [
            {"variant": f.variant, "workload": f.workload, "error": f.error, "cells": f.cells}
            for f in analysis.failures
        ],
        "diagnostics": [_diagnostic(d) for d in analysis.diagnostics],
        "notes": analysis.notes,
        "target_place": analysis.target_place or None,
        "disturbed_rounds": {str(r): why for r, why in sorted(analysis.disturbed.items())},
        "disturbance_rule": analysis.disturbance_rule,
    }
    if analysis.original is not None:
        doc["rechecked_run"] = document(analysis.original)
    return doc


def render(analysis: Analysis) -> str:
    return json.dumps(document(analysis), indent=2) + "\n"
