"""The gate every candidate row passes before the reader returns it: the row shows evidence of
its two sides, whatever form produced it.

A form finds figures side by side; that alone does not make them a before and an after. Tables
whose columns are operations' counts and latencies (dbench's ``Count  AvgLat  MaxLat``), devices,
stripe sizes or settings read across as well as ``base  patched`` does, and two tables or banners
a side each pair as well when their names are ``legacy`` and ``folios`` as when they are
``Before`` and ``After``. The evidence:

- ``delta``: the mail's delta on the row agrees with before -> after (``+20%``, ``1.72x``), or the
  table has a column of gains or diffs;
- ``names``: the table's header (the form saw it: ``Claim.sides``), its caption or the row's label
  names both sides (``base  patched``, ``Results with and without the series:``); for two sides
  taken by their order, the names between their lines do (``Before:`` / ``After:``), or for
  columns taken in their order, the names above say a baseline (mmtests' ``vanilla``);
- ``subject``: the after side is what the patches' subjects bring (``dontcache`` under ``enable
  RWF_DONTCACHE``, ``iomap:`` under "use iomap");
- ``sides``: the form read the two sides from their own names (``[w/o]`` / ``[w]``, a row per side).

Whatever the evidence, a row is never a side's standard deviation, a min, max or percentile of a
tool's output pasted per side that no sentence speaks of, a cell paired with the same line's cell,
dd's seconds beside its rate, a run's user or system time where the same lines give its whole,
pahole's layout (its holes, padding and last cacheline beside the struct's size), a sweep of a
setting written with arrows (``16 slots -> ~1.7 GB/s    32 -> ~2.0 GB/s``), two cells of one table
row that measure different things (``| 12.5 MB | 310 |``; ``IOPS(K)`` beside ``DevW(G)``), a thing
with and without it on one line that the change does not bring (two modes), a step of a series
that goes on (``before  patch1  patch2  patch3``: the first against the last), nor
the forms of iolab.mail.claimed.refusals (the story of a regression, cases that do not line up).
"""

from __future__ import annotations

import functools
import re
from typing import Literal

from iolab.mail.claimed.bloat import symbol_row
from iolab.mail.claimed.model import DEVIATION, EXTREME, MEAN, PERCENTILE, SUFFIX, Claim, number, unit_of
from iolab.mail.claimed.naming import introduced, row_sides, side_of
from iolab.mail.claimed.rows import Row, table_row
from iolab.mail.claimed.refusals import cases_of, caused, distribution, minutes_only, operations, other_case, \
    regression_told, reverted_elsewhere, setting_first

Evidence = Literal["delta", "names", "subject", "sides"]

_REACH = 30  # lines above a row that may be its table's header and groups
_APART = 400  # lines between two sides' lines at most
_DELTA_NAME = re.compile(r"^(?:diff\w*|delta|change|gain|improvement|speed-?up|ratio|%\S*)$", re.I)
_RATIO = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(%|x\b)", re.I)  # a change as written, its sign aside


@functools.lru_cache(maxsize=1 << 12)
def _row(text: str) -> Row | None:
    """A line read as a table's row, once: each row asks of the lines above it (a long table's seconds)."""
    return table_row(text)


def admitted(found: list[Claim], lines: list[str], about: list[str]) -> list[Claim]:
    """The candidate rows that show evidence of their two sides, in their order. ``lines``: the
    description as the forms read it; ``about``: the patches' subjects, ``Subject: ...`` lines."""
    index: dict[str, list[int]] = {}
    for k, line in enumerate(lines):
        index.setdefault(line.strip(), []).append(k)
    said = " ".join(line for line in lines if _sentence(line) or _told_change(line))
    wholes = {c.source for c in found if c.kind == "time" and _WHOLE.fullmatch(_key(c.label))}
    cases = cases_of(found, lines)
    out = []
    for claim in found:
        if spread(claim, said) or paired_with_itself(claim, index) or dd_elapsed(claim) or \
                breakdown(claim, wholes) or layout(claim) or regression_told(claim) or other_case(claim, cases) or \
                caused(claim, lines, index) or apart(claim, lines, index) or midway(claim, lines, index) or \
                symbol_row(claim, index, lines) or operations(claim, lines, index) or minutes_only(claim) or distribution(claim) or \
                setting_first(claim, lines, index) or reverted_elsewhere(claim, about):
            continue
        if evidence(claim, lines, index, about) is not None:
            out.append(claim)
    return out


