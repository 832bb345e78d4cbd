"""Schema versions 2 (runs.stop_reason), 3 (baselines), 4 (the queue: attempts, agents, samples per
attempt), 5 (run_files: the files an experiment names), 6 (us_per_call is per_call) and 7 (the list
robot's positions and series: iolab.store.watch); migrating version-1 to -6 stores."""

import dataclasses
import shutil
import sqlite3
import zlib

import pytest

from iolab import analysis
from iolab.store import Store, StoreError
from iolab.store.schema import SCHEMA_VERSION
from tests.helpers import FIXTURES

V1 = FIXTURES / "store-v1.db"  # written by the version-1 store code (commit 2492f2f)
V2 = FIXTURES / "store-v2.db"  # written by the version-2 store code (commit 30a5c48)
V3 = FIXTURES / "store-v3.db"  # written by the version-3 store code (commit 59771cc)
V4 = FIXTURES / "store-v4.db"  # store-v3.db opened and added to by the version-4 store code (commit 4cb9d45)
V5 = FIXTURES / "store-v5.db"  # a probe batch run (us_per_call) written by the version-5 store code (commit 49913bf)
V6 = FIXTURES / "store-v6.db"  # a complete run of two samples written by the version-6 store code (commit e13efe0)


def test_fixture_is_version_1():
    db = sqlite3.connect(V1)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "stop_reason" not in [row[1] for row in db.execute("PRAGMA table_info(runs)")]


def test_version_1_store_is_migrated_and_keeps_its_runs(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    store = Store(path)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.baselines() == []
    run = store.run(1)
    assert (run.name, run.status, run.stop_reason) == ("v1 fixture", "complete", None)
    samples = store.samples(1)
    assert len(samples) == 8 and samples[0].histograms == {"read_clat": {1000: 90, 2000: 10}}
    result = analysis.analyse(run, samples)  # an experiment stored by version 1 still loads
    assert result.rows[0].comparisons["patched"].verdict in ("better", "same")
    store.end_run(1, "complete", "all deltas decided")
    store.close()
    assert Store(path).run(1).stop_reason == "all deltas decided"  # reopening does not migrate again


def test_new_store_has_stop_reason(tmp_path):
    store = Store(tmp_path / "new.db")
    run_id = store.begin_run(name="n", experiment_path=None, experiment_json="{}", seed=1,
                             planned_cells=2, host={})
    assert store.run(run_id).stop_reason is None
    store.end_run(run_id, "complete", "budget reached")
    assert store.run(run_id).stop_reason == "budget reached"


@pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, 99])
def test_unknown_versions_are_still_refused(tmp_path, version):
    path = tmp_path / "future.db"
    shutil.copy(V1, path)
    sqlite3.connect(path).execute(f"PRAGMA user_version = {version}")
    with pytest.raises(StoreError, match=f"schema version {version}"):
        Store(path)


