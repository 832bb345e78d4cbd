"""Central value of one variant's samples, its confidence interval and spread.

Central value (``view``): ``"median"`` (default), ``"mean"``, or
``"hmean"`` (harmonic mean, for rates such as MiB/s; positive values only).

CI of the median: distribution-free, between two order statistics
``X_(l)`` and ``X_(r)`` chosen as benchstat chooses them (go-moremath
``QuantileCI``): start from the binomial(n, 1/2) mode and widen one order
at a time on the side with the larger probability (the left on a tie)
until the coverage ``P(l <= B < r)`` reaches the confidence. Counted with
exact integers here at every n (benchstat switches to a normal
approximation above 30), so the coverage is exact and at least the
confidence for any continuous distribution, and the interval is often one
order narrower than the symmetric ``[X_(k), X_(n+1-k)]`` (n = 8 gives
``X_(1)..X_(7)``, 96.1%). At 95% it needs n >= 6; below that the bounds
are nan with a warning.

CI of the mean: Student t. Of the harmonic mean: the t-interval of the
mean reciprocal, inverted (upper bound inf, with a warning, when that
interval reaches 0).

Spread (``rel_spread``): median: half-width of its CI over the median;
mean, hmean: stddev over the arithmetic mean; nan when undefined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy  # scipy.stats (2 s to import) loads at its first use, not with every command

from iolab.stats import checks
from iolab.stats.checks import Values
from iolab.stats.kinds import View


@dataclass(frozen=True)
class Summary:
    """Central value of one variant's samples, with its CI and caveats.

    ``low``/``high`` bound the center at the requested confidence (nan when
    there are too few samples for one; ``high`` may be ``inf`` for "hmean").
    """

    n: int
    view: View
    center: float
    low: float
    high: float
    stddev: float
    rel_spread: float
    minimum: float
    maximum: float
    warnings: tuple[str, ...]


@lru_cache(maxsize=512)
def median_ci_orders(n: int, confidence: float = 0.95) -> tuple[int, int, float]:
    """1-based orders ``(l, r)`` of the median CI ``[X_(l), X_(r)]`` and its
    exact coverage; ``l = 0`` or ``r = n + 1`` means the bound does not exist."""
    checks.positive_int("n", n)
    need = confidence * 2**n
    pmf = lambda i: math.comb(n, i) if 0 <= i <= n else 0  # noqa: E731 (counts of 2**n)
    x = math.ceil((n + 1) * 0.5) - 1
    covered, lo, hi = pmf(x), x, x + 1  # P(lo <= B < hi) * 2**n
    left, right = pmf(lo - 1), pmf(hi)
    while covered < need and (left > 0 or right > 0):
        if left >= right:
            covered, lo = covered + left, lo - 1
            left = pmf(lo - 1)
        else:
            covered, hi = covered + right, hi + 1
            right = pmf(hi)
    return max(lo, 0), min(hi, n + 1), covered / 2**n


def median_ci_min_n(confidence: float = 0.95) -> int:
    """Smallest n for which the median CI has both bounds (6 at 95%)."""
    confidence = checks.fraction("confidence", confidence)
    n = 1
    while True:
        lo, hi, _ = median_ci_orders(n, confidence)
        if lo >= 1 and hi <= n:
            return n
        n += 1


def _median_ci(x: np.ndarray, confidence: float) -> tuple[float, float]:
    lo, hi, _ = median_ci_orders(int(x.size), confidence)
    if lo < 1 or hi > x.size:
        return math.nan, math.nan
    s = np.sort(x)
    return float(s[lo - 1]), float(s[hi - 1])


def _t_interval(x: np.ndarray, confidence: float) -> tuple[float, float]:
    m = float(np.mean(x))
    sem = float(scipy.stats.sem(x))
    if sem == 0.0:
        return m, m
    lo, hi = scipy.stats.t.interval(confidence, x.size - 1, loc=m, scale=sem)
    return float(lo), float(hi)


def _hmean_ci(x: np.ndarray, confidence: float, warnings: list[str]) -> tuple[float, float]:
    lo_r, hi_r = _t_interval(1.0 / x, confidence)
    if lo_r > 0:
        return 1.0 / hi_r, 1.0 / lo_r
    warnings.append("harmonic-mean CI has no upper bound: the CI of the mean reciprocal reaches 0 "
                    "(values too noisy)")
    return 1.0 / hi_r, math.inf


def summarize(values: Values, view: View = "median", confidence: float = 0.95) -> Summary:
    """Center, CI of the center, spread and range of ``values``.

    An empty input gives an all-nan Summary with the warning "no samples";
    nan or inf values, or non-positive values with "hmean", are refused.
    """
    x = checks.values(values)
    checks.view(view)
    confidence = checks.fraction("confidence", confidence)
    n = int(x.size)
    nan = math.nan
    if n == 0:
        return Summary(0, view, nan, nan, nan, nan, nan, nan, nan, ("no samples",))
    if view == "hmean" and np.any(x <= 0):
        raise checks.Refusal(f"harmonic mean needs positive values (rates), got minimum {x.min()!r}")
    warnings: list[str] = []
    stddev = float(np.std(x, ddof=1)) if n >= 2 else nan
    low = high = nan
    if view == "median":
        center = float(np.median(x))
        low, high = _median_ci(x, confidence)
        if math.isnan(low):
            warnings.append(f"need >= {median_ci_min_n(confidence)} samples for a {checks.conf(confidence)} "
                            f"CI of the median, have {n}")
        rel_spread = (high - low) / 2.0 / abs(center) if center != 0 else nan
    else:
        amean = float(np.mean(x))
        center = amean if view == "mean" else float(scipy.stats.hmean(x))
        if n >= 2:
            low, high = _t_interval(x, confidence) if view == "mean" else _hmean_ci(x, confidence, warnings)
        else:
            warnings.append(f"need >= 2 samples for a {checks.conf(confidence)} CI of the {view}, have 1")
        rel_spread = stddev / abs(amean) if amean != 0 else nan
    return Summary(n, view, center, low, high, stddev, rel_spread, float(x.min()), float(x.max()),
                   tuple(warnings))
