"""A patch series, dissected: each step against the one before it, and which patch made which change.

The variants of a [series] experiment are its steps (iolab.spec): step 0 the
base, step k the base with patches 1..k. Each step that has values in a row
is compared with the step measured before it, paired by the rounds in which
both ran; the last measured step is also compared with the first (the
total, a corrected family of its own). When every step ran, a change is
placed on one patch: the step that first includes it. When some did not
(a wall-clock bisection, iolab.run.series, runs the ends and the midpoints
where they differ; a failed build leaves a step without values), a change
between two measured steps k0 < k lies in patches k0+1..k: it is placed
when k = k0 + 1, and otherwise reported with that interval. A step that
did not run a workload because its patch cannot reach it ([series]
unreached, iolab.run.series.with_reach) is left out of that interval: a
change after it is placed on the next step that ran.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from iolab.cell.sample import BUILD_FAILED
from iolab.stats.kinds import Family, Verdict

if TYPE_CHECKING:
    from iolab.cell.sample import Sample
    from iolab.spec import Experiment

TOTAL = "total"  # the key of a row's comparison of the last measured step against the first


Strategy = Literal["every", "bisect"]


def strategy(experiment: Experiment) -> Strategy:
    """"every" or "bisect": the file's choice, else by the timing mode (every
    step in instructions mode, whose values are exact; a bisection in wall mode)."""
    assert experiment.series is not None
    if experiment.series.strategy == "every" or experiment.series.strategy == "bisect":
        return experiment.series.strategy
    return "every" if getattr(experiment.vm, "timing", "wall") == "instructions" else "bisect"


@dataclass(frozen=True)
class Step:
    step: int  # 0: the base
    name: str  # the variant
    patch: str | None  # the patch this step adds (None for the base)
    cells: int  # measured cells run
    failed: int  # of them failed (a build that failed fails them all)
    build_error: str = ""  # why its kernel did not build (the build's first error line), "" when it built


@dataclass(frozen=True)
class Change:
    """A row whose value changed between two measured steps."""

    workload: str
    metric: str
    label: str
    unit: str
    step: int  # 1-based: the step that first includes the patch (the later step compared)
    patch: str  # that step's patch
    delta: float
    delta_low: float
    delta_high: float
    verdict: Verdict  # better | worse
    family: Family
    first: int  # the patches the change lies in: first..step (first == step: placed on one patch)
    exact: bool = False  # deterministic values compared as measured (iolab.stats.exact), no test

    @property
    def placed(self) -> bool:
        return self.first == self.step


@dataclass(frozen=True)
class SeriesResult:
    steps: list[Step]
    changes: list[Change]
    strategy: Strategy  # every | bisect: how the run chose its steps (the experiment's, as iolab.run.series ran it)
    builds: int  # steps with cells (a kernel built, or a build that failed)
    rounds: int  # rounds run

    @property
    def unbuilt(self) -> list[Step]:
        """The steps whose kernel did not build."""
        return [s for s in self.steps if s.build_error]

    @property
    def unplaced(self) -> list[Change]:
        return [c for c in self.changes if not c.placed]


def step_pairs(variants: list[str], ok: dict[str, list[Sample]]) -> list[tuple[str, str, str]]:
    """(reference, candidate, key) of a row: each measured step against the
    step measured before it (key: the step), and with more than two measured
    steps the last against the first (key: TOTAL)."""
    measured = [v for v in variants if ok.get(v)]
    pairs = [(measured[i - 1], measured[i], measured[i]) for i in range(1, len(measured))]
    if len(measured) > 2:
        pairs.append((measured[0], measured[-1], TOTAL))
    return pairs


class Done(TypedDict):
    """How much of a run's plan ran: the Analysis fields of that name."""

    rounds_done: int
    cells_done: int
    cells_planned: int


def series_progress(measured: list[Sample], experiment: Experiment) -> Done:
    """Complete rounds and cells. Every step run: a round is complete with every
    step's sample of every workload, of the plan's rounds x steps x workloads
    cells. A bisection: a round with every workload of each step it ran (its
    stage's steps), of cells no plan fixes (0 planned)."""
    workloads = len(experiment.workload)
    per_round: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for sample in measured:
        per_round[sample.round][sample.variant] += 1
    if strategy(experiment) == "every":
        # each step runs the workloads its patch can reach ([series] unreached)
        skip = experiment.unreached
        wanted = {v.name: workloads - len(skip.get(v.name, ())) for v in experiment.variant}
        complete = sum(1 for ran in per_round.values()
                       if all(ran.get(name, 0) == n for name, n in wanted.items()))
        planned = experiment.run.max_rounds * sum(wanted.values())
    else:
        complete = sum(1 for ran in per_round.values() if ran and all(n == workloads for n in ran.values()))
        planned = 0
    return {"rounds_done": complete, "cells_done": len(measured), "cells_planned": planned}


def attribute(analysis: Any, measured: list[Sample]) -> SeriesResult:
    """The steps and the changes of an analysed series run (an iolab.analysis.Analysis)."""
    experiment = analysis.experiment
    patches = experiment.series.patches
    number = {v.name: v.step for v in experiment.variant}
    names = {v.step: v.name for v in experiment.variant}
    unreached = experiment.unreached
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unbuilt: dict[str, str] = {}
    for sample in measured:
        cells[sample.variant][0] += 1
        cells[sample.variant][1] += sample.status != "ok"
        if sample.status != "ok" and (sample.error or "").startswith(BUILD_FAILED):
            unbuilt.setdefault(sample.variant, (sample.error or "")[len(BUILD_FAILED):].lstrip(": "))
    steps = [Step(v.step, v.name, patches[v.step - 1] if v.step else None, cells[v.name][0], cells[v.name][1],
                  unbuilt.get(v.name, "")) for v in experiment.variant]
    changes = []
    for row in analysis.rows:
        for key, comparison in row.comparisons.items():
            if key == TOTAL or comparison.verdict not in ("better", "worse"):
                continue
            step = number[key]
            first = number[row.against.get(key, analysis.baseline)] + 1
            while first < step and row.workload in unreached.get(names[first], ()):
                first += 1  # that step's patch cannot reach the workload: not the change's
            changes.append(Change(row.workload, row.metric.name, row.metric.label, row.metric.unit, step,
                                  patches[step - 1], comparison.delta, comparison.delta_low,
                                  comparison.delta_high, comparison.verdict, comparison.family, first,
                                  comparison.exact is not None))
    return SeriesResult(steps, changes, strategy(experiment), sum(1 for s in steps if s.cells),
                        len({s.round for s in measured}))
