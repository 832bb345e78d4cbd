"""compare, history, the CI gate, baselines, and the csv and benchstat exports:
golden files from scripted runs, the gate's exit codes on the command line,
and the benchstat export read by the real benchstat where Go has it."""

import csv
import io
import re
import os
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from iolab import cli
from iolab.cli import gate
from iolab.analysis import history
from iolab.analysis import reports
from iolab.report import renderer
from iolab.report.history import RENDERERS as HISTORY
from iolab.run import runner
from iolab.store import Store, StoreError
from tests.fakes import FIXED_HOST, ScriptedHost, ShapedHost
from tests.helpers import check_golden, copy_run, experiment
from tests.postgres import postgres_server, postgres_url  # noqa: F401 (fixtures)

CLOCK = 1_760_000_000.0  # the runs' start times in the golden files


@pytest.fixture
def two_runs(tmp_path, monkeypatch):
    """Run 1 and run 2 of one experiment; in run 2 "patched" reads 10% slower."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    clock = iter(CLOCK + 3600 * i for i in range(1000))
    monkeypatch.setattr("iolab.store.runs.time", SimpleNamespace(time=lambda: next(clock)))
    store = Store(tmp_path / "runs.db")
    levels = {"base": 100.0, "patched": 120.0}

    def slower(cell, metrics):
        if cell.variant.name == "patched":
            metrics["read_bw"] *= 0.9
    first = runner.run(experiment(list(levels)), store, host=ScriptedHost(levels))
    second = runner.run(experiment(list(levels)), store, host=ShapedHost(levels, slower, seed=2))
    yield store, first, second
    time.tzset()


def test_compare_text_and_json(two_runs):
    store, first, second = two_runs
    report = reports.compare_report(store, first, second)
    text = renderer("text")(report)
    check_golden("compare.txt", text)
    assert max(len(line) for line in text.splitlines()) <= 72
    rows = {(r.workload, r.metric.name): r for r in report.analysis.rows}
    assert rows[("randread [patched]", "read_bw")].comparisons[f"run {second}"].verdict == "worse"
    assert rows[("randread [base]", "read_bw")].comparisons[f"run {second}"].verdict == "same"
    document = __import__("json").loads(renderer("json")(report))
    assert document["kind"] == "compare" and document["runs"]["a"]["id"] == first
    assert document["statistics"]["test"].startswith("Mann-Whitney U")
    reply = " ".join(renderer("reply")(report).split())  # each run's line, and the runs compared unpaired
    assert f"A = run {first}, " in reply and f"B = run {second}, " in reply and "0 rounds" not in reply
    assert "each variant's values in run A against run B, unpaired" in reply


class OtherKernel(ScriptedHost):
    """A machine with another kernel."""

    def describe(self):
        return {**FIXED_HOST, "kernel": "6.19.0-test"}

    def run_cell(self, cell):
        return super().run_cell(cell).with_more(env={"kernel": "6.19.0-test"})


def test_compare_lists_environment_differences(two_runs, monkeypatch):
    store, first, _ = two_runs
    levels = {"base": 100.0, "patched": 120.0}
    third = runner.run(experiment(list(levels)), store, host=OtherKernel(levels, seed=4))
    report = reports.compare_report(store, first, third)
    assert [(row.key, row.checked) for row in report.environment if row.differs] == [("kernel", True)]
    text = " ".join(renderer("text")(report).split())
    assert "B = run 3" in text and "kernel 6.19.0-test" in text  # run B's header line
    assert "environment differs in kernel: run 1 6.18.0-test; run 3 6.19.0-test (a checked key)" in text


class PerCell(ScriptedHost):
    """Cells as a machine gives them: each run its own loop device (the
    knob's path names it), and a VM boot's timings that differ in every cell."""

    def __init__(self, levels, device, **kw):
        super().__init__(levels, **kw)
        self.device = device

    def run_cell(self, cell):
        boot = 10 + self.rng.random()
        ahead = "128" if cell.variant.name == "base" else "0"
        return super().run_cell(cell).with_more(env={
            "target": {"kind": "loop", "size": cell.target.size},
            "prepared": {"device": f"/dev/{self.device}", "mountpoint": f"/tmp/c{cell.seq}/mnt"},
            "knobs": {f"sysfs /sys/block/{self.device}/queue/read_ahead_kb": ["2560", ahead]},
            "vm": {"boot_s": boot, "boot": cell.seq // 2, "cells_in_boot": 2, "guest_timeline": {"import_s": boot / 5}},
            "guest": {"cell_index": cell.seq % 2, "cell_uptime": boot + cell.seq, "import_s": boot / 5,
                      "ready_uptime": boot, "python_started_uptime": boot / 2, "device": "/run/iolab-disk"}})


def test_compare_lists_only_setup_differences(tmp_path):
    """Two runs that got different loop devices, and whose cells booted in
    different times, differ only where their setup does: the target's size."""
    store = Store(tmp_path / "env.db")
    levels = {"base": 100.0, "patched": 120.0}
    first = runner.run(experiment(list(levels)), store, host=PerCell(levels, "loop1"))
    second = runner.run(experiment(list(levels), target={"size": "2GiB"}), store, host=PerCell(levels, "loop12", seed=3))
    report = reports.compare_report(store, first, second)
    keys = {row.key for row in report.environment}
    assert "knobs.sysfs /sys/block/<target>/queue/read_ahead_kb" in keys and "guest.device" in keys
    assert not any(k.startswith(("vm.boot", "vm.cells", "vm.guest", "guest.cell", "guest.import")) for k in keys)
    assert [row.key for row in report.environment if row.differs] == ["target.size"]
    text = " ".join(renderer("text")(report).split())
    assert text.count("environment differs") == 1
    assert "environment differs in target.size: run 1 1073741824; run 2 2147483648" in text
    own = reports.run_report(store, first)  # a run's own environment: its variants differ in the knob only
    assert [row.key for row in own.environment if row.differs] == [
        "knobs.sysfs /sys/block/<target>/queue/read_ahead_kb"]


def test_history_text(two_runs):
    store, first, second = two_runs
    found = history.history(store, "read_bw")
    assert [r.id for r in found.runs] == [first, second]
    assert [(s.workload, s.variant) for s in found.series] == [("randread", "base"), ("randread", "patched")]
    text = HISTORY["text"](found)
    check_golden("history.txt", text)
    assert max(len(line) for line in text.splitlines()) <= 72


def test_history_marks_a_run_whose_setup_changed(two_runs):
    store, first, second = two_runs
    levels = {"base": 100.0, "patched": 120.0}
    changed = experiment(list(levels), target={"size": "2GiB"})
    third = runner.run(changed, store, host=OtherKernel(levels, seed=4))
    found = history.history(store, "read_bw")
    assert found.changes == {third: ["[target]", "kernel 6.18.0-test -> 6.19.0-test"]}
    text = HISTORY["text"](found)
    assert max(len(line) for line in text.splitlines()) <= 72  # the kernel column wraps in its column
    assert f"run {third}" in text and "6.19.0-test <- changed: [target], kernel" in " ".join(text.split())
    assert f"run {third}'s setup differs from the run before: [target]; kernel 6.18.0-test -> 6.19.0-test" \
        in " ".join(text.split())
    document = __import__("json").loads(HISTORY["json"](found))
    assert [r["setup_changes"] for r in document["runs"]] == [[], [], found.changes[third]]
    # the runs before it are alike: no mark
    assert history.history(store, "read_bw", last=2).changes == {third: found.changes[third]}
    assert "changed" not in HISTORY["text"](history.history(store, "read_bw", last=3)).split("notes:")[0] \
        .split(f"run {third}")[0]


def test_history_suggests_metric_names(two_runs):
    store, _, _ = two_runs
    with pytest.raises(StoreError, match="has the metric 'read_b'; did you mean read_bw") as refused:
        history.history(store, "read_b")
    assert "its metrics: read_bw, read_p50, read_p99, ctx" in str(refused.value)  # the catalogue's first
    by_label = history.history(store, "rd  BW MiB/s")  # a row's label as the table shows it
    assert by_label.metric.name == "read_bw" and by_label.series == history.history(store, "read_bw").series


def test_header_says_the_block_size_each_filesystem_had():
    from iolab.report.headers import _blocks_text

    assert _blocks_text({}) == ""
    assert _blocks_text({"ext4": [1024]}) == " (1KiB blocks)"
    assert _blocks_text({"ext4": [4096], "xfs": [4096]}) == " (4KiB blocks)"
    assert _blocks_text({"ext4": [1024, 4096], "xfs": [4096]}) == " (blocks: ext4 1KiB/4KiB, xfs 4KiB)"


def test_header_names_each_variants_filesystem(tmp_path):
    from iolab.report.headers import _fs_text

    assert _fs_text(experiment(["a", {"name": "b", "fs": "xfs"}])) == "ext4 (a), xfs (b)"
    raw = experiment(("a", "b"), target={"fs": "xfs"},
                     workload=[{"name": "w", "job": "[j]\n"}, {"name": "E", "fs": "none", "job": "[j]\n"}])
    assert _fs_text(raw) == "xfs (E: raw)"


def test_header_says_a_candidate_booting_the_baselines_kernel_is_an_a_a():
    from iolab.report.headers import _same_variants

    kernel = "debian:6.1.0-56-amd64"
    same = experiment([{"name": "base", "kernel": kernel}, {"name": "series", "kernel": kernel}])
    assert _same_variants(same) == ["A/A: series is base (same kernel, patches, settings): its deltas are noise"]
    other = experiment([{"name": "base", "kernel": kernel}, {"name": "direct", "kernel": kernel, "fio": {"direct": 1}}])
    assert _same_variants(other) == []


def test_sparkline():
    assert history.sparkline([1, 2, 3, 4, 5, 6, 7, 8]) == "▁▂▃▄▅▆▇█"
    assert history.sparkline([5.0, float("nan"), 5.0]) == "▄ ▄"
    assert history.sparkline([]) == ""


def test_csv_has_every_sample_and_metric(two_runs):
    store, first, _ = two_runs
    text = renderer("csv")(reports.run_report(store, first))
    check_golden("samples.csv", text)
    rows = list(csv.DictReader(io.StringIO(text)))
    samples = store.samples(first)
    assert len(rows) == sum(len(s.metrics) for s in samples)
    first_bw = next(r for r in rows if r["seq"] == "0" and r["metric"] == "read_bw")
    assert float(first_bw["value"]) == samples[0].metrics["read_bw"] and first_bw["unit"] == "MiB/s"


def test_benchstat_export_golden(two_runs):
    store, first, _ = two_runs
    check_golden("run.benchstat", renderer("benchstat")(reports.run_report(store, first)))


def benchstat_binary():
    found = shutil.which("benchstat")
    if found is None and shutil.which("go"):
        gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True).stdout.strip()
        candidate = Path(gopath, "bin", "benchstat")
        found = str(candidate) if candidate.exists() else None
    if found is None:
        pytest.skip("benchstat is not installed (go install golang.org/x/perf/cmd/benchstat; scripts/setup "
                    "does it where Go is present)")
    return found


