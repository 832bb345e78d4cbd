"""The claim a patch mail makes: its table, or its before/after pairs.

From the mail's text (the cover and every patch's description, never the
diff) this reads what the author measured, as rows: a label, the figure
before and after the change, the unit, and which way the unit is better.

Forms read:

- a table of whitespace-separated columns under a header line
  (``case nofix this series improvement`` / ``write_u1k 1.418 0.3405 76.0%``),
  two or more rows of at least two figures each (one row under a header
  that names both sides: ``before after`` / ``BW 2874MiB/s 3305MiB/s``), a figure's unit after it
  (``65264.50 ns``), a spread after ``±`` skipped, a percentage column read
  as the mail's own delta; a line of words alone above rows is their group
  (``A seq 128k qd1`` / ``BW (MB/s) 4333 ± 27 4374 ± 34 +0.9%``);
- a pipe table (markdown or ASCII boxes), also one whose line breaks were
  lost (a web archive's copy: its ``|---|`` line gives the column count);
  one whose rows are the two sides (``Before change``, ``After change``) is
  read by its columns;
- pairs in prose: ``562K -> 574K IOPS``, ``from 4994 MiB/s to 5762 MiB/s``.

The unit comes from the figure, the row's or column's label (``BW (MB/s)``,
``Flush time (ms)``) or the sentence above the table (``median usecs/call``).
The first figure is the side before the change unless the header names the
after side first. Nothing here compares figures across machines: a claim's
size is its ratio, after / before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Better = Literal["higher", "lower"]
Kind = Literal["time", "rate", "bandwidth", "count", "ratio", ""]

# unit as written (lower case) -> (unit shown, kind, better, factor to the shown unit)
_UNITS: dict[str, tuple[str, Kind, Better | None]] = {
    "ns": ("ns", "time", "lower"), "nsec": ("ns", "time", "lower"), "ns/op": ("ns", "time", "lower"),
    "us": ("us", "time", "lower"), "usec": ("us", "time", "lower"), "usecs": ("us", "time", "lower"),
    "µs": ("us", "time", "lower"), "usecs/call": ("us", "time", "lower"), "us/call": ("us", "time", "lower"),
    "us/op": ("us", "time", "lower"), "usec/op": ("us", "time", "lower"),
    "ms": ("ms", "time", "lower"), "msec": ("ms", "time", "lower"), "msecs": ("ms", "time", "lower"),
    "s": ("s", "time", "lower"), "sec": ("s", "time", "lower"), "secs": ("s", "time", "lower"),
    "seconds": ("s", "time", "lower"),
    "iops": ("IOPS", "rate", "higher"), "kiops": ("IOPS", "rate", "higher"), "ops/s": ("ops/s", "rate", "higher"),
    "ops/sec": ("ops/s", "rate", "higher"), "op/s": ("ops/s", "rate", "higher"),
    "mib/s": ("MiB/s", "bandwidth", "higher"), "mb/s": ("MB/s", "bandwidth", "higher"),
    "gib/s": ("GiB/s", "bandwidth", "higher"), "gb/s": ("GB/s", "bandwidth", "higher"),
    "kib/s": ("KiB/s", "bandwidth", "higher"), "kb/s": ("KB/s", "bandwidth", "higher"),
    "%": ("%", "ratio", None),
}
_SUFFIX = {"k": 1e3, "m": 1e6, "g": 1e9}
_NUMBER = re.compile(r"^[+-]?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?([kKmMgG])?$")
_PERCENT = re.compile(r"^[+-]?\d+(?:\.\d+)?%$")
_AFTER_FIRST = re.compile(r"\b(after|patched|new|fix(?:ed)?|this series|with)\b.*\b(before|baseline|base|old|"
                          r"orig(?:inal)?|vanilla|unpatched|nofix|without)\b", re.I)
_SIDE_WORDS = r"(?:before|after|baseline|patched|base|old|new|vanilla|unpatched|nofix|fix(?:ed)?|with(?:out)?)"
_TWO_SIDES = re.compile(rf"\b{_SIDE_WORDS}\b.*\b{_SIDE_WORDS}\b", re.I)
_NOT_TABLE = re.compile(r"^(from|date|subject|to|cc|fixes|link|reviewed-by|signed-off-by|acked-by|tested-by|"
                        r"reported-by|message-id|in-reply-to)\s*:", re.I)
_PAIR = re.compile(
    r"(?:\bfrom\s+)?(?P<a>[+-]?\d[\d,]*(?:\.\d+)?(?:\s?[kKmMgG](?![A-Za-z]))?)\s*(?P<ua>[A-Za-zµ/%]+(?:/[a-z]+)?)?"
    r"\s*(?:->|→|=>|\bto\b)\s*(?P<b>[+-]?\d[\d,]*(?:\.\d+)?(?:\s?[kKmMgG](?![A-Za-z]))?)\s*"
    r"(?P<ub>[A-Za-zµ/%]+(?:/[a-z]+)?)?")


@dataclass(frozen=True)
class Claim:
    """One row of the mail's claim."""

    label: str  # the row as the mail names it ("write_u1k", "A seq 128k qd1: BW (MB/s)")
    before: float
    after: float
    unit: str  # as shown ("us", "IOPS", "MiB/s"), "" when the mail names none
    kind: Kind
    better: Better | None  # which way the unit is better (None: the mail does not say, a count)
    stated: str = ""  # the mail's own delta column, as written ("76.0%", "+0.9%")
    source: str = ""  # the line it was read from, for the reader

    @property
    def ratio(self) -> float | None:
        """after / before (None when before is zero)."""
        return self.after / self.before if self.before else None

    @property
    def delta(self) -> float | None:
        """The relative change after against before (-0.76: 76% lower)."""
        return None if self.ratio is None else self.ratio - 1.0

    @property
    def direction(self) -> Literal["up", "down", "none"]:
        if self.after > self.before:
            return "up"
        return "down" if self.after < self.before else "none"


