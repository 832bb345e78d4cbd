"""Tables a side each under captions that say which side (whatever the table's own layout).

A side's table is a block of rows, each a key then figures: pipe cells
(``100M  | 2809.60  | 27.50`` under ``Block Size (bs) | Avg. Bandwidth (MiB/s) |
Avg. IOPS``), figures named in the row (``4k  IOPS=94.7k, BW=370MiB/s,
Lat=10802.43usec``) or aligned columns under a header line. Its caption is
the line above it (a banner's or a heading's words): ``current master,
rw=randwrite`` and ``this patchset, rw=randwrite``; or two captions alike but
for one word, the one a before word (``--- Kernel: vanilla file type: normal
---`` against ``--- Kernel: iomap_v1 file type: normal ---``). Each before
table pairs with the nearest after table of the same caption (its sides'
words aside), their rows by key, their figures by name or column: a claim
per key and figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iolab.mail.claimed.grids import RULE, side_tables
from iolab.mail.claimed.model import SPREAD, Claim, aligned, make, number, unit_of
from iolab.mail.claimed.naming import Side, side_of, unsided

_NAMED = re.compile(r"([A-Za-z][\w/.%-]*)=\s*(~?\d+(?:,\d{3})*(?:\.\d+)?)([kKMG](?![a-zA-Z]))?([A-Za-zµ/%]*)")
_FIGURE = re.compile(r"^\s*(~?\d+(?:,\d{3})*(?:\.\d+)?)\s*([kKMG](?![a-zA-Z]))?\s*([A-Za-zµ/%]*?)%?\s*$")
_KEY = re.compile(r"[\w.+/-]+(?: [\w.+/-]+)*")
_MULTIPLIER = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


@dataclass(frozen=True)
class _Cell:
    name: str
    value: float
    unit: str


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    caption: str
    rows: tuple[tuple[str, tuple[_Cell, ...], str], ...]  # key, cells, the line


def _figure(text: str) -> tuple[float, str] | None:
    found = _FIGURE.match(text)
    value = number(found.group(1).lstrip("~")) if found else None
    if value is None or not found:
        return None
    return value * _scale(found.group(2) or ""), found.group(3)  # "94.7k": 94700


def _row(line: str, header: list[str]) -> tuple[str, tuple[_Cell, ...]] | None:
    """A line as a key and its figures: pipe cells named by the header, else figures named in the line."""
    if line.count("|") >= 1:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        figures = [(k, _figure(c)) for k, c in enumerate(cells[1:], 1)]
        named = [_Cell(header[k] if k < len(header) else f"column {k}", f[0], f[1]) for k, f in figures if f]
        return (cells[0], tuple(named)) if cells[0] and named and len(named) == len(figures) else None
    found = list(_NAMED.finditer(line))
    key = line[:found[0].start()].strip() if found else ""
    if len(found) < 2 or not key or key[-1] in ":=" or not _KEY.fullmatch(key):
        return None  # the key, then its named figures ("rand write  IOPS=94.7k, BW=370MiB/s"), not a tool's line
    named = [_Cell(m.group(1), (number(m.group(2).lstrip("~")) or 0.0) * _scale(m.group(3) or ""), m.group(4))
             for m in found]
    return key, tuple(c for c in named if not SPREAD.search(c.name))


def _blocks(lines: list[str]) -> list[_Block]:
    """Each block of two rows or more, its header above it (pipe names) and its caption above that."""
    out: list[_Block] = []
    k = 0
    while k < len(lines):
        header: list[str] = []
        j = k
        if lines[j].count("|") >= 1 and _row(lines[j], []) is None and j + 1 < len(lines):
            header = [c.strip() for c in lines[j].strip().strip("|").split("|")]
            j += 1
        rows = []
        while j < len(lines) and lines[j].strip():
            if RULE.match(lines[j]) and lines[j].strip():
                j += 1
                continue
            row = _row(lines[j], header)
            if row is None:
                break
            rows.append((*row, lines[j].strip()))
            j += 1
        shape = {tuple(c.name for c in cells) for _, cells, _ in rows}
        keys = [key for key, _, _ in rows]
        if len(rows) >= 2 and len(shape) == 1 and len(set(keys)) == len(keys):  # a key a row: cases, not runs
            out.append(_Block(k, j, _caption(lines, k), tuple(rows)))
            k = j
        else:
            k += 1
    return out


def _caption(lines: list[str], k: int) -> str:
    above = next((lines[j].strip() for j in range(k - 1, max(-1, k - 4), -1)
                  if lines[j].strip() and not RULE.match(lines[j])), "")  # past a rule over the header
    return above.strip("-=#*~[] ").rstrip(":").strip()


def _words(caption: str) -> list[str]:
    return re.findall(r"[\w.+/-]+", caption.lower())


def _side(caption: str) -> Side | None:
    """The side a caption's opening names (``current master, rw=...``: before; ``this patchset, ...``)."""
    return side_of(re.split(r"[,(]", caption)[0]) if caption else None


