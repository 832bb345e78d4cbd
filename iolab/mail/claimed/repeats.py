"""A command's output shown twice, before the change and after it.

A mail that shows what a command printed (``$ time fs_mark ...`` over a
table of time(1)'s lines, one column per setting) and later shows the same
command's table again, once the change is in ("Now the overhead looks
like:"), claims each cell of the second against the first. time(1)'s
``user`` and ``sys`` are its breakdown: claims only where the text speaks
of user or system time.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim
from iolab.mail.claimed.tables import column_table_list, command_above, twin_claims


def repeated_tables(lines: list[str]) -> list[Claim]:
    """The cells of each table shown twice under the same command line, the first before."""
    tables = column_table_list(tuple(lines))
    text = " ".join(lines)
    out: list[Claim] = []
    for n, (i, first) in enumerate(tables):
        command = command_above(lines, i)
        if not command:
            continue  # only under the command that printed it
        later = [(j, t) for j, t in tables[n + 1:] if command_above(lines, j) == command]
        if len(later) != 1 or later[0][1].header.split() != first.header.split():
            continue
        second = later[0][1]
        if [r.label for _, r in first.rows] != [r.label for _, r in second.rows]:
            continue
        for claim in twin_claims(first, second, None, None):
            part = claim.label.split()[0]
            if part in ("user", "sys") and not re.search(rf"\b{'user' if part == 'user' else 'system'} time\b",
                                                          text, re.I):
                continue
            out.append(claim)
    return out
