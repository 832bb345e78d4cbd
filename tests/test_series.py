"""Patch series: steps as variants, each step against the one before it,
attribution to patches, the bad series refused, and the reply block.

Runs go through the real runner and store with a test double for the host
(StepHost: each step's value per workload is scripted, exact like
instructions timing or noisy like wall time)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from iolab import analysis, load
from iolab.cell.sample import Sample
from iolab.hosts import CellByCell
from iolab.run import dryrun, runner
from iolab.spec import SpecError
from iolab.store import Store
from tests.fakes import FIXED_HOST

PATCHES = ["one.patch", "two.patch", "three.patch"]


class StepHost(CellByCell):
    """per_call of a cell: the workload's level times the factor of every
    patch its step includes; `noise` is relative (0: exact, the same value
    every round)."""

    def describe(self) -> dict:
        return dict(FIXED_HOST)

    def __init__(self, factors: dict[str, dict[int, float]], noise: float = 0.0, fail: set[int] = frozenset(),
                 seed: int = 1):
        self.factors, self.noise, self.fail = factors, noise, fail
        self.rng = random.Random(seed)
        self.seen = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def run_cell(self, cell):
        self.seen.append((cell.round, cell.variant.step, cell.workload.name))
        base = dict(seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
                    variant=cell.variant.name, workload=cell.workload.name, env=dict(FIXED_HOST),
                    started=1_700_000_000.0 + cell.seq)
        step = cell.variant.step
        if step in self.fail:
            return Sample(status="failed", error=f"kernel build failed at step {step}", **base)
        value = 10.0
        for k, factor in self.factors.get(cell.workload.name, {}).items():
            if step >= k:
                value *= factor
        value *= 1 + self.rng.uniform(-self.noise, self.noise)
        return Sample(status="ok", metrics={"per_call": value}, **base)


def series_raw(tmp_path: Path, patches=PATCHES, **extra):
    for name in patches:
        (tmp_path / name).write_text(f"{name}\n--- a/fs/x.c\n+++ b/fs/x.c\n@@ -1 +1 @@\n-a\n+{name}\n")
    (tmp_path / "linux.tar.gz").write_bytes(b"")
    raw = {
        "name": "a series",
        "kernel": {"source": "linux.tar.gz"},
        "series": {"patches": list(patches)},
        "workload": [{"name": name, "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}
                     for name in ("w_a", "w_b")],
        "report": {"metrics": ["per_call"]},
        "run": {"iterations": 3, "seed": 7},
    }
    raw.update(extra)
    return raw


def run_series(tmp_path, monkeypatch, host, **extra):
    experiment = load.parse(series_raw(tmp_path, **extra), base_dir=str(tmp_path))
    store = Store(tmp_path / "series.db")
    run_id = runner.run(experiment, store, host=host)
    return analysis.analyse(store.run(run_id), store.samples(run_id))


def test_steps_are_variants_with_the_patches_added(tmp_path):
    experiment = load.parse(series_raw(tmp_path, variant=[{"name": "nofix", "kernel": {"reverse": ["one.patch"]}}]),
                            base_dir=str(tmp_path))
    assert [v.name for v in experiment.variant] == ["nofix", "1 one", "2 two", "3 three"]
    assert [v.step for v in experiment.variant] == [0, 1, 2, 3]
    assert [v.kernel.patches for v in experiment.variant] == [[], PATCHES[:1], PATCHES[:2], PATCHES]
    assert all(v.kernel.reverse == ["one.patch"] and v.kernel.source == "linux.tar.gz" for v in experiment.variant)
    again = type(experiment).model_validate_json(experiment.model_dump_json())
    assert again == experiment  # a stored experiment keeps its steps


def test_the_dry_run_counts_a_series_patches_in_words(tmp_path):
    one = load.parse(series_raw(tmp_path, series={"patches": PATCHES[:1]}), base_dir=str(tmp_path))
    assert any(line.startswith("series of 1 patch:") for line in dryrun.lines(one, 7, None))
    three = load.parse(series_raw(tmp_path), base_dir=str(tmp_path))
    assert any(line.startswith("series of 3 patches:") for line in dryrun.lines(three, 7, None))


@pytest.mark.parametrize("change, words", [
    ({"series": {"patches": []}}, "series.patches: the series is empty"),
    ({"series": {"patches": ["one.patch", "two.patch", "./one.patch"]}},
     "series.patches: './one.patch' is listed twice (patches 1 and 3)"),
    ({"variant": [{"name": "a"}, {"name": "b"}]}, "series: the base is [kernel] and at most one [[variant]]"),
    ({"kernel": None, "variant": [{"name": "deb", "kernel": "debian:6.1.0-56-amd64"}]},
     "variant[\"deb\"].kernel is a prebuilt image ('debian:6.1.0-56-amd64'): it has no source to patch"),
    ({"kernel": None}, "series: the steps are kernels built from source"),
    ({"kernel": {"source": "linux.tar.gz", "patches": ["two.patch"]}},
     "series.patches: 'two.patch' is also in the base's kernel patches"),
    ({"series": {"patches": ["one.patch", "gone.patch"]}}, "series.patches[1]: no such file"),
    ({"series": {"patches": ["one.patch", "two.patch", "copy.patch"]}},
     "series.patches: 'copy.patch' and 'two.patch' are the same diff under two names: each patch is one step"),
])
def test_bad_series_name_the_field(tmp_path, change, words):
    raw = series_raw(tmp_path)
    (tmp_path / "copy.patch").write_text((tmp_path / "two.patch").read_text().replace("two.patch\n", "a copy\n", 1))
    raw.update(change)
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(SpecError) as error:
        load.parse(raw, base_dir=str(tmp_path))
    assert words in str(error.value)


def test_every_step_exact_attributes_each_change_to_its_patch(tmp_path, monkeypatch):
    host = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}})
    result = run_series(tmp_path, monkeypatch, host, series={"patches": PATCHES, "strategy": "every"})
    series = result.series
    assert [s.step for s in series.steps] == [0, 1, 2, 3] and series.strategy == "every"
    assert series.builds == 4 and series.rounds == 3
    assert len(host.seen) == 4 * 2 * 3


def test_every_step_noisy_attributes_each_change_to_its_patch(tmp_path, monkeypatch):
    host = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}}, noise=0.01)
    result = run_series(tmp_path, monkeypatch, host, run={"iterations": 8, "seed": 7})
    found = {(c.workload, c.step, c.patch, c.verdict, c.placed) for c in result.series.changes}
    assert found == {("w_a", 1, "one.patch", "better", True), ("w_b", 2, "two.patch", "worse", True)}
    row = result.rows[0]
    assert row.against == {"2 two": "1 one", "3 three": "2 two", "total": "base"}
    assert row.comparisons["total"].verdict == "better"


def test_series_reports(tmp_path, monkeypatch):
    from iolab.report import renderer

    host = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}}, noise=0.01)
    result = run_series(tmp_path, monkeypatch, host, run={"iterations": 8, "seed": 7})
    for fmt in ("text", "markdown", "json"):
        print(renderer(fmt)(result))
    assert "<svg" in renderer("html")(result)


def test_a_step_without_a_change_says_how_its_rows_ended_never_no_change_for_a_test_or_no_verdict(tmp_path,
                                                                                                 monkeypatch):
    # an iolab patch run of the corpus's SQPOLL mail: both claimed rows undecided, the attribution said
    # "no change"; "no significant change is not no change" (iolab.report.figures.delta_cell)
    from dataclasses import replace

    from iolab.report import series as series_report

    host = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}}, noise=0.01)
    result = run_series(tmp_path, monkeypatch, host, run={"iterations": 8, "seed": 7})
    assert series_report.attribution(result)[3] == "  3 three.patch: no significant change (2 rows)"
    step = "3 three"
    undecided = [replace(row, comparisons={**row.comparisons, step: replace(row.comparisons[step],
                                                                             verdict="insufficient")})
                 for row in result.rows]
    assert series_report.attribution(replace(result, rows=undecided))[3] == \
        "  3 three.patch: none decided (2 of 2 rows undecided)"
    # the reply block keeps only the decided rows in its table, but its attribution is of them all
    # (the corpus's plug-batch-tags mail: "1 ...: no change" over an "undecided:" line)
    from iolab.analysis.model import Report
    from iolab.report import reply

    store = Store(tmp_path / "series.db")
    pasted = reply.render(Report(replace(result, rows=undecided), tuple(store.samples(result.run.id))), "x")
    assert "3 three.patch: none decided (2 of 2 rows undecided)" in " ".join(pasted.split())
    exact = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}})
    (tmp_path / "exact").mkdir()
    same = run_series(tmp_path / "exact", monkeypatch, exact, series={"patches": PATCHES, "strategy": "every"})
    assert series_report.attribution(same)[3] == "  3 three.patch: no change"


def test_wall_bisection_places_changes_and_builds_only_what_it_tests(tmp_path, monkeypatch):
    patches = [f"p{i}.patch" for i in range(1, 8)]  # 7 patches, 8 steps
    host = StepHost({"w_a": {3: 0.6}, "w_b": {6: 1.5}}, noise=0.01)
    result = run_series(tmp_path, monkeypatch, host, patches=patches,
                        series={"patches": patches, "strategy": "bisect"},
                        run={"iterations": "auto", "min_iterations": 8, "max_iterations": 10, "seed": 3})
    series = result.series
    found = {(c.workload, c.step, c.patch, c.placed) for c in series.changes}
    assert found == {("w_a", 3, "p3.patch", True), ("w_b", 6, "p6.patch", True)}
    ran = sorted({step for _, step, _ in host.seen})
    assert series.strategy == "bisect" and series.builds == len(ran) < 8
    print(ran, series.rounds, result.run.stop_reason)


def test_the_reply_block_fits_a_mail(tmp_path, monkeypatch):
    """Golden: tests/golden/series-reply.txt (UPDATE_GOLDEN=1 to write it anew)."""
    from iolab.report import reply
    from iolab.analysis.model import Report
    from tests.helpers import check_golden

    host = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}}, noise=0.01)
    result = run_series(tmp_path, monkeypatch, host, series={"patches": PATCHES, "strategy": "every"},
                        run={"iterations": 8, "seed": 7},
                        kernel={"source": "linux.tar.gz", "config": "CONFIG_X=y\n"})
    store = Store(tmp_path / "series.db")
    text = reply.render(Report(result, tuple(store.samples(result.run.id))), "iolab patch one.patch two.patch")
    assert max(len(line) for line in text.splitlines()) <= 72
    assert "\t" not in text and all(line == line.rstrip() for line in text.splitlines())  # pastes unchanged
    check_golden("series-reply.txt", text)


# -- the plumbing on the stand-in kernel tarball (real patch, real make) -----------------

from tests.stand_in_kernel import LINES, cache, diff, fake_source  # noqa: E402,F401  (fixtures)


class KernelHost:
    """Stands in for a VM booted with a kernel: a cell's value comes from the
    patches the kernel was really built with (its manifest)."""

    def __init__(self, kernel, factors, seen):
        self.kernel, self.factors, self.seen = kernel, factors, seen

    def describe(self) -> dict:
        return dict(FIXED_HOST)

    def run_batch(self, cells):
        names = [Path(p).name for p in self.kernel.manifest["patches"]]
        for cell in cells:
            self.seen.append((cell.round, cell.variant.step, cell.workload.name))
            value = 10.0
            for patch, factor in self.factors.get(cell.workload.name, {}).items():
                value *= factor if patch in names else 1.0
            yield Sample(seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
                         variant=cell.variant.name, workload=cell.workload.name, status="ok",
                         metrics={"per_call": value * (1 + 0.002 * ((cell.round * 7 + cell.seq) % 5 - 2))},
                         env=dict(FIXED_HOST), started=1_700_000_000.0 + cell.seq)


def stand_in_hosts(factors):
    """The runner's VM host with the stand-in VM above: kernels really built
    (iolab.kernels.Steps, on the stand-in tarball), cells scripted."""
    from iolab import kernels
    from iolab.hosts.vm.variants import VMHosts

    class Hosts(VMHosts):
        def _add_host(self, variant, kernel):
            self.hosts[variant] = KernelHost(kernel, factors, self.seen)
            return self.hosts[variant]

        def __enter__(self):
            for variant, kernel in self.kernels.items():
                self._add_host(variant, kernel)
            return self

        def __exit__(self, *exc):
            return None

    Hosts.seen = []

    def make(experiment, log=lambda _: None, scratch_parent=None):
        return Hosts({}, experiment.vm, steps=kernels.Steps(experiment, log), scratch_parent=scratch_parent)

    return make


def stand_in_series(tmp_path, fake_source, strategy, broken=None, stale=None):
    patches = []
    for i, line in enumerate((5, 12, 20, 27), 1):
        before = LINES.replace(f"line {line - 1}\n", "not there\n") if i == stale else LINES
        after = before.replace(f"line {line}\n", "BROKEN\n" if i == broken else f"line {line} changed\n")
        patches.append(diff(tmp_path, f"p{i}", before, after, path="src/a.c").name)
    raw = {"name": "stand-in series", "kernel": {"source": str(fake_source)},
           "series": {"patches": patches, "strategy": strategy},
           "workload": [{"name": "w", "engine": "probe", "probe": {"mode": "batch", "case": "write_u1k"}}],
           "report": {"metrics": ["per_call"]},
           "run": {"iterations": 8, "seed": 2, "order": "alternate"}}
    return load.parse(raw, base_dir=str(tmp_path))


@pytest.mark.parametrize("strategy", ["every", "bisect"])
def test_steps_build_incrementally_on_the_stand_in_tree(tmp_path, monkeypatch, fake_source, cache, strategy):
    experiment = stand_in_series(tmp_path, fake_source, strategy)
    Hosts = stand_in_hosts({"w": {"p3.patch": 0.5}})
    hosts = Hosts(experiment, log=lambda _: None, scratch_parent=str(tmp_path))
    assert hosts.kernels == {}  # nothing built before a step's first cell
    store = Store(tmp_path / "s.db")
    run_id = runner.run(experiment, store, host=hosts)
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    assert [(c.step, c.patch, c.placed) for c in result.series.changes] == [(3, "p3.patch", True)]
    built = {name: kernel.manifest for name, kernel in hosts.kernels.items()}
    assert {m["tree_key"] for m in built.values()} and len({m["tree_key"] for m in built.values()}) == 1
    assert sum(1 for m in built.values() if not m["incremental"]) <= 1  # one object tree, rebuilt in part
    if strategy == "every":
        assert len(built) == 5 and result.series.builds == 5
    else:
        assert len(built) == result.series.builds == 4  # the ends, 2, then 3: step 1 never built
        assert "1 p1" not in built


def test_a_step_that_does_not_build_fails_and_the_others_stay(tmp_path, monkeypatch, fake_source, cache):
    experiment = stand_in_series(tmp_path, fake_source, "every", broken=4)
    hosts = stand_in_hosts({"w": {"p2.patch": 2.0}})(experiment, log=lambda _: None)
    store = Store(tmp_path / "s.db")
    result = analysis.analyse(store.run(run_id := runner.run(experiment, store, host=hosts)), store.samples(run_id))
    assert [(s.step, s.cells, s.failed) for s in result.series.steps] == [(0, 8, 0), (1, 8, 0), (2, 8, 0),
                                                                          (3, 8, 0), (4, 8, 8)]
    assert [(c.step, c.patch) for c in result.series.changes] == [(2, "p2.patch")]
    assert "the kernel did not build: make vmlinux failed" in result.failures[0].error
    from iolab.report import renderer
    assert "4 p4.patch: FAILED" in renderer("text")(result)


def test_a_patch_that_does_not_compile_is_a_failure_everywhere(tmp_path, monkeypatch, fake_source, cache, capsys):
    """Exit 1; the build's first error, the log's path and its last lines on
    stderr; the step failed in the series line, the attribution, every format
    and at the top of the reply block."""
    import argparse
    import json
    import sys

    from iolab.analysis.model import Report
    from iolab.cli import commands
    from iolab.report import renderer, reply

    experiment = stand_in_series(tmp_path, fake_source, "every", broken=4)
    hosts = stand_in_hosts({})(experiment, log=lambda text: print(f"iolab: {text}", file=sys.stderr))
    store = Store(tmp_path / "s.db")
    run_id = runner.run(experiment, store, host=hosts)
    stderr = capsys.readouterr().err
    assert "did not build; its cells fail: make vmlinux failed (exit 2): src/a.c:2:1: error: expected ';'" in stderr
    log = next(line for line in stderr.splitlines() if line.startswith("full log: "))
    assert Path(log.removeprefix("full log: ")).is_file()
    assert "the log's last lines:\n  |   make noise 13\n" in stderr and "  | make: *** [Makefile:11: vmlinux] Error 2" in stderr
    args = argparse.Namespace(format="text", view=None, min_max=None, fail_on=None)
    assert commands._print_report(store, run_id, args) == 1  # exit 1
    text = capsys.readouterr().out
    flat = " ".join(text.split())
    assert ("4 p4.patch: FAILED: did not build: make vmlinux failed (exit 2): src/a.c:2:1: error: expected ';' "
            "before '}' token") in flat
    assert "series: every step in every round; 4 of 5 steps built and run, 1 did not build (4 p4.patch)" in flat
    assert "4 p4.patch (did not build)" in flat and "every step run;" not in flat
    # "a kernel per step (below)": each step's kernel follows, with what it was built from
    source = fake_source.name  # a tarball's label: its name (a Debian source's: the package and its version)
    assert "a kernel per step (below)" in flat
    assert (f"kernels (from {source}): base 7.2.99; 1 7.2.99 +p1.patch; 2 7.2.99 +p1.patch +p2.patch; 3 7.2.99 +p1.patch +p2.patch "
            "+p3.patch; 4 did not build") in flat
    for fmt in ("markdown", "html"):
        assert "1 did not build (4 p4.patch)" in renderer(fmt)(Report(commands._report(store, run_id, args).analysis))
    steps = json.loads(renderer("json")(commands._report(store, run_id, args)))["series"]["steps"]
    assert [s["build_error"][:26] for s in steps] == ["", "", "", "", "make vmlinux failed (exit "]
    block = reply.render(commands._report(store, run_id, args), "iolab patch p1.patch ...").splitlines()
    reply_flat = " ".join(" ".join(block).split())
    assert reply_flat.startswith("iolab: FAILED: step 4 (p4.patch) did not build: make vmlinux failed (exit 2): "
                                 "src/a.c:2:1: error: expected ';' before '}' token")
    assert reply_flat.count("error: expected") == 1 and "4 p4.patch: did not build (above)" in reply_flat
    assert f"kernels: 7.2.99 ({source}); + 4 patches: p1.patch," in reply_flat


def test_notes_never_break_a_path(tmp_path):
    from iolab.report import figures

    path = "/root/.cache/iolab/kernels/build-3e51c07782479e20/" + "x" * 60 + "/kernel-build.log"
    lines = figures.wrapped([f"- FAILED base / w: the kernel did not build: see {path}"], "  ")
    assert any(line.strip() == path for line in lines) and all(len(line) <= 72 for line in lines if path not in line)


def test_a_patch_that_does_not_apply_names_its_step(tmp_path, fake_source, cache):
    experiment = stand_in_series(tmp_path, fake_source, "every", stale=3)
    from iolab.kernels.patches import PatchError

    with pytest.raises(PatchError) as error:
        stand_in_hosts({})(experiment, log=lambda _: None)
    message = str(error.value)
    assert message.startswith(f"series step 3 (p3.patch): patch {tmp_path / 'p3.patch'} does not apply:")
    assert "src/a.c: hunk #1 @@ -17,7 +17,7 @@ line 16 does not apply" in message
    # the dry run says the same where the source is unpacked (as the check above left it), naming the field
    with pytest.raises(SpecError) as error:
        load.check_here(experiment)
    assert str(error.value).startswith(f"series step 3 (p3.patch): patch {tmp_path / 'p3.patch'} does not apply")


def test_a_change_not_placed_within_the_budget_names_its_interval(tmp_path, monkeypatch):
    from iolab.report import renderer

    patches = [f"p{i}.patch" for i in range(1, 8)]
    raw = series_raw(tmp_path, patches=patches, series={"patches": patches, "strategy": "bisect"},
                     run={"iterations": "auto", "min_iterations": 8, "max_iterations": 10, "time_budget": "40s",
                          "seed": 3})
    experiment = load.parse(raw, base_dir=str(tmp_path))
    store = Store(tmp_path / "s.db")
    host = StepHost({"w_a": {3: 0.6}}, noise=0.01)
    run_id = runner.run(experiment, store, host=host, clock=lambda: float(len(host.seen)))  # a cell: 1 s
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    assert result.run.stop_reason == "time budget reached (40s)"
    [change] = result.series.changes
    assert (change.workload, change.first, change.step, change.placed) == ("w_a", 1, 7, False)
    assert result.series.builds == 2 and result.series.rounds == 8
    text = renderer("text")(result)
    assert "not placed within the budget: w_a us/call: -39" in text.replace("\n      ", " ")
    assert "cells" not in text.splitlines()[2]  # a bisection's rounds differ in width: no "x of y cells"
    assert "in patches 1..7" in text.replace("\n      ", " ")


def test_calibrating_a_series_runs_its_base_against_itself(tmp_path):
    from iolab.run import calibrate

    experiment = load.parse(series_raw(tmp_path), base_dir=str(tmp_path))
    aa = calibrate.aa_experiment(experiment, 6)
    assert aa.series is None and [v.name for v in aa.variant] == ["base", calibrate.copy_name("base")]
    assert all(v.kernel.patches == [] and v.step is None for v in aa.variant)


def test_instructions_timing_runs_every_step_and_attributes_exactly(tmp_path, monkeypatch):
    """Exact values (instructions timing): 2 rounds (exact in both: no third), every step, each change on its
    patch, no test needed."""
    host = StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}})  # no noise: the same value every round
    result = run_series(tmp_path, monkeypatch, host, vm={"timing": "instructions"}, run={"seed": 7})
    series = result.series
    assert series.strategy == "every" and series.builds == 4 and series.rounds == 2
    assert [(c.workload, c.step, c.patch, c.verdict, c.delta) for c in series.changes] == [
        ("w_a", 1, "one.patch", "better", pytest.approx(-0.5)), ("w_b", 2, "two.patch", "worse", pytest.approx(0.25))]
    assert all(c.exact is not None for row in result.rows for c in row.comparisons.values())


def test_steps_built_ahead_in_step_order_each_adding_its_patch(tmp_path, fake_source, cache):
    """With instructions timing an every-step run builds its steps ahead, in a thread, in step
    order: each build finds the tree with the step before's patches on it and adds its own."""
    from iolab import kernels
    from iolab.kernels import patches as patch_tree
    from iolab.run import series

    experiment = stand_in_series(tmp_path, fake_source, "every")
    assert series.build_ahead(experiment) == []  # wall timing: each step built when its first cell comes
    exact = load.parse({**experiment.model_dump(mode="json", exclude_none=True, exclude={"variant"}),
                        "variant": [{"name": "base"}], "vm": {"timing": "instructions"}}, base_dir=str(tmp_path))
    order = series.build_ahead(exact)
    assert order == [v.name for v in sorted(exact.variant, key=lambda v: v.step)] and len(order) == 5
    said = []
    with kernels.Steps(exact, said.append) as steps:
        steps.ahead(order)
        last = steps.get(order[-1])  # waits for the steps before it, then its own
        assert last is not None
        built = [line.split()[1] for line in said if line.startswith("built ")]
        assert built == [steps.built[name].name for name in order]  # one at a time, in step order
    assert [len(steps.built[name].manifest["patches"]) for name in order] == [0, 1, 2, 3, 4]
    tree = next((cache / "sources").glob("*/linux"))
    assert len(patch_tree.Tree(tree).applied()) == 4 and "p4.patch" in (tree / patch_tree.NOTE).read_text()


