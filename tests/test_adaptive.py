"""The stopping rule of adaptive runs (iolab.run.adaptive) and its use by the runner."""

import math
from dataclasses import replace

import pytest

from iolab import analysis, spec, stats
from iolab.run import adaptive
from iolab.run import runner
from iolab.store import RunInfo, Store
from tests import helpers
from tests.fakes import ScriptedHost


def comparison(base, cand):
    return stats.decide([stats.compare(base, cand, higher_is_better=True)])[0]


def test_precise_needs_a_narrow_ci_around_zero():
    c = comparison([100.0, 100.2, 99.9, 100.1, 100.0, 99.8], [100.1, 99.9, 100.0, 100.2, 99.9, 100.1])
    assert c.verdict == "same" and c.delta_low <= 0 <= c.delta_high
    half = (c.delta_high - c.delta_low) / 2
    assert adaptive.precise(c, half * 1.01) and not adaptive.precise(c, half * 0.99)
    assert not adaptive.precise(c, 0.0)  # target 0: precision never stops a run
    shifted = replace(c, delta_low=0.001, delta_high=0.003)  # narrow but excludes 0: more rounds settle it
    assert not adaptive.precise(shifted, 0.01)
    assert not adaptive.precise(replace(c, delta_low=math.nan), 0.01)


