"""Exact report output for scripted samples (golden files in tests/golden).

Regenerate after an intended change with: UPDATE_GOLDEN=1 pytest tests/test_report_golden.py
"""

import json

import pytest

from iolab import analysis
from iolab.run import runner
from iolab.report import legends, renderer
from iolab.store import Store
from tests.fakes import ScriptedHost, ShapedHost
from tests.helpers import check_golden, experiment

def run_scripted(tmp_path, monkeypatch, levels, fail=None, iterations=8):
    store = Store(tmp_path / "golden.db")
    run_id = runner.run(experiment(list(levels), iterations), store, host=ScriptedHost(levels, fail))
    return analysis.analyse(store.run(run_id), store.samples(run_id))


@pytest.mark.parametrize("fmt, suffix", [("text", "txt"), ("markdown", "md"), ("json", "json")])
def test_two_variants(tmp_path, monkeypatch, fmt, suffix):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0})
    output = renderer(fmt)(result)
    if fmt == "json":  # the run's wall-clock times are not reproducible
        document = json.loads(output)
        document["run"]["started"] = document["run"]["finished"] = 0
        output = json.dumps(document, indent=2) + "\n"
    check_golden(f"two-variants.{suffix}", output)


def test_a_row_is_whole_when_made(tmp_path, monkeypatch):
    """A Row is frozen, and its mappings too: its verdicts are decided before
    it is made (a refusal makes a new one), so a change afterwards is refused."""
    row = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0}).rows[0]
    assert row.comparisons["patched"].verdict == "worse" or row.comparisons["patched"].verdict == "better"
    with pytest.raises(TypeError):
        row.comparisons["patched"] = row.comparisons["patched"]  # type: ignore[index]
    with pytest.raises(TypeError):
        row.figures["base"] = row.figures["base"]  # type: ignore[index]


def test_text_fits_a_mail(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0, "other": 100.0})
    text = renderer("text")(result)
    assert max(len(line) for line in text.splitlines()) <= 72
    check_golden("three-variants.txt", text)


def test_failed_variant_shows_failure_not_number(tmp_path, monkeypatch):
    """A variant that fails its cells of rounds 0-1 alike stops the run there
    (iolab.run.early): the header says why, the table shows it FAILED."""
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "broken": 1.0},
                          fail={"broken": "fio exit 1: fio: first direct IO errored"})
    text = renderer("text")(result)
    check_golden("failed-variant.txt", text)
    assert "FAILED" in text and "first direct IO errored" in " ".join(text.split())
    document = json.loads(renderer("json")(result))
    assert document["comparisons"] == []
    assert document["failures"][0]["error"] == "fio exit 1: fio: first direct IO errored"
    assert document["rows"][0]["figures"]["broken"]["center"] is None


def test_too_few_samples_gives_no_verdict(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 200.0}, iterations=3)
    document = json.loads(renderer("json")(result))
    varying = [c for c in document["comparisons"] if c["metric"] in ("read_bw", "ctx")]
    assert {c["verdict"] for c in varying} == {"insufficient"}
    assert all("need >= 4 samples per side, have 3 and 3" in c["warnings"] for c in varying)
    assert "need >= 4 samples" in " ".join(renderer("text")(result).split())
    # the scripted p50 and p99 do not vary: an exact change, whatever the rounds
    assert {c.get("exact") for c in document["comparisons"] if c["metric"] in ("read_p50", "read_p99")} == \
        {"identical"}


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


# --- views, recheck, adaptive runs, calibration, noise footnotes -------------------

def stored(tmp_path, monkeypatch, experiment_, host, **kw):
    store = Store(tmp_path / "golden.db")
    run_id = runner.run(experiment_, store, host=host, **kw)
    return store, run_id


def auto_experiment(variants, **run):
    return experiment(variants, run={"iterations": "auto", "seed": 5, **run})


def test_mean_view_with_min_max(tmp_path, monkeypatch):
    levels = {"base": 100.0, "patched": 120.0}
    store, run_id = stored(tmp_path, monkeypatch, experiment(list(levels)), ScriptedHost(levels))
    result = analysis.analyse(store.run(run_id), store.samples(run_id), view="mean", min_max=True)
    text = renderer("text")(result)
    check_golden("mean-view.txt", text)
    assert "mean ±stddev" in text and "min..max" in text
    assert max(len(line) for line in text.splitlines()) <= 72
    document = json.loads(renderer("json")(result))
    assert document["statistics"]["view"] == "mean"
    assert document["rows"][0]["figures"]["base"]["min"] is not None