def evidence(claim: Claim, lines: list[str], index: dict[str, list[int]], about: list[str]) -> Evidence | None:
    """What shows the row's two sides, None when nothing does. A row read across one line of a
    table whose header names no side is asked here; the other forms name their sides."""
    if claim.sides == "order":
        return _told_apart(claim, lines, index, about)
    if claim.form == "prose" and (_sweep(claim) or _mode_pair(claim, lines, about)):
        return None
    if claim.form != "columns":
        return "sides"
    if claim.sides:
        return "names"  # the table's header names a side (iolab.mail.claimed.tables)
    if claim.source not in index:
        return "sides"  # a row of two lines (a table a side, or rows that are the sides): named by the form
    k = index[claim.source][0]
    if delta_agrees(claim):
        return "delta"
    return _named_nearby(claim, lines, k, about)


def _told_apart(claim: Claim, lines: list[str], index: dict[str, list[int]], about: list[str]) -> Evidence | None:
    """A row whose sides a form took by their order (a table a side, a banner a side): the lines
    between the first side's line and the second's, against as many above the first, name the sides
    (``Before:`` / ``After:``), or the after side is what the subject brings (``buffer_head:`` /
    ``iomap:`` under "use iomap"; ``==for-next==`` / ``==ra-expand==`` under "use readahead_expand")."""
    where = _lines_of(claim, index)
    if where is None:
        return _columns_named(claim, lines, index, about)
    first, second = sorted(where)
    if second - first > _APART:
        return None  # not two sides of one measurement (and a hostile mail's time stays bounded)
    reach = min(_REACH, second - first + 2)  # the first side's names sit as far above it as the second's
    above = {text for text in (line.strip() for line in lines[max(0, first - reach):first]) if _named(text)}
    between = {text for text in (line.strip() for line in lines[first + 1:second]) if _named(text)}
    mine, theirs = above - between, between - above
    before, after = (mine, theirs) if where[0] < where[1] else (theirs, mine)
    if any(side_of(_bare(n)) == "before" for n in before) and any(side_of(_bare(n)) == "after" for n in after):
        return "names"
    if any(_subject_word(n, about) for n in after) and not any(_subject_word(n, about) for n in before):
        return "subject"
    return None


_GLUED_BASE = re.compile(r"(?:vanilla|baseline|unpatched|stock)(?=[a-z0-9])", re.I)


def _columns_named(claim: Claim, lines: list[str], index: dict[str, list[int]], about: list[str]) -> Evidence | None:
    """A row of one line whose columns a form took as the sides by their order (mmtests' kernels,
    the first the baseline): the names above it say a baseline (``5.3.0-rc3 5.3.0-rc3`` over ``vanilla
    shrinker-v1r1``), both sides, or a column the subject brings."""
    if claim.source not in index:
        return None
    heads, caption = _above(lines, index[claim.source][0])
    if any(_names_both(text) for text in [*heads, caption]):
        return "names"
    words = [word for head in heads for word in head.split()]
    if any(side_of(word) == "before" or _GLUED_BASE.match(word) for word in words):
        return "names"  # a baseline and another (mmtests glues names wider than their column: vanillashrinker-v1r1)
    return "subject" if any(_subject_word(word, about) for word in words) else None


_ARROW = re.compile(r"->|→|=>")
_SWEPT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s+([A-Za-z]\w*)\s*(?:->|→|=>)\s*~?[\d.]+\s*([A-Za-z/]*)")


def _sweep(claim: Claim) -> bool:
    """A row from a count of things no unit names arrowed to a figure of another kind, on its line
    several times (``16 slots -> ~1.7 GB/s    32 -> ~2.0 GB/s``) or as the row's before (``~0.6 GB/s
    at 2 vCPU -> ~2.0 GB/s``): a setting swept, not a change (``300 extents -> 12 extents`` counts one
    thing on both sides)."""
    arrows = len(_ARROW.findall(claim.source))
    for swept in _SWEPT.finditer(claim.source):
        count, noun, unit = swept.groups()
        if unit_of(noun) is None and noun.lower() != unit.lower() and noun.lower() not in SUFFIX and \
                (float(count) == claim.before or arrows >= 2):
            return True  # the row's before is the count, or the line sweeps it over several arrows
    return False


