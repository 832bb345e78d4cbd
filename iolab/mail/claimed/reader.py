"""Every claim of a mail's text, from each form the readers know.

From the mail's text (the cover and every patch's description, never the
diff): its pipe tables and tables of columns first, then the figures
pasted under each side (iolab.mail.claimed.sides), then pairs in prose. A
row two forms read alike (the same figures before and after) is one row.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.better import infer
from iolab.mail.claimed.model import Claim
from iolab.mail.claimed.pipes import pipe_tables
from iolab.mail.claimed.prose import pairs, perf_diff
from iolab.mail.claimed.sides import side_pairs, trailing_pairs
from iolab.mail.claimed.tables import column_tables, side_rows


def description(text: str) -> str:
    """The text above a diff: the part of a mail that describes."""
    cut = len(text)
    for marker in (r"^---\s*$", r"^diff --git ", r"^Index: ", r"\s---\s+\S+\s+\|\s+\d+\s"):
        found = re.search(marker, text, re.M)
        if found:
            cut = min(cut, found.start())
    return text[:cut]


MAX_LINES, MAX_WIDTH = 10_000, 16 << 10  # read no further: a hostile mail's time stays bounded (iolab watch)


def claims(text: str) -> list[Claim]:
    """Every claim in a mail's text: its tables first, then its sides, then its pairs."""
    lines = [line.rstrip()[:MAX_WIDTH] for line in description(text).splitlines()[:MAX_LINES]]
    lines = [re.sub(r"^(>\s*)+", "", line) for line in lines]
    found = pipe_tables(lines) + column_tables(lines)
    seen = {(c.before, c.after) for c in found}
    for pair in side_pairs(lines) + trailing_pairs(lines) + side_rows(lines) + pairs(lines) + perf_diff(lines):
        if (pair.before, pair.after) not in seen:
            found.append(pair)
            seen.add((pair.before, pair.after))
    return infer(lines, found)
