"""A patch placed on a tree it was not written for: GNU patch with fuzz, then Debian's ``wiggle``.

A patch written on another base (6.15, a for-next tree) often still fits a
newer tree: its hunk moved (lines added above it), or a context line
changed. A build applies patches at fuzz 0 (iolab.kernels.patches), so such
a patch is placed here once, hunk by hunk, on a scratch copy of the files it
changes, and the result is written as a new diff (``diff -up`` of each file
before and after): the port, which applies to that tree at fuzz 0.

Each hunk is tried, in the mail's order, on the file as the hunks before it
left it, at the line the mail's diff puts it (its new-side start):

1. GNU patch, fuzz 0: the hunk's lines as they are, at an offset;
2. GNU patch at its default fuzz (2): up to two context lines at each end
   may differ;
3. ``wiggle`` (word by word): the lines it changes found by their words,
   context that differs kept as the tree has it. wiggle places a hunk
   wherever its words align best, so iolab keeps its placement only where
   the hunk's removed lines are the tree's and at least half of its
   context lines are found as the mail has them.

Every hunk that did not apply as given (moved, or in other context) is a
``Moved`` record: the file, the hunk's number and @@ line, the lines it
moved and how it was placed, and each context line that differs. A hunk
none of the three places is a Conflict naming it.
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from iolab import process
from iolab.kernels import diff as diffs
from iolab.kernels.kernel_ref import KernelError

How = Literal["offset", "fuzz", "wiggle"]
FUZZ = 2  # GNU patch's default
_SUCCEEDED = re.compile(r"Hunk #\d+ succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?")


class PortError(KernelError):
    """A patch that cannot be placed: a hunk with a conflict, or a change a port cannot carry."""


class Conflict(PortError):
    """A hunk that none of GNU patch, its fuzz and wiggle places."""

    def __init__(self, path: str, number: int, header: str, why: str):
        super().__init__(f"{path}: hunk #{number} ({header}) {why}")
        self.path, self.number, self.header = path, number, header


@dataclass(frozen=True)
class Moved:
    """A hunk of the mail placed away from its lines, or in context that differs."""

    file: str
    hunk: int  # its number in that file, from 1
    header: str  # the mail's @@ line
    offset: int  # lines from where the mail's diff puts it (positive: lower in the file)
    how: How
    context: tuple[str, ...] = ()  # each context line that differs: the mail's and the tree's

    def line(self) -> str:
        """The hunk as a message says it."""
        moved = f"moved {self.offset:+d} lines" if self.offset else "at its lines"
        placed = {"offset": "", "fuzz": f", placed by GNU patch's fuzz (up to {FUZZ} context lines ignored)",
                  "wiggle": ", placed by wiggle (word by word)"}[self.how]
        differs = "; context differs: " + "; ".join(self.context) if self.context else ""
        return f"{self.file}: hunk #{self.hunk} ({self.header}) {moved}{placed}{differs}"


@dataclass(frozen=True)
class Port:
    """The patch as placed on the tree: a diff that applies to it at fuzz 0, and the hunks that moved."""

    diff: str
    moved: tuple[Moved, ...]


def _require(tool: str, package: str) -> None:
    if shutil.which(tool) is None:
        raise PortError(f"{tool} not found: install it with 'apt-get install {package}'")


def gnu_patch(tree: Path, patch: Path, *, fuzz: int = 0, reverse: bool = False,
              dry_run: bool = True) -> subprocess.CompletedProcess[str]:
    """GNU patch -p1 on the tree (rejects discarded, no backups): its exit status and output."""
    _require("patch", "patch")
    argv = ["patch", "-p1", "--forward", "--batch", f"--fuzz={fuzz}", "--no-backup-if-mismatch",
            "--reject-file=-", "-d", str(tree), "-i", str(patch.resolve())]
    if reverse:
        argv.insert(1, "--reverse")
    if dry_run:
        argv.append("--dry-run")
    return process.run(argv, timeout=300)


def _lines(path: Path) -> list[str]:
    return path.read_text(errors="surrogateescape").splitlines() if path.is_file() else []


def _single(file: diffs.FileDiff, hunk: diffs.Hunk) -> str:
    """One hunk as a diff of its own, at the line the mail puts it once the hunks above it are in."""
    start = hunk.new_start if hunk.old_count else hunk.new_start - 1
    head = f"--- a/{file.old}\n+++ b/{file.new}\n"
    old = f"{start},{hunk.old_count}"
    new = f"{start},{hunk.new_count}"
    return head + f"@@ -{old} +{new} @@ {hunk.section}".rstrip() + "\n" + "\n".join(hunk.lines) + "\n"


def _old_side(hunk: diffs.Hunk) -> list[str]:
    return [line[1:] for line in hunk.lines if line[:1] in (" ", "-") or line == ""]


def _context_differs(hunk: diffs.Hunk, found: Sequence[str]) -> tuple[str, ...]:
    """Each line of the hunk's old side the tree says otherwise at its spot."""
    said = []
    mail = _old_side(hunk)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mail, list(found), autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        ours, theirs = [x.strip() for x in mail[i1:i2]], [x.strip() for x in found[j1:j2]]
        if tag == "replace" and len(ours) == len(theirs):
            said += [f"'{a}' is '{b}' here" for a, b in zip(ours, theirs) if a != b]
        else:
            said += [f"'{a}' is not here" for a in ours] + [f"here also '{b}'" for b in theirs]
    return tuple(said)


