"""Markdown: the same table and notes as the text report, for a web page or PR."""

from __future__ import annotations

from iolab.report import claims, footnotes, headers, legends, series, table
from iolab.analysis import Analysis
from iolab.analysis.model import Report


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def _series(analysis: Analysis) -> list[str]:
    """One column per step, each delta under its value; steps and attribution as a list."""
    lines = series.rows(analysis, list(range(len(analysis.variants))), True, True)
    head = ["workload", "metric", *lines[0][2:]]
    out = ["", "| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    out += ["| " + " | ".join(_escape(c) for c in line) + " |" for line in lines[1:]]
    attribution = series.attribution(analysis)
    out += ["", series.steps_line(analysis), *[x for line in series.kernels_line(analysis) for x in ("", line)], "",
            attribution[0], "",
            *[f"- {line.strip()}" for line in attribution[1:]], "", series.spent(analysis)]
    return out


def render(report: Report) -> str:
    analysis = report.analysis
    head = headers.report_header(report)
    lines = [f"### {head[0]}", "", *[f"{line}  " for line in head[1:]]]
    if analysis.series is not None:
        lines += _series(analysis)
    for block in [] if analysis.series is not None else table.blocks(analysis):
        columns = ["workload", "metric", *block.columns[2:]]
        lines += ["", "| " + " | ".join(columns) + " |", "|" + "---|" * 2 + "---:|" * 3]
        lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in block.rows]
    # each legend line its own paragraph, a leading * kept as text, not a bullet
    lines += [part for line in legends.legend(analysis) for part in ("", "\\" + line if line.startswith("*") else line)]
    if analysis.experiment.claims is not None:
        lines += ["", claims.TITLE, "", "| " + " | ".join(claims.COLUMNS[:3] + ["claim"]) + " |", "|---|---:|---:|---|"]
        lines += ["| " + " | ".join(_escape(c) for c in [r[0], r[1], f"{r[2]} {r[3]}".strip(), r[4]]) + " |"
                  for r in claims.rows(analysis)]
        lines += ["", *[f"- {_escape(note)}" for note in claims.notes(analysis)]]
    intervals = legends.delta_intervals(analysis)
    if intervals:
        lines += ["", legends.interval_title(analysis), "", *[f"- {line}" for line in intervals]]
    notes = footnotes.report_notes(report)
    if notes:
        lines += ["", "notes:", "", *[f"- {note}" for note in notes]]
    return "\n".join(lines) + "\n"
