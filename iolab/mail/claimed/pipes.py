"""Pipe tables in a mail's text: markdown, or ASCII boxes.

Also a table whose line breaks were lost (a web archive's copy: its
``|---|`` line gives the column count). Read across (the first figure is
before, the second after, unless the header names the after side first),
or down when its two rows are the sides (``Before change`` / ``After
change``, ``6.15.1`` / ``6.15.1+revert``): then each column is a claim.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import PERCENT, Claim, Unit, make, number, said_unit, unit_of
from iolab.mail.claimed.sides import row_sides
from iolab.mail.claimed.tables import AFTER_FIRST

_RULE_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
_BORDER = re.compile(r"^[+=|-][-+=| ]*$")
_SIZE = re.compile(r"^\s*\d+(?:\.\d+)?\s*[KMGT]i?B\s*$")  # a size (an I/O size seen by iostat): no measure


def _pipe_rows(line: str) -> list[list[str]]:
    """The rows of pipe-table text; a line that holds a whole table (its
    line breaks lost) is cut into rows by the column count of its rule."""
    start, end = line.find("|"), line.rfind("|")
    if start < 0 or end <= start:
        return []
    if not line.startswith("|") and not any(_RULE_CELL.match(c) for c in line.split("|")):
        return [line.split("|")]  # "6.15.1 |   362  |  2KiB": no outer pipes
    cells = line.split("|")
    rule = next((k for k, c in enumerate(cells) if _RULE_CELL.match(c)), None)
    if rule is None or (cells[0].strip() == "" and cells[-1].strip() == "" and
                        all(_RULE_CELL.match(c) for c in cells[1:-1])):
        return [line[start:end + 1].split("|")[1:-1]]
    width = 1
    while rule + width < len(cells) and _RULE_CELL.match(cells[rule + width]):
        width += 1
    if rule + width >= len(cells) - 1:  # the rule ends the line: a table of lines, not one line
        return [line[start:end + 1].split("|")[1:-1]]
    rows = []
    if rule - 1 - width >= 0 and not cells[rule - 1].strip():
        rows.append(cells[rule - 1 - width:rule - 1])  # the header, before the rule
    rows.append(cells[rule:rule + width])
    k = rule + width + 1
    while k + width < len(cells) and not cells[k - 1].strip():
        rows.append(cells[k:k + width])
        k += width + 1
    return rows


def _tables(lines: list[str]) -> list[tuple[int, list[list[str]]]]:
    """Each pipe table and the line it starts at."""
    tables: list[tuple[int, list[list[str]]]] = []
    current: list[list[str]] = []
    start = 0
    texts = [line.strip().lstrip(">").strip() for line in lines]
    for k, text in enumerate(texts):
        near = [t for t in texts[max(0, k - 1):k + 2:2] if t.count("|") >= 2 or ("+" in t and _BORDER.match(t))]
        if text.count("|") >= 3 or (text.count("|") >= 2 and (current or near)):
            start = start if current else k
            current += _pipe_rows(text)
        elif current and set(text) <= set("+-=| "):
            continue  # an ASCII box's border
        else:
            if current:
                tables.append((start, current))
            current = []
    if current:
        tables.append((start, current))
    return [(k, [row for row in table if not all(_RULE_CELL.match(c) or not c.strip() for c in row)])
            for k, table in tables]


def _first(cell: str) -> float | None:
    words = cell.split()
    return number(words[0]) if words else None


def _sides(body: list[list[str]]) -> tuple[list[str], list[str]] | None:
    """The two rows, before then after, when a table's rows are the two sides."""
    order = row_sides(body[0][0], body[1][0]) if len(body) == 2 else None
    return (body[order[0]], body[order[1]]) if order else None


def _down(header: list[str], before: list[str], after: list[str], said: Unit | None) -> list[Claim]:
    out = []
    for k in range(1, min(len(header), len(before), len(after))):
        a, b = _first(before[k]), _first(after[k])
        if _SIZE.match(before[k]) or _SIZE.match(after[k]):
            continue
        if a is not None and b is not None and header[k].strip():
            unit = unit_of(" ".join(before[k].split()[1:])) or unit_of(header[k]) or said
            out.append(make(header[k].strip(), a, b, unit, None, "",
                            f"{header[k].strip()}: {before[0].strip()} {a:g}, {after[0].strip()} {b:g}"))
    return out


def _across(header: list[str], body: list[list[str]], said: Unit | None) -> list[Claim]:
    swap = bool(AFTER_FIRST.search(" ".join(header)))
    out = []
    for row in body:
        found = [(k, v) for k, v in ((k, _first(c)) for k, c in enumerate(row) if k) if v is not None]
        if len(found) < 2 or not row[0].strip():
            continue
        (ka, a), (kb, b) = found[0], found[1]
        if swap:
            (ka, a), (kb, b) = (kb, b), (ka, a)
        stated = next((c.strip() for c in row if PERCENT.match(c.strip())), "")
        unit = unit_of(" ".join(row[ka].split()[1:])) or unit_of(row[0]) or \
            (unit_of(header[ka]) if ka < len(header) else None) or said
        out.append(make(row[0].strip(), a, b, unit, None, stated, "|".join(row).strip()))
    return out


def pipe_tables(lines: list[str]) -> list[Claim]:
    """Every pipe table's claims: read down when its rows are the sides, else across."""
    claims = []
    for k, table in _tables(lines):
        if len(table) < 2:
            continue
        header, body = table[0], table[1:]
        sides, said = _sides(body), said_unit(lines, k)
        claims += _down(header, *sides, said) if sides else _across(header, body, said)
    return claims
