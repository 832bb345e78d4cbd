"""The table shared by the text, markdown, HTML and reply renderers: an
Analysis as blocks of string cells, one block per candidate, each beside
the baseline. Renderers only lay them out; around it go the header
(headers.py), the legend and CIs (legends.py) and the notes
(footnotes.py), each figure written by figures.py.

A row may carry second lines: "min..max" when asked, and for a recheck run
"recheck" (the rechecked run's figures are the row itself, the recheck's
the line below, as in the f2fs-dio-iostat seed's "median"/"recheck" rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from iolab.analysis import Analysis, Row
from iolab.report.figures import delta_cell, figure_cell, minmax_cell


@dataclass(frozen=True)
class Block:
    """Baseline beside one candidate."""

    columns: list[str]  # workload, metric, baseline, candidate, delta
    rows: list[list[str]]


def _row_lines(row: Row | None, baseline: str, candidate: str, min_max: bool, label: str) -> list[list[str]]:
    if row is None:
        return [["", label, "-", "-", "-"]]
    lines = [[
        "",
        label,
        figure_cell(row.figures[baseline], row.view),
        figure_cell(row.figures[candidate], row.view),
        delta_cell(row.comparisons.get(candidate)),
    ]]
    if min_max:
        lines.append(["", "  min..max", minmax_cell(row.figures[baseline]), minmax_cell(row.figures[candidate]), ""])
    return lines


def _key(row: Row) -> tuple[str, str]:
    return row.workload, row.metric.name


def blocks(analysis: Analysis) -> list[Block]:
    primary = analysis.original or analysis
    recheck = {_key(row): row for row in analysis.rows} if analysis.original else None
    result = []
    for candidate in analysis.variants[1:]:
        rows = []
        previous = None
        for row in primary.rows:
            lines = _row_lines(row, analysis.baseline, candidate, analysis.min_max, row.metric.label)
            if recheck is not None:
                lines += _row_lines(recheck.get(_key(row)), analysis.baseline, candidate, analysis.min_max,
                                    "  recheck")
            if row.workload != previous:
                lines[0][0] = row.workload
            previous = row.workload
            rows += lines
        result.append(Block(["", "", analysis.baseline, candidate, "delta"], rows))
    return result
