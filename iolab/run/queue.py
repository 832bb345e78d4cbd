"""The queue of rounds, on procrastinate (a task queue in PostgreSQL).

iolab writes no queue of its own: a queued run's rounds are procrastinate
jobs of one task, ``iolab.round`` (args: run id and round), in the store's
own database (procrastinate's tables beside iolab's). What iolab adds is
the mapping of labels to procrastinate queues:

- A job is queued for a set of labels (``iolab submit --labels nvme,x86``):
  its queue is ``iolab`` for none, else ``iolab:`` and the sorted labels
  joined by commas (``iolab:nvme,x86``).
- An agent with labels L takes the jobs of every queue whose labels are a
  subset of L (an agent labelled nvme,x86,big runs a job that asks for
  nvme), so it listens on the queues of the subsets of L.

procrastinate's NOTIFY channel of a queue is ``procrastinate_queue_v1#`` and
the queue name, and PostgreSQL refuses a channel name over 63 bytes: a
queue name has at most MAX_QUEUE characters, and an agent at most
MAX_AGENT_LABELS labels (2^8 queues to listen on).
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Any

from iolab.spec import SpecError
from iolab.store.db import PostgreSQL

if TYPE_CHECKING:
    import procrastinate

    from iolab.store import Store

TASK = "iolab.round"
QUEUE = "iolab"
MAX_QUEUE = 40
MAX_AGENT_LABELS = 8
LABEL = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,23}$")
SCHEMA_LOCK = 0x10_1AB6  # advisory lock id of the queue's schema check (iolab.store.db uses 0x101AB5)


def labels(text: str | None, what: str = "--labels") -> tuple[str, ...]:
    """Labels from a comma-separated list, sorted and unique; SpecError names a bad one."""
    found = sorted({part.strip() for part in (text or "").split(",") if part.strip()})
    for label in found:
        if not LABEL.match(label):
            shown = label if len(label) <= 30 else label[:27] + "..."
            raise SpecError(f"{what}: label {shown!r}: use lower-case letters, digits, '_', '.', '-' "
                            "(at most 24 characters, starting with a letter or digit)")
    return tuple(found)


def queue_of(wanted: tuple[str, ...]) -> str:
    """The procrastinate queue of jobs for agents with these labels."""
    name = f"{QUEUE}:{','.join(wanted)}" if wanted else QUEUE
    if len(name) > MAX_QUEUE:
        raise SpecError(f"--labels: {','.join(wanted)!r} is too long for a queue name "
                        f"(at most {MAX_QUEUE - len(QUEUE) - 1} characters with the commas)")
    return name


def queues_for(agent_labels: tuple[str, ...]) -> list[str]:
    """Every queue an agent with these labels takes jobs from."""
    if len(agent_labels) > MAX_AGENT_LABELS:
        raise SpecError(f"--labels: at most {MAX_AGENT_LABELS} labels per agent, got {len(agent_labels)}")
    found = []
    for size in range(len(agent_labels) + 1):
        for subset in itertools.combinations(agent_labels, size):
            name = f"{QUEUE}:{','.join(subset)}" if subset else QUEUE
            if len(name) <= MAX_QUEUE:  # a longer one cannot have been queued
                found.append(name)
    return found


def postgres(store: Store) -> PostgreSQL:
    """The store's PostgreSQL database, where the queue lives; an SQLite store is refused."""
    if not isinstance(store.sql, PostgreSQL):
        raise SpecError(f"--store: the queue lives in PostgreSQL; {store.where} is an SQLite file "
                        "(give --store postgresql://... or set IOLAB_STORE)")
    return store.sql


def ensure_schema(store: Store) -> None:
    """Create procrastinate's tables in the store's database if they are not
    there (once, under an advisory lock, as the store's own schema)."""
    from procrastinate.schema import SchemaManager

    sql = postgres(store)
    with sql.transaction():
        sql.execute("SELECT pg_advisory_xact_lock(?)", (SCHEMA_LOCK,))
        if sql.query("SELECT to_regclass('procrastinate_jobs')")[0][0] is None:
            sql.db.execute(SchemaManager.get_schema())


def app(url: str) -> procrastinate.App:
    """A procrastinate app on the store's database (not opened yet)."""
    import procrastinate

    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url, min_size=1, max_size=4))


def rounds_by_status(store: Store, run_id: int) -> dict[str, int]:
    """The run's jobs by procrastinate status (todo, doing, succeeded, failed, ...)."""
    rows = store.db.execute(
        "SELECT status::text, count(*) FROM procrastinate_jobs WHERE task_name = %s"
        " AND (args->>'run_id')::bigint = %s GROUP BY status", (TASK, run_id)).fetchall()
    return dict(rows)


def heartbeats(store: Store) -> dict[int, float]:
    """Seconds since each live procrastinate worker's last heartbeat, by worker id."""
    rows = store.db.execute(
        "SELECT id, extract(epoch FROM now() - last_heartbeat) FROM procrastinate_workers").fetchall()
    return {int(worker): float(age) for worker, age in rows}


def job_owner(store: Store, job_id: int) -> dict[str, Any] | None:
    """The job's status, worker and tries, as procrastinate has them."""
    row = store.db.execute(
        "SELECT status::text, worker_id, attempts FROM procrastinate_jobs WHERE id = %s", (job_id,)).fetchone()
    return None if row is None else {"status": row[0], "worker_id": row[1], "attempts": row[2]}


def cancel_queued(url: str, run_id: int) -> int:
    """Cancel the run's rounds still waiting in the queue (procrastinate's
    cancel); how many."""
    app_ = app(url)
    with app_.open():
        waiting = [job for job in app_.job_manager.list_jobs(task=TASK, status="todo")
                   if job.task_kwargs.get("run_id") == run_id]
        return sum(1 for job in waiting if job.id is not None and app_.job_manager.cancel_job_by_id(job.id))
