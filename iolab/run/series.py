"""Running a patch series: every step, or a bisection of it.

Every step (``[series] strategy = "every"``, the default with instructions
timing, where each step's value is exact): the ordinary plan, each round
runs every step; iolab.analysis.series places each change on its patch.

Bisection (``"bisect"``, the default with wall timing, as Pinpoint does for
Chromium): compare the ends (the base and the last step), adding rounds
while a primary comparison is open (iolab.run.adaptive.state: neither
significant nor precisely unchanged), from ``[run] min_iterations`` up to
``max_iterations`` rounds per stage (a fixed ``iterations`` is the rounds of
each stage; a stage starts only when its first rounds fit ``[run] time_budget``).
Where two steps a < b measured side by side differ and b > a + 1,
the next stage runs a, the midpoint m and b side by side, so a-m and m-b are
compared paired by round. It ends when every change lies between adjacent
steps, when no comparison is open, or when the budget is spent; a change left between steps further apart is reported with
that interval of patches. Only the steps a stage runs are built.

Builds: every step's kernel is built in step order, each adding one patch
to the tree the step before left (iolab.kernels.patches), so a step
recompiles only the files of its own patch. With instructions timing a
step's values are instruction counts, which the host's load does not change:
there the steps of an every-step run are built ahead, in a thread, while the
first steps' cells run (``build_ahead``). With wall timing a build would
load the machine under a measured cell: a step is built when its first cell
comes, before that cell starts.

Reach (every step run, ``[series] reach = "paths"``, the default): a step
runs only the workloads its patch can reach. A file under fs/<name>/ of a
filesystem iolab mounts (FILESYSTEMS) is code that runs for a mount of that
filesystem; a patch whose files all lie there cannot change a workload on
another filesystem (its cells at that step would measure the step before's
code again), so that step does not run it: with_reach stores the left-out
workloads with the run ([series] unreached), the plan leaves their cells out,
and the attribution places a change after such a step on the next step that
ran (iolab.analysis.series). Any other file (the VFS, the block layer, mm,
a header, jbd2, iomap) reaches every workload. A step that runs no workload
is not booted, and not built on its own (the next step's build adds its
patch too). ``reach = "all"`` runs every workload at every step.

Exact stop (``[run] exact_stop``, instructions mode's default): after two
rounds, a third runs only for the (step, workload) pairs whose comparison
with the step before is not exact (third_round), the step before included.

Rounds are numbered across stages; a round's cells are the stage's steps x
the workloads, shuffled with the run's seed and the round's number, and
numbered so that a resumed run makes the same decisions from its stored
samples and runs only what is missing.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from iolab import analysis, plan, spec
from iolab.kernels import diff, patches
from iolab.run import adaptive
from iolab.spec import Experiment

Runner = Callable[[list[Any]], None]  # runs cells (CellSpecs), storing each sample


strategy = analysis.series.strategy  # "every" or "bisect": the file's choice, else by the timing mode


FILESYSTEMS = tuple(fs for fs in spec.FILESYSTEMS if fs != "none")  # fs/<name>/: code run for a mount of <name>


def own_filesystems(files: list[str]) -> set[str] | None:
    """The filesystems whose fs/<name>/ holds each of these files (-p1
    paths); None when a file lies anywhere else (it may reach any workload)."""
    found = set()
    for name in files:
        parts = name.split("/")
        if len(parts) < 3 or parts[0] != "fs" or parts[1] not in FILESYSTEMS:
            return None
        found.add(parts[1])
    return found or None


def unreached(experiment: Experiment, touched: Callable[[str], list[str]]) -> dict[str, list[str]]:
    """Each step's workloads its patch cannot reach (``touched``: a patch
    file's -p1 paths): a patch that changes only filesystems the workload's
    target does not mount. Steps that reach every workload are left out."""
    assert experiment.series is not None
    found: dict[str, list[str]] = {}
    for variant in experiment.variant[1:]:
        assert variant.step is not None
        own = own_filesystems(touched(experiment.series.patches[variant.step - 1]))
        if own is None:
            continue
        skip = [w.name for w in experiment.workload if experiment.target_for(variant, w).fs not in own]
        if skip:
            found[variant.name] = skip
    return found


def with_reach(experiment: Experiment) -> Experiment:
    """The experiment with [series] unreached set from its patches (every
    step run, reach = "paths"), as the run stores it; else as it is."""
    series = experiment.series
    if series is None or strategy(experiment) != "every" or series.reach != "paths":
        return experiment

    def touched(name: str) -> list[str]:
        return diff.paths(patches.read(patches.Patch(experiment.file(name))))

    found = unreached(experiment, touched)
    return experiment.model_copy(update={"series": series.model_copy(update={"unreached": found})})


def reached(experiment: Experiment) -> list[str]:
    """The steps that run a workload (every step but those whose patch reaches none), in step order."""
    skip = experiment.unreached
    return [v.name for v in sorted(experiment.variant, key=lambda v: v.step or 0)
            if len(skip.get(v.name, ())) < len(experiment.workload)]


def build_ahead(experiment: Experiment) -> list[str]:
    """The steps to build in the background while cells run, in step order:
    every step of an every-step run with instructions timing (a count does
    not depend on the host's load) that runs a workload; none otherwise
    (built on demand)."""
    if experiment.series is None or strategy(experiment) != "every":
        return []
    if getattr(experiment.vm, "timing", "wall") != "instructions":
        return []
    return reached(experiment)


def third_round(result: analysis.Analysis) -> set[tuple[str, str]]:
    """(step, workload) of an every-step run that need a third round: both
    sides of each primary comparison of a step with the step before that is
    not exact, and a step run but without a comparison in a primary row (a
    failed side: another round may give it one)."""
    experiment = result.experiment
    assert experiment.series is not None
    skip = experiment.unreached
    wanted: set[tuple[str, str]] = set()
    for row in result.rows:
        if not row.primary:
            continue
        planned = [v for v in result.variants if row.workload not in skip.get(v, ())]
        for previous, step in zip(planned, planned[1:]):
            comparison = row.comparisons.get(step)
            if comparison is None:  # a failed side: the step and the one planned before it
                wanted |= {(previous, row.workload), (step, row.workload)}
            elif comparison.exact is None:  # not exact: both sides of the comparison
                wanted |= {(row.against.get(step, result.baseline), row.workload), (step, row.workload)}
    return wanted


def round_plan(experiment: Experiment, seed: int, round_index: int, steps: list[int]) -> list[plan.PlannedCell]:
    """The cells of one bisection round: these steps in a shuffled order, each
    step's workloads in a row (one VM boot runs them)."""
    names = [experiment.variant[k].name for k in steps]
    random.Random(f"{seed}:{round_index}").shuffle(names)
    pairs = [(v, w.name) for v in names for w in experiment.workload]
    width = len(experiment.variant) * len(experiment.workload)
    index = {v.name: i for i, v in enumerate(experiment.variant)}
    workloads = {w.name: i for i, w in enumerate(experiment.workload)}
    return [plan.PlannedCell(round_index * width + index[v] * len(experiment.workload) + workloads[w],
                             round_index, round_index, False, v, w) for v, w in pairs]


def _open(result: analysis.Analysis, steps: list[int], target: float) -> bool:
    """Whether a primary comparison between neighbouring steps of this stage is still open."""
    names = {result.experiment.variant[k].name for k in steps[1:]}
    return any(adaptive.state(row.comparisons[name], target) == "open"
               for row in result.rows if row.primary for name in names if name in row.comparisons)


def _splits(result: analysis.Analysis) -> list[tuple[int, int]]:
    """Intervals (a, b) of measured neighbours with a significant primary change and b > a + 1."""
    # every variant of a [series] has its step (iolab.spec sets them); the filter tells the type checker so
    step = {v.name: v.step for v in result.experiment.variant if v.step is not None}
    found: set[tuple[int, int]] = set()
    for row in result.rows:
        if not row.primary:
            continue
        for name, comparison in row.comparisons.items():
            if name == analysis.series.TOTAL or comparison.verdict not in ("better", "worse"):
                continue
            b = step[name]
            a = step[row.against.get(name, result.baseline)]
            if b > a + 1:
                found.add((a, b))
    return sorted(found)


def bisect(experiment: Experiment, run_cells: Runner, analyse: Callable[[], analysis.Analysis],
           cell_specs: Callable[[list[plan.PlannedCell]], list[Any]], seed: int, done: set[int],
           clock: Callable[[], float]) -> str:
    """Run the stages of a bisection; why it stopped."""
    settings = experiment.run
    low, high = (settings.min_iterations, settings.max_iterations) if settings.auto else (
        settings.max_rounds, settings.max_rounds)
    stage = [0, len(experiment.variant) - 1]
    tried = set(stage)
    round_index, started = 0, clock()
    while True:
        for count in range(1, high + 1):
            # a stage starts only when its first `low` rounds fit the budget: a
            # midpoint with too few rounds would hide the change it was to place
            if settings.time_budget is not None and round_index and (count == 1 or count > low):
                elapsed = clock() - started
                if elapsed + (low if count == 1 else 1) * elapsed / round_index > settings.time_budget:
                    return adaptive.budget_reached(settings.time_budget)
            cells = [c for c in cell_specs(round_plan(experiment, seed, round_index, stage)) if c.seq not in done]
            run_cells(cells)
            round_index += 1
            if count >= low and not _open(analyse(), stage, settings.target_ci):
                break
        splits = [(a, b) for a, b in _splits(analyse()) if (a + b) // 2 not in tried]  # a failed build stays tried
        if not splits:
            return f"bisection done after {round_index} rounds"
        stage = sorted({k for a, b in splits for k in (a, (a + b) // 2, b)})
        tried.update(stage)
