"""The lines under the table: what its marks mean (the test each row used,
its level and correction; exploratory rows; exact comparisons), and each
decided delta's 95% CI with its p."""

from __future__ import annotations

import math
from collections import defaultdict

from iolab.analysis import Analysis
from iolab.report.figures import listing, mark
from iolab.stats import EXACTNESS, Comparison
from iolab.stats.exact import SEPARATION
from iolab.units import fine_percent, percent


def _test_text(analysis: Analysis) -> str:
    """The test each tested row used: one name when all used the same, else
    the most used one and the rows of each other one. "" when none ran."""
    used: dict[str, list[str]] = defaultdict(list)
    for row in analysis.rows:
        for c in row.comparisons.values():
            if c.verdict != "insufficient" and c.exact is None and f"{row.workload} {row.metric.label}" not in used[c.test]:
                used[c.test].append(f"{row.workload} {row.metric.label}")
    order = sorted(used, key=lambda t: -len(used[t]))
    if not order:
        return ""
    others = [f"{TEST_TEXT.get(t, t)} for {listing(used[t], 3)}" for t in order[1:]]
    return "; ".join([TEST_TEXT.get(order[0], order[0]) + (" for the other rows" if others else "")] + others)


TEST_TEXT = {"signed-rank": "Wilcoxon signed-rank test of per-round ratios, paired by round",
             "mann-whitney": "Mann-Whitney U, exact"}


def _primary_count(analysis: Analysis, totals: bool = False) -> int:
    """Primary comparisons that were tested (the size of the corrected family;
    a series' totals are a family of their own)."""
    return sum(1 for row in analysis.rows if row.primary for key, c in row.comparisons.items()
               if c.verdict != "insufficient" and c.exact is None and (key == "total") == totals)


def marks(analysis: Analysis) -> set[str]:
    """The marks the table shows (figures.mark of every comparison; a
    series' totals included): the legend explains these and no others."""
    shown = [a for a in (analysis, analysis.original) if a is not None]
    return {mark(c) for a in shown for row in a.rows for c in row.comparisons.values()}


def _legend_line(analysis: Analysis, shown: set[str]) -> str:
    """The tested rows' marks: * and ~ with the test and its level, ? with why."""
    report = analysis.experiment.report
    tests = _test_text(analysis)
    items = []
    if tests:
        sequential = analysis.sequential
        if sequential is not None:
            rule = (f"{tests}, p<{sequential.look_alpha:.2g}, the level of every look of this auto run: "
                    f"alpha {sequential.alpha:g} split over {sequential.comparisons} primary comparisons and "
                    f"{sequential.looks} looks, calibrated boundary")
        else:
            correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[report.correction]
            family = _primary_count(analysis)
            totals = _primary_count(analysis, totals=True) if analysis.series is not None else 0
            over = f"{family} primary comparison{'s' if family != 1 else ''}"
            if totals:
                over = f"the {family} primary steps' deltas, and apart over the {totals} totals"
            rule = f"{tests}, p<{report.alpha:g}, {correction}-corrected over {over}"
        if "*" in shown:
            items.append(f"* significant ({rule})")
        if "~" in shown:
            items.append("~ no significant change" + ("" if "*" in shown else f" ({rule})"))
        if not {"*", "~"} & shown:  # only exploratory rows were tested
            items.append(f"tested: {rule}")
    if {"?", "(?)"} & shown:
        why = ("too few samples, or all values equal" if tests else "too few samples, all values equal, or a "
               "test whose smallest p cannot pass its level; the notes say which")
        items.append(f"? no test ({why})")
    return "; ".join(items)


def _exploratory_line(analysis: Analysis, shown: set[str]) -> list[str]:
    found = [m for m in ("(*)", "(~)", "(?)") if m in shown]
    if not found:
        return []
    level = analysis.sequential.look_alpha if analysis.sequential else analysis.experiment.report.alpha
    tested = (f": each tested at p<{level:.2g} uncorrected, a lead to check, not a finding"
              if {"(*)", "(~)"} & shown else "")
    rows = "an exploratory row" if len(found) == 1 else "exploratory rows"
    return [f"{' '.join(found)} {rows}, not in the corrected family ([report] primary){tested}"]


EXACT_TEXT = {
    "identical": "every value of each variant identical",
    "identical_rows": "identical values: {rows}",
    "tolerance": "each variant's values within {tolerance} of each other, a change seen beyond "
                 "{resolution}: {rows}",
    "paired": "the candidate equal to the baseline in every round: {rows}",
}


