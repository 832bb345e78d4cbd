"""A table a side whose rows are one run's samples, not rows of their own: fs_mark's lines
(``FSUse%  Count  Size  Files/sec  App Overhead``, a line per loop as the file system fills), pasted
under each side with no average. The claim is each side's mean rate (its ``Files/sec`` column over
the rows); the counts, sizes and overheads beside it, and each line alone, are no claims.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Better, Claim, make, unit_of
from iolab.mail.claimed.rows import Row

# fs_mark's header: its progress column first, its rate among the others
_FS_MARK = re.compile(r"^\s*FSUse%\s.*\bFiles/sec\b", re.I)


# dbench's breakdown by operation: its Throughput line after it is the run's claim (outputs.py)
_DBENCH = re.compile(r"^\s*Operation\s+Count\s+AvgLat\s+MaxLat\s*$", re.I)


def breakdown(header: str) -> bool:
    """Whether a table's header is a run's breakdown that claims nothing (dbench's operations)."""
    return bool(_DBENCH.match(header))


def sampled(header: str) -> bool:
    """Whether a table's header is one whose rows are samples of one run (fs_mark's)."""
    return bool(_FS_MARK.match(header))


def sample_means(header: str, before: list[Row], after: list[Row], better: Better | None) -> list[Claim]:
    """The mean of the rate column of each side's rows (the column the header names ``Files/sec``)."""
    names = re.split(r"\s{2,}|\t", header.strip())
    if "Files/sec" not in names or not before or not after:
        return []
    k = names.index("Files/sec") - (len(names) - len(before[0].values))  # past the rows' label columns
    if not 0 <= k < min(len(r.values) for r in [*before, *after]):
        return []
    mean = [sum(r.values[k][0] for r in rows) / len(rows) for rows in (before, after)]
    label = f"Files/sec (mean of {len(before)} and {len(after)} samples)"
    return [make(label, mean[0], mean[1], unit_of("Files/sec"), better, "",
                 f"{before[-1].text} / {after[-1].text}")]