def unit_of(text: str) -> tuple[str, Kind, Better | None] | None:
    """The unit a word or a label names: ``ns``, ``BW (MB/s)``, ``Flush time (ms)``, ``usecs/call``."""
    word = text.strip().strip("(),:;").lower()
    if word in _UNITS:
        return _UNITS[word]
    inner = re.findall(r"\(([^()]+)\)", text)
    words = text.replace(",", " ").split()
    for candidate in [*inner, *words, *(w.rsplit("_", 1)[-1] for w in words if "_" in w)]:
        key = candidate.strip().strip("(),:;.").lower()
        if key in _UNITS and key != "%":
            return _UNITS[key]
        if key.startswith("k") and key[1:] in ("iops",):
            return _UNITS[key[1:]]
    return None


def number(token: str) -> float | None:
    """A figure as written: ``1.418``, ``562K``, ``1,205``; None for anything else."""
    match = _NUMBER.match(token.strip())
    if not match:
        return None
    value = float((match.group(1) + (match.group(2) or "")).replace(",", ""))
    return value * _SUFFIX[match.group(3).lower()] if match.group(3) else value


# -- tables of columns ---------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    label: str
    values: tuple[tuple[float, str], ...]  # each figure and the unit written after it
    stated: str
    text: str


def _row(line: str) -> _Row | None:
    """A line read as label, figures (each with the unit after it), and a stated delta."""
    tokens = []
    for token in line.replace("±", " ± ").split():  # a unit written onto its figure: "8.2ms", "1203MiB/s"
        glued = re.fullmatch(r"([+-]?\d[\d,]*(?:\.\d+)?)([kKMG]?)([A-Za-zµ/]+)", token)
        figure, prefix, word = glued.groups() if glued else ("", "", "")
        if glued and prefix and unit_of(word) and unit_of(word) == unit_of(prefix + word):  # "562KIOPS"
            tokens += [figure + prefix, word]
        elif glued and unit_of(prefix + word):  # "2874MiB/s": the M is the unit's
            tokens += [figure, prefix + word]
        else:
            tokens.append(token)
    label: list[str] = []
    values: list[tuple[float, str]] = []
    stated = ""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        value = number(token)
        if token == "±":  # a spread: its figure and unit are skipped
            i += 2
            if i < len(tokens) and tokens[i].lower() in _SUFFIX:
                i += 1
            if i < len(tokens) and unit_of(tokens[i]) and number(tokens[i]) is None and not _PERCENT.match(tokens[i]):
                i += 1
            continue
        if _PERCENT.match(token) and values:
            stated = token
        elif value is not None and (values or label):
            if i + 1 < len(tokens) and tokens[i + 1].lower() in _SUFFIX:
                value *= _SUFFIX[tokens[i + 1].lower()]
                i += 1
            unit = ""
            if i + 1 < len(tokens) and number(tokens[i + 1]) is None and unit_of(tokens[i + 1]) \
                    and not _PERCENT.match(tokens[i + 1]):
                unit = unit_of(tokens[i + 1])[0]  # type: ignore[index]
                i += 1
            values.append((value, unit))
        elif not values:
            label.append(token)
        else:
            return None  # words after the figures: a sentence, not a row
        i += 1
    if not label:
        return None
    return _Row(" ".join(label), tuple(values), stated, line.strip())