def exact_line(analysis: Analysis, shown: set[str] | None = None) -> list[str]:
    """The legend of exact comparisons: which marks, how many rounds, which
    tolerance, and the rows that were not identical."""
    found = [(row, c) for row in analysis.rows for c in row.comparisons.values() if c.exact is not None]
    if not found:
        return []
    shown = marks(analysis) if shown is None else shown
    rounds = sorted({min(c.n_base, c.n_cand) for _, c in found})
    over = f"{rounds[0]}" if len(rounds) == 1 else f"{rounds[0]}-{rounds[-1]}"
    widest = max(c.tolerance for _, c in found)
    tolerance = f"±{percent(widest, signed=False)}"
    kinds = []
    for kind in EXACTNESS:
        rows = list(dict.fromkeys(f"{row.workload} {row.metric.label}" for row, c in found if c.exact == kind))
        if rows:
            # identical rows beside others are named; alone, "every value" says it
            key = "identical_rows" if kind == "identical" and len({c.exact for _, c in found}) > 1 else kind
            finest = max((c.resolution for _, c in found if c.exact == kind), default=0.0)
            kinds.append(EXACT_TEXT[key].format(tolerance=tolerance, rows=listing(rows),
                                                resolution=f"±{fine_percent(finest, signed=False)}"))
    if widest and not any(c.exact == "tolerance" for _, c in found):
        kinds.append(f"tolerance {tolerance}")
    change = {"=*", "(=*)"} & shown
    same = {"=", "(=)"} & shown
    named = ([f"=* an exact change (every candidate value beyond every baseline value, by more than "
              f"{SEPARATION:g} times their spread)"] if change else []) + (
        ["= exact, no change beyond the values' spread"] if same else [])
    exploratory = [m for m in ("(=*)", "(=)") if m in shown]
    rows_text = "an exploratory row" if len(exploratory) == 1 else "exploratory rows"
    return [f"{'; '.join(named)}: deterministic over {over} rounds ({'; '.join(kinds)}), the delta as "
            "measured, no test, no CI" + (f"; {' '.join(exploratory)} {rows_text}" if exploratory else "")]


def _tested(analysis: Analysis) -> bool:
    """Whether any comparison is a test's (not exact): the test legend is for those."""
    return any(c.exact is None for row in analysis.rows for c in row.comparisons.values())


def legend(analysis: Analysis) -> list[str]:
    primary = analysis.original or analysis
    shown = marks(analysis)
    lines = [_legend_line(primary, shown), *_exploratory_line(primary, shown)] if _tested(primary) else []
    lines += exact_line(primary, shown)
    if analysis.original is not None and _tested(analysis):
        recheck = _legend_line(analysis, shown)
        if recheck not in lines:
            lines.append("recheck: " + recheck)
    return [line for line in lines if line]


def interval_title(analysis: Analysis) -> str:
    """The heading of the delta CI lines: which estimate they are."""
    primary = analysis.original or analysis
    if primary.design == "paired" and "signed-rank" in primary.tests:
        return "delta 95% CI (paired rows: Hodges-Lehmann of per-round ratios):"
    return "delta 95% CI:"


def _intervals(analysis: Analysis, suffix: str) -> list[str]:
    lines = []
    for row in analysis.rows:
        for candidate, comparison in row.comparisons.items():
            if comparison.verdict in ("better", "worse", "same") and math.isfinite(comparison.delta_low):
                who = f" {candidate}" if len(analysis.variants) > 2 else ""
                if comparison.family == "exploratory":
                    who += " (exploratory)"
                mark = {"better": "*", "worse": "*", "same": "~"}[comparison.verdict]
                lines.append(
                    f"{row.workload} {row.metric.label}{who}{suffix}: {percent(comparison.delta)} "
                    f"[{percent(comparison.delta_low)}, {percent(comparison.delta_high)}] {mark}, "
                    f"{_p_text(comparison)}"
                )
    return lines


def _p_text(comparison: Comparison) -> str:
    """The p-value as tested, and the corrected one where a correction ran."""
    name = {"holm": "Holm", "bh": "BH"}.get(comparison.correction, "")
    if not name or comparison.family == "exploratory" or comparison.p_adjusted == comparison.p:
        return f"p={comparison.p:.2g}"
    return f"p={comparison.p:.2g} ({name} {comparison.p_adjusted:.2g})"


def delta_intervals(analysis: Analysis) -> list[str]:
    if analysis.original is None:
        return _intervals(analysis, "")
    return _intervals(analysis.original, "") + _intervals(analysis, ", recheck")
