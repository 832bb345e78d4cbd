"""The mail's claim beside what iolab measured: one word per claimed row.

Each row of an experiment's [claims] (iolab patch writes them from the
mail) names the workload and metric that measure it. Its word:

    agrees           iolab's delta is a change (significant, or exact) in the mail's direction
    no change found  iolab's comparison decided there is none: an exact "=" (values that do not vary,
                     at a resolution finer than the claimed size; for a claim of no change, a delta
                     and resolution within +-1%), or a test whose 95% delta CI leaves out the claimed
                     size (so a change as large as the mail's would have shown)
    undecided        neither: too few rounds for a test, or a CI wide enough to hold both no change and
                     the claimed size; with the rounds run and an estimate of the rounds needed
    opposite         iolab found a change the other way (or one where the mail claims none)
    not reproduced   iolab did not measure it (the row says why)

Only directions are compared, and sizes as ratios (after / before): the
mail's figures come from another machine, never set against this one's.
When the mail's unit and iolab's metric are better in opposite directions
(IOPS against ns/op), a rise in one is a fall in the other.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from iolab.analysis.results import WORDS, Agreement, Analysis, Row, Word
from iolab.analysis.series import TOTAL
from iolab.stats import power
from iolab.stats.choice import Choice, fewest_rounds
from iolab.units import percent

if TYPE_CHECKING:
    from iolab.spec import ClaimRow
    from iolab.stats import Comparison

PRECISE = 0.01  # a claim of no change: decided when iolab's 95% delta CI is within +-1%

__all__ = ["PRECISE", "WORDS", "Agreement", "Word", "agreements", "expected_delta"]


def _comparison(row: Row, variants: list[str]) -> Comparison | None:
    """The row's comparison of the patched side against the base: a series' total, or the last step's."""
    if TOTAL in row.comparisons:
        return row.comparisons[TOTAL]
    for variant in reversed(variants):
        if variant in row.comparisons:
            return row.comparisons[variant]
    return None


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)


def expected_delta(claim: ClaimRow, comparison: Comparison) -> float:
    """The claimed change as a delta of iolab's metric: the mail's ratio, inverted where the two
    are better in opposite directions (IOPS +25% is time per op -20%)."""
    ratio = claim.after / claim.before if claim.before else math.nan
    if claim.better is not None and (claim.better == "higher") != comparison.higher_is_better:
        ratio = 1 / ratio if ratio else math.nan
    return ratio - 1


def _word(claim: ClaimRow, comparison: Comparison) -> Word:
    if comparison.verdict not in ("better", "worse"):
        return "no change found" if _no_change(comparison, expected_delta(claim, comparison)) else "undecided"
    claimed = _sign(expected_delta(claim, comparison))
    measured = _sign(comparison.delta)
    return "agrees" if claimed == measured and claimed != 0 else "opposite"


def _no_change(comparison: Comparison, claimed: float) -> bool:
    """Whether the comparison decided there is no change of the claimed size: an exact "=" at a
    resolution finer than it, every value equal, or a test whose CI leaves it out (a claim of no
    change: a CI within +-1%, the precision an adaptive run stops at)."""
    if comparison.verdict != "same" and comparison.refusal != "equal":
        return False
    if comparison.exact is not None or comparison.refusal == "equal":
        if claimed == 0:  # a claim of no change (553k -> 553k): met where the exact delta is within +-1%
            return abs(comparison.delta) + comparison.resolution <= PRECISE
        return comparison.resolution < abs(claimed)
    low, high = comparison.delta_low, comparison.delta_high
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(claimed)):
        return False
    if claimed == 0:
        return -PRECISE <= low and high <= PRECISE
    return not low <= claimed <= high


def _rounds(comparison: Comparison) -> int:
    return comparison.pairs or min(comparison.n_base, comparison.n_cand)


def _needed(comparison: Comparison, claimed: float, planned: Choice | None) -> int:
    """The rounds estimated to decide an undecided claim: its CI narrowed, as 1/sqrt(rounds), until
    it leaves out either no change or the claimed size (the farther of the two from iolab's delta),
    and never fewer than its test needs to pass its level; 0 where rounds would not tell (an exact
    comparison's values spread wider than the claimed size)."""
    test = comparison.test if comparison.verdict != "insufficient" else (planned.test if planned and planned.test
                                                                          else comparison.test)
    level = planned.level if planned is not None else 0.05
    least = fewest_rounds(test, level)
    if comparison.exact is not None:
        return 0
    low, high, delta = comparison.delta_low, comparison.delta_high, comparison.delta
    if not all(math.isfinite(x) for x in (low, high, delta, claimed)):
        return max(least, _rounds(comparison) + 1)
    distance = max(abs(delta), abs(claimed - delta)) if claimed else PRECISE
    return max(least, power.rounds_to_narrow(_rounds(comparison), (high - low) / 2, distance))


def agreements(analysis: Analysis) -> list[Agreement]:
    """The experiment's claimed rows, each with iolab's delta and its word."""
    claims = analysis.experiment.claims
    if claims is None:
        return []
    out = []
    for claim in claims.row:
        mail = claim.after / claim.before - 1 if claim.before else math.nan
        row = next((r for r in analysis.rows if r.workload == claim.workload and r.metric.name == claim.metric),
                   None) if claim.workload else None
        comparison = _comparison(row, analysis.variants) if row is not None else None
        if row is None or comparison is None:
            reason = claim.reason or (f"{claim.workload}: no {claim.metric} measured (see the failures)"
                                      if claim.workload else "not measured")
            out.append(Agreement(claim.label, claim.unit, mail, claim.stated, claim.workload, claim.metric, "",
                                 math.nan, "", False, "not reproduced", reason))
            continue
        word = _word(claim, comparison)
        claimed = expected_delta(claim, comparison)
        needed = _needed(comparison, claimed, analysis.planned) if word == "undecided" else 0
        reason = "" if word != "undecided" or needed else \
            f"its values spread {percent(comparison.resolution)} (the smallest change they show), wider than the claim"
        out.append(Agreement(claim.label, claim.unit, mail, claim.stated, claim.workload, claim.metric,
                             row.metric.label, comparison.delta, comparison.verdict, comparison.exact is not None,
                             word, reason, _rounds(comparison), needed))
    return out
