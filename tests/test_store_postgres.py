"""The store in a real PostgreSQL server (started by tests/postgres.py): the
same schema and versioning as SQLite, and the same runs give the same reports."""

import json
import threading

import pytest

from iolab import analysis
from iolab.run import runner
from iolab.report import renderer
from iolab.cell.sample import Sample
from iolab.store import Store, StoreError
from iolab.store.schema import SCHEMA_VERSION
from tests.fakes import ScriptedHost, ShapedHost
from tests.helpers import copy_run, experiment
from tests.postgres import postgres_server, postgres_url  # noqa: F401 (fixtures)


def report(store: Store, run_id: int, fmt: str) -> str:
    text = renderer(fmt)(analysis.analyse(store.run(run_id), store.samples(run_id)))
    if fmt == "json":  # wall-clock times of begin/end differ between the two copies
        document = json.loads(text)
        document["run"]["started"] = document["run"]["finished"] = 0
        text = json.dumps(document, indent=2)
    return text


def test_fresh_database_gets_the_schema_and_its_version(postgres_url):
    store = Store(postgres_url)
    assert store.sql.kind == "postgresql" and store.schema_version() == SCHEMA_VERSION
    tables = {row[0] for row in store.db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
    assert tables == {"runs", "samples", "metrics", "histograms", "artefacts", "baselines", "attempts", "agents",
                      "run_files", "watch_positions", "watch_series", "watch_pending", "schema_version"}
    types = dict(store.db.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'metrics'"))
    assert types["value"] == "double precision"  # float64, as SQLite's REAL
    run_id = store.begin_run(name="n", experiment_path=None, experiment_json="{}", seed=1, planned_cells=2,
                             host={}, files={"fix.patch": b"+\x00binary too\n"})
    store.close()
    again = Store(postgres_url)
    assert again.schema_version() == SCHEMA_VERSION  # reopened, not recreated
    assert again.run_files(run_id) == {"fix.patch": b"+\x00binary too\n"}  # BYTEA, as SQLite's BLOB


def test_unknown_version_and_foreign_tables_are_refused(postgres_url):
    import psycopg

    Store(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match="schema version 99"):
        Store(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("DROP TABLE schema_version")
    with pytest.raises(StoreError, match="not an iolab store"):
        Store(postgres_url)


def test_two_hosts_opening_a_fresh_database_at_once_create_it_once(postgres_url):
    errors, stores = [], []

    def open_store():
        try:
            stores.append(Store(postgres_url))
        except Exception as error:  # the test reports any failure of either thread
            errors.append(error)
    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(stores) == 4
    assert stores[0].db.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 1


def test_unreachable_server_is_a_store_error_without_the_password():
    with pytest.raises(StoreError, match="cannot connect") as error:
        Store("postgresql://me:secret@/nodb?host=/nonexistent-iolab-socket")
    assert "secret" not in str(error.value) and "***" in str(error.value)


def test_same_runs_give_the_same_reports(tmp_path, monkeypatch, postgres_url):

    def shape(cell, metrics):
        metrics["read_bw"] *= 1 + 0.013 * ((cell.seq * 7919) % 11)  # not round numbers
    lite = Store(tmp_path / "lite.db")
    levels = {"base": 100.0, "patched": 112.0, "other": 99.0}
    first = runner.run(experiment(list(levels)), lite, host=ShapedHost(levels, shape))
    pg = Store(postgres_url)
    copied = copy_run(lite, first, pg)
    assert [s.metrics for s in pg.samples(copied)] == [s.metrics for s in lite.samples(first)]
    assert [s.histograms for s in pg.samples(copied)] == [s.histograms for s in lite.samples(first)]
    for fmt in ("text", "markdown", "json"):
        assert report(pg, copied, fmt) == report(lite, first, fmt)


def test_a_run_stores_straight_into_postgres(monkeypatch, postgres_url):
    store = Store(postgres_url)
    levels = {"base": 100.0, "patched": 120.0}
    run_id = runner.run(experiment(list(levels), iterations=5), store, host=ScriptedHost(levels))
    assert store.run(run_id).status == "complete" and store.sample_counts(run_id) == (10, 0)
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    assert result.rows[0].comparisons["patched"].verdict == "better"
    store.save_baseline("main", run_id)
    store.save_baseline("main", run_id)  # saved again: still one
    assert [(b.name, b.run_id) for b in store.baselines()] == [("main", run_id)]


def test_artefacts_round_trip(postgres_url):
    store = Store(postgres_url)
    run_id = store.begin_run(name="a", experiment_path=None, experiment_json="{}", seed=2**31 - 1,
                             planned_cells=1, host={"kernel": "x"})
    sample = Sample(seq=0, round=0, iteration=0, warmup=False, variant="v", workload="w", status="ok",
                    env={}, started=1.5, metrics={"x": 0.1 + 0.2}, artefacts={"fio.json": "{\"jobs\": []}"})
    store.add_sample(run_id, sample)
    assert store.artefact(run_id, 0, "fio.json") == "{\"jobs\": []}"
    assert store.samples(run_id)[0].metrics == {"x": 0.1 + 0.2}
    assert store.run(run_id).seed == 2**31 - 1


def test_version_3_database_is_migrated(postgres_url):
    from iolab.store.schema import SCHEMA
    from iolab.store.db import PostgreSQL

    v3 = (SCHEMA[:SCHEMA.index("CREATE TABLE attempts")]
          .replace(",\n    labels          TEXT", "")
          .replace("    attempt     INTEGER NOT NULL DEFAULT 0,\n    host        TEXT,\n    UNIQUE (run_id, seq, attempt)",
                   "    UNIQUE (run_id, seq)"))
    assert "attempt" not in v3 and "labels" not in v3
    old = PostgreSQL(postgres_url)
    old.create(v3, 3)
    old.db.execute("INSERT INTO runs (name, experiment_json, seed, planned_cells, status, started, host_json)"
                   " VALUES ('v3', '{}', 1, 2, 'complete', 0, '{}')")
    old.db.execute("INSERT INTO samples (run_id, seq, round, iteration, warmup, variant, workload, status, started,"
                   " env_json) VALUES (1, 0, 0, 0, 0, 'a', 'w', 'ok', 0, '{}')")
    old.db.execute("INSERT INTO metrics (sample_id, name, value) VALUES (1, 'read_bw', 2.5)")
    old.db.execute("INSERT INTO metrics (sample_id, name, value) VALUES (1, 'us_per_call', 7.5)")
    old.close()
    store = Store(postgres_url)
    assert store.schema_version() == SCHEMA_VERSION == 7  # through 4 (the queue), 5 (run_files), 6 (per_call), 7 (the robot)
    assert store.run_files(1) == {}
    [sample] = store.samples(1)
    assert (sample.metrics, sample.attempt, sample.host) == ({"read_bw": 2.5, "per_call": 7.5}, 0, None)
    assert store.run(1).labels is None
    store.begin_attempt(1, 0, 1, "agent-a", 7, {"kernel": "x"})
    store.add_sample(1, Sample(seq=0, round=0, iteration=0, warmup=False, variant="a", workload="w",
                               status="ok", metrics={"read_bw": 3.0}, attempt=1, host="agent-a"))
    assert [(s.host, s.metrics["read_bw"]) for s in store.samples(1)] == [("agent-a", 3.0)]
    assert [s.host for s in store.samples(1, superseded=True)] == [None]
