"""Two sides in one line, or in two lines one under the other.

``base IOPS is 562K, patch IOPS is 574K``, ``IOPS base: 570K, patch: 590K``,
``562K IOPS without the patch and 574K IOPS with it``, ``Before this patch:
1200 MB/s. After this patch: 1500 MB/s.``: each clause (or sentence) a side
and one figure. Two lines each ending in its side (``... 0:43.39elapsed
75%CPU without the patch, and`` / ``... with the patch.``) pair as two
sides' outputs do (iolab.mail.claimed.sides).
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim, Unit, convert, figures, make, number, unit_of
from iolab.mail.claimed.naming import AFTER, BEFORE, Side, side_of
from iolab.mail.claimed.outputs import line_figures
from iolab.mail.claimed.sides import Segment, pair_sides

_CLAUSES = re.compile(r"[,;]\s*|\.\s+(?=[A-Z])|\s+(?:and|vs\.?|versus|while|whereas|compared to)\s+|"
                      r"\s{2,}(?=(?:after|patched|with (?:the |this )?patch)\b)", re.I)


def _clause(text: str) -> tuple[Side, str, float, Unit | None] | None:
    """A clause that opens with a side and holds one figure: ``base IOPS is 562K``."""
    text = re.sub(r"^\s*(?:(?:and|but|the|on)\s+)+", "", text, flags=re.I)
    head = " ".join(text.split()[:3])  # "base IOPS is 562K", "IOPS base: 570K"
    opened = BEFORE.search(head) or AFTER.search(head)
    side = side_of(" ".join(head[opened.start():].split()[:4])) if opened else None
    if side is None:
        return _clause_after(text) or _clause_within(text)
    found = [(v, u) for v, u, _ in figures(text) if u[0] != "%"]
    plain = re.findall(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?[kKmMgG]?)(?![\w%]|\.\d)", text)
    unit = found[0][1] if len(found) == 1 else unit_of(text) if len(plain) == 1 else None
    value = found[0][0] if len(found) == 1 else number(plain[0]) if len(plain) == 1 else None
    if value is None:
        return None
    words = [w for w in re.findall(r"(?<![\w.])[A-Za-z][\w/.-]*", text) if side_of(w) is None and unit_of(w) is None
             and w.lower() not in ("is", "was", "the", "code", "kernel", "it", "of", "at", "gives", "got")]
    return side, " ".join(words[:3]), value, unit


_ON = re.compile(r"^\s*(?:(?:on|in|for|from|using)\s+)?(?:the\s+|a\s+)?")


def _clause_after(text: str) -> tuple[Side, str, float, Unit | None] | None:
    """A clause whose one figure is followed by its side: ``562K IOPS without the patch``, ``9.8s on the
    patched kernel``, ``1500 MB/s after this series``, ``574K IOPS with it``."""
    found = [(v, u, m) for v, u, m in figures(text) if u[0] != "%"]
    if len(found) != 1:
        return None
    value, unit, match = found[0]
    rest = _ON.sub("", text[match.end():])
    words = rest.split()[:4]
    side = side_of(" ".join(words)) if words and (BEFORE.match(rest) or AFTER.match(rest) or
                                                    side_of(" ".join(words[:2]))) else None
    if side is None:
        return None
    label = [w for w in re.findall(r"(?<![\w.])[A-Za-z][\w/.-]*", text[:match.start()])
             if w.lower() not in ("is", "was", "we", "get", "got", "it", "takes", "took", "the", "of", "at")]
    return side, " ".join(label[-3:]), value, unit


def _clause_within(text: str) -> tuple[Side, str, float, Unit | None] | None:
    """A clause that names its side between its measure and its one figure: ``The peak IOPS for this
    patch is 314K``, ``the throughput on the patched kernel is 2.1 GB/s``."""
    found = re.search(r"\b(?:for|with|on|in|using|under)\s+((?:the|this|a)\s+)?(?P<side>[\w/+.-]+(?:\s+[\w/+.-]+)?)"
                      r"\s+(?:is|was|are|were|gives|gave|reaches|reached|gets|got)\s+(?:about\s+|~)?"
                      r"(?P<v>\d[\d,]*(?:\.\d+)?[kKmMgG]?)(?![\w.])\s*(?P<u>[A-Za-z/%]+)?", text)
    side = side_of(found.group("side")) if found else None
    value = number(found.group("v")) if found else None
    if found is None or side is None or value is None:
        return None
    label = [w for w in re.findall(r"(?<![\w.])[A-Za-z][\w/.-]*", text[:found.start()]) if w.lower() != "the"]
    return side, " ".join(label[-3:]), value, unit_of(found.group("u") or "") or unit_of(text[:found.start()])


def clause_pairs(line: str) -> list[Claim]:
    """One line that names both sides: ``base IOPS is 562K, patch IOPS is 574K``."""
    clauses = [c for c in (_clause(part) for part in _CLAUSES.split(line)) if c is not None]
    if len(clauses) != 2 or {clauses[0][0], clauses[1][0]} != {"before", "after"}:
        return []
    (side, words, a, unit), (_, _, b, other) = clauses
    if side == "after":
        a, b, unit, other = b, a, other, unit
    unit, other = unit or other, other or unit  # "IOPS base: 570K, patch: 590K": one unit for both
    if unit is None or other is None:
        return []
    value = convert(b, other[0], unit[0])
    if value is None:
        return []
    return [make(words or unit[0], a, value, unit, None, "", line)]




# figures, then the side they were measured on: "4.29user ... 0:43.39elapsed 75%CPU without the patch, and"
_TRAILING = re.compile(r"^(?P<body>.*\d.*?)\s+(?P<side>(?:with(?:out)?|before|after)\b[^,.;:]{0,30}?)\s*[,.;]?"
                       r"(?:\s*(?:and|but|while|whereas))?\s*$", re.I)


def trailing_pairs(lines: list[str]) -> list[Claim]:
    """Two lines one under the other, each figures followed by the side they are of
    (``... 0:43.39elapsed 75%CPU without the patch, and`` / ``... with the patch.``)."""
    out: list[Claim] = []
    for k in range(len(lines) - 1):
        found = [m for m in (_TRAILING.match(line) for line in lines[k:k + 2]) if m is not None]
        sides = [side_of(m.group("side")) for m in found]
        if len(found) != 2 or set(sides) != {"before", "after"}:
            continue
        first, second = (Segment(side, m.group("side"), line_figures(m.group("body")))
                         for side, m in zip(sides, found))
        before, after = (first, second) if sides[0] == "before" else (second, first)
        out += pair_sides(before, after, False)
    return out