def test_hmean_falls_back_per_row_when_a_value_is_zero(tmp_path, monkeypatch):
    def zero_ctx(cell, metrics):
        if cell.iteration == 2:
            metrics["ctx"] = 0.0
    levels = {"base": 100.0, "patched": 120.0}
    store, run_id = stored(tmp_path, monkeypatch, experiment(list(levels)), ShapedHost(levels, zero_ctx))
    result = analysis.analyse(store.run(run_id), store.samples(run_id), view="hmean")
    assert [row.view for row in result.rows] == ["hmean", "hmean", "hmean", "median"]
    text = renderer("text")(result)
    check_golden("hmean-fallback.txt", text)
    assert "harmonic mean needs positive values: randread ctx switches shown as median" in " ".join(text.split())


def test_recheck_prints_both_runs(tmp_path, monkeypatch):
    levels = {"base": 100.0, "patched": 120.0}
    store, first = stored(tmp_path, monkeypatch, experiment(list(levels)), ScriptedHost(levels))
    second = runner.run(experiment(list(levels)), store, host=ScriptedHost(levels, seed=2), seed=77,
                        recheck_of=first)
    assert store.run(second).recheck_of == first
    original = analysis.analyse(store.run(first), store.samples(first))
    result = analysis.analyse(store.run(second), store.samples(second), original=original)
    text = renderer("text")(result)
    check_golden("recheck.txt", text)
    check_golden("recheck.md", renderer("markdown")(result))
    lines = text.splitlines()
    assert lines[lines.index(next(l for l in lines if l.startswith("randread"))) + 1].strip().startswith("recheck")
    document = json.loads(renderer("json")(result))
    assert document["run"]["recheck_of"] == first and document["rechecked_run"]["run"]["id"] == first


def test_auto_run_stops_when_all_deltas_are_decided(tmp_path, monkeypatch):
    levels = {"base": 100.0, "patched": 120.0}
    store, run_id = stored(tmp_path, monkeypatch, auto_experiment(list(levels)), ScriptedHost(levels))
    run = store.run(run_id)
    assert run.stop_reason == "all deltas decided"
    result = analysis.analyse(run, store.samples(run_id))
    # paired by round: 2 primary rows share alpha, the signed-rank level over looks 5..30 is
    # about 0.0054, and 8 rounds give at best p = 2/2**8 = 0.0078: 9 rounds (0.0039) decide
    assert result.rounds_done == 9
    text = renderer("text")(result)
    check_golden("auto-stop.txt", text)
    assert "stopped after 9 rounds: all deltas decided" in text
    document = json.loads(renderer("json")(result))
    assert document["statistics"]["correction"] == "sequential"
    assert document["statistics"]["look_alpha"] == pytest.approx(result.sequential.look_alpha)
    primary = [c for c in document["comparisons"] if c["family"] == "primary"]
    assert primary and all(c["alpha"] == pytest.approx(result.sequential.look_alpha) for c in primary)


def test_auto_run_reports_budget_and_max(tmp_path, monkeypatch):
    # A/A with noise wider than the target: nothing is ever decided
    levels = {"base": 100.0, "same": 100.0}

    def noisy(cell, metrics):
        metrics["read_bw"] *= 1 + 0.2 * ((cell.seq * 7919) % 13 - 6) / 6
    clock = iter(range(0, 100_000, 10))  # every reading of the clock 10 s later
    store, run_id = stored(tmp_path, monkeypatch, auto_experiment(list(levels), time_budget="3m"),
                           ShapedHost(levels, noisy), clock=lambda: next(clock))
    run = store.run(run_id)
    assert run.stop_reason == "time budget reached (3m)"
    result = analysis.analyse(run, store.samples(run_id))
    assert 5 <= result.rounds_done < 30
    check_golden("auto-budget.txt", renderer("text")(result))
    store2, run2 = stored(tmp_path / "max", monkeypatch, auto_experiment(list(levels), max_iterations=7),
                          ShapedHost(levels, noisy))
    assert store2.run(run2).stop_reason == "max_iterations reached (7 rounds)"


