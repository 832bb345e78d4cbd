"""A mail's series placed on the source, step by step: each patch on the tree as the ones before it left it.

A series is whole before anything is placed: a patch its [PATCH n/m]
subjects count that was not given, or a diff that ends inside a hunk (a
truncated mbox), is refused naming it (``whole``), unless the user allows a
partial series by name (``--allow partial-series``).

Then (``place``) a scratch copy of the files the series changes, as the
source came, takes each patch in order, judged by GNU patch (fuzz 0, as a
build applies it):

- it applies: it goes onto the scratch tree, and the next patch is judged
  on top of it (a 2/2 that edits the lines 1/2 adds applies);
- it applies reversed: the source carries it already (the base takes it out);
- neither: it was written on another base. iolab.kernels.port places it
  hunk by hunk (GNU patch at an offset, with fuzz, then wiggle) and the
  result is written as a port (``iolab-mail/NNNN-title.port.patch``) that
  the series applies; its record in the experiment's [mail] table lists each
  hunk that moved, by how many lines, and the context that differed. A hunk
  that none of them places is refused naming it, with the commit the mail
  says it was written on (its ``base-commit:``) or its date, and the advice
  to give that tree.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from iolab import process
from iolab.kernels import diff as diffs
from iolab.kernels import patches, port
from iolab.mail.files import FOLDER, Written, mail_text, slug
from iolab.mail.message import Mail, MailError, Patch
from iolab.mail.reading import patch_base
from iolab.spec import MovedHunk

PARTIAL = "partial-series"  # --allow partial-series: run a series with patches missing


@dataclass(frozen=True)
class Step:
    """A patch of the series as it goes onto the tree."""

    written: Written  # the file the series applies (a port's, where it was placed as one) and its record
    in_source: bool  # the source carries it, or its other form, already: the base takes that out
    said: tuple[str, ...] = ()  # what iolab says about it (a port: where its hunks went)


def named(patch: Patch) -> str:
    """A patch as a message names it: the mail's file, and [PATCH n/m] with its title in a series."""
    return f"{patch.file}: [PATCH {patch.counter}/{patch.total}] {patch.title}" if patch.total > 1 else patch.file


def whole(mail: Mail, allow: Sequence[str]) -> list[str]:
    """What to say of a series run without some of its patches (allowed by name); MailError
    for a series cut short: a patch its subjects count not given, or a diff ending inside a hunk."""
    for patch in mail.patches:
        if patch.form not in ("mail", "diff"):
            continue  # a web archive's copy loses lines: the repair reads it by its words
        lines = patch.diff.split("\n")[:-1]
        short = diffs.unfinished(lines)
        if short:
            raise MailError(f"{named(patch)}: its diff ends {short} line(s) short of its last hunk's count "
                            "(a truncated mbox?): give the whole mail (b4 am MESSAGE-ID)")
    if not mail.missing:
        return []
    total = mail.patches[0].total
    which = ", ".join(f"{n}/{total}" for n in mail.missing)
    if PARTIAL not in allow:
        raise MailError(f"{mail.patches[0].file}: patch {which} of this series not given (a truncated mbox, or "
                        f"a series not whole): give the whole series (b4 am MESSAGE-ID), or --allow {PARTIAL} "
                        "to run the patches given without it")
    return [f"patch {which} of this series not given: run without it (--allow {PARTIAL})"]


def base_in_tree(source: str, mail: Mail, say: Callable[[str], None]) -> str | None:
    """The commit to build when --source is a git tree and no --commit is given: the mail's
    base-commit, where the tree has it (MailError where it has not); None otherwise."""
    path = Path(source)
    if source.startswith("debian:") or not path.is_dir() or not ((path / ".git").exists() or (path / "HEAD").exists()):
        return None
    base = next((b for b in (patch_base(patch, mail.cover) for patch in mail.patches) if b), None)
    if base is None:
        return None  # the source asks for --commit itself
    found = process.run(["git", "-C", str(path), "rev-parse", "--verify", "-q", f"{base}^{{commit}}"], timeout=60)
    if found.returncode != 0:
        raise MailError(f"--source {source}: the mail's base-commit {base} is not in this git tree: fetch it "
                        "(git fetch), or give --commit")
    say(f"--source {source} is a git tree: building on the mail's base-commit {base[:12]}")
    return base


def _advice(mail: Mail, patch: Patch, label: str) -> str:
    """Which tree the mail was written for, and how to give it."""
    base = patch_base(patch, mail.cover)
    written = f"the mail says it was written on base-commit {base}" if base else \
        f"the mail names no base-commit{'; it is dated ' + patch.date if patch.date else ''}"
    how = "--source pointing at a git tree that has that commit (iolab uses the mail's base-commit there)" \
        if base else "--source and --commit naming the tree and the commit it was written on"
    return f"\n  ({written}; this source is {label}; give the tree it was written for: {how})"


