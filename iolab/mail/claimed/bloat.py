"""bloat-o-meter's comparison of two kernel images (``scripts/bloat-o-meter old.o new.o``).

It prints a summary line, a table of the symbols that changed, and the image's total::

    add/remove: 1/2 grow/shrink: 2/3 up/down: 88/-260 (-172)
    Function                                     old     new   delta
    bio_endio                                    402     426     +24
    Total: Before=22813402, After=22813230, chg -0.00%

The Total line is the claim (the image's size in bytes, before and after: better lower); the rows of
symbols are the parts of that change, no claim of their own (tests/corpus/README.md).
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim, make, unit_of

_SUMMARY = re.compile(r"^\s*add/remove:\s*\d+/\d+\s+grow/shrink:\s*\d+/\d+")
_TOTAL = re.compile(r"^\s*Total:\s*Before=(\d+),\s*After=(\d+)(?:,\s*chg\s*([+-]?\d+(?:\.\d+)?%))?")
_SYMBOL = re.compile(r"^\s*(?:Function|Data|RO Data|\S+)\s+(?:\d+|-|old)\s+(?:\d+|-|new)\s+(?:[+-]?\d+|delta)\s*$")
_REACH = 2000  # rows of one table above a symbol's row at most (a hostile mail's time stays bounded)


def bloat_totals(lines: list[str]) -> list[Claim]:
    """The Total line of each bloat-o-meter output in the lines, a row each."""
    out = []
    for line in lines:
        total = _TOTAL.match(line)
        if total:
            out.append(make("bloat-o-meter total", float(total.group(1)), float(total.group(2)), unit_of("bytes"),
                            "lower", total.group(3) or "", line))
    return out


def symbol_row(claim: Claim, index: dict[str, list[int]], lines: list[str]) -> bool:
    """A row read from bloat-o-meter's table of symbols (its line under the ``add/remove: ...``
    summary, among the symbols' rows): a part of the Total's change, not a claim."""
    for k in index.get(claim.source.split(" / ")[0].strip(), [])[:1]:
        j = k
        while j >= max(0, k - _REACH) and _SYMBOL.match(lines[j]):
            j -= 1
        return j >= 0 and j < k and _SUMMARY.match(lines[j]) is not None
    return False
