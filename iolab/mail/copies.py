"""A mail's diff as a copy of it left it: the diff model, each hunk as its words.

A web archive's copy of a patch mail loses what GNU patch needs: context
lines lose their leading space, blank context lines vanish, runs of tabs
and spaces collapse to one space; a copy may even lose every line break
(headers, body and diff on one line). The words survive. So each hunk of
the diff model (iolab.kernels.diff, read by its lines as GNU patch reads
them) is kept here as its words, each marked where a line of the mail
begins; a copy on one line is read by its words alone (``diff --git``
sections and ``@@`` headers inside the line). iolab.mail.placement finds
those words in the source, iolab.mail.repair writes the diff again.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from iolab.kernels.diff import FileDiff, Hunk, count, hunk_header, read_lines, strip
from iolab.mail.message import MailError, Patch

Kind = Literal["context", "removed", "added"]
Side = Literal["old", "new"]  # which side of the hunks the source holds: not applied yet, or applied


@dataclass(frozen=True)
class Line:
    """A line of a placed hunk."""

    kind: Kind
    text: str
    exact: bool  # taken from the source (else the mail's words, indentation inferred)
    restored: bool = False  # a blank context line the copy had lost
    mail: str | None = None  # an added line the source has in another form: the mail's words for it


@dataclass(frozen=True)
class CopiedHunk:
    """A hunk of the mail's diff as its words."""

    hunk: Hunk  # the diff model's: its counts, its @@ text, its lines as found (none in a copy on one line)
    tokens: tuple[str, ...]  # the hunk's words, in order
    starts: tuple[bool, ...] | None  # per token: it begins a line of the mail (None: line breaks lost)
    header: str  # the @@ line as found, for messages
    first: str  # its first line as found, for messages

    @property
    def old_count(self) -> int:
        return self.hunk.old_count

    @property
    def new_count(self) -> int:
        return self.hunk.new_count

    @property
    def lines_mode(self) -> bool:
        return self.starts is not None

    def name(self, path: str, number: int) -> str:
        """The hunk as a message names it: its file, number, @@ line and first line."""
        first = self.first if len(self.first) <= 60 else self.first[:57] + "..."
        header = _HUNK_ANY.search(self.header)
        return f"{path}: hunk #{number} ({header.group(0) if header else self.header}), first line {first!r}"


@dataclass(frozen=True)
class CopiedFile:
    """A file of the mail's diff: the diff model's, its hunks as their words."""

    file: FileDiff
    hunks: tuple[CopiedHunk, ...]

    @property
    def old(self) -> str | None:
        return self.file.old

    @property
    def new(self) -> str | None:
        return self.file.new

    @property
    def head(self) -> tuple[str, ...]:
        return self.file.head

    @property
    def path(self) -> str:
        return self.file.path


_HUNK_ANY = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def read(patch: Patch) -> tuple[CopiedFile, ...]:
    """The files and hunks of a patch's diff: by lines, or by words for a copy on one line."""
    return _read(patch.diff, patch.form == "one-line")


@functools.lru_cache(maxsize=64)
def _read(diff: str, one_line: bool) -> tuple[CopiedFile, ...]:
    """Read once per diff: the repair, the files it reads and the check of a diff as given share it."""
    return _by_words(diff) if one_line else _by_lines(diff)


def _by_lines(diff: str) -> tuple[CopiedFile, ...]:
    """The diff read by its lines (the diff model's lenient reading), each hunk as its words."""
    files = []
    for file in read_lines(diff).files:
        if file.binary:
            raise MailError(f"{file.path if file.path != '?' else 'the diff'}: a binary diff cannot be repaired")
        hunks = []
        for hunk in file.hunks:
            tokens: list[str] = []
            starts: list[bool] = []
            for line in hunk.lines:
                words = line.split() or [""]  # an empty line: a blank context line's one empty word
                tokens += words
                starts += [True] + [False] * (len(words) - 1)
            first = next((line.strip() for line in hunk.lines if line.strip()), "")
            hunks.append(CopiedHunk(hunk, tuple(tokens), tuple(starts), hunk.header, first))
        files.append(CopiedFile(file, tuple(hunks)))
    return tuple(files)


def _by_words(diff: str) -> tuple[CopiedFile, ...]:
    """A copy on one line: each ``diff --git`` section's header words, then its hunks' words."""
    files = []
    sections = [m for m in re.finditer(r"diff --git a/(\S+) b/(\S+)", diff)]
    for n, section in enumerate(sections):
        end = sections[n + 1].start() if n + 1 < len(sections) else len(diff)
        body = diff[section.end():end]
        old, new = section.group(1), section.group(2)
        head = [section.group(0)]
        found = re.match(r"\s*((?:(?:new|deleted) file mode \d+\s+)?(?:index [0-9a-f]+\.\.[0-9a-f]+(?: \d+)?\s+)?)"
                         r"(?:---\s+(\S+)\s+\+\+\+\s+(\S+))?", body)
        assert found is not None
        head += [" ".join(x.split()) for x in re.split(r"\s+(?=index |new file|deleted file)",
                                                       found.group(1).strip()) if x]
        if found.group(2):
            old, new = strip(found.group(2)), strip(found.group(3))
            head += [f"--- {found.group(2)}", f"+++ {found.group(3)}"]
        headers = list(_HUNK_ANY.finditer(body))
        hunks = []
        for k, match in enumerate(headers):
            stop = headers[k + 1].start() if k + 1 < len(headers) else len(body)
            tokens = tuple(body[match.end():stop].split())
            hunk = Hunk(int(match.group(1)), count(match.group(2)), int(match.group(3)), count(match.group(4)), "")
            hunks.append(CopiedHunk(hunk, tokens, None, match.group(0), " ".join(tokens[:8])))
        files.append(CopiedFile(FileDiff(old, new, tuple(h.hunk for h in hunks), tuple(head)), tuple(hunks)))
    return tuple(files)


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


def files_named(patches: tuple[Patch, ...] | list[Patch]) -> list[str]:
    """The source files the patches' diffs name (-p1), each once: what the repair reads."""
    names: list[str] = []
    for patch in patches:
        for file in read(patch):
            names += [name for name in (file.old, file.new) if name is not None and name not in names]
    return names
