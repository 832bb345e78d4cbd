"""A patch mail read once into a typed value: what ``iolab patch`` was given.

Every input form becomes one ``Mail`` (a patch, or a series with its cover
letter) of ``Patch`` values, each mail of the series parsed once:

- a real mail (an mbox of one or several mails, ``git format-patch`` output,
  ``b4 am`` output, one mail as saved from a mail client): Python's ``email``
  splits it, b4 (kernel.org's patch-mail tool) reads its ``[PATCH vN n/m]``
  subject, orders a series and finds its cover letter (``0/m``: read for its
  text, never applied); replies in a thread are left out, as b4 leaves them;
- a plain diff, maybe with prose above it;
- a web archive's copy of a mail (headers as lines such as ``From: Name``,
  context lines without their leading space, blank context lines gone, tabs
  collapsed): read leniently here, its diff repaired against the source by
  iolab.mail.repair;
- such a copy whose line breaks were lost altogether (one line: headers,
  body and diff), its diff kept as found for the repair to align.

Bad input is a MailError naming the file and what is missing.
"""

from __future__ import annotations

import email
import email.policy
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal

from iolab.mail.bounds import MAX_HEADERS, MAX_LINE, headers_size, longest_line

Form = Literal["mail", "diff", "web", "one-line"]


class MailError(ValueError):
    """Input that is not a patch mail, or a series that cannot be put together."""


@dataclass(frozen=True)
class Patch:
    """One mail of a series, parsed once (b4's LoreSubject, then the body)."""

    subject: str  # as given
    title: str  # subject without [PATCH vN n/m] and list prefixes
    revision: int  # vN, 1 when absent
    counter: int  # n of n/m (1 for a lone patch)
    total: int  # m
    message_id: str | None  # without its angle brackets
    author: str | None
    date: str | None  # as the mail gives it
    body: str  # the description: the mail body before the diff (no diff, no signature)
    diff: str  # the diff as found (repair is separate)
    form: Form = "mail"  # how it came: a real mail, a bare diff, a web archive's copy, or one line
    file: str = ""  # the file it was read from


@dataclass(frozen=True)
class Mail:
    """What ``iolab patch`` was given: one patch or a series."""

    title: str  # the cover letter's title, else the single patch's, else the first patch's
    message_id: str | None
    author: str | None
    date: str | None
    cover: str | None  # a 0/m cover letter's body: read for text and numbers, never applied
    patches: tuple[Patch, ...]  # in [PATCH n/m] order
    missing: tuple[int, ...] = ()  # the n of each patch of the series that was not given (not applied)

    def parts(self) -> tuple[str, ...]:
        """The cover letter and every patch's description, each apart."""
        return tuple(([self.cover] if self.cover else []) + [p.body for p in self.patches if p.body])

    def text(self) -> str:
        """The cover letter and every patch's description: what the benchmark and claim readers read."""
        return "\n\n".join(self.parts())


# -- one file --------------------------------------------------------------------------

_HEADER = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*):[ \t]*(.*)$")  # RFC 5322 allows more; Outlook: msip_labels
_WEB_HEADER = re.compile(r"^(From|Date|Subject|Message-I[Dd]|To|Cc)(?::[ \t]*|\t+)(.*)$", re.I)  # lkml.org: a tab
_MBOX_FROM = re.compile(r"^From \S+ .*\d{4}\s*$")
_WEB_HEADERS = ("from", "date", "subject", "message-id", "to", "cc")
_DIFF_GIT = re.compile(r"(?:^|\s)diff --git a/\S+ b/\S+")


def _is_mail(lines: list[str]) -> bool:
    """RFC 822: an mbox 'From ' line or a block of header lines naming a
    Subject, From or Message-Id, ended by a blank line."""
    start = 1 if lines and _MBOX_FROM.match(lines[0]) else 0
    names: set[str] = set()
    for line in lines[start:]:
        if not line.strip():
            break
        if line[:1] in (" ", "\t") and names:
            continue
        match = _HEADER.match(line)
        if match is None:
            return False
        names.add(match.group(1).lower())
    return bool(names & {"subject", "from", "message-id"}) and (start == 1 or "subject" in names)


def _header_block(lines: list[str]) -> int:
    """Where the text below a leading block of mail headers starts (0: none)."""
    if not _is_mail(lines):
        return 0
    return next((i + 1 for i, line in enumerate(lines) if not line.strip()), len(lines))


