"""The files an experiment names, stored with its run (iolab.run.inputs):
what a resumed, rechecked or queued run reads is what the run began with."""

import pytest

from iolab import load, spec
from iolab.load.files import job_text
from iolab.run import inputs, runner
from iolab.store import Store
from tests.fakes import ScriptedHost
from tests.helpers import experiment

JOB = "[j]\nrw=randread\nbs=4k\n"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_every_named_file_with_the_field_that_names_it(tmp_path):
    for name in ("all.patch", "a.patch", "b.patch", "s1.patch", "s2.patch"):
        (tmp_path / name).write_text(f"{name}\n")
    (tmp_path / "frag.config").write_text("CONFIG_X=y\n")  # parse reads a fragment: .config text
    (tmp_path / "w.fio").write_text(JOB)
    built = experiment([{"name": "nofix", "kernel": {"reverse": ["a.patch"]}}, "fix",
                        {"name": "more", "kernel": {"patches": ["b.patch"]}}],
                       kernel={"source": "debian:linux-source-7.2", "patches": ["all.patch"],
                               "config_file": "frag.config"},
                       workload=[{"name": "w", "job_file": "w.fio"}], base_dir=str(tmp_path))
    assert inputs.names(built) == {
        "w.fio": 'workload["w"].job_file', "frag.config": "kernel.config_file", "all.patch": "kernel.patches[0]",
        "a.patch": 'variant["nofix"].kernel.reverse[0]', "b.patch": 'variant["more"].kernel.patches[1]'}
    series = experiment(["base"], kernel={"source": "debian:linux-source-7.2"},
                        series={"patches": ["s1.patch", "s2.patch"]}, base_dir=str(tmp_path))
    assert inputs.names(series) == {"s1.patch": "series.patches[0]", "s2.patch": "series.patches[1]"}
    assert inputs.read(series) == {"s1.patch": b"s1.patch\n", "s2.patch": b"s2.patch\n"}
    assert inputs.names(experiment()) == {}  # inline jobs, no kernels: nothing to store


def test_a_resumed_run_reads_the_job_it_began_with(tmp_path):
    (tmp_path / "w.fio").write_text(JOB)
    exp = experiment(("a", "b"), iterations=3, workload=[{"name": "w", "job_file": "w.fio"}],
                     base_dir=str(tmp_path))
    store = Store(tmp_path / "s.db")
    host = ScriptedHost({"a": 100.0, "b": 120.0})
    original = host.run_cell

    def stop_after_two(cell):
        if len(host.seen) == 2:
            raise KeyboardInterrupt
        return original(cell)

    host.run_cell = stop_after_two
    with pytest.raises(runner.Interrupted) as stopped:
        runner.run(exp, store, host=host)
    run_id = stopped.value.run_id
    assert store.run_files(run_id) == {"w.fio": JOB.encode()}
    (tmp_path / "w.fio").write_text("[j]\nrw=write\n")  # edited while the run was stopped
    stored = inputs.stored(spec.Experiment.model_validate_json(store.run(run_id).experiment_json), store, run_id)
    assert stored.workload[0].job_file == "w.fio"  # the name stays as written; the copy is read
    assert job_text(stored, stored.workload[0]) == JOB
    again = ScriptedHost({"a": 100.0, "b": 120.0})
    assert runner.run(stored, store, host=again, resume=run_id) == run_id
    assert {cell.job for cell in again.seen} == {JOB}
    assert "inputs" not in store.run(run_id).experiment_json  # the copies' paths are this machine's, not stored


def test_stored_copies_are_placed_once_by_digest(tmp_path):
    first = inputs.placed({"dir/fix.patch": b"+x\n", "job.fio": b"[j]\n"})
    assert [p.rsplit("/", 1)[1] for p in first.values()] == ["fix.patch", "job.fio"]  # the name kept for logs
    assert inputs.placed({"other/fix.patch": b"+x\n"})["other/fix.patch"] == first["dir/fix.patch"]
    odd = inputs.placed({"..": b"a name from a store, not a file\n"})[".."]  # stays inside its directory
    assert odd.startswith(str(inputs.root())) and odd.endswith("/file")
    assert sorted(p.name for p in inputs.root().rglob("*")) == sorted(
        [first["dir/fix.patch"].split("/")[-2], first["job.fio"].split("/")[-2], odd.split("/")[-2],
         "fix.patch", "job.fio", "file"])


def test_a_file_cannot_set_the_stored_copies(tmp_path):
    path = tmp_path / "e.toml"
    path.write_text('name = "x"\ninputs = { "w.fio" = "/etc/shadow" }\n')
    with pytest.raises(spec.SpecError, match="inputs: unknown field"):
        load.load(path)


def test_a_file_too_large_to_store_names_its_field(tmp_path, monkeypatch):
    (tmp_path / "w.fio").write_text(JOB)
    exp = experiment(workload=[{"name": "w", "job_file": "w.fio"}], base_dir=str(tmp_path))
    monkeypatch.setattr(inputs, "MAX_INPUT", 4)
    with pytest.raises(spec.SpecError, match=r'workload\["w"\].job_file: .*w.fio: the file to store with the run '
                                             r'is larger than 4 bytes'):
        inputs.read(exp)