def test_real_benchstat_reads_the_export(two_runs, tmp_path):
    store, first, _ = two_runs
    report = reports.run_report(store, first)
    path = tmp_path / "run.txt"
    path.write_text(renderer("benchstat")(report))
    done = subprocess.run([benchstat_binary(), "-format", "csv", "-col", "variant", str(path)],
                          capture_output=True, text=True, check=True)
    assert "parsing" not in done.stderr and done.stderr.strip() == "", done.stderr
    out = done.stdout
    bw = report.analysis.rows[0]
    assert bw.metric.name == "read_bw"
    # benchstat's median of the same samples is iolab's (4 significant digits in its CSV)
    block = out[out.index("MiB/s-read_bw"):]
    line = next(l for l in block.splitlines() if l.startswith("Randread,"))
    fields = line.split(",")
    assert float(fields[1]) == pytest.approx(bw.figures["base"].center, rel=1e-3)
    assert float(fields[3]) == pytest.approx(bw.figures["patched"].center, rel=1e-3)


def test_gate_parse_and_check(two_runs):
    assert gate.parse("regression").threshold == 0
    assert gate.parse("regression:5%").threshold == pytest.approx(0.05)
    assert gate.parse("regression:2.5").threshold == pytest.approx(0.025)
    assert not gate.parse("regression").undecided
    assert gate.parse("undecided") == gate.Gate(None, "undecided", True)
    assert gate.parse("regression:5%, undecided") == gate.Gate(0.05, "regression:5%, undecided", True)
    for bad in ("regress", "regression:-1%", "regression:5%%", "regression:2000%"):
        with pytest.raises(ValueError):
            gate.parse(bad)
    store, first, second = two_runs
    compared = reports.compare_report(store, first, second).analysis
    assert not gate.check(compared, gate.parse("regression:5%")).passed  # patched -10%
    assert gate.check(compared, gate.parse("regression:15%")).passed
    outcome = gate.check(compared, gate.parse("regression:5%"))
    assert len(outcome.regressions) == 1 and "randread [patched] rd BW MiB/s" in outcome.regressions[0]


