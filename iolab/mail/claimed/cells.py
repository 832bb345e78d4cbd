"""Cells of a table's row that are not a before and an after: a key a column names
(``randread  4k  149,426  170,763`` under ``rw  bs  hipri=0  hipri=1``: the 4k is
the row's block size), a ratio of the two before it (``1117  1921  1.72``), two
measures a row each with its delta.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.model import Better, Claim, Unit, better_of, make, unit_of
from iolab.mail.claimed.rows import Row, read_row

# a column whose cells are the row's key, not a figure measured: a size, a depth, a count of workers
_KEY_COLUMN = re.compile(r"^(?:bs|block[ _-]?size|(?:io|file|req(?:uest)?|record|block|i/o)?[ _-]?size|qd|"
                         r"queue[ _-]?depth|io[ _-]?depth|depth|(?:num)?jobs|threads?|th\.?|clients|procs|"
                         r"tasks|files|no\.?|nr|#)$", re.I)


_SIZE = re.compile(r"^\d+(?:\.\d+)?[kKmMgG]?(?:i?B)?$")


def corner_unit(header: str) -> Unit | None:
    """The unit the header's first name gives in parentheses over the rows' labels (``lat(us)``,
    ``Throughput (MB/s)``), where the figures' columns name sides, not units."""
    first = re.split(r"\s{2,}|\t", header.strip())[0]
    said = re.search(r"\(([^()]+)\)\s*$", first)
    return (unit_of(said.group(1).strip()) or unit_of(first[:said.start()].strip())) if said else None


_SIDE_WORD = r"(?:base(?:line)?|vanilla|stock|orig(?:inal)?|unpatched|patch(?:ed)?|before|after|old|new)"


def joined_side(label: str) -> str:
    """A row's label with a side's word joined to its key by a dash or an underscore set apart
    (``4k-randread-base`` / ``4k-randread-patch``: ``4k-randread base`` / ``4k-randread patch``)."""
    text = re.sub(rf"(?<=\w)[-_](?={_SIDE_WORD}$)", " ", label.strip(), flags=re.I)
    return re.sub(rf"^({_SIDE_WORD})[-_](?=\w)", r"\1 ", text, flags=re.I)


def sizes_line(text: str, below: list[str]) -> bool:
    """A line of sizes alone (``64B  1K  4K  64K``) over a row of a label in words and a figure under each
    size: the names of the table's columns."""
    words = text.split()
    row = read_row(below[0]) if below else None
    return len(words) >= 2 and all(_SIZE.match(w) for w in words) and \
        any(re.search(r"[A-Za-z]$", w) for w in words) and row is not None and len(row.values) == len(words) and \
        bool(re.fullmatch(r"[A-Za-z][\w -]*", row.label))


def even_rows(rows: list[Row]) -> list[Row]:
    """The rows with a row of one figure more than all the others (two or more) read with its first
    figure, a whole number, in its label (``p 1  0.33  4.4`` among ``p 2+3  0.40  5.1``: row "p 1")."""
    counts = [len(row.values) for row in rows]
    out = []
    for k, row in enumerate(rows):
        others = counts[:k] + counts[k + 1:]
        value, unit = row.values[0]
        if len(others) >= 2 and len(set(others)) == 1 and counts[k] == others[0] + 1 and row.label and \
                not unit and value == int(value) and not row.tags and others[0] >= 2:
            row = replace(row, label=f"{row.label} {value:g}", values=row.values[1:],
                          deltas=tuple((n - 1, d) for n, d in row.deltas))
        out.append(row)
    return out


_DELTA_NAME = re.compile(r"^(?:diff\w*|delta|change|gain|improvement|speed-?up|ratio|%\S*|\+/-|\(%\)|.*\(%\))$", re.I)


