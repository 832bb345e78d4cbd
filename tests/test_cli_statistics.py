"""The command line of views, recheck and calibrate, with a scripted host."""

import json

import pytest

from iolab import cli
from iolab.run import runner
from tests.fakes import ScriptedHost

EXPERIMENT = """
name = "cli scripted"
[[variant]]
name = "base"
[[variant]]
name = "patched"
[[workload]]
name = "randread"
job = "[j]\\nrw=randread\\n"
[run]
iterations = 6
seed = 4
[report]
metrics = ["read_bw", "ctx"]
"""

LEVELS = {"base": 100.0, "patched": 120.0, "base'": 100.0}


@pytest.fixture
def scripted(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "preflight", lambda experiment: None)
    monkeypatch.setattr(runner, "LocalHost", lambda: ScriptedHost(LEVELS))
    path = tmp_path / "exp.toml"
    path.write_text(EXPERIMENT)
    return ["--store", str(tmp_path / "s.db")], path


def test_run_report_views_and_min_max(scripted, capsys):
    store, path = scripted
    assert cli.main([*store, "run", str(path), "--quiet"]) == 0
    first = capsys.readouterr().out
    assert "median ±rel. spread" in first and "min..max" not in first
    assert cli.main([*store, "report", "1", "--view", "mean", "--min-max"]) == 0
    out = capsys.readouterr().out
    assert "mean ±stddev" in out and "min..max" in out
    assert cli.main([*store, "report", "1", "--view", "hmean", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["statistics"]["view"] == "hmean"


def test_recheck_runs_the_stored_experiment_again(scripted, capsys):
    store, path = scripted
    cli.main([*store, "run", str(path), "--quiet"])
    capsys.readouterr()
    assert cli.main([*store, "run", "--recheck", "1", "--dry-run"]) == 0  # says its order is not the recheck's
    assert "drawn for this dry run; a recheck draws its own seed" in capsys.readouterr().out
    assert cli.main([*store, "run", "--recheck", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "recheck: run 2" in out and out.count("recheck") >= 3
    assert cli.main([*store, "report", "2", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["run"]["recheck_of"] == 1 and document["run"]["seed"] != 4
    assert document["rechecked_run"]["run"]["id"] == 1
    assert cli.main([*store, "run", str(path), "--recheck", "1"]) == cli.EXIT_USAGE
    assert cli.main([*store, "run", "--recheck", "9"]) == cli.EXIT_USAGE


def test_iterations_auto_from_the_command_line(scripted, capsys):
    store, path = scripted
    assert cli.main([*store, "run", str(path), "--iterations", "auto", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(auto, 5..30)" in out and "stopped after" in out


def test_calibrate_prints_noise_and_detectable_change(scripted, capsys):
    store, path = scripted
    assert cli.main([*store, "calibrate", str(path), "--iterations", "6", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("iolab calibrate: cli scripted")
    assert "base against an identical copy (base')" in out
    assert "detectable" in out and "noise" in out
    assert max(len(line) for line in out.splitlines()) <= 72
    assert cli.main([*store, "report", "1", "--format", "json"]) == 0  # a stored calibration reports as one
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "calibration" and [r["metric"] for r in document["rows"]] == ["read_bw", "ctx"]