def test_calibration_report(tmp_path, monkeypatch):
    from iolab.run import calibrate
    from iolab.report.calibration import RENDERERS

    aa = calibrate.aa_experiment(experiment(["base", "patched"]), 10)
    assert [v.name for v in aa.variant] == ["base", "base'"] and aa.report.kind == "calibration"
    levels = {"base": 100.0, "base'": 100.0}
    store, run_id = stored(tmp_path, monkeypatch, aa, ScriptedHost(levels))
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    found = calibrate.calibrate(result, store.samples(run_id))
    text = RENDERERS["text"](found)
    check_golden("calibrate.txt", text)
    assert max(len(line) for line in text.splitlines()) <= 72
    document = json.loads(RENDERERS["json"](found))
    document["run"]["started"] = document["run"]["finished"] = 0
    check_golden("calibrate.json", json.dumps(document, indent=2) + "\n")
    bw = document["rows"][0]
    assert bw["metric"] == "read_bw" and bw["aa_verdict"] == "same" and 0 < bw["detectable"] < 0.05
    assert bw["false_positive"]["subsets"] == 210  # C(10, 6): 6 rounds is the fewest that can reach 0.05 paired
    assert document["test"] == "signed-rank"


def test_noise_footnotes_name_rounds_and_say_what_to_try(tmp_path, monkeypatch):
    def drift_and_spike(cell, metrics):
        if cell.variant.name == "patched":
            metrics["read_bw"] *= 1 - 0.02 * cell.iteration  # slides over the run
        if cell.variant.name == "base" and cell.iteration == 3:
            metrics["ctx"] *= 1.5  # one odd round
        if cell.variant.name == "base":
            metrics["read_p99"] *= 1 + 0.15 * (cell.iteration % 2)  # spread
    levels = {"base": 100.0, "patched": 120.0}
    store, run_id = stored(tmp_path, monkeypatch, experiment(list(levels), iterations=10),
                           ShapedHost(levels, drift_and_spike))
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    kinds = {(d.kind, d.label, d.variant) for d in result.diagnostics}
    assert ("drift", "rd BW MiB/s", "patched") in kinds
    assert ("outliers", "ctx switches", "base") in kinds
    assert ("spread", "rd p99 us", "base") in kinds
    outlier = next(d for d in result.diagnostics if d.kind == "outliers")
    assert outlier.rounds == (3,)
    text = renderer("text")(result)
    check_golden("noise-diagnostics.txt", text)
    flat = " ".join(text.split())
    assert "ctx switches (base: round 3)" in flat and "drop_caches" in flat and "warm-up" in flat


def test_round_effect_footnote_when_variants_move_together(tmp_path, monkeypatch):
    factor = {r: 1 + 0.3 * ((r * 37) % 10) / 10 for r in range(12)}  # the machine, round by round

    def shared(cell, metrics):
        metrics["read_bw"] *= factor[cell.round]
    levels = {"base": 100.0, "patched": 100.0}
    store, run_id = stored(tmp_path, monkeypatch, experiment(list(levels), iterations=12),
                           ShapedHost(levels, shared))
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    rounds = [d for d in result.diagnostics if d.kind == "rounds"]
    assert [(d.label, d.variant) for d in rounds] == [("rd BW MiB/s", "patched")]
    assert rounds[0].value > 0.5 and rounds[0].p < 0.01
    flat = " ".join(renderer("text")(result).split())
    assert "rise and fall together from round to round" in flat and "paired test compares each round" in flat
    assert json.loads(renderer("json")(result))["diagnostics"][-1]["kind"] == "rounds"


def test_wide_table_puts_workloads_on_their_own_lines(tmp_path, monkeypatch):
    exp = experiment(["rq_affinity=1", "rq_affinity=2"], iterations=4, name="wide",
                     workload=[{"name": "B seq 128k qd128 long name", "job": "[j]\n"}],
                     report={"metrics": ["read_bw", "read_p99"]})
    store = Store(tmp_path / "wide.db")
    run_id = runner.run(exp, store, host=ScriptedHost({"rq_affinity=1": 100000.0, "rq_affinity=2": 100000.0}))
    text = renderer("text")(analysis.analyse(store.run(run_id), store.samples(run_id)))
    assert max(len(line) for line in text.splitlines()) <= 72
    table_lines = text.split("\n\n")[1].splitlines()
    assert table_lines[1] == "B seq 128k qd128 long name"
    assert table_lines[2].startswith("  rd BW MiB/s")


def test_six_rounds_decide_with_the_planned_rank_test(tmp_path, monkeypatch):
    """6 rounds and two primary rows: the signed-rank test could give no p
    below Holm's 0.025, so the plan takes the exact Mann-Whitney U (2/924)."""
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 120.0}, iterations=6)
    assert result.planned.test == "mann-whitney" and result.design == "unpaired"
    primary = [c for row in result.rows if row.primary for c in row.comparisons.values()]
    assert len(primary) == 2 and {c.verdict for c in primary} <= {"better", "worse"}
    assert all(c.test == "mann-whitney" for c in primary)
    legend = " ".join(legends.legend(result))
    assert "Mann-Whitney U, exact" in legend and "signed-rank" not in legend


