"""Table content shared by the text and markdown renderers.

Turns an Analysis into header lines, blocks of string cells (one block per
candidate, each beside the baseline) and footnotes. Renderers only lay
them out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from iolab.analysis import Analysis, Figure, Row
from iolab.stats import Comparison
from iolab.units import format_size

SYMBOL = {"better": "*", "worse": "*", "same": "~", "insufficient": "?"}


@dataclass(frozen=True)
class Block:
    """Baseline beside one candidate."""

    columns: list[str]  # workload, metric, baseline, candidate, delta
    rows: list[list[str]]


def number(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    size = abs(value)
    if size >= 10_000:
        return f"{value:.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def percent(value: float, signed: bool = True) -> str:
    if not math.isfinite(value):
        return "-"
    text = f"{value * 100:+.1f}%" if signed else f"{value * 100:.1f}%"
    return text


def figure_cell(figure: Figure) -> str:
    if figure.n == 0:
        return "FAILED" if figure.failed else "-"
    spread = figure.rel_spread
    if not math.isfinite(spread):
        return number(figure.center)
    width = f"{spread * 100:.1f}" if spread < 0.1 else f"{spread * 100:.0f}"
    return f"{number(figure.center)} ±{width}%"


def delta_cell(comparison: Comparison | None) -> str:
    if comparison is None:
        return "-"
    if comparison.verdict == "same":
        return "~"
    if comparison.verdict == "insufficient":
        return f"{percent(comparison.delta)} ?" if math.isfinite(comparison.delta) else "?"
    return f"{percent(comparison.delta)} *"


def header(analysis: Analysis) -> list[str]:
    run, experiment = analysis.run, analysis.experiment
    target = experiment.target
    where = {"loop": f"loop ({format_size(target.size)})", "device": target.device or "", "dir": target.path or ""}
    fs = "raw" if target.fs == "none" else target.fs
    if target.fs == "erofs":
        where["loop"] = "loop"
    host = run.host
    lines = [
        f"iolab: {experiment.name}",
        f"{fs} on {where[target.kind]}, kernel {host.get('kernel')}, {host.get('cpus')} CPUs",
    ]
    planned_rounds = experiment.run.iterations
    status = "" if run.status == "complete" else f" ({run.status})"
    view = {"median": "median", "mean": "mean", "hmean": "harmonic mean"}[experiment.report.view]
    lines.append(
        f"run {run.id}{status}: {analysis.rounds_done} of {planned_rounds} rounds, "
        f"{experiment.run.order}; {view} ±rel. spread"
    )
    return lines


def blocks(analysis: Analysis) -> list[Block]:
    result = []
    for candidate in analysis.variants[1:]:
        rows = []
        previous = None
        for row in analysis.rows:
            rows.append(_cells(row, analysis.baseline, candidate, show_workload=row.workload != previous))
            previous = row.workload
        result.append(Block(["", "", analysis.baseline, candidate, "delta"], rows))
    return result


def _cells(row: Row, baseline: str, candidate: str, show_workload: bool) -> list[str]:
    return [
        row.workload if show_workload else "",
        row.metric.label,
        figure_cell(row.figures[baseline]),
        figure_cell(row.figures[candidate]),
        delta_cell(row.comparisons.get(candidate)),
    ]


def legend(analysis: Analysis) -> list[str]:
    report = analysis.experiment.report
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[report.correction]
    return [
        f"* significant (Mann-Whitney U, p<{report.alpha:g}, {correction}-corrected); "
        "~ no significant change; ? too few samples"
    ]


def delta_intervals(analysis: Analysis) -> list[str]:
    lines = []
    for row in analysis.rows:
        for candidate, comparison in row.comparisons.items():
            if comparison.verdict in ("better", "worse") and math.isfinite(comparison.delta_low):
                who = f" {candidate}" if len(analysis.variants) > 2 else ""
                lines.append(
                    f"{row.workload} {row.metric.label}{who}: {percent(comparison.delta)} "
                    f"[{percent(comparison.delta_low)}, {percent(comparison.delta_high)}], "
                    f"p={comparison.p_adjusted:.2g}"
                )
    return lines


def footnotes(analysis: Analysis) -> list[str]:
    """Failures first (with their error text), then the statistics' caveats, each once."""
    notes = []
    for failure in analysis.failures:
        cells = ", ".join(str(seq) for seq in failure.cells[:6]) + (" ..." if len(failure.cells) > 6 else "")
        notes.append(
            f"FAILED {failure.variant} / {failure.workload}: {len(failure.cells)} cell(s) "
            f"[{cells}]: {failure.error}"
        )
    seen: dict[str, list[str]] = {}
    for row in analysis.rows:
        for candidate, comparison in row.comparisons.items():
            for warning in comparison.warnings:
                seen.setdefault(warning, []).append(f"{row.workload} {row.metric.label}")
    for warning, where in seen.items():
        rows = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        notes.append(f"{rows}: {warning}")
    notes += analysis.notes
    return notes