@pytest.mark.parametrize("cells", [0, 6])
def test_an_interrupted_series_counts_its_cells_and_says_how_it_ran(tmp_path, monkeypatch, cells):
    """Every step (instructions timing), stopped after `cells` of its 24 cells
    (4 steps x 2 workloads x 3 rounds): no round is complete, 6 of 24 cells ran
    (not '6 of 6'), and a step not reached was not run because the run
    stopped, not because a bisection had nothing to place there."""
    from iolab.report import renderer

    host = StepHost({"w_a": {1: 0.5}})
    real, count = host.run_cell, []

    def run_cell(cell):
        if len(count) == cells:
            raise KeyboardInterrupt
        count.append(cell)
        return real(cell)
    host.run_cell = run_cell
    experiment = load.parse(series_raw(tmp_path, vm={"timing": "instructions"}, run={"iterations": 3, "seed": 7}),
                            base_dir=str(tmp_path))
    store = Store(tmp_path / "series.db")
    with pytest.raises(runner.Interrupted) as stopped:
        runner.run(experiment, store, host=host)
    run_id = stopped.value.run_id
    result = analysis.analyse(store.run(run_id), store.samples(run_id))
    assert (result.rounds_done, result.cells_done, result.cells_planned) == (0, cells, 24)
    flat = " ".join(renderer("text")(result).split())
    assert f"run {run_id} (interrupted): 0 of 3 rounds ({cells} of 24 cells)" in flat
    assert "bisect" not in flat and "no change to place here" not in flat
    unrun = [s.step for s in result.series.steps if not s.cells]
    assert all(f"{k} {PATCHES[k - 1]}: not run (the run stopped before it)" in flat for k in unrun if k)
    assert unrun == ([0, 1, 2, 3] if cells == 0 else unrun) and "series: every step in every round;" in flat