def _context_unit(lines: list[str]) -> tuple[tuple[str, Kind, Better | None] | None, Better | None]:
    """The unit named in the sentence above a table, and 'lower/higher is better'."""
    text = " ".join(lines)
    better: Better | None = None
    said = re.search(r"\b(lower|higher)\s+is\s+better\b", text, re.I)
    if said:
        better = "lower" if said.group(1).lower() == "lower" else "higher"
    for word in re.findall(r"[A-Za-zµ/%]+", text):
        found = unit_of(word)
        if found and found[1] in ("time", "rate", "bandwidth"):
            return found, better
    return None, better


def _claim(label: str, before: float, after: float, unit: tuple[str, Kind, Better | None] | None,
           better: Better | None, stated: str, source: str) -> Claim:
    shown, kind, unit_better = unit if unit else ("", "count", None)
    return Claim(label, before, after, shown, kind, better or unit_better, stated, source)


def _table_row(text: str) -> _Row | None:
    row = _row(text) if text and "|" not in text and not _NOT_TABLE.match(text) else None
    return row if row and len(row.values) >= 2 else None


def _column_tables(lines: list[str]) -> list[Claim]:
    """Runs of two or more rows of two or more figures (groups and blanks between)."""
    claims: list[Claim] = []
    i = 0
    while i < len(lines):
        rows: list[tuple[str, _Row]] = []
        group = header = ""
        j = i
        while j < len(lines):
            text = lines[j].strip()
            row = _table_row(text)
            if row:
                rows.append((group, row))
            elif text and not set(text) <= set("-=+ "):
                following = next((line.strip() for line in lines[j + 1:]
                                  if line.strip() and not set(line.strip()) <= set("-=+ ")), "")
                opening = not rows and not header
                if len(text) > 60 or text[-1] in ".:;," or (not opening and not _table_row(following)):
                    break  # a sentence, or text not above rows: the table ends
                if opening:
                    header = text  # the columns' names
                else:
                    group = text  # a group's name above its rows ("A seq 128k qd1")
            j += 1
        if len(rows) >= 2 or (rows and _TWO_SIDES.search(header)):  # one row: under a header naming both sides
            header = header or (lines[i - 1] if i > 0 else "")
            above = lines[max(0, i - 4):i]
            unit, better = _context_unit(above)
            swap = bool(_AFTER_FIRST.search(header))
            for group_name, row in rows:
                (a, ua), (b, ub) = row.values[0], row.values[1]
                if swap:
                    a, b, ua, ub = b, a, ub, ua
                found = unit_of(ua or ub) if (ua or ub) else unit_of(row.label) or unit
                label = f"{group_name}: {row.label}" if group_name else row.label
                claims.append(_claim(label, a, b, found, better, row.stated, row.text))
            i = j
        else:
            i += 1
    return claims


# -- pipe tables ---------------------------------------------------------------------

_RULE_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
_SIDES = re.compile(r"^\s*(before|after|baseline|patched|base|old|new|vanilla|unpatched|with|without)\b", re.I)


