"""Pipe tables whose columns are the sides, named in header rows above them.

``| base | patched | base | patched |`` under ``| P80 | P1 |``, or a group
row ``| base | patched |`` over ``| linear | opt_scan | linear | opt_scan |``:
each figure column takes the side its header rows name above it (a header
cell that spans several columns names them all, found by where it stands
on the line) and a key from the rest of its header (``P80``, ``linear``).
A before column pairs with the after column of its key, else with the next
after column to its right; each row then gives a claim per pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iolab.mail.claimed.model import PERCENT, Claim, Unit, aligned, convert, make, number, said_unit, unit_of
from iolab.mail.claimed.naming import Side, pair_columns, patch_side, side_of, unsided
from iolab.mail.claimed.runs import run_line
from iolab.mail.claimed.sides import marker
from iolab.mail.claimed.steps import step_pair

RULE = re.compile(r"^[\s+=|:-]*$")  # a table's rule line ("|----|----|", "+====+", "----  ----") or a blank one
_LEADING = re.compile(r"^\s*(~?[+-]?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?:[kKMG](?![A-Za-z]))?)(?=[A-Za-zµ/%\s(]|$)\s*(.*)$")


@dataclass(frozen=True)
class _Line:
    text: str
    spans: tuple[tuple[int, int], ...]  # each cell's [start, end) on the line

    def cell(self, k: int) -> str:
        start, end = self.spans[k]
        return self.text[start:end].strip()

    def over(self, start: int, end: int) -> str:
        """The cell standing over the span (the one holding its middle)."""
        middle = (start + end) // 2
        return next((self.text[a:b].strip() for a, b in self.spans if a <= middle < b), "")


def _line(text: str) -> _Line:
    cuts = [m.start() for m in re.finditer(r"\|", text)]
    edges = ([-1] if not text.lstrip().startswith("|") else []) + cuts + [len(text)]
    spans = tuple((a + 1, b) for a, b in zip(edges, edges[1:]) if b > a + 1 or text[a + 1:b].strip())
    return _Line(text, spans)


def _figure(cell: str) -> tuple[float, str] | None:
    found = _LEADING.match(cell)
    value = number(found.group(1)) if found else None
    return (value, found.group(2)) if value is not None and found else None


def _named(cell: str) -> bool:
    """A header's cell that opens with a percentile naming what it measures (``99.99% Lat [us]``,
    ``p99`` aside): a share followed by a word is a name, not a figure."""
    found = _LEADING.match(cell)
    return found is not None and re.match(r"(?:%|st|nd|rd|th)\s*[A-Za-z]{2,}", found.group(2)) is not None


def _block(lines: list[str], k: int) -> tuple[list[_Line], list[_Line], int]:
    """The header lines and the data lines of the pipe table from line k, and the line after it."""
    heads: list[_Line] = []
    data: list[_Line] = []
    j = k
    while j < len(lines) and (lines[j].count("|") >= 2 or (RULE.match(lines[j]) and lines[j].strip())):
        if not RULE.match(lines[j]):
            line = _line(lines[j])
            has_figures = any(_figure(line.cell(c)) and not _named(line.cell(c)) for c in range(1, len(line.spans)))
            (data if has_figures else (heads if not data else [])).append(line)
        j += 1
    return heads, data, j


def _name(head: _Line, first: _Line, c: int) -> str:
    """The header cell over figure column c: by index when the header has the data row's cells
    (markdown need not line them up), else by where it stands (a cell that spans several)."""
    return head.cell(c) if len(head.spans) == len(first.spans) else head.over(*first.spans[c])


def _head_sides(head: _Line, first: _Line, lines: list[str]) -> dict[str, Side]:
    """The side each name of a header line says over the figure columns: by its words, else by what the
    patch does to it (of two names, when the patch names one, the other is the other side)."""
    over = [n for n in (_name(head, first, c) for c in range(1, len(first.spans))) if n]
    names = list(dict.fromkeys(over))
    out = {n: s for n in names for s in [side_of(n)] if s}
    if out or not lines or any(over.count(n) < 2 for n in names):
        return out  # the patch's words name groups of columns (async over BW and latency), not a column each
    out = {n: s for n in names for s in [patch_side(n, lines)] if s}
    if len(names) == 2 and len(out) == 1:
        (known, side), = out.items()
        out[next(n for n in names if n != known)] = "after" if side == "before" else "before"
    return out


def _columns(heads: list[_Line], first: _Line, lines: list[str] | None = None) -> list[tuple[int, Side, str]]:
    """Each figure column's side and key from the header lines above it (the sides' names removed)."""
    said = [_head_sides(h, first, lines or []) for h in heads]
    out = []
    for c in range(1, len(first.spans)):
        named = [(n, s.get(n)) for h, s in zip(heads, said) for n in [_name(h, first, c)] if n.strip("-=+: ")]
        sides = {side for _, side in named} - {None}
        if len(sides) == 1:
            side = sides.pop()
            assert side is not None
            out.append((c, side, " ".join(n for n, s in named if n and s is None)))
    return out


def named_unit(cell: str) -> Unit | None:
    """The unit a header's cell names, alone or among its words (``Baseline IOPS``, ``6.9 (MB/s)``)."""
    return unit_of(cell.strip()) or next((u for w in re.findall(r"[A-Za-zµ/%]+", cell) for u in [unit_of(w)]
                                          if u and u[1] in ("time", "rate", "bandwidth")), None)