def test_a_wait_for_another_process_lock_is_called_off_when_the_run_is_interrupted(tmp_path):
    """A series' build ahead may wait minutes for another checkout's build of the same source
    (the tree's lock): Ctrl-C must not wait with it. The lock held here through another open file
    (flock is per open file, so this process's own second open waits as another process's would)."""
    import fcntl
    import threading
    import time

    from iolab.kernels import cache as kcache

    holder = open(tmp_path / ".lock-src-tree", "w")
    fcntl.flock(holder, fcntl.LOCK_EX)
    cancel, outcome = threading.Event(), []

    def ahead():
        kcache.cancel_waits(cancel)
        try:
            with kcache.locked(tmp_path, "src-tree"):
                outcome.append("took the lock")
        except kcache.Cancelled as error:
            outcome.append(str(error))

    thread = threading.Thread(target=ahead)
    thread.start()
    time.sleep(3 * kcache.LOCK_POLL_S)
    assert outcome == []  # still waiting: the lock is held
    started = time.monotonic()
    cancel.set()
    thread.join(timeout=5)
    assert not thread.is_alive() and time.monotonic() - started < 2
    assert outcome == ["the wait for src-tree (held by another process) was called off"]
    fcntl.flock(holder, fcntl.LOCK_UN)
    with kcache.locked(tmp_path, "src-tree"):  # a thread that set no event waits as before, and takes it
        pass


