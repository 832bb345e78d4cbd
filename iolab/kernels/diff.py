"""A unified diff read once into a typed value: the diff model every stage above shares.

unidiff reads a well-formed diff (git format-patch, ``diff -up``, a mail
around it) into files and hunks; this module keeps what iolab asks of them:
each file's -p1 paths (None for /dev/null), each hunk's counts, the text
after its second ``@@`` (the function git names) and its lines as found.
The patch stage (iolab.kernels.patches) reads the files a patch touches
from it, the workload library the functions its hunks change, and the
mail stage reads a web archive's mangled copy into the same types
(iolab.mail.copies), since unidiff, like GNU patch, refuses such a copy.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet


def strip(path: str) -> str | None:
    """A diff header's path with -p1 applied: ``a/fs/ext4/inode.c\\t2026-...`` ->
    ``fs/ext4/inode.c``; None for /dev/null (a file created or deleted)."""
    path = path.split("\t", 1)[0].strip()
    if path in ("/dev/null", ""):
        return None
    return path.split("/", 1)[1] if "/" in path else path


_CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def named(section: str) -> tuple[str, bool]:
    """What a hunk header's text (after its second ``@@``) names, and whether
    that is a function: the identifier before its first '(' (``int f(struct
    x *y,`` -> ``f``, True); else its last identifier, which is no function
    (a label ``write_retry:``, ``struct z_erofs_pcluster {``: False); ('', False)
    when it names nothing."""
    called = _CALLED.findall(section)
    if called:
        return called[0], True
    words = _WORD.findall(section)
    return (words[-1] if words else ""), False


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str  # the text after the second @@ (git's function line; '' for plain diff -u)
    lines: tuple[str, ...] = ()  # its lines with their markers (' ', '+', '-'), as found

    @property
    def header(self) -> str:
        """Its @@ line, as git writes it (a count of 1 left out)."""
        def side(start: int, count: int) -> str:
            return f"{start}" if count == 1 else f"{start},{count}"
        return (f"@@ -{side(self.old_start, self.old_count)} +{side(self.new_start, self.new_count)} @@"
                + (f" {self.section}" if self.section else "")).rstrip()

    @property
    def function(self) -> str:
        """The name its header gives (named: a function, a label or a struct)."""
        return named(self.section)[0]

    def first_changed(self) -> int:
        """The old-side line of its first change: the removed line, or for an
        added line the line it follows (the hunk's start when none)."""
        number = before = self.old_start
        for line in self.lines:
            if line.startswith("\\"):
                continue
            if line[:1] == "-":
                return number
            if line[:1] == "+":
                return before
            before = number
            number += 1
        return before


@dataclass(frozen=True)
class FileDiff:
    old: str | None  # the -p1 path of its a/ side, None for /dev/null
    new: str | None
    hunks: tuple[Hunk, ...] = ()
    head: tuple[str, ...] = ()  # diff --git, index, mode, ---, +++ lines as found (a mail's copy keeps them)
    binary: bool = False  # a binary diff (GIT binary patch): no hunks to read

    @property
    def path(self) -> str:
        return self.new or self.old or "?"


@dataclass(frozen=True)
class Diff:
    files: tuple[FileDiff, ...]

    def paths(self) -> list[str]:
        """Files it changes, creates or deletes (-p1 paths), each once, in order."""
        return list(dict.fromkeys(name for file in self.files for name in (file.old, file.new) if name is not None))

    def headers(self) -> dict[str, list[str]]:
        """The @@ lines per file it changes (-p1 path)."""
        found: dict[str, list[str]] = {}
        for file in self.files:
            if file.new or file.old:
                found.setdefault(file.path, []).extend(hunk.header for hunk in file.hunks)
        return found

    def hunk_count(self) -> int:
        return sum(len(file.hunks) for file in self.files)


def parse(text: str) -> Diff:
    """The diff in a text (a mail or prose around it is skipped); a text
    without one gives a Diff without files. One whose hunks unidiff cannot
    read (a hunk shorter than its header says, which GNU patch takes; context
    lines that lost their leading space, which it does not) is read by its
    lines (read_lines)."""
    try:
        patch = PatchSet(text)
    except UnidiffParseError:
        return read_lines(text)
    files = []
    for changed in patch:
        hunks = tuple(Hunk(int(h.source_start), int(h.source_length), int(h.target_start), int(h.target_length),
                           h.section_header, _within(h.source_length + h.target_length,
                                                     [str(line).rstrip("\n") for line in h]))
                      for h in changed)
        files.append(FileDiff(strip(changed.source_file), strip(changed.target_file), hunks,
                              tuple(line.rstrip("\n") for line in (changed.patch_info or ())), changed.is_binary_file))
    return Diff(tuple(files))


def _within(counted: int, lines: list[str]) -> tuple[str, ...]:
    """A hunk's lines without the empty lines unidiff reads after it (the blank line
    above git's ``base-commit:`` trailer) beyond its header's counts."""
    while lines and not lines[-1].strip() and shown(lines) > counted:
        lines.pop()
    return tuple(lines)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)")
_HEAD_LINES = ("index ", "new file mode ", "deleted file mode ", "old mode ", "new mode ", "similarity index ",
               "dissimilarity index ", "rename from ", "rename to ", "copy from ", "copy to ")


def count(value: str | None) -> int:
    """A hunk header's count: 1 where it is left out."""
    return 1 if value is None else int(value)


def hunk_header(line: str) -> re.Match[str] | None:
    """An @@ line's parts: old start, old count, new start, new count (None: left out), its text."""
    return _HUNK.match(line)


def shown(lines: Sequence[str]) -> int:
    """Lines a hunk shows on both sides together, as its header counts them (context twice)."""
    return sum(1 if line[:1] in ("+", "-") else 2 for line in lines)


def unfinished(lines: Sequence[str]) -> int:
    """How many lines the last hunk of a diff's lines still expects by its
    header's counts (0: every hunk whole; a context line may be empty, as
    a mail client leaves a blank one): a diff cut short, as a truncated
    mbox leaves it, or one whose last blank context line was trimmed."""
    old = new = 0
    for line in lines:
        header = hunk_header(line)
        if old <= 0 and new <= 0:
            if header:
                old, new = count(header.group(2)), count(header.group(4))
            continue
        if line.startswith("\\"):
            continue
        kind = line[:1]
        old -= kind in (" ", "-", "")
        new -= kind in (" ", "+", "")
    return max(old, new, 0)


class _Reading:
    """The files of a diff read by its lines (read_lines), as they come."""

    def __init__(self) -> None:
        self.files: list[FileDiff] = []
        self.header: re.Match[str] | None = None
        self.lines: list[str] = []

    def close(self) -> None:
        """The hunk read so far, onto its file: without trailing empty lines beyond its header's counts."""
        if self.header is not None:
            old, new = count(self.header.group(2)), count(self.header.group(4))
            while self.lines and not self.lines[-1].strip() and shown(self.lines) > old + new:
                self.lines.pop()
            hunk = Hunk(int(self.header.group(1)), old, int(self.header.group(3)), new, self.header.group(5),
                        tuple(self.lines))
            self.files[-1] = replace(self.files[-1], hunks=self.files[-1].hunks + (hunk,))
        self.header, self.lines = None, []

    def head(self, *lines: str, old: str | None = None, new: str | None = None, start: bool = False) -> None:
        """Header lines of a file: a new file's (``start``), else the current one's."""
        if start:
            self.files.append(FileDiff(old, new, (), lines))
        else:
            self.files[-1] = replace(self.files[-1], head=self.files[-1].head + lines)


def read_lines(text: str) -> Diff:
    """A diff read by its lines, as leniently as GNU patch: a hunk's lines are
    those up to the next header, whatever their first character (a web
    archive's copy drops context lines' leading space and blank context
    lines; the mail stage repairs such a hunk against the source). A binary
    diff is a file without hunks, marked binary."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    read = _Reading()
    i = 0
    while i < len(lines):
        line = lines[i]
        git = _GIT.match(line)
        header = _HUNK.match(line)
        if git:
            read.close()
            read.head(line, old=git.group(1), new=git.group(2), start=True)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            read.close()
            old, new = strip(line[4:]), strip(lines[i + 1][4:])
            last = read.files[-1] if read.files else None
            fresh = last is None or bool(last.hunks) or len(last.head) > 1 and last.head[-1].startswith("+++ ")
            read.head(line, lines[i + 1], old=old, new=new, start=fresh)
            if not fresh:
                read.files[-1] = replace(read.files[-1], old=old, new=new)
            i += 1
        elif header and read.files:
            read.close()
            read.header = header
        elif read.header is None and read.files and line.startswith(_HEAD_LINES):
            read.head(line)
        elif line.startswith("Binary files ") or line.startswith("GIT binary patch"):
            if not read.files:
                read.head(line, old=None, new=None, start=True)
            read.files[-1] = replace(read.files[-1], binary=True)
        elif read.header is not None and not line.startswith("\\ "):  # "\ No newline ...": not a line of it
            read.lines.append(line)
        i += 1
    read.close()
    return Diff(tuple(f for f in read.files if f.hunks or f.old != f.new or f.binary))


def paths(text: str) -> list[str]:
    """The files a patch's text changes, creates or deletes (-p1 paths, each once, in order)."""
    return parse(text).paths()


def digest(text: str) -> str:
    """The sha256 of a patch's diff alone (from its first '--- ' line, without
    the mail around it or git's '-- ' signature): two files of one change
    have the same digest, whatever their subject lines say. "" when there
    is no diff in it."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("--- ")), None)
    if start is None:
        return ""
    diff = lines[start:]
    if "-- " in diff:
        diff = diff[:diff.index("-- ")]
    return hashlib.sha256("\n".join(diff).encode()).hexdigest()
