"""A diff a web archive mangled, repaired against the kernel source.

Each hunk of the mail's diff (iolab.mail.copies: its words) is placed in
the source file (iolab.mail.placement), forward (the source has not the
patch) or as a patch the source already carries, or with the part the
source has in another form taken out; the repaired hunk takes the source's
exact lines, the mail's own lines indented as their neighbours suggest
(iolab.mail.indentation), and is written as a diff GNU patch applies.

A hunk placed in no spot, or in more than one, is refused (RepairError
naming the file, the hunk and its first line): a guess would build a kernel
the mail never described. Debian's ``wiggle`` applies a rejected patch by
words too, but it needs a well-formed diff, does not read a copy without
line breaks, and applies a hunk at its best match where this must refuse
an ambiguous one; so the matching is iolab's own, a small dynamic programme.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from iolab.kernels.diff import read_lines
from iolab.mail import copies
from iolab.mail.copies import CopiedFile, CopiedHunk, Line, Side
from iolab.mail.indentation import indented
from iolab.mail.message import MailError, Patch
from iolab.mail.placement import Placement, place

Source = Callable[[str], "list[str] | None"]


class RepairError(MailError):
    """A hunk that cannot be placed in exactly one spot of the source."""


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
    other_form: str | None = None
    notes: tuple[str, ...] = ()  # each such hunk, and how the source says its lines


@dataclass
class SourceFiles:
    """The source files a repair reads, as the patches so far left them (each read once)."""

    read: Source
    files: dict[str, list[str] | None] = field(default_factory=dict)

    def get(self, path: str) -> list[str] | None:
        if path not in self.files:
            self.files[path] = self.read(path)
        return self.files[path]


def _side_path(file: CopiedFile, side: Side) -> str:
    """The source file a side of the diff is read from: the old path before the patch, else its path."""
    return file.old if side == "old" and file.old else file.path


def _place_file(file: CopiedFile, lines: list[str] | None, side: Side) -> tuple[list[Placement] | None, str]:
    """Each hunk's one placement in order, or None and why the first that fails does."""
    if lines is None:
        if (side == "old" and file.old is not None) or (side == "new" and file.new is not None):
            return None, f"{file.path}: not in this source"
        lines = []
    placed: list[Placement] = []
    after = 0
    for number, hunk in enumerate(file.hunks, 1):
        found = place(hunk, lines, side, after)
        if len(found) != 1:
            where = "fits no spot" if not found else \
                f"fits {len(found)} spots (lines {', '.join(str(p.start + 1) for p in found[:4])})"
            return None, f"{hunk.name(file.path, number)}: {where} in the source"
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


def _render(file: CopiedFile, placed: list[Placement], side: Side, length: int) -> tuple[list[str], int]:
    out = list(file.head)
    if not any(line.startswith("--- ") for line in out):
        out += [f"--- {'a/' + file.old if file.old else '/dev/null'}",
                f"+++ {'b/' + file.new if file.new else '/dev/null'}"]
    shift = 0  # new - old lines of the hunks above
    inferred = 0
    for hunk, spot in zip(file.hunks, placed):
        body = indented(list(spot.lines), side)
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
        function = hunk.hunk.section if hunk.lines_mode else spot.function
        out.append(f"@@ -{old_start},{old_count} +{new_start},{new_count} @@" + (f" {function}" if function else ""))
        mark = {"context": " ", "removed": "-", "added": "+"}
        out += [mark[line.kind] + line.text for line in body]
        shift += new_count - old_count
    return out, inferred


def _spliced(lines: list[str], placed: Sequence[tuple[CopiedHunk, Placement]], side: Side) -> list[str]:
    """The file with each placed hunk's window replaced by its other side:
    ``side`` "old", the patch applied; "new", the patch taken out."""
    dropped = "removed" if side == "old" else "added"
    result = list(lines)
    for hunk, spot in reversed(placed):
        body = indented(list(spot.lines), side)
        window = hunk.old_count if side == "old" else hunk.new_count
        result[spot.start:spot.start + window] = [line.text for line in body if line.kind != dropped]
    return result


