"""Cells that hold both sides, a slash between them, under a header that says their order.

``IO size   IOPs Rand Read (before/after)   IOPs Rand Write (before/after)``
over ``512B   318K/316K   329K/325K``: each cell is a before and an after in
the order the header names them (``before/after``, ``base/patched``,
``old/new``; ``after/before`` turned round), a claim per row and column,
each named by the header's words over it (rows may stand a blank line
apart). A header naming no such pair gives no row: ``0.41 / 24.3k`` is a
time and a rate of one run.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.model import SUFFIX, Claim, make, number, unit_of
from iolab.mail.claimed.naming import side_of

_ORDER = re.compile(r"([\w+.-]+)\s*/\s*([\w+.-]+)")
_CELL = re.compile(r"(?<![\w./])(~?\d+(?:,\d{3})*(?:\.\d+)?)([kKMG]?)\s*/\s*(~?\d+(?:,\d{3})*(?:\.\d+)?)([kKMG]?)(?![\w./])")
_LABEL = re.compile(r"^\s*(\S+(?: \S+)*?)(?=\s{2,}|\t|$)")


_SHORT = {"w": "after", "wo": "before", "w.o": "before", "w.o.": "before"}  # "(w/w.o patch)", "(wo/w)"


def _side(word: str) -> str | None:
    return _SHORT.get(word.lower()) or side_of(word)


def _order(header: str) -> tuple[int, int] | None:
    """(0, 1) when the header names before then after across a slash, (1, 0) after then before."""
    for found in _ORDER.finditer(header):
        sides = _side(found.group(1)), _side(found.group(2))
        if sides == ("before", "after"):
            return 0, 1
        if sides == ("after", "before"):
            return 1, 0
    return None


def _columns(header: str) -> list[tuple[int, str]]:
    """The header's names (apart by two spaces or a tab) and where each starts."""
    return [(m.start(), m.group(0)) for m in re.finditer(r"\S+(?: \S+)*", header.expandtabs())]


def _name(columns: list[tuple[int, str]], start: int, end: int) -> str:
    """The header's name standing over a cell: the one overlapping it most, else the last starting before it."""
    over = [(min(end, s + len(n)) - max(start, s), n) for s, n in columns if min(end, s + len(n)) > max(start, s)]
    if over:
        return max(over)[1]
    before = [n for s, n in columns if s <= start]
    return before[-1] if before else ""


def _value(figure: str, suffix: str) -> float | None:
    value = number(figure.lstrip("~"))
    return None if value is None else value * SUFFIX.get(suffix.lower(), 1.0)


def _row_claims(row: str, columns: list[tuple[int, str]], order: tuple[int, int]) -> list[Claim]:
    """A row's cells of both sides, each a claim named by the header's words over it and the row's label."""
    label = _LABEL.match(row)
    if label is None or _CELL.match(label.group(1)):
        return []
    out = []
    for cell in _CELL.finditer(row):
        sides = [_value(cell.group(1), cell.group(2)), _value(cell.group(3), cell.group(4))]
        before, after = sides[order[0]], sides[order[1]]
        name = re.sub(r"\s*\(\s*[\w+.-]+\s*/\s*[\w+.-]+\s*\)", "", _name(columns, *cell.span()))  # "(before/after)"
        if before is None or after is None or cell.start() < label.end():
            continue
        unit = unit_of(name) or unit_of(label.group(1))
        out.append(replace(make(f"{name} {label.group(1)}".strip(), before, after, unit, None, "", row.strip()),
                           sides="names"))  # the header names the sides (the gate asks no more)
    return out


def _past_rules(lines: list[str], j: int) -> int:
    while j < len(lines) and (not lines[j].strip() or set(lines[j].strip()) <= set("-=+| ")):
        j += 1
    return j


def slashed_tables(lines: list[str]) -> tuple[list[Claim], set[int]]:
    """Every table of before/after cells under a header naming their order; and the lines it stands on."""
    claims: list[Claim] = []
    used: set[int] = set()
    for k, header in enumerate(lines):
        order = _order(header) if header.strip() and not _CELL.search(header) else None
        if order is None:
            continue
        columns = _columns(header)
        j = _past_rules(lines, k + 1)
        if j < len(lines) and not _CELL.search(lines[j]) and len(lines[j].split()) <= 8:
            columns = _columns(lines[j])  # the caption names the order, the line under it the columns
            j = _past_rules(lines, j + 1)
        while j < len(lines) and (not lines[j].strip() or _CELL.search(lines[j])):
            found = _row_claims(lines[j].expandtabs(), columns, order)
            claims += found
            used |= {j} if found else set()
            j += 1
    return claims, used
