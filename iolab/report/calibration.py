"""The A/A calibration report (iolab.run.calibrate): text, markdown and JSON."""

from __future__ import annotations

import json
import math
from typing import Any

from iolab.run.calibrate import Calibration, CalibrationRow, within_tolerance
from iolab.report import figures, footnotes, headers, legends
from iolab.report.jsonout import JSON_VERSION
from iolab.stats import PAIRED
from iolab.stats.exact import SEPARATION, SEPARATION_TWO
from iolab.units import fine_percent, percent

COLUMNS = ["workload", "metric", "noise", "A/A delta", "detectable", "A/A FP (null)"]


def _detectable(row: CalibrationRow) -> str:
    if within_tolerance(row.aa):
        return f"> ±{fine_percent(row.detectable, signed=False)}" if row.detectable else "any"
    if math.isinf(row.detectable):
        return "none"
    return percent(row.detectable, signed=False)


def _false_positive(row: CalibrationRow) -> str:
    rate = row.false_positive
    if rate is None or not math.isfinite(rate.observed):
        return "-"
    return f"{percent(rate.observed, signed=False)} ({percent(rate.expected, signed=False)})"


def cells(calibration: Calibration) -> list[list[str]]:
    lines = []
    previous = None
    for row in calibration.rows:
        lines.append([
            row.workload if row.workload != previous else "",
            row.label,
            percent(row.noise, signed=False),
            figures.delta_cell(row.aa) if row.aa is None or row.aa.verdict != "same" or row.aa.exact else
            f"{percent(row.aa.delta)} ~",
            _detectable(row),
            _false_positive(row),
        ])
        previous = row.workload
    return lines


def header(calibration: Calibration) -> list[str]:
    result = calibration.analysis
    head = headers.header(result)
    run = result.run
    status = "" if run.status == "complete" else f" ({run.status})"
    head[0] = f"iolab calibrate: {result.experiment.name}"
    head[2] = (
        f"run {run.id}{status}: A/A, {calibration.baseline} against an identical copy "
        f"({calibration.copy}), {result.rounds_done} of {result.experiment.run.max_rounds} rounds, "
        f"{result.experiment.run.order}"
    )
    return head


def methods(calibration: Calibration) -> list[str]:
    rows = sum(1 for row in calibration.analysis.rows if row.primary)
    test = legends.TEST_TEXT[calibration.test]
    per = "rounds" if calibration.test == PAIRED else "per side"
    n = max((row.n for row in calibration.rows), default=0)
    rates = [row.false_positive for row in calibration.rows if row.false_positive and row.false_positive.subsets]
    exact = [row for row in calibration.rows if within_tolerance(row.aa)]
    lines = [f"noise: relative stddev of the {2 * n} values of both copies."]
    if len(exact) < len(calibration.rows):
        lines += [
            f"A/A delta: {calibration.copy} against {calibration.baseline} ({test}, Holm over the "
            f"{rows} primary rows; others exploratory); ~ is the expected outcome, * a false alarm.",
            f"detectable: smallest change the {test} finds with "
            f"{calibration.power * 100:.0f}% power at this noise, n={n} {per}, alpha "
            f"{calibration.alpha:g}/{rows} = {calibration.detect_alpha:.3g} (Holm's first step), "
            f"simulated from the observed values; none: no change can reach it at this n.",
        ]
    if exact:
        whose = "every row's values repeat" if len(exact) == len(calibration.rows) else "values that repeat"
        lines.append(
            f"= exact: {whose} (identical, or within the tolerance): no test, the A/A delta as measured "
            f"({calibration.copy} against {calibration.baseline}); = (no change beyond the values' spread) is "
            f"the expected outcome, =* a change. "
            f"detectable: a change that moves the values apart by more than {SEPARATION:g} times their "
            f"ranges (any: identical values, where any change of the value shows from 2 rounds on; values "
            f"that vary need 3, or a gap beyond {SEPARATION_TWO:g} times their ranges in 2).")
    identical = [row.aa for row in calibration.rows
                 if row.aa is not None and row.aa.exact is not None and not within_tolerance(row.aa)]
    if identical:  # a quantized metric that never moved (wall mode): its mark is explained too
        marks = " ".join(dict.fromkeys(figures.mark(aa) for aa in identical))
        lines.append(f"{marks} exact: identical values in every round (a quantized metric, e.g. a histogram "
                     f"bucket): no test, the A/A delta as measured; = (no change) is the expected outcome, "
                     f"=* a change; a mark in parentheses: an exploratory row.")
    if rates:
        rate = rates[0]
        lines.append(
            f"A/A FP: share of {rate.subsets} subsets of {rate.k} of the {n} rounds in which "
            f"{calibration.copy} against {calibration.baseline} on those rounds has "
            f"p<{calibration.alpha:g}; (null): the share expected with no difference at "
            f"{rate.k} {per}. The subsets share rounds, so one unusual round counts in many of them: "
            f"a coarse figure at {n} rounds, not a measured false-alarm rate."
        )
    return lines


