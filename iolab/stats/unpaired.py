"""Unpaired comparison: Mann-Whitney U as benchstat computes it, and the delta.

Test: two-sided Mann-Whitney U of the candidate against the baseline, with
benchstat's rule (go-moremath ``MannWhitneyUTest``): the **exact**
permutation distribution of U given the ties in the pooled sample when
both sides have at most 50 values (at most 25 when there are ties), the
normal approximation with tie correction and continuity correction beyond.
The exact distribution is counted over the tie groups (each group of t
equal values contributes r values to the baseline in C(t, r) ways, adding
r times its doubled midrank to the doubled rank sum), so with ties p is
the full permutation p, which is what benchstat prints; p is
``2 P(U <= min(U1, U2))`` (1 when U1 = U2). Every value equal on both
sides: no test (a refusal with a warning, never p = 1).

Delta: ``cand.center / base.center - 1``; its CI a percentile bootstrap
resampling both sides independently (``resamples`` >= 2000, seeded).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
import scipy  # scipy.stats (2 s to import) loads at its first use, not with every command

from iolab.stats import checks
from iolab.stats.checks import Values
from iolab.stats.kinds import UNPAIRED, MwuMethod, Refused, Verdict, View
from iolab.stats.summary import summarize
from iolab.stats.verdict import Comparison

EXACT_LIMIT = 50  # per side, untied (benchstat's MannWhitneyExactLimit)
TIES_EXACT_LIMIT = 25  # per side, with ties (MannWhitneyTiesExactLimit)
DEFAULT_RESAMPLES = 5000
MIN_RESAMPLES = 2000


def rank_sum_counts(n1: int, groups: Sequence[int], limit: int) -> np.ndarray:
    """How many ways n1 of the pooled values give each doubled rank sum
    ``0..limit`` (floats; the total over all sums is C(N, n1))."""
    counts = np.zeros((n1 + 1, limit + 1))
    counts[0, 0] = 1.0
    start = 0
    for t in groups:
        twice_midrank = 2 * start + t + 1
        new = np.zeros_like(counts)
        for r in range(min(t, n1) + 1):
            shift = r * twice_midrank
            if shift > limit:
                break
            new[r:, shift:] += math.comb(t, r) * counts[: n1 + 1 - r, : limit + 1 - shift]
        counts = new
        start += t
    return counts[n1]


def _u_stats(b: np.ndarray, c: np.ndarray) -> tuple[float, np.ndarray]:
    """U of the baseline (benchstat's U1: its first sample is the old one) and the tie groups."""
    pooled = np.concatenate([b, c])
    ranks = scipy.stats.rankdata(pooled)
    u1 = float(ranks[: b.size].sum()) - b.size * (b.size + 1) / 2.0
    _, groups = np.unique(pooled, return_counts=True)
    return u1, groups


def exact_region(n1: int, n2: int, ties: bool) -> bool:
    limit = TIES_EXACT_LIMIT if ties else EXACT_LIMIT
    return n1 <= limit and n2 <= limit


def mwu(base: Values, cand: Values) -> tuple[float, MwuMethod | Literal["all-equal"], float]:
    """Two-sided Mann-Whitney U of ``cand`` against ``base``: ``(p, method,
    prob_cand_higher)``, method "exact" or "asymptotic". Every value equal
    (no order to test) is refused: ``(nan, "all-equal", 0.5)``."""
    b = checks.values(base, "base")
    c = checks.values(cand, "cand")
    if b.size == 0 or c.size == 0:
        raise checks.Refusal("Mann-Whitney U needs at least one value per side")
    n1, n2 = int(b.size), int(c.size)
    u1, groups = _u_stats(b, c)
    prob = 1.0 - u1 / (n1 * n2)
    if groups.size == 1:
        return math.nan, "all-equal", 0.5
    small = min(u1, n1 * n2 - u1)
    if exact_region(n1, n2, bool(np.any(groups > 1))):
        if u1 == n1 * n2 - u1:
            return 1.0, "exact", prob
        offset = n1 * (n1 + 1)
        limit = int(round(2 * small)) + offset
        counts = rank_sum_counts(n1, [int(t) for t in groups], limit)
        p = 2.0 * float(counts[offset:].sum()) / math.comb(n1 + n2, n1)
        return min(1.0, p), "exact", prob
    n = n1 + n2
    ties = float(np.sum(groups.astype(float) ** 3 - groups))
    sd = math.sqrt(n1 * n2 * ((n + 1) - ties / (n * (n - 1))) / 12.0)
    num = u1 - n1 * n2 / 2.0
    num -= math.copysign(0.5, num) if num != 0 else 0.0
    z = num / sd
    return float(2.0 * min(scipy.stats.norm.cdf(z), scipy.stats.norm.sf(z))), "asymptotic", prob


def min_possible_p(n_base: int, n_cand: int) -> float:
    """Smallest two-sided exact p at these sizes: ``2 / C(n1 + n2, n1)``
    (complete separation, no ties), capped at 1; 0.029 for 4 and 4."""
    return min(1.0, 2.0 / math.comb(n_base + n_cand, n_base))


@lru_cache(maxsize=128)
def untied_p_by_u(n1: int, n2: int) -> np.ndarray:
    """Two-sided p for every U = 0..n1*n2 with no ties (for simulations):
    exact in the exact region, else the normal approximation."""
    us = np.arange(n1 * n2 + 1, dtype=float)
    small = np.minimum(us, n1 * n2 - us)
    if exact_region(n1, n2, False):
        counts = rank_sum_counts(n1, [1] * (n1 + n2), n1 * n2 * 2 + n1 * (n1 + 1))[n1 * (n1 + 1)::2]
        cdf = np.cumsum(counts) / math.comb(n1 + n2, n1)
        p = np.minimum(1.0, 2.0 * cdf[small.astype(int)])
    else:
        sd = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)
        z = (n1 * n2 / 2.0 - small - 0.5) / sd
        p = np.minimum(1.0, 2.0 * scipy.stats.norm.sf(z))
    p[us == n1 * n2 - us] = 1.0
    p.flags.writeable = False
    return p


