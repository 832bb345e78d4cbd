"""A diff a web archive mangled, repaired against the kernel source.

A web archive's copy of a patch mail loses what GNU patch needs: context
lines lose their leading space, blank context lines vanish, runs of tabs
and spaces collapse to one space; a copy may even lose every line break
(headers, body and diff on one line). The words survive. So each hunk is
placed in the source file by its words: its context and removed lines
(the old side) must be a run of the file's lines, word for word, with the
file's blank lines free (the vanished blank context) and the hunk's header
counts fixing the run's length; or, for a patch already in the source, its
context and added lines (the new side). The repaired hunk takes the
source's exact lines; the lines the source cannot give (added lines of a
patch not yet in it, removed lines of one that is) keep the mail's words,
indented as their neighbours suggest. For a copy on one line, the line
breaks are where the source file's lines end; its added lines start at a
'+' token, and the header counts say how many there are.

A hunk placed in no spot, or in more than one, is refused (RepairError
naming the file, the hunk and its first line): a guess would build a kernel
the mail never described. Debian's ``wiggle`` applies a rejected patch by
words too, but it needs a well-formed diff, does not read a copy without
line breaks, and applies a hunk at its best match where this must refuse
an ambiguous one; so the matching is here, a small dynamic programme.
"""

from __future__ import annotations

import difflib
import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from iolab.kernels.diff import count, hunk_header, read_lines, strip
from iolab.mail.message import MailError, Patch

Kind = Literal["context", "removed", "added"]
Side = Literal["old", "new"]  # which side of the hunks the source holds: not applied yet, or applied


class RepairError(MailError):
    """A hunk that cannot be placed in exactly one spot of the source."""


@dataclass(frozen=True)
class Line:
    kind: Kind
    text: str
    exact: bool  # taken from the source (else the mail's words, indentation inferred)
    restored: bool = False  # a blank context line the copy had lost
    mail: str | None = None  # an added line the source has in another form: the mail's words for it


@dataclass
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    function: str  # the text after the second @@ (a copy on one line: found by the alignment)
    tokens: list[str]  # the hunk's words, in order
    starts: list[bool] | None  # per token: it begins a line of the mail (None: line breaks lost)
    header: str  # the @@ line as found, for messages
    first: str  # its first line as found, for messages
    raw: list[str] = field(default_factory=list)  # its lines as found (a diff with line breaks)

    @property
    def lines_mode(self) -> bool:
        return self.starts is not None


@dataclass
class FileDiff:
    old: str | None  # -p1 path, None for /dev/null
    new: str | None
    head: list[str]  # diff --git, index, mode lines as found
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new or self.old or "?"


# -- reading the diff ------------------------------------------------------------------

_HUNK_ANY = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse(diff: str, one_line: bool) -> list[FileDiff]:
    """The files and hunks of a diff: by lines, or by words for a copy on one line."""
    return _parse_words(diff) if one_line else _parse_lines(diff)


def _parse_lines(diff: str) -> list[FileDiff]:
    """The diff read by its lines (the diff model's lenient reading), each hunk as its words."""
    files: list[FileDiff] = []
    for read in read_lines(diff).files:
        if read.binary:
            raise MailError(f"{read.path if read.path != '?' else 'the diff'}: a binary diff cannot be repaired")
        file = FileDiff(read.old, read.new, list(read.head))
        for hunk in read.hunks:
            tokens: list[str] = []
            starts: list[bool] = []
            for line in hunk.lines:
                words = line.split() or [""]  # an empty line: a blank context line's one empty word
                tokens += words
                starts += [True] + [False] * (len(words) - 1)
            first = next((line.strip() for line in hunk.lines if line.strip()), "")
            file.hunks.append(Hunk(hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count, hunk.section,
                                   tokens, starts, hunk.header, first, list(hunk.lines)))
        files.append(file)
    return files