def test_version_2_store_gets_baselines_and_keeps_its_runs(tmp_path):
    path = tmp_path / "v2.db"
    shutil.copy(V2, path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    run = store.run(1)
    assert run.name == "v2 fixture" and len(store.samples(1)) == 8
    store.save_baseline("main", 1)
    store.close()
    assert [(b.name, b.run_id) for b in Store(path).baselines()] == [("main", 1)]


def test_failed_migration_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    from iolab.store import schema as storeschema

    path = tmp_path / "v1.db"
    shutil.copy(V1, path)
    monkeypatch.setitem(storeschema.MIGRATIONS, 2, ["CREATE TABLE baselines (x INTEGER)", "NOT SQL"])
    with pytest.raises(sqlite3.OperationalError):
        Store(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "stop_reason" not in [row[1] for row in db.execute("PRAGMA table_info(runs)")]


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError, match="not a database"):
        Store(path)


def test_version_3_store_gets_the_queue_and_keeps_samples_and_their_ids(tmp_path):
    path = tmp_path / "v3.db"
    shutil.copy(V3, path)
    before = sqlite3.connect(path).execute("SELECT id, seq FROM samples ORDER BY id").fetchall()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.db.execute("SELECT id, seq FROM samples ORDER BY id").fetchall() == before
    assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
    run = store.run(1)
    assert (run.name, run.labels, run.queued) == ("v3 fixture", None, False)
    samples = store.samples(1)
    assert len(samples) == 8 and {(s.attempt, s.host) for s in samples} == {(0, None)}
    assert [b.name for b in store.baselines()] == ["main"]
    assert samples[0].metrics and store.attempts(1) == []
    # the new uniqueness: a second attempt at a cell is stored beside the first
    store.begin_attempt(1, 0, 1, "agent-b", None, {})
    again = dataclasses.replace(samples[0], attempt=1, host="agent-b")
    store.add_sample(1, again)
    round_0 = [s for s in samples if s.round == 0]
    counted = store.samples(1)  # round 0 is now its attempt 1 (one cell so far); attempt 0 is superseded
    assert len(counted) == 8 - len(round_0) + 1 and ("agent-b", 1) in {(s.host, s.attempt) for s in counted}
    assert [(s.seq, s.host) for s in store.samples(1, superseded=True)] == [(s.seq, None) for s in round_0]


def test_version_4_store_gets_run_files_and_keeps_its_queue(tmp_path):
    path = tmp_path / "v4.db"
    shutil.copy(V4, path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.run(1).name == "v4 fixture" and len(store.samples(1)) == 8
    assert [(a.host, a.status) for a in store.attempts(1)] == [("agent-a", "done")]
    assert store.run_files(1) == {}  # stored before runs kept their files
    run_id = store.begin_run(name="n", experiment_path=None, experiment_json="{}", seed=1, planned_cells=2,
                             host={}, files={"fix.patch": b"--- a\n+++ b\n", "job.fio": b"[j]\n"})
    store.close()
    assert Store(path).run_files(run_id) == {"fix.patch": b"--- a\n+++ b\n", "job.fio": b"[j]\n"}


def test_a_stored_file_that_does_not_match_its_digest_is_refused(tmp_path):
    store = Store(tmp_path / "s.db")
    run_id = store.begin_run(name="n", experiment_path=None, experiment_json="{}", seed=1, planned_cells=2,
                             host={}, files={"fix.patch": b"+good\n"})
    store.db.execute("UPDATE run_files SET content = ? WHERE name = 'fix.patch'", (zlib.compress(b"+evil\n"),))
    with pytest.raises(StoreError, match="stored copy of 'fix.patch' does not match its sha256"):
        store.run_files(run_id)


def test_version_5_store_reads_us_per_call_as_per_call(tmp_path):
    """Metrics are named by what they count in both timing modes: a store of version 5 said us_per_call
    (kinsn per call in instructions mode); migrated, its samples and its stored experiment say per_call,
    and its report is the one it had."""
    path = tmp_path / "v5.db"
    shutil.copy(V5, path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 5
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    samples = store.samples(1)
    assert len(samples) == 6 and all(set(s.metrics) == {"per_call", "per_call_min", "calls"} for s in samples)
    result = analysis.analyse(store.run(1), samples)
    assert result.experiment.report.metrics == ["per_call", "per_call_min"]
    row = next(r for r in result.rows if r.metric.name == "per_call")
    assert row.primary and row.comparisons["fix"].verdict == "better" and row.comparisons["fix"].exact == "identical"


def test_version_6_store_gets_the_robots_tables_and_keeps_its_runs(tmp_path):
    from iolab.store import watch

    path = tmp_path / "v6.db"
    shutil.copy(V6, path)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 6
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert store.run(1).name == "v6 fixture" and [s.metrics for s in store.samples(1)] == [{"read_bw": 2.5},
                                                                                           {"read_bw": 3.5}]
    assert watch.positions(store, "/inbox") == {} and watch.checked(store) == []
    watch.set_positions(store, "/inbox", {"0": "a" * 40})
    series = watch.add(store, inbox="/inbox", key="k", family="f", subject="[PATCH] x", revision=1, message_id="m@x",
                       headers={}, claims=[], status="queued", run_id=1)
    store.close()
    again = Store(path)
    assert watch.positions(again, "/inbox") == {"0": "a" * 40}
    assert [(c.id, c.run_id, c.status) for c in watch.checked(again)] == [(series, 1, "queued")]