_WITH_WITHOUT = re.compile(r"\bwith\s+(?P<x>[A-Za-z][\w-]*)\b.*\bwithout\s+(?P=x)\b|"
                           r"\bwithout\s+(?P<y>[A-Za-z][\w-]*)\b.*\bwith\s+(?P=y)\b", re.I)
_NOT_MODES = {"the", "this", "that", "these", "it", "its", "my", "our", "a", "an", "patch", "patches", "series",
              "patchset", "change", "changes", "fix", "fixes", "commit", "revert"}


def _mode_pair(claim: Claim, lines: list[str], about: list[str]) -> bool:
    """A pair whose sides are a thing with and without it on one line (``1.3GiB/s (with DMA ... without
    DMA ~200MiB/s)``) where the thing is neither the patch nor what the subject or the text says the
    change brings: two modes of the kernel under test, not its before and after."""
    found = _WITH_WITHOUT.search(claim.source)
    thing = (found.group("x") or found.group("y")) if found else ""
    return bool(thing) and thing.lower() not in _NOT_MODES and not _subject_word(thing, about) and \
        introduced([thing], lines) is None


_TOLD = re.compile(r"(?:^|[\s,>(])[+-]\d+(?:\.\d+)?%\s+[A-Za-z]")


def _told_change(line: str) -> bool:
    """A line that states changes by what they measure (``+10.8% throughput, -8.2% max latency``): each
    signed share followed by its measure's words, no table's row of figures."""
    return _TOLD.search(line) is not None and len(re.findall(r"\d+(?:\.\d+)?", line)) <= 4 and \
        len(_TOLD.findall(line)) == len(re.findall(r"\d+(?:\.\d+)?%", line))


def _sentence(line: str) -> bool:
    """A line of prose: six words or more, most of them words, not figures."""
    words = line.split()
    return len(words) >= 6 and sum(w.isalpha() for w in words) * 2 > len(words)


def _named(text: str) -> bool:
    """A line that may name a side: a few words, not a sentence, a row of figures nor a rule."""
    return bool(text) and len(text.split()) <= 6 and not text.endswith(".") and \
        not set(text) <= set("-=+|:* ") and _row(text) is None


def _bare(text: str) -> str:
    """A side's name without its banner's marks (``==========for-next==========``, ``[w/o]``, ``Before:``)."""
    return text.strip("=-*#[]():| ")


def _named_nearby(claim: Claim, lines: list[str], k: int, about: list[str]) -> Evidence | None:
    """Both sides named by the row's label, by its table's header and group lines or by its caption,
    a column of gains, or a column the patch brings."""
    heads, caption = _above(lines, k)
    if any(_names_both(text) for text in [claim.label, *heads, caption]) or _caption_both(caption):
        return "names"
    if any(_DELTA_NAME.match(n) for head in heads for n in head.split()):
        return "delta"  # a column of the mail's gains: the two columns it compares are the sides
    names = [n for head in heads for n in _names(head)]
    if names and introduced(names, [*about, *lines[:k]]) is not None:
        return "subject"
    if any(len(_names(head)) >= 2 and len([n for n in _names(head) if _subject_word(n, about)]) == 1
           for head in heads):
        return "subject"  # of a header's columns, one is what the subject names: the after side
    return None


_COMMON = {"read", "reads", "write", "writes", "random", "direct", "buffered", "file", "files", "test", "tests",
           "block", "time", "size", "sync", "async"}


def _subject_word(name: str, about: list[str]) -> bool:
    """A column named by a word of the patches' subjects (``dontcache`` under ``enable RWF_DONTCACHE``)."""
    words = [w for w in re.findall(r"[A-Za-z]{5,}", name) if w.lower() not in _COMMON and not unit_of(w)]
    return any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", line, re.I) for w in words for line in about)


def _above(lines: list[str], k: int) -> tuple[list[str], str]:
    """The words-only lines above row k within its table (header and groups), and the caption: the
    sentence above them."""
    heads: list[str] = []
    blank = 0
    for j in range(k - 1, max(-1, k - _REACH), -1):
        text = lines[j].strip()
        if not text:
            blank += 1
            if blank >= 2:
                break
            continue
        blank = 0
        if set(text) <= set("-=+|:* "):
            continue
        if _row(text) is not None or (text.count("|") >= 2 and re.search(r"\d", text)):
            continue
        if len(text) > 60 or text[-1] in ".:;,":
            return heads, " ".join(x.strip() for x in lines[max(0, j - 1):j + 1])
        heads.append(text)
    return heads, ""


