"""Noise diagnostics and the A/A false-positive rate.

trend: Kendall's tau of the values against round order (drift); kendall:
tau of two series paired by round (both variants moving together);
outliers: Tukey's fences; aa_false_positive_rate: how often A against A'
on subsets of the rounds of an A/A run looks "significant".
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
import scipy  # scipy.stats (2 s to import) loads at its first use, not with every command

from iolab.stats import checks, paired, unpaired
from iolab.stats.checks import Values
from iolab.stats.kinds import PAIRED, TEST_KINDS, UNPAIRED, Test


class Trend(NamedTuple):
    """Kendall's tau and its two-sided p."""

    tau: float
    p: float


def trend(values_in_round_order: Values) -> Trend:
    """Drift: Mann-Kendall test of the values against round order
    (``scipy.stats.kendalltau``: exact without ties for n <= 33, else the
    tie-corrected normal approximation). Constant: (0, 1); fewer than 2: nan."""
    x = checks.values(values_in_round_order)
    if x.size < 2:
        return Trend(math.nan, math.nan)
    if np.all(x == x[0]):
        return Trend(0.0, 1.0)
    res = scipy.stats.kendalltau(np.arange(x.size), x)
    return Trend(float(res.statistic), float(res.pvalue))


def kendall(x: Values, y: Values) -> Trend:
    """Kendall's tau-b of two paired series; fewer than 2 pairs or a constant series: nan."""
    a, b = checks.values(x, "x"), checks.values(y, "y")
    if a.size != b.size:
        raise checks.Refusal(f"x and y must be paired, got {a.size} and {b.size} values")
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Trend(math.nan, math.nan)
    res = scipy.stats.kendalltau(a, b)
    return Trend(float(res.statistic), float(res.pvalue))


def outliers(values: Values, k: float = 1.5) -> list[int]:
    """Indices outside Tukey's fences ``[Q1 - k IQR, Q3 + k IQR]`` (linear
    quartiles; a value on a fence is kept). Fewer than 4 values: []."""
    x = checks.values(values)
    if k < 0:
        raise checks.Refusal(f"k must be >= 0, got {k!r}")
    if x.size < 4:
        return []
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return [int(i) for i in np.flatnonzero((x < q1 - k * iqr) | (x > q3 + k * iqr))]


class AARate(NamedTuple):
    """Observed A/A false-positive rate over subsets of rounds."""

    observed: float  # share of subsets with p < alpha
    expected: float  # that share with no difference and untied values
    subsets: int  # how many subsets were tested
    k: int  # rounds per subset
    warnings: tuple[str, ...]


def smallest_useful_k(alpha: float, test: Test = UNPAIRED) -> int:
    """Fewest rounds (per side) at which the test can give p < alpha at all."""
    k = 1
    floor = (lambda k: unpaired.min_possible_p(k, k)) if test == UNPAIRED else (lambda k: 2.0 / 2**k)
    while floor(k) >= alpha:
        k += 1
    return k


def _null_share(k: int, alpha: float, test: Test, seed: int) -> float:
    """P(p < alpha) with no difference at k (per side / pairs), untied data: exact."""
    if test == PAIRED:
        cdf = paired.untied_cdf(k)
        probs = np.diff(np.concatenate([[0.0], cdf]))
        return float(np.sum(probs[paired.untied_p_by_t(k) < alpha]))
    rng = np.random.default_rng(seed)
    null = rng.random((20000, 2, k))
    u = np.sum(null[:, 0, :, None] > null[:, 1, None, :], axis=(1, 2))
    return float(np.mean(unpaired.untied_p_by_u(k, k)[u] < alpha))


def _p(a: np.ndarray, b: np.ndarray, test: Test) -> float:
    if test == PAIRED:
        p, _ = paired.signed_rank(np.log(b) - np.log(a))
        return p
    return unpaired.mwu(a, b)[0]


def aa_false_positive_rate(a: Values, b: Values, alpha: float = 0.05, *, k: int | None = None,
                           subsets: int = 2000, seed: int = 0, test: Test = UNPAIRED) -> AARate:
    """How often A against A' on a subset of k rounds gives p < alpha.

    ``a[i]``, ``b[i]``: the two copies' values in round i. ``test``:
    "mann-whitney" (unpaired) or "signed-rank" (paired by round; positive
    values). All C(n, k) subsets when there are at most ``subsets``, else
    that many random ones (seeded). ``k`` defaults to ``max(n // 2, kmin)``,
    kmin the fewest rounds at which p < alpha is possible (4 unpaired, 6
    paired at 0.05). ``expected`` is the share with no difference, below
    alpha because the exact tests are discrete. Subsets overlap: with few
    rounds a coarse figure. An undefined p (all equal) counts as no alarm.
    """
    x, y = checks.values(a, "a"), checks.values(b, "b")
    alpha = checks.fraction("alpha", alpha)
    if x.size != y.size:
        raise checks.Refusal(f"a and b must be paired by round, got {x.size} and {y.size} values")
    if test not in TEST_KINDS:
        raise checks.Refusal(f"test must be mann-whitney or signed-rank, got {test!r}")
    if test == PAIRED and (np.any(x <= 0) or np.any(y <= 0)):
        raise checks.Refusal("the paired A/A rate needs positive values (per-round ratios)")
    n, kmin = int(x.size), smallest_useful_k(alpha, test)
    k = max(n // 2, kmin) if k is None else checks.positive_int("k", k)
    if k > n:
        return AARate(math.nan, math.nan, 0, k, (f"need >= {k} rounds for subsets of {k}, have {n}",))
    if k < kmin:
        raise checks.Refusal(f"with {k} rounds no p can be below {alpha}: k must be >= {kmin}")
    rng = np.random.default_rng(seed)
    if math.comb(n, k) <= subsets:
        chosen = np.array(list(itertools.combinations(range(n), k)))
    else:
        chosen = np.array([rng.choice(n, k, replace=False) for _ in range(subsets)])
    hits = sum(_p(x[rows], y[rows], test) < alpha for rows in chosen)
    return AARate(hits / len(chosen), _null_share(k, alpha, test, seed), len(chosen), k, ())
