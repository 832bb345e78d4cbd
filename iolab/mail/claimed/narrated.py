"""Figures told in a paragraph a side: each side's paragraph opens with its side and says how long
each thing took (``Currently, without this patch, device probe for ata1 takes 468 ms, ata2 takes
840 ms`` ... ``With this patch, device probe for ata1 takes 268 ms, ata2 takes 440 ms``), or a sentence
a side (``Without this patch, the test was completed in 7705 ms. However, with this patch, the test was
completed in 5066 ms``): the same thing's figure in the two is a row."""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim, convert, make, unit_of
from iolab.mail.claimed.naming import side_of

_TOOK = re.compile(r"\b(?P<name>[A-Za-z][\w.-]*)\s+(?:(?:was|is|were|got)\s+)?(?:takes|took|needs|needed|lasts|lasted|"
                   r"(?:completes|completed|finishes|finished|runs|ran)\s+in)\s+(?:about\s+|around\s+|~)?"
                   r"(?P<v>\d[\d,]*(?:\.\d+)?)\s*(?P<u>[A-Za-zµ]+)\b")
_CLAUSE = re.compile(r"[,.:;(]")


def _paragraphs(lines: list[str]) -> list[tuple[str, int]]:
    """The mail's paragraphs of its own prose (no indented output, no table), each joined into one line."""
    out: list[tuple[str, int]] = []
    current: list[str] = []
    for k, line in enumerate([*lines, ""]):
        if line.strip() and not line.startswith((" ", "\t")) and "|" not in line:
            current.append(line.strip())
            continue
        if current and len(current[0].split()) >= 6:  # a sentence opens it, not a label ("Before:") over output
            out.append((" ".join(current), k - len(current)))
        current = []
    return out


def _side(text: str) -> str | None:
    """The side the paragraph's opening names: its first clause before its first figure that names one."""
    head = re.split(r"\d", text, maxsplit=1)[0]
    return next((side for part in _CLAUSE.split(head) if part.strip() and (side := side_of(part))), None)


def _timed(word: str) -> bool:
    unit = unit_of(word)
    return unit is not None and unit[1] == "time"


def narrated(lines: list[str]) -> list[Claim]:
    """Rows of two paragraphs or sentences, one a side, each naming things with how long each took."""
    told = []
    sentences = [s for text, _ in _paragraphs(lines)[:200] for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)]
    for text in sentences:
        took = {m.group("name").lower(): m for m in _TOOK.finditer(text) if _timed(m.group("u"))}
        side = _side(text) if took else None
        if side is not None:
            told.append((side, took))
    if [side for side, _ in told] != ["before", "after"]:
        return []
    (_, before), (_, after) = told
    out = []
    for name in [n for n in before if n in after]:
        a, b = before[name], after[name]
        ua, ub = unit_of(a.group("u")), unit_of(b.group("u"))
        value = convert(float(b.group("v").replace(",", "")), ub[0], ua[0]) if ua and ub else None
        if ua is not None and value is not None:
            out.append(make(name, float(a.group("v").replace(",", "")), value, ua, "lower", "",
                            f"{a.group(0)} / {b.group(0)}"))
    return out