def percent_cells(header: str, row: Row) -> Row:
    """The row with each share its header names as a measure (``sys`` over ``31%``, not ``diff``) read as
    a figure in %, not as the mail's delta: only where the header names each of the row's cells."""
    if not row.deltas or row.tags:
        return row
    words = len(row.label.split())
    cells: list[tuple[str, object]] = []
    for k, value in enumerate(row.values):
        cells.append(("value", value))
        cells += [("delta", text) for n, text in row.deltas if n == k + 1]
    for cut in (r"\s{2,}|\t", r"\s+"):
        names = [n for n in re.split(cut, header.strip()) if n]
        if len(names) != words + len(cells):
            continue  # the header names the labels' columns too, and each cell's
        names = names[words:]
        values: list[tuple[float, str]] = []
        deltas: list[tuple[int, str]] = []
        for name, (kind, cell) in zip(names, cells):
            if kind == "value":
                values.append(cell)  # type: ignore[arg-type]
            elif not _DELTA_NAME.match(name) and re.fullmatch(r"\d+(?:\.\d+)?%", str(cell)):
                values.append((float(str(cell)[:-1]), "%"))  # "sys" over "31%": a measure in %
            else:
                deltas.append((len(values), str(cell)))
        if len(values) == len(row.values):
            return row
        return replace(row, values=tuple(values), deltas=tuple(deltas), stated=deltas[0][1] if deltas else "")
    return row


def key_cells(header: str, row: Row) -> Row:
    """The row with the figures under its header's key columns (``bs``, ``Size``, ``QD``, ``threads``) in
    its label: ``1  10M  0m8.401s  0m5.623s`` under ``no.  Size  without-patch  with-patch`` is row "1 10M"
    of two figures. Only where the header names each of the row's columns, one name a word or a column
    apart by two spaces or a tab, and a figure stays on each side."""
    for cut in (r"\s{2,}|\t", r"\s+"):
        names = [n for n in re.split(cut, header.strip()) if n]
        words = len(row.label.split())
        if len(names) - words not in (len(row.values), len(row.values) + 1) or words == 0:
            continue
        keys = 0
        while keys < len(row.values) and _KEY_COLUMN.match(names[words + keys]):
            keys += 1
        if not keys or len(row.values) - keys < 2 or any(row.tags) or \
                (len(names) - words == len(row.values) + 1 and not row.deltas):
            return row
        label = " ".join([row.label, *row.text.split()[words:words + keys]])
        deltas = tuple((n - keys, d) for n, d in row.deltas)
        return replace(row, label=label, values=row.values[keys:], deltas=deltas)
    return row


def gains(values: tuple[tuple[float, str], ...]) -> list[int]:
    """Where a row's figures run a, b, b / a (the mail's gain, as a ratio): the index of each a.
    A column of ratios of the two before it says those two are a before and an after."""
    out, k = [], 0
    while k + 2 < len(values):
        (a, _), (b, _), (r, unit) = values[k], values[k + 1], values[k + 2]
        if a > 0 and r > 0 and not unit and abs(b / a - r) <= max(0.006, 0.005 * r):
            out.append(k)
            k += 3
        else:
            k += 1
    return out


def gain_claims(group: str, row: Row, unit: Unit | None, better: Better | None) -> list[Claim]:
    """A claim per a, b, b / a run of a row (``1  1117  1921  1.72  1902  1942  1.02``)."""
    out = []
    for n, k in enumerate(gains(row.values)):
        (a, ua), (b, ub), (r, _) = row.values[k:k + 3]
        label = " ".join(x for x in (group, row.label, f"#{n + 1}" if n else "") if x)
        out.append(make(label, a, b, unit_of(ua or ub) or unit, better, f"{r:g}x", row.text))
    return out


def two_measures(header: str, row: Row, unit: Unit | None, better: Better | None) -> list[Claim]:
    """A row of two measures, each its before, after and delta (``iopsB iopsBL iops%  p99Bms p99BLms
    p99%``): each named by its column, whose name says which way it is better."""
    words = header.split()
    names = (words[1], words[4]) if len(words) == 7 else ("", "")
    out = []
    for k, name in enumerate(names):
        (a, ua), (b, ub) = row.values[2 * k], row.values[2 * k + 1]
        found = unit_of(ua or ub) or unit_of(name) or (unit if better_of(name) is None else None)
        label = row.label if k == 0 else f"{row.label} ({name or 2})"
        out.append(make(label, a, b, found, better or better_of(name), row.deltas[k][1], row.text))
    return out
