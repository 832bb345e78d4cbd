"""A table in bands, one a side: the first column names a band, the rows under it are its own.

    1000us        Clients             1        2        4
                  Energy/Joules       2010     2804     8768
                  Throughput/(MB/s)   114      259      1041
    600us         Clients             1        2        4
                  Energy/Joules       2115  (5.22%)  2388  (-14.84%) ...

Two bands whose names are the sides (``base`` / ``patched``), or two values
of a setting, the one the patches' subjects name or the text says the change
sets (``to 600us``, ``600us is chosen``) after: each row of one band pairs
with the row of the same name in the other, a claim per column; a first row
of a setting's values the same in both (``Clients 1 2 4``) names the columns.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim, aligned, make, unit_of
from iolab.mail.claimed.naming import Side, side_of
from iolab.mail.claimed.rows import Row, read_row

_OPENING = re.compile(r"^\s{0,2}(\S+)\s{2,}(\S.*)$")
_UNDER = re.compile(r"^\s{3,}(\S.*)$")


def _bands(lines: list[str]) -> list[tuple[int, int, list[tuple[str, list[Row]]]]]:
    """Each run of bands (its first line, the line after it, and each band's name and rows)."""
    out = []
    k = 0
    while k < len(lines):
        bands: list[tuple[str, list[Row]]] = []
        j = k
        while j < len(lines):
            text = lines[j].expandtabs()
            opening, under = _OPENING.match(text), _UNDER.match(text)
            row = read_row(opening.group(2)) if opening else read_row(under.group(1)) if under and bands else None
            if row is None or not row.values:
                if set(text.strip()) <= set("=-+ ") and text.strip() and bands:
                    j += 1
                    continue  # a rule under the bands
                break
            if opening:
                bands.append((opening.group(1), []))
            bands[-1][1].append(row)
            j += 1
        if len(bands) == 2 and all(len(rows) >= 2 for _, rows in bands):
            out.append((k, j, bands))
            k = j
        else:
            k += 1
    return out


def _order(names: list[str], about: list[str], lines: list[str]) -> tuple[int, int] | None:
    """Which band is before: by the sides their names say, else of two values of a setting the one the
    subjects name or the text says the change sets (``to 600us``, ``600us is chosen``) is after."""
    sides: list[Side | None] = [side_of(n) for n in names]
    if set(sides) == {"before", "after"}:
        return (0, 1) if sides[0] == "before" else (1, 0)
    if not all(re.search(r"\d", n) for n in names):
        return None
    text = " ".join(lines)
    said = []
    for name in names:
        word = rf"(?<![\w.]){re.escape(name)}(?!\w|\.\d)"
        said.append(any(re.search(word, line, re.I) for line in about) or
                    re.search(rf"\bto\s+{word}|{word}\s+is\s+(?:chosen|selected|picked|used)", text, re.I) is not None)
    return (0, 1) if said == [False, True] else (1, 0) if said == [True, False] else None


def _axis(first: Row, second: Row) -> list[str]:
    values = [v for v, _ in first.values]
    if first.label != second.label or values != [v for v, _ in second.values] or any(u for _, u in first.values) or \
            any(v != int(v) for v in values) or any(a >= b for a, b in zip(values, values[1:])):
        return []
    return [f"{first.label} {v:g}" for v in values]


def banded_tables(lines: list[str], about: list[str]) -> tuple[list[Claim], set[int]]:
    """Every table of two bands a side: a claim per row and column; and the lines it stands on."""
    claims: list[Claim] = []
    used: set[int] = set()
    for start, end, bands in _bands(lines):
        order = _order([name for name, _ in bands], about, lines)
        if order is None:
            continue
        before, after = bands[order[0]][1], bands[order[1]][1]
        names = _axis(before[0], after[0])
        theirs = {row.label: row for row in after}
        for row in before[1:] if names else before:
            other = theirs.get(row.label)
            if other is None or len(other.values) != len(row.values):
                continue
            for k, ((a, ua), (b, ub)) in enumerate(zip(row.values, other.values)):
                unit = unit_of(ua) or unit_of(row.label)
                label = f"{row.label} {names[k] if names else f'column {k + 1}'}"
                claims.append(make(label, a, aligned(b, unit_of(ub), unit_of(ua)), unit, None, "",
                                   f"{row.text} / {other.text}"))
        used |= set(range(start, end))
    return claims, used