def _wiggled(hunk: diffs.Hunk, before: list[str], after: list[str]) -> tuple[int, tuple[str, ...]] | None:
    """Where wiggle put the hunk (0-based start of its old side) and the context that differs;
    None where its placement is not the hunk's (removed lines not the tree's, or half its context missing)."""
    ops = [op for op in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return None
    lead = next((k for k, line in enumerate(hunk.lines) if line[:1] in ("+", "-")), 0)
    trail = next((k for k, line in enumerate(reversed(hunk.lines)) if line[:1] in ("+", "-")), 0)
    start, end = max(0, ops[0][1] - lead), min(len(before), ops[-1][2] + trail)
    window = before[start:end]
    gone = sorted(" ".join(line.split()) for _, i1, i2, _, _ in ops for line in before[i1:i2])
    removed = sorted(" ".join(line[1:].split()) for line in hunk.lines if line[:1] == "-")
    context = [line[1:].strip() for line in hunk.lines if line[:1] == " " and line[1:].strip()]
    kept = {line.strip() for line in window}
    if gone != removed or (context and sum(1 for line in context if line in kept) * 2 < len(context)):
        return None
    return start, _context_differs(hunk, window)


def _place_hunk(scratch: Path, work: Path, file: diffs.FileDiff, hunk: diffs.Hunk, number: int) -> Moved | None:
    """The hunk applied to the scratch tree's file (None: at its lines as given), or Conflict."""
    target = scratch / file.path
    single = work / "hunk.patch"
    single.write_text(_single(file, hunk), errors="surrogateescape")
    expected = hunk.new_start if hunk.old_count else hunk.new_start - 1
    tries: tuple[tuple[int, How], ...] = ((0, "offset"), (FUZZ, "fuzz"))
    for fuzz, how in tries:
        if gnu_patch(scratch, single, fuzz=fuzz).returncode != 0:
            continue
        before = _lines(target)
        done = gnu_patch(scratch, single, fuzz=fuzz, dry_run=False)
        if done.returncode != 0:
            raise Conflict(file.path, number, hunk.header, "does not apply: " + done.stdout.strip()[-200:])
        match = _SUCCEEDED.search(done.stdout)
        offset = int(match.group(3)) if match and match.group(3) else 0
        if not match and fuzz == 0:
            return None  # at its lines, as given
        start = max(0, expected - 1 + offset)
        differs = _context_differs(hunk, before[start:start + hunk.old_count])
        return Moved(file.path, number, hunk.header, offset, "offset" if not differs else how, differs)
    return _wiggle(target, single, file, hunk, number, expected)


def _wiggle(target: Path, single: Path, file: diffs.FileDiff, hunk: diffs.Hunk, number: int, expected: int) -> Moved:
    _require("wiggle", "wiggle")
    merged = single.with_name("wiggled")
    done = process.run(["wiggle", "--merge", "--no-ignore", "--output", str(merged), str(target), str(single)],
                       timeout=300)
    if done.returncode != 0 or not merged.is_file():
        raise Conflict(file.path, number, hunk.header, "conflicts with this source: it applies neither as given "
                       f"nor reversed (GNU patch), nor with fuzz {FUZZ}, nor word by word (wiggle)")
    before, after = _lines(target), _lines(merged)
    placed = _wiggled(hunk, before, after)
    if placed is None:
        raise Conflict(file.path, number, hunk.header, "conflicts with this source: wiggle finds only some of "
                       "its words (its removed lines, or most of its context, are not here)")
    shutil.copyfile(merged, target)
    start, differs = placed
    return Moved(file.path, number, hunk.header, start + 1 - expected, "wiggle", differs)


def _file_diff(path: str, before: Path, after: Path) -> str:
    """diff -up of one file, named as a -p1 patch names it."""
    _require("diff", "diffutils")
    old = before if before.is_file() else Path("/dev/null")
    new = after if after.is_file() else Path("/dev/null")
    done = process.run(["diff", "-up", "--label", f"a/{path}" if before.is_file() else "/dev/null",
                        "--label", f"b/{path}" if after.is_file() else "/dev/null", str(old), str(new)], timeout=60)
    if done.returncode > 1:
        raise PortError(f"diff -up {path}: {done.stderr.strip()}")
    return str(done.stdout)


def place(scratch: Path, text: str) -> Port:
    """The patch ``text`` placed hunk by hunk on the scratch tree (its files as the patches before
    it left them; changed in place), as a diff that applies there at fuzz 0. PortError where a
    file is created, deleted, renamed or binary (only a change to a file can move), Conflict
    naming the first hunk that does not place."""
    parsed = diffs.parse(text)
    for file in parsed.files:
        if file.binary or file.old is None or file.new is None or file.old != file.new:
            raise PortError(f"{file.path}: a file created, deleted, renamed or binary is applied only as given")
        if not (scratch / file.path).is_file():
            raise PortError(f"{file.path}: not in this source")
    with tempfile.TemporaryDirectory(prefix="iolab-port-") as work:
        saved = Path(work) / "before"
        for name in parsed.paths():
            (saved / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(scratch / name, saved / name)
        moved: list[Moved] = []
        for file in parsed.files:
            for number, hunk in enumerate(file.hunks, 1):
                found = _place_hunk(scratch, Path(work), file, hunk, number)
                if found is not None:
                    moved.append(found)
        out = "".join(_file_diff(name, saved / name, scratch / name) for name in parsed.paths())
    return Port(out, tuple(moved))
