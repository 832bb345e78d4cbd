"""Tables of aligned columns whose header words sit over the columns by where they stand.

A line naming the sides over a line naming the same measures once a side::

              baseline             patched
    bs    BW(MiB/s) lat(usec)   BW(MiB/s) lat(usec)
    4K    300       40.1        420       31.2

The header's words may be one space apart, so its cells are not found by
its gaps: each word goes to the figure column nearest under it (a word in
parentheses stays with the word before it, ``lat (usec)``), and the words
left of the first figure column name the rows. The sides' line is cut in
its cells (two spaces or more apart), each standing over a block of as many
columns as the measures a side; the measures' names must repeat block by
block, and the blocks' names must be the two sides (``naming.column_pairs``),
else the table is not of this form. Each row then gives a claim per measure:
the before block's figure against the after block's.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.grids import RULE, named_unit
from iolab.mail.claimed.model import Claim, aligned, make, number, said_unit, unit_of
from iolab.mail.claimed.naming import column_pairs

_FIGURE = re.compile(r"^~?[+-]?\d[\d,]*(?:\.\d+)?(?:[kKMG](?![A-Za-z]))?$")


def _cells(text: str, gap: int) -> list[tuple[int, int, str]]:
    """The line's cells (start, end, text): words at most ``gap`` spaces apart are one cell."""
    out: list[tuple[int, int, str]] = []
    for word in re.finditer(r"\S+", text.expandtabs(8)):
        if out and word.start() - out[-1][1] <= gap:
            start, _, name = out[-1]
            out[-1] = (start, word.end(), f"{name} {word.group()}")
        else:
            out.append((word.start(), word.end(), word.group()))
    return out


def _row(text: str) -> tuple[str, list[tuple[int, int, float, str]]] | None:
    """A data row: its label (the words before its figures) and each figure with where it stands and
    the unit written after it (``300 MiB/s``); None when a word that is no unit follows a figure."""
    words = list(re.finditer(r"\S+", text.expandtabs(8)))
    first = next((k for k, w in enumerate(words) if k and _FIGURE.match(w.group())), None)
    if first is None:
        return None  # the first word is the row's label, a figure too ("4K", "16")
    figures: list[tuple[int, int, float, str]] = []
    for word in words[first:]:
        value = number(word.group()) if _FIGURE.match(word.group()) else None
        if value is not None:
            figures.append((word.start(), word.end(), value, ""))
        elif figures and not figures[-1][3] and unit_of(word.group()):
            start, end, before, _ = figures[-1]
            figures[-1] = (start, end, before, word.group())
        else:
            return None
    return " ".join(w.group() for w in words[:first]), figures


def _names(header: str, columns: list[tuple[int, int]]) -> list[str] | None:
    """Each column's name from the header's words, a word to the column nearest under it."""
    names: list[list[str]] = [[] for _ in columns]
    last = -1
    for word in re.finditer(r"\S+", header.expandtabs(8)):
        if word.end() <= columns[0][0]:
            continue  # the rows' labels' name ("bs")
        middle = (word.start() + word.end()) / 2
        near = min(range(len(columns)), key=lambda c: abs((columns[c][0] + columns[c][1]) / 2 - middle))
        if word.group().startswith("(") and last >= 0:
            near = last  # "lat (usec)": the unit stays with its measure
        names[near].append(word.group())
        last = near
    return [" ".join(n) for n in names] if all(names) else None


def _block(sides: list[tuple[int, int, str]], columns: list[tuple[int, int]], width: int) -> bool:
    """Whether each side's name stands nearer its own block of columns than any other."""
    blocks = [(columns[k * width][0], columns[k * width + width - 1][1]) for k in range(len(sides))]
    for k, (start, end, _) in enumerate(sides):
        middle = (start + end) / 2
        if min(range(len(blocks)), key=lambda b: abs((blocks[b][0] + blocks[b][1]) / 2 - middle)) != k:
            return False
    return True


def spanned_columns(lines: list[str], start: int, end: int) -> list[Claim] | None:
    """The claims of the table of lines start to end when a line naming the sides stands over a
    line naming the same measures once a side (the module's form); None when it is not one."""
    first = next((k for k in range(max(0, start - 1), end) if _row(lines[k])), None)
    if first is None:
        return None
    above = [k for k in range(max(0, first - 4), first) if lines[k].strip() and not RULE.match(lines[k])]
    rows = [(k, found) for k in range(first, end) if lines[k].strip() and not RULE.match(lines[k])
            for found in [_row(lines[k])]]
    if len(above) < 2 or any(found is None for _, found in rows):
        return None
    data = [(k, found) for k, found in rows if found]
    count = len(data[0][1][1])
    if any(len(figures) != count for _, (_, figures) in data):
        return None
    columns = [(min(r[1][1][c][0] for r in data), max(r[1][1][c][1] for r in data)) for c in range(count)]
    sides = [cell for cell in _cells(lines[above[-2]], 1) if cell[1] > columns[0][0]]
    width = count // len(sides) if sides else 0
    names = _names(lines[above[-1]], columns)
    if width < 2 or width * len(sides) != count or names is None or not _block(sides, columns, width):
        return None
    measures = [n.lower() for n in names[:width]]
    if any([n.lower() for n in names[k * width:(k + 1) * width]] != measures for k in range(len(sides))):
        return None  # the measures do not repeat side by side: not this form
    pairs = column_pairs([name for _, _, name in sides])
    if not pairs:
        return None
    said = said_unit(lines, above[0])
    out = []
    for k, (label, figures) in data:
        for b, a, key in pairs:
            for m in range(width):
                before, after = figures[b * width + m], figures[a * width + m]
                unit = unit_of(before[3]) or unit_of(after[3]) or named_unit(names[m]) or said
                value = aligned(after[2], unit_of(after[3]), unit_of(before[3]))
                name = " ".join(x for x in (label, key, names[m]) if x)
                out.append(make(name, before[2], value, unit, None, "", lines[k].strip()))
    return out
