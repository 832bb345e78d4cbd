"""Plain text for a mail: a header of at most 6 lines (in full with --verbose), a table that fits
72 columns, then footnotes."""

from __future__ import annotations

from iolab.report import claims, figures, footnotes, headers, legends, series, table
from iolab.analysis.model import Report

WIDTH = figures.WIDTH


def _aligned(rows: list[list[str]]) -> list[str]:
    """Rows as lines: label columns left-aligned, the last three (baseline,
    candidate, delta) right-aligned, two spaces between columns."""
    count = len(rows[0])
    widths = [max(len(row[i]) for row in rows) for i in range(count)]
    for i in (count - 3, count - 2):
        widths[i] = max(widths[i], 10)
    lines = []
    for row in rows:
        cells = [
            f"{cell:<{width}}" if i < count - 3 else f"{cell:>{width}}"
            for i, (cell, width) in enumerate(zip(row, widths))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def _layout(block: table.Block) -> list[str]:
    """The block as a table; when a column of workload names would make it
    wider than a mail, each workload gets a line of its own above its rows."""
    lines = _aligned([block.columns, *block.rows])
    if max(len(line) for line in lines) <= WIDTH:
        return lines
    body = _aligned([block.columns[1:], *(row[1:] for row in block.rows)])
    stacked = [f"  {body[0]}"]
    for row, line in zip(block.rows, body[1:]):
        if row[0]:
            stacked.append(row[0])
        stacked.append(f"  {line}")
    return stacked


def render(report: Report) -> str:
    analysis = report.analysis
    head, more = (figures.wrapped(headers.report_header(report)), False) if report.verbose else \
        headers.short_header(report)  # wrapped to at most 6 lines
    lines = list(head)
    if analysis.series is not None:
        lines += series.text_lines(analysis)
    else:
        for block in table.blocks(analysis):
            lines += ["", *_layout(block)]
    lines += [""] + figures.wrapped(legends.legend(analysis))
    intervals = legends.delta_intervals(analysis)
    if intervals:
        lines += figures.wrapped([legends.interval_title(analysis)]) + figures.wrapped([f"  {line}" for line in intervals], "    ")
    checked = claims.text_lines(analysis)
    if checked:
        lines += ["", *checked]
    notes = footnotes.report_notes(report)
    if notes:
        lines += ["", "notes:"] + figures.wrapped([f"- {note}" for note in notes], "  ")
    if more:
        lines += ["", "(the header in full: --verbose, and the JSON report's \"header\")"]
    return "\n".join(lines) + "\n"
