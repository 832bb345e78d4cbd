"""Exact report output for scripted samples (golden files in tests/golden).

Regenerate after an intended change with: UPDATE_GOLDEN=1 pytest tests/test_report_golden.py
"""

import json
import os
from pathlib import Path

import pytest

from iolab import analysis, environment, runner, spec
from iolab.report import renderer
from iolab.store import Store
from tests.fakes import FIXED_HOST, ScriptedHost

GOLDEN = Path(__file__).parent / "golden"


def experiment(variants, iterations=8):
    return spec.parse({
        "name": "scripted comparison",
        "variant": [{"name": name} for name in variants],
        "workload": [{"name": "randread", "job": "[j]\nrw=randread\n"}],
        "run": {"iterations": iterations, "seed": 5},
        "report": {"metrics": ["read_bw", "read_p50", "read_p99", "ctx"]},
    })


def run_scripted(tmp_path, monkeypatch, levels, fail=None, iterations=8):
    monkeypatch.setattr(environment, "host", lambda: dict(FIXED_HOST))
    store = Store(tmp_path / "golden.db")
    run_id = runner.run(experiment(list(levels), iterations), store, host=ScriptedHost(levels, fail))
    return analysis.analyse(store.run(run_id), store.samples(run_id))


def check_golden(name, text):
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


@pytest.mark.parametrize("fmt, suffix", [("text", "txt"), ("markdown", "md"), ("json", "json")])
def test_two_variants(tmp_path, monkeypatch, fmt, suffix):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0})
    output = renderer(fmt)(result)
    if fmt == "json":  # the run's wall-clock times are not reproducible
        document = json.loads(output)
        document["run"]["started"] = document["run"]["finished"] = 0
        output = json.dumps(document, indent=2) + "\n"
    check_golden(f"two-variants.{suffix}", output)


def test_text_fits_a_mail(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0, "other": 100.0})
    text = renderer("text")(result)
    assert max(len(line) for line in text.splitlines()) <= 72
    check_golden("three-variants.txt", text)


def test_failed_variant_shows_failure_not_number(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "broken": 1.0},
                          fail={"broken": "fio exit 1: fio: first direct IO errored"})
    text = renderer("text")(result)
    check_golden("failed-variant.txt", text)
    assert "FAILED" in text and "first direct IO errored" in text
    document = json.loads(renderer("json")(result))
    assert document["comparisons"] == []
    assert document["failures"][0]["error"] == "fio exit 1: fio: first direct IO errored"
    assert document["rows"][0]["figures"]["broken"]["center"] is None


def test_too_few_samples_gives_no_verdict(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 200.0}, iterations=3)
    document = json.loads(renderer("json")(result))
    assert {c["verdict"] for c in document["comparisons"]} == {"insufficient"}
    assert "need >= 4 samples per side" in renderer("text")(result)


def test_json_comparison_fields(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0})
    document = json.loads(renderer("json")(result))
    bw = next(c for c in document["comparisons"] if c["metric"] == "read_bw")
    assert set(bw) >= {"workload", "metric", "unit", "variant", "baseline_value", "candidate_value",
                       "delta", "p", "n_base", "n_cand", "verdict"}
    assert bw["verdict"] == "better" and bw["n_base"] == bw["n_cand"] == 8
    assert bw["delta"] == pytest.approx(0.2, abs=0.02)
    p99 = next(c for c in document["comparisons"] if c["metric"] == "read_p99")
    assert p99["verdict"] == "better"  # lower latency is better
