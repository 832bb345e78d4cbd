"""The mail's claim beside what iolab measured: one word per claimed row.

Each row of an experiment's [claims] (iolab patch writes them from the
mail) names the workload and metric that measure it. Its word:

    agrees           iolab's delta is a change (significant, or exact) in the mail's direction
    no change found  iolab's comparison found no change, or could not decide
    opposite         iolab found a change the other way (or one where the mail claims none)
    not reproduced   iolab did not measure it (the row says why)

Only directions are compared, and sizes as ratios (after / before): the
mail's figures come from another machine, never set against this one's.
When the mail's unit and iolab's metric are better in opposite directions
(IOPS against ns/op), a rise in one is a fall in the other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from iolab.analysis.series import TOTAL

if TYPE_CHECKING:
    from iolab.analysis.table import Analysis, Row
    from iolab.spec import ClaimRow
    from iolab.stats import Comparison

Word = Literal["agrees", "no change found", "opposite", "not reproduced"]
WORDS: tuple[Word, ...] = ("agrees", "no change found", "opposite", "not reproduced")


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
    reason: str  # why not reproduced; "" otherwise


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


def _word(claim: ClaimRow, comparison: Comparison) -> Word:
    if comparison.verdict not in ("better", "worse"):
        return "no change found"
    claimed = _sign(claim.after - claim.before)
    if claim.better is not None and (claim.better == "higher") != comparison.higher_is_better:
        claimed = -claimed  # IOPS up is time per op down
    measured = _sign(comparison.delta)
    return "agrees" if claimed == measured and claimed != 0 else "opposite"


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
        out.append(Agreement(claim.label, claim.unit, mail, claim.stated, claim.workload, claim.metric,
                             row.metric.label, comparison.delta, comparison.verdict, comparison.exact is not None,
                             _word(claim, comparison), ""))
    return out
