"""When an adaptive run (``iterations = "auto"``) stops: the one place that decides.

The runner runs a round, then, from ``min_iterations`` measured rounds on,
analyses the samples so far (the analysis the report shows) and asks
:func:`look`. Each **primary** comparison -- every primary row, for every
candidate against the baseline -- is

* **decided** when it is significant at the per-look level (the verdict the
  report will print: iolab.analysis tests each primary comparison at
  iolab.stats.sequential.level, alpha split over the primary comparisons
  and over the looks), or when its 95% delta CI is precise: half-width at
  most ``target_ci`` (relative; 0.01 = +-1%) and containing 0, i.e. no
  change larger than the target;
* **open** otherwise (too few samples, a narrow CI that excludes 0 without
  significance: a few more rounds settle it).

The run stops, in this order of reasons, when no primary comparison is
open ("all deltas decided"), when there is nothing to compare, after
``max_iterations`` rounds, or when the next round would not end within
``time_budget``. Exploratory rows never keep a run going. Stopping on
precision never adds a false positive; the per-look level keeps the
primary family's false-positive rate at or below alpha across all looks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from iolab.analysis import Analysis
from iolab.stats import Comparison
from iolab.units import format_duration

ALL_DECIDED = "all deltas decided"
ALL_EXACT = "every primary comparison exact"  # [run] exact_stop, after its first 2 rounds
NOTHING_TO_COMPARE = "nothing to compare: every cell of a variant failed"


def max_reached(rounds: int) -> str:
    return f"max_iterations reached ({rounds} rounds)"


def budget_reached(seconds: float) -> str:
    return f"time budget reached ({format_duration(seconds)})"


def precise(comparison: Comparison, target: float) -> bool:
    """The delta CI contains 0 and is at most ``target`` wide on each side."""
    low, high = comparison.delta_low, comparison.delta_high
    if not (math.isfinite(low) and math.isfinite(high)) or target <= 0:
        return False
    return low <= 0.0 <= high and (high - low) / 2.0 <= target


def state(comparison: Comparison, target: float) -> str:
    """"significant", "precise", "exact" (values that do not vary: decided
    as they are) or "open"."""
    if comparison.exact is not None:
        return "exact"
    if comparison.verdict in ("better", "worse"):
        return "significant"
    if comparison.verdict == "same" and precise(comparison, target):
        return "precise"
    return "open"


def not_exact(analysis: Analysis) -> list[str]:
    """The primary comparisons that are not exact ("workload label
    candidate"): what keeps a run with [run] exact_stop going after its
    first 2 rounds. A row that failed on a side has no comparison: it
    keeps the run going too (another round may give it one)."""
    return [f"{row.workload} {row.metric.label} {candidate}"
            for row in analysis.rows if row.primary for candidate in analysis.variants[1:]
            if candidate not in row.comparisons or row.comparisons[candidate].exact is None]


@dataclass(frozen=True)
class Look:
    stop: bool
    reason: str  # why it stops; empty while it goes on
    open: list[str]  # "workload label candidate" of the open primary comparisons


def look(analysis: Analysis, *, elapsed: float = 0.0, rounds_run: int = 0) -> Look:
    """Whether an adaptive run stops after the rounds in ``analysis``.

    ``elapsed``: seconds since the run started; ``rounds_run``: rounds run
    in that time, warm-up included (the budget check assumes the next round
    takes their mean time). Before ``min_iterations`` only the
    ``max_iterations`` bound can stop a run.
    """
    run = analysis.experiment.run
    if not run.auto:
        raise ValueError("look() is for runs with iterations = 'auto'")
    rounds = analysis.rounds_done
    still_open: list[str] = []
    if rounds >= run.min_iterations:
        comparisons = [
            (f"{row.workload} {row.metric.label} {candidate}", row.comparisons[candidate])
            for row in analysis.rows if row.primary
            for candidate in analysis.variants[1:] if candidate in row.comparisons
        ]
        if not comparisons:
            return Look(True, NOTHING_TO_COMPARE, [])
        still_open = [name for name, c in comparisons if state(c, run.target_ci) == "open"]
        if not still_open:
            return Look(True, ALL_DECIDED, [])
    if rounds >= run.max_iterations:
        return Look(True, max_reached(rounds), still_open)
    if run.time_budget is not None and rounds >= run.min_iterations and rounds_run > 0:
        if elapsed + elapsed / rounds_run > run.time_budget:
            return Look(True, budget_reached(run.time_budget), still_open)
    return Look(False, "", still_open)
