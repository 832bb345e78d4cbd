"""Layouts read as pairs they are not: rows the gate (iolab.mail.claimed.evidence) admitted whose
figures are no before and after of the change, refused by the layout they come from.

- a histogram's bucket (bpftrace's ``[16, 32)  1203 |@@@@  |``, ``[1K, 2K)``): the count of samples
  that fell in it, not a measure, whichever tables a side hold it;
- three columns or more where one names the change itself (``original  after  this commit``, ``good
  bad  fixed``): a pair of two other columns (the kernel before a regression against the regressed
  one) is the story of the bug, not the change;
- a table row whose caption, the sentence it goes on, tells a regression and never the change (``This
  results in a regression of up to 8% on my box:`` over ``baseline  mb_optimize_scan``): the regression
  a patch fixes is not its claim;
- runs pasted one after the other under a side with no average (time(1)'s ``real``/``user``/``sys``
  three times): a row pairing one run of each side by its order is no claim (their mean is);
- figures chained by arrows in prose (``31 MIOPS -> 29 -> 30 -> 29``): a series, whose change is its
  first against its last;
- time(1)'s user and sys read as rows of a table under its real row, where no sentence speaks of user
  or system time: the real time is the claim;
- of several variants of one base under headings opening alike (``Base + write_cache_pages():``), one
  named as the patches (``Base + Partial revert (these patches):``): the others are alternatives;
- a side named as the kernel before or after an earlier commit by its hash (``1) before commit
  f95bdb700bc6b:`` / ``2) after commit f95bdb700bc6b:``): the regression's story.
- a histogram's buckets written as ranges, one going on from another (``0-01 us``, ``01-05 us``);
- a setting's value, then what the run gave, across an arrow (``poll_ns=0 / max_ns=200000 --> 52.1``);
- columns under text that says every run used one kernel in several configurations (``I ran with 3
  configurations using the squota kernel``): fsperf's ``baseline  current`` are modes of it.
- afters listed under one baseline, each named (``- Joel's fix [1]: 258.4 MB/s``), where one is named
  as the patch (``- This patch: 280.2 MB/s``): the others are other changes, no claim of this one.

A row read across a header whose columns name the after side first (``Patchset IOPS  Mainline IOPS``)
is turned round.
"""

from __future__ import annotations

import re
from dataclasses import replace

from iolab.mail.claimed.evidence import across
from iolab.mail.claimed.model import Claim
from iolab.mail.claimed.naming import side_of

_REACH = 30  # lines above a row that may be its table's caption

_BUCKET = re.compile(r"^\s*[\[(]\s*-?\d+(?:\.\d+)?\s*[KMGkmg]?\s*,\s*-?\d+(?:\.\d+)?\s*[KMGkmg]?\s*[)\]]")


def bucket(claim: Claim) -> bool:
    """A row whose label is a histogram's bucket, a half-open interval (``[10, 100)``, ``[1K, 2K)``):
    the samples counted in it, on each side, are a distribution's shape, not a before and an after."""
    return _BUCKET.match(claim.label) is not None


_RANGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[KMGkmg]?\s*(?:-|–|~|to)\s*(\d+(?:\.\d+)?)\s*[KMGkmg]?\s*"
                    r"(?:[a-zA-Zµ]{1,5}(?:/s)?)?\s*:?\s*$")


def ranges(found: list[Claim]) -> set[int]:
    """The rows whose label is a range (``0-01 us``, ``05-10 us``, ``1K-2K``) that another row's range
    goes on from or leads to (``01-05``, ``05-10``): a histogram's buckets, each side's count of samples in
    it, as ``bucket`` refuses ``[1, 5)``."""
    spans = {n: (float(m.group(1)), float(m.group(2))) for n, c in enumerate(found) if (m := _RANGE.match(c.label))}
    ends = {hi for lo, hi in spans.values() if lo < hi}
    starts = {lo for lo, hi in spans.values() if lo < hi}
    return {n for n, (lo, hi) in spans.items() if lo < hi and (lo in ends or hi in starts)}


_ARROW = re.compile(r"\s(?:-+>|→|=+>)\s")
_SET = re.compile(r"[A-Za-z_][\w.-]*\s*=\s*(-?\d+(?:\.\d+)?)\b")