def _one_word(a: str, b: str, about: list[str]) -> tuple[Side, Side] | None:
    """Two captions alike but for one word, one of the two a side's word: that side, and the other; or
    two values of a setting (``with 512 Rx buffers`` / ``with 1024 Rx buffers``), the one the patches'
    subjects set after (``Increase the DEF_RX_BUFFERS_PER_QUEUE to 1024``)."""
    wa, wb = _words(a), _words(b)
    apart = [(x, y) for x, y in zip(wa, wb) if x != y] if len(wa) == len(wb) else []
    if len(apart) != 1:
        return None
    if all(re.search(r"\d", w) for w in apart[0]):
        said = [any(re.search(rf"(?<![\w.]){re.escape(w)}(?![\w.])", line, re.I) for line in about) for w in apart[0]]
        return ("before", "after") if said == [False, True] else ("after", "before") if said == [True, False] else None
    sides = side_of(apart[0][0]), side_of(apart[0][1])
    if sides[0] and not sides[1]:
        return sides[0], "after" if sides[0] == "before" else "before"
    if sides[1] and not sides[0]:
        return "after" if sides[1] == "before" else "before", sides[1]
    return (sides[0], sides[1]) if sides[0] and sides[1] and sides[0] != sides[1] else None


def _pairs(blocks: list[_Block], about: list[str]) -> list[tuple[_Block, _Block, str]]:
    """Before and after tables, paired: by sides their captions name and what else they say, else by
    captions alike but for a side's word; each with the caption's rest, the pair's name."""
    out: list[tuple[_Block, _Block, str]] = []
    used: set[int] = set()
    for n, a in enumerate(blocks):
        for b in blocks[n + 1:]:
            if {a.start, b.start} & used or _shape(a) != _shape(b):
                continue
            next_to = b is blocks[n + 1]  # "original codes" then "with patch": neighbours each naming its side
            sides = _one_word(a.caption, b.caption, about) or \
                ((_side(a.caption), _side(b.caption)) if next_to or _rest(a.caption) == _rest(b.caption) else None)
            if sides in (("before", "after"), ("after", "before")):
                before, after = (a, b) if sides == ("before", "after") else (b, a)
                out.append((before, after, " ".join(w for w in _words(a.caption) if w in _words(b.caption))))
                used |= {a.start, b.start}
    return out


def _rest(caption: str) -> str:
    """A caption without its side's clause (``this patchset, rw=randwrite``: ``rw=randwrite``)."""
    parts = re.split(r",", caption, maxsplit=1)
    return unsided(parts[1] if len(parts) > 1 and side_of(parts[0]) else caption).lower()


def _shape(block: _Block) -> tuple[str, ...]:
    return tuple(c.name for c in block.rows[0][1])


def _scale(unit: str) -> float:
    """What a bare multiplier after a figure multiplies it by (``94.7k`` beside ``8726``), else 1."""
    return _MULTIPLIER.get(unit, 1.0)


def _axis(before: _Block, after: _Block) -> list[str]:
    """The names of the columns when both tables open with the same row of a setting's values, whole
    numbers rising with no unit (``iodepth | 4 | 8 | 16``): ``iodepth 4`` ...; else none."""
    (key, cells, _), (other, theirs, _) = before.rows[0], after.rows[0]
    values = [c.value for c in cells]
    if key != other or values != [c.value for c in theirs] or len(values) < 2 or any(c.unit for c in cells) or \
            any(v != int(v) for v in values) or any(a >= b for a, b in zip(values, values[1:])):
        return []
    return [f"{key} {v:g}" for v in values]


def captioned_tables(lines: list[str], about: list[str]) -> tuple[list[Claim], set[int]]:
    """Every pair of tables a side under captions naming the sides: a claim per key and figure; and the
    lines the paired tables stand on (``about``: the patches' subjects, ``Subject: ...`` lines)."""
    claims: list[Claim] = []
    used: set[int] = set()
    read = side_tables(lines)[1]  # pipe tables a side under Before(...): / Patched(...): are grids.py's
    for before, after, name in _pairs([b for b in _blocks(lines) if not read & set(range(b.start, b.end))], about):
        theirs = {key: (cells, line) for key, cells, line in after.rows}
        axis = _axis(before, after)
        for key, cells, line in before.rows[1:] if axis else before.rows:
            if key not in theirs:
                continue
            other, other_line = theirs[key]
            for k, (mine, their) in enumerate(zip(cells, other)):
                unit, its = unit_of(mine.unit) or unit_of(mine.name), unit_of(their.unit)
                value = aligned(their.value, its, unit_of(mine.unit))
                column = axis[k] if axis else mine.name
                claims.append(make(f"{name} {key} {column}".strip(), mine.value, value, unit, None, "",
                                   f"{line} / {other_line}"))
        used |= set(range(before.start, before.end)) | set(range(after.start, after.end))
    return claims, used