def prose_only(lines: list[str]) -> list[str]:
    """The lines with the rows of pipe tables blanked: a unit one table's header names is not another's."""
    return [line if line.count("|") < 2 else "" for line in lines]


def sided_grid(lines: list[str], k: int, about: list[str] | None = None) -> tuple[list[Claim], int] | None:
    """The claims of the pipe table at line k when header rows name sides over its columns (``about``:
    the patches' subjects, ``Subject: ...`` lines, that may say what a change drops or brings)."""
    heads, data, end = _block(lines, k)
    if not heads or not data:
        return None
    return _grid_claims(heads, data, lines, k, end, about or [])


def _grid_claims(heads: list[_Line], data: list[_Line], lines: list[str], k: int, end: int,
                 about: list[str]) -> tuple[list[Claim], int] | None:
    """A claim per row and pair of a before and an after column the header lines name."""
    columns = _columns(heads, data[0], [*about, *lines])
    step = step_pair([_name(heads[-1], data[0], c) for c in range(len(data[0].spans))])
    pairs = [step] if step else pair_columns(columns)  # "| base | +p1 | +p1-2 |": the first against the last
    if not pairs or len(columns) < 2:
        return None
    said: Unit | None = said_unit(prose_only(lines), k)
    mean = run_line([row.cell(0) for row in data], [[row.cell(c) if c < len(row.spans) else "" for row in data]
                                                    for c in range(1, len(data[0].spans))])
    data = [_line(mean)] if mean else data  # "| 1st run |", "| 2nd run |": one row, each column's mean
    out, name = [], ""
    first = min(min(b, a) for b, a, _ in pairs)
    for row in data:
        name = row.cell(0) or name  # a blank first cell: the row is another measure of the name above
        words = [row.cell(c) for c in range(1, min(first, len(row.spans))) if _figure(row.cell(c)) is None]
        label = " ".join(w for w in (name, *words) if w)  # "| 4 jobs | read | 410 | 520 |": "4 jobs read"
        for b, a, key in pairs:
            if max(a, b) >= len(row.spans):
                continue
            before, after = _figure(row.cell(b)), _figure(row.cell(a))
            if before is None or after is None:
                continue
            unit = unit_of(before[1]) or unit_of(after[1]) or unit_of(key) or unit_of(label) or \
                named_unit(_name(heads[-1], data[0], b)) or said
            cells = [after[1], *(row.cell(c) for c in range(1, len(row.spans)))]
            stated = next((w for cell in cells for w in re.findall(r"[+-]?\d+(?:\.\d+)?%", cell)
                           if PERCENT.match(w)), "")
            value = aligned(after[0], unit_of(after[1]), unit_of(before[1]))
            out.append(make(" ".join(x for x in (label, key) if x), before[0], value, unit, None, stated,
                            row.text))
    return out, end


# -- a table of aligned columns under two header lines ------------------------------------------

def _two_sides(first: str, second: str) -> bool:
    """Two words that are each a side's whole name, of the two sides (``vanilla`` / ``patched``; ``without
    patch`` is one name)."""
    return not re.fullmatch(r"(?i)with(?:out)?|w/o|w/|no|non|not|pre|post", first) and \
        {side_of(first), side_of(second)} == {"before", "after"}


def _aligned(text: str, spanning: bool) -> _Line:
    """A line of aligned columns as cells where they stand (tabs at every 8th column); a header's
    cell reaches to the next one, so that a name over several columns stands over each."""
    expanded = text.expandtabs(8)
    spans: list[tuple[int, int]] = []
    for word in re.finditer(r"\S+", expanded):  # words apart by one space are a cell, unless both are figures
        previous = expanded[spans[-1][0]:spans[-1][1]] if spans else ""
        if spans and word.start() == spans[-1][1] + 1 and not (_figure(word.group()) and _figure(previous)) and \
                not _two_sides(previous, word.group()):  # "vanilla patched" a tab apart: two columns
            spans[-1] = (spans[-1][0], word.end())
        else:
            spans.append(word.span())
    if spanning:
        spans = [(a, spans[n + 1][0] if n + 1 < len(spans) else len(expanded) + 80) for n, (a, _) in enumerate(spans)]
    return _Line(expanded, tuple(spans))