def iolab(store_path, *args):
    return cli.main(["--store", str(store_path), *args])


def test_cli_gate_baseline_and_exit_codes(two_runs, tmp_path, capsys):
    store, first, second = two_runs
    where = store.where
    assert iolab(where, "baseline", "save", "main", str(first)) == 0
    assert iolab(where, "report", str(second), "--baseline", "main", "--fail-on", "regression:5%") == 3
    err = capsys.readouterr().err
    assert "gate regression:5%: FAILED" in err and "worse: randread [patched] rd BW MiB/s" in err
    assert re.search(r"\], p=[0-9.e-]+ \(holm [0-9.e-]+\)", err), err  # the test's p, then the corrected one
    assert iolab(where, "report", str(second), "--baseline", "main", "--fail-on", "regression:15%") == 0
    assert "passed" in capsys.readouterr().err
    # within run 1 patched is better than base: the run's own table has no regression
    assert iolab(where, "report", str(first), "--fail-on", "regression") == 0
    assert "passed: 2 comparisons" in capsys.readouterr().err  # the 2 primary rows (BW, p50); ctx, p99 exploratory
    assert iolab(where, "compare", str(first), str(second), "--fail-on", "regression:5%") == 3
    assert iolab(where, "report", str(second), "--baseline", "nope") == 2
    assert "no baseline named 'nope'" in capsys.readouterr().err
    assert iolab(where, "baseline", "list") == 0
    assert "main" in capsys.readouterr().out
    assert iolab(where, "history", "nosuch") == 2
    assert iolab(where, "compare", str(first), str(first)) == 2


