"""Every claim of a mail's text, from each form the readers know.

From the mail's text (the cover and every patch's description, never the
diff): its pipe tables and tables of columns first, then the figures
pasted under each side (iolab.mail.claimed.sides), then pairs in prose. A
row two forms read alike (the same figures before and after) is one row.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.abstain import abstained
from iolab.mail.claimed.better import infer
from iolab.mail.claimed.bloat import bloat_totals
from iolab.mail.claimed.clauses import trailing_pairs
from iolab.mail.claimed.consistent import consistent
from iolab.mail.claimed.evidence import admitted
from iolab.mail.claimed.misread import kept
from iolab.mail.claimed.model import Claim
from iolab.mail.claimed.pipes import pipe_tables
from iolab.mail.claimed.prose import pairs, perf_diff
from iolab.mail.claimed.repeats import repeated_tables
from iolab.mail.claimed.rows import ascii_box
from iolab.mail.claimed.sides import side_pairs
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


def claims(text: str, subject: str = "") -> list[Claim]:
    """Every claim in a mail's text: its tables first, then its sides, then its pairs. ``subject``: the
    patches' subjects, one a line (what a patch drops or brings names a table's sides)."""
    lines = [ascii_box(line.rstrip()[:MAX_WIDTH]) for line in description(text).splitlines()[:MAX_LINES]]
    lines = _without_scripts([re.sub(r"^(>\s*)+", "", line) for line in lines])
    about = [f"Subject: {line[:MAX_WIDTH]}" for line in subject.splitlines()[:MAX_LINES] if line.strip()]
    found = _as("pipes", pipe_tables(lines, about)) + _as("columns", column_tables(lines, about)) + \
        _as("repeats", repeated_tables(lines)) + _as("bloat", bloat_totals(lines))
    seen = {(c.before, c.after) for c in found}
    found += _own(_as("sides", side_pairs(lines, tuple(about))), found)
    seen |= {(c.before, c.after) for c in found}
    means = [k for k, c in enumerate(found) if "(mean of" in c.label]
    for pair in _as("trailing", trailing_pairs(lines)) + _as("side rows", side_rows(lines)) + \
            _as("prose", pairs(lines)) + _as("perf", perf_diff(lines)):
        mean = next((k for k in means if "(mean of" in found[k].label and _same(found[k], pair)), None)
        if mean is not None:  # the mail states the mean of the runs it pasted: its figures are the row
            found[mean] = pair
        elif "(mean of" in pair.label and any(_same(c, pair) for c in found):
            continue
        elif (pair.before, pair.after) not in seen and not any(_scaled(pair, c) for c in found):
            found.append(pair)
        seen.add((pair.before, pair.after))
    return abstained(infer(lines, consistent(kept(admitted(found, lines, about), lines), lines)))


def _as(form: str, found: list[Claim]) -> list[Claim]:
    """The rows, each saying which form read it."""
    return [replace(c, form=form) for c in found]


_SCRIPT = re.compile(r"^\s*(?:#!/|\$\s*cat\s+\S+\s*$|\$?\s*cat\s*(?:>|<<)|\w+\s*\(\)\s*\{\s*$)")
_FUNCTION = re.compile(r"^\s*\w+\s*\(\)\s*$")  # a shell function's name, its brace on the next line


def _without_scripts(lines: list[str]) -> list[str]:
    """The lines with a script's body blanked (``#!/bin/bash``, ``$ cat test.sh``, ``run_test()``, a
    heredoc): its settings and arguments (``run_test 1 0``, ``NUM_CLONES=50``) are no measure. An
    indented script ends at a line less indented; one at the margin at a blank line before prose."""
    out = list(lines)
    k = 0
    while k < len(lines):
        if not _SCRIPT.match(lines[k]) and not (_FUNCTION.match(lines[k]) and lines[k + 1:k + 2] and
                                                 lines[k + 1].strip() == "{"):
            k += 1
            continue
        indent = len(lines[k]) - len(lines[k].lstrip())
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)", lines[k])
        j = k + 1
        while j < len(lines):
            text = lines[j]
            if heredoc and text.strip() == heredoc.group(1) or \
                    text.strip() and indent and len(text) - len(text.lstrip()) < indent:
                break
            if not heredoc and not indent and (not text.strip() and _prose(lines[j + 1:j + 2]) or
                                                re.match(r"^\s*-{3,}\s*8<\s*-{3,}\s*$", text)):
                break  # prose after a blank line, or the scissors line that closes what was cut out
            j += 1
        out[k:j] = [""] * (j - k)
        k = j + 1
    return out


def _prose(lines: list[str]) -> bool:
    return bool(lines) and len(lines[0].split()) >= 5 and not re.match(r"\s*[$#]", lines[0])


def _own(sided: list[Claim], found: list[Claim]) -> list[Claim]:
    """The sides' rows not read already: rows of the same figures under other names (bonnie++'s six
    create rates, 20480 -> 20480 each) are rows of their own; a mean of runs the mail states is not."""
    seen = {(c.before, c.after) for c in found}
    keys: set[tuple[str, float, float]] = set()
    out: list[Claim] = []
    for c in sided:
        if (c.before, c.after) in seen or _key(c) in keys:
            continue  # another form's row; one row under two names of its after side
        if "(mean of" in c.label and any(_same(c, o) for o in sided if o is not c and "(mean of" not in o.label):
            continue
        out.append(c)
        keys.add(_key(c))
    return out


def _key(claim: Claim) -> tuple[str, float, float]:
    """A row without the name of its after side ("x (and after)", "x (and after the changes)")."""
    return re.sub(r"\s*\([^()]*\)$", "", claim.label), claim.before, claim.after


def _scaled(bare: Claim, read: Claim) -> bool:
    """A row read from the lines of another (its caption aside), in its unit or none, its figures that
    row's without their multiplier (``column 1: 1.2 -> 1.5`` beside ``IOPS: 1200000 -> 1500000`` from ``1.2 MIOPS`` / ``1.5 MIOPS``)."""
    return bare.unit in ("", read.unit) and read.source in bare.source and \
        any(abs(bare.before * scale - read.before) <= 1e-9 * abs(read.before) and
            abs(bare.after * scale - read.after) <= 1e-9 * abs(read.after) for scale in (1e3, 1e6, 1e9))


def _same(a: Claim, b: Claim) -> bool:
    """Two rows of the same figures to the mail's rounding (513.3 -> 633.6 and 513 -> 633 MiB/s)."""
    return a.unit == b.unit and all(abs(x - y) <= 0.005 * max(abs(x), abs(y)) for x, y in
                                    ((a.before, b.before), (a.after, b.after)))
