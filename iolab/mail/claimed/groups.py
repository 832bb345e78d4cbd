"""A pipe table whose cells each hold a side's figures of several measures, under a line naming the
sides and a line naming the measures, its rows labelled by one cell or more::

                  baseline              |          patched             |   diff, %
    bs  |  rw   | BW,MiB/s  lat,usec    |  BW,MiB/s  lat,usec          | BW   lat
    4K  | read  |  279       41.2       |  512       22.5              | +83  -45

Each figure cell stands under a side's name (by where it stands on the line); a group of changes
(``diff``, ``delta``, ``%``) is set aside, and the two groups left are the sides when their names
say so (``naming.column_pairs``) or the text says the change brings one (``naming.introduced``: it
is after). A measure that is the ratio of two others (``IO/loadavg`` beside ``IO`` and ``loadavg``)
is derived, no claim. Each row then gives a claim per measure.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.grids import RULE, named_unit
from iolab.mail.claimed.model import Claim, make, number
from iolab.mail.claimed.naming import column_pairs, introduced

_FIGURE = re.compile(r"^[+-]?\d[\d,]*(?:\.\d+)?$")
_DELTA = re.compile(r"\b(?:diff\w*|delta|change|gain|improvement)\b|%", re.I)


def _spans(line: str) -> list[tuple[int, int]]:
    """Each pipe cell's [start, end) on the line."""
    edges = [-1, *(m.start() for m in re.finditer(r"\|", line)), len(line)]
    return [(a + 1, b) for a, b in zip(edges, edges[1:]) if b > a + 1]


def _figures(cell: str) -> list[float] | None:
    words = cell.split()
    found = [number(w) for w in words if _FIGURE.match(w)]
    return [f for f in found if f is not None] if words and len(found) == len(words) else None


def _over(line: str, span: tuple[int, int]) -> str:
    """The cell of a header line standing over the span's middle."""
    middle = (span[0] + span[1]) // 2
    return next((line[a:b].strip() for a, b in _spans(line) if a <= middle < b), "")


def _order(names: list[str], lines: list[str]) -> tuple[int, int] | None:
    pairs = column_pairs(names)
    if len(pairs) == 1:
        return pairs[0][0], pairs[0][1]
    brought = introduced([re.sub(r"\s*\(.*\)$", "", n) for n in names], lines)
    return None if brought is None else (1 - brought, brought)


def _derived(name: str, names: list[str]) -> bool:
    """A ratio of two other measures (``IO/loadavg`` beside ``IO,MiB/s`` and ``loadavg``)."""
    stems = {re.split(r"[,(\s]", n)[0].lower() for n in names if n != name}
    parts = name.lower().split("/")
    return len(parts) == 2 and all(p in stems for p in parts)


def group_cells(lines: list[str], k: int) -> tuple[list[Claim], int] | None:
    """The claims of the pipe table at line k when it is of the module's form; None otherwise."""
    end = k
    while end < len(lines) and lines[end].strip() and (lines[end].count("|") >= 2 or RULE.match(lines[end])):
        end += 1
    body = [j for j in range(k, end) if not RULE.match(lines[j])]
    data = [j for j in body if sum(len(_figures(lines[j][a:b]) or []) >= 2 for a, b in _spans(lines[j])) >= 2]
    heads = [j for j in body if j < (data[0] if data else k)]
    if len(data) < 2 or len(heads) < 2:
        return None
    spans = [s for s in _spans(lines[data[0]]) if _figures(lines[data[0]][s[0]:s[1]])]
    labels = [s for s in _spans(lines[data[0]]) if s[1] <= spans[0][0]]
    groups = [_over(lines[heads[-2]], s) for s in spans]
    kept = [g for g, name in enumerate(groups) if name and not _DELTA.search(name)]
    measures = [_over(lines[heads[-1]], s).split() for s in spans]
    width = len(measures[kept[0]]) if kept else 0
    order = _order([groups[g] for g in kept], lines) if len(kept) == 2 else None
    if order is None or width < 2 or any(len(measures[g]) != width for g in kept):
        return None
    b, a = kept[order[0]], kept[order[1]]
    out = []
    for j in data:
        cells = [_figures(lines[j][s[0]:s[1]]) for s in spans]
        before, after = cells[b], cells[a]
        if len(_spans(lines[j])) != len(labels) + len(spans) or not before or not after or \
                len(before) != width or len(after) != width:
            return None
        label = " ".join(lines[j][s[0]:s[1]].strip() for s in labels)
        for m, name in enumerate(measures[b]):
            if not _derived(name, measures[b]):
                out.append(make(f"{label} {name}", before[m], after[m], named_unit(name), None, "", lines[j].strip()))
    return out, end
