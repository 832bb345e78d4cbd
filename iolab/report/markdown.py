"""Markdown: the same table and notes as the text report, for a web page or PR."""

from __future__ import annotations

from iolab.report import table
from iolab.analysis.model import Report


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def render(report: Report) -> str:
    analysis = report.analysis
    head = table.report_header(report)
    lines = [f"### {head[0]}", "", *[f"{line}  " for line in head[1:]]]
    for block in table.blocks(analysis):
        columns = ["workload", "metric", *block.columns[2:]]
        lines += ["", "| " + " | ".join(columns) + " |", "|" + "---|" * 2 + "---:|" * 3]
        lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in block.rows]
    # each legend line its own paragraph, a leading * kept as text, not a bullet
    lines += [part for line in table.legend(analysis) for part in ("", "\\" + line if line.startswith("*") else line)]
    intervals = table.delta_intervals(analysis)
    if intervals:
        lines += ["", table.interval_title(analysis), "", *[f"- {line}" for line in intervals]]
    notes = table.report_notes(report)
    if notes:
        lines += ["", "notes:", "", *[f"- {note}" for note in notes]]
    return "\n".join(lines) + "\n"
