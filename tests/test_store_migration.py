"""Schema versions 2 (runs.stop_reason) and 3 (baselines); migrating version-1 and version-2 stores."""

import shutil
import sqlite3

import pytest

from iolab import analysis
from iolab.store import SCHEMA_VERSION, Store, StoreError
from tests.helpers import FIXTURES

V1 = FIXTURES / "store-v1.db"  # written by the version-1 store code (commit 2492f2f)
V2 = FIXTURES / "store-v2.db"  # written by the version-2 store code (commit 30a5c48)


def test_fixture_is_version_1():
    db = sqlite3.connect(V1)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "stop_reason" not in [row[1] for row in db.execute("PRAGMA table_info(runs)")]


def test_version_1_store_is_migrated_and_keeps_its_runs(tmp_path):
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    store = Store(path)
    assert SCHEMA_VERSION == 3
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == 3
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


@pytest.mark.parametrize("version", [4, 99])
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
    assert store.schema_version() == 3
    run = store.run(1)
    assert run.name == "v2 fixture" and len(store.samples(1)) == 8
    store.save_baseline("main", 1)
    store.close()
    assert [(b.name, b.run_id) for b in Store(path).baselines()] == [("main", 1)]


def test_failed_migration_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    from iolab import store as store_module

    path = tmp_path / "v1.db"
    shutil.copy(V1, path)
    monkeypatch.setitem(store_module.MIGRATIONS, 2, ["CREATE TABLE baselines (x INTEGER)", "NOT SQL"])
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
