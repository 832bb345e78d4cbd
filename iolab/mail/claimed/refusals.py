"""Forms whose figures are no before and after of the change, whatever evidence of two sides they show.

The gate (iolab.mail.claimed.evidence) refuses their rows:

- the story of the bug a patch fixes: a side named as the kernel before a regression or the one that
  brought it (``v6.1.40 (before regression): 910 MB/s``), a pair in a paragraph naming the earlier
  commit that brought it (``Commit 0123abcd4567 (...) caused ... dropped from 9100 IOPS to 5200 IOPS``);
- where each side is pasted in several cases under its own name, and not as many a side, a before
  and an after of different configurations (``stock, reading from the NVMe drive:`` against ``With
  the patch, two SATA disks striped:``);
- dbench's table of operations (``Operation  Count  AvgLat  MaxLat``) pasted per side above its
  ``Throughput 869.867 MB/sec`` line: the throughput is the claim, each operation's count and
  latencies are counters beside it;
- a table whose first columns are one setting's values (``mb_optimize_scan=0  mb_optimize_scan=1
  patched``): its first column is a mode of the kernel, no before of the change;
- a side named as a kernel with an earlier commit reverted (``With reverting 4e89dce72521: 1250K``)
  where no patch is that revert: the regression's story, told by taking its cause out;
- a latency distribution's lines (redis-benchmark's ``99.90% <= 1.2 milliseconds``) as samples;
- time(1)'s minutes and seconds (``5m1.871s``) read as their minutes alone.
"""

from __future__ import annotations

import re

from iolab.mail.claimed.model import Claim
from iolab.mail.claimed.naming import unsided
from iolab.mail.claimed.sides import Segment, segments

_REACH = 30  # lines above a pair that may be its paragraph


_REGRESSION = re.compile(r"\b(?:before|prior\s+to|pre-?)\s*(?:the\s+)?regression\b|\bregression\s+introduced\b", re.I)


def regression_told(claim: Claim) -> bool:
    """A row whose side is named as the kernel before a regression or the one that brought it (``v6.6.52
    (before regression): 640 MB/s`` / ``v6.6.68 with the fix: 640 MB/s``): the story of the bug the patch
    fixes, not the change's before and after (the regressed kernel is the patch's before)."""
    return _REGRESSION.search(claim.source) is not None


_CAUSED = re.compile(r"\bcommit\s+[0-9a-f]{7,40}\b[^.]{0,160}?\b(?:introduced|caused|broke|regressed)\b", re.I)
_OURS = re.compile(r"\b(?:this|the|my|our)\s+(?:patch|series|patchset|fix|change|revert)\b|\bpatched\b|\brevert", re.I)