def _parse_words(diff: str) -> list[FileDiff]:
    files: list[FileDiff] = []
    sections = [m for m in re.finditer(r"diff --git a/(\S+) b/(\S+)", diff)]
    for n, section in enumerate(sections):
        end = sections[n + 1].start() if n + 1 < len(sections) else len(diff)
        body = diff[section.end():end]
        file = FileDiff(section.group(1), section.group(2), [section.group(0)])
        head = re.match(r"\s*((?:(?:new|deleted) file mode \d+\s+)?(?:index [0-9a-f]+\.\.[0-9a-f]+(?: \d+)?\s+)?)"
                        r"(?:---\s+(\S+)\s+\+\+\+\s+(\S+))?", body)
        assert head is not None
        file.head += [" ".join(x.split()) for x in re.split(r"\s+(?=index |new file|deleted file)",
                                                              head.group(1).strip()) if x]
        if head.group(2):
            file.old, file.new = strip(head.group(2)), strip(head.group(3))
            file.head += [f"--- {head.group(2)}", f"+++ {head.group(3)}"]
        hunks = list(_HUNK_ANY.finditer(body))
        for k, match in enumerate(hunks):
            stop = hunks[k + 1].start() if k + 1 < len(hunks) else len(body)
            tokens = body[match.end():stop].split()
            file.hunks.append(Hunk(int(match.group(1)), count(match.group(2)), int(match.group(3)),
                                   count(match.group(4)), "", tokens, None, match.group(0),
                                   " ".join(tokens[:8])))
        files.append(file)
    return files


def well_formed(diff: str) -> bool:
    """Whether GNU patch can read this diff as it is: it has a hunk, and
    every hunk's lines start with ' ', '+', '-' or '\\' (an empty line: a
    blank context line) and add up to its header's counts."""
    old = new = 0
    hunks = 0
    for line in diff.split("\n"):
        header = hunk_header(line)
        if old == 0 and new == 0:  # between hunks: headers, or text GNU patch skips
            if header:
                old, new, hunks = count(header.group(2)), count(header.group(4)), hunks + 1
            continue
        if line.startswith("\\ "):
            continue
        if line[:1] == "+":
            new -= 1
        elif line[:1] == "-":
            old -= 1
        elif line[:1] == " " or line == "":
            old, new = old - 1, new - 1
        else:
            return False
        if old < 0 or new < 0:
            return False
    return hunks > 0 and old == 0 and new == 0


def needs_repair(patch: Patch) -> bool:
    return patch.form in ("web", "one-line") or not well_formed(patch.diff)


# -- placing a hunk --------------------------------------------------------------------

_FUNCNAME = re.compile(r"^[A-Za-z_$]")
OTHER_FORM = 4  # an added line the source says in other words (see _similar): dearer than any misreading
OTHER_FORM_RATIO = 0.6
MISREAD = 1  # the cost of reading a line against its marker (a '+' line as context, a glued marker
# in a copy on one line, a stray empty line): the cheapest reading wins


@dataclass(frozen=True)
class _Placed:
    start: int  # 0-based index of the window's first line in the file
    lines: tuple[Line, ...]
    function: str
    cost: int


def _similar(mail: str, source: str) -> bool:
    """An added line and a source line that say the same in other words
    (``if (!f2fs_iostat_enabled(sbi))`` and ``if (!sbi->iostat_enable)``):
    their characters, spaces aside, mostly the same, and the same first word."""
    a, b = "".join(mail.split()), "".join(source.split())
    return bool(a and b) and _FIRST_WORD.findall(a)[:1] == _FIRST_WORD.findall(b)[:1] \
        and difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= OTHER_FORM_RATIO


_FIRST_WORD = re.compile(r"\w+")


