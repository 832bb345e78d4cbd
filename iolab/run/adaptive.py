"""Adaptive run length: when an ``iterations = "auto"`` run may stop.

After every measured round from ``min_iterations`` on, the runner analyses
the samples so far (the same analysis the report shows) and asks
:func:`look`. Each headline comparison -- every report row, for every
candidate against the baseline -- is

* **decided** when it is significant at the per-look level (the verdict the
  report will print), or when its 95% delta CI is precise: half-width at most
  ``target_ci`` (relative; 0.01 = +-1%) and containing 0, i.e. no change
  larger than the target;
* **open** otherwise (including too few samples, and a narrow CI that
  excludes 0 without significance: a few more rounds settle it).

The run stops when no comparison is open ("all deltas decided"), after
``max_iterations`` rounds, or when the next round would not end within
``time_budget`` (checked by the runner). Stopping on precision never adds a
false positive; the per-look level (iolab.analysis.sequential_level) keeps
the table's false-positive rate at or below alpha across all the looks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from iolab.analysis import Analysis
from iolab.stats import Comparison

ALL_DECIDED = "all deltas decided"
NOTHING_TO_COMPARE = "nothing to compare: every cell of a variant failed"


def max_reached(rounds: int) -> str:
    return f"max_iterations reached ({rounds} rounds)"


def budget_reached(seconds: float) -> str:
    return f"time budget reached ({format_duration(seconds)})"


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]
    return "".join(parts) or "0s"


def precise(comparison: Comparison, target: float) -> bool:
    """The delta CI contains 0 and is at most ``target`` wide on each side."""
    low, high = comparison.delta_low, comparison.delta_high
    if not (math.isfinite(low) and math.isfinite(high)) or target <= 0:
        return False
    return low <= 0.0 <= high and (high - low) / 2.0 <= target


def state(comparison: Comparison, target: float) -> str:
    """"significant", "precise" or "open"."""
    if comparison.verdict in ("better", "worse"):
        return "significant"
    if comparison.verdict == "same" and precise(comparison, target):
        return "precise"
    return "open"


@dataclass(frozen=True)
class Look:
    stop: bool
    reason: str  # why it stops; empty while it goes on
    open: list[str]  # "workload label candidate" of the open comparisons


def look(analysis: Analysis) -> Look:
    """Whether an adaptive run may stop after the rounds in ``analysis``."""
    run = analysis.experiment.run
    if not run.auto:
        raise ValueError("look() is for runs with iterations = 'auto'")
    rounds = analysis.rounds_done
    if rounds < run.min_iterations:
        return Look(False, "", [])
    comparisons = [
        (f"{row.workload} {row.metric.label} {candidate}", row.comparisons[candidate])
        for row in analysis.rows
        for candidate in analysis.variants[1:]
        if candidate in row.comparisons
    ]
    if not comparisons:
        return Look(True, NOTHING_TO_COMPARE, [])
    still_open = [name for name, c in comparisons if state(c, run.target_ci) == "open"]
    if not still_open:
        return Look(True, ALL_DECIDED, [])
    if rounds >= run.max_iterations:
        return Look(True, max_reached(rounds), still_open)
    return Look(False, "", still_open)
