"""Plain text for a mail: a table that fits 72 columns, then footnotes."""

from __future__ import annotations

import textwrap

from iolab.analysis import Analysis
from iolab.report import table

WIDTH = 72


def _layout(block: table.Block) -> list[str]:
    widths = [max(len(row[i]) for row in [block.columns, *block.rows]) for i in range(5)]
    widths[2] = max(widths[2], 10)
    widths[3] = max(widths[3], 10)
    lines = []
    for cells in [block.columns, *block.rows]:
        line = (
            f"{cells[0]:<{widths[0]}}  {cells[1]:<{widths[1]}}  "
            f"{cells[2]:>{widths[2]}}  {cells[3]:>{widths[3]}}  {cells[4]:>{widths[4]}}"
        )
        lines.append(line.rstrip())
    return lines


def _wrapped(lines: list[str], indent: str = "  ") -> list[str]:
    out = []
    for line in lines:
        out += textwrap.wrap(line, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def render(analysis: Analysis) -> str:
    lines = _wrapped(table.header(analysis))
    for block in table.blocks(analysis):
        lines += ["", *_layout(block)]
    lines += [""] + _wrapped(table.legend(analysis))
    intervals = table.delta_intervals(analysis)
    if intervals:
        lines += _wrapped(["delta 95% CI:"]) + _wrapped([f"  {line}" for line in intervals], "    ")
    notes = table.footnotes(analysis)
    if notes:
        lines += ["", "notes:"] + _wrapped([f"- {note}" for note in notes], "  ")
    return "\n".join(lines) + "\n"