def set_then_result(claim: Claim) -> bool:
    """A pair in prose across one arrow whose before is a setting's value (``poll_ns=0 / max_ns=200000
    --> 52.1  (93.2%)``, ``iodepth=32 -> 41.2 us``) and whose after is no setting: the settings a run used,
    then what it gave, not a before and an after of one measure."""
    if claim.form != "prose" or len(_ARROW.findall(claim.source)) != 1:
        return False
    left, right = _ARROW.split(claim.source)
    settings = [float(m.group(1)) for m in _SET.finditer(left)]
    return any(abs(v - claim.before) <= 1e-9 * max(1.0, abs(v)) for v in settings) and \
        not any(abs(float(m.group(1)) - claim.after) <= 1e-9 * max(1.0, abs(claim.after)) for m in _SET.finditer(right))


_CHANGE = re.compile(r"\b(?:this|the|my|our)\s+(?:patch|patches|commit|series|patchset|change|fix)\b|"
                     r"\b(?:patched|fixed|fix)\b|\+\s*(?:patch|fix|series)", re.I)


def bypassed(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row read across a header of three figure columns or more, one of which names the change itself
    (``original  after  this commit``; ``good  bad  fixed``), paired between two other columns: those are
    kernels before the change (the one before a regression and the regressed one), not its two sides."""
    found = across(claim, lines, index)
    if found is None or not found[1]:
        return False
    _, names, at, to = found
    figures = [n for n in names if n]
    if len(figures) < 3 or _CHANGE.search(names[to]) or _CHANGE.search(names[at]):
        return False
    return any(_CHANGE.search(name) for k, name in enumerate(names) if name and k not in (at, to))


_REGRESSED = re.compile(r"\bregress(?:ion|ions|ed|es)?\b", re.I)
_OURS = re.compile(r"\b(?:this|the|my|our)\s+(?:patch|patches|series|patchset|fix|change|revert)\b|\bpatched\b|"
                   r"\bwith\s+(?:the\s+)?fix\b|\bfixe[sd]\b|\bafter\b|\bwith\b.{0,20}\bpatch", re.I)


def regression_table(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row of one table line whose caption, the sentence right above the table, tells a regression
    (``This results in reaim regression ... of upto 8%:``) and speaks neither of the patch nor of a fix:
    the numbers are the bug's, measured before the patch existed."""
    if claim.form not in ("columns", "pipes") or " / " in claim.source or claim.source not in index:
        return False
    k = index[claim.source][0]
    caption = _caption(lines, k)
    told = [m for m in _REGRESSED.finditer(caption) if not _DENIED.search(caption[max(0, m.start() - 24):m.start()])]
    return bool(told) and _OURS.search(caption) is None


_DENIED = re.compile(r"\b(?:no|not|without|never|any|nor)\b(?:\s+\w+){0,2}\s*$", re.I)  # "there were no regressions"


def _caption(lines: list[str], k: int) -> str:
    """The sentence above the table whose row is line k: the last of the prose above its header and rows."""
    j, top = k - 1, max(0, k - _REACH)
    while j >= top and lines[j].strip() and not _prose(lines[j]):
        j -= 1  # the table's rows, rules and header
    if j >= top and not lines[j].strip():
        j -= 1  # a blank line between the caption and its table
    paragraph: list[str] = []
    while j >= top and lines[j].strip():
        paragraph.insert(0, lines[j].strip())
        j -= 1
    text = " ".join(paragraph) if any(_prose(line) for line in paragraph) else ""
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)[-1]  # its last sentence, the one the table goes on


def _prose(line: str) -> bool:
    words = line.split()
    return len(words) >= 6 and sum(w.isalpha() for w in words) * 2 > len(words)


def runs_paired(claim: Claim, index: dict[str, list[int]], lines: list[str]) -> bool:
    """A row of two lines, a side's each, whose before line is in a block of named figures that the
    block right above or below it repeats name for name, blank lines between (``real 0m 16.62s`` /
    ``user ...`` / ``sys ...``, a blank, ``real 0m 15.38s`` / ``user`` / ``sys``): the side's runs, no
    rows of their own; a run paired with a run by their order is no claim (their mean is)."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    if "(mean of" in claim.label or len(parts) != 2 or parts[0] not in index or parts[1] not in index:
        return False  # the sides' reader took the runs' mean
    start, end = index[parts[0]][0], index[parts[1]][0]
    if end <= start:
        return False
    lo, hi = _block(lines, start)
    keys = _keys(lines, lo, hi)
    if not keys:
        return False
    below = next((j for j in range(hi, end) if lines[j].strip()), None)
    above = None if _headed(lines, lo) else next((j for j in range(lo - 1, -1, -1) if lines[j].strip()), None)
    for j in (below, above):
        if j is not None and not _headed(lines, _block(lines, j)[0]) and not _block(lines, j)[0] <= end < \
                _block(lines, j)[1] and _keys(lines, *_block(lines, j)) == keys:
            return True  # a run of the same names under no heading of its own: the same side's next run
    return False


def _headed(lines: list[str], lo: int) -> bool:
    return not re.search(r"\d", lines[lo])


def _block(lines: list[str], k: int) -> tuple[int, int]:
    """The lines of line k's paragraph: from the blank line above it to the blank line below."""
    lo, hi = k, k + 1
    while lo > 0 and lines[lo - 1].strip():
        lo -= 1
    while hi < len(lines) and lines[hi].strip():
        hi += 1
    return lo, hi


