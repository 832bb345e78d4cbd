"""Where a hunk of a mail's diff goes in the source: placed by its words.

Each hunk (iolab.mail.copies: its words, each marked where a line of the
mail begins) is placed in the source file by its words: its context and
removed lines (the old side) must be a run of the file's lines, word for
word, with the file's blank lines free (the vanished blank context) and
the hunk's header counts fixing the run's length; or, for a patch already
in the source, its context and added lines (the new side). A placed line
takes the source's exact line; the lines the source cannot give (added
lines of a patch not yet in it, removed lines of one that is) keep the
mail's words, indented later (iolab.mail.indentation). For a copy on one
line, the line breaks are where the source file's lines end; its added
lines start at a '+' token, and the header counts say how many there are.

The reading is a small dynamic programme (_Alignment): every way of
reading the hunk's words against a window of the source, the cheapest
kept; a hunk that fits several spots at that cost is ambiguous, which the
repair refuses.
"""

from __future__ import annotations

import difflib
import heapq
import re
from dataclasses import dataclass

from iolab.mail.copies import CopiedHunk, Kind, Line, Side
from iolab.mail.indentation import CONTROL

_FUNCNAME = re.compile(r"^[A-Za-z_$]")
OTHER_FORM = 4  # an added line the source says in other words (see _similar): dearer than any misreading
OTHER_FORM_RATIO = 0.6
MISREAD = 1  # the cost of reading a line against its marker (a '+' line as context, a glued marker
# in a copy on one line, a stray empty line): the cheapest reading wins


@dataclass(frozen=True)
class Placement:
    """A hunk read as a window of the source file."""

    start: int  # 0-based index of the window's first line in the file
    lines: tuple[Line, ...]
    function: str  # a copy on one line: the words of its @@ line's function text
    cost: int


def _similar(mail: str, source: str) -> bool:
    """An added line and a source line that say the same in other words
    (``if (!f2fs_iostat_enabled(sbi))`` and ``if (!sbi->iostat_enable)``):
    their characters, spaces aside, mostly the same, and the same first word."""
    a, b = "".join(mail.split()), "".join(source.split())
    return bool(a and b) and _FIRST_WORD.findall(a)[:1] == _FIRST_WORD.findall(b)[:1] \
        and difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= OTHER_FORM_RATIO


_FIRST_WORD = re.compile(r"\w+")

State = tuple[int, int, int]  # (t, j, d): t words read, j window lines placed, d = free lines - bound-marked lines
Back = tuple[int, int, int, Kind | None, str, bool, bool, str | None]  # the state before, and the line read