def _one_line(text: str) -> bool:
    """A copy whose line breaks were lost: a 'diff --git' inside a line, none at a line's start."""
    lines = text.splitlines()
    return (_DIFF_GIT.search(text) is not None
            and not any(line.startswith(("diff --git ", "@@ -", "+++ ")) for line in lines))


def _is_diff_start(lines: list[str], i: int) -> bool:
    line = lines[i]
    if line.startswith("diff --git ") or line.startswith("Index: "):
        return True
    return line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


_DIFFSTAT = re.compile(r"^\s*([^\s|][^|]*[^\s|]|[^\s|])\s+\|\s+(\d+ ?[+-]*|Bin .*)\s*$")
_DIFFSTAT_SUM = re.compile(r"^\s*\d+ files? changed(, \d+ insertions?\(\+\))?(, \d+ deletions?\(-\))?\s*$")
_MODE_LINE = re.compile(r"^\s*(create|delete) mode \d+ |^\s*(rename|copy) .* \(\d+%\)$|^\s*mode change ")


def split_body(text: str) -> tuple[str, str]:
    """A mail body as its description (the text before the diff, without
    git's '---' line, the diffstat or the signature; notes below '---' kept)
    and its diff (from the first 'diff --git' or '--- '/'+++ ' pair, without
    the signature): ("...", "") when it has no diff."""
    lines = text.replace("\r\n", "\n").split("\n")
    start = next((i for i in range(len(lines)) if _is_diff_start(lines, i)), None)
    if start is None:
        return _description(lines), ""
    diff = lines[start:]
    for i in range(len(diff) - 1, -1, -1):  # git's "-- \n2.43.0", or a web copy's "--\n2.43.0"
        if diff[i] in ("-- ", "--") and len([x for x in diff[i + 1:] if x.strip()]) <= 3 \
                and not any(x.startswith(("diff ", "@@", "+++ ")) for x in diff[i + 1:]):
            diff = diff[:i]
            break
    while diff and not diff[-1].strip() and not _completes(diff):
        diff.pop()
    return _description(lines[:start]), "\n".join(diff) + "\n"


def _completes(diff: list[str]) -> bool:
    """The diff's last line, a blank one, is the blank context line that ends its last hunk (kept)."""
    from iolab.kernels.diff import unfinished

    return unfinished(diff) == 0 and unfinished(diff[:-1]) > 0


def _description(lines: list[str]) -> str:
    kept = [line for line in lines if not (_DIFFSTAT.match(line) or _DIFFSTAT_SUM.match(line)
                                           or _MODE_LINE.match(line))]
    if "-- " in kept:  # a signature below a mail without a diff
        kept = kept[:kept.index("-- ")]
    while kept and (not kept[-1].strip() or kept[-1].strip() == "---"):
        kept.pop()
    while kept and not kept[0].strip():
        kept.pop(0)
    if "---" in kept:  # git's line between the commit message and its notes
        kept.remove("---")
    return "\n".join(kept)


def _subject_parts(subject: str) -> tuple[str, int, int, int, bool, bool]:
    """b4's reading of a subject: (title, revision, counter, total, counted, reply)."""
    import b4

    parsed = b4.LoreSubject(subject)
    return (parsed.subject, parsed.revision, parsed.counter, parsed.expected, not parsed.counters_inferred,
            parsed.reply)


@dataclass(frozen=True)
class _Item:
    """A mail of one file before the series is put together."""

    patch: Patch
    counted: bool  # its subject said n/m
    reply: bool


def _first_file(diff: str) -> str:
    from iolab.kernels.diff import paths

    names = paths(diff)
    if not names:
        match = re.search(r"diff --git a/(\S+)", diff)
        names = [match.group(1)] if match else []
    if not names:
        return ""
    more = len(names) - 1
    return names[0] + (f" (and {more} more file{'s' if more > 1 else ''})" if more else "")


def _item(subject: str, *, message_id: str | None, author: str | None, date: str | None, body: str,
          diff: str, form: Form, file: str) -> _Item:
    if subject:
        title, revision, counter, total, counted, reply = _subject_parts(subject)
    else:
        title, revision, counter, total, counted, reply = "", 1, 1, 1, False, False
    title = title or _first_file(diff)
    patch = Patch(subject=subject, title=title, revision=revision, counter=counter, total=total,
                  message_id=message_id, author=author, date=date, body=body, diff=diff, form=form, file=file)
    return _Item(patch, counted, reply)


