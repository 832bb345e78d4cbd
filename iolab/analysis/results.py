"""What the analysis of a run returns: the Analysis every renderer takes, its rows and figures.

The types alone, below the modules that compute them (iolab.analysis.table,
claims, iorows, series), so that each of those imports them and none
imports another back. A claim's Agreement is here too: an Analysis holds them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from iolab import stats
from iolab.analysis.diagnostics import DISTURBANCE_RULE, Diagnostic
from iolab.analysis.failures import Failure
from iolab.analysis.metrics import Metric
from iolab.analysis.series import SeriesResult
from iolab.spec import Experiment
from iolab.stats.choice import Choice
from iolab.stats.kinds import Test, View
from iolab.stats.sequential import Sequential
from iolab.store import RunInfo
from iolab.units import counted

Design = Literal["paired", "unpaired"]  # by round (every variant in every round), or not

Word = Literal["agrees", "no change found", "undecided", "opposite", "not reproduced"]
WORDS: tuple[Word, ...] = ("agrees", "no change found", "undecided", "opposite", "not reproduced")


@dataclass(frozen=True)
class Agreement:
    label: str  # the mail's row
    unit: str  # the mail's unit
    mail_delta: float  # after / before - 1, from the mail's figures
    stated: str  # the mail's own delta column, as written
    workload: str  # "" when not reproduced
    metric: str
    metric_label: str  # iolab's row label ("us/call", "median insn/op")
    delta: float  # iolab's delta (nan when not measured)
    verdict: str  # iolab's verdict (better | worse | same | insufficient), "" when not measured
    exact: bool
    word: Word
    reason: str  # why not reproduced, or why undecided beyond its rounds; "" otherwise
    rounds: int = 0  # the rounds (pairs, or values a side) iolab's comparison had
    needed: int = 0  # undecided: the rounds estimated to decide it (0: more rounds would not tell)

    @property
    def says(self) -> str:
        """The word as every format writes it: "undecided" with its rounds ("undecided, 3 of ~6 rounds")."""
        if self.word != "undecided":
            return self.word
        return f"undecided, {self.rounds} of ~{self.needed} rounds" if self.needed else \
            f"undecided, {counted(self.rounds, 'round')}"


@dataclass(frozen=True)
class Figure:
    """One variant's figures in one row."""

    n: int
    failed: int
    center: float  # nan when there is no successful sample
    rel_spread: float
    summary: stats.Summary | None
    expected: str = ""  # why its cells fail by design ([[variant]] fails), shown instead of FAILED


@dataclass(frozen=True)
class Row:
    """A row of the table, whole when made: its mappings are read-only views
    (a verdict decided later makes a new Row, dataclasses.replace)."""

    workload: str
    metric: Metric
    figures: Mapping[str, Figure]  # by variant name
    comparisons: Mapping[str, stats.Comparison]  # by candidate name
    view: View = "median"  # the view used for this row (hmean falls back per row)
    primary: bool = True  # in the corrected family; False: exploratory
    # what each comparison is against, where not the baseline: a series step
    # against the step measured before it (iolab.analysis.series)
    against: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("figures", "comparisons", "against"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    @property
    def undecided(self) -> list[str]:
        """The candidates (or a series' total) whose comparison found no verdict: values that vary
        more than its rounds can decide, or samples not taken alike; never a row whose every value
        was equal, nor one that failed (it has no comparison)."""
        return [key for key, c in self.comparisons.items() if c.verdict == "insufficient" and c.refusal != "equal"]


@dataclass(frozen=True)
class Analysis:
    run: RunInfo
    experiment: Experiment
    variants: list[str]  # baseline first
    rows: list[Row]
    failures: list[Failure]
    notes: list[str] = field(default_factory=list)
    rounds_done: int = 0  # measured rounds with a sample (ok or failed) of every variant x workload
    cells_done: int = 0  # measured cells with a sample
    cells_planned: int = 0  # measured cells the plan has (for auto: up to max_iterations)
    view: View = "median"  # requested view
    min_max: bool = False  # show min..max lines
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sequential: Sequential | None = None  # set for iterations = "auto"
    original: Analysis | None = None  # for a recheck run: the run it rechecks
    design: Design = "unpaired"  # the test the plan chose for the run: paired by round, or not
    planned: Choice | None = None  # the plan's test choice (iolab.plan.test_choice)
    disturbed: dict[int, str] = field(default_factory=dict)  # round -> why (iolab.analysis.diagnostics)
    disturbance_rule: str = DISTURBANCE_RULE
    target_place: str = ""  # where the loop images lived ("RAM (tmpfs /dev/shm)", a directory), from the samples
    block_sizes: dict[str, list[int]] = field(default_factory=dict)  # fs -> the block sizes its cells had
    series: SeriesResult | None = None  # a [series]: its steps and which patch made which change
    claims: list[Agreement] = field(default_factory=list)  # a patch mail's claimed rows, each with its word

    @property
    def baseline(self) -> str:
        return self.variants[0]

    @property
    def tests(self) -> list[Test]:
        """The tests the comparisons used, most used first."""
        count: dict[Test, int] = defaultdict(int)
        for row in self.rows:
            for c in row.comparisons.values():
                if c.verdict != "insufficient" and c.exact is None:
                    count[c.test] += 1
        return sorted(count, key=lambda t: -count[t])