def _notes(calibration: Calibration) -> list[str]:
    where: dict[str, list[str]] = {}
    for row in calibration.rows:
        for warning in row.warnings:
            where.setdefault(warning, []).append(f"{row.workload} {row.label}")
    notes = [f"{', '.join(rows)}: {warning}" for warning, rows in where.items()]
    return list(dict.fromkeys(notes + footnotes.footnotes(calibration.analysis)))


def _layout(lines: list[list[str]]) -> list[str]:
    everything = [COLUMNS, *lines]
    widths = [max(len(line[i]) for line in everything) for i in range(len(COLUMNS))]
    out = []
    for line in everything:
        text = f"{line[0]:<{widths[0]}}  {line[1]:<{widths[1]}}"
        text += "".join(f"  {cell:>{width}}" for cell, width in zip(line[2:], widths[2:]))
        out.append(text.rstrip())
    return out


def render_text(calibration: Calibration) -> str:
    lines = figures.wrapped(header(calibration)) + [""] + _layout(cells(calibration)) + [""]
    lines += figures.wrapped(methods(calibration))
    notes = _notes(calibration)
    if notes:
        lines += ["", "notes:"] + figures.wrapped([f"- {note}" for note in notes], "  ")
    return "\n".join(lines) + "\n"


def render_markdown(calibration: Calibration) -> str:
    head = header(calibration)
    lines = [f"### {head[0]}", "", *[f"{line}  " for line in head[1:]], ""]
    lines += ["| " + " | ".join(COLUMNS) + " |", "|---|---|" + "---:|" * 4]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells(calibration)]
    lines += ["", *[f"- {line}" for line in methods(calibration)]]
    notes = _notes(calibration)
    if notes:
        lines += ["", "notes:", "", *[f"- {note}" for note in notes]]
    return "\n".join(lines) + "\n"


def document(calibration: Calibration) -> dict[str, Any]:
    result = calibration.analysis
    run = result.run
    rows = []
    for row in calibration.rows:
        aa = row.aa
        rate = row.false_positive
        rows.append({
            "workload": row.workload,
            "metric": row.metric,
            "label": row.label,
            "unit": row.unit,
            "n": row.n,
            "noise": figures.json_number(row.noise),
            "aa_delta": figures.json_number(aa.delta) if aa else None,
            "aa_delta_ci": [figures.json_number(aa.delta_low), figures.json_number(aa.delta_high)] if aa else None,
            "aa_p": figures.json_number(aa.p) if aa else None,
            "aa_verdict": aa.verdict if aa else None,
            "detectable": None if math.isinf(row.detectable) else figures.json_number(row.detectable),
            "detectable_reachable": not math.isinf(row.detectable),
            "false_positive": None if rate is None else {
                "observed": figures.json_number(rate.observed), "expected": figures.json_number(rate.expected),
                "subsets": rate.subsets, "rounds_per_subset": rate.k,
            },
            "warnings": list(row.warnings),
        })
    return {
        "iolab_json_version": JSON_VERSION,
        "kind": "calibration",
        "run": {
            "id": run.id, "name": run.name, "status": run.status, "seed": run.seed,
            "started": run.started, "finished": run.finished, "rounds_done": result.rounds_done,
            "host": run.host,
        },
        "baseline": calibration.baseline,
        "copy": calibration.copy,
        "alpha": calibration.alpha,
        "detect_alpha": calibration.detect_alpha,
        "power": calibration.power,
        "test": calibration.test,
        "methods": methods(calibration),
        "rows": rows,
        "notes": _notes(calibration),
    }


def render_json(calibration: Calibration) -> str:
    return json.dumps(document(calibration), indent=2) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