def _web(text: str, file: str) -> _Item:
    """A copy without mail headers: a plain diff, or a web archive's copy of a
    mail (a subject line, then lines such as 'From: Name' and 'Date: ...')."""
    lines = text.replace("\r\n", "\n").split("\n")
    found: dict[str, str] = {}
    subject = ""
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        match = _WEB_HEADER.match(lines[i].rstrip())  # lkml.org's "Subject<TAB>..." keeps its tab
        if not line:
            i += 1
        elif match and match.group(1).lower() in _WEB_HEADERS and match.group(1).lower() not in found:
            found[match.group(1).lower()] = match.group(2).strip()
            i += 1
        elif not subject and not found and not _is_diff_start(lines, i):
            subject = line  # the archive's title line: the subject
            i += 1
        else:
            break
    subject = found.get("subject", subject)
    description, diff = split_body("\n".join(lines[i:]))
    if subject and not found and not diff:
        description = "\n".join([subject, description]).strip()
    form: Form = "web" if found or re.match(r"^(re:\s*)?\[", subject, re.I) else "diff"
    return _item(subject, message_id=_clean_id(found.get("message-id")), author=found.get("from"),
                 date=found.get("date"), body=description, diff=diff, form=form, file=file)


_ONE_LINE_KEY = re.compile(r"\b(From|Date|Subject|Message-I[Dd]|To|Cc): ")
_MBOX_PREFIX = re.compile(r"^\s*From [0-9a-f]{40} Mon Sep 17 00:00:00 2001\s+")


def _one_line_subject(rest: str) -> tuple[str, str]:
    """Where a subject ends in a copy without line breaks: before the first
    capitalised word ("Under stress tests ...") after the subsystem prefix
    and its first word, or at a sentence's end. A guess the title line then
    shows; the diff does not depend on it."""
    words = rest.split(" ")
    start = 0  # after the [PATCH ...] tags
    if words[0].startswith("["):
        start = next((k + 1 for k, word in enumerate(words) if word.endswith("]")), 0)
    while start < len(words) and words[start].endswith(":"):  # "f2fs:", "mm/readahead:"
        start += 1
    for k in range(start + 1, len(words)):
        if re.match(r"^[A-Z][a-z]", words[k]) or words[k - 1].endswith("."):
            return " ".join(words[:k]).rstrip("."), " ".join(words[k:])
    return " ".join(words), ""


def _one_line_mail(text: str, file: str) -> _Item:
    """A copy whose line breaks were lost (headers, body and diff on one line)."""
    flat = " ".join(text.split())
    flat = _MBOX_PREFIX.sub("", flat)
    diff_at = _DIFF_GIT.search(flat)
    assert diff_at is not None
    head, diff = flat[:diff_at.start()].strip(), flat[diff_at.start():].strip()
    signature = re.search(r"\s--\s+\S+\s*$", diff)  # git's "-- 2.47.3"
    if signature:
        diff = diff[:signature.start()]
    stat = re.search(r"\s---\s+\S+\s+\|\s+\d+", " " + head)  # "--- fs/f2fs/node.c | 14 +++"
    if stat:
        head = (" " + head)[:stat.start()].strip()
    found: dict[str, str] = {}
    body = head
    keys = list(_ONE_LINE_KEY.finditer(head))
    if keys and keys[0].start() == 0:
        chain = [keys[0]]
        for key in keys[1:]:  # the headers come one after the other at the top
            value = head[chain[-1].end():key.start()]
            if len(value.split()) > 12:
                break
            chain.append(key)
        for key, following in zip(chain, chain[1:]):
            found[key.group(1).lower()] = head[key.end():following.start()].strip()
        last, rest = chain[-1].group(1).lower(), head[chain[-1].end():]
        if last == "subject":
            found[last], body = _one_line_subject(rest)
        else:
            cut = re.match(r"(\S+)\s*(.*)$", rest) if last == "message-id" else \
                re.match(r"(.*?(?:[+-]\d{4}|\b[A-Z]{3}))\s+(.*)$", rest) if last == "date" else None
            found[last], body = (cut.group(1), cut.group(2)) if cut else ("", rest)
    return _item(found.get("subject", ""), message_id=_clean_id(found.get("message-id")),
                 author=found.get("from"), date=found.get("date"), body=body.strip(), diff=diff,
                 form="one-line", file=file)


