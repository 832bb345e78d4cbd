"""The mail's patches as the files a series applies, and the [mail] record.

A patch that came alone in a well-formed file (a format-patch file, an
mbox of one mail, a plain diff) is applied from that file. Every other one
(a mail of an mbox series, a web archive's copy, a repaired diff) is
written, git format-patch style, into ``iolab-mail/`` beside the experiment:
the user sees exactly what is applied, and its sha256 goes into the
experiment's [mail] table, stored with the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from iolab.mail.message import Mail, MailError, Patch
from iolab.mail.repair import Repaired
from iolab.spec import MailPatch, MailRecord

FOLDER = "iolab-mail"


@dataclass(frozen=True)
class Written:
    path: Path  # the file the series applies
    written: bool  # iolab wrote it (else the user's own file)
    record: MailPatch
    other_form: Path | None = None  # the file of the part the source has in another form: the base takes it out
    notes: tuple[str, ...] = ()  # which hunks those are


def slug(patch: Patch) -> str:
    """git format-patch's file name: 0002-ext4-avoid-tail-write_begin-walk.patch."""
    words = re.sub(r"[^A-Za-z0-9_.]+", "-", patch.title).strip("-.")[:52].rstrip("-.") or "patch"
    return f"{patch.counter:04d}-{words}.patch"


def mail_text(patch: Patch, diff: str, note: str) -> str:
    """The patch as a git format-patch style file: its headers, description and ``diff`` (``note`` above it)."""
    headers = [f"From: {patch.author}" if patch.author else "", f"Date: {patch.date}" if patch.date else "",
               f"Subject: {patch.subject or '[PATCH] ' + patch.title}",
               f"Message-Id: <{patch.message_id}>" if patch.message_id else ""]
    lines = [h for h in headers if h] + [""]
    if patch.body:
        lines += [patch.body, ""]
    lines += ["---"] + ([note, ""] if note else []) + [diff.rstrip("\n"), ""]
    return "\n".join(lines)


def _alone(patch: Patch, mail: Mail) -> bool:
    """The patch is its file's only mail, and the file holds its diff as written (not sent
    quoted-printable or base64, which GNU patch does not decode), so that file can be applied as given."""
    if sum(1 for p in mail.patches if p.file == patch.file) != 1 or patch.form not in ("mail", "diff"):
        return False
    text = Path(patch.file).read_bytes().decode("utf-8", errors="surrogateescape").replace("\r\n", "\n")
    return patch.diff.strip("\n") in text


def write(mail: Mail, repaired: Sequence[Repaired | None], base_dir: Path, source: str) -> list[Written]:
    """Each patch as a file the series applies (written where needed), in order."""
    out: list[Written] = []
    folder = base_dir / FOLDER
    names: set[str] = set()
    for patch, fixed in zip(mail.patches, repaired):
        if fixed is None and _alone(patch, mail):
            path = Path(patch.file)
            data = path.read_bytes()
            out.append(Written(path, False, MailPatch(file=str(path), sha256=hashlib.sha256(data).hexdigest(),
                                                      subject=patch.subject, message_id=patch.message_id)))
            continue
        note = ""
        if fixed is not None:
            inferred = f"; {fixed.inferred} line(s) kept the mail's words, indented as their neighbours" \
                if fixed.inferred else ""
            note = f"iolab: diff repaired against {source} from {fixed.cause}{inferred}"
        name = slug(patch)
        while name in names:
            name = name.removesuffix(".patch") + "-1.patch"
        names.add(name)
        path = folder / name
        text = mail_text(patch, fixed.diff if fixed is not None else patch.diff, note)
        _put(path, text)
        part = None
        if fixed is not None and fixed.other_form is not None:
            # the base is the source without this part, so the mail's diff applies to it
            part = path.with_name(path.name.removesuffix(".patch") + ".in-source.patch")
            _put(part, "\n".join([f"The part of {name} that {source} has in another form: the base takes it "
                                  "out (applied reversed), then the series applies the mail's patch.", "",
                                  *fixed.notes, "", fixed.other_form]))
        digest = hashlib.sha256(text.encode(errors="surrogateescape")).hexdigest()
        out.append(Written(path, True, MailPatch(file=str(path), sha256=digest, subject=patch.subject,
                                                 message_id=patch.message_id, repaired=fixed is not None),
                           part, fixed.notes if fixed is not None else ()))
    return out


def _put(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, errors="surrogateescape")
    except OSError as error:
        raise MailError(f"{path}: cannot write the patch: {error.strerror}") from None


def named(path: Path, base_dir: Path | None) -> str:
    """A file as the experiment names it: relative to the experiment's folder
    (``base_dir``; the loader reads it from there, wherever the file is), or
    absolute where the experiment has no folder yet (None: it is printed, to
    be saved anywhere)."""
    if base_dir is None:
        return str(path.resolve())
    return os.path.relpath(path.resolve(), base_dir.resolve())


def record(mail: Mail, written: Sequence[Written], base_dir: Path | None) -> MailRecord:
    """The [mail] table's record: the patches' files as ``named`` says."""
    patches = [w.record.model_copy(update={"file": named(w.path, base_dir)}) for w in written]
    return MailRecord(title=mail.title, message_id=mail.message_id, author=mail.author, date=mail.date,
                      patches=patches)


def toml(mail: MailRecord) -> str:
    """The [mail] table of the experiment iolab patch writes."""
    def value(v: object) -> str:
        return json.dumps(v)  # a TOML basic string: JSON's escapes are TOML's

    lines = ["[mail]                  # the patch mail this experiment was written from (iolab patch)",
             f"title = {value(mail.title)}"]
    for key in ("message_id", "author", "date"):
        if getattr(mail, key) is not None:
            lines.append(f"{key} = {value(getattr(mail, key))}")
    for patch in mail.patches:
        lines += ["", "[[mail.patches]]", f"file = {value(patch.file)}", f"sha256 = {value(patch.sha256)}"]
        if patch.subject:
            lines.append(f"subject = {value(patch.subject)}")
        if patch.message_id:
            lines.append(f"message_id = {value(patch.message_id)}")
        if patch.repaired:
            lines.append("repaired = true")
        for moved in patch.port:  # a port: each hunk placed away from the mail's lines
            lines += ["", "[[mail.patches.port]]", *(f"{key} = {value(v)}" for key, v in moved.model_dump().items())]
    return "\n".join(lines) + "\n"