def _names(text: str) -> list[str]:
    return [n.strip() for n in re.split(r"\s{2,}|\t|\||\s+vs\.?\s+|/(?![o\s])", text) if n.strip()]


def _names_both(text: str) -> bool:
    """A line whose names (columns apart by two spaces, a tab or a bar, else words) are a before and an
    after, by their words or as a kernel and the kernel with the change (``6.18`` and ``6.18+this``)."""
    for cut in (_names(text), text.split()):
        sides = {side_of(n) for n in cut}
        if {"before", "after"} <= sides:
            return True
        if len(cut) <= 12 and any(row_sides(a, b) for k, a in enumerate(cut) for b in cut[k + 1:]):
            return True
    return bool(re.search(r"\bbaseline\s+current\b", text))  # fsperf's: current is the kernel under test


_CAPTION_BEFORE = re.compile(r"(?<![\w/-])(?:before|baseline|base|vanilla|unpatched|w/o|without|stock|original|"
                             r"orig|mainline|upstream|old)(?![\w/-])", re.I)
_CAPTION_AFTER = re.compile(r"(?<![\w/-])(?:after|patched|w/|with|new|modified|fixed|applied)(?![\w/-])|"
                            r"\bthis\s+(?:patch|series|change)", re.I)


def _caption_both(text: str) -> bool:
    """A sentence that names both sides (``before and after this series``, ``with and without``)."""
    before = _CAPTION_BEFORE.search(text)
    return before is not None and _CAPTION_AFTER.search(text[:before.start()] + text[before.end():]) is not None


def delta_agrees(claim: Claim) -> bool:
    """The row's stated delta, or one written on its line, is its figures' change (``+15%``,
    ``1.72x``), against either side (a gain written as before / after)."""
    if not claim.before:
        return False
    change = (claim.after - claim.before) / claim.before
    back = (claim.before - claim.after) / claim.after if claim.after else change
    for match in _RATIO.finditer(f"{claim.stated} {claim.source}"):
        value = float(match.group(1))
        if match.group(2) == "%":
            for want in (change, back):
                if abs(abs(want) * 100 - value) <= max(0.6, 0.05 * value):
                    return True
        elif claim.after and any(abs(r - value) <= max(0.011, 0.01 * value)
                                 for r in (claim.after / claim.before, claim.before / claim.after)):
            return True
    return False


def spread(claim: Claim, said: str = "") -> bool:
    """A row of a measure's spread: its standard deviation (never a side's figure), or, in a tool's
    output pasted per side (fio's ``lat (usec): min=20, max=241, avg=99.81``, its ``99.00th=[ 1234]``),
    a min, max or percentile the mail's sentences (``said``) do not speak of: the average is the claim."""
    words = _words(claim.label)
    if DEVIATION.search(words):
        return True
    if claim.form not in ("sides", "trailing") or MEAN.search(words):
        return False
    extreme = EXTREME.search(words) or PERCENTILE.search(words)
    return extreme is not None and not _spoken(extreme.group(0), said)


def _spoken(statistic: str, said: str) -> bool:
    """Whether the sentences speak of the statistic (``the maximum latencies are cut``, ``p99 drops``)."""
    kind = statistic.lower()
    if kind.startswith(("min", "max")):
        return re.search(rf"\b{kind[:3]}(?:imum|imal)?\b", said, re.I) is not None
    return re.search(r"\bp\d{2}|\d{2}(?:\.\d+)?(?:th|%)?[- ]percentile|\bpercentiles?\b|\btail\b", said, re.I) is not None


def _words(label: str) -> str:
    return re.sub(r"_|(?<=[a-z0-9])(?=[A-Z])", " ", label)


def _lines_of(claim: Claim, index: dict[str, list[int]]) -> tuple[int, int] | None:
    """Where a row of two lines has its before line and its after line (the after's text found
    again past the before's when both read alike); None when either is not a line of the mail."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    if len(parts) != 2 or parts[0] not in index or parts[1] not in index:
        return None
    before = index[parts[0]][0]
    after = next((k for k in index[parts[1]] if k != before), None)
    return None if after is None else (before, after)


def paired_with_itself(claim: Claim, index: dict[str, list[int]]) -> bool:
    """A row of two lines that are one line of the mail: a cell paired with itself (two tables read
    as a side each where the mail has one). Two lines that read alike in two places are no change."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    return len(parts) == 2 and parts[0] == parts[1] and len(index.get(parts[0], [])) == 1