def test_a_baseline_is_a_complete_run_and_is_checked_before_a_run(two_runs, tmp_path, capsys):
    from iolab.run import calibrate

    store, first, second = two_runs
    where = store.where
    stopped = store.begin_run(name="scripted comparison", experiment_path=None,
                              experiment_json=experiment(["base", "patched"]).model_dump_json(), seed=1,
                              planned_cells=16, host={})
    store.end_run(stopped, "interrupted", "its process was killed")
    assert iolab(where, "baseline", "save", "main", str(stopped)) == 2
    assert f"run {stopped} is interrupted (0 of 16 cells measured, 0 failed): a baseline is a complete run; " \
        f"iolab resume {stopped} completes it" in capsys.readouterr().err
    aa = runner.run(calibrate.aa_experiment(experiment(["base", "patched"])), store, host=ScriptedHost({"base": 1.0, "base'": 1.0}))
    assert iolab(where, "baseline", "save", "main", str(aa)) == 2
    assert "is a calibration (A/A), not a baseline" in capsys.readouterr().err
    assert iolab(where, "runs") == 0  # iolab runs tells the kinds of runs apart
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert listed[str(aa)].endswith("[A/A calibration]") and "interrupted" in listed[str(stopped)]
    assert iolab(where, "baseline", "save", "main", str(first)) == 0
    path = tmp_path / "exp.toml"
    path.write_text('name = "x"\n[[variant]]\nname = "base"\n[[variant]]\nname = "patched"\n'
                    '[[workload]]\nname = "randread"\njob = "[j]\\nrw=randread\\n"\n[run]\niterations = 8\n')
    # a name not saved, or a baseline this run cannot be set against: refused before any cell runs
    assert iolab(where, "run", str(path), "--baseline", "nope", "--dry-run") == 2
    assert "no baseline named 'nope'" in capsys.readouterr().err
    path.write_text(path.read_text().replace('name = "patched"', 'name = "other"').replace('"randread"', '"seqread"'))
    assert iolab(where, "run", str(path), "--baseline", "main", "--dry-run") == 2
    assert f"baseline 'main' (run {first}) and this run share no variant and workload" in capsys.readouterr().err
    assert iolab(where, "baseline", "delete", "main") == 0
    assert f"baseline 'main' forgotten (run {first} stays)" in capsys.readouterr().out
    assert store.baselines() == [] and iolab(where, "baseline", "delete", "main") == 2


