"""The plan: which cells run, in which order.

A cell is one (variant, workload, iteration). With order = "interleaved"
every round runs each (variant, workload) pair once, in an order shuffled
per round with a seeded generator, so slow drift of the machine (page
cache, thermal, background work) falls on all variants alike.

Rounds can be made one at a time (:func:`round_cells`), which is what an
adaptive run (``iterations = "auto"``) does: round r is always the r-th
shuffle of the same seeded stream, so a run that stops after 7 rounds ran
exactly the first 7 rounds of the full plan of the same seed.

The plan also fixes the test of the primary comparisons (:func:`test_choice`)
before any data, from the rounds, the order and the family size.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from iolab.spec import Experiment
from iolab.stats.choice import MOST_ROUNDS, Choice, choose, min_p
from iolab.stats.kinds import PAIRED, UNPAIRED


@dataclass(frozen=True)
class PlannedCell:
    seq: int
    round: int  # warm-up rounds come first and count from 0 too
    iteration: int  # index among measured rounds; -1 for warm-up cells
    warmup: bool
    variant: str
    workload: str


def pairs(experiment: Experiment) -> list[tuple[str, str]]:
    """(variant, workload) pairs of one round, in the file's order; a
    series' step runs only the workloads its patch can reach
    ([series] unreached, set by iolab.run.series.with_reach)."""
    skip = experiment.unreached
    return [(v.name, w.name) for w in experiment.workload for v in experiment.variant
            if w.name not in skip.get(v.name, ())]


def total_rounds(experiment: Experiment) -> int:
    """Warm-up rounds plus the most measured rounds the run may take."""
    return experiment.run.warmup + experiment.run.max_rounds


def _orders(experiment: Experiment, seed: int) -> Iterator[list[tuple[str, str]]]:
    """The shuffled order of every round, round 0 first, without end."""
    rng = random.Random(seed)
    while True:
        shuffled = pairs(experiment)
        rng.shuffle(shuffled)
        yield shuffled


def _cell(experiment: Experiment, seq: int, round_index: int, variant: str, workload: str) -> PlannedCell:
    warmup = round_index < experiment.run.warmup
    iteration = -1 if warmup else round_index - experiment.run.warmup
    return PlannedCell(seq, round_index, iteration, warmup, variant, workload)


def round_cells(experiment: Experiment, seed: int, round_index: int) -> list[PlannedCell]:
    """The cells of one round of an interleaved plan, made on demand.

    The same cells, with the same sequence numbers, as that round in
    ``plan(experiment, seed)``.
    """
    if experiment.run.order != "interleaved":
        raise ValueError("rounds on demand need order = 'interleaved'")
    if round_index < 0:
        raise ValueError(f"round_index must be >= 0, got {round_index}")
    orders = _orders(experiment, seed)
    for _ in range(round_index):
        next(orders)
    width = len(pairs(experiment))
    return [
        _cell(experiment, round_index * width + i, round_index, v, w)
        for i, (v, w) in enumerate(next(orders))
    ]


def _alternate(experiment: Experiment, rounds: int) -> list[tuple[int, str, str]]:
    """ABAB...: blocks of rounds in which each variant (in file order) runs
    all its cells of the block in a row, as many as one VM boot takes
    ([vm] cells_per_boot), so kernels alternate boot by boot."""
    workloads = [w.name for w in experiment.workload]
    block = max(1, experiment.vm.cells_per_boot // len(workloads))
    skip = experiment.unreached
    ordered = []
    for first in range(0, rounds, block):
        for variant in experiment.variant:
            for r in range(first, min(first + block, rounds)):
                ordered += [(r, variant.name, w) for w in workloads if w not in skip.get(variant.name, ())]
    return ordered


def plan(experiment: Experiment, seed: int) -> list[PlannedCell]:
    """Every cell of the run; for ``iterations = "auto"`` the longest run
    (``max_iterations`` measured rounds), of which an adaptive run takes a prefix."""
    rounds = total_rounds(experiment)
    if experiment.run.order == "interleaved":
        orders = _orders(experiment, seed)
        ordered = [(r, v, w) for r in range(rounds) for v, w in next(orders)]
    elif experiment.run.order == "alternate":
        ordered = _alternate(experiment, rounds)
    else:  # sequential: every iteration of one variant before the next
        ordered = [(r, v, w) for v, w in pairs(experiment) for r in range(rounds)]
    return [_cell(experiment, seq, r, v, w) for seq, (r, v, w) in enumerate(ordered)]


def paired(experiment: Experiment) -> bool:
    """Every variant has a cell in every round: the rounds pair the variants."""
    return experiment.run.order in ("interleaved", "alternate") and len(experiment.variant) > 1


def test_choice(experiment: Experiment, comparisons: int, look_alpha: float | None = None) -> Choice:
    """The test of the run's primary comparisons, from the plan alone: the
    rounds, the order and the family size (``comparisons``), never the values.

    A fixed number of rounds takes the paired signed-rank test where its
    smallest p passes the first level of the correction, else the exact
    Mann-Whitney U where that does (iolab.stats.choice). An adaptive run
    (``look_alpha``: its per-look level) keeps the test its stopping rule is
    calibrated for, and can decide when that test's smallest p at
    max_iterations passes the per-look level.
    """
    run, report = experiment.run, experiment.report
    if look_alpha is None:
        assert isinstance(run.iterations, int)
        return choose(run.iterations, comparisons, paired=paired(experiment), alpha=report.alpha,
                      correction=report.correction)
    test = PAIRED if paired(experiment) else UNPAIRED
    smallest = min_p(test, run.max_iterations)
    decided = smallest < look_alpha
    return Choice(test if decided else "", run.max_iterations, comparisons, look_alpha, smallest,
                  run.max_iterations if decided else MOST_ROUNDS)