_PART = re.compile(r"\b(?:user|sys|system)\b", re.I)
_WHOLE = re.compile(r"\b(?:real|mean|elapsed|total|wall|time)\b", re.I)


def breakdown(claim: Claim, wholes: set[str]) -> bool:
    """The user or system time of a timed run (time(1)'s ``user``/``sys``, hyperfine's ``[User: ...,
    System: ...]``) where a row of the same lines gives its whole (``real``, the mean; ``wholes``: the
    lines of such rows): the whole is the claim, its parts a breakdown."""
    return claim.kind == "time" and claim.source in wholes and _PART.fullmatch(_key(claim.label)) is not None


def _key(label: str) -> str:
    """The name a row's figure is written under: its label's last word that is no unit (``Time mean s``:
    mean; ``mean s User s``: User), a mean of runs' note set aside."""
    words = [w for w in re.findall(r"[A-Za-z]\w*", re.sub(r"\(mean of [^)]*\)", "", label)) if not unit_of(w)]
    return words[-1] if words else ""


_DD_LINE = re.compile(r"\bbytes\b.*\bcopied,\s*[\d.]+\s*s,\s*[\d.]+\s*\S+/s", re.I)


def dd_elapsed(claim: Claim) -> bool:
    """The seconds of dd's summary line (``... copied, 17.8832 s, 240 MB/s``): its rate is the row, the
    time it took is the same measurement, not a second one."""
    return claim.kind == "time" and bool(_DD_LINE.search(claim.source))


_LAYOUT = re.compile(r"/\*\s*(?:XXX\b.*\bhole|XXX\b.*\bbits?\b|padding:|last cacheline:|sum members:|"
                     r"bit holes?:|bit_padding:|(?:\d+\s+)?holes?:|member types with holes:)", re.I)


def layout(claim: Claim) -> bool:
    """A row of pahole's layout comments (``/* XXX 6 bytes hole, try to pack */``, ``/* last cacheline: 16
    bytes */``, ``/* padding: 4 */``): where a struct is laid out per side, its ``/* size: ... */`` is the claim."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    return all(_LAYOUT.search(part) for part in parts)


_LEADING = re.compile(r"^~?([+-]?\d[\d,]*(?:\.\d+)?)([kKmMgG](?![a-zA-Z]))?")
_SIZES = re.compile(r"^(?:[kmgtp]i?b|bytes?)$", re.I)


def apart(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row read across one line of a table whose two cells measure different things: one cell writes
    its unit and the other none or one of another kind (``| level 0 | 43.5 MB | 201 | 2.6 MB/s |``: a size,
    a count, a rate), or the header names each column's unit and they differ (``Config  IOPS(K)  FsW(G)``).
    Columns of one measure are the sides only when their cells say it alike."""
    found = across(claim, lines, index) if not claim.sides else None
    if found is None:
        return False
    cells, names, at, to = found
    if _other(_mark(cells[at]), _mark(cells[to]), alone=True):
        return True
    return bool(names) and _other(_tag(names[at]), _tag(names[to]), alone=False)


