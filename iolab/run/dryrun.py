"""What `iolab run --dry-run` says before anything runs: the test the plan
fixed for the primary comparisons (and the smallest change it can detect
where this machine has an A/A calibration of the experiment), the time the
run will take, and the cells in their order.

:func:`undecidable` is the refusal of a plan under which no primary
comparison can ever be decided (``iolab run`` refuses it unless --force).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from iolab import load, plan
from iolab.load import device
from iolab.analysis import table as analysis
from iolab.analysis.metrics import lookup
from iolab.cell.sample import Sample
from iolab.engines import fio_jobs
from iolab.run import calibrate, claimed, estimate
from iolab.spec import Experiment
from iolab.stats.choice import Choice, fewest_rounds
from iolab.stats.exact import MIN_ROUNDS
from iolab.stats.kinds import PAIRED
from iolab.store import Store
from iolab.units import counted
from iolab.workloads import library

TEST_NAMES = {"signed-rank": "Wilcoxon signed-rank of per-round ratios (paired)",
              "mann-whitney": "exact Mann-Whitney U (unpaired)"}


def expected_rows(experiment: Experiment) -> dict[str, list[str]]:
    """Each workload's report rows, predicted from its job (fio: read or write)."""
    rows = {}
    for workload in experiment.workload:
        directions: frozenset[str] = frozenset()
        if workload.engine == "fio":
            directions = frozenset().union(*(job.directions for job in fio_jobs.jobs(load.job_text(experiment,
                                                                                                 workload))))
        rows[workload.name] = analysis.expected_rows(experiment, workload.name, directions)
    return rows


def choice(experiment: Experiment) -> tuple[Choice, dict[str, list[str]]]:
    """The plan's test, and each workload's primary rows."""
    rows = expected_rows(experiment)
    primary = {w: analysis.primary_metrics(experiment, w, names) for w, names in rows.items()}
    return analysis.planned_test(experiment, analysis.planned_comparisons(experiment, rows)), primary


def undecidable(experiment: Experiment) -> str:
    """Why no primary comparison of this plan can ever be decided ("" when one can)."""
    if len(experiment.variant) < 2:
        return ""
    if experiment.timing == "instructions":  # values that repeat are decided exactly, from MIN_ROUNDS rounds
        if experiment.run.max_rounds >= MIN_ROUNDS:
            return ""
        return (f"no comparison can be decided: instructions mode calls values exact when they repeat, which "
                f"takes {MIN_ROUNDS} rounds or more (--iterations {MIN_ROUNDS}); --force runs it anyway")
    found, _ = choice(experiment)
    if found.decidable:
        return ""
    family = f"{found.comparisons} primary comparison{'s' if found.comparisons != 1 else ''}"
    if experiment.run.auto:
        return (f"no primary comparison can be decided: with {found.rounds} rounds at most (max_iterations) the "
                f"smallest p is {found.min_p:.3g}, not below the per-look level {found.level:.3g} of {family}; "
                f"raise max_iterations or declare fewer primary rows ([report] primary)")
    return (f"no primary comparison can be decided: with {found.rounds} rounds the smallest possible p is "
            f"{found.min_p:.3g}, not below {found.level:.3g} (alpha over {family}); it needs "
            f"{found.needed} rounds (--iterations {found.needed}), or fewer primary rows ([report] primary); "
            f"--force runs it anyway")


def repeats(experiment: Experiment, name: str) -> str:
    """Where a workload is one of the library's that does not repeat in the experiment's timing mode
    with fewer rounds than it needs: that it does not, and what it needs ("" otherwise)."""
    workload = experiment.workload_named(name)
    known = library.known(workload.engine, workload.probe, workload.job,
                          experiment.target_for(experiment.baseline, workload).fs)
    if known is None or experiment.run.max_rounds >= library.REPEAT_ROUNDS:
        return ""
    return library.repeat_note(known, experiment.timing)


def _calibration(store: Store, experiment: Experiment) -> tuple[int, list[Sample]] | None:
    """The latest A/A calibration run of this experiment in the store and its samples."""
    for run in reversed(store.runs(experiment.name)):
        try:
            kind = Experiment.model_validate_json(run.experiment_json).report.kind
        except ValueError:  # stored by another iolab version: not this experiment's calibration
            continue
        if kind == "calibration":
            return run.id, store.samples(run.id, with_histograms=False)
    return None