def _other_form(patch: Patch, files: Sequence[CopiedFile], sources: SourceFiles) -> Repaired | None:
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
        lines = sources.get(file.path)
        if lines is None or file.old is None or file.new is None or file.old != file.new:
            continue
        placed: list[tuple[CopiedHunk, Placement]] = []
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
                notes.append(f"{hunk.name(file.path, number)}: in the source in another form: "
                             + "; ".join(f"'+{line.mail}' is '{line.text.strip()}' there" for line in said))
        if not placed:
            continue
        hunks = tuple(hunk for hunk, _ in placed)
        part = CopiedFile(replace(file.file, hunks=tuple(hunk.hunk for hunk in hunks), head=()), hunks)
        rendered, _ = _render(part, [spot for _, spot in placed], "new", len(lines))
        taken += rendered
        base[file.path] = _spliced(lines, placed, "new")
    if not notes:
        return None  # no hunk in other words: a patch partly in the source is refused as before
    on_base = SourceFiles(lambda path: base[path] if path in base else sources.get(path))
    try:
        fixed = repair_one(patch, on_base, other_forms=False)
    except MailError:
        return None
    if fixed.side != "old":
        return None
    sources.files.update(on_base.files)
    return replace(fixed, changed=True, other_form="\n".join(taken) + "\n", notes=tuple(notes))


def repair_one(patch: Patch, sources: SourceFiles, other_forms: bool = True) -> Repaired:
    """The patch's diff placed in the source files: forward (the source has
    not the patch: its old side is there) or, failing that, as a patch the
    source already carries (its new side is there), or with the part the
    source has in another form taken out (_other_form). ``sources`` then
    holds the files as the patch left them."""
    files = copies.read(patch)
    if not files or not any(f.hunks for f in files):
        raise MailError(f"{patch.file}: no hunk in its diff (expected '@@ -N,N +N,N @@' lines)")
    reasons: dict[Side, str] = {}
    for side in ("old", "new"):
        placements: list[list[Placement]] = []
        for file in files:
            placed, why = _place_file(file, sources.get(_side_path(file, side)), side)
            if placed is None:
                reasons[side] = why
                break
            placements.append(placed)
        else:
            text: list[str] = []
            inferred = 0
            for file, placed in zip(files, placements):
                rendered, count = _render(file, placed, side, len(sources.get(_side_path(file, side)) or []))
                text += rendered
                inferred += count
                if side == "old":
                    after = None if file.new is None else \
                        _spliced(sources.get(file.old or file.path) or [], list(zip(file.hunks, placed)), "old")
                    sources.files[file.path] = after
            diff = "\n".join(text) + "\n"
            return Repaired(diff, side, diff != patch.diff, inferred)
    mixed = _other_form(patch, files, sources) if other_forms else None
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


def _as_given(files: Sequence[CopiedFile], sources: SourceFiles) -> bool:
    """Whether GNU patch (no fuzz) takes a well-formed diff as given: every
    hunk's lines, byte for byte, in the source, on one side for all."""
    sides: tuple[tuple[Side, tuple[str, str]], ...] = (("old", (" ", "-")), ("new", (" ", "+")))
    for side, keep in sides:
        def found(file: CopiedFile) -> bool:
            lines = sources.get(_side_path(file, side))
            if lines is None:  # a file the patch creates (or, taken out, deletes)
                return (file.old if side == "old" else file.new) is None
            return all(_found(lines, [line[1:] for line in hunk.hunk.lines if line[:1] in keep or line == ""])
                       for hunk in file.hunks)

        if all(found(file) for file in files):
            return True
    return False


def _body(diff: str) -> list[tuple[str, ...]]:
    """A diff's hunk lines as their marker and words (an empty line: a blank context line)."""
    return [(line[:1] or " ", *line[1:].split()) for file in read_lines(diff).files for hunk in file.hunks
            for line in hunk.lines]


def _whitespace_only(given: str, repaired: str) -> bool:
    """The repair changed only whitespace: the same lines, each with the same marker and words."""
    return _body(given) == _body(repaired)


def repair(patches: Sequence[Patch], read: Source) -> list[Repaired | None]:
    """Each patch's repaired diff, in series order; None for a well-formed
    diff GNU patch takes as given (its lines byte for byte in the source).
    A well-formed diff whose whitespace differs from the source's (a mail
    client turned tabs into spaces) is repaired too. Each patch is placed in
    the source as the ones before it left it."""
    sources = SourceFiles(read)
    out: list[Repaired | None] = []
    for patch in patches:
        if copies.needs_repair(patch):
            out.append(repair_one(patch, sources))
            continue
        exact = _as_given(copies.read(patch), sources)
        try:  # also keeps the source files in step for the patches after it
            fixed: Repaired | None = repair_one(patch, sources)
        except MailError:
            fixed = None  # GNU patch judges it, and says why it does not apply
        if exact or fixed is None or not _whitespace_only(patch.diff, fixed.diff):
            out.append(None)  # a well-formed diff is never rewritten beyond its whitespace: GNU patch judges it
        else:
            out.append(replace(fixed, cause="whitespace that differs from the source's (as a mail client "
                                            "may turn tabs into spaces)"))
    return out
