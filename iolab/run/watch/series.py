"""Messages of a list grouped into series, as b4 groups them.

Each message is read once (Python's email, then b4's LoreMessage: its
``[PATCH vN n/m]`` subject, Message-Id, In-Reply-To, whether it holds a
diff). Replies and messages without a diff are skipped, each with its
reason. The others are put into threads (a patch and the message it answers,
up to the thread's first message), and each thread into b4's LoreMailbox,
which sorts them into revisions, orders each revision's patches and finds
its cover letter, as ``b4 am`` does. A revision whose patches are not all
there yet is kept for the next pass; of the versions of one series (one
author, one title) only the newest is tested, the others are superseded.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import logging
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from iolab.run.watch.inbox import MAX_MESSAGE, Message


@dataclass(frozen=True)
class Member:
    """A cover letter or a patch of a series."""

    message_id: str
    subject: str
    counter: int
    body: str  # the description (no diff)
    diff: str
    source: Message


@dataclass(frozen=True)
class Series:
    title: str
    subject: str  # the cover letter's, else the first patch's, as sent
    revision: int
    message_id: str  # the cover letter's, else the first patch's
    author: str
    family: str  # the author's address and the title: the versions of one series share it
    headers: dict[str, Any]  # what a reply needs: from, to, cc, references, subject, message_id
    cover: Member | None
    patches: tuple[Member, ...]  # in n/m order

    @property
    def key(self) -> str:
        return f"{self.message_id} v{self.revision}"

    @property
    def text(self) -> str:
        """The cover letter and every patch's description: where the claims are."""
        return "\n\n".join(part for part in ([self.cover.body] if self.cover else [])
                           + [p.body for p in self.patches] if part)

    @property
    def members(self) -> tuple[Member, ...]:
        return ((self.cover,) if self.cover else ()) + self.patches


@dataclass(frozen=True)
class Skip:
    message_id: str
    subject: str
    reason: str


@dataclass
class Grouped:
    series: list[Series] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    pending: list[Message] = field(default_factory=list)  # messages of series not whole yet


