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
themselves:

- "identical": each variant's values are identical (at least
  ``MIN_ROUNDS`` values each). The same value on both sides is "same",
  with a delta of exactly 0; different values are a change, "better" or
  "worse" by its direction.
- "tolerance": each variant's values lie within ``tolerance``. A delta
  within +-tolerance is "same" (the resolution of these values); beyond it,
  with every candidate value on one side of every baseline value, a change;
  beyond it with overlapping values, not exact (the tests judge).
- "paired": in every round (at least ``MIN_ROUNDS``) the candidate gave
  exactly the baseline's value, though the values moved from round to
  round: "same", delta exactly 0.

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


def spread(values: np.ndarray) -> float:
    """(max - min) / |median|: the relative width of the values (0 when identical)."""
    width = float(values.max() - values.min())
    if width == 0:
        return 0.0
    center = abs(float(np.median(values)))
    return width / center if center else math.inf


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


def compare_exact(base: Values, cand: Values, *, higher_is_better: bool,
                  view: View = "median", tolerance: float = 0.0, paired: bool = False) -> Comparison | None:
    """The exact comparison of the candidate with the baseline, or None when
    the values vary beyond ``tolerance``. ``paired``: ``base[i]`` and
    ``cand[i]`` come from round i (the "paired" case needs it). The verdict
    is final: :func:`iolab.stats.verdict.decide` leaves it as it is."""
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
    disjoint = c.min() > b.max() or c.max() < b.min()
    verdict: Verdict = "same"
    if kind != "paired" and disjoint and not abs(delta) <= tolerance:
        verdict = "better" if (c.min() > b.max()) == bool(higher_is_better) else "worse"
    elif kind == "tolerance" and not abs(delta) <= tolerance:
        return None  # beyond the tolerance, yet the ranges overlap: for the tests to judge
    pairs = int(b.size) if paired and b.size == c.size else 0
    return Comparison(
        n_base=int(b.size), n_cand=int(c.size), base=sb, cand=sc, delta=delta, delta_low=math.nan,
        delta_high=math.nan, p=math.nan, p_adjusted=math.nan, verdict=verdict, warnings=(),
        higher_is_better=bool(higher_is_better), view=view, mwu_method="", prob_cand_higher=math.nan,
        alpha=math.nan, correction="", pairs=pairs, exact=kind, tolerance=float(tolerance),
    )
