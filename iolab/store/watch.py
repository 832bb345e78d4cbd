"""The list robot's memory (``iolab watch``, iolab.run.watch), in the store
beside the runs it queues (schema version 7):

- ``watch_positions``: per inbox (its absolute path) and epoch (``0``,
  ``1``, ... of a public-inbox v2 mirror; ``.`` for a single repository),
  the last commit read;
- ``watch_series``: each series it checked, once (key: the Message-Id of its
  cover letter or first patch, and its revision): queued (with its run) or
  skipped (with the reason), then answered (the reply's Message-Id);
- ``watch_pending``: commits of messages whose series was not whole when
  read, read again on the next pass.

Functions of a Store (iolab.store.Store), in the store's one SQL dialect.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from iolab.store import Store

SeriesStatus = Literal["queued", "skipped", "answered"]  # as the schema's CHECK


@dataclass(frozen=True)
class Checked:
    """A series the robot checked (a row of watch_series)."""

    id: int
    inbox: str
    key: str
    family: str  # author and title: the versions of one series share it
    subject: str
    revision: int
    message_id: str  # the cover letter's, else the first patch's
    headers: dict[str, Any]  # from, to, cc, references: what a reply needs
    claims: list[dict[str, Any]]  # the mail's claims as read
    status: SeriesStatus
    reason: str | None
    run_id: int | None
    checked: float
    answered: float | None
    reply_id: str | None


def positions(store: Store, inbox: str) -> dict[str, str]:
    """The last commit read of each epoch of an inbox."""
    return dict(store.sql.query("SELECT epoch, last_commit FROM watch_positions WHERE inbox = ?", (inbox,)))


def set_positions(store: Store, inbox: str, found: dict[str, str]) -> None:
    """Remember the last commit read of each epoch."""
    with store.sql.transaction():
        for epoch, commit in found.items():
            store.sql.execute("DELETE FROM watch_positions WHERE inbox = ? AND epoch = ?", (inbox, epoch))
            store.sql.execute("INSERT INTO watch_positions (inbox, epoch, last_commit, seen) VALUES (?, ?, ?, ?)",
                              (inbox, epoch, commit, time.time()))


def pending(store: Store, inbox: str) -> list[tuple[str, str]]:
    """(epoch, commit) of the messages kept for a series not whole yet, oldest first."""
    return [(e, c) for e, c in store.sql.query(
        "SELECT epoch, commit_id FROM watch_pending WHERE inbox = ? ORDER BY first_seen, commit_id", (inbox,))]


PENDING_DAYS = 14  # a series not whole after this long is given up


def set_pending(store: Store, inbox: str, kept: list[tuple[str, str]]) -> None:
    """The messages to read again next pass (all others are dropped, and
    those kept for more than PENDING_DAYS)."""
    now = time.time()
    with store.sql.transaction():
        before = {c: t for c, t in store.sql.query(
            "SELECT commit_id, first_seen FROM watch_pending WHERE inbox = ?", (inbox,))}
        store.sql.execute("DELETE FROM watch_pending WHERE inbox = ?", (inbox,))
        for epoch, commit in dict.fromkeys(kept):
            if now - before.get(commit, now) > PENDING_DAYS * 86400:
                continue
            store.sql.execute("INSERT INTO watch_pending (inbox, epoch, commit_id, first_seen) VALUES (?, ?, ?, ?)",
                              (inbox, epoch, commit, before.get(commit, now)))


def known(store: Store, key: str) -> Checked | None:
    rows = store.sql.query(f"SELECT {_COLUMNS} FROM watch_series WHERE series_key = ?", (key,))
    return _checked(rows[0]) if rows else None


def add(store: Store, *, inbox: str, key: str, family: str, subject: str, revision: int, message_id: str,
        headers: dict[str, Any], claims: list[dict[str, Any]], status: SeriesStatus, reason: str | None = None,
        run_id: int | None = None) -> int:
    """Remember a series checked (its key once: a second pass finds it)."""
    with store.sql.transaction():
        return store.sql.insert(
            "INSERT INTO watch_series (inbox, series_key, family, subject, revision, message_id, headers_json,"
            " claims_json, status, reason, run_id, checked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (inbox, key, family, subject, revision, message_id, json.dumps(headers, sort_keys=True),
             json.dumps(claims, sort_keys=True), status, reason, run_id, time.time()))


def answered(store: Store, series_id: int, reply_id: str) -> None:
    with store.sql.transaction():
        store.sql.update("UPDATE watch_series SET status = 'answered', answered = ?, reply_id = ? WHERE id = ?",
                         (time.time(), reply_id, series_id))


def checked(store: Store) -> list[Checked]:
    """Every series checked, oldest first."""
    return [_checked(row) for row in store.sql.query(f"SELECT {_COLUMNS} FROM watch_series ORDER BY id")]


_COLUMNS = ("id, inbox, series_key, family, subject, revision, message_id, headers_json, claims_json, status, reason,"
            " run_id, checked, answered, reply_id")


def _checked(row: tuple[Any, ...]) -> Checked:
    return Checked(row[0], row[1], row[2], row[3], row[4], int(row[5]), row[6], json.loads(row[7]),
                   json.loads(row[8]), row[9], row[10], row[11], row[12], row[13], row[14])
