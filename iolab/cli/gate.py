"""The CI gate: fail a run whose primary metrics got worse.

``--fail-on regression`` fails when any primary comparison of the report's
table (the experiment's primary metrics, iolab.analysis; exploratory rows
are not gated) has the verdict ``worse``; ``--fail-on regression:5%`` only when it is
also worse by more than 5% (the delta's point estimate). A comparison that
could not be decided (too few samples, a variant that failed) is listed, and
does not pass silently: it fails the gate too, as "undecided", because a gate
that passes when nothing was measured guards nothing. A metric whose every
value was equal on both sides (a quantized percentile that did not move) is
no regression: it counts as checked. An exact comparison (values that do not
vary, iolab.stats.exact) is gated on its delta as measured.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from iolab.analysis import Analysis
from iolab.units import percent

EXIT_REGRESSION = 3
PATTERN = re.compile(r"regression(?::(\d+(?:\.\d+)?)%?)?")


@dataclass(frozen=True)
class Gate:
    threshold: float  # relative: 0.05 = worse by more than 5%
    text: str  # as given

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Outcome:
    gate: Gate
    checked: int
    regressions: list[str]
    undecided: list[str]

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.undecided

    def message(self) -> str:
        if self.passed:
            return (f"gate {self.gate}: passed: {self.checked} comparisons, none worse by more than "
                    f"{percent(self.gate.threshold, signed=False)}")
        lines = [f"gate {self.gate}: FAILED"]
        lines += [f"  worse: {line}" for line in self.regressions]
        lines += [f"  undecided: {line}" for line in self.undecided]
        return "\n".join(lines)


def parse(text: str) -> Gate:
    """``regression`` or ``regression:5%`` (``regression:5`` means 5% too)."""
    match = PATTERN.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"expected 'regression' or 'regression:N%' (e.g. regression:5%), got {text!r}")
    threshold = float(match.group(1)) / 100 if match.group(1) else 0.0
    if threshold >= 10:
        raise ValueError(f"a threshold of {match.group(1)}% would never fail: give at most 1000%")
    return Gate(threshold, text.strip())


def check(analysis: Analysis, gate: Gate) -> Outcome:
    regressions, undecided, checked = [], [], 0
    for row in (r for r in analysis.rows if r.primary):
        for candidate in analysis.variants[1:]:
            checked += 1
            where = f"{row.workload} {row.metric.label} {candidate}"
            comparison = row.comparisons.get(candidate)
            if comparison is None:
                undecided.append(f"{where}: no comparison (no successful samples on one side)")
            elif comparison.verdict == "insufficient" and comparison.refusal != "equal":
                undecided.append(f"{where}: too few samples for a verdict")
            elif (comparison.verdict == "worse" and math.isfinite(comparison.delta)
                  and abs(comparison.delta) > gate.threshold):
                if comparison.exact is not None:
                    rounds = min(comparison.n_base, comparison.n_cand)
                    regressions.append(f"{where}: {percent(comparison.delta)}, exact (deterministic over "
                                       f"{rounds} rounds)")
                    continue
                ci = ""
                if math.isfinite(comparison.delta_low):
                    ci = f" [{percent(comparison.delta_low)}, {percent(comparison.delta_high)}]"
                adjusted = f" ({analysis.experiment.report.correction} {comparison.p_adjusted:.2g})" \
                    if comparison.p_adjusted != comparison.p else ""
                regressions.append(f"{where}: {percent(comparison.delta)}{ci}, p={comparison.p:.2g}{adjusted}")
    return Outcome(gate, checked, regressions, undecided)
