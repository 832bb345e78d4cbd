"""A report's notes say each cause once (issue 37): notes that differ only in a number are one, with
how many rows or cells it covers; a tool version some samples lack is no difference."""

from iolab.analysis import diagnostics, envdiff, reports
from iolab.cell.sample import Sample
from iolab.report import footnotes, renderer
from iolab.run import runner
from iolab.store import Store
from tests.fakes import ScriptedHost
from tests.helpers import experiment


def test_notes_that_differ_only_in_a_number_are_one_with_the_rows_it_covers():
    found = {f"with 6 rounds the smallest possible p is {p}, not below 0.05": [f"w{i} rd BW"]
             for i, p in enumerate(["0.0625", "1", "0.5", "0.25", "0.125"])}
    found["every value equal"] = ["w9 ctx"]
    assert footnotes.by_cause(found) == {
        "with 6 rounds the smallest possible p is 0.0625..1, not below 0.05": [f"w{i} rd BW" for i in range(5)],
        "every value equal": ["w9 ctx"]}


def test_failures_that_differ_only_in_a_number_are_one_note_counting_their_cells(tmp_path):
    store = Store(tmp_path / "runs.db")
    host = ScriptedHost({"base": 100.0, "patched": 120.0},
                        fail={"patched": lambda cell: f"fio: job exited with status 1 after {cell.seq + 10} ms"})
    exp = experiment(["base", "patched"], iterations=4, workload=[
        {"name": "randread", "job": "[j]\nrw=randread\n"}, {"name": "seqread", "job": "[j]\nrw=read\n"}])
    text = renderer("text")(reports.run_report(store, runner.run(exp, store, host=host)))
    notes = [line for line in text.split("notes:")[1].splitlines() if line.startswith("- FAILED")]
    assert len(notes) == 1, text
    flat = " ".join(text.split())
    assert "FAILED patched / randread, seqread: " in flat and "after 1" in flat and ".." in flat


def sample(seq, workload, fio):
    env = {"kernel": "6.18", "cpus": 2, **({"fio": fio} if fio is not None else {})}
    return Sample(seq=seq, round=seq, iteration=seq, warmup=False, variant="base", workload=workload,
                  status="ok", metrics={"x": 1.0}, env=env)


def test_a_tool_version_some_samples_lack_is_no_difference():
    exp = experiment(["base", "patched"])
    lacking = [sample(0, "fio job", "fio-3.33"), sample(1, "probe job", None)]
    assert diagnostics.env_differences(lacking, exp) == []
    assert not next(r for r in envdiff.rows(lacking, lambda s: s.workload, ["fio job", "probe job"])
                    if r.key == "fio").differs
    other = [sample(0, "fio job", "fio-3.33"), sample(1, "fio job", "fio-3.36")]
    assert diagnostics.env_differences(other, exp) == ['samples differ in fio: "fio-3.33", "fio-3.36"']
