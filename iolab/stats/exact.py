"""Exact comparisons: values that do not vary need no test.

When every value of a variant is the same over its rounds -- identical, or
within a stated relative ``tolerance`` (``(max - min) / |median|``) -- the
values are deterministic at that resolution: an instruction count under
QEMU's icount, a quantized percentile that never left its bin. A test would
have nothing to say (the signed-rank test refuses identical ratios; the
Mann-Whitney U of two constant samples is a foregone conclusion), and its
p-value would only measure how many rounds ran. The comparison is then
**exact**: the delta is the ratio of the two centers as measured, with no
confidence interval and no p-value, and the verdict follows from the values
themselves. The tolerance only says which values count as deterministic;
it never decides whether they changed. Their own measured spread does:

- "identical": each variant's values are identical (at least
  ``MIN_ROUNDS`` values each). The same value on both sides is "same",
  with a delta of exactly 0; different values are a change, "better" or
  "worse" by its direction.
- "tolerance": each variant's values vary, within ``tolerance``. A change
  when the two variants' values are **separated**: every candidate value
  on one side of every baseline value, with a gap between the nearest two
  wider than ``SEPARATION`` times the two variants' ranges added together
  (:func:`separated`), and at least ``SEPARATED_ROUNDS`` values on each
  side whose values vary. "same" when the two ranges overlap: no change
  beyond the values' own spread (the comparison's ``resolution``). A gap
  in between is not exact: the tests judge, and more rounds can tell.
- "paired": in every round (at least ``MIN_ROUNDS``) the candidate gave
  exactly the baseline's value, though the values moved from round to
  round: "same", delta exactly 0.

Why these numbers (bench/STATISTICS.md, "Exact comparisons"): were the
values of both variants independent draws of one continuous jitter (an
A/A), a gap wider than the ranges' sum shows with 2 values a side in 6%
of comparisons and with 3 in 0.3%; three times the sum, in 1.3% and 0.01%
(normal jitter; Student t with 3 degrees of freedom: 1.0% and 0.007%). So
values that vary decide a change from 3 rounds on, at 3 times their
spread: a 0.1% change shows in 3 rounds where the rounds spread by less
than 0.016% each. With 2 rounds that vary, a gap decides only beyond
``SEPARATION_TWO`` (100) times their ranges (an A/A: 0.0015%); a smaller
one answers "not exact", and the runner adds the third round
(iolab.run.exact_rounds).

Anything else is not exact, and :func:`compare_exact` returns None: the
usual tests apply (iolab.stats.paired, iolab.stats.unpaired).
"""

from __future__ import annotations

import math

import numpy as np

from iolab.stats import checks
from iolab.stats.checks import Values
from iolab.stats.summary import summarize
from iolab.stats.kinds import Exactness, Verdict, View
from iolab.stats.verdict import Comparison

MIN_ROUNDS = 2  # values per variant that can show determinism
SEPARATION = 3.0  # a change: the gap between the variants wider than this many times their ranges together
SEPARATED_ROUNDS = 3  # values per variant, when they vary, before a gap of SEPARATION can decide a change
# With 2 values a side that vary, a gap of this many times their ranges together: an A/A shows it in
# 0.0015% (normal jitter) and 0.0014% (Student t, 3 degrees of freedom) of comparisons, fewer than
# 3 times at 3 rounds (0.015%, 0.010%): so two rounds decide a change far beyond their spread, and
# a third runs only where the gap is smaller (bench/exact_rule.py, bench/data/exact-rule-*.txt)
SEPARATION_TWO = 100.0


def spread(values: np.ndarray) -> float:
    """(max - min) / |median|: the relative width of the values (0 when identical)."""
    width = float(values.max() - values.min())
    if width == 0:
        return 0.0
    center = abs(float(np.median(values)))
    return width / center if center else math.inf


def gap(base: np.ndarray, cand: np.ndarray) -> float:
    """The distance between the nearest values of the two variants when
    every value of one lies beyond every value of the other; <= 0 when
    their ranges overlap or touch."""
    return max(float(cand.min() - base.max()), float(base.min() - cand.max()))


