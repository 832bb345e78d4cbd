"""The CI gate: fail a run whose primary metrics got worse.

``--fail-on regression`` fails when any primary comparison of the report's
table (the experiment's primary metrics, iolab.analysis; exploratory rows
are not gated) has the verdict ``worse``; ``--fail-on regression:5%`` only when it is
also worse by more than 5% (the delta's point estimate). A comparison that
could not be decided (values that vary more than the rounds can decide, as
an instruction count that jumps from boot to boot; rounds from hosts that
differ) is named, "undecided", and fails the gate only where asked:
``--fail-on regression:5%,undecided`` (or ``--fail-on undecided`` alone). A
primary row with no comparison at all (a variant whose every cell failed)
fails the gate always: a gate that passes when nothing was measured guards
nothing. A metric whose every value was equal on both sides (a quantized
percentile that did not move) is no regression: it counts as checked. An
exact comparison (values that do not vary, iolab.stats.exact) is gated on
its delta as measured.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from iolab.analysis import Analysis
from iolab.units import percent

EXIT_REGRESSION = 3
PATTERN = re.compile(r"regression(?::(\d+(?:\.\d+)?)%?)?")
UNDECIDED = "undecided"


@dataclass(frozen=True)
class Gate:
    threshold: float | None  # relative: 0.05 = worse by more than 5%; None: regressions not gated
    text: str  # as given
    undecided: bool = False  # undecided comparisons fail it too

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Outcome:
    gate: Gate
    checked: int
    regressions: list[str]
    undecided: list[str]
    failed: list[str] = field(default_factory=list)  # primary rows with no comparison: cells that failed

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.failed and not (self.gate.undecided and self.undecided)

    def message(self) -> str:
        named = [f"  undecided: {line}" for line in self.undecided]
        if self.passed:
            worse = "" if self.gate.threshold is None else \
                f", none worse by more than {percent(self.gate.threshold, signed=False)}"
            lines = [f"gate {self.gate}: passed: {self.checked} comparisons{worse}"]
            if named:
                lines[0] += (f"; {len(named)} undecided, not gated (--fail-on "
                             f"{self.gate.text},{UNDECIDED} fails on them):")
            return "\n".join(lines + named)
        lines = [f"gate {self.gate}: FAILED"]
        lines += [f"  worse: {line}" for line in self.regressions]
        lines += [f"  failed: {line}" for line in self.failed]
        if self.gate.undecided:
            lines += named
        elif named:
            lines += [f"  (not gated) undecided: {line}" for line in self.undecided]
        return "\n".join(lines)


def parse(text: str) -> Gate:
    """``regression`` or ``regression:5%`` (``regression:5`` means 5% too), and/or ``undecided``,
    separated by commas."""
    threshold: float | None = None
    undecided = False
    for item in (part.strip() for part in text.split(",")):
        if item == UNDECIDED:
            undecided = True
            continue
        match = PATTERN.fullmatch(item)
        if match is None:
            raise ValueError(f"expected 'regression', 'regression:N%' or 'undecided' (e.g. regression:5%,undecided), "
                             f"got {item!r}")
        threshold = float(match.group(1)) / 100 if match.group(1) else 0.0
        if threshold >= 10:
            raise ValueError(f"a threshold of {match.group(1)}% would never fail: give at most 1000%")
    return Gate(threshold, text.strip(), undecided)


def check(analysis: Analysis, gate: Gate) -> Outcome:
    regressions, undecided, failed, checked = [], [], [], 0
    for row in (r for r in analysis.rows if r.primary):
        for candidate in analysis.variants[1:]:
            checked += 1
            where = f"{row.workload} {row.metric.label} {candidate}"
            comparison = row.comparisons.get(candidate)
            if comparison is None:
                failed.append(f"{where}: no comparison (no successful samples on one side)")
            elif candidate in row.undecided:
                why = comparison.warnings[-1] if comparison.warnings else "too few samples for a verdict"
                undecided.append(f"{where}: {why}")
            elif (comparison.verdict == "worse" and math.isfinite(comparison.delta) and gate.threshold is not None
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
    return Outcome(gate, checked, regressions, undecided, failed)