def _keys(lines: list[str], lo: int, hi: int) -> list[str]:
    """The names of a block whose every line is a name and its figures (``real  0m 1.36s``), under a
    heading of its own or none; else none."""
    if lo < hi and _headed(lines, lo):
        lo += 1  # the side's heading ("before modification:")
    found = [_KEY.match(line.strip()) for line in lines[lo:hi]]
    return [m.group(1) for m in found if m] if all(found) and len(found) >= 2 else []


_KEY = re.compile(r"([A-Za-z][^\t:]*?)(?:\t|\s{2,}|:\s)\D{0,12}\d")  # a line's name, then its figures


_COMMIT_SIDE = re.compile(r"\b(?:before|after|with|without|w/o|prior\s+to)\s+(?:the\s+)?(?:commit\s+)?[0-9a-f]{8,40}\b",
                          re.I)


def commit_side(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row of the sides' figures where a side is named as a kernel before or after an earlier commit,
    by its hash (``1) before commit f95bdb700bc6b:`` / ``2) after commit f95bdb700bc6b:``): the kernel
    that commit changed, the regression's story; a patch does not name itself by a hash."""
    if claim.form != "sides":
        return False
    if _COMMIT_SIDE.search(claim.label):
        return True  # the after side's name, which the sides' reader keeps in the label
    first = claim.source.split(" / ")[0].strip()
    for j in range(index[first][0] - 1, max(-1, index[first][0] - _REACH), -1) if first in index else ():
        text = lines[j].strip()
        if text and not re.search(r"\d", re.sub(r"[0-9a-f]{8,40}|^\W*\d+\W", "", text)):
            return _COMMIT_SIDE.search(text) is not None  # the before side's heading
    return False


_LINK = r"~?\d[\d.,]*\s*[A-Za-z/%]*\s*(?:->|→|=>)\s*"
_CHAIN = re.compile(rf"(?:{_LINK}){{2,}}~?\d[\d.,]*")


def chained(claim: Claim) -> bool:
    """A pair in prose taken from figures chained by arrows (``31 MIOPS -> 29 -> 30 -> 29 -> 31 -> 32``): a
    series over steps or time, whose change is its first against its last, not each step against the next."""
    if claim.form != "prose":
        return False
    for chain in _CHAIN.finditer(claim.source):
        figures = [float(f.replace(",", "")) for f in re.findall(r"\d[\d.,]*\d|\d", chain.group())]
        for scale in (1.0, 1e3, 1e6, 1e9):  # "31 MIOPS" read as 31000000
            pair = (abs(claim.before) / scale, abs(claim.after) / scale)
            if all(any(abs(v - f) <= 1e-9 * max(1.0, f) for f in figures) for v in pair):
                return not (abs(pair[0] - figures[0]) <= 1e-9 * max(1.0, figures[0]) and
                            abs(pair[1] - figures[-1]) <= 1e-9 * max(1.0, figures[-1]))
    return False


_ONE_KERNEL = re.compile(r"\b(?:configurations?|modes?|setups?|settings?|variants?)\s+(?:all\s+)?(?:using|on|with|of)\s+"
                         r"(?:the\s+|one\s+|a\s+)?(?:same\s+|patched\s+|[\w-]+\s+)?kernel\b|"
                         r"\ball\s+(?:runs|tests|results)\s+(?:use|used|on|with)\s+the\s+(?:same|patched)\s+kernel\b", re.I)