def test_the_gate_names_undecided_rows_and_fails_on_them_only_when_asked(tmp_path, monkeypatch, capsys):
    store = Store(tmp_path / "few.db")
    levels = {"base": 100.0, "patched": 100.0}
    run_id = runner.run(experiment(list(levels), iterations=3), store, host=ScriptedHost(levels))
    assert iolab(store.where, "report", str(run_id), "--fail-on", "regression") == 0
    err = capsys.readouterr().err
    assert "passed" in err and "undecided, not gated (--fail-on regression,undecided fails on them)" in err
    assert "  undecided: randread rd BW MiB/s patched: " in err
    assert iolab(store.where, "report", str(run_id), "--fail-on", "regression,undecided") == 3
    err = capsys.readouterr().err
    assert "FAILED" in err and "  undecided: randread rd BW MiB/s patched: " in err
    assert iolab(store.where, "report", str(run_id), "--fail-on", "undecided") == 3
    with pytest.raises(SystemExit) as bad:
        iolab(store.where, "report", str(run_id), "--fail-on", "regresion")
    assert bad.value.code == 2
    assert "expected 'regression', 'regression:N%' or 'undecided'" in capsys.readouterr().err


@pytest.mark.skipif(os.environ.get("IOLAB_SKIP_PG") == "1", reason="IOLAB_SKIP_PG=1")
def test_postgres_store_gives_the_same_compare_and_history(two_runs, request):

    pg_url = request.getfixturevalue("postgres_url")
    store, first, second = two_runs
    pg = Store(pg_url)
    a, b = copy_run(store, first, pg), copy_run(store, second, pg)
    lite = renderer("text")(reports.compare_report(store, first, second))
    shared = renderer("text")(reports.compare_report(pg, a, b))
    assert (a, b) == (first, second)  # a fresh database numbers them alike
    assert shared.split("\n\n", 1)[1] == lite.split("\n\n", 1)[1]  # all below the header (times)
    assert [[p.center for p in s.points] for s in history.history(pg, "read_p99").series] == \
        [[p.center for p in s.points] for s in history.history(store, "read_p99").series]


def test_compare_names_the_host_load_of_each_run_when_it_disturbed_them(two_runs):
    import dataclasses

    from iolab.analysis import compare

    store, first, second = two_runs

    def beside(run_id, other_cpu_s):  # each cell ran 1 s beside other processes' CPU
        return [dataclasses.replace(s, run_s=1.0, metrics={**s.metrics, "host.other_cpu_s": other_cpu_s})
                for s in store.samples(run_id)]

    quiet = compare.runs_compared(store.run(first), store.samples(first), store.run(second), store.samples(second))
    assert not any("other processes' CPU" in note for note in quiet.notes)  # not measured: nothing said
    busy = compare.runs_compared(store.run(first), beside(first, 0.9), store.run(second), beside(second, 0.3))
    assert (f"other processes' CPU beside a cell (median): run {first} 0.90 s, run {second} 0.30 s: a change "
            "between runs taken at different times carries the machine's change too") in busy.notes[-1]


def test_a_key_one_run_did_not_record_is_no_setup_change():
    from iolab.cell.sample import Sample

    def sample(env):
        return Sample(seq=0, round=0, iteration=0, warmup=False, variant="a", workload="w", status="ok", env=env)

    assert history.env_changes([sample({"kernel": "6.18"})], [sample({"kernel": "6.18", "cpu_model": "EPYC"})]) == []
    assert history.env_changes([sample({"cpus": 2})], [sample({"cpus": 4})]) == ["cpus 2 -> 4"]


def test_history_names_the_experiment_it_chose_and_how_to_pick_another(two_runs):
    """Without --experiment history takes the latest run's: it says so, in its
    notes and when the metric is not there, with the other experiments."""
    store, first, _ = two_runs
    levels = {"base": 100.0, "patched": 120.0}
    runner.run(experiment(list(levels), name="a patch run"), store, host=OtherKernel(levels, seed=4))
    with pytest.raises(StoreError) as refused:
        history.history(store, "read_b")
    assert str(refused.value).endswith("(the experiment 'a patch run' is the latest run's; --experiment NAME "
                                       "picks another (scripted comparison))")
    found = history.history(store, "read_bw")
    assert found.experiment == "a patch run"
    assert "the experiment 'a patch run' is the latest run's; --experiment NAME picks another" in \
        " ".join(HISTORY["text"](found).split())
    assert not any("latest run's" in note for note in history.history(store, "read_bw",
                                                                       experiment="scripted comparison").notes)