def test_legend_without_any_tested_row_names_no_test(tmp_path, monkeypatch):
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "patched": 200.0}, iterations=3)
    legend = " ".join(legends.legend(result))
    assert "? no test (too few samples, all values equal, or a test whose smallest p cannot pass" in legend
    assert "over 0 primary" not in legend and "signed-rank" not in legend
    shown = legends.marks(result)  # the legend explains the marks the table shows, no others
    assert "(?)" in shown and not {"*", "~", "(*)", "(~)"} & shown
    assert "significant" not in legend and "(*)" not in legend and "(~)" not in legend
    assert "(?) an exploratory row, not in the corrected family" in legend


def test_a_run_whose_every_cell_failed_is_failed(tmp_path, monkeypatch, capsys):
    from iolab.cli import commands as cli
    from iolab.analysis.model import as_report

    error = "fio exit 1: fio: first direct IO errored"
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "broken": 1.0}, fail={"base": error, "broken": error})
    assert result.run.status == "failed"
    assert result.run.stop_reason == f"every cell failed; the first (cell 0): {error}; stopped after round 1"
    text = renderer("text")(result)
    assert "run 1 (failed)" in text and "\nfailed: every cell failed; the first (cell 0)" in text
    for fmt in ("text", "benchstat"):
        assert cli._failure_status(as_report(result), fmt) == 1
        assert f"run {result.run.id} failed: every cell failed" in capsys.readouterr().err


def test_some_failed_cells_are_counted_in_every_format(tmp_path, monkeypatch, capsys):
    from iolab.cli import commands as cli
    from iolab.analysis.model import as_report

    error = "fio exit 1: fio: first direct IO errored"  # not in round 0, so the run does not stop early
    result = run_scripted(tmp_path, monkeypatch, {"base": 100.0, "broken": 1.0},
                          fail={"broken": lambda cell: error if cell.round else None})
    assert result.run.status == "complete"
    report = as_report(result)
    for fmt, status in (("benchstat", 0), ("csv", 1), ("json", 1)):
        assert cli._failure_status(report, fmt) == status
        assert "7 of 16 cells failed (first: broken / randread: fio exit 1" in capsys.readouterr().err
    assert cli._failure_status(report, "text") == 1 and capsys.readouterr().err == ""  # the report's footnote says it
    assert "FAILED broken / randread: 7 cell(s)" in renderer("text")(result)


def test_a_failure_the_kernel_makes_by_design_is_labelled(tmp_path):
    from iolab.cli import commands as cli
    from iolab.analysis.model import as_report

    levels = {"base": 100.0, "direct": 1.0}
    exp = experiment(["base", {"name": "direct", "fails": {"randread": "needs the series"}}])
    store = Store(tmp_path / "golden.db")
    run_id = runner.run(exp, store,
                        host=ScriptedHost(levels, {"direct": "fio: destination does not support O_DIRECT"}))
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    text = renderer("text")(result)
    assert "needs the series" in text.splitlines()[5] and "FAILED" not in text
    assert "needs the series (expected to fail): direct / randread: 8 cell(s)" in " ".join(text.split())
    reply = renderer("reply")(as_report(result))  # the mail-paste format says so too
    assert "needs the series (expected to fail) direct / randread" in reply and "FAILED" not in reply
    for fmt in ("text", "csv", "json"):  # failing as the file says it will is not a failed run
        assert cli._failure_status(as_report(result), fmt) == 0


def test_the_reply_reproduces_the_run_with_its_seed_and_rounds(tmp_path):
    from iolab.analysis.model import as_report

    store = Store(tmp_path / "reply.db")
    exp = experiment(["base", "patched"], iterations=6)  # as if run with --iterations 6 over the file's 8
    run_id = runner.run(exp, store, experiment_path="exp.toml", seed=7,
                        host=ScriptedHost({"base": 100.0, "patched": 110.0}))
    reply = renderer("reply")(as_report(analysis.analyse(store.run(run_id), store.samples(run_id))))
    assert "reproduce:\n  iolab run exp.toml --seed 7 --iterations 6\n" in reply
    assert max(len(line) for line in reply.splitlines()) <= 72
