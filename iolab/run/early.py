"""Stopping a run early when a variant cannot run at all.

A mistyped mount option or mkfs option fails every cell of the variant the
same way, round after round, while the others go on being measured for a
table that can never compare them. When a variant's cells of the first
measured round have all failed with one error (in general form,
iolab.analysis.failures: the cells' own directories and loop devices aside),
and the experiment does not say they will ([[variant]] fails), the run stops
once that round is complete. A variant with one cell a round (one
workload) is judged over the first two measured rounds: one failed cell may
be a passing accident (a guest that hung once), two alike are not. Then: its samples stay, the run is `failed`, and the
reason names the variant and the error. A series is left alone (a step whose
kernel does not build fails its cells, and the other steps are still
wanted), and so are the cells a resumed run ran before: `iolab resume` runs
the rest as asked.
"""

from __future__ import annotations

from collections import defaultdict

from iolab import plan
from iolab.analysis.failures import general
from iolab.cell.sample import Sample
from iolab.spec import Experiment


class CannotRun(Exception):
    """A variant failed every cell of the first measured round alike: why the run stopped."""

    def __init__(self, why: str, round_index: int):
        super().__init__(why)
        self.why, self.round = why, round_index


class FirstRound:
    """Watches the cells of the first measured round (two, for a variant of one cell a round) as they come."""

    def __init__(self, experiment: Experiment, planned: list[plan.PlannedCell], done: set[int]):
        fails = {v.name: v.fails for v in experiment.variant}
        judged = [c for c in planned if c.workload not in fails[c.variant]]
        start = experiment.run.warmup
        per_round: dict[str, int] = defaultdict(int)
        for cell in judged:
            per_round[cell.variant] += cell.round == start
        rounds = 1 if min(per_round.values(), default=2) >= 2 else 2  # at least two cells of each variant
        self.rounds = range(start, start + rounds)
        self.round = self.rounds[-1]  # the run stops after it
        self._round = {c.seq for c in planned if c.round in self.rounds}
        self._cells: dict[str, set[int]] = defaultdict(set)  # by variant: the cells judged
        for cell in judged:
            if cell.round in self.rounds:
                self._cells[cell.variant].add(cell.seq)
        # a cell run before a resume decides nothing now: the user asked for the rest
        self._judged = {v for v, cells in self._cells.items() if not cells & done}
        self._seen: dict[int, Sample] = {}
        self._before = self._round & done  # cells of the round a resumed run ran before
        self._finish_round = experiment.run.order == "interleaved"  # the others' cells of the round are next
        self.reason: str | None = None

    def seen(self, sample: Sample) -> None:
        if sample.seq in self._round:
            self._seen[sample.seq] = sample
            self.reason = self.reason or self._cannot_run(sample.variant)

    def check(self) -> None:
        """Raise CannotRun once a variant cannot run (an interleaved run: at the end of the round)."""
        if self.reason and (not self._finish_round or self._round <= set(self._seen) | self._before):
            raise CannotRun(self.reason, self.round)

    def _cannot_run(self, variant: str) -> str | None:
        cells = self._cells.get(variant, set())
        if variant not in self._judged or not cells or not cells <= set(self._seen):
            return None
        samples = [self._seen[seq] for seq in sorted(cells)]
        errors = {general(s.error or "unknown error") for s in samples if s.status != "ok"}
        if len(errors) != 1 or any(s.status == "ok" for s in samples):
            return None
        where = f"round {self.rounds[0]}" if len(self.rounds) == 1 else f"rounds {self.rounds[0]}-{self.rounds[-1]}"
        which = f"its {len(samples)} cells of {where} alike"
        return (f"variant {variant!r} failed {which}, so the run stopped there (iolab resume runs the rest): "
                f"{errors.pop()}")


def watching(experiment: Experiment, seed: int, done: set[int]) -> FirstRound | None:
    """The watch of a run (None for a series, whose failed steps do not stop it)."""
    if experiment.series is not None:
        return None
    return FirstRound(experiment, plan.plan(experiment, seed), done)
