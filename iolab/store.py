"""The store: one SQLite file holding every run and every sample.

Samples are facts: each is written (and committed) the moment its cell
ends, and nothing ever updates or deletes it. The schema is versioned with
``PRAGMA user_version``; a file of an unknown version is refused, and an
older known version is migrated in place when opened (MIGRATIONS).

Versions: 1 the first schema; 2 adds ``runs.stop_reason`` (why an adaptive
run stopped, e.g. "all deltas decided"; NULL for fixed-length runs and
runs stored by version 1).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab.cell.sample import Sample

SCHEMA_VERSION = 2

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
"""


# Statements that take a store from version N to N + 1, by N.
MIGRATIONS = {
    1: ["ALTER TABLE runs ADD COLUMN stop_reason TEXT"],
}


class StoreError(Exception):
    pass


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


def default_path() -> Path:
    if os.environ.get("IOLAB_STORE"):
        return Path(os.environ["IOLAB_STORE"])
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return Path(data_home, "iolab", "iolab.db")


class Store:
    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=30)
        self.db.execute("PRAGMA foreign_keys = ON")
        self._check_version()

    def _check_version(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:
                raise StoreError(f"{self.path}: not an iolab store (has tables but no schema version)")
            with self.db:
                self.db.executescript(SCHEMA)
                self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.db.execute("PRAGMA journal_mode = WAL")
        elif version < SCHEMA_VERSION and version in MIGRATIONS:
            self._migrate(version)
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: store schema version {version}, this iolab reads version "
                f"{SCHEMA_VERSION}; use a matching iolab or another --store"
            )

    def _migrate(self, version: int) -> None:
        """Bring a store of an older version up to SCHEMA_VERSION, one step at
        a time, each step in one transaction (all or nothing)."""
        while version < SCHEMA_VERSION:
            with self.db:
                for statement in MIGRATIONS[version]:
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {version + 1}")
            version += 1

    def close(self) -> None:
        self.db.close()

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
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO runs (name, experiment_path, experiment_json, seed, planned_cells,"
                " status, started, host_json, recheck_of) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (name, experiment_path, experiment_json, seed, planned_cells, time.time(),
                 json.dumps(host), recheck_of),
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def reopen_run(self, run_id: int) -> None:
        """Mark a stored run running again (iolab resume); its samples stay."""
        with self.db:
            self.db.execute("UPDATE runs SET status = 'running', finished = NULL WHERE id = ?", (run_id,))

    def end_run(self, run_id: int, status: str, stop_reason: str | None = None) -> None:
        with self.db:
            self.db.execute(
                "UPDATE runs SET status = ?, finished = ?, stop_reason = ? WHERE id = ?",
                (status, time.time(), stop_reason, run_id),
            )

    def run(self, run_id: int) -> RunInfo:
        row = self.db.execute(
            "SELECT id, name, experiment_path, experiment_json, seed, planned_cells, status,"
            " started, finished, host_json, recheck_of, stop_reason FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id} in {self.path} (see 'iolab runs')")
        return RunInfo(*row[:9], host=json.loads(row[9]), recheck_of=row[10], stop_reason=row[11])

    def runs(self) -> list[RunInfo]:
        ids = [row[0] for row in self.db.execute("SELECT id FROM runs ORDER BY id")]
        return [self.run(run_id) for run_id in ids]

    def latest_run_id(self) -> int:
        row = self.db.execute("SELECT max(id) FROM runs").fetchone()
        if row[0] is None:
            raise StoreError(f"no runs in {self.path} yet (start one with 'iolab run')")
        return row[0]

    def sample_counts(self, run_id: int) -> tuple[int, int]:
        """(ok, failed) samples of a run, warm-ups excluded."""
        rows = dict(
            self.db.execute(
                "SELECT status, count(*) FROM samples WHERE run_id = ? AND warmup = 0 GROUP BY status",
                (run_id,),
            ).fetchall()
        )
        return rows.get("ok", 0), rows.get("failed", 0)

    # -- samples

    def add_sample(self, run_id: int, sample: Sample) -> int:
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO samples (run_id, seq, round, iteration, warmup, variant, workload,"
                " status, error, started, setup_s, run_s, teardown_s, env_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, sample.seq, sample.round, sample.iteration, int(sample.warmup),
                 sample.variant, sample.workload, sample.status, sample.error, sample.started,
                 sample.setup_s, sample.run_s, sample.teardown_s, json.dumps(sample.env, default=str)),
            )
            sample_id = cursor.lastrowid
            self.db.executemany(
                "INSERT INTO metrics (sample_id, name, value) VALUES (?, ?, ?)",
                [(sample_id, name, float(value)) for name, value in sample.metrics.items()],
            )
            self.db.executemany(
                "INSERT INTO histograms (sample_id, name, bins_json) VALUES (?, ?, ?)",
                [(sample_id, name, json.dumps(bins)) for name, bins in sample.histograms.items()],
            )
            self.db.executemany(
                "INSERT INTO artefacts (sample_id, name, content) VALUES (?, ?, ?)",
                [(sample_id, name, zlib.compress(text.encode())) for name, text in sample.artefacts.items()],
            )
        assert sample_id is not None
        return sample_id

    def samples(self, run_id: int, *, with_histograms: bool = True) -> list[Sample]:
        rows = self.db.execute(
            "SELECT id, seq, round, iteration, warmup, variant, workload, status, error, started,"
            " setup_s, run_s, teardown_s, env_json FROM samples WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ).fetchall()
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
        yield from self.db.execute(
            f"SELECT t.sample_id, {columns} FROM {table} t JOIN samples s ON s.id = t.sample_id"
            " WHERE s.run_id = ?",
            (run_id,),
        )

    def artefact(self, run_id: int, seq: int, name: str) -> str:
        row = self.db.execute(
            "SELECT a.content FROM artefacts a JOIN samples s ON s.id = a.sample_id"
            " WHERE s.run_id = ? AND s.seq = ? AND a.name = ?",
            (run_id, seq, name),
        ).fetchone()
        if row is None:
            raise StoreError(f"run {run_id} cell {seq} has no artefact {name!r}")
        return zlib.decompress(row[0]).decode()