def _align(hunk: Hunk, source: list[str], words: list[list[str]], start: int, side: Side,
           function_words: int, other_form: bool = False) -> _Placed | None:
    """The cheapest reading of the hunk's words as the window of ``source``
    from ``start`` (the side's count of lines), or None. Costs: a '+' or
    '-' read as a line's own first character, a word glued to its marker
    in a copy on one line, an empty line of the mail left out. With
    ``other_form`` (the new side, a copy with its line breaks): an added line
    may be a source line that says the same in other words (_similar), at
    a cost of OTHER_FORM each: the source has the change in another form."""
    size = hunk.old_count if side == "old" else hunk.new_count
    free_marker = "+" if side == "old" else "-"
    bound_marker = "-" if side == "old" else "+"
    want = (hunk.new_count - hunk.old_count) * (1 if side == "old" else -1)  # free lines - bound-marked lines
    tokens, starts = hunk.tokens, hunk.starts
    n = len(tokens)
    window = words[start:start + size]

    def line_end(t: int) -> int:
        """The end of the mail line at t (lines mode)."""
        assert starts is not None
        u = t + 1
        while u < n and not starts[u]:
            u += 1
        return u

    firsts = {w[0] for w in window if w}
    Back = tuple[int, int, int, Kind | None, str, bool, bool, str | None]
    # states (t, j, d): t words read, j window lines placed, d = free lines - bound-marked lines;
    # every step moves (t, j) on, so the heap's order finishes a state before its successors
    best: dict[tuple[int, int, int], tuple[int, Back | None]] = {(function_words, 0, 0): (0, None)}
    heap = [(function_words, 0, 0)]
    while heap:
        t, j, d = heapq.heappop(heap)
        cost, _ = best[(t, j, d)]

        def go(t2: int, j2: int, d2: int, extra: int, kind: Kind | None, text: str, exact: bool,
               restored: bool = False, mail: str | None = None) -> None:
            key = (t2, j2, d2)
            if key not in best or best[key][0] > cost + extra:
                if key not in best:
                    heapq.heappush(heap, key)
                best[key] = (cost + extra, (t, j, d, kind, text, exact, restored, mail))

        at_start = starts is None or (t < n and starts[t])
        if j < size:
            target = window[j]
            k = len(target)
            if not target:  # a blank source line: a vanished blank context line, or the mail's empty line
                go(t, j + 1, d, 0, "context", "", True, True)
                if t < n and tokens[t] == "" and at_start:
                    go(t + 1, j + 1, d, 0, "context", "", True)
                if t < n and tokens[t] == bound_marker and at_start and (starts is None or line_end(t) == t + 1):
                    go(t + 1, j + 1, d - 1, 0, "removed" if side == "old" else "added", "", True)
            else:
                ends_ok = (lambda u: starts is None or u == n or starts[u])
                if at_start and tokens[t:t + k] == target and ends_ok(t + k):
                    misread = MISREAD if tokens[t][:1] in ("+", "-") else 0
                    go(t + k, j + 1, d, misread, "context", source[start + j], True)
                if at_start and t < n and tokens[t] == bound_marker and tokens[t + 1:t + 1 + k] == target \
                        and ends_ok(t + 1 + k) and (starts is None or line_end(t) == t + 1 + k):  # one line
                    go(t + 1 + k, j + 1, d - 1, 0, "removed" if side == "old" else "added", source[start + j], True)
                if at_start and t < n and len(tokens[t]) > 1 and tokens[t][0] == bound_marker \
                        and [tokens[t][1:]] + tokens[t + 1:t + k] == target and ends_ok(t + k):
                    go(t + k, j + 1, d - 1, 0 if starts is not None else MISREAD,
                       "removed" if side == "old" else "added", source[start + j], True)
                if other_form and side == "new" and starts is not None and at_start and t < n \
                        and tokens[t][:1] == "+":
                    u = line_end(t)
                    said = " ".join(([tokens[t][1:]] if len(tokens[t]) > 1 else []) + tokens[t + 1:u])
                    if said.split() != target and _similar(said, source[start + j]):
                        go(u, j + 1, d - 1, OTHER_FORM, "added", source[start + j], True, mail=said)
        if t < n and at_start and tokens[t][:1] == free_marker:
            glued = tokens[t][1:]
            if starts is not None:
                ends = [line_end(t)]
            else:
                ends = [u for u in range(t + 1, n + 1)
                        if u == n or tokens[u][:1] in ("+", "-") or tokens[u] in firsts]
            kind: Kind = "added" if side == "old" else "removed"
            for u in ends:
                text = " ".join(([glued] if glued else []) + tokens[t + 1:u])
                if starts is not None:
                    go(u, j, d + 1, 0, kind, text, False)
                else:  # where a copy on one line broke its lines is read from how C lines end
                    go(u, j, d + 1, (MISREAD if glued else 0) + (0 if _ends_a_line(text) else MISREAD),
                       kind, text, False)
        if t < n and tokens[t] == "" and starts is not None:
            go(t + 1, j, d, MISREAD, None, "", False)  # an empty line of the mail that is no line of the hunk
    end = (n, size, want)
    if end not in best:
        return None
    lines: list[Line] = []
    key = end
    while True:
        cost, back = best[key]
        if back is None:
            break
        t, j, d, step, text, exact, restored, mail = back
        if step is not None:
            lines.append(Line(step, text, exact, restored, mail))
        key = (t, j, d)
    lines.reverse()
    return _Placed(start, tuple(_blanks_placed(lines, side)), " ".join(tokens[:function_words]), best[end][0])


