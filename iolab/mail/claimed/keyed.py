"""Rows paired by key: aligned rows that each open with a side's name and a key, under a
header that names every column::

    kernel     bs     IOPS     lat(us)
    base       4k     410K     38.1
    base       64k    90K      120.5
    patched    4k     520K     30.2
    patched    64k    110K     100.4

The first column holds exactly two names, the two sides (``base`` / ``patched``,
``6.8`` / ``6.8+series``); a row of one side pairs with the other side's row of the
same key, and each figure column is a claim named by its header.
"""

from __future__ import annotations

from iolab.mail.claimed.model import Claim, make, number, unit_of
from iolab.mail.claimed.naming import row_sides

_MIN_ROWS = 4


def _block(lines: list[str], k: int) -> list[list[str]]:
    """The rows under header line k with as many words as it has (a table of aligned words)."""
    width = len(lines[k].split())
    rows = []
    for line in lines[k + 1:]:
        words = line.split()
        if len(words) != width:
            break
        rows.append(words)
    return rows


def _read(header: list[str], rows: list[list[str]], source: list[str]) -> list[Claim] | None:
    """The claims of one block when its first column names the two sides and its second the keys."""
    names = list(dict.fromkeys(row[0] for row in rows))
    order = row_sides(*names) if len(names) == 2 else None
    if order is None or any(number(w) is not None for w in header):
        return None
    by_key = {name: {row[1]: k for k, row in enumerate(rows) if row[0] == name} for name in names}
    if any(len(keys) != sum(row[0] == name for row in rows) for name, keys in by_key.items()):
        return None  # a key twice under one side: not rows paired by key
    before, after = names[order[0]], names[order[1]]
    common = [key for key in by_key[before] if key in by_key[after]]
    if len(common) < 2:
        return None
    out = []
    for key in common:
        b, a = rows[by_key[before][key]], rows[by_key[after][key]]
        for c in range(2, len(header)):
            x, y = number(b[c]), number(a[c])
            if x is not None and y is not None:
                out.append(make(f"{header[c]}, {header[1]} {key}", x, y, unit_of(header[c]), None, "",
                                f"{source[by_key[before][key]]} / {source[by_key[after][key]]}"))
    return out


def keyed_rows(lines: list[str]) -> tuple[list[Claim], set[int]]:
    """Every block of rows paired by key, and the lines it was read from (no other reader's)."""
    claims: list[Claim] = []
    used: set[int] = set()
    k = 0
    while k < len(lines):
        header = lines[k].split()
        rows = _block(lines, k) if len(header) >= 3 else []
        found = _read(header, rows, [line.strip() for line in lines[k + 1:k + 1 + len(rows)]]) \
            if len(rows) >= _MIN_ROWS else None
        if found:
            claims += found
            used |= set(range(k, k + 1 + len(rows)))
            k += 1 + len(rows)
        else:
            k += 1
    return claims, used
