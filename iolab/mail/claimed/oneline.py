"""Every pair of figures on one line that could be a before and an after, with the line's context as
named features: what iolab.mail.claimed.proposed scores with its learned weights.

A line's figures are its numbers with the unit written after them (``4994MiB/s``, ``562K IOPS``,
``1.5 ms``, ``12%``) or none; dates, versions (``6.8.0``, ``v6.8``), times of day, ranges
(``5-10``), sums (``1+2``), spreads (``+- 0.38%``), hex, references (``[1]``), ordinals and factors (``4th``, ``2x``), identifiers
(``ext4``, ``p99``) and the numbers of a command line (``$ fio --bs=4k``, ``--iodepth=32``) are
not figures. Two figures pair when both have one unit's kind or both none; each pair comes in both
orders (the before the left one, then the right one).

The features of a pair (each a name; a word feature is ``role:word``, lower-cased letters only):
the header cells above each figure's column (``bh:``, ``ah:``; by ``|`` cells, else by the
columns' positions), the row's first cell (``lab:``), the words between the figures (``btw:``),
just before the before (``pre:``) and just after the after (``post:``), the block's first line
and the line above the block (``blk:``), the unit and its kind, the count of figures on the line,
the pair's places among them (first, last, neighbours, order), the sides the two header cells name
(iolab.mail.claimed.naming.side_of), a ``%`` cell after the pair and
whether a change stated on the line agrees with the pair, the ratio's size, the line's shape
(pipes, tabs, words) and its block's (how many lines have as many figures, whether the rules read
one of its lines).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from iolab.mail.claimed.model import NOT_MEASURED, NOT_TABLE, SUFFIX, Unit, convert, unit_of
from iolab.mail.claimed.naming import side_of

# a number as written: its sign, digits (1,234 grouped, 1.5e+09), a multiplier letter glued to it
_NUMBER = re.compile(r"(?<![\w.:/#\[\\@$+~-])(?P<sign>[+-]?~?)(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
                     r"(?:[eE][+-]?\d+)?)(?P<s>[kKmMgG](?![A-Za-z\d]))?")
_UNIT_AFTER = re.compile(r"\s?\(?(?P<u>%|[A-Za-zµμ]+(?:/[A-Za-z]+)?)\)?")  # the unit word after a figure
_GLUED = re.compile(r"[A-Za-zµμ_]+")  # letters glued to a figure
_NOT_AFTER = re.compile(r"^(?:[.:\-/+*]\d|[-_]?[A-Za-z]*\d|\]|-[A-Za-z])")  # 6.8.0, 12:30, 5-10, 3/4, 1+2, 0x1f, [1], 64-bit
_SPREAD = re.compile(r"(?:\+-|\+/-|±)\s*$")  # a figure's spread after its mean: 22.58 +- 0.38%
_DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|"
                   r"\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+\d", re.I)
_COMMAND = re.compile(r"^\s*(?:[$#>]\s+\S|\S+@\S+[:$#]|(?:sudo|fio|perf|dd|echo|mkfs\S*|mount|taskset|numactl|"
                      r"\./\S+|insmod|modprobe)\s)")
_OPTION = re.compile(r"(?:^|\s)--?[A-Za-z][\w-]*(?:=|\s+)$")  # a command's option just before a figure
_RULE = re.compile(r"^[\s|+:=*~_-]*$")
_WORD = re.compile(r"[a-z]+")
_DELTA = re.compile(r"^\s*[(\[]?\s*([+-]?\d+(?:\.\d+)?)\s*%")
_ORDINALS = ("st", "nd", "rd", "th", "x", "X")
MAX_FIGURES = 12  # a line with more figures is a dump, not a row of a claim
MAX_WORDS = 4  # words of one role kept from the nearest to the figure


@dataclass(frozen=True)
class Figure:
    value: float
    unit: str  # the unit shown (unit_of's), or the letters glued to the figure, or ""
    kind: str  # its kind (time, rate, ...), "" for none
    start: int
    end: int  # the figure's span on the line, its unit included
    percent: bool


@dataclass(frozen=True)
class Candidate:
    line: int  # the line's index in the lines read
    before: Figure
    after: Figure
    first: int  # the index of the before and of the after among the line's figures
    second: int
    features: frozenset[str]


def figures(line: str) -> list[Figure]:
    """The figures of a line, in their order (see the module's text for what is no figure)."""
    if NOT_TABLE.match(line.strip()) or NOT_MEASURED.match(line) or _COMMAND.match(line) or _DATE.search(line):
        return []
    out = []
    for match in _NUMBER.finditer(line):
        rest = line[match.end():]
        if _NOT_AFTER.match(rest) or _OPTION.search(line[:match.start()]) or _SPREAD.search(line[:match.start()]) or match.group("n").startswith("0") and \
                len(match.group("n")) > 1 and match.group("n")[1].isdigit():
            continue
        figure = _figure(line, match)
        if figure is not None:
            out.append(figure)
    return out


def _figure(line: str, match: re.Match[str]) -> Figure | None:
    value = float(match.group("n").replace(",", "")) * (-1 if "-" in match.group("sign") else 1)
    value *= SUFFIX[match.group("s").lower()] if match.group("s") else 1
    rest = line[match.end():]
    glued = _GLUED.match(rest)
    if glued and glued.group() in _ORDINALS:
        return None
    said = _UNIT_AFTER.match(rest)
    unit: Unit | None = unit_of(said.group("u")) if said else None
    if said and said.group("u") == "%":
        return Figure(value, "%", "ratio", match.start(), match.end() + said.end(), True)
    if unit is not None:
        scale = SUFFIX[said.group("u")[0].lower()] if said and unit[0].lower() != said.group("u").lower() and \
            said.group("u")[:1].lower() in ("k", "m") and unit[1] == "rate" else 1.0  # 350 KIOPS
        return Figure(value * scale, unit[0], unit[1], match.start(), match.end() + (said.end() if said else 0), False)
    if glued:  # a glued word that is no unit: 8GB, 4KiB, 100files; its own letters are its unit
        return Figure(value, glued.group().lower(), "", match.start(), match.end() + glued.end(), False)
    return Figure(value, "", "", match.start(), match.end(), False)


def candidates(lines: list[str], skip: frozenset[int] = frozenset()) -> list[Candidate]:
    """Every ordered pair of figures on one line of the same unit's kind (or both of none), with its
    features; ``skip``: lines to make no pair of (their text still the others' context)."""
    out = []
    for k, line in enumerate(lines):
        found = figures(line) if k not in skip else []
        if len(found) < 2 or len(found) > MAX_FIGURES:
            continue
        context = _context(lines, k, found, skip)
        for i, a in enumerate(found):
            for j, b in enumerate(found):
                if i != j and _alike(a, b):
                    out.append(Candidate(k, a, b, i, j, frozenset(_features(line, found, i, j, context))))
    return out


def _alike(a: Figure, b: Figure) -> bool:
    if a.percent or b.percent:
        return a.percent and b.percent
    return (a.kind == b.kind and a.kind != "") or (a.kind == b.kind == "" and a.unit == b.unit)


@dataclass(frozen=True)
class Context:
    header: str  # the table's header line above the row ("" for none)
    heads: tuple[str, ...]  # the header cell over each figure
    label: str  # the row's first cell: its words before its first figure
    block: str  # the block's first line and the line above the block
    shape: tuple[str, ...]  # the block's: how many of its lines have as many figures, whether the rules read one


def _context(lines: list[str], k: int, found: list[Figure], skip: frozenset[int]) -> Context:
    line = lines[k]
    top, bottom = k, k
    while top > 0 and lines[top - 1].strip():
        top -= 1
    while bottom + 1 < len(lines) and lines[bottom + 1].strip():
        bottom += 1
    alike = sum(len(figures(lines[n])) == len(found) for n in range(top, bottom + 1) if n != k)
    shape = (f"rows:{min(alike, 4)}",) + ("block_read",) * any(top <= n <= bottom for n in skip)
    prose = len(_WORD.findall(line[found[0].start:].lower())) > MAX_WORDS
    header = "" if prose else _header(lines, k, top, len(found))
    above = next((lines[n] for n in range(top - 1, max(-1, top - 4), -1) if lines[n].strip()), "")
    block = (lines[top] if top < k and lines[top] != header else "") + " " + above
    return Context(header, tuple(_head(header, line, f) for f in found), line[:found[0].start], block, shape)


def _header(lines: list[str], k: int, top: int, count: int) -> str:
    """The nearest line above the row in its block with fewer figures than the row and words in it."""
    for n in range(k - 1, max(top - 1, k - 12), -1):
        text = lines[n]
        if _RULE.match(text):
            continue
        if len(figures(text)) < count and _WORD.search(text.lower()):
            return text
    return ""


def _head(header: str, line: str, figure: Figure) -> str:
    """The header cell over a figure: the ``|`` cell of its index, else the header's cell (words two
    spaces apart) over its span or the nearest to it."""
    if not header:
        return ""
    if "|" in line and "|" in header:
        index = line[:figure.start].count("|")
        parts = header.split("|")
        return parts[index] if index < len(parts) else ""
    shift = len(line[:figure.start].expandtabs(8)) - figure.start
    start, end = figure.start + shift, figure.end + shift
    cells = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", header.expandtabs(8))]
    over = [text for s, e, text in cells if s < end and e > start]
    if over:
        return " ".join(over)
    near = min(cells, key=lambda c: min(abs(c[0] - end), abs(c[1] - start)), default=None)
    return near[2] if near else ""


def _words(text: str, role: str, last: bool = False) -> list[str]:
    found = _WORD.findall(text.lower())
    kept = found[-MAX_WORDS:] if last else found[:MAX_WORDS]
    return [f"{role}:{w}" for w in kept] or [f"{role}:-"]


def _features(line: str, found: list[Figure], i: int, j: int, context: Context) -> list[str]:
    a, b = found[i], found[j]
    left, right = (a, b) if i < j else (b, a)
    count = len(found)
    out = [f"unit:{a.unit or '-'}", f"kind:{a.kind or '-'}", f"count:{min(count, 6)}",
           "reversed" if i > j else "forward", f"gap:{min(abs(j - i), 4)}"]
    out += ["before_first"] * (i == 0) + ["after_last"] * (j == count - 1)
    out += ["pipes"] * ("|" in line) + ["tabs"] * ("\t" in line) + ["same_unit"] * (a.unit == b.unit)
    out += [f"words:{min(len(_WORD.findall(line.lower())), 12) // 3}"]
    out += _words(context.heads[i], "bh") + _words(context.heads[j], "ah") + ["same_head"] * (
        context.heads[i] == context.heads[j] and bool(context.heads[i]))
    out += [f"sides:{side_of(context.heads[i]) or '-'}-{side_of(context.heads[j]) or '-'}"]
    out += _words(context.label, "lab", last=True) + _words(line[left.end:right.start], "btw")
    out += _words(line[:left.start], "pre", last=True)[-2:] + _words(line[right.end:], "post")[:2]
    out += _words(context.block, "blk") + list(context.shape)
    after = convert(b.value, b.unit, a.unit) if b.unit != a.unit else b.value
    out += _delta(line, found, i, j, right, b.value if after is None else after)
    out += _ratio(a.value, b.value if after is None else after)
    return out


def _delta(line: str, found: list[Figure], i: int, j: int, right: Figure, b: float) -> list[str]:
    """A % cell right after the pair, and whether a change on the line is the pair's (``b``: the after
    in the before's unit)."""
    a = found[i].value
    out = []
    stated = _DELTA.match(line[right.end:])
    if stated and not right.percent:
        out.append("percent_after")
    changes = [f.value for f in found if f.percent]
    if a and not (found[i].percent and found[j].percent) and changes:
        change = (b - a) / abs(a) * 100
        agree = [abs(abs(c) - abs(change)) <= max(0.6, 0.05 * abs(c)) for c in changes]
        out.append("delta_agrees" if any(agree) else "delta_other")
        if any(agree) and any(math.copysign(1, c) == math.copysign(1, change) for c, ok in zip(changes, agree) if ok):
            out.append("delta_sign")
    return out


def _ratio(a: float, b: float) -> list[str]:
    out = ["integers"] * (a.is_integer() and b.is_integer()) + ["small"] * (abs(a) <= 8 and abs(b) <= 8)
    out += ["equal"] * (a == b) + ["zero"] * (a == 0 or b == 0) + ["negative"] * (a < 0 or b < 0)
    if a > 0 and b > 0 and a != b:
        size = abs(math.log(b / a))
        out.append(f"ratio:{next(k for k, cut in enumerate((0.02, 0.1, 0.3, 0.7, 1.5, 3.0, math.inf)) if size < cut)}")
        out.append("up" if b > a else "down")
    return out
