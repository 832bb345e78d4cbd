"""Reclaiming what a killed run left, and marking its stored run.

The run journal (iolab.journal) holds, besides knobs and what cells
create, one "run" entry per stored run in progress: {"store", "run_id"}. A
run whose process died (SIGKILL, a crash, a power cut) is marked
`interrupted` in its store by the next `iolab run`, `iolab doctor` or
`iolab cleanup`, so `iolab resume` can continue it.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from iolab import knobs
from iolab.journal import default_journal, legacy_journal, owner_alive
from iolab.store import Store, StoreError
from iolab.store.db import is_url, shown


def _mark_interrupted(undo: dict[str, Any], label: str) -> str:
    path, run_id = undo["store"], int(undo["run_id"])
    if not is_url(path) and not os.path.exists(path):
        return f"{path} is gone"
    try:
        store = Store(path)
        if store.run(run_id).status != "running":
            return f"run {run_id} is {store.run(run_id).status} already"
        store.end_run(run_id, "interrupted", "its process was killed")
    except (StoreError, sqlite3.Error, OSError) as error:
        raise knobs.KnobError(f"{label}: cannot mark it interrupted in {path}: {error}") from None
    return f"marked run {run_id} interrupted in {path} (iolab resume {run_id} continues it)"


def _mark_killed(undo: dict[str, Any], label: str) -> str:
    """An agent's try at a queued round, whose agent died (iolab.run.agent):
    marked killed; the queue gives the round to another agent, and this
    try's samples stay, superseded."""
    where, attempt_id = undo["store"], int(undo["attempt_id"])
    try:
        store = Store(where)
        changed = store.end_attempt(attempt_id, "killed", "its agent was killed", only_running=True)
        store.close()
    except (StoreError, OSError) as error:
        raise knobs.KnobError(f"{label}: cannot mark it killed in {where}: {error}") from None
    except Exception as error:  # psycopg's errors (the server is away): kept for the next try
        raise knobs.KnobError(f"{label}: cannot mark it killed in {where}: {str(error)[:200]}") from None
    return f"marked it killed in {where}" if changed else "it had ended already"


def reclaim(journal: Path | None = None) -> list[knobs.Recovered]:
    """Undo what dead iolab processes left (knobs, loop devices, images,
    mounts, processes) and mark their runs interrupted (and the rounds of
    dead agents killed)."""
    found = []
    for path in (journal or default_journal(), *([] if journal else [legacy_journal()])):
        if path.exists():
            found += knobs.recover(path, extra={"run": _mark_interrupted, "attempt": _mark_killed})
    return found


def live_runs(journal: Path | None = None) -> set[tuple[str, int]]:
    """(store, run id) of the runs whose iolab process is alive (their "run" entries)."""
    live = set()
    for item in knobs.Journal(journal or default_journal()).entries():
        undo = item.get("undo", {})
        if undo.get("kind") == "run" and owner_alive(int(item.get("pid", 0)), item.get("start")):
            live.add((str(undo.get("store")), int(undo.get("run_id", 0))))
    return live


def store_name(store: Store) -> str:
    """How the journal names a store: its URL, or its file's absolute path."""
    return store.where if is_url(store.where) else str(Path(store.where).resolve())


def report(found: list[knobs.Recovered], who: str = "a killed run") -> None:
    """Say on stderr what recovery did."""
    for item in found:
        if item.outcome == "restored":
            print(f"iolab: reclaimed what {who} left: {item.text}", file=sys.stderr)
        elif item.outcome == "failed":
            print(f"iolab: could not reclaim what {who} left: {item.text}", file=sys.stderr)


@contextmanager
def journalled_run(store: Store, run_id: int, journal: Path | None = None) -> Iterator[None]:
    """A "run" entry for the block: if this process dies, recovery marks the
    run interrupted. The entry stays when the block ends with the run still
    `running` (its store refused the final update: a full disk)."""
    jrnl = knobs.Journal(journal or default_journal())
    where = store_name(store)  # the label names the store: run ids repeat from store to store
    entry = jrnl.add(f"run {run_id} of {shown(where)}", {"kind": "run", "store": where, "run_id": run_id})
    try:
        yield
    finally:
        try:
            ended = store.run(run_id).status != "running"
        except (StoreError, sqlite3.Error):
            ended = False
        if ended:
            jrnl.discard(entry)