def separated(base: np.ndarray, cand: np.ndarray, factor: float = SEPARATION) -> bool:
    """The variants' values apart by more than ``factor`` times their two
    ranges together (any gap, when each variant's values are identical)."""
    ranges = float(base.max() - base.min()) + float(cand.max() - cand.min())
    return gap(base, cand) > factor * ranges


def separation(rounds: int) -> float:
    """The factor a gap must exceed, over the ranges of values that vary, when
    the fewer-valued varying variant has ``rounds`` values (at least
    MIN_ROUNDS: kind_of gives no exact case with fewer)."""
    return SEPARATION if rounds >= SEPARATED_ROUNDS else SEPARATION_TWO


def kind_of(base: np.ndarray, cand: np.ndarray, tolerance: float, paired: bool) -> Exactness | None:
    """Which exact case these values are, or None when they vary."""
    if base.size < MIN_ROUNDS or cand.size < MIN_ROUNDS:
        return None
    widths = spread(base), spread(cand)
    if widths == (0.0, 0.0):
        return "identical"
    if max(widths) <= tolerance:
        return "tolerance"
    if paired and base.size == cand.size and np.array_equal(base, cand):
        return "paired"
    return None


def resolution(base: np.ndarray, cand: np.ndarray) -> float:
    """The smallest relative change these values can show: SEPARATION times
    the two variants' ranges together, relative to the baseline's median
    (0 when both are identical). Two rounds that vary show a change only
    beyond SEPARATION_TWO times, but one below it is not called "same": it
    takes the third round ([run] exact_stop), where SEPARATION holds."""
    ranges = float(base.max() - base.min()) + float(cand.max() - cand.min())
    center = abs(float(np.median(base)))
    if ranges == 0:
        return 0.0
    return SEPARATION * ranges / center if center else math.inf


def compare_exact(base: Values, cand: Values, *, higher_is_better: bool,
                  view: View = "median", tolerance: float = 0.0, paired: bool = False) -> Comparison | None:
    """The exact comparison of the candidate with the baseline, or None when
    the values vary beyond ``tolerance``, or are apart by less than their
    spread can tell. ``paired``: ``base[i]`` and ``cand[i]`` come from round
    i (the "paired" case needs it). The verdict is final:
    :func:`iolab.stats.verdict.decide` leaves it as it is."""
    b = checks.values(base, "base")
    c = checks.values(cand, "cand")
    checks.view(view)
    if not (0.0 <= tolerance < 1.0):
        raise checks.Refusal(f"tolerance must be in [0, 1), got {tolerance!r}")
    kind = kind_of(b, c, tolerance, paired)
    if kind is None:
        return None
    sb, sc = summarize(b, view), summarize(c, view)
    if kind == "paired":
        delta = 0.0
    else:
        delta = sc.center / sb.center - 1.0 if sb.center else (0.0 if sc.center == 0 else math.nan)
    verdict: Verdict = "same"
    if kind != "paired" and gap(b, c) > 0:
        varying = [n for n, v in ((b.size, b), (c.size, c)) if spread(v) > 0]
        if not separated(b, c, separation(min(varying, default=SEPARATED_ROUNDS))):
            return None  # apart, but not by more than their spread shows (or too few rounds): the tests judge
        verdict = "better" if (c.min() > b.max()) == bool(higher_is_better) else "worse"
    pairs = int(b.size) if paired and b.size == c.size else 0
    return Comparison(
        n_base=int(b.size), n_cand=int(c.size), base=sb, cand=sc, delta=delta, delta_low=math.nan,
        delta_high=math.nan, p=math.nan, p_adjusted=math.nan, verdict=verdict, warnings=(),
        higher_is_better=bool(higher_is_better), view=view, mwu_method="", prob_cand_higher=math.nan,
        alpha=math.nan, correction="", pairs=pairs, exact=kind, tolerance=float(tolerance),
        resolution=resolution(b, c) if kind == "tolerance" else 0.0,
    )