def _pipe_rows(line: str) -> list[list[str]]:
    """The rows of pipe-table text; a line that holds a whole table (its
    line breaks lost) is cut into rows by the column count of its rule."""
    start, end = line.find("|"), line.rfind("|")
    if start < 0 or end <= start:
        return []
    cells = line.split("|")
    rule = next((k for k, c in enumerate(cells) if _RULE_CELL.match(c)), None)
    if rule is None or (cells[0].strip() == "" and cells[-1].strip() == "" and
                        all(_RULE_CELL.match(c) for c in cells[1:-1])):
        return [line[start:end + 1].split("|")[1:-1]]
    width = 1
    while rule + width < len(cells) and _RULE_CELL.match(cells[rule + width]):
        width += 1
    if rule + width >= len(cells) - 1:  # the rule ends the line: a table of lines, not one line
        return [line[start:end + 1].split("|")[1:-1]]
    rows = []
    if rule - 1 - width >= 0 and not cells[rule - 1].strip():
        rows.append(cells[rule - 1 - width:rule - 1])  # the header, before the rule
    rows.append(cells[rule:rule + width])
    k = rule + width + 1
    while k + width < len(cells) and not cells[k - 1].strip():
        rows.append(cells[k:k + width])
        k += width + 1
    return rows


def _pipe_tables(lines: list[str]) -> list[Claim]:
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in lines:
        text = line.strip().lstrip(">").strip()
        if text.count("|") >= 3:
            current += _pipe_rows(text)
        elif current and set(text) <= set("+-=| "):
            continue  # an ASCII box's border
        else:
            if current:
                tables.append(current)
            current = []
    if current:
        tables.append(current)
    claims = []
    for table in tables:
        table = [row for row in table if not all(_RULE_CELL.match(c) or not c.strip() for c in row)]
        if len(table) < 2:
            continue
        header, body = table[0], table[1:]
        sides = [row for row in body if _SIDES.match(row[0])]
        if len(sides) == 2 and len(body) == 2:  # the rows are the two sides: read it by its columns
            before, after = sides
            if re.match(r"\s*(after|patched|new|with)\b", before[0], re.I):
                before, after = after, before
            for k in range(1, min(len(header), len(before), len(after))):
                a, b = number(before[k].split()[0]) if before[k].split() else None, \
                    number(after[k].split()[0]) if after[k].split() else None
                if a is not None and b is not None and header[k].strip():
                    claims.append(_claim(header[k].strip(), a, b, unit_of(header[k]), None, "",
                                         f"{header[k].strip()}: {before[0].strip()} {a:g}, {after[0].strip()} {b:g}"))
            continue
        swap = bool(_AFTER_FIRST.search(" ".join(header)))
        for row in body:
            figures = [(k, number(c.split()[0])) for k, c in enumerate(row) if k and c.split()]
            found = [(k, v) for k, v in figures if v is not None]
            if len(found) < 2 or not row[0].strip():
                continue
            (ka, a), (kb, b) = found[0], found[1]
            if swap:
                (ka, a), (kb, b) = (kb, b), (ka, a)
            stated = next((c.strip() for c in row if _PERCENT.match(c.strip())), "")
            unit = unit_of(" ".join(row[ka].split()[1:])) or unit_of(row[0]) or \
                (unit_of(header[ka]) if ka < len(header) else None)
            claims.append(_claim(row[0].strip(), a, b, unit, None, stated, "|".join(row).strip()))
    return claims


# -- pairs in prose --------------------------------------------------------------------


# words before a pair that name no row ("gives 3.68M -> 3.70M IOPS" is the IOPS row)
_NOT_LABEL = {"from", "is", "was", "by", "the", "for", "gives", "give", "gave", "goes", "go", "went", "it", "this",
              "improves", "improved", "increases", "increased", "drops", "dropped", "rises", "rose", "changes",
              "changed", "moves", "moved", "here", "we", "get", "got", "see", "saw"}


