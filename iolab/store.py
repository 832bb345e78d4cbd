"""The store: every run and every sample, in an SQLite file or a PostgreSQL
database (iolab.storedb runs the same schema and queries in either).

Samples are facts: each is written (and committed) the moment its cell
ends, and nothing ever updates or deletes it. The schema is versioned
(``PRAGMA user_version`` in SQLite, a ``schema_version`` table in
PostgreSQL); a store of an unknown version is refused, and an older known
version is migrated in place when opened (MIGRATIONS).

Versions: 1 the first schema; 2 adds ``runs.stop_reason`` (why an adaptive
run stopped, e.g. "all deltas decided"; NULL for fixed-length runs and
runs stored by version 1); 3 adds ``baselines`` (a name for a run, for
``iolab baseline save`` and ``--baseline``).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.cell.sample import Sample  # re-exported: the store keeps samples
from iolab.storedb import StoreError, connect, is_url  # StoreError re-exported

SCHEMA_VERSION = 3

SCHEMA = """
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL,
    experiment_path TEXT,
    experiment_json TEXT NOT NULL,
    seed            INTEGER NOT NULL,
    planned_cells   INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    started         REAL NOT NULL,
    finished        REAL,
    host_json       TEXT NOT NULL,
    recheck_of      INTEGER REFERENCES runs(id),
    stop_reason     TEXT
);
CREATE TABLE samples (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    seq         INTEGER NOT NULL,
    round       INTEGER NOT NULL,
    iteration   INTEGER NOT NULL,
    warmup      INTEGER NOT NULL,
    variant     TEXT NOT NULL,
    workload    TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    error       TEXT,
    started     REAL NOT NULL,
    setup_s     REAL,
    run_s       REAL,
    teardown_s  REAL,
    env_json    TEXT NOT NULL,
    UNIQUE (run_id, seq)
);
CREATE TABLE metrics (
    sample_id INTEGER NOT NULL REFERENCES samples(id),
    name      TEXT NOT NULL,
    value     REAL NOT NULL,
    PRIMARY KEY (sample_id, name)
);
CREATE TABLE histograms (
    sample_id INTEGER NOT NULL REFERENCES samples(id),
    name      TEXT NOT NULL,
    bins_json TEXT NOT NULL,
    PRIMARY KEY (sample_id, name)
);
CREATE TABLE artefacts (
    sample_id INTEGER NOT NULL REFERENCES samples(id),
    name      TEXT NOT NULL,
    content   BLOB NOT NULL,
    PRIMARY KEY (sample_id, name)
);
CREATE TABLE baselines (
    name   TEXT PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    saved  REAL NOT NULL
);
"""


# Statements that take a store from version N to N + 1, by N.
MIGRATIONS = {
    1: ["ALTER TABLE runs ADD COLUMN stop_reason TEXT"],
    2: ["CREATE TABLE baselines (name TEXT PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
        " saved REAL NOT NULL)"],
}




@dataclass(frozen=True)
class RunInfo:
    id: int
    name: str
    experiment_path: str | None
    experiment_json: str
    seed: int
    planned_cells: int
    status: str
    started: float
    finished: float | None
    host: dict[str, Any]
    recheck_of: int | None
    stop_reason: str | None = None


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
        self._check_version()

    def _check_version(self) -> None:
        with self.sql.schema_lock():
            version = self.sql.version()
            if version == 0:
                if self.sql.has_tables():
                    raise StoreError(f"{self.where}: not an iolab store (has tables but no schema version)")
                self.sql.create(SCHEMA, SCHEMA_VERSION)
            elif version < SCHEMA_VERSION and version in MIGRATIONS:
                self._migrate(version)
            elif version != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.where}: store schema version {version}, this iolab reads version "
                    f"{SCHEMA_VERSION}; use a matching iolab or another --store"
                )
        if version == 0:
            self.sql.created()

    def _migrate(self, version: int) -> None:
        """Bring a store of an older version up to SCHEMA_VERSION, within the
        caller's transaction (all or nothing)."""
        while version < SCHEMA_VERSION:
            for statement in MIGRATIONS[version]:
                self.sql.ddl(statement)
            version += 1
            self.sql.set_version(version)

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
    ) -> int:
        with self.sql.transaction():
            return self.sql.insert(
                "INSERT INTO runs (name, experiment_path, experiment_json, seed, planned_cells,"
                " status, started, host_json, recheck_of) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (name, experiment_path, experiment_json, seed, planned_cells, time.time(),
                 json.dumps(host), recheck_of),
            )

    def reopen_run(self, run_id: int) -> None:
        """Mark a stored run running again (iolab resume); its samples stay."""
        with self.sql.transaction():
            self.sql.execute("UPDATE runs SET status = 'running', finished = NULL WHERE id = ?", (run_id,))

    def end_run(self, run_id: int, status: str, stop_reason: str | None = None) -> None:
        with self.sql.transaction():
            self.sql.execute(
                "UPDATE runs SET status = ?, finished = ?, stop_reason = ? WHERE id = ?",
                (status, time.time(), stop_reason, run_id),
            )

    def run(self, run_id: int) -> RunInfo:
        rows = self.sql.query(
            "SELECT id, name, experiment_path, experiment_json, seed, planned_cells, status,"
            " started, finished, host_json, recheck_of, stop_reason FROM runs WHERE id = ?",
            (run_id,),
        )
        if not rows:
            raise StoreError(f"no run {run_id} in {self.where} (see 'iolab runs')")
        row = rows[0]
        return RunInfo(*row[:9], host=json.loads(row[9]), recheck_of=row[10], stop_reason=row[11])

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
        """(ok, failed) samples of a run, warm-ups excluded."""
        rows = dict(
            self.sql.query(
                "SELECT status, count(*) FROM samples WHERE run_id = ? AND warmup = 0 GROUP BY status",
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
                " status, error, started, setup_s, run_s, teardown_s, env_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, sample.seq, sample.round, sample.iteration, int(sample.warmup),
                 sample.variant, sample.workload, sample.status, sample.error, sample.started,
                 sample.setup_s, sample.run_s, sample.teardown_s, json.dumps(sample.env, default=str)),
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

    def samples(self, run_id: int, *, with_histograms: bool = True) -> list[Sample]:
        rows = self.sql.query(
            "SELECT id, seq, round, iteration, warmup, variant, workload, status, error, started,"
            " setup_s, run_s, teardown_s, env_json FROM samples WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )
        samples = {}
        for row in rows:
            samples[row[0]] = Sample(
                seq=row[1], round=row[2], iteration=row[3], warmup=bool(row[4]), variant=row[5],
                workload=row[6], status=row[7], error=row[8], started=row[9], setup_s=row[10],
                run_s=row[11], teardown_s=row[12], env=json.loads(row[13]),
            )
        for sample_id, name, value in self._for_run("metrics", "name, value", run_id):
            samples[sample_id].metrics[name] = value
        if with_histograms:
            for sample_id, name, bins in self._for_run("histograms", "name, bins_json", run_id):
                samples[sample_id].histograms[name] = {int(k): v for k, v in json.loads(bins).items()}
        return list(samples.values())

    def _for_run(self, table: str, columns: str, run_id: int) -> Iterator[tuple[Any, ...]]:
        """A table's rows of one run's samples, in sample and name order (the
        same order from either database)."""
        yield from self.sql.rows(
            f"SELECT t.sample_id, {columns} FROM {table} t JOIN samples s ON s.id = t.sample_id"
            " WHERE s.run_id = ? ORDER BY s.seq, t.name",
            (run_id,),
        )

    def artefact(self, run_id: int, seq: int, name: str) -> str:
        rows = self.sql.query(
            "SELECT a.content FROM artefacts a JOIN samples s ON s.id = a.sample_id"
            " WHERE s.run_id = ? AND s.seq = ? AND a.name = ?",
            (run_id, seq, name),
        )
        if not rows:
            raise StoreError(f"run {run_id} cell {seq} has no artefact {name!r}")
        return zlib.decompress(bytes(rows[0][0])).decode()