def _scratch(root: Path, written: Sequence[Written], top: Path) -> None:
    """The files the series changes (and their other forms), as the source came, under ``top``."""
    names: list[str] = []
    for item in written:
        for path in (item.path, item.other_form):
            if path is not None:
                names += [n for n in diffs.paths(path.read_text(errors="replace")) if n not in names]
    for name, text in patches.pristine_files(root, names).items():
        if text is not None:
            (top / name).parent.mkdir(parents=True, exist_ok=True)
            (top / name).write_text(text, errors="surrogateescape")


def _malformed(patch: Patch, output: str) -> None:
    """A diff GNU patch cannot read (malformed, or no hunk it finds), named by the mail."""
    if "malformed patch" in output or "Only garbage was found" in output:
        said = next((line for line in output.splitlines() if "malformed" in line or "garbage" in line), "")
        raise MailError(f"{named(patch)}: GNU patch cannot read its diff ({said.removeprefix('patch: **** ')})")


def _ported(mail: Mail, patch: Patch, item: Written, top: Path, label: str, base_dir: Path) -> Step:
    """The patch placed hunk by hunk (iolab.kernels.port) and written as a port beside the experiment."""
    try:
        placed = port.place(top, item.path.read_text(errors="surrogateescape"))
    except port.Conflict as conflict:
        raise MailError(f"{named(patch)}: {conflict}" + _advice(mail, patch, label)) from None
    except port.PortError as error:
        raise MailError(f"{named(patch)}: does not apply to this source ({error})" + _advice(mail, patch, label)) \
            from None
    name = (item.path.name if item.written else slug(patch)).removesuffix(".patch") + ".port.patch"
    path = base_dir / FOLDER / name
    moved = [f"iolab: {m.line()}" for m in placed.moved]
    text = mail_text(patch, placed.diff, "\n".join([f"iolab: placed on {label} as a port of the mail's diff "
                                                    "(it was written on another base):", *moved]))
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, errors="surrogateescape")
    except OSError as error:
        raise MailError(f"{path}: cannot write the port: {error.strerror}") from None
    record = item.record.model_copy(update={
        "file": str(path), "sha256": hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest(),
        "port": [MovedHunk(file=m.file, hunk=m.hunk, header=m.header, offset=m.offset, how=m.how,
                           context=list(m.context)) for m in placed.moved]})
    said = (f"{named(patch)}: does not apply to {label} as given; placed as a port, written to {path}",
            *(f"  {m.line()}" for m in placed.moved))
    return Step(replace(item, path=path, written=True, record=record), False, said)


def _step(mail: Mail, patch: Patch, item: Written, top: Path, label: str, base_dir: Path) -> Step:
    """One patch judged on the scratch tree as the patches before it left it (and put on it)."""
    if item.other_form is not None:  # the source has part of it in other words: out with that, in with the mail's
        for undo, reverse in ((item.other_form, True), (item.path, False)):
            if port.gnu_patch(top, undo, reverse=reverse, dry_run=False).returncode != 0:
                raise MailError(f"{named(patch)}: does not apply on the patches before it in this series")
        return Step(item, True)
    forward = port.gnu_patch(top, item.path)
    if forward.returncode == 0:
        port.gnu_patch(top, item.path, dry_run=False)
        return Step(item, False)
    _malformed(patch, forward.stdout + forward.stderr)
    if port.gnu_patch(top, item.path, reverse=True).returncode == 0:
        return Step(item, True)  # the scratch tree, like the source, has it
    return _ported(mail, patch, item, top, label, base_dir)


def place(mail: Mail, written: Sequence[Written], root: Path, label: str, base_dir: Path) -> list[Step]:
    """Each patch of the series judged and placed on the source as the ones before it left it
    (see the module's doc); MailError names the mail's patch that cannot be placed."""
    if len(written) != len(mail.patches):
        raise MailError("the series' files and its patches differ in number")
    with tempfile.TemporaryDirectory(prefix="iolab-series-") as scratch:
        top = Path(scratch) / "linux"
        top.mkdir()
        try:
            _scratch(root, written, top)
        except patches.PatchError as error:
            raise MailError(str(error)) from None
        steps = [_step(mail, patch, item, top, label, base_dir) for patch, item in zip(mail.patches, written)]
        shutil.rmtree(top, ignore_errors=True)
    return steps
