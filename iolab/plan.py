"""The plan: which cells run, in which order.

A cell is one (variant, workload, iteration). With order = "interleaved"
every round runs each (variant, workload) pair once, in an order shuffled
per round with a seeded generator, so slow drift of the machine (page
cache, thermal, background work) falls on all variants alike.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from iolab.spec import Experiment


@dataclass(frozen=True)
class PlannedCell:
    seq: int
    round: int  # warm-up rounds come first and count from 0 too
    iteration: int  # index among measured rounds; -1 for warm-up cells
    warmup: bool
    variant: str
    workload: str


def plan(experiment: Experiment, seed: int) -> list[PlannedCell]:
    rng = random.Random(seed)
    pairs = [(v.name, w.name) for w in experiment.workload for v in experiment.variant]
    rounds = experiment.run.warmup + experiment.run.iterations
    ordered: list[tuple[int, str, str]] = []
    if experiment.run.order == "interleaved":
        for round_index in range(rounds):
            shuffled = pairs[:]
            rng.shuffle(shuffled)
            ordered += [(round_index, v, w) for v, w in shuffled]
    else:  # sequential: every iteration of one variant before the next
        ordered = [(r, v, w) for v, w in pairs for r in range(rounds)]
    cells = []
    for seq, (round_index, variant, workload) in enumerate(ordered):
        warmup = round_index < experiment.run.warmup
        iteration = -1 if warmup else round_index - experiment.run.warmup
        cells.append(PlannedCell(seq, round_index, iteration, warmup, variant, workload))
    return cells