def _clean_id(value: str | None) -> str | None:
    if not value:
        return None
    value = value.strip().strip("<>").strip()
    return value or None


# -- real mails: email splits them, b4 reads subjects and puts the series together --------


def _messages(data: bytes, file: str) -> list[EmailMessage]:
    import b4

    _quiet_b4()
    for mail in re.split(rb"\n(?=From \S+ .*\d{4}\s*\n)", data):
        headers = headers_size(mail)
        if headers > MAX_HEADERS:
            raise MailError(f"{file}: a mail's headers are {headers} bytes, more than {MAX_HEADERS} (not a list's mail)")
    first = data.lstrip().split(b"\n", 1)[0]
    if _MBOX_FROM.match(first.decode(errors="replace")):
        messages = list(b4.mailsplit_bytes(data.lstrip()))
    else:
        messages = [email.message_from_bytes(data, _class=EmailMessage, policy=email.policy.default)]
    for message in messages:
        if (longest := longest_line(message)) > MAX_LINE:
            raise MailError(f"{file}: a line of {longest} bytes, more than {MAX_LINE} (not a list's mail)")
    return messages


def _quiet_b4() -> None:
    """b4 logs what it decides; iolab says what matters itself."""
    logger = logging.getLogger("b4")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _lore(message: EmailMessage, synthetic: str) -> Any:
    """b4's LoreMessage of a mail (one without a Message-Id gets a stand-in:
    b4 needs one to thread; the Patch keeps None)."""
    import b4

    if not b4.LoreMessage.get_clean_msgid(message):
        del message["Message-Id"]
        message["Message-Id"] = f"<{synthetic}>"
    return b4.LoreMessage(message)


def _header(message: EmailMessage, name: str) -> str | None:
    import b4

    try:
        value = message.get(name)
    except (AttributeError, LookupError, TypeError, ValueError):  # email's parser on a broken header (the fuzz)
        return None
    return b4.LoreMessage.clean_header(str(value)) if value is not None else None


def _from_lore(lore: Any, synthetic: set[str], file: str) -> _Item:
    import b4

    payload, _charset = b4.LoreMessage.get_payload(lore.msg)
    body, diff = split_body(payload)
    text, _charset = b4.LoreMessage.get_payload(lore.msg, use_patch=False)
    if text != payload:  # the patch attached: the description is the mail's text above it, and the patch's own
        lines = payload.split("\n")
        own = "\n".join(lines[_header_block(lines):])
        body = "\n\n".join(part for part in (split_body(text)[0], split_body(own)[0]) if part)
    subject = _header(lore.msg, "Subject") or ""
    item = _item(subject, message_id=None if lore.msgid in synthetic else lore.msgid,
                 author=_header(lore.msg, "From"), date=_header(lore.msg, "Date"), body=body, diff=diff,
                 form="mail", file=file)
    # b4's series reading may have fixed the revision from the thread
    patch = Patch(**{**item.patch.__dict__, "revision": lore.revision})
    return _Item(patch, item.counted, item.reply)


def _series_of_mails(mails: list[tuple[EmailMessage, str]]) -> tuple[_Item | None, list[_Item]]:
    """A cover letter and the patches of the newest revision, ordered, as b4 puts them together."""
    import b4

    _quiet_b4()
    b4.can_network = False
    box = b4.LoreMailbox()
    synthetic: set[str] = set()
    files: dict[str, str] = {}
    for number, (message, file) in enumerate(mails):
        stand_in = f"iolab-{number}@mail.invalid"
        try:
            lore = _lore(message, stand_in)
            box.add_message(lore.msg)
        except (AttributeError, LookupError, TypeError, ValueError) as error:  # email's parser on a broken header
            raise MailError(f"{file}: a mail b4 cannot read ({type(error).__name__}: {str(error)[:80]})") from None
        if lore.msgid == stand_in:
            synthetic.add(stand_in)
        files[lore.msgid] = file
    series = box.get_series(codereview_trailers=False) if box.series else None
    # a cover letter alone (b4 files one sent in reply to an earlier version as a follow-up): read()
    # refuses it unless asked (iolab mail)
    lone = box.covers[max(box.covers)] if box.covers else \
        next((f for f in box.followups if f.counter == 0 and f.expected >= 1 and not f.has_diff
              and not (_header(f.msg, "Subject") or "").lower().startswith("re:")), None) or \
        next((u for u in box.unknowns if len(mails) == 1 and not u.has_diff and not u.reply), None)  # [PATCHSET v3]
    if series is None and lone is not None:
        return _from_lore(lone, synthetic, files[lone.msgid]), []
    if series is None:
        raise MailError(_no_patch_message([files[m] for m in files]))
    cover = series.patches[0] if series.has_cover else None
    members = series.patches[1:]
    items = [_from_lore(member, synthetic, files[member.msgid]) for member in members if member is not None]
    return (_from_lore(cover, synthetic, files[cover.msgid]) if cover is not None else None), items