_LINE_ENDS = (";", "{", "}", ")", "(", ",", ":", "]", "\\", "*/", "&&", "||", "=")


def _ends_a_line(text: str) -> bool:
    """Whether a C line could end here ("return x" could not: "return x + 1;" goes on)."""
    return not text or text.endswith(_LINE_ENDS) or text.startswith(("/*", "*", "//", "#"))


def _blanks_placed(lines: list[Line], side: Side) -> list[Line]:
    """The mail's own lines and the blank lines restored beside them, in the
    order a diff has them: a change's removed lines before its added ones,
    so the mail's lines go next to the change's lines the source gave (after
    a removed one, before an added one); a change of the mail's lines alone
    goes after the blank lines when it starts a paragraph (_continues).
    Only a blank line's place is guessed here, and only for lines the source
    does not have."""
    out: list[Line] = []
    k = 0
    while k < len(lines):
        if not (lines[k].restored or not lines[k].exact):
            out.append(lines[k])
            k += 1
            continue
        end = k
        while end < len(lines) and (lines[end].restored or not lines[end].exact):
            end += 1
        run = lines[k:end]
        own = [line for line in run if not line.restored]
        blank = [line for line in run if line.restored]
        bound_after = end < len(lines) and lines[end].kind != "context"
        bound_before = bool(out) and out[-1].kind != "context"
        if bound_before or not own or not blank:
            out += own + blank
        elif bound_after or not _continues(out[-1].text if out else "", own[0].text):
            out += blank + own
        else:
            out += own + blank
        k = end
    return out


def _continues(above: str, first: str) -> bool:
    """Whether the mail's own lines continue the paragraph above them (a
    declaration or statement after one), rather than start one of their own
    after a blank line (after a closing brace, or as a comment or a block)."""
    above, first = above.strip(), first.strip()
    return above.endswith((";", ",")) and not first.startswith(("/*", "//", "#")) \
        and not _CONTROL.match(first) and not first.endswith("{")


def _function_words(hunk: Hunk, source: list[str], start: int) -> list[int]:
    """How many of a one-line copy's first words are its @@ line's function
    text: git's (the nearest line above the hunk that starts with a letter,
    '_' or '$'), cut anywhere; 0 always too."""
    if hunk.lines_mode:
        return [0]
    above = next((source[i] for i in range(start - 1, -1, -1) if _FUNCNAME.match(source[i])), None)
    counts = [0]
    if above is not None:
        joined = " ".join(above.split())
        for k in range(1, min(len(hunk.tokens), 40) + 1):
            if joined.startswith(" ".join(hunk.tokens[:k])):
                counts.append(k)
            else:
                break
    return counts


