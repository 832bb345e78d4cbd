"""The store: every run and every sample, in an SQLite file or a PostgreSQL
database (iolab.store.db runs the same schema and queries in either).

Samples are facts: each is written (and committed) the moment its cell
ends, and nothing ever updates or deletes it. The schema, its versions
and the migrations of older stores are iolab.store.schema's.

A round counts once: the samples of a round are those of its latest attempt
that was not refused (``COUNTED``); the samples of earlier attempts (an agent
killed mid-round, a round given back) are kept, superseded, out of the
analysis, and shown in the report beside the counted ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from iolab.store import schema as storeschema
from iolab.cell.sample import Sample as Sample  # re-exported: the store keeps samples
from iolab.store.db import StoreError as StoreError  # re-exported
from iolab.store.db import connect, is_url

RunStatus = Literal["running", "complete", "interrupted", "failed"]  # as the schema's CHECK (storeschema)
# one agent's try at a round of a queued run
AttemptStatus = Literal["running", "done", "failed", "refused", "given back", "killed", "stalled"]

# The attempt of a round whose samples count: its latest attempt not refused (0: a run made here).
COUNTED = ("(SELECT coalesce(max(a.attempt), 0) FROM attempts a WHERE a.run_id = s.run_id AND a.round = s.round"
           " AND a.status <> 'refused')")


@dataclass(frozen=True)
class RunInfo:
    id: int
    name: str
    experiment_path: str | None
    experiment_json: str
    seed: int
    planned_cells: int
    status: RunStatus
    started: float
    finished: float | None
    host: dict[str, Any]
    recheck_of: int | None
    stop_reason: str | None = None
    labels: str | None = None  # queued for agents with these labels ("" any agent); None: run here

    @property
    def queued(self) -> bool:
        return self.labels is not None


@dataclass(frozen=True)
class Attempt:
    """One agent's try at one round of a queued run."""

    id: int
    run_id: int
    round: int
    attempt: int  # 0 first; the queue's count of the job's earlier tries
    host: str  # the agent's name
    job_id: int | None
    status: AttemptStatus
    started: float
    finished: float | None
    error: str | None
    host_facts: dict[str, Any]


@dataclass(frozen=True)
class Agent:
    name: str
    labels: str
    allow: str
    hostname: str
    pid: int
    heartbeat: float  # seconds between its heartbeats
    worker_id: int | None
    started: float
    stopped: float | None
    job: str | None


def default_path() -> Path | str:
    """$IOLAB_STORE (a file or a postgresql:// URL), else the per-user SQLite file."""
    if os.environ.get("IOLAB_STORE"):
        where = os.environ["IOLAB_STORE"]
        return where if is_url(where) else Path(where)
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return Path(data_home, "iolab", "iolab.db")


@dataclass(frozen=True)
class Baseline:
    name: str
    run_id: int
    saved: float