def one_kernel(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row read across a table's columns under text that says every run used one kernel, in several
    configurations (``I ran with 3 configurations using the squota kernel:``, ``all runs used the patched
    kernel``): the columns (fsperf's ``baseline  current``) are modes of that kernel, no before and after."""
    if across(claim, lines, index) is None or claim.source not in index:
        return False
    k = index[claim.source][0]
    return any(_ONE_KERNEL.search(" ".join(lines[j:j + 2])) for j in range(max(0, k - 3 * _REACH), k))


_PART = re.compile(r"^(?:user|sys|system)(?:\s+time)?$", re.I)
_SPOKEN = re.compile(r"\b(?:user|sys|system)\s+(?:time|cpu)\b|\b(?:user|system)\s+space\b", re.I)


def time_parts(found: list[Claim], lines: list[str], index: dict[str, list[int]]) -> set[int]:
    """The rows of time(1)'s user and sys read from a table of its lines, a row each, right under its
    real row (``real  0m12.3s  0m10.1s`` over ``user ...`` and ``sys ...``), where no sentence speaks of
    user or system time: the real time is the claim, user and sys its breakdown."""
    if any(_SPOKEN.search(line) for line in lines if _prose(line)):
        return set()
    where = {n: index[c.source][0] for n, c in enumerate(found) if c.source in index}
    reals = {where[n] for n, c in enumerate(found) if n in where and c.label.strip().lower() in ("real", "real time")}
    return {n for n, c in enumerate(found) if n in where and _PART.match(c.label.strip()) and
            any(0 < where[n] - r <= 3 for r in reals)}


_THIS = re.compile(r"\b(?:this|these|the|my|our)\s+(?:patch|patches|series|patchset|changes?)\b", re.I)


def alternative(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> bool:
    """A row of the sides' figures whose after is one of several variants of one base, each under a heading
    opening alike (``Base + write_cache_pages():``, ``Base + Partial revert (these patches):``), where another
    variant's heading names it as the patches and this one's does not: an alternative the mail tried."""
    parts = [part.strip() for part in claim.source.split(" / ")]
    if claim.form != "sides" or len(parts) != 2 or parts[1] not in index:
        return False
    after = _heading(lines, index[parts[1]][-1])
    if after is None or _THIS.search(after) or "+" not in after:
        return False  # variants of a base are written as the base plus each ("Base + X")
    stem = re.match(r"\W*(\w+)", after)
    return stem is not None and any(
        _THIS.search(text) and "+" in text and text.startswith(stem.group(0).strip()) and text != after
        for text in (line.strip() for line in lines) if text and len(text.split()) <= 12 and not re.search(r"\d", text))


_AFTER_NAME = re.compile(r"\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*$")


def others(found: list[Claim]) -> set[int]:
    """Rows of the sides' figures sharing one before line, each after named in its label (``MB/s
    (Joel's fix [1])``, ``MB/s (This patch plus Joel's [1])``), where one after's name says it is the
    patch and these do not: other changes measured against the same baseline, no claim of this one."""
    named: dict[str, list[tuple[int, str]]] = {}
    for n, c in enumerate(found):
        m = _AFTER_NAME.search(c.label)
        if c.form == "sides" and m and " / " in c.source and "mean of" not in m.group(1):
            named.setdefault(c.source.split(" / ")[0].strip(), []).append((n, m.group(1)))
    out: set[int] = set()
    for rows in named.values():
        if len({name for _, name in rows}) >= 2 and any(_THIS.search(name) for _, name in rows):
            out |= {n for n, name in rows if not _THIS.search(name)}
    return out


def _heading(lines: list[str], k: int) -> str | None:
    """The nearest line above line k that holds no figure: the heading of the block line k is in."""
    for j in range(k - 1, max(-1, k - _REACH), -1):
        text = lines[j].strip()
        if text and not re.search(r"\d", text):
            return text
    return None


def turned(claim: Claim, lines: list[str], index: dict[str, list[int]]) -> Claim:
    """A row read across a header whose column of its before names the after side and whose column of
    its after the before side (``QD  Patchset IOPS  Mainline IOPS``): the same row, its sides turned."""
    found = across(claim, lines, index)
    if found is None or not found[1]:
        return claim
    _, names, at, to = found
    if side_of(names[at]) == "after" and side_of(names[to]) == "before":
        return replace(claim, before=claim.after, after=claim.before)
    return claim


def kept(found: list[Claim], lines: list[str]) -> list[Claim]:
    """The rows that come from none of the layouts above, in their order, each with its sides as its
    header names them."""
    index: dict[str, list[int]] = {}
    for k, line in enumerate(lines):
        index.setdefault(line.strip(), []).append(k)
    parts = time_parts(found, lines, index) | ranges(found) | others(found)
    return [turned(c, lines, index) for n, c in enumerate(found) if n not in parts and not (
        bucket(c) or bypassed(c, lines, index) or regression_table(c, lines, index) or runs_paired(c, index, lines) or
        commit_side(c, lines, index) or chained(c) or set_then_result(c) or one_kernel(c, lines, index) or
        alternative(c, lines, index))]