def place(hunk: Hunk, source: list[str], side: Side, after: int, other_form: bool = False) -> list[_Placed]:
    """Every cheapest placement of the hunk in the file at or after line
    index ``after`` (``other_form``: the source may say its added lines in
    other words, _align)."""
    size = hunk.old_count if side == "old" else hunk.new_count
    words = [line.split() for line in source]
    # a prefilter: each non-blank line of a window is a run of the hunk's words (a marker
    # glued to a line's first word, "+static", taken off)
    joined = " " + " ".join(hunk.tokens) + " "
    unglued = " " + " ".join(t[1:] if len(t) > 1 and t[0] in ("+", "-") else t for t in hunk.tokens) + " "
    fits = [not w or f" {' '.join(w)} " in joined or f" {' '.join(w)} " in unglued for w in words]
    bad = [0]
    for ok in fits:
        bad.append(bad[-1] + (0 if ok else 1))
    others = sum(1 for k, t in enumerate(hunk.tokens) if t[:1] == "+" and hunk.starts and hunk.starts[k]) \
        if other_form else 0  # lines the source may say in other words
    found: list[_Placed] = []
    for start in range(after, len(source) - size + 1):
        if bad[start + size] - bad[start] > others:
            continue
        if size and all(not w for w in words[start:start + size]):
            continue
        for function_words in _function_words(hunk, source, start):
            placed = _align(hunk, source, words, start, side, function_words, other_form)
            if placed is not None:
                found.append(placed)
                break
    if size == 0 and not source:  # a new file (or one a patch empties)
        placed = _align(hunk, source, words, 0, side, 0)
        found = [placed] if placed is not None else []
    if not found:
        return []
    cheapest = min(p.cost for p in found)
    return [p for p in found if p.cost == cheapest]


# -- indentation of the mail's own lines -----------------------------------------------


def _indent(text: str) -> str:
    return text[:len(text) - len(text.lstrip())]


def _statement_indent(out: list[Line], own: Kind) -> str | None:
    """The indentation of the line after the statement the last line of
    ``out`` (on this side) ends: the statement's first line's, one level out
    after the single statement of an if/for/while/else without braces, one
    level in after a line ending '{', two in after an unfinished line."""
    side = [x.text for x in out if x.kind in ("context", own) and x.text.strip()]
    if not side:
        return None
    last = side[-1].strip()
    balance = 0
    first = len(side) - 1
    for k in range(len(side) - 1, max(-1, len(side) - 12), -1):  # back to the statement's first line
        balance += side[k].count(")") - side[k].count("(")
        first = k
        above = side[k - 1].strip() if k > 0 else ";"
        if balance <= 0 and (above.endswith((";", "{", "}", ":", "*/")) or above.startswith("#")):
            break
    indent = _indent(side[first])
    if last.endswith("{"):
        return indent + "\t"
    if balance < 0 or last.endswith(("&&", "||", ",", "=", "?", "+", "-", "|", "&")):
        return indent + "\t\t"
    if _CONTROL.match(side[first].strip()) and not last.endswith((";", "}")):
        return indent + "\t"  # the one statement of an if/for/while without braces follows
    if first > 0 and last.endswith(";"):
        opener = side[first - 1].strip()
        if _CONTROL.match(opener) and not opener.endswith((";", "{", "}")):
            return _indent(side[first - 1])
    return indent


_CONTROL = re.compile(r"^(\}\s*)?(if|for|while|else|switch)\b")


def _indented(lines: list[Line], side: Side) -> list[Line]:
    """The mail's own lines indented as the source's lines would be: as the
    line they replace (the k-th removed line of a run against the k-th
    added line), else as the statement above suggests (_statement_indent),
    one level out for a line starting '}'."""
    own: Kind = "added" if side == "old" else "removed"
    other: Kind = "removed" if side == "old" else "added"
    out: list[Line] = []
    for n, line in enumerate(lines):
        if line.exact or line.kind != own or not line.text:
            out.append(line)
            continue
        text = line.text.strip()
        partner = _partner(lines, n, own, other)
        if partner is not None:
            indent = _indent(partner)
        else:
            found = _statement_indent(out, own)
            following = next((x.text for x in lines[n + 1:] if x.kind in ("context", own) and x.text.strip()), "")
            indent = found if found is not None else _indent(following)
            if text.startswith("}") and indent.endswith("\t"):
                indent = indent[:-1]
        out.append(Line(line.kind, indent + text, False))
    return out