def test_a_boot_thread_waiting_for_its_steps_build_ends_when_the_run_stops():
    import threading
    from concurrent.futures import Future

    from iolab.kernels.supply import Steps, Stopped

    steps = Steps.__new__(Steps)  # only what get() reads: a build ahead that does not end
    steps.pending, steps.built, steps.errors = {"step 1": Future()}, {}, {}
    stopping = threading.Event()
    stop = threading.Timer(0.3, stopping.set)
    stop.start()
    with pytest.raises(Stopped, match="step 1"):
        steps.get("step 1", stopping)


def test_a_recheck_of_a_series_shows_its_recheck_lines(tmp_path, monkeypatch):
    """`iolab run --recheck` of a series (what iolab patch runs): the header says its figures are the
    "recheck" lines, and the series table shows them under each row of the rechecked run."""
    from iolab.analysis import reports
    from iolab.report import renderer

    experiment = load.parse(series_raw(tmp_path, series={"patches": PATCHES, "strategy": "every"},
                                       run={"iterations": 3, "seed": 7}), base_dir=str(tmp_path))
    store = Store(tmp_path / "series.db")
    first = runner.run(experiment, store, host=StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}}))
    second = runner.run(experiment, store, host=StepHost({"w_a": {1: 0.5}, "w_b": {2: 1.25}}), recheck_of=first)
    text = renderer("text")(reports.run_report(store, second))
    assert "its figures: the \"recheck\" lines" in text
    table = [line.split()[-5:] for line in text.splitlines() if "10.00" in line]
    assert table == [["us/call", "10.00", "5.00", "5.00", "5.00"], ["recheck", "10.00", "5.00", "5.00", "5.00"],
                     ["us/call", "10.00", "10.00", "12.50", "12.50"], ["recheck", "10.00", "10.00", "12.50", "12.50"]]
