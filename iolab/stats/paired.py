"""Paired comparison by round: the Wilcoxon signed-rank test of per-round ratios.

In an interleaved run every round runs every variant once, so whatever
changes the machine from round to round (host writeback, other jobs, the
page cache) moves both variants of a round together. The paired analysis
keeps that out of the comparison: per round i, ``d_i = log(cand_i /
base_i)``.

Test: two-sided Wilcoxon signed-rank test of the d_i against 0, **exact**
at every n: the |d_i| are ranked (midranks for ties; zero differences keep
their place in the ranking but carry no sign, Pratt's rule), and the null
distribution of the sum of the positive ranks is counted over all 2^m sign
flips of the m nonzero differences (a sign-flip permutation test of the
ranks, by dynamic programming over doubled ranks: exact and fast at any n,
no Monte Carlo needed). p = P(|T - E T| >= |t - E T|).

Delta and CI: the Hodges-Lehmann estimate of the typical log ratio (the
median of the Walsh averages ``(d_i + d_j) / 2``, i <= j) and its
distribution-free CI from the same signed-rank distribution (untied):
``[W_(c+1), W_(M-c)]`` with c the largest count for which ``P(T <= c) <=
(1 - confidence) / 2``; ``delta = exp(HL) - 1``. Needs 6 pairs at 95%.

Refusals (verdict "insufficient", with the reason): fewer than
``min_pairs`` rounds with both values, every ratio 1 (no sign to test).
Values must be positive (a ratio); :func:`pairable` says so first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import scipy  # scipy.stats (2 s to import) loads at its first use, not with every command

from iolab.stats import checks
from iolab.stats.checks import Values
from iolab.stats.kinds import PAIRED, MwuMethod, Refused, Verdict, View
from iolab.stats.summary import summarize
from iolab.stats.verdict import Comparison

MIN_PAIRS = 6  # the fewest rounds at which 2 / 2**m < 0.05


def flip_counts(twice_ranks: Sequence[int]) -> np.ndarray:
    """How many of the 2^m sign patterns give each doubled positive-rank sum."""
    total = int(sum(twice_ranks))
    counts = np.zeros(total + 1)
    counts[0] = 1.0
    for w in twice_ranks:
        shifted = np.zeros_like(counts)
        shifted[w:] = counts[: total + 1 - w]
        counts = counts + shifted
    return counts


def signed_rank(d: Values) -> tuple[float, int]:
    """Two-sided exact signed-rank p of ``d`` against 0 (Pratt), and the
    number of nonzero differences. None nonzero: ``(nan, 0)``."""
    x = checks.values(d, "d")
    nonzero = x != 0
    m = int(nonzero.sum())
    if m == 0:
        return math.nan, 0
    twice = np.rint(2 * scipy.stats.rankdata(np.abs(x))[nonzero]).astype(int)
    observed = int(twice[x[nonzero] > 0].sum())
    counts = flip_counts(twice.tolist())
    mean = twice.sum() / 2.0
    far = np.abs(np.arange(counts.size) - mean) >= abs(observed - mean) - 1e-9
    return min(1.0, float(counts[far].sum() / counts.sum())), m


@lru_cache(maxsize=256)
def untied_cdf(m: int) -> np.ndarray:
    """P(T <= t) for t = 0..m(m+1)/2, untied signed-rank null with m pairs."""
    counts = flip_counts([2 * k for k in range(1, m + 1)])[::2]
    cdf = np.cumsum(counts) / counts.sum()
    cdf.flags.writeable = False
    return cdf


@lru_cache(maxsize=256)
def untied_p_by_t(m: int) -> np.ndarray:
    """Two-sided exact p for each T = 0..m(m+1)/2, untied (for simulations)."""
    cdf = untied_cdf(m)
    t = np.arange(cdf.size)
    below = cdf[np.minimum(t, t[::-1])]  # P(T <= min(t, M - t)); symmetric null
    p = np.minimum(1.0, 2.0 * below)
    p[t == t[::-1]] = 1.0
    p.flags.writeable = False
    return p


def hodges_lehmann(d: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """HL estimate of the center of d and its CI (nan bounds with too few pairs)."""
    i, j = np.triu_indices(d.size)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    estimate = float(np.median(walsh))
    cdf = untied_cdf(int(d.size))
    inside = np.flatnonzero(cdf <= (1.0 - confidence) / 2.0)
    if inside.size == 0:
        return estimate, math.nan, math.nan
    c = int(inside[-1])
    return estimate, float(walsh[c]), float(walsh[walsh.size - 1 - c])


def pairable(base: np.ndarray, cand: np.ndarray) -> str:
    """Why these paired values cannot be compared as ratios ("" when they can)."""
    if base.size != cand.size:
        return f"base and cand must be paired by round, got {base.size} and {cand.size} values"
    if np.any(base <= 0) or np.any(cand <= 0):
        return "values of 0 or below: no per-round ratio"
    return ""


def compare_paired(base: Values, cand: Values, *, higher_is_better: bool,
                   view: View = "median", dropped: int = 0, min_pairs: int = MIN_PAIRS,
                   confidence: float = 0.95) -> Comparison:
    """Candidate against baseline, ``base[i]`` and ``cand[i]`` from round i.

    ``dropped``: rounds left out before (a failed cell, a missing value);
    it is recorded and said in a warning. Values must be positive.
    """
    b = checks.values(base, "base")
    c = checks.values(cand, "cand")
    checks.view(view)
    confidence = checks.fraction("confidence", confidence)
    checks.positive_int("min_pairs", min_pairs)
    why = pairable(b, c)
    if why:
        raise checks.Refusal(why)
    m = int(b.size)
    warnings = [f"{dropped} round{'s' if dropped != 1 else ''} without both values left out of the pairing"] \
        if dropped else []
    d = np.log(c) - np.log(b)
    kind: Refused = ""  # why no test runs
    if m < min_pairs:
        kind = "few"
        warnings.append(f"need >= {min_pairs} rounds with both variants for the signed-rank test, have {m}")
    elif np.all(d == 0):
        kind = "equal"
        warnings.append(f"both variants gave the same value in all {m} rounds: no test (quantized metric?)")
    verdict: Verdict = "insufficient"
    p = low = high = prob = min_p = math.nan
    method: MwuMethod = ""
    if kind:
        delta = float(np.expm1(np.median(d))) if m else math.nan
    else:
        p, nonzero = signed_rank(d)
        estimate, low, high = hodges_lehmann(d, confidence)
        if math.isnan(low):
            warnings.append(f"too few rounds for a {checks.conf(confidence)} CI of the paired change")
        prob = (float(np.sum(d > 0)) + 0.5 * float(np.sum(d == 0))) / m
        verdict, method, min_p = "same", "exact", min(1.0, 2.0 / 2**nonzero)
        delta, low, high = float(np.expm1(estimate)), float(np.expm1(low)), float(np.expm1(high))
    return Comparison(n_base=m, n_cand=m, base=summarize(b, view, confidence), cand=summarize(c, view, confidence),
                      delta=delta, delta_low=low, delta_high=high, p=p, p_adjusted=math.nan, verdict=verdict,
                      warnings=tuple(warnings), higher_is_better=bool(higher_is_better), view=view,
                      mwu_method=method, prob_cand_higher=prob, alpha=math.nan, correction="", test=PAIRED, pairs=m,
                      dropped=int(dropped), min_p=min_p, refusal=kind)