def test_state_of_a_comparison():
    far = comparison([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [11.0, 12.0, 13.0, 14.0, 15.0, 16.0])
    assert adaptive.state(far, 0.01) == "significant"
    wide = comparison([90.0, 110.0, 95.0, 105.0, 100.0, 98.0], [91.0, 109.0, 96.0, 104.0, 101.0, 97.0])
    assert adaptive.state(wide, 0.01) == "open"
    few = stats.decide([stats.compare([1.0, 2.0], [1.0, 2.0], higher_is_better=True)])[0]
    assert few.verdict == "insufficient" and adaptive.state(few, 0.5) == "open"


def test_durations():
    assert adaptive.format_duration(1200) == "20m"
    assert adaptive.format_duration(5400) == "1h30m"
    assert adaptive.format_duration(90) == "1m30s"
    assert adaptive.format_duration(3632.2) == "1h0m32s"  # the first 7.2 build here; not 1h32s
    assert adaptive.budget_reached(600) == "time budget reached (10m)"


def fixed(iterations):
    return helpers.experiment(name="auto", report={"metrics": ["read_bw", "ctx"]}, run={"iterations": iterations})


def auto(**run):
    return helpers.experiment(name="auto", report={"metrics": ["read_bw", "ctx"]},
                              run={"iterations": "auto", "seed": 3, **run})


def run_auto(tmp_path, monkeypatch, experiment, levels, **kw):
    store = Store(tmp_path / "auto.db")
    host = ScriptedHost(levels)
    run_id = runner.run(experiment, store, host=host, **kw)
    return store, run_id, host


def test_look_before_min_and_at_max(tmp_path, monkeypatch):
    store, run_id, _ = run_auto(tmp_path, monkeypatch, auto(min_iterations=4, max_iterations=6),
                                {"base": 100.0, "patched": 100.0})
    samples = store.samples(run_id)
    run = store.run(run_id)
    early = analysis.analyse(run, [s for s in samples if s.round < 3])
    assert adaptive.look(early) == adaptive.Look(False, "", [])
    # A/A with +-1% noise: the ctx and BW CIs are wider than +-0.1%, so nothing is decided
    tight = auto(min_iterations=4, max_iterations=6, target_ci=0.001)
    store, run_id, host = run_auto(tmp_path / "t", monkeypatch, tight, {"base": 100.0, "patched": 100.0})
    assert store.run(run_id).stop_reason == "max_iterations reached (6 rounds)"
    assert len(host.seen) == 12
    with pytest.raises(ValueError):
        adaptive.look(analysis.analyse(replace(run, experiment_json=fixed(8).model_dump_json()),
                                       samples))


def test_runner_stops_as_soon_as_every_delta_is_decided(tmp_path, monkeypatch):
    experiment = auto(min_iterations=5, max_iterations=30, warmup=1)
    store, run_id, host = run_auto(tmp_path, monkeypatch, experiment, {"base": 100.0, "patched": 150.0})
    run = store.run(run_id)
    assert run.stop_reason == adaptive.ALL_DECIDED
    assert run.planned_cells == 2 * 31
    result = analysis.analyse(run, store.samples(run_id))
    # rounds are the plan's first rounds (same seeded stream), warm-up first
    from iolab import plan
    full = plan.plan(experiment, 3)
    assert [(c.seq, c.variant.name) for c in host.seen] == [(c.seq, c.variant) for c in full[: len(host.seen)]]
    assert host.seen[0].warmup and not host.seen[2].warmup
    bw = result.rows[0].comparisons["patched"]
    assert bw.verdict == "better" and bw.p < result.sequential.look_alpha
    assert result.rows[0].primary and not result.rows[1].primary  # ctx: exploratory, never holds a run
    assert result.rows[1].comparisons["patched"].family == "exploratory"
    # it did not stop before the first round at which it could
    earlier = analysis.analyse(run, [s for s in store.samples(run_id) if s.round < result.rounds_done])
    assert not adaptive.look(earlier).stop


def test_per_look_level_is_the_verdict_level(tmp_path, monkeypatch):
    experiment = auto(min_iterations=5, max_iterations=30)
    seq = analysis.sequential_level(experiment, 2)
    assert seq.looks == 26 and seq.comparisons == 2
    assert seq.look_alpha == stats.sequential_alpha(0.025, 5, 30)
    assert 0.025 / 26 < seq.look_alpha < 0.025
    store, run_id, _ = run_auto(tmp_path, monkeypatch, fixed(8), {"base": 100.0, "patched": 150.0})
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    assert result.sequential is None and store.run(run_id).stop_reason is None
    assert {c.correction for row in result.rows if row.primary for c in row.comparisons.values()} == {"holm"}
    assert {c.correction for row in result.rows if not row.primary for c in row.comparisons.values()} == {"none"}


def test_budget_is_checked_only_after_min_rounds(tmp_path, monkeypatch):
    ticks = iter(range(0, 10**6, 1000))  # every reading of the clock 1000 s later
    experiment = auto(min_iterations=5, time_budget="10s", target_ci=0.0001)
    store, run_id, host = run_auto(tmp_path, monkeypatch, experiment, {"base": 100.0, "patched": 100.0},
                                   clock=lambda: next(ticks))
    assert store.run(run_id).stop_reason == "time budget reached (10s)"
    assert len(host.seen) == 2 * 5


def test_run_info_has_no_stop_reason_by_default():
    assert RunInfo(1, "n", None, "{}", 1, 2, "complete", 0.0, None, {}, None).stop_reason is None


def test_a_variant_that_always_fails_stops_the_run(tmp_path, monkeypatch):
    """Failing alike in rounds 0-1 (one cell a round) stops it there (iolab.run.early,
    tests/test_early.py); failing each time otherwise, at the first look."""
    store = Store(tmp_path / "fail.db")
    host = ScriptedHost({"base": 100.0, "patched": 1.0}, fail={"patched": "fio exit 1"})
    run_id = runner.run(auto(min_iterations=4), store, host=host)
    assert store.run(run_id).stop_reason.startswith("variant 'patched' failed its 2 cells of rounds 0-1 alike, so")
    assert len(host.seen) == 4
    host = ScriptedHost({"base": 100.0, "patched": 1.0},
                        fail={"patched": lambda cell: f"fio exit 1: {cell.workload.name}"})
    one = auto(min_iterations=4)
    two = one.model_copy(update={"workload": [*one.workload, one.workload[0].model_copy(update={"name": "w2"})]})
    run_id = runner.run(two, store, host=host)
    assert store.run(run_id).stop_reason == adaptive.NOTHING_TO_COMPARE
    assert len(host.seen) == 16


@pytest.mark.parametrize("run, message", [
    ({"iterations": "many"}, 'must be a number of rounds or "auto"'),
    ({"iterations": 0}, "from 1 to 10000"),
    ({"iterations": 5, "max_iterations": 9}, 'max_iterations: only with iterations = "auto"'),
    ({"iterations": "auto", "order": "sequential"}, 'set order = "interleaved"'),
    ({"iterations": "auto", "min_iterations": 9, "max_iterations": 8}, "max_iterations (8) < min_iterations (9)"),
    ({"iterations": "auto", "min_iterations": 3}, "greater than or equal to 4"),
    ({"iterations": "auto", "max_iterations": 101}, "less than or equal to 100"),
    ({"iterations": "auto", "time_budget": "20 minutes"}, "not a duration"),
])
def test_run_settings_are_validated(run, message):
    with pytest.raises(spec.SpecError, match="run") as error:
        helpers.experiment(name="auto", run=run)
    assert message in str(error.value)


def test_run_settings_round_trip_through_the_store():
    experiment = auto(time_budget="1h30m", target_ci=0.02)
    assert experiment.run.time_budget == 5400.0 and experiment.run.max_rounds == 30
    again = spec.Experiment.model_validate_json(experiment.model_dump_json())
    assert again.run == experiment.run
    assert spec.Experiment.model_validate_json(fixed(7).model_dump_json()).run.max_rounds == 7