def midway(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row read across columns that are steps of a series (``base  +patch1  +patch2  +patch3``,
    ``without  p1  p1+p2  p1+p2+p3``), paired with a step the series goes on from: the change is the
    first against the last, not against a step on the way."""
    found = across(claim, lines, index)
    if found is None or not found[1]:
        return False
    _, names, _, to = found
    return to + 1 < len(names) and _continues(names[to], names[to + 1])


def _continues(step: str, following: str) -> bool:
    """The next step of a series: its name holds the step's (``p1``, ``p1+p2``), or its count rises
    under the same name (``+patch 1``, ``+patches 1-2``; ``1/3``, ``2/3``)."""
    if step and re.fullmatch(re.escape(step) + r"\s*[+&,]\s*\S.*", following):
        return True  # the step and more ("after/before" is a ratio of the sides, no step)
    counts = [re.findall(r"\d+", name) for name in (step, following)]
    stems = [re.sub(r"[^a-z]", "", name.lower())[:4] for name in (step, following)]
    return all(counts) and stems[0] == stems[1] and \
        (int(counts[1][-1]) > int(counts[0][-1]) or int(counts[1][0]) > int(counts[0][0]))


def across(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> \
        tuple[list[str], list[str], int, int] | None:
    """A row of one table line: its cells, its header's names aligned to them (none when no header
    line right above has as many), and the cells of its before and its after."""
    if claim.form not in ("columns", "pipes") or " / " in claim.source:
        return None
    cells = _cells(claim.source)
    at = _cell_of(cells, claim.before, 0)
    to = None if at is None else _cell_of(cells, claim.after, at + 1)
    if at is None or to is None or _elsewhere(claim, _mark(cells[at])):
        return None
    bare = re.sub(r"\s+", " ", claim.source.strip(" |"))  # a pipe row's line: its outer bars, its padding aside
    k = index[claim.source][0] if claim.source in index else \
        next((j for j, text in enumerate(lines) if "|" in text and re.sub(r"\s+", " ", text.strip(" |")) == bare), None)
    heads = _above(lines, k)[0] if k is not None else []
    for head in heads[:1]:  # the header right above the rows
        names = _cells(head)
        shift = len(cells) - len(names)
        if shift in (0, 1) and len(names) >= 3 and at >= shift:
            return cells, [""] * shift + names, at, to
    return cells, [], at, to


def _elsewhere(claim: Claim, mark: str) -> bool:
    """The cell holds the before's figure by chance: it writes a unit not of the row's kind (``6.8 GB``
    for a row in KB/s read down from a baseline row's ``6.8 KB/s``)."""
    unit, written = unit_of(claim.unit) if claim.unit else None, unit_of(mark) if mark else None
    return unit is not None and bool(mark) and (written is None or written[1] != unit[1])


def _cells(text: str) -> list[str]:
    """A table line's cells, the mail's deltas after the last figure aside (``(+59%)``)."""
    if "|" in text:
        cells = [cell.strip() for cell in text.strip().strip("|").split("|")]
    else:
        cells = [cell.strip() for cell in re.split(r"\t+|\s{2,}", text.strip())]
    while len(cells) > 1 and re.fullmatch(r"\(?[+-]?\s*~?\d+(?:\.\d+)?\s*(?:%|x)\)?\*?", cells[-1]):
        cells.pop()
    return cells


def _cell_of(cells: list[str], value: float, start: int) -> int | None:
    """The first cell from start that opens with the figure (as written, or with its multiplier)."""
    for k in range(start, len(cells)):
        lead = _LEADING.match(cells[k])
        if lead is None:
            continue
        bare = float(lead.group(1).replace(",", ""))
        scaled = number(lead.group(0).lstrip("~")) or bare
        if any(abs(v - value) <= 1e-9 * max(1.0, abs(value)) for v in (bare, scaled)):
            return k
    return None


def _mark(cell: str) -> str:
    """The unit a cell writes right after its figure (``43.5 MB``: mb; ``576k  2253``: none)."""
    lead = _LEADING.match(cell)
    unit = re.match(r"\s*([A-Za-zµ]+(?:/[A-Za-z]+)?)", cell[lead.end():] if lead else cell)
    return unit.group(1).lower() if unit else ""


def _tag(name: str) -> str:
    """The unit a column's name gives in parentheses (``IOPS(K)``: k) or as a word (``BW MB/s``)."""
    inner = [text.strip() for text in re.findall(r"\(([^()]+)\)", name)]
    if inner and (unit_of(inner[-1]) or re.fullmatch(r"[kmgt](?:i?b)?|[kmgt]?bytes", inner[-1], re.I)):
        return inner[-1].lower()  # a unit or a multiplier, not a mode ("IOPS (sync mode)")
    unit = unit_of(name)
    return unit[0].lower() if unit else ""


def _other(a: str, b: str, alone: bool) -> bool:
    """Two marks of different measures; ``alone``: a mark against none counts (a cell's), else both must be."""
    if a == b or (not alone and not (a and b)):
        return False
    units = unit_of(a), unit_of(b)
    if units[0] and units[1]:
        return units[0][1] != units[1][1]
    return not (_SIZES.match(a) and _SIZES.match(b))