class Store:
    """Runs and samples in ``where``: an SQLite file path, or a
    ``postgresql://`` URL."""

    def __init__(self, where: str | os.PathLike[str]):
        self.sql = connect(where)
        self.where = self.sql.where
        self.db = self.sql.db  # the DB-API connection itself (tests look at it)
        storeschema.ensure(self.sql)

    def schema_version(self) -> int:
        return self.sql.version()

    def close(self) -> None:
        self.sql.close()

    # -- runs

    def begin_run(
        self,
        *,
        name: str,
        experiment_path: str | None,
        experiment_json: str,
        seed: int,
        planned_cells: int,
        host: dict[str, Any],
        recheck_of: int | None = None,
        labels: str | None = None,
        files: dict[str, bytes] | None = None,
    ) -> int:
        """Store a new run, with the files its experiment names (``files``:
        name as written -> bytes; iolab.run.inputs), in one transaction."""
        with self.sql.transaction():
            run_id = self.sql.insert(
                "INSERT INTO runs (name, experiment_path, experiment_json, seed, planned_cells,"
                " status, started, host_json, recheck_of, labels) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
                (name, experiment_path, experiment_json, seed, planned_cells, time.time(),
                 json.dumps(host), recheck_of, labels),
            )
            self.sql.executemany(
                "INSERT INTO run_files (run_id, name, sha256, content) VALUES (?, ?, ?, ?)",
                [(run_id, name, hashlib.sha256(data).hexdigest(), zlib.compress(data))
                 for name, data in sorted((files or {}).items())],
            )
        return run_id

    def run_files(self, run_id: int) -> dict[str, bytes]:
        """The files stored with a run, by name as its experiment wrote it
        (StoreError when one does not match its stored digest)."""
        found = {}
        for name, digest, content in self.sql.query(
                "SELECT name, sha256, content FROM run_files WHERE run_id = ? ORDER BY name", (run_id,)):
            data = zlib.decompress(bytes(content))
            if hashlib.sha256(data).hexdigest() != digest:
                raise StoreError(f"run {run_id}: the stored copy of {name!r} does not match its sha256")
            found[name] = data
        return found

    def reopen_run(self, run_id: int) -> None:
        """Mark a stored run running again (iolab resume); its samples stay."""
        with self.sql.transaction():
            self.sql.execute("UPDATE runs SET status = 'running', finished = NULL WHERE id = ?", (run_id,))

    def end_run(self, run_id: int, status: RunStatus, stop_reason: str | None = None) -> None:
        with self.sql.transaction():
            self.sql.execute(
                "UPDATE runs SET status = ?, finished = ?, stop_reason = ? WHERE id = ?",
                (status, time.time(), stop_reason, run_id),
            )

    def run(self, run_id: int) -> RunInfo:
        rows = self.sql.query(
            "SELECT id, name, experiment_path, experiment_json, seed, planned_cells, status,"
            " started, finished, host_json, recheck_of, stop_reason, labels FROM runs WHERE id = ?",
            (run_id,),
        )
        if not rows:
            raise StoreError(f"no run {run_id} in {self.where} (see 'iolab runs')")
        (id_, name, experiment_path, experiment_json, seed, planned_cells, status, started, finished, host_json,
         recheck_of, stop_reason, labels) = rows[0]
        return RunInfo(id_, name, experiment_path, experiment_json, seed, planned_cells, status, started, finished,
                       host=json.loads(host_json), recheck_of=recheck_of, stop_reason=stop_reason, labels=labels)

    def runs(self, name: str | None = None) -> list[RunInfo]:
        """All runs, oldest first; with ``name``, the runs of the experiment of that name."""
        if name is None:
            ids = [row[0] for row in self.sql.query("SELECT id FROM runs ORDER BY id")]
        else:
            ids = [row[0] for row in self.sql.query("SELECT id FROM runs WHERE name = ? ORDER BY id", (name,))]
        return [self.run(run_id) for run_id in ids]

    def latest_run_id(self) -> int:
        row = self.sql.query("SELECT max(id) FROM runs")[0]
        if row[0] is None:
            raise StoreError(f"no runs in {self.where} yet (start one with 'iolab run')")
        return row[0]

    def sample_counts(self, run_id: int) -> tuple[int, int]:
        """(ok, failed) counted samples of a run, warm-ups excluded."""
        rows = dict(
            self.sql.query(
                "SELECT status, count(*) FROM samples s WHERE run_id = ? AND warmup = 0"
                f" AND attempt = {COUNTED} GROUP BY status",
                (run_id,),
            )
        )
        return rows.get("ok", 0), rows.get("failed", 0)

    # -- baselines

    def save_baseline(self, name: str, run_id: int) -> None:
        """Name a run (a name saved again points at the new run)."""
        self.run(run_id)  # refuses a run that is not there
        with self.sql.transaction():
            self.sql.execute(
                "INSERT INTO baselines (name, run_id, saved) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, saved = excluded.saved",
                (name, run_id, time.time()),
            )

    def delete_baseline(self, name: str) -> None:
        with self.sql.transaction():
            self.sql.execute("DELETE FROM baselines WHERE name = ?", (name,))

    def baselines(self) -> list[Baseline]:
        return [Baseline(*row) for row in self.sql.query("SELECT name, run_id, saved FROM baselines ORDER BY name")]

    def baseline(self, name: str) -> Baseline:
        rows = self.sql.query("SELECT name, run_id, saved FROM baselines WHERE name = ?", (name,))
        if not rows:
            known = ", ".join(b.name for b in self.baselines()) or "none yet"
            raise StoreError(f"no baseline named {name!r} in {self.where} (saved: {known}; "
                             f"save one with 'iolab baseline save NAME RUN')")
        return Baseline(*rows[0])

    # -- samples

    def add_sample(self, run_id: int, sample: Sample) -> int:
        with self.sql.transaction():
            sample_id = self.sql.insert(
                "INSERT INTO samples (run_id, seq, round, iteration, warmup, variant, workload,"
                " status, error, started, setup_s, run_s, teardown_s, env_json, attempt, host)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, sample.seq, sample.round, sample.iteration, int(sample.warmup),
                 sample.variant, sample.workload, sample.status, sample.error, sample.started,
                 sample.setup_s, sample.run_s, sample.teardown_s, json.dumps(sample.env, default=str),
                 sample.attempt, sample.host),
            )
            self.sql.executemany(
                "INSERT INTO metrics (sample_id, name, value) VALUES (?, ?, ?)",
                [(sample_id, name, float(value)) for name, value in sample.metrics.items()],
            )
            self.sql.executemany(
                "INSERT INTO histograms (sample_id, name, bins_json) VALUES (?, ?, ?)",
                [(sample_id, name, json.dumps(bins)) for name, bins in sample.histograms.items()],
            )
            self.sql.executemany(
                "INSERT INTO artefacts (sample_id, name, content) VALUES (?, ?, ?)",
                [(sample_id, name, zlib.compress(text.encode())) for name, text in sample.artefacts.items()],
            )
        return sample_id

    def samples(self, run_id: int, *, with_histograms: bool = True, superseded: bool = False) -> list[Sample]:
        """The run's counted samples in cell order; with ``superseded``, only the
        samples of attempts that no longer count (a killed or given-back try at a round)."""
        which = f"s.attempt {'<>' if superseded else '='} {COUNTED}"
        rows = self.sql.query(
            "SELECT id, seq, round, iteration, warmup, variant, workload, status, error, started,"
            f" setup_s, run_s, teardown_s, env_json, attempt, host FROM samples s WHERE run_id = ? AND {which}"
            " ORDER BY seq, attempt",
            (run_id,),
        )
        metrics: dict[int, dict[str, float]] = {row[0]: {} for row in rows}
        histograms: dict[int, dict[str, dict[int, int]]] = {row[0]: {} for row in rows}
        # each query sees the store as it is then: a sample another process adds meanwhile is in the later
        # queries but not in `rows`, and waits for the next read
        for sample_id, name, value in self._for_run("metrics", "name, value", run_id, which):
            if sample_id in metrics:
                metrics[sample_id][name] = value
        if with_histograms:
            for sample_id, name, bins in self._for_run("histograms", "name, bins_json", run_id, which):
                if sample_id in histograms:
                    histograms[sample_id][name] = {int(k): v for k, v in json.loads(bins).items()}
        return [Sample(seq=row[1], round=row[2], iteration=row[3], warmup=bool(row[4]), variant=row[5],
                       workload=row[6], status=row[7], error=row[8], started=row[9], setup_s=row[10],
                       run_s=row[11], teardown_s=row[12], env=json.loads(row[13]), attempt=row[14], host=row[15],
                       metrics=metrics[row[0]], histograms=histograms[row[0]]) for row in rows]

    def _for_run(self, table: str, columns: str, run_id: int, which: str) -> Iterator[tuple[Any, ...]]:
        """A table's rows of one run's samples, in sample and name order (the
        same order from either database)."""
        yield from self.sql.rows(
            f"SELECT t.sample_id, {columns} FROM {table} t JOIN samples s ON s.id = t.sample_id"
            f" WHERE s.run_id = ? AND {which} ORDER BY s.seq, s.attempt, t.name",
            (run_id,),
        )

    def artefact(self, run_id: int, seq: int, name: str) -> str:
        rows = self.sql.query(
            "SELECT a.content FROM artefacts a JOIN samples s ON s.id = a.sample_id"
            f" WHERE s.run_id = ? AND s.seq = ? AND a.name = ? AND s.attempt = {COUNTED}",
            (run_id, seq, name),
        )
        if not rows:
            raise StoreError(f"run {run_id} cell {seq} has no artefact {name!r}")
        return zlib.decompress(bytes(rows[0][0])).decode()

    # -- the queue: attempts at rounds, agents (iolab.run.agent)

    def begin_attempt(self, run_id: int, round_index: int, attempt: int, host: str, job_id: int | None,
                      facts: dict[str, Any]) -> int:
        """Record an agent's try at a round; an earlier try still marked running
        (its agent died, or stopped sending heartbeats) becomes 'stalled'."""
        with self.sql.transaction():
            self.sql.execute(
                "UPDATE attempts SET status = 'stalled', finished = ? WHERE run_id = ? AND round = ?"
                " AND attempt < ? AND status = 'running'", (time.time(), run_id, round_index, attempt))
            return self.sql.insert(
                "INSERT INTO attempts (run_id, round, attempt, host, job_id, status, started, host_json)"
                " VALUES (?, ?, ?, ?, ?, 'running', ?, ?)",
                (run_id, round_index, attempt, host, job_id, time.time(), json.dumps(facts)))

    def end_attempt(self, attempt_id: int, status: AttemptStatus, error: str | None = None, *,
                    only_running: bool = False) -> bool:
        """Mark a try ended; with ``only_running``, only if it is still running. Whether it changed."""
        with self.sql.transaction():
            before = self.sql.query("SELECT status FROM attempts WHERE id = ?", (attempt_id,))
            if not before or (only_running and before[0][0] != "running"):
                return False
            self.sql.execute("UPDATE attempts SET status = ?, finished = ?, error = ? WHERE id = ?",
                             (status, time.time(), error, attempt_id))
        return True

    def attempts(self, run_id: int) -> list[Attempt]:
        rows = self.sql.query(
            "SELECT id, run_id, round, attempt, host, job_id, status, started, finished, error, host_json"
            " FROM attempts WHERE run_id = ? ORDER BY round, attempt", (run_id,))
        return [Attempt(id_, run_id_, round_, attempt, host, job_id, status, started, finished, error,
                        host_facts=json.loads(host_json))
                for id_, run_id_, round_, attempt, host, job_id, status, started, finished, error, host_json in rows]

    def complete_if_done(self, run_id: int, rounds: int) -> bool:
        """Mark a queued run complete once every round has a counted attempt
        that is done; whether this call did it (exactly one agent does)."""
        with self.sql.transaction():
            done = self.sql.query(
                "SELECT count(DISTINCT a.round) FROM attempts a WHERE a.run_id = ? AND a.status = 'done'"
                " AND a.attempt = (SELECT max(b.attempt) FROM attempts b WHERE b.run_id = a.run_id"
                " AND b.round = a.round AND b.status <> 'refused')", (run_id,))[0][0]
            if done < rounds:
                return False
            return self.sql.update(
                "UPDATE runs SET status = 'complete', finished = ? WHERE id = ? AND status = 'running'",
                (time.time(), run_id)) > 0

    def set_run_host(self, run_id: int, host: dict[str, Any]) -> None:
        """A queued run's header facts: the first agent's (when none are set yet)."""
        with self.sql.transaction():
            self.sql.execute("UPDATE runs SET host_json = ? WHERE id = ? AND host_json = '{}'",
                             (json.dumps(host), run_id))

    def restate_run_host(self, run_id: int, host: dict[str, Any]) -> None:
        """A run's header facts as the run ended (a VM run whose accelerator fell back mid-run)."""
        with self.sql.transaction():
            self.sql.execute("UPDATE runs SET host_json = ? WHERE id = ?", (json.dumps(host), run_id))

    def agent_started(self, name: str, labels: str, allow: str, hostname: str, pid: int, heartbeat: float) -> None:
        with self.sql.transaction():
            self.sql.execute("DELETE FROM agents WHERE name = ?", (name,))
            self.sql.execute(
                "INSERT INTO agents (name, labels, allow, hostname, pid, heartbeat, started)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)", (name, labels, allow, hostname, pid, heartbeat, time.time()))

    def agent_update(self, name: str, **fields: Any) -> None:
        """Set an agent's worker_id, job (what it runs now, or None) or stopped."""
        assert set(fields) <= {"worker_id", "job", "stopped"}, fields
        with self.sql.transaction():
            for key, value in fields.items():
                self.sql.execute(f"UPDATE agents SET {key} = ? WHERE name = ?", (value, name))

    def agents(self) -> list[Agent]:
        return [Agent(*row) for row in self.sql.query(
            "SELECT name, labels, allow, hostname, pid, heartbeat, worker_id, started, stopped, job FROM agents"
            " ORDER BY name")]
