"""A pipe table whose rows are the runs of one measure, each column a side: one row of their means.

    |         | Without the cache | With the cache |
    | 1st run | 1m2.500s          | 0m40.250s      |
    | 2nd run | 1m0.500s          | 0m39.750s      |

The rows are samples, not rows of their own (``1st run``, ``run 2``, ``#3``,
``iteration 4``): the table is one row, each column's mean, named by how many
runs it holds. time(1)'s short form (``1m2.500s``) is seconds
(``outputs.worded``), never its minutes alone.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import number
from iolab.mail.claimed.outputs import worded

_RUN = re.compile(r"^(?:\d+(?:st|nd|rd|th)\s+(?:run|try|round|pass|iteration)|"
                  r"(?:run|try|round|pass|iter(?:ation)?)\s*#?\s*\d+|#\s*\d+)$", re.I)
_RULE = re.compile(r"^\s*[-=+][\s+=:-]*$")
_CELL = re.compile(r"^(\d[\d,]*(?:\.\d+)?)\s*(.*)$")


def _value(cell: str) -> tuple[float, str] | None:
    """A cell's figure and the unit after it, a duration in seconds."""
    found = _CELL.match(worded(cell.strip()).strip())
    value = number(found.group(1)) if found else None
    return (value, found.group(2).strip()) if found and value is not None else None


def run_means(table: list[list[str]]) -> list[list[str]]:
    """The table (a header row, then body rows of cells) with its rows of runs made one row of
    each column's mean; the table as it is when a row is no run or a cell no figure of one unit."""
    rows = [row for row in table if not all(_RULE.match(cell) for cell in row)]  # org-mode's "|----+----|"
    if len(rows) < 3:
        return table
    header, body = rows[0], rows[1:]
    if len(body) < 2 or not all(_RUN.match(row[0].strip()) for row in body):
        return table
    if len({len(row) for row in body}) != 1 or len(body[0]) < 3:
        return table
    mean = [f"mean of {len(body)} runs"]
    for c in range(1, len(body[0])):
        cells = [_value(row[c]) for row in body]
        if any(cell is None for cell in cells) or len({cell[1] for cell in cells if cell}) != 1:
            return table
        values = [cell[0] for cell in cells if cell]
        mean.append(f"{sum(values) / len(values):.6g} {cells[0][1] if cells[0] else ''}".strip())
    return [header, mean]


def run_line(labels: list[str], columns: list[list[str]]) -> str | None:
    """The pipe table row of the runs' means (``| mean of 3 runs | 98.5 s | 61.2 s |``) when every
    label is a run's and each column's cells figures of one unit; None otherwise."""
    table = run_means([["", *("" for _ in columns)], *([label, *cells] for label, *cells in
                                                        zip(labels, *columns))])
    return None if not table[-1][0].startswith("mean of ") else "| " + " | ".join(table[1]) + " |"
