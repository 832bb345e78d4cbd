import sqlite3

import pytest

from iolab.cell.sample import Sample
from iolab.store import Store, StoreError
from iolab.storeschema import SCHEMA_VERSION


def sample(seq, status="ok", **extra):
    return Sample(seq=seq, round=seq, iteration=seq, warmup=False, variant="a", workload="w",
                  status=status, started=1.0, **extra)


def new_run(store):
    return store.begin_run(name="r", experiment_path=None, experiment_json="{}", seed=3,
                           planned_cells=4, host={"kernel": "k"})


def test_samples_round_trip(tmp_path):
    store = Store(tmp_path / "s.db")
    run_id = new_run(store)
    store.add_sample(run_id, sample(0, metrics={"read_bw": 12.5}, histograms={"read_clat": {1000: 3, 2000: 1}},
                                    artefacts={"fio.json": "{...}"}, env={"kernel": "k"}))
    store.add_sample(run_id, sample(1, status="failed", error="fio exit 1: Bad option"))
    got = store.samples(run_id)
    assert got[0].metrics == {"read_bw": 12.5}
    assert got[0].histograms == {"read_clat": {1000: 3, 2000: 1}}
    assert got[1].status == "failed" and got[1].error == "fio exit 1: Bad option" and got[1].metrics == {}
    assert store.artefact(run_id, 0, "fio.json") == "{...}"
    assert store.sample_counts(run_id) == (1, 1)


def test_sample_is_durable_before_the_run_ends(tmp_path):
    path = tmp_path / "s.db"
    store = Store(path)
    run_id = new_run(store)
    store.add_sample(run_id, sample(0, metrics={"x": 1.0}))
    # Another connection (another process) sees it at once; the run is still 'running'.
    other = Store(path)
    assert [s.seq for s in other.samples(run_id)] == [0]
    assert other.run(run_id).status == "running"


def test_samples_are_never_overwritten(tmp_path):
    store = Store(tmp_path / "s.db")
    run_id = new_run(store)
    store.add_sample(run_id, sample(0))
    with pytest.raises(sqlite3.IntegrityError):
        store.add_sample(run_id, sample(0))


def test_schema_version_is_recorded(tmp_path):
    Store(tmp_path / "s.db").close()
    assert sqlite3.connect(tmp_path / "s.db").execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_unknown_version_is_refused(tmp_path):
    path = tmp_path / "future.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (id INTEGER)")
    db.execute("PRAGMA user_version = 99")
    db.commit()
    with pytest.raises(StoreError, match="schema version 99"):
        Store(path)


def test_foreign_file_is_refused(tmp_path):
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    with pytest.raises(StoreError, match="not an iolab store"):
        Store(path)


def test_missing_run(tmp_path):
    with pytest.raises(StoreError, match="no run 5"):
        Store(tmp_path / "s.db").run(5)