def _figures_row(text: str) -> _Line | None:
    line = _aligned(text, False)
    cells = [line.cell(c) for c in range(1, len(line.spans))]
    return line if len(cells) >= 2 and all(_figure(c) for c in cells) else None


def aligned_grid(lines: list[str], start: int, end: int, about: list[str] | None = None) -> list[Claim] | None:
    """The claims of a table of aligned columns (lines start to end) under two header lines, the upper
    naming groups of columns (``clients  async  sync`` over ``BW  Latency  BW  Latency``): None when
    its header is one line, or no header cell stands over several columns."""
    first = next((k for k in range(start, end) if _figures_row(lines[k])), None)
    if first is None or first - 2 < start or not all(lines[k].strip() for k in (first - 2, first - 1)):
        return None
    heads = [_aligned(lines[k], True) for k in (first - 2, first - 1)]
    data = [row for row in (_figures_row(t) for t in lines[first:end] if t.strip()) if row]
    width = len(data[0].spans)
    if len({len(row.spans) for row in data}) != 1 or all(len(h.spans) >= width - 1 for h in heads):
        return None
    found = _grid_claims(heads, data, lines, first, end, about or [])
    return found[0] if found else None


# -- a table a side, several per side ---------------------------------------------------------

_ROW_KEY = re.compile(r"^\s*([^\s(|]+)")


_HEADING = re.compile(r"^#{1,6}\s+(.*\S)\s*$")


@dataclass(frozen=True)
class _Sided:
    start: int
    side: Side
    key: str  # the table's corner cell ("BIO", "DIO"), what it is of
    heads: list[_Line]
    data: list[_Line]


_NEUTRAL = re.compile(r"^\s*[A-Za-z][\w/.+-]*(?:\s+[\w/.+-]+){0,3}:\s*$")  # a short heading, "CPU alignment:"


def _sided_tables(lines: list[str]) -> list[_Sided]:
    """The pipe tables under a line that names a side (``Before(PAGE_SIZE=4096):``, ``Patched(...):``),
    or whose corner cell names it (``| base | read MB/s |``)."""
    out: list[_Sided] = []
    side: Side | None = None
    k = 0
    while k < len(lines):
        heading = _HEADING.match(lines[k])  # a markdown heading ("### Before") is a caption too
        found = marker(f"{heading.group(1).rstrip(':')}:" if heading else lines[k])
        if found is not None and found[0] is not None and not found[2].strip():
            side = found[0]
        if found is None and _NEUTRAL.match(lines[k]) and side == "before" and out and out[-1].side == "before":
            side = "after"  # "Baseline:" over a table, then "CPU alignment:" over the same table: the other is after
        if lines[k].count("|") >= 2:
            heads, data, end = _block(lines, k)
            corner = heads[-1].cell(0) if heads else ""
            named = side_of(corner) if corner else None  # "| base | read MB/s |": the corner names the side
            if heads and data and (named or side):
                out.append(_Sided(k, named or side or "before", unsided(corner) if named else corner, heads, data))
            if named or side:
                k = max(end, k + 1)
                continue
        k += 1
    return out


def side_tables(lines: list[str]) -> tuple[list[Claim], set[int]]:
    """Tables a side each, paired by their corner cell (``BIO`` before with ``BIO`` after), their
    rows by the key that opens them (``8k (bigalloc)`` with ``8k (LBS)``), their cells by column;
    and the lines the paired tables start at."""
    tables = _sided_tables(lines)
    claims: list[Claim] = []
    used: set[int] = set()
    for before in (t for t in tables if t.side == "before"):
        after = next((t for t in tables if t.side == "after" and t.key == before.key and t.start not in used
                      and len(t.data[0].spans) == len(before.data[0].spans)), None)
        if after is None:
            continue
        used |= {before.start, after.start}
        theirs = {_key(row): row for row in after.data}
        for row in before.data:
            other = theirs.get(_key(row))
            claims += _cells(before, row, other) if other is not None else []
    return claims, used


def _key(row: _Line) -> str:
    found = _ROW_KEY.match(row.cell(0))
    return found.group(1) if found else row.cell(0)


def _cells(table: _Sided, row: _Line, other: _Line) -> list[Claim]:
    out = []
    for c in range(1, min(len(row.spans), len(other.spans))):
        a, b = _figure(row.cell(c)), _figure(other.cell(c))
        if a is None or b is None:
            continue
        unit_a, unit_b = unit_of(a[1]), unit_of(b[1])
        value = convert(b[0], unit_b[0], unit_a[0]) if unit_a and unit_b else b[0]
        if value is None:
            continue
        name = _name(table.heads[-1], row, c)
        label = " ".join(x for x in (table.key, _key(row), name) if x)
        out.append(make(label, a[0], value, unit_a or unit_b or unit_of(name),
                        None, "", f"{row.text.strip()} / {other.text.strip()}"))
    return out
