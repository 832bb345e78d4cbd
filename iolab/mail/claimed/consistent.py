"""Whether a row agrees with what the mail states on its own lines.

A form pairs figures by where they stand; the mail often says the change in words of its own beside
them (``16.859s (+40.01%)``, ``* -10.90%*``, ``| -33% |``). Where it does, and no change it states is
near the row's (against either side), the row pairs figures the mail
does not compare: a column of another test (``12.041s`` of one benchmark against ``49.190s`` of
another), a row against another row's baseline, a third kernel's column. The row is refused.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim

# a change the mail states: signed (``+24.33%``, ``-33%``), or in parentheses or stars (mmtests'
# ``(   0.00%)`` and ``*   0.20%*``), never a bare share (``CPU 45%``)
_STATED = re.compile(r"(?<![\w.%])[+-]\s?\d+(?:\.\d+)?\s?%|\(\s*[+-]?\d+(?:\.\d+)?\s?%\s*\)|"
                     r"\*\s*[+-]?\d+(?:\.\d+)?\s?%\s*\*")
_VALUE = re.compile(r"\d+(?:\.\d+)?")


def stated(claim: Claim) -> list[float]:
    """The changes the row's own lines state, as written (their sign aside); a row of shares' own
    figures are none (``+256%`` -> ``+113%`` states no change)."""
    out = []
    for match in _STATED.finditer(claim.source):
        value = float(_VALUE.findall(match.group(0))[0])
        if claim.unit != "%" or value not in (abs(claim.before), abs(claim.after)):
            out.append(value)
    return out


def contradicted(claim: Claim) -> bool:
    """The row's lines state changes and none of them is near the row's, against either side (a
    mail rounds, or computes its change against the after: only a change far from every stated one
    contradicts), nor, for a row of shares, its change in points (``45% 40% -5%``)."""
    changes = stated(claim)
    if not changes or not claim.before or not claim.after:
        return False
    moves = [abs(claim.after - claim.before) / abs(base) * 100 for base in (claim.before, claim.after)]
    if claim.unit == "%":
        moves.append(abs(claim.after - claim.before))
    return not any(_near(move, change) for move in moves for change in changes)


def _near(move: float, change: float) -> bool:
    return abs(move - change) <= max(2.0, 0.25 * change)


def consistent(found: list[Claim], lines: list[str]) -> list[Claim]:
    """The rows no change stated on their lines contradicts, in their order, but for a column of
    changes read as a row, rows of two tables crossed, and the rows of a table read across columns
    that its stated changes say are no sides (``contrary``)."""
    wrong = contrary(found, lines)
    return [claim for claim in found if not contradicted(claim) and not a_change(claim) and
            not crossed(claim, lines) and claim.source not in wrong]


def contrary(found: list[Claim], lines: list[str]) -> set[str]:
    """The lines of tables (runs of lines with no blank one) where two rows or more state changes that
    contradict them and none states one that agrees: the form read the table across columns the
    mail does not compare (``(1 baseline)  12.041s  49.190s`` beside ``(2 disabled)  14.970s
    (+24.33%)  49.684s (+1.00%)``), so its rows that state no change are no pairs either."""
    at: dict[str, int] = {}
    for k, line in enumerate(lines):
        at.setdefault(line.strip(), k)
    votes: dict[int, list[bool]] = {}
    for claim in found:
        if " / " in claim.source or claim.source.strip() not in at or not stated(claim):
            continue
        votes.setdefault(_paragraph(lines, at[claim.source.strip()]), []).append(contradicted(claim))
    bad = {start for start, said in votes.items() if len(said) >= 2 and all(said)}
    return {claim.source for claim in found if claim.source.strip() in at and
            _paragraph(lines, at[claim.source.strip()]) in bad}


def _paragraph(lines: list[str], k: int) -> int:
    """Where the run of non-blank lines holding line k starts."""
    while k > 0 and lines[k - 1].strip():
        k -= 1
    return k


_CHANGE = re.compile(r"(?:^|\s)(?:%\s*)?(?:change|diff|delta|chg|Δ)\s*(?:\(\s*%\s*\)|%)?$", re.I)


def a_change(claim: Claim) -> bool:
    """A row read down a column of the mail's changes (``| Phase | Full sync | Full async | % change |``:
    ``% change`` 33 -> 1): a change is no measure of a side."""
    return _CHANGE.search(claim.label) is not None


def crossed(claim: Claim, lines: list[str]) -> bool:
    """A row of two table lines, a table a side, whose names differ (``| Total dpm_suspend*() time | 107
    ms |`` against ``| Total dpm_resume*() time | 75 ms |``) where the after's table has a row of the
    before's name too: the form paired rows by their place, and the sides' rows of one measure share
    their name. Rows that are the sides in one table (``8k (bigalloc)`` / ``8k (LBS)``) are not crossed."""
    parts = claim.source.split(" / ")
    names = [_name(part) for part in parts]
    if len(parts) != 2 or not all(names) or names[0] == names[1]:
        return False
    at = [k for k, line in enumerate(lines) if line.strip() == parts[1].strip()]
    return any(_name(lines[j]) == names[0] and lines[j].strip() != parts[0].strip()
               for k in at for j in _block(lines, k))


def _block(lines: list[str], k: int) -> range:
    """The table lines around line k: the run of lines holding bars, its rules among them."""
    start = k
    while start > 0 and _tabled(lines[start - 1]):
        start -= 1
    end = k
    while end + 1 < len(lines) and _tabled(lines[end + 1]):
        end += 1
    return range(start, end + 1)


def _tabled(line: str) -> bool:
    """A line of a pipe table: one holding a bar, or a rule of +, - and = alone."""
    return "|" in line or bool(line.strip()) and set(line.strip()) <= set("+-=")


def _name(line: str) -> str:
    """A table line's first cell when it is a name (``| Total dpm_resume*() time |``, ``Sum``), else ''."""
    if line.count("|") < 3:
        return ""
    first = next((cell.strip() for cell in line.strip().strip("|").split("|")), "")
    return re.sub(r"\s+", " ", first).lower() if re.search(r"[A-Za-z]{2}", first) else ""