def _center_along(view: View) -> Callable[..., np.ndarray]:
    def stat(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        b, c = samples
        if view == "median":
            cb, cc = np.median(b, axis=axis), np.median(c, axis=axis)
        elif view == "mean":
            cb, cc = np.mean(b, axis=axis), np.mean(c, axis=axis)
        else:
            cb = b.shape[axis] / np.sum(1.0 / b, axis=axis)
            cc = c.shape[axis] / np.sum(1.0 / c, axis=axis)
        with np.errstate(divide="ignore", invalid="ignore"):
            return cc / cb - 1.0

    return stat


def bootstrap_delta(b: np.ndarray, c: np.ndarray, view: View, confidence: float, resamples: int,
                    seed: int) -> tuple[float, float]:
    """Percentile-bootstrap CI of ``center(c) / center(b) - 1`` (independent resampling)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        res = scipy.stats.bootstrap((b, c), _center_along(view), n_resamples=resamples, method="percentile",
                            confidence_level=confidence, vectorized=True, paired=False,
                            rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def compare(base: Values, cand: Values, *, higher_is_better: bool, view: View = "median",
            min_n: int = 4, seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
            confidence: float = 0.95) -> Comparison:
    """Candidate samples against baseline samples for one metric, unpaired.

    Fewer than ``min_n`` values on a side, or every value equal, is
    "insufficient" with a warning saying why: no test and no delta CI
    (``delta`` itself is given when both centers exist). Otherwise the
    verdict is the provisional "same" until :func:`decide`.
    """
    b = checks.values(base, "base")
    c = checks.values(cand, "cand")
    checks.view(view)
    confidence = checks.fraction("confidence", confidence)
    checks.positive_int("min_n", min_n)
    checks.positive_int("resamples", resamples, MIN_RESAMPLES)
    sb, sc = summarize(b, view, confidence), summarize(c, view, confidence)
    warnings: list[str] = []
    if sb.center == 0:
        delta = math.nan
        warnings.append("baseline center is 0: relative change undefined")
    else:
        delta = sc.center / sb.center - 1.0
    kind: Refused = ""  # why no test runs
    if b.size < min_n or c.size < min_n:
        kind = "few"
        warnings.append(f"need >= {min_n} samples per side, have {b.size} and {c.size}")
    elif np.all(b == b[0]) and np.all(c == b[0]):
        kind = "equal"
        warnings.append(f"all {b.size + c.size} values are equal ({b[0]:g}): no test (quantized metric?)")
    verdict: Verdict = "insufficient"
    p = lo = hi = prob = min_p = math.nan
    method: MwuMethod = ""
    if not kind:
        p, tested, prob = mwu(b, c)
        assert tested != "all-equal"  # refused above: every value equal
        verdict, method, min_p = "same", tested, min_possible_p(b.size, c.size)
        lo, hi = bootstrap_delta(b, c, view, confidence, resamples, seed)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo = hi = math.nan
            warnings.append("no bootstrap CI for the change: baseline center is 0 in some resamples")
    return Comparison(n_base=int(b.size), n_cand=int(c.size), base=sb, cand=sc, delta=delta, delta_low=lo,
                      delta_high=hi, p=p, p_adjusted=math.nan, verdict=verdict, warnings=tuple(warnings),
                      higher_is_better=bool(higher_is_better), view=view, mwu_method=method, prob_cand_higher=prob,
                      alpha=math.nan, correction="", test=UNPAIRED, min_p=min_p, refusal=kind)
