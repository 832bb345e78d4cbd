"""The store's schema, its version, and the migrations from older versions
(iolab.store reads and writes through it; iolab.store.db runs it on SQLite or
PostgreSQL).

The schema is versioned
(``PRAGMA user_version`` in SQLite, a ``schema_version`` table in
PostgreSQL); a store of an unknown version is refused, and an older known
version is migrated in place when opened (MIGRATIONS).

Versions: 1 the first schema; 2 adds ``runs.stop_reason`` (why an adaptive
run stopped, e.g. "all deltas decided"; NULL for fixed-length runs and
runs stored by version 1); 3 adds ``baselines`` (a name for a run, for
``iolab baseline save`` and ``--baseline``); 4 adds the queue (iolab.run.submit,
iolab.run.agent): ``runs.labels`` (NULL: run here; else the labels its rounds
were queued for), ``samples.attempt`` and ``samples.host`` (a round retried on
another agent stores its samples again under a new attempt: unique per
(run, seq, attempt)), ``attempts`` (each agent's try at a round) and
``agents``; 5 adds ``run_files`` (the files an experiment names, stored
with its run: iolab.run.inputs); 6 renames metrics to say what they count
in both timing modes (``us_per_call`` -> ``per_call``: iolab.engines.probe.RENAMED),
in ``metrics`` and in the stored experiments; 7 adds the list robot's tables
(iolab.store.watch: ``watch_positions``, the last commit read per inbox and
epoch; ``watch_series``, each series it checked, queued or skipped, and its
answer; ``watch_pending``, messages of a series not whole yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab.engines.probe import RENAMED
from iolab.store.db import StoreError

if TYPE_CHECKING:
    from iolab.store.db import PostgreSQL, SQLite

SCHEMA_VERSION = 7

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
    stop_reason     TEXT,
    labels          TEXT
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
    attempt     INTEGER NOT NULL DEFAULT 0,
    host        TEXT,
    UNIQUE (run_id, seq, attempt)
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
""" + """
CREATE TABLE attempts (
    id        INTEGER PRIMARY KEY,
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    round     INTEGER NOT NULL,
    attempt   INTEGER NOT NULL,
    host      TEXT NOT NULL,
    job_id    INTEGER,
    status    TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'refused', 'given back', 'killed',
                                              'stalled')),
    started   REAL NOT NULL,
    finished  REAL,
    error     TEXT,
    host_json TEXT NOT NULL,
    UNIQUE (run_id, round, attempt)
);
CREATE TABLE agents (
    name      TEXT PRIMARY KEY,
    labels    TEXT NOT NULL,
    allow     TEXT NOT NULL,
    hostname  TEXT NOT NULL,
    pid       INTEGER NOT NULL,
    heartbeat REAL NOT NULL,
    worker_id INTEGER,
    started   REAL NOT NULL,
    stopped   REAL,
    job       TEXT
);
""" + """
CREATE TABLE run_files (
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    name    TEXT NOT NULL,
    sha256  TEXT NOT NULL,
    content BLOB NOT NULL,
    PRIMARY KEY (run_id, name)
);
""" + """
CREATE TABLE watch_positions (
    inbox       TEXT NOT NULL,
    epoch       TEXT NOT NULL,
    last_commit TEXT NOT NULL,
    seen        REAL NOT NULL,
    PRIMARY KEY (inbox, epoch)
);
CREATE TABLE watch_series (
    id           INTEGER PRIMARY KEY,
    inbox        TEXT NOT NULL,
    series_key   TEXT NOT NULL UNIQUE,
    family       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    revision     INTEGER NOT NULL,
    message_id   TEXT NOT NULL,
    headers_json TEXT NOT NULL,
    claims_json  TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('queued', 'skipped', 'answered')),
    reason       TEXT,
    run_id       INTEGER REFERENCES runs(id),
    checked      REAL NOT NULL,
    answered     REAL,
    reply_id     TEXT
);
CREATE TABLE watch_pending (
    inbox      TEXT NOT NULL,
    epoch      TEXT NOT NULL,
    commit_id  TEXT NOT NULL,
    first_seen REAL NOT NULL,
    PRIMARY KEY (inbox, commit_id)
);
"""


