"""Claim rows of a block the user names: which figures of its lines are the before and the after.

The reader (iolab.mail.claimed) decides alone which figures of a table are
a row's two sides, and where it cannot, ``iolab mail`` lists the block as
not read (iolab.mail.unread). Which two figures are a before and an after
is the user's call (docs/mails.md), made at a glance and once per block:

- ``40-52:2,3``: lines 40 to 52, on each the 2nd figure is the before and
  the 3rd the after (``45:2,3``: one line);
- ``40-52:2,2+1``: the sides one line below the other: the 2nd figure of
  a line the before, the 2nd of the next line of figures the after, the
  lines taken two by two (a header and a line of changes stated alone,
  ``-6.02%  -5.39%``, passed over);
- ``10-15/20-25``: a mail that prints each side as its own block: lines
  10-15 the before, 20-25 the after, their lines paired by their label
  (the line's text with its figures taken out; else in order, where each
  line names its side, or the before's one line with each of the
  after's), each figure with the one at its place
  (``10-15/20-25:2``: the 2nd figure of each line only).

Lines are numbered as ``iolab mail`` numbers its "not read" list
(unread.Block.where): the lines of the mail's file, or of the text read
where the file holds it encoded (quoted-printable, base64). A figure is a
number written alone or with its unit (``562K``, ``4994MiB/s``,
``12.5 ms``, ``3%``, ``1.5x``), counted from the left; a number inside a
word (``qd32``, ``99.00th``, ``v2``) is none. A row's label is the line's
words before its figures (a pipe table's cells before them); its unit the
one written with the figure, else the header's cell above it; which way
is better from the unit, else from the mail as the reader infers it
(iolab.mail.claimed.better), else left to the user. A line of the range
with figures but not the named ones gives no row and is counted as skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from iolab.mail.claimed.better import infer
from iolab.mail.claimed.naming import unsided
from iolab.mail.claimed.model import Claim, Unit, aligned, make, multiplier, number, said_unit, unit_of
from iolab.mail.unread import Block, files_at, run_at

Span = tuple[int, int]  # first and last line, 1-based, as the user gave them


class HintError(ValueError):
    """A --read spec that cannot be read: the message names the spec and what is wrong."""


@dataclass(frozen=True)
class Hint:
    """One --read spec, parsed."""

    spec: str  # as the user wrote it
    spans: tuple[Span, ...]  # one span, or the before's and the after's (per side)
    sides: tuple[int, int] | None  # 1-based figures of the before and the after (one span)
    keep: tuple[int, ...] = ()  # per side: the figures paired (none: each)
    below: tuple[int, int] = (0, 0)  # lines of figures below its own the before's and the after's line is (2,2+1)


@dataclass(frozen=True)
class HintRead:
    """What one hint read: its rows, the lines of the range that gave none, and where it is in the text."""

    spec: str
    rows: tuple[Claim, ...]
    skipped: int  # lines of the range with figures that gave no row
    lines: tuple[Span, ...]  # its spans in the text read, 0-based, last excluded
    where: str  # what its line numbers count: a file's name, or "the text read"


_SPEC = re.compile(r"^(\d+)(?:-(\d+))?(?:/(\d+)(?:-(\d+))?)?(?::(\d+(?:\+\d)?(?:,\d+(?:\+\d)?)*))?$")
EXAMPLE = "40-52:2,3 (lines 40-52, the 2nd figure the before, the 3rd the after) or 10-15/20-25 (each side a block)"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def parse(spec: str) -> Hint:
    """A --read spec (see the module's text); HintError names what is wrong."""
    match = _SPEC.match("".join(spec.split()))
    if match is None:
        raise HintError(f"--read {spec!r}: not a spec; write {EXAMPLE}")
    a, b, c, d, figures = match.groups()
    spans = [(int(a), int(b or a))] + ([(int(c), int(d or c))] if c else [])
    for first, last in spans:
        if first < 1 or last < first:
            raise HintError(f"--read {spec!r}: lines {first}-{last}: the first line is 1 or more and the last "
                            "not before it")
    refs = [tuple(int(x) for x in ref.split("+")) + (0,) for ref in figures.split(",")] if figures else []
    chosen, below = tuple(ref[0] for ref in refs), tuple(ref[1] for ref in refs)
    if any(n < 1 for n in chosen):
        raise HintError(f"--read {spec!r}: figures are counted from 1")
    if len(spans) == 2:
        if spans[0][1] >= spans[1][0] and spans[1][1] >= spans[0][0]:
            raise HintError(f"--read {spec!r}: the before's lines and the after's overlap")
        if any(below):
            raise HintError(f"--read {spec!r}: N+1 (a figure of the line below) is for one block's lines")
        return Hint(spec, tuple(spans), None, chosen)
    if len(refs) != 2 or refs[0] == refs[1] or min(below) != 0:
        raise HintError(f"--read {spec!r}: name two figures of each line, the before's and the after's "
                        f"({spans[0][0]}-{spans[0][1]}:2,3; 2,2+1: the after on the line below), or two blocks "
                        "(10-15/20-25)")
    return Hint(spec, tuple(spans), (chosen[0], chosen[1]), below=(below[0], below[1]))


# -- a line's figures ---------------------------------------------------------------------------

# a number alone or with its unit glued on ("562K", "2874MiB/s", "3%", "1.5x"), not part of a word ("qd32")
_NUMBER = re.compile(r"(?<![\w.])(?P<n>[~+-]?\d(?:[\d,]*\d)?(?:\.\d+)?(?:e[+-]?\d+)?)"
                     r"(?P<u>%|[A-Za-zµμ]+(?:/[A-Za-z]+)?)?(?![\w%/]|\.\d)")
_UNIT_AFTER = re.compile(r"\s*\(?(?P<u>%|[A-Za-zµμ]+(?:/[A-Za-z]+)?)\)?(?![\w/])")


@dataclass(frozen=True)
class Figure:
    """A figure of a line: its value (a multiplier applied), its unit where written, and where it is."""

    value: float
    unit: Unit | None
    start: int
    end: int  # past its unit, when written after it

    def text(self, line: str) -> str:
        return line[self.start:self.end]


def _valued(n: str, glued: str) -> tuple[float, Unit | None] | None:
    """The figure's value and unit from its digits and what is glued on (None: a number in a word)."""
    value = number(n)
    if value is None:
        return None
    if not glued or glued.lower() == "x":  # a factor's x: a figure of no unit
        return value, None
    unit = unit_of(glued)
    if unit is not None:  # "2874MiB/s", "350KIOPS" (its K a multiplier the unit's word carries)
        return value * multiplier(glued), unit
    if len(glued) == 1 and glued in "kKmMgG":  # "562K"
        scaled = number(n + glued)
        return (scaled, None) if scaled is not None else None
    if glued[0] in "kKMG" and unit_of(glued[1:]):  # "562KIOPS" as a suffix and a unit
        scaled = number(n + glued[0])
        return (scaled, unit_of(glued[1:])) if scaled is not None else None
    return None


def figures_of(line: str) -> list[Figure]:
    """The line's figures, left to right (see the module's text); a unit written after one is its own."""
    out = []
    for match in _NUMBER.finditer(line):
        found = _valued(match.group("n"), match.group("u") or "")
        if found is None:
            continue
        value, unit = found
        end = match.end()
        after = _UNIT_AFTER.match(line, end)
        if unit is None and after and unit_of(after.group("u")):  # "562K IOPS", "12.5 ms"
            word = after.group("u")
            value, unit, end = value * multiplier(word), unit_of(word), after.end()
        out.append(Figure(value, unit, match.start(), end))
    return out


# -- a line's words and its header ----------------------------------------------------------------

_TRIM = "|:=-*>#[],; \t"


def _words(line: str, upto: int | None = None) -> str:
    """The line's text (before column ``upto``), its pipes, rules and quote marks out, one space apart."""
    text = line[:upto] if upto is not None else line
    words = " ".join(text.replace("|", " ").split()).strip(_TRIM)
    while words[-1:] == "(" or words[:1] == ")" or words.count("(") < words.count(")") and words[-1:] == ")":
        words = words.strip(_TRIM + "()")  # a parenthesis the figures left open ("2874 (3305MB/s)")
    return " ".join(words.split())


def label_of(line: str, found: Sequence[Figure]) -> str:
    """The line's text with its figures taken out: what pairs a side's line with the other's."""
    text, cut = line, 0
    for figure in found:
        text = text[:figure.start - cut] + " " + text[figure.end - cut:]
        cut += figure.end - figure.start - 1
    return _words(text)


def _cells(line: str) -> list[tuple[int, int, str]]:
    """A header's cells with their columns: between pipes, else words one space apart."""
    pattern = r"[^|]+" if "|" in line else r"\S+(?: \S+)*"
    return [(m.start(), m.end(), m.group().strip()) for m in re.finditer(pattern, line) if m.group().strip()]


def _over(header: str, line: str, figure: Figure) -> str:
    """The header's cell over the figure: the same pipe cell, else the cell its columns overlap most,
    else the nearest; "" when the header has none."""
    if "|" in header and "|" in line:
        index = line[:figure.start].count("|") - line.lstrip().startswith("|")
        parts = [c.strip() for c in header.strip().strip("|").split("|")]
        return parts[index] if 0 <= index < len(parts) else ""
    cells = _cells(header)
    if not cells:
        return ""
    overlap = [(min(end, figure.end) - max(start, figure.start), start, text) for start, end, text in cells]
    best = max(overlap)
    if best[0] > 0:
        return best[2]
    return min(cells, key=lambda c: min(abs(c[0] - figure.end), abs(c[1] - figure.start)))[2]


def _header(lines: Sequence[str], k: int, top: int) -> str:
    """The table's header over line k: the nearest line above it (from ``top``, a span's first line, up to
    two lines above it) of more words than figures (heading())."""
    for j in range(k - 1, max(top - 3, -1), -1):
        if heading(lines[j]):
            return lines[j]
    return ""


def heading(line: str) -> bool:
    """A table's header, not its row: more words than figures, a unit and a key ("IOPS=") no word
    ("percentile  run 1  run 2" is; "randread 4k  562K  574K", "read: IOPS=562k, BW=2195MiB/s" are not)."""
    found = figures_of(line)
    words = [w for w in re.split(r"[\s|]+", label_of(line, found)) if re.search(r"[A-Za-z]", w)
             and not re.search(r"[=:]$", w) and unit_of(w) is None]
    return len(words) > len(found)


def _unit(lines: Sequence[str], k: int, top: int, figure: Figure) -> tuple[Unit | None, float]:
    """The figure's unit: its own, else the one unit the line's words name (a column of units), else its
    header's cell's (and the multiplier it names: "KIOPS"), else the one the text above says ("values in
    IOPS")."""
    if figure.unit is not None:
        return figure.unit, 1.0
    words = re.split(r"[\s|]+", label_of(lines[k], figures_of(lines[k])))
    named = {unit_of(w): w for w in words if w and unit_of(w)}  # a column of units: "seqread  MB/s  2874  3305"
    if len(named) == 1:
        ((unit, word),) = named.items()
        return unit, multiplier(word)
    cell = _over(_header(lines, k, top), lines[k], figure)
    found = unit_of(cell) if cell else None
    if found is not None:
        scale = max((multiplier(w) for w in re.split(r"[\s()]+", cell) if w), default=1.0)
        return found, scale
    return said_unit(list(lines), k), 1.0


# -- rows -----------------------------------------------------------------------------------------

_STATED = re.compile(r"^\(?[+-]\d[\d.,]*\s?(?:%|x)\)?$")


def _stated(line: str, found: Sequence[Figure], after: int) -> str:
    """The mail's own delta on the line: a signed share or factor after the after figure."""
    for figure in found[after + 1:]:
        text = figure.text(line).strip()
        if _STATED.match(text):
            return text
    return ""


def _row(lines: Sequence[str], k: int, top: int, pair: tuple[Figure, Figure], label: str, stated: str,
         source: str) -> Claim:
    """A row of the two figures, in the before's unit."""
    before, after = pair
    unit, scale = _unit(lines, k, top, before)
    after_unit, after_scale = _unit(lines, k, top, after)
    value = aligned(after.value * after_scale, after_unit, unit)
    return replace(make(label, before.value * scale, value, unit, None, stated, source), form="hinted",
                   sides="hint")


def _columns(lines: Sequence[str], span: tuple[int, int], sides: tuple[int, int]) -> tuple[list[Claim], int, int]:
    """The rows of the lines (0-based span) whose figures at the named places are the two sides; the
    lines of text that hold fewer, and the most figures a line holds."""
    rows, skipped, most = [], 0, 0
    b, a = sides[0] - 1, sides[1] - 1
    for k in range(*span):
        line = lines[k]
        found = figures_of(line)
        most = max(most, len(found))
        if k == span[0] and heading(line) and k + 1 < span[1] and not heading(lines[k + 1]):
            continue  # the table's header, its columns' names with figures ("run 1  run 2"): not a row
        if len(found) <= max(b, a):
            skipped += bool(found)
            continue
        rows.append(_row(lines, k, span[0], (found[b], found[a]), _label(lines, k, span[0], found, min(b, a)),
                         _stated(line, found, max(b, a)), line.strip()))
    return rows, skipped, most


def side_lines(lines: Sequence[str], span: tuple[int, int]) -> list[int]:
    """The lines (0-based) of a block that may be a side: lines of figures, less a header and a line of
    changes stated alone ("-6.02%  -5.39%": the mail's delta under the two sides)."""
    return [k for k in range(*span) if (found := figures_of(lines[k])) and not heading(lines[k])
            and not all(_STATED.match(f.text(lines[k]).strip()) for f in found)]


def _stacked(lines: Sequence[str], span: tuple[int, int], sides: tuple[int, int],
             below: tuple[int, int]) -> tuple[list[Claim], int, int]:
    """The rows of a block whose sides are lines one below the other (``2,2+1``: the 2nd figure of a line
    the before, the 2nd of the next line of figures the after): its lines of figures (a header passed
    over) taken as many at a time as that reaches."""
    rows, used, most = [], set(), 0
    texts = side_lines(lines, span)
    step = max(below) + 1
    for start in range(0, len(texts) - step + 1, step):
        b, a = texts[start + below[0]], texts[start + below[1]]
        one, two = figures_of(lines[b]), figures_of(lines[a])
        most = max(most, len(one), len(two))
        if len(one) < sides[0] or len(two) < sides[1]:
            continue
        label, theirs = label_of(lines[b], one), label_of(lines[a], two)
        rows.append(_row(lines, b, span[0], (one[sides[0] - 1], two[sides[1] - 1]),
                         label if _key(lines[b]) == _key(lines[a]) else f"{label} / {theirs}", "",
                         f"{lines[b].strip()} / {lines[a].strip()}"))
        used |= {b, a}
    return rows, sum(k not in used for k in texts), most


def _label(lines: Sequence[str], k: int, top: int, found: Sequence[Figure], first: int) -> str:
    """A row's label: the line's text before the first figure named (else its text without figures); its
    header's first cell before it when that is only figures ("threads 16"), and the header's cell over
    the figure after it when that names a unit ("lat(usec)": one measure of several on the line)."""
    line, header = lines[k], _header(lines, k, top)
    label = _words(line, found[first].start) or label_of(line, found)
    heads = _cells(header)
    if heads and not re.search(r"[A-Za-z]", label):
        label = f"{_words(heads[0][2])} {label}".strip()
    cell = _over(header, line, found[first]) if header else ""
    if unsided(cell).split() != cell.replace("(", " ").replace(")", " ").split():
        cell = unsided(cell)  # "base (MB/s)": "MB/s"
    if cell and unit_of(cell) and cell.lower() not in label.lower():
        label = f"{label} {cell}"
    return label


def _named(line: str, found: Sequence[Figure], n: int, header: str) -> str:
    """What names the n-th figure of a line of several: the key written before it ("IOPS=", "avg:"), else
    its header's cell, else its place."""
    start = found[n - 1].end if n else 0
    key = re.search(r"([A-Za-z][\w./()-]*)\s*[=:]\s*$", line[start:found[n].start])
    if key:
        return key.group(1)
    return (_over(header, line, found[n]) if header else "") or f"#{n + 1}"


def _key(line: str, digits: bool = True) -> str:
    """What pairs a side's line with the other's: its text without figures or case (or digits: a
    number left in a word, "856GiB/20001msec")."""
    label = label_of(line, figures_of(line)).lower()
    return " ".join((label if digits else re.sub(r"[\d.,]+", " ", label)).split())


def _pairs(lines: Sequence[str], spans: tuple[tuple[int, int], tuple[int, int]]) -> list[tuple[int, int]]:
    """The before block's lines of figures paired with the after's: by their key (the k-th line of a key
    with the k-th of the other side's), else by their key without digits; where no key is in both, by
    their order, when both blocks hold as many lines of figures (each line a side's name and its
    figures: "misc-next: bw=13.4MiB/s", "my patches: bw=18.0MiB/s"), or the before's one line with each
    of the after's (a baseline, then each variant)."""
    befores, afters = ([k for k in range(*span) if figures_of(lines[k])] for span in spans)
    for digits in (True, False):
        by_key: dict[str, list[int]] = {}
        for k in afters:
            by_key.setdefault(_key(lines[k], digits), []).append(k)
        out = [(k, by_key[_key(lines[k], digits)].pop(0)) for k in befores if by_key.get(_key(lines[k], digits))]
        if any(lines[k].strip() != lines[j].strip() for k, j in out):
            return out
    if len(befores) == 1:
        return [(befores[0], k) for k in afters]  # one baseline against each variant ("Single page", "Bulk list")
    return list(zip(befores, afters)) if len(befores) == len(afters) else out


def _per_side(lines: Sequence[str], spans: tuple[tuple[int, int], tuple[int, int]],
              keep: tuple[int, ...]) -> tuple[list[Claim], int, int]:
    """The rows of a before block and an after block, lines paired (_pairs), each figure with the one at
    its place (or only those ``keep`` names)."""
    rows, paired = [], set()
    for k, j in _pairs(lines, spans):
        found, other = figures_of(lines[k]), figures_of(lines[j])
        if lines[k].strip() == lines[j].strip() and heading(lines[k]):
            paired |= {k, j}
            continue  # the two blocks' same header ("percentile  run 1  run 2"): not a row
        label, theirs = label_of(lines[k], found), label_of(lines[j], other)
        label = label if _key(lines[k]) == _key(lines[j]) else f"{label} / {theirs}"  # each line names its side
        places = [n - 1 for n in keep] if keep else list(range(min(len(found), len(other))))
        header = _header(lines, k, spans[0][0])
        for n in (n for n in places if n < len(found) and n < len(other)):
            named = label if len(found) == 1 and not keep else f"{label} {_named(lines[k], found, n, header)}"
            rows.append(_row(lines, k, spans[0][0], (found[n], other[n]), named, "",
                             f"{lines[k].strip()} / {lines[j].strip()}"))
            paired |= {k, j}
    texts = [k for span in spans for k in range(*span) if figures_of(lines[k])]
    most = max((len(figures_of(lines[k])) for k in texts), default=0)
    return rows, sum(k not in paired for k in texts), most


# -- the spec's lines in the text read -------------------------------------------------------------


def _located(hint: Hint, span: Span, text: list[str], files: Mapping[str, list[str]],
             encoded: bool) -> tuple[tuple[int, int], str]:
    """The span's lines in the text read (0-based, last excluded) and what its numbers count, as the
    "not read" list numbers a block (unread.placed): the text read's own lines where no file holds them
    as the text has them (a block of a quoted-printable mail); else the first mail file whose lines they
    are and that holds them so; else, a file holding the text encoded, the text read's."""
    first, last = span
    own = text[first - 1:last] if last <= len(text) else []
    if own and files and not any(run_at(have, own) is not None for have in files.values()):
        return (first - 1, last), "the text read"
    for name, have in files.items():
        if last > len(have):
            continue
        run = have[first - 1:last]
        at = run_at(text, run)
        if at is not None:
            return (at, at + len(run)), Path(name).name
    if encoded or not files:
        if last > len(text):
            raise HintError(f"--read {hint.spec!r}: line {last} is beyond the text read ({len(text)} lines)")
        return (first - 1, last), "the text read"
    longest = max(files.items(), key=lambda item: len(item[1]))
    if all(last > len(have) for have in files.values()):
        raise HintError(f"--read {hint.spec!r}: line {last} is beyond the end of {Path(longest[0]).name} "
                        f"({len(longest[1])} lines)")
    raise HintError(f"--read {hint.spec!r}: lines {first}-{last} are not in the text iolab reads claims from "
                    "(the cover letter and each patch's description; not the headers, nor the diff)")


def _encoded(text: list[str], files: Mapping[str, list[str]]) -> bool:
    """Whether the files hold the text read otherwise than as it is (quoted-printable, base64): a tenth of
    its lines or more are in none of them."""
    have = {line for lines in files.values() for line in lines}
    written = [line for line in text if line.strip()]
    return sum(line not in have for line in written) * 10 > len(written)


def read(hint: Hint, text: str, files: Mapping[str, str]) -> HintRead:
    """The rows the hint names in the text (``files``: the mail files' contents, by name, whose lines the
    spec's numbers count). HintError when its lines are not in the mail or no line holds its figures."""
    lines = [line.rstrip() for line in text.splitlines()]
    held = {name: [line.rstrip() for line in content.splitlines()] for name, content in files.items()}
    encoded = _encoded(lines, held)
    located = [_located(hint, span, lines, held, encoded) for span in hint.spans]
    spans = tuple(at for at, _ in located)
    if hint.sides is not None and any(hint.below):
        rows, skipped, most = _stacked(lines, spans[0], hint.sides, hint.below)
    elif hint.sides is not None:
        rows, skipped, most = _columns(lines, spans[0], hint.sides)
    else:
        rows, skipped, most = _per_side(lines, (spans[0], spans[1]), hint.keep)
    if not rows:
        first, last = hint.spans[0]
        wanted = max(hint.sides) if hint.sides else max(hint.keep, default=1)
        why = (f"no line of {first}-{last} holds a {_ordinal(wanted)} figure (the most a line holds: {most})"
               if hint.sides or most < wanted else "no line of the before's block pairs with one of the "
               "after's (by its text without figures, else in order where both hold as many lines of figures or the "
               "before's holds one)")
        raise HintError(f"--read {hint.spec!r}: {why}")
    return HintRead(hint.spec, tuple(infer(lines, rows)), skipped, spans, located[0][1])


def read_all(specs: Iterable[str], text: str, paths: Iterable[str | Path]) -> tuple[HintRead, ...]:
    """Each spec read in the text, its line numbers those of the mail files at ``paths`` (a file that
    cannot be read, as a mail given on stdin, counts none)."""
    specs = tuple(specs)
    files = files_at(paths) if specs else {}
    return tuple(read(parse(spec), text, files) for spec in specs)


def uncovered(blocks: Iterable[Block], hints: Sequence[HintRead]) -> tuple[Block, ...]:
    """The blocks (numbered in the text read) no hint's lines overlap."""
    spans = [span for hint in hints for span in hint.lines]
    return tuple(block for block in blocks
                 if not any(block.first_line - 1 < last and block.last_line > first for first, last in spans))