def _partner(lines: list[Line], n: int, own: Kind, other: Kind) -> str | None:
    """The exact line of the other kind at the same place in a run of
    removed lines next to a run of added ones (a line and its replacement)."""
    start = n
    while start > 0 and lines[start - 1].kind == own:
        start -= 1
    end = n
    while end < len(lines) and lines[end].kind == own:
        end += 1
    if end < len(lines) and lines[end].kind == other:
        run_end = end
        while run_end < len(lines) and lines[run_end].kind == other:
            run_end += 1
        run = lines[end:run_end]
    elif start > 0 and lines[start - 1].kind == other:
        run_start = start
        while run_start > 0 and lines[run_start - 1].kind == other:
            run_start -= 1
        run = lines[run_start:start]
    else:
        return None
    k = n - start
    if k < len(run) and run[k].exact and run[k].text.strip():
        return run[k].text
    return None


# -- the whole patch -------------------------------------------------------------------

Source = Callable[[str], "list[str] | None"]


@dataclass(frozen=True)
class Repaired:
    """A patch's diff as it applies to the source (exact lines from it)."""

    diff: str
    side: Side  # "old": the source has not the patch (it applies); "new": the source has it already
    changed: bool  # the repair changed the diff
    inferred: int  # lines whose indentation was inferred (the mail's words, not the source's)
    cause: str = "a web archive's copy of the mail"  # why it was repaired
    # the hunks the source already has in another form, as a diff from the base (the source
    # without them) to the source: the base takes it out, and ``diff`` then applies to the base
    in_source: str | None = None
    notes: tuple[str, ...] = ()  # each such hunk, and how the source says its lines


def _hunk_name(file: FileDiff, number: int, hunk: Hunk) -> str:
    first = hunk.first if len(hunk.first) <= 60 else hunk.first[:57] + "..."
    header = _HUNK_ANY.search(hunk.header)
    return f"{file.path}: hunk #{number} ({header.group(0) if header else hunk.header}), first line {first!r}"


def _place_file(file: FileDiff, lines: list[str] | None, side: Side) -> tuple[list[_Placed] | None, str]:
    """Each hunk's one placement in order, or None and why the first that fails does."""
    if lines is None:
        if (side == "old" and file.old is not None) or (side == "new" and file.new is not None):
            return None, f"{file.path}: not in this source"
        lines = []
    placed: list[_Placed] = []
    after = 0
    for number, hunk in enumerate(file.hunks, 1):
        found = place(hunk, lines, side, after)
        if len(found) != 1:
            where = "fits no spot" if not found else \
                f"fits {len(found)} spots (lines {', '.join(str(p.start + 1) for p in found[:4])})"
            return None, f"{_hunk_name(file, number, hunk)}: {where} in the source"
        placed.append(found[0])
        after = found[0].start + (hunk.old_count if side == "old" else hunk.new_count)
    return placed, ""


def _even(body: list[Line], start: int, window: int, length: int) -> tuple[list[Line], int]:
    """The hunk with as many context lines above its change as below (the
    longer side's outer lines left out), and its new start: GNU patch
    anchors a hunk with less context on one side at the file's start or
    end. One at the file's start or end, or without context on a side, stays."""
    lead = next((k for k, line in enumerate(body) if line.kind != "context"), len(body))
    trail = next((k for k, line in enumerate(reversed(body)) if line.kind != "context"), len(body))
    keep = min(lead, trail)
    if lead == trail or keep == 0 or lead == len(body):
        return body, start
    if lead > trail and start > 0:
        return body[lead - keep:], start + lead - keep
    if trail > lead and start + window < length:
        return body[:len(body) - (trail - keep)], start
    return body, start