def test_lines(experiment: Experiment, store: Store | None) -> Iterator[str]:
    if len(experiment.variant) < 2:
        yield "test: none (one variant: nothing to compare)"
        return
    found, primary = choice(experiment)
    if experiment.timing == "instructions":
        yield (f"test: exact where the instruction counts repeat ({MIN_ROUNDS} rounds or more); where they vary, "
               + (TEST_NAMES[found.test] if found.decidable else f"none can decide at {found.rounds} round{'s' if found.rounds != 1 else ''}"))
    elif found.decidable:
        sizes = f"{found.rounds} pairs" if found.test == PAIRED else f"{found.rounds} + {found.rounds} values"
        yield (f"test: {TEST_NAMES[found.test]}, {sizes} a row: smallest p {found.min_p:.3g}, below "
               f"{found.level:.3g} (alpha {experiment.report.alpha:g} over {found.comparisons} primary "
               f"comparison{'s' if found.comparisons != 1 else ''})")
        if found.test != PAIRED and plan.paired(experiment) and not experiment.run.auto:
            yield (f"  (the rounds are paired, but the signed-rank test needs {fewest_rounds(PAIRED, found.level)} "
                   f"rounds to reach that level: --iterations {fewest_rounds(PAIRED, found.level)} uses it, "
                   "with more power)")
    else:
        yield f"test: none can decide ({undecidable(experiment)})"
    calibration = _calibration(store, experiment) if store else None
    base = experiment.baseline.name
    label = {n: lookup(n, experiment.clock).label for names in primary.values() for n in names}
    for workload, names in primary.items():
        line = f"  {workload}: primary {', '.join(label[n] for n in names) or 'none'}"
        note = repeats(experiment, workload)
        if note:
            line += f"; {note}"
        if calibration and found.test:  # decidable: a test was chosen
            run_id, samples = calibration
            figures = []
            for name in names:
                change = calibrate.detectable_at(samples, workload, name, base, calibrate.copy_name(base),
                                                 found.test, found.rounds, found.level)
                figures.append(f"{label[name]} " + ("?" if math.isnan(change) else
                                                           "none" if math.isinf(change) else f"{change:.1%}"))
            line += f"; detectable change (90% power, calibration run {run_id}): {', '.join(figures)}"
        yield line
    if store is None or calibration is None:
        yield "  (no A/A calibration of this experiment in the store: 'iolab calibrate' measures the detectable change)"


def lines(experiment: Experiment, seed: int, store: Store | None) -> Iterator[str]:
    from iolab.run import series

    experiment = series.with_reach(experiment)  # a series' steps: the workloads they reach, as a run plans them
    cells = plan.plan(experiment, seed)
    run = experiment.run
    auto = (f" at most (auto: {run.min_iterations} to {run.max_iterations} rounds, until every delta is decided)"
            if run.auto else f" at most ({run.iterations} rounds, then one at a time while a claimed row is "
            f"undecided, up to {run.claims_rounds})" if run.claims_rounds else "")
    yield f"{experiment.name}: {len(cells)} cells{auto}, seed {seed}"
    if experiment.series is not None:
        left_out = sum(len(names) for names in experiment.unreached.values())
        how = {"every": "every step runs every round" + (
                   f", on the workloads its patch can reach ({left_out} (step, workload) pairs left out)"
                   if left_out else ""),
               "bisect": "bisected: the ends first, then midpoints where they differ; the cells below are "
                         "the most it could run"}[series.strategy(experiment)]
        yield f"series of {counted(len(experiment.series.patches), 'patch', 'patches')}: {how}"
    yield device.describe(experiment)
    yield from test_lines(experiment, store)
    if experiment.claims is not None and experiment.claims.row:  # the rows the run sets its deltas beside
        yield from claimed.claim_lines(experiment)
    yield "estimate:"
    yield from estimate.estimate(experiment, store).lines()
    yield "cells:"
    for cell in cells:
        kind = "warmup" if cell.warmup else f"iteration {cell.iteration}"
        yield f"  {cell.seq:4d}  round {cell.round:3d}  {cell.variant:<24} {cell.workload:<20} {kind}"
