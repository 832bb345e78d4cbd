import sqlite3

import pytest

from iolab.cell.sample import Sample
from iolab.store import Store, StoreError
from iolab.store.schema import SCHEMA_VERSION


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


def test_a_sample_added_while_samples_are_read_waits_for_the_next_read(tmp_path):
    """Another process's sample that lands between the read of the samples and
    that of their metrics (a run writing beside `iolab run --dry-run`) is left
    for the next read: no KeyError."""
    path = tmp_path / "s.db"
    store = Store(path)
    run_id = new_run(store)
    store.add_sample(run_id, sample(0, metrics={"x": 1.0}, histograms={"h": {1: 1}}))
    reader = Store(path)
    read_rows = reader._for_run

    def landing_meanwhile(*args):
        if args[0] == "metrics":
            store.add_sample(run_id, sample(1, metrics={"x": 2.0}, histograms={"h": {2: 1}}))
        return read_rows(*args)

    reader._for_run = landing_meanwhile
    got = reader.samples(run_id)
    assert [(s.seq, s.metrics, s.histograms) for s in got] == [(0, {"x": 1.0}, {"h": {1: 1}})]
    assert [s.metrics for s in Store(path).samples(run_id)] == [{"x": 1.0}, {"x": 2.0}]


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


def test_status_types_are_the_schemas_checks():
    """A run's, an attempt's and a sample's status are Literal types; the
    schema's CHECK constraints list the same values."""
    import re
    from typing import get_args

    from iolab import store as store_module
    from iolab.cell.sample import SampleStatus
    from iolab.store.schema import SCHEMA

    def checked(table: str) -> set[str]:
        body = SCHEMA[SCHEMA.index(f"CREATE TABLE {table} ("):]
        found = re.search(r"status\s+TEXT NOT NULL CHECK \(status IN \(([^)]*)\)\)", body)
        assert found, table
        return set(re.findall(r"'([^']*)'", found.group(1)))

    assert checked("runs") == set(get_args(store_module.RunStatus))
    assert checked("attempts") == set(get_args(store_module.AttemptStatus))
    assert checked("samples") == set(get_args(SampleStatus))


def test_a_sample_is_frozen_and_grows_by_copy():
    import dataclasses

    made = sample(0, metrics={"read_bw": 1.0})
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.status = "failed"
    more = made.with_more(metrics={"vm.boot_s": 0.5}, env={"vm": {"cpus": 1}})
    assert made.metrics == {"read_bw": 1.0} and made.env == {}
    assert more.metrics == {"read_bw": 1.0, "vm.boot_s": 0.5} and more.env == {"vm": {"cpus": 1}}
    assert Sample.from_json(more.to_json()) == more