class _Alignment:
    """The cheapest reading of a hunk's words as a window of the source.
    Costs: a '+' or '-' read as a line's own first character, a word glued
    to its marker in a copy on one line, an empty line of the mail left out.
    With ``other_form`` (the new side, a copy with its line breaks): an added
    line may be a source line that says the same in other words (_similar),
    at a cost of OTHER_FORM each: the source has the change in another form.
    Every step moves (t, j) on, so the heap's order finishes a state before
    its successors."""

    def __init__(self, hunk: CopiedHunk, source: list[str], words: list[list[str]], start: int, side: Side,
                 other_form: bool):
        self.size = hunk.old_count if side == "old" else hunk.new_count
        self.side = side
        self.free_marker = "+" if side == "old" else "-"
        self.bound_marker = "-" if side == "old" else "+"
        self.free_kind: Kind = "added" if side == "old" else "removed"
        self.bound_kind: Kind = "removed" if side == "old" else "added"
        self.want = (hunk.new_count - hunk.old_count) * (1 if side == "old" else -1)
        self.tokens = list(hunk.tokens)
        self.starts = list(hunk.starts) if hunk.starts is not None else None
        self.n = len(self.tokens)
        self.window = words[start:start + self.size]
        self.texts = source[start:start + self.size]
        self.firsts = {w[0] for w in self.window if w}
        self.other_form = other_form
        self.best: dict[State, tuple[int, Back | None]] = {}
        self.heap: list[State] = []
        self.state: State = (0, 0, 0)
        self.cost = 0

    def line_end(self, t: int) -> int:
        """The end of the mail line at t (lines mode)."""
        assert self.starts is not None
        u = t + 1
        while u < self.n and not self.starts[u]:
            u += 1
        return u

    def ends_ok(self, u: int) -> bool:
        return self.starts is None or u == self.n or self.starts[u]

    def go(self, t2: int, j2: int, d2: int, extra: int, kind: Kind | None, text: str, exact: bool,
           restored: bool = False, mail: str | None = None) -> None:
        key = (t2, j2, d2)
        if key not in self.best or self.best[key][0] > self.cost + extra:
            if key not in self.best:
                heapq.heappush(self.heap, key)
            self.best[key] = (self.cost + extra, (*self.state, kind, text, exact, restored, mail))

    def run(self, function_words: int) -> tuple[list[Line], int] | None:
        """The lines read and their cost, or None when no reading fits."""
        self.best = {(function_words, 0, 0): (0, None)}
        self.heap = [(function_words, 0, 0)]
        while self.heap:
            self.state = heapq.heappop(self.heap)
            self.cost = self.best[self.state][0]
            t, j, d = self.state
            at_start = self.starts is None or (t < self.n and self.starts[t])
            if j < self.size:
                self.window_line(t, j, d, at_start)
            self.own_line(t, j, d, at_start)
            if t < self.n and self.tokens[t] == "" and self.starts is not None:
                self.go(t + 1, j, d, MISREAD, None, "", False)  # an empty line of the mail that is no line of the hunk
        end = (self.n, self.size, self.want)
        if end not in self.best:
            return None
        return self.back(end), self.best[end][0]

    def window_line(self, t: int, j: int, d: int, at_start: bool) -> None:
        """The steps that read the window's line j: as context, or as a line the mail marks."""
        tokens, target, text = self.tokens, self.window[j], self.texts[j]
        k = len(target)
        if not target:  # a blank source line: a vanished blank context line, or the mail's empty line
            self.go(t, j + 1, d, 0, "context", "", True, True)
            if t < self.n and tokens[t] == "" and at_start:
                self.go(t + 1, j + 1, d, 0, "context", "", True)
            if t < self.n and tokens[t] == self.bound_marker and at_start \
                    and (self.starts is None or self.line_end(t) == t + 1):
                self.go(t + 1, j + 1, d - 1, 0, self.bound_kind, "", True)
            return
        if at_start and tokens[t:t + k] == target and self.ends_ok(t + k):
            misread = MISREAD if tokens[t][:1] in ("+", "-") else 0
            self.go(t + k, j + 1, d, misread, "context", text, True)
        if at_start and t < self.n and tokens[t] == self.bound_marker and tokens[t + 1:t + 1 + k] == target \
                and self.ends_ok(t + 1 + k) and (self.starts is None or self.line_end(t) == t + 1 + k):  # one line
            self.go(t + 1 + k, j + 1, d - 1, 0, self.bound_kind, text, True)
        if at_start and t < self.n and len(tokens[t]) > 1 and tokens[t][0] == self.bound_marker \
                and [tokens[t][1:]] + tokens[t + 1:t + k] == target and self.ends_ok(t + k):
            self.go(t + k, j + 1, d - 1, 0 if self.starts is not None else MISREAD, self.bound_kind, text, True)
        if self.other_form and self.side == "new" and self.starts is not None and at_start and t < self.n \
                and tokens[t][:1] == "+":
            u = self.line_end(t)
            said = " ".join(([tokens[t][1:]] if len(tokens[t]) > 1 else []) + tokens[t + 1:u])
            if said.split() != target and _similar(said, text):
                self.go(u, j + 1, d - 1, OTHER_FORM, "added", text, True, mail=said)

    def own_line(self, t: int, j: int, d: int, at_start: bool) -> None:
        """The steps that read a line the source does not have (the mail's words)."""
        tokens = self.tokens
        if not (t < self.n and at_start and tokens[t][:1] == self.free_marker):
            return
        glued = tokens[t][1:]
        if self.starts is not None:
            ends = [self.line_end(t)]
        else:
            ends = [u for u in range(t + 1, self.n + 1)
                    if u == self.n or tokens[u][:1] in ("+", "-") or tokens[u] in self.firsts]
        for u in ends:
            text = " ".join(([glued] if glued else []) + tokens[t + 1:u])
            if self.starts is not None:
                self.go(u, j, d + 1, 0, self.free_kind, text, False)
            else:  # where a copy on one line broke its lines is read from how C lines end
                self.go(u, j, d + 1, (MISREAD if glued else 0) + (0 if _ends_a_line(text) else MISREAD),
                        self.free_kind, text, False)

    def back(self, end: State) -> list[Line]:
        """The lines of the cheapest reading that ends in ``end``, in order."""
        lines: list[Line] = []
        key = end
        while True:
            _, back = self.best[key]
            if back is None:
                break
            t, j, d, step, text, exact, restored, mail = back
            if step is not None:
                lines.append(Line(step, text, exact, restored, mail))
            key = (t, j, d)
        lines.reverse()
        return lines


def _align(hunk: CopiedHunk, source: list[str], words: list[list[str]], start: int, side: Side,
           function_words: int, other_form: bool = False) -> Placement | None:
    """The cheapest reading of the hunk's words as the window of ``source``
    from ``start`` (the side's count of lines), or None (_Alignment)."""
    found = _Alignment(hunk, source, words, start, side, other_form).run(function_words)
    if found is None:
        return None
    lines, cost = found
    return Placement(start, tuple(_blanks_placed(lines, side)), " ".join(hunk.tokens[:function_words]), cost)


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
        and not CONTROL.match(first) and not first.endswith("{")


def _function_words(hunk: CopiedHunk, source: list[str], start: int) -> list[int]:
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


def place(hunk: CopiedHunk, source: list[str], side: Side, after: int, other_form: bool = False) -> list[Placement]:
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
    found: list[Placement] = []
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

