"""Which way a claim row is better when neither its unit nor its name says.

A kernel developer reads it from the mail around the row, in this order:

- the mail's own delta against the figures: a delta whose sign is the
  opposite of the figures' move is a gain (``p99 1.876 -> 0.963 +48.69%``:
  lower is better);
- a factor under a column named gain or speedup (``1117  1921  1.72``):
  above 1 the figures moved the better way;
- what the lines above the row say is measured (``Test result: iops``,
  ``Observation: Average fallocate operations per container per second``,
  ``fio (iops higher better, p99 lower better)``): throughput, IOPS and
  rates are better higher, latency, time and usage lower.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.model import Better, Claim, better_of, unit_of

_SIGNED = re.compile(r"^[+-−]")
_REACH = 40  # lines above a row that may say what it measures
_SAID = 3  # lines of words above a row (its table's passed over) that may


def _gain(claim: Claim) -> Better | None:
    """The better way when the mail's delta has the opposite sign of the figures' move."""
    stated = claim.stated.strip().lstrip("~(")
    if not _SIGNED.match(stated) or claim.direction == "none" or not re.search(r"\d", stated):
        return None
    up = stated[0] == "+"
    if up == (claim.direction == "up"):
        return None  # the delta is the change itself: it says nothing of which way is better
    return "higher" if claim.direction == "up" else "lower"


def _where(index: dict[str, int], claim: Claim) -> int | None:
    """The line the claim was read from (its after side's, for a row of two lines), by the lines' index."""
    parts = [p.strip() for p in claim.source.split(" / ") if p.strip()]
    for part in reversed(parts):
        for text in (part, part.split(": ", 1)[-1]):  # "deadline: | before this set | 263k |": a column's row
            if text in index:
                return index[text]
    return None


def _said_above(lines: list[str], k: int) -> Better | None:
    """The way the nearest lines above the row that say what is measured say is better (a table's
    rows and headers, lines of figures, are passed over)."""
    said = 0
    for line in reversed(lines[max(0, k - _REACH):k]):
        if not line.strip() or len(line) > 200 or "|" in line or re.search(r"\d", line.split(":")[-1]):
            continue  # a table's row or header, a device's name: not a line that says what was measured
        units = [u for u in (unit_of(w) for w in line.split()) if u and u[1] in ("rate", "bandwidth")]
        named = better_of(line) or (units[0][2] if units else None)  # "sec  normal MB/s  dontcache MB/s"
        stated = re.findall(r"\b(lower|higher)\s+(?:is\s+)?better\b", line, re.I)
        if named is not None:
            return named
        if len({w.lower() for w in stated}) == 1:
            return "lower" if stated[0].lower() == "lower" else "higher"
        said += 1
        if said >= _SAID:
            break
    return None


_GAIN = re.compile(r"\b(gain|speed-?up|improvement)s?\b", re.I)


def _gain_column(lines: list[str], k: int, claim: Claim) -> Better | None:
    """Under a column named gain or speedup, the row's factor (``2023  3998  2.42``): above 1, the
    way the figures moved is the better one; below 1, the other."""
    if claim.direction == "none" or not any(_GAIN.search(line) for line in lines[max(0, k - _SAID * 2):k]):
        return None
    written = [float(w) for w in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.%])", lines[k])]
    factors = [r for r in written if r not in (claim.before, claim.after) and r > 0 and r != 1]
    if len(factors) != 1:
        return None
    up = (claim.direction == "up") == (factors[0] > 1)
    return "higher" if up else "lower"


def infer(lines: list[str], found: list[Claim]) -> list[Claim]:
    """Each claim with its better way, where the unit and the name left it open and the mail says it."""
    out = []
    index: dict[str, int] = {}
    for n, line in enumerate(lines):  # each line stripped, and its pipe cells joined as a reader quotes them
        for text in (line.strip(), "|".join(line.strip().split("|")[1:-1]).strip()):
            index.setdefault(text, n)
    for claim in found:
        if claim.better is None:
            k = _where(index, claim)
            better = _gain(claim) or (_gain_column(lines, k, claim) or _said_above(lines, k) if k is not None
                                      else None)
            claim = replace(claim, better=better) if better else claim
        out.append(claim)
    return out