def _render(file: FileDiff, placed: list[_Placed], side: Side, length: int) -> tuple[list[str], int]:
    out = list(file.head)
    if not any(line.startswith("--- ") for line in out):
        out += [f"--- {'a/' + file.old if file.old else '/dev/null'}",
                f"+++ {'b/' + file.new if file.new else '/dev/null'}"]
    shift = 0  # new - old lines of the hunks above
    inferred = 0
    for hunk, spot in zip(file.hunks, placed):
        body = _indented(list(spot.lines), side)
        inferred += sum(1 for line in body if not line.exact and line.text)
        window = hunk.old_count if side == "old" else hunk.new_count
        body, begin = _even(body, spot.start, window, length)
        old_count = sum(1 for line in body if line.kind != "added")
        new_count = sum(1 for line in body if line.kind != "removed")
        if side == "old":
            old_start = begin + 1 if old_count else begin
            new_start = old_start + shift if new_count else old_start + shift - 1
        else:
            new_start = begin + 1 if new_count else begin
            old_start = new_start - shift if old_count else new_start - shift - 1
        if file.old is None:
            old_start = 0
        if file.new is None:
            new_start = 0
        function = hunk.function if hunk.lines_mode else spot.function
        out.append(f"@@ -{old_start},{old_count} +{new_start},{new_count} @@" + (f" {function}" if function else ""))
        mark = {"context": " ", "removed": "-", "added": "+"}
        out += [mark[line.kind] + line.text for line in body]
        shift += new_count - old_count
    return out, inferred


def _apply(lines: list[str] | None, file: FileDiff, placed: list[_Placed]) -> list[str] | None:
    """The file after the patch (the old side's placements)."""
    if file.new is None:
        return None
    result = list(lines or [])
    for hunk, spot in reversed(list(zip(file.hunks, placed))):
        body = _indented(list(spot.lines), "old")
        result[spot.start:spot.start + hunk.old_count] = [line.text for line in body if line.kind != "removed"]
    return result


@dataclass
class Tree:
    """The source's files as the patches so far left them (read once each)."""

    read: Source
    files: dict[str, list[str] | None] = field(default_factory=dict)

    def get(self, path: str) -> list[str] | None:
        if path not in self.files:
            self.files[path] = self.read(path)
        return self.files[path]


def sourcestrip(file: FileDiff, side: Side) -> str:
    return file.old if side == "old" and file.old else file.path


def _other_form(patch: Patch, files: list[FileDiff], tree: Tree) -> Repaired | None:
    """The patch when the source has part of it in another form: hunks
    whose context is in the source with their added lines said in other
    words there (a version of the change that went in), each in exactly one
    spot, and every other hunk placed forward in the source with those taken
    out (the base). None when no hunk is so, or the rest does not fit."""
    if patch.form == "one-line":
        return None
    base: dict[str, list[str]] = {}
    taken: list[str] = []
    notes: list[str] = []
    for file in files:
        lines = tree.get(file.path)
        if lines is None or file.old is None or file.new is None or file.old != file.new:
            continue
        placed: list[tuple[Hunk, _Placed]] = []
        after = 0
        for number, hunk in enumerate(file.hunks, 1):
            found = place(hunk, lines, "new", after)  # in the source as the mail has it: taken out too
            if not found:
                if place(hunk, lines, "old", after):
                    continue  # not in the source: the step applies it
                found = place(hunk, lines, "new", after, other_form=True)
            if len(found) != 1:
                continue
            placed.append((hunk, found[0]))
            after = found[0].start + hunk.new_count
            said = [line for line in found[0].lines if line.mail is not None]
            if said:
                notes.append(f"{_hunk_name(file, number, hunk)}: in the source in another form: "
                             + "; ".join(f"'+{line.mail}' is '{line.text.strip()}' there" for line in said))
        if not placed:
            continue
        part = FileDiff(file.old, file.new, [], [hunk for hunk, _ in placed])
        rendered, _ = _render(part, [spot for _, spot in placed], "new", len(lines))
        taken += rendered
        result = list(lines)
        for hunk, spot in reversed(placed):
            body = _indented(list(spot.lines), "new")
            result[spot.start:spot.start + hunk.new_count] = [line.text for line in body if line.kind != "added"]
        base[file.path] = result
    if not notes:
        return None  # no hunk in other words: a patch partly in the source is refused as before
    on_base = Tree(lambda path: base[path] if path in base else tree.get(path))
    try:
        fixed = repair_one(patch, on_base, other_forms=False)
    except MailError:
        return None
    if fixed.side != "old":
        return None
    tree.files.update(on_base.files)
    return replace(fixed, changed=True, in_source="\n".join(taken) + "\n", notes=tuple(notes))