def caused(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A pair in prose whose paragraph names an earlier commit as what brought it (``Commit 6df25e58532b
    ("...") introduced ... As a result, random writes got slower (from ~170 MB/s to ~126 MB/s)``): the
    regression the patch fixes, not its change, unless the pair's line speaks of the patch or a revert."""
    if claim.form != "prose" or claim.source not in index or _OURS.search(claim.source):
        return False
    k = index[claim.source][0]
    start = next((j + 1 for j in range(k - 1, max(-1, k - _REACH), -1) if not lines[j].strip()), max(0, k - _REACH))
    paragraph = " ".join(line.strip() for line in lines[start:k + 1])
    return _CAUSED.search(paragraph) is not None and not _OURS.search(paragraph)


_FILLER = {"the", "a", "an", "of", "on", "to", "in", "for", "and", "with", "without", "patch", "patches", "patched",
           "series", "this", "change", "changes", "kernel", "applied", "applying"}


def cases_of(found: list[Claim], lines: list[str]) -> list[Segment]:
    """The sides' segments, when both sides are pasted in several cases, each named by its configuration,
    and not as many a side (``mainline, from an SSD:`` ... ``With the patch, 2 HDDs:``): cases that line up
    pair the nth with the nth (iolab.mail.claimed.sides); else none."""
    if not any(c.form == "sides" and c.label.endswith(")") for c in found):
        return []  # the sides reader names the after case of a row only where there are several
    found_segments = [s for s in segments(lines) if s.figures and s.side is not None]
    names = {side: [frozenset(_configuration(s.name)) for s in found_segments if s.side == side]
             for side in ("before", "after")}
    if any(len(set(named)) < 2 or frozenset() in named for named in names.values()):
        return []  # a side of one case, or a case named by its side alone ("with this patch:")
    return found_segments if len(names["before"]) != len(names["after"]) else []  # else the nth with the nth


def _configuration(name: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", unsided(name).lower()) if w not in _FILLER}


def other_case(claim: Claim, cases: list[Segment]) -> bool:
    """A row of the sides' figures whose before and after are cases of different configurations, where each
    side is pasted per configuration (``mainline, read from an SSD:`` against ``With the patch, 2 HDDs:``):
    a before and an after pair only when one's configuration is the other's or within it."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    if claim.form != "sides" or len(parts) != 2 or not cases:
        return False
    mine = [s for s in cases if s.side == "before" and any(f.line.strip() == parts[0] for f in s.figures)]
    theirs = [s for s in cases if s.side == "after" and any(f.line.strip() == parts[1] for f in s.figures)]
    if not mine or not theirs:
        return False
    for a in mine:
        for b in theirs:
            one, other = _configuration(a.name), _configuration(b.name)
            if not one or not other or one <= other or other <= one:
                return False  # one case's figures, or a side with no configuration of its own
    return True


_OPERATIONS = re.compile(r"^\s*(?:Operation|Op)\s+Count\s+AvgLat\s+MaxLat\s*$", re.I)
_THROUGHPUT = re.compile(r"^\s*Throughput\s+[\d.]+\s*[KMG]i?B/sec\b", re.I)


def operations(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row of dbench's table of operations (``NTCreateX  3322265  0.034  21.032`` under ``Operation
    Count  AvgLat  MaxLat``), each side's table above its run's ``Throughput 869.867 MB/sec`` line: the
    throughput is the run's claim, the operations' counts and latencies are counters beside it."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    return all(_under_operations(index.get(part, []), lines) for part in parts)


def _under_operations(where: list[int], lines: list[str]) -> bool:
    """The line sits in a table of dbench's operations whose run's throughput line follows it (a run's
    throughput line itself, the next run's table after it, is the claim)."""
    if not where or _THROUGHPUT.match(lines[where[0]]):
        return False
    k = where[0]
    head = next((j for j in range(k - 1, max(-1, k - _REACH), -1) if _OPERATIONS.match(lines[j])), None)
    return head is not None and any(_THROUGHPUT.match(line) for line in lines[k + 1:k + _REACH])


_MINUTES = re.compile(r"(?<![\w.])(\d+)\s?(?:m|mins?|minutes?)\s?(\d+(?:\.\d+)?)\s?(?:s|secs?|seconds?)\b")


def minutes_only(claim: Claim) -> bool:
    """A row whose figures are the minutes of time(1)'s ``5m1.871s`` and ``2m47.642s`` (busybox's ``0m 16.62s``,
    ``1min 27sec``), their seconds dropped, or their seconds without their minutes, or one such time's minutes
    against its own seconds: whoever reads the cell as numbers stops at the ``m``; the time is 301.871 s, not 5."""
    found = [(float(m.group(1)), float(m.group(2))) for m in _MINUTES.finditer(claim.source)]
    minutes, seconds = {m for m, _ in found}, {s for m, s in found if m}
    return {claim.before, claim.after} <= minutes or {claim.before, claim.after} <= seconds or \
        (claim.before, claim.after) in found


_SETTING = re.compile(r"([A-Za-z_][\w.-]*)=\S+")


def setting_first(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row read across a table whose header's first column sets a key that another column sets to
    another value (``mb_optimize_scan=0  mb_optimize_scan=1  patched``): the first column, whence the
    row's before, is a mode of the kernel under test, not the kernel without the change."""
    if claim.form not in ("columns", "pipes") or " / " in claim.source or claim.source not in index:
        return False
    figures = [float(f) for f in re.findall(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w.])", claim.source)]
    if figures and claim.before != figures[0]:
        return False  # its before is not the first column's (mmtests.py: "patched" against its neighbour)
    k = index[claim.source][0]
    for j in range(k - 1, max(-1, k - _REACH), -1):
        columns = [c.strip() for c in re.split(r"\s{2,}|\t|\|", lines[j]) if c.strip()]
        keys = [m.group(1) if m else None for m in (_SETTING.fullmatch(c) for c in columns)]
        if keys and keys[0] is not None and keys[1:].count(keys[0]) >= 1:
            return True
    return False


_REVERTING = re.compile(r"\b(?:with|after|w/)\s+revert(?:ing|ed)?\s+(?:commit\s+)?[0-9a-f]{7,40}\b", re.I)


def reverted_elsewhere(claim: Claim, about: list[str]) -> bool:
    """A row whose side is a kernel with an earlier commit reverted (``v5.12-rc3 baseline: 600K IOPS`` /
    ``With reverting 4e89dce72521: 1250K IOPS``) where no patch's subject is a revert: the cost of the
    regression the series answers, measured by taking its cause out, not the series' before and after."""
    return _REVERTING.search(claim.source) is not None and not any(re.search(r"\brevert", line, re.I)
                                                                   for line in about)


_BUCKET = re.compile(r"^\s*\d+(?:\.\d+)?%\s*(?:<=|<|≤)\s*\d")


def distribution(claim: Claim) -> bool:
    """A row of a latency distribution's lines (redis-benchmark's ``99.90% <= 1.2 milliseconds``, ``100.00% <= 3
    milliseconds``): each line is the bound of a share of the requests, not a sample, and their mean is no figure."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    return all(_BUCKET.match(part) for part in parts)