def _pairs(lines: list[str]) -> list[Claim]:
    claims = []
    for k, line in enumerate(lines):
        if "|" in line or _NOT_TABLE.match(line.strip()):
            continue
        for match in _PAIR.finditer(line):
            a, b = number(match.group("a").replace(" ", "")), number(match.group("b").replace(" ", ""))
            unit = unit_of(match.group("ub") or "") or unit_of(match.group("ua") or "")
            heading = next((lines[j] for j in range(k - 1, max(-1, k - 4), -1) if lines[j].strip().endswith(":")),
                           "")
            unit = unit or (unit_of(heading) if heading and len(heading) < 60 else None)  # "Latency (usec):"
            if a is None or b is None or unit is None:
                continue  # "1 to 4 threads": a pair is figures with a unit
            words = re.findall(r"[A-Za-z][\w/.-]*", re.split(r"[.;:]\s", line[:match.start()])[-1])
            if not words:  # the figures open the line: the words after them, or those ending the line above
                words = re.findall(r"[A-Za-z][\w/.-]*", re.split(r"[.;:](?:\s|$)", line[match.end():])[0])[:4]
            if not words and k:
                words = re.findall(r"[A-Za-z][\w/.-]*", re.split(r"[.;:]\s", lines[k - 1])[-1])
            label = " ".join(w for w in words[-4:] if w.lower() not in _NOT_LABEL)
            claims.append(_claim(label or unit[0], a, b, unit, None, "", line.strip()))
    return claims


def description(text: str) -> str:
    """The text above a diff: the part of a mail that describes."""
    cut = len(text)
    for marker in (r"^---\s*$", r"^diff --git ", r"^Index: ", r"\s---\s+\S+\s+\|\s+\d+\s"):
        found = re.search(marker, text, re.M)
        if found:
            cut = min(cut, found.start())
    return text[:cut]


_SIDE_LINE = re.compile(r"^\s*(?P<side>before|after|baseline|patched|unpatched|vanilla|with(?:out)? (?:the )?patch)"
                        r"\b[^:\d]{0,30}:\s*(?P<rest>.*)$", re.I)
_FIGURE = re.compile(r"(?P<n>[+-]?\d[\d,]*(?:\.\d+)?(?:\s?[kKmMgG](?![A-Za-z]))?)\s*(?P<u>[A-Za-zµ/%]+(?:/[a-z]+)?)")


def _side(word: str) -> str:
    return "before" if re.match(r"before|baseline|unpatched|vanilla|without", word, re.I) else "after"


def _side_lines(lines: list[str]) -> list[Claim]:
    """``Before: 1203 MiB/s`` then ``After: 1384 MiB/s`` (or both on one line): each figure
    with a unit on the before side paired with the figure of that unit on the after side."""
    sides: list[tuple[str, list[tuple[float, tuple[str, Kind, Better | None]]], str]] = []
    for line in lines:
        parts = re.split(r"[,;]\s*(?=(?:after|with the patch|patched)\b)", line, flags=re.I)
        for part in parts:
            match = _SIDE_LINE.match(part)
            if not match:
                continue
            figures = []
            for figure in _FIGURE.finditer(match.group("rest")):
                value, unit = number(figure.group("n").replace(" ", "")), unit_of(figure.group("u"))
                if value is not None and unit is not None:
                    figures.append((value, unit))
            if figures:
                sides.append((_side(match.group("side")), figures, line.strip()))
    out = []
    for (side_a, before, text_a), (side_b, after, text_b) in zip(sides, sides[1:]):
        if (side_a, side_b) != ("before", "after"):
            continue
        for value, unit in before:
            other = next((v for v, u in after if u[0] == unit[0]), None)
            if other is not None:
                out.append(_claim(unit[0], value, other, unit, None, "", f"{text_a} / {text_b}"))
    return out


def claims(text: str) -> list[Claim]:
    """Every claim in a mail's text: its tables first, then its pairs."""
    lines = [line.rstrip() for line in description(text).splitlines()]
    lines = [re.sub(r"^(>\s*)+", "", line) for line in lines]
    found = _pipe_tables(lines) + _column_tables(lines)
    seen = {(c.before, c.after) for c in found}
    for pair in _pairs(lines) + _side_lines(lines):
        if (pair.before, pair.after) not in seen:
            found.append(pair)
            seen.add((pair.before, pair.after))
    return found