def repair_one(patch: Patch, tree: Tree, other_forms: bool = True) -> Repaired:
    """The patch's diff placed in the tree: forward (the source has not the
    patch: its old side is there) or, failing that, as a patch the source
    already carries (its new side is there), or with the part the source
    has in another form taken out (_other_form). The tree then holds the patch."""
    files = parse(patch.diff, patch.form == "one-line")
    if not files or not any(f.hunks for f in files):
        raise MailError(f"{patch.file}: no hunk in its diff (expected '@@ -N,N +N,N @@' lines)")
    reasons: dict[Side, str] = {}
    for side in ("old", "new"):
        placements: list[list[_Placed]] = []
        for file in files:
            placed, why = _place_file(file, tree.get(sourcestrip(file, side)), side)
            if placed is None:
                reasons[side] = why
                break
            placements.append(placed)
        else:
            text: list[str] = []
            inferred = 0
            for file, placed in zip(files, placements):
                rendered, count = _render(file, placed, side, len(tree.get(sourcestrip(file, side)) or []))
                text += rendered
                inferred += count
                if side == "old":
                    tree.files[file.path] = _apply(tree.get(file.old or file.path), file, placed)
            diff = "\n".join(text) + "\n"
            return Repaired(diff, side, diff != patch.diff, inferred)
    mixed = _other_form(patch, files, tree) if other_forms else None
    if mixed is not None:
        return mixed
    if reasons["old"] == reasons["new"]:
        raise RepairError(f"{patch.file}: {reasons['old']}\n  with its lines before the patch "
                          "or after it (a patch for another tree, or its change went in another form)")
    raise RepairError(f"{patch.file}: {reasons['old']}\n  and as a patch the source has: "
                      f"{reasons['new']}")


def _found(lines: list[str], want: list[str]) -> bool:
    if not want:
        return True
    return any(lines[k:k + len(want)] == want for k in range(len(lines) - len(want) + 1) if lines[k] == want[0])


def _as_given(files: list[FileDiff], tree: Tree) -> bool:
    """Whether GNU patch (no fuzz) takes a well-formed diff as given: every
    hunk's lines, byte for byte, in the source, on one side for all."""
    sides: tuple[tuple[Side, tuple[str, str]], ...] = (("old", (" ", "-")), ("new", (" ", "+")))
    for side, keep in sides:
        def found(file: FileDiff) -> bool:
            lines = tree.get(sourcestrip(file, side))
            if lines is None:  # a file the patch creates (or, taken out, deletes)
                return (file.old if side == "old" else file.new) is None
            return all(_found(lines, [line[1:] for line in hunk.raw if line[:1] in keep or line == ""])
                       for hunk in file.hunks)

        if all(found(file) for file in files):
            return True
    return False


def repair(patches: Sequence[Patch], read: Source) -> list[Repaired | None]:
    """Each patch's repaired diff, in series order; None for a well-formed
    diff GNU patch takes as given (its lines byte for byte in the source).
    A well-formed diff whose whitespace differs from the source's (a mail
    client turned tabs into spaces) is repaired too. Each patch is placed in
    the source as the ones before it left it."""
    tree = Tree(read)
    out: list[Repaired | None] = []
    for patch in patches:
        if needs_repair(patch):
            out.append(repair_one(patch, tree))
            continue
        exact = _as_given(parse(patch.diff, False), tree)
        try:  # also keeps the tree in step for the patches after it
            fixed: Repaired | None = repair_one(patch, tree)
        except MailError:
            fixed = None  # GNU patch judges it, and says why it does not apply
        if exact or fixed is None:
            out.append(None)
        else:
            out.append(replace(fixed, cause="whitespace that differs from the source's (as a mail client "
                                            "may turn tabs into spaces)"))
    return out


def files_named(patches: Sequence[Patch]) -> list[str]:
    """The source files the patches' diffs name (-p1), each once: what the repair reads."""
    names: list[str] = []
    for patch in patches:
        for file in parse(patch.diff, patch.form == "one-line"):
            names += [name for name in (file.old, file.new) if name is not None and name not in names]
    return names