def _no_patch_message(files: list[str]) -> str:
    names = ", ".join(sorted(set(files)))
    return f"{names}: no patch in it (no mail with a diff: a reply or a cover letter alone is not a patch)"


# -- all files ------------------------------------------------------------------------


def read(paths: Sequence[Path], *, cover_alone: bool = False) -> Mail:
    """The mail these files hold: a patch, or a series in [PATCH n/m] order
    with its cover letter. A file is an mbox (one or several mails), a mail,
    a web archive's copy of one (with or without its line breaks) or a plain
    diff; several files are one series. ``b4 am`` output is read whole: its
    NAME.mbx with the NAME.cover b4 writes beside it (the cover letter)."""
    items: list[_Item] = []
    covers: list[_Item] = []
    mails: list[tuple[EmailMessage, str]] = []
    given = {Path(p).resolve() for p in paths}
    paths = [*paths, *(cover for cover in (Path(p).with_suffix(".cover") for p in paths if Path(p).suffix == ".mbx")
                       if cover.is_file() and cover.resolve() not in given)]
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise MailError(f"{path}: {error.strerror}") from None
        text = data.decode("utf-8", errors="replace")
        if not text.strip():
            raise MailError(f"{path}: empty")
        if "\x00" in text:
            raise MailError(f"{path}: not a mail or a diff (binary data)")
        lines = text.lstrip().splitlines()
        if _one_line(text):
            items.append(_one_line_mail(text, str(path)))
        elif _is_mail(lines):
            mails += [(message, str(path)) for message in _messages(data, str(path))]
        else:
            item = _web(text, str(path))
            if item.reply and not item.patch.diff:
                continue  # a reply in the thread, as b4 leaves it out
            if not item.patch.diff and item.counted and item.patch.counter == 0:
                covers.append(item)
            else:
                items.append(item)
    if mails:
        cover, found = _series_of_mails(mails)
        covers += [cover] if cover is not None else []
        items += found
    without = [item.patch.file for item in items if not item.patch.diff]
    if without:
        raise MailError(f"{without[0]}: no diff in it (expected a patch: 'diff --git', or '--- a/...' and "
                        "'+++ b/...' lines, then '@@' hunks)")
    if not items and cover_alone and len(covers) == 1:  # iolab mail reads a cover letter's claims alone
        return _assemble([], covers[0], ())
    if not items:
        raise MailError(_no_patch_message([str(p) for p in paths]))
    if len(covers) > 1:
        raise MailError(f"{covers[0].patch.file}, {covers[1].patch.file}: two cover letters (0/m): give one series")
    patches, missing = _ordered(items)
    return _assemble(patches, covers[0] if covers else None, missing)


def _ordered(items: list[_Item]) -> tuple[list[Patch], tuple[int, ...]]:
    """[PATCH n/m] order when every patch says its n of one m (each n once),
    and the n of those not given; else the order given."""
    counted = all(item.counted for item in items) and len({item.patch.total for item in items}) == 1
    counters = [item.patch.counter for item in items]
    if counted and len(set(counters)) == len(counters):
        items = sorted(items, key=lambda item: item.patch.counter)
        missing = tuple(sorted(set(range(1, items[0].patch.total + 1)) - set(counters)))
        return [item.patch for item in items], missing
    return [item.patch for item in items], ()


def _assemble(patches: list[Patch], cover: _Item | None, missing: tuple[int, ...]) -> Mail:
    first = cover.patch if cover is not None else patches[0]
    return Mail(title=first.title or (patches[0].title if patches else ""), message_id=first.message_id,
                author=first.author,
                date=first.date, cover=cover.patch.body if cover is not None else None, patches=tuple(patches),
                missing=missing)
