"""Which axis of a table names the sides, whatever the other axis holds.

A table is a grid of cells: one axis names the two sides, the other the
cases and measures. Across, the header's names say the sides
(``naming.column_pairs``), also where a kernel stands beside the same
kernel with the change among other kernels (``jobs  4.18-sq  5.6.15
5.6.15-patched``: 5.6.15 against 5.6.15-patched, 4.18-sq context). Down,
under a first row of a setting's values (``BLOCK_SIZE  512  4K  8K``,
``K  4  8  16  32``), the two rows that are the sides (``old (KIOPS)`` /
``new (KIOPS)``, or rows the prose defines: ``A is stock``) are read a
column at a time, each column named by its setting.
"""

from __future__ import annotations

from iolab.mail.claimed.naming import column_pairs, defined_sides, row_sides, side_groups
from iolab.mail.claimed.rows import Row
from iolab.mail.claimed.steps import step_pair


def kernel_pairs(names: list[str]) -> list[tuple[int, int, str]]:
    """Columns that are a kernel and the same kernel with the change, among other columns
    (``4.18-sq  5.6.15  5.6.15-patched``, ``v6.8  v6.9  v6.9+series``): (before, after, key) each,
    the key the kernel's name; a column in no pair is context."""
    out: list[tuple[int, int, str]] = []
    used: set[int] = set()
    for j, long in enumerate(names):
        for i, short in enumerate(names):
            a, b = short.strip(), long.strip()
            if i == j or i in used or j in used or not a or not b.startswith(a) or a == b:
                continue
            order = row_sides(a, b)
            if order is not None:
                pair = (i, j) if order == (0, 1) else (j, i)
                out.append((*pair, a))
                used |= {i, j}
    return sorted(out)


def side_columns(names: list[str]) -> list[tuple[int, int, str]]:
    """A header's before and after columns, paired: by the sides' words (``naming.column_pairs``),
    else a kernel and the same kernel with the change among others (``kernel_pairs``)."""
    return column_pairs(names) or (kernel_pairs(names) if len(names) > 2 else [])


def axis_row(row: Row) -> bool:
    """A row of three or more whole numbers rising, no unit written (``K  4  8  16  32``,
    ``BLOCK_SIZE  512  4K  8K  16K``): the columns' settings."""
    found = [v for v, unit in row.values]
    return len(found) >= 3 and not any(u for _, u in row.values) and all(v == int(v) for v in found) \
        and all(a < b for a, b in zip(found, found[1:]))


def axis_sides(rows: list[Row], lines: list[str]) -> tuple[str, Row, Row] | None:
    """Under a row of settings (``axis_row``), the two rows that are the sides: those the prose defines
    (``A is stock``, ``B is the same plus this series``), else steps of a series (the first against
    the last), else two rows whose names are the sides (``old (KIOPS)`` / ``new (KIOPS)``). Returns
    the header naming each column by its setting (``K=4``), the before row and the after row."""
    below = rows[1:]
    said = defined_sides([row.label for row in below], lines)
    before = [row for row in below if said.get(row.label) == "before"]
    after = [row for row in below if said.get(row.label) == "after"]
    step = step_pair([row.label.strip().rstrip(":") for row in below])  # "before", "p 1", "p 2+3": steps
    if step and not (before or after):
        before, after = [below[step[0]]], [below[step[1]]]
    if not (before or after) and len(below) == 2:
        order = row_sides(below[0].label, below[1].label)
        if order is not None:
            before, after = [below[order[0]]], [below[order[1]]]
    if len(before) != 1 or len(after) != 1:
        return None
    header = "  ".join([rows[0].label, *(f"{rows[0].label}={v:g}" for v, _ in rows[0].values)])
    return header, before[0], after[0]


def axis_groups(rows: list[Row]) -> list[tuple[str, Row, Row]]:
    """Under a row of settings, rows that pair as the sides of several measures (``read base``,
    ``read patched``, ``write base``, ``write patched``): each measure's key, its before and after row."""
    return [(key, rows[1 + b], rows[1 + a]) for key, b, a in side_groups([row.label for row in rows[1:]])] \
        if len(rows) > 3 else []