# Statements that take a store from version N to N + 1, by N.
MIGRATIONS = {
    1: ["ALTER TABLE runs ADD COLUMN stop_reason TEXT"],
    2: ["CREATE TABLE baselines (name TEXT PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),"
        " saved REAL NOT NULL)"],
    3: {  # samples' UNIQUE (run_id, seq) becomes (run_id, seq, attempt)
        "sqlite": [  # SQLite cannot drop a constraint: the table is rebuilt, ids kept
            "PRAGMA defer_foreign_keys = ON",  # metrics & co. point at samples while it is rebuilt
            "CREATE TABLE samples_v3 AS SELECT * FROM samples",
            "DROP TABLE samples",
            SCHEMA[SCHEMA.index("CREATE TABLE samples"):SCHEMA.index("CREATE TABLE metrics")].strip().rstrip(";"),
            "INSERT INTO samples (id, run_id, seq, round, iteration, warmup, variant, workload, status, error,"
            " started, setup_s, run_s, teardown_s, env_json) SELECT id, run_id, seq, round, iteration, warmup,"
            " variant, workload, status, error, started, setup_s, run_s, teardown_s, env_json FROM samples_v3",
            "DROP TABLE samples_v3",
        ],
        "postgresql": [
            "ALTER TABLE samples ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE samples ADD COLUMN host TEXT",
            "ALTER TABLE samples DROP CONSTRAINT samples_run_id_seq_key",
            "ALTER TABLE samples ADD UNIQUE (run_id, seq, attempt)",
        ],
        "both": ["ALTER TABLE runs ADD COLUMN labels TEXT",
                 *[s.strip() for s in SCHEMA[SCHEMA.index("CREATE TABLE attempts"):SCHEMA.index("CREATE TABLE run_files")]
                   .split(";") if s.strip()]],
    },
    4: [SCHEMA[SCHEMA.index("CREATE TABLE run_files"):SCHEMA.index("CREATE TABLE watch_positions")].strip()
        .rstrip(";")],
    # metrics named by what they count in both timing modes: us_per_call (kinsn in instructions mode) is
    # per_call (iolab.load.metric_names.RENAMED); the stored experiments' names follow
    5: [*(f"UPDATE metrics SET name = '{new}' WHERE name = '{old}'" for old, new in RENAMED.items()),
        *(f"UPDATE runs SET experiment_json = replace(experiment_json, '\"{old}\"', '\"{new}\"')"
          for old, new in RENAMED.items())],
    6: [s.strip() for s in SCHEMA[SCHEMA.index("CREATE TABLE watch_positions"):].split(";") if s.strip()],
}


def ensure(sql: SQLite | PostgreSQL) -> None:
    """Make the schema in an empty database, migrate an older known version
    in place (all or nothing), refuse anything else. A store already at this
    version is only read (no write lock: a reader polling a store beside a
    run never holds up the run's writes)."""
    if sql.version() == SCHEMA_VERSION:  # set in the transaction that made or migrated it: complete
        return
    with sql.schema_lock():
        version = sql.version()
        if version == 0:
            if sql.has_tables():
                raise StoreError(f"{sql.where}: not an iolab store (has tables but no schema version)")
            sql.create(SCHEMA, SCHEMA_VERSION)
        elif version < SCHEMA_VERSION and version in MIGRATIONS:
            _migrate(sql, version)
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"{sql.where}: store schema version {version}, this iolab reads version "
                f"{SCHEMA_VERSION}; use a matching iolab or another --store"
            )
    if version == 0:
        sql.created()


def _migrate(sql: SQLite | PostgreSQL, version: int) -> None:
    """Bring a store of an older version up to SCHEMA_VERSION, within the
    caller's transaction (all or nothing)."""
    while version < SCHEMA_VERSION:
        steps = MIGRATIONS[version]
        if isinstance(steps, dict):  # statements of one database, then of both
            steps = [*steps[sql.kind], *steps["both"]]
        for statement in steps:
            sql.ddl(statement)
        version += 1
        sql.set_version(version)