def _quiet_b4() -> None:
    logger = logging.getLogger("b4")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _shown(text: str, width: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def parse(message: Message) -> tuple[Any, Skip | None]:
    """b4's LoreMessage of one message, or why it is skipped."""
    import b4

    where = f"{message.epoch}:{message.commit[:12]}"
    if message.size > MAX_MESSAGE:
        return None, Skip(where, "", f"too large ({message.size} bytes; at most {MAX_MESSAGE})")
    from iolab.mail.bounds import MAX_HEADERS, MAX_LINE, headers_size, longest_line

    headers = headers_size(message.data)
    if headers > MAX_HEADERS:  # Python's email takes minutes over a huge header
        return None, Skip(where, "", f"headers of {headers} bytes (at most {MAX_HEADERS})")
    try:
        msg = email.message_from_bytes(message.data, _class=EmailMessage, policy=email.policy.default)
        if (longest := longest_line(msg)) > MAX_LINE:  # b4's trailer search is quadratic in a line
            return None, Skip(where, "", f"a line of {longest} bytes (at most {MAX_LINE})")
        msgid = b4.LoreMessage.get_clean_msgid(msg)
        if not msgid:
            return None, Skip(where, _shown(str(msg.get("Subject", ""))), "no Message-Id")
        lore = b4.LoreMessage(msg)
    except Exception as error:  # noqa: BLE001 -- a list's message is untrusted: any failure to read it is a skip
        return None, Skip(where, "", f"unreadable ({type(error).__name__}: {_shown(str(error), 60)})")
    subject = _shown(lore.full_subject)
    if lore.reply:
        return None, Skip(lore.msgid, subject, "a reply")
    return lore, None  # without a diff it may be a cover letter: its thread says


def _root(lore: Any, by_id: dict[str, Any]) -> str:
    """The first message of its thread among those read (In-Reply-To, then References)."""
    seen = {lore.msgid}
    current = lore
    while True:
        parent = current.in_reply_to or next((r for r in reversed(current.references) if r in by_id), None)
        if parent is None or parent not in by_id or parent in seen:
            return str(current.msgid)
        seen.add(parent)
        current = by_id[parent]


def group(messages: list[Message]) -> Grouped:
    """The series these messages hold, what was skipped and why, and the
    messages of series not whole yet (to read again next pass)."""
    _quiet_b4()
    found = Grouped()
    lores: dict[str, tuple[Any, Message]] = {}
    for message in messages:
        lore, skip = parse(message)
        if skip is not None:
            found.skipped.append(skip)
        elif lore.msgid in lores:
            found.skipped.append(Skip(lore.msgid, _shown(lore.full_subject), "its Message-Id again (the first "
                                      f"message of that Message-Id, commit {lores[lore.msgid][1].commit[:12]}, is read)"))
        else:
            lores[lore.msgid] = (lore, message)
    by_id = {msgid: lore for msgid, (lore, _) in lores.items()}
    threads: dict[str, list[str]] = {}
    for msgid, (lore, _) in lores.items():
        threads.setdefault(_root(lore, by_id), []).append(msgid)
    for members in threads.values():
        _thread([lores[m] for m in members], found)
    return _newest(found)


def _thread(members: list[tuple[Any, Message]], found: Grouped) -> None:
    import b4

    box = b4.LoreMailbox()
    source = {lore.msgid: message for lore, message in members}
    try:
        for lore, _ in members:
            box.add_message(lore.msg)
        revisions = sorted(box.series)
        series = [box.get_series(revision, reroll=False, codereview_trailers=False) for revision in revisions]
    except Exception as error:  # noqa: BLE001 -- b4 on a hostile thread: its messages are skipped, each said
        for lore, _ in members:
            found.skipped.append(Skip(lore.msgid, _shown(lore.full_subject),
                                      f"b4 could not put its thread together ({type(error).__name__})"))
        return
    used: set[str] = set()
    for lser in series:
        if lser is None:
            continue
        present = [m for m in lser.patches[1:] if m is not None]
        used.update(m.msgid for m in lser.patches if m is not None)
        missing = [n for n, m in enumerate(lser.patches) if n and m is None]
        if missing:
            first = lser.patches[0] if lser.has_cover else present[0] if present else None
            shown = ", ".join(map(str, missing[:8])) + (", ..." if len(missing) > 8 else "")
            found.skipped.append(Skip(first.msgid if first else "?", _shown(first.full_subject if first else ""),
                                      f"v{lser.revision}: patch {shown} of {lser.expected} not read yet "
                                      "(kept for the next pass)"))
            found.pending += [source[m.msgid] for m in lser.patches if m is not None and m.msgid in source]
            continue
        found.series.append(_series(lser, source))
    for lore, message in members:
        if lore.msgid not in used:
            if lore.has_diff:
                why = "not part of a series b4 could put together"
            elif lore.counter == 0 and not lore.counters_inferred:  # a 0/m whose patches have not come yet
                why = "a cover letter without its patches yet (kept for the next pass)"
                found.pending.append(message)
            else:
                why = "no diff"
            found.skipped.append(Skip(lore.msgid, _shown(lore.full_subject), why))


def _member(lore: Any, message: Message) -> Member:
    from iolab.mail.message import split_body

    body, diff = split_body(lore.body or "")
    return Member(lore.msgid, lore.full_subject, lore.counter, body, diff, message)


def _address(name: str, address: str) -> str | None:
    """An address to reply to, or None (none, or not one a reply can be sent to: not ASCII)."""
    if "@" not in address:
        return None
    try:
        return email.utils.formataddr((name, address))
    except (UnicodeError, ValueError):
        return None


def _addresses(msg: EmailMessage, name: str) -> list[str]:
    try:
        values = [str(v) for v in msg.get_all(name, [])]
    except Exception:  # noqa: BLE001 -- a header email's policy cannot parse: no addresses from it
        return []
    return [found for pair in email.utils.getaddresses(values) if (found := _address(*pair))]


def _series(lser: Any, source: dict[str, Message]) -> Series:
    cover = lser.patches[0] if lser.has_cover else None
    patches = tuple(_member(m, source[m.msgid]) for m in lser.patches[1:] if m is not None and m.msgid in source)
    first = cover if cover is not None else lser.patches[1]
    author = _address(first.fromname, first.fromemail) or ""
    headers = {"from": author, "to": _addresses(first.msg, "To"), "cc": _addresses(first.msg, "Cc"),
               "references": [*first.references[-8:]], "subject": first.full_subject, "message_id": first.msgid}
    title = first.subject
    family = f"{first.fromemail.lower()} {re.sub(r'[^a-z0-9]+', ' ', title.lower()).strip()}"
    return Series(title=title, subject=first.full_subject, revision=lser.revision, message_id=first.msgid,
                  author=author, family=family, headers=headers,
                  cover=_member(cover, source[cover.msgid]) if cover is not None and cover.msgid in source else None,
                  patches=patches)


def _newest(found: Grouped) -> Grouped:
    """Of the versions of one series read in this pass, only the newest is tested."""
    newest: dict[str, Series] = {}
    for series in found.series:
        if series.family not in newest or series.revision > newest[series.family].revision:
            newest[series.family] = series
    kept = []
    for series in found.series:
        latest = newest[series.family]
        if latest is series:
            kept.append(series)
        else:
            found.skipped.append(Skip(series.message_id, _shown(series.subject),
                                      f"superseded by v{latest.revision} <{latest.message_id}>"))
    found.series = kept
    return found
