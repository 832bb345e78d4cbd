"""Statistics core: central values, spread, confidence intervals, tests, verdicts.

Pure functions on plain sequences of numbers (one number per iteration of a
cell). Nothing here does I/O, prints, or catches errors wholesale: invalid
input raises ValueError, and everything a reader must know about the quality
of a figure travels with it in a ``warnings`` tuple (STYLE.md point 2).
Every random step is seeded, so the same samples always give the same
figures.

Methods
-------
Central value (``view``)
    ``"median"`` (default), ``"mean"``, or ``"hmean"`` (harmonic mean, for
    rates such as MiB/s or IOPS; needs positive values).

Confidence interval of the center (``Summary.low``/``high``)
    median: distribution-free interval between two order statistics,
        ``X_(k)`` and ``X_(n+1-k)``, with the largest ``k`` for which
        ``P(k <= B <= n-k) >= confidence``, ``B ~ Binomial(n, 1/2)``; that is
        ``scipy.stats.quantile_test(...).confidence_interval()``. Its coverage
        is exact, and at least ``confidence``, for any continuous
        distribution. At 95 % it needs ``n >= 6`` (``n = 6`` gives
        ``X_(1)..X_(6)``, coverage ``1 - 2/64 = 96.9 %``; ``n = 5`` could reach
        only 93.75 %). Below that the bounds are nan and a warning says so;
        see :func:`median_ci_min_n`.
    mean: Student-t interval ``mean +- t_{(1+c)/2, n-1} * s / sqrt(n)``
        (``scipy.stats.t.interval``), needs ``n >= 2``.
    hmean: t-interval on the reciprocals, inverted: the harmonic mean is
        ``1 / mean(1/x)``, so ``[1/hi_r, 1/lo_r]`` where ``[lo_r, hi_r]`` is the
        t-interval of ``mean(1/x)``. If ``lo_r <= 0`` the upper bound is
        ``inf`` (with a warning). Needs ``n >= 2``.

Spread (``Summary.rel_spread``), always relative to the size of the center
    median: half-width of the median CI over the median,
        ``(high - low) / 2 / |median|``; nan when there is no CI.
    mean, hmean: coefficient of variation of the values,
        ``stddev / |arithmetic mean|`` (sample stddev, ddof=1); nan for n < 2.
    Any of these is nan when its denominator is 0.

Delta and its CI (``Comparison.delta``, ``delta_low``, ``delta_high``)
    ``delta = cand.center / base.center - 1``. CI: percentile bootstrap
    (``scipy.stats.bootstrap(method="percentile")``) resampling the baseline
    and the candidate independently, ``resamples`` (default 5000, at least
    2000) resamples, RNG seeded with ``seed``.

Test (``Comparison.p``)
    Two-sided Mann-Whitney U (``scipy.stats.mannwhitneyu``). Method, made
    explicit with scipy's own "auto" rule: ``"exact"`` when at least one side
    has <= 8 values and there are no ties in the pooled sample, otherwise
    ``"asymptotic"`` (normal approximation with tie correction and continuity
    correction). When every value on both sides is equal, p = 1 (no evidence
    of a difference) and ``mwu_method`` is ``"all-equal"``.

Verdict (:func:`decide`)
    p-values of all comparisons of a table that are not "insufficient" are
    adjusted together: Holm (default; controls the family-wise error rate) or
    Benjamini-Hochberg (``"bh"``; controls the false discovery rate, via
    ``scipy.stats.false_discovery_control``). ``p_adjusted < alpha`` is a
    change, "better" or "worse" by its direction and ``higher_is_better``;
    otherwise "same". Fewer than ``min_n`` values on a side is
    "insufficient", never a guess. ``"none"`` leaves p as it is, for an
    alpha that is already split (an adaptive run's per-look alpha).

Sequential looks (:func:`sequential_alpha`, :func:`should_stop`)
    An adaptive run tests after every round from ``first_look`` to
    ``last_look``. Testing each look at alpha would inflate the false-positive
    rate; each look is instead tested at one constant ``look_alpha``. Two rules:
    "bonferroni" (``alpha / K`` for K looks; safe for any test, very
    conservative because consecutive looks share most of their data) and
    "calibrated" (a Pocock-like constant boundary: the largest look_alpha for
    which the chance that *any* look gives p < look_alpha, with no difference,
    is <= alpha, found by simulating the Mann-Whitney U test itself over the
    looks). Under no difference and untied data the ranks, hence the p-values
    of all looks, have the same joint distribution whatever the distribution
    of the values, so this calibration holds for every continuous
    distribution, up to its Monte-Carlo error (20000 simulated runs: about
    +-0.15 percentage points at alpha 0.05).

A/A false-positive rate (:func:`aa_false_positive_rate`)
    From the two copies of an A/A run, paired by round: the share of
    subsets of k rounds in which A against A' on those rounds gives
    p < alpha, beside the share expected with no difference at k per side.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from scipy import stats as sps

__all__ = [
    "VIEWS",
    "VERDICTS",
    "CORRECTIONS",
    "Summary",
    "Comparison",
    "summarize",
    "compare",
    "decide",
    "adjust_pvalues",
    "median_ci_min_n",
    "min_possible_p",
    "mwu",
    "sequential_alpha",
    "AARate",
    "aa_false_positive_rate",
    "Trend",
    "trend",
    "kendall",
    "outliers",
    "detectable_change",
    "StopDecision",
    "should_stop",
]

VIEWS = ("median", "mean", "hmean")
VERDICTS = ("better", "worse", "same", "insufficient")
CORRECTIONS = ("holm", "bh", "none")
BOUNDARIES = ("bonferroni", "calibrated")
DEFAULT_RESAMPLES = 5000
MIN_RESAMPLES = 2000


# --- input checks ------------------------------------------------------------

def _values(values: Sequence[float], name: str = "values") -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a flat sequence of numbers, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains nan or inf; failed cells must not reach statistics")
    return a


def _check_view(view: str) -> None:
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")


def _check_fraction(name: str, x: float) -> float:
    x = float(x)
    if not (0.0 < x < 1.0):
        raise ValueError(f"{name} must be in (0, 1), got {x!r}")
    return x


def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%"


def _conf(c: float) -> str:
    return f"{c * 100:g}%"


# --- summary -----------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """Central value of one variant's samples, with its CI and caveats.

    ``low``/``high`` bound the center at the requested confidence (nan when
    there are too few samples for one; ``high`` may be ``inf`` for "hmean").
    ``rel_spread`` is defined in the module docstring.
    """

    n: int
    view: str
    center: float
    low: float
    high: float
    stddev: float
    rel_spread: float
    minimum: float
    maximum: float
    warnings: tuple[str, ...]


def median_ci_min_n(confidence: float = 0.95) -> int:
    """Smallest n for which the order-statistic median CI exists (6 at 95 %).

    The widest such interval is ``[X_(1), X_(n)]`` with coverage
    ``1 - 2 / 2**n``, which must exceed ``confidence``.
    """
    confidence = _check_fraction("confidence", confidence)
    n = 1
    while 2.0 * 0.5**n >= 1.0 - confidence:
        n += 1
    return n


def _t_interval(x: np.ndarray, confidence: float) -> tuple[float, float]:
    m = float(np.mean(x))
    sem = float(sps.sem(x))
    if sem == 0.0:
        return m, m
    lo, hi = sps.t.interval(confidence, x.size - 1, loc=m, scale=sem)
    return float(lo), float(hi)


def summarize(values: Sequence[float], view: str = "median", confidence: float = 0.95) -> Summary:
    """Center, CI of the center, spread and range of ``values``.

    ``view``: "median" (default), "mean" or "hmean"; methods are in the module
    docstring. An empty input gives an all-nan Summary with a warning; nan or
    inf values, or non-positive values with "hmean", raise ValueError.
    """
    x = _values(values)
    _check_view(view)
    confidence = _check_fraction("confidence", confidence)
    n = int(x.size)
    nan = math.nan
    if n == 0:
        return Summary(0, view, nan, nan, nan, nan, nan, nan, nan, ("no samples",))
    if view == "hmean" and np.any(x <= 0):
        raise ValueError(f"harmonic mean needs positive values (rates), got minimum {x.min()!r}")

    warnings: list[str] = []
    stddev = float(np.std(x, ddof=1)) if n >= 2 else nan
    low = high = nan
    if view == "median":
        center = float(np.median(x))
        ci = sps.quantile_test(x, q=center, p=0.5).confidence_interval(confidence)
        low, high = float(ci.low), float(ci.high)
        if math.isnan(low) or math.isnan(high):
            low = high = nan
            warnings.append(
                f"need >= {median_ci_min_n(confidence)} samples for a {_conf(confidence)} "
                f"CI of the median, have {n}"
            )
        rel_spread = (high - low) / 2.0 / abs(center) if center != 0 else nan
    else:
        amean = float(np.mean(x))
        if view == "mean":
            center = amean
            if n >= 2:
                low, high = _t_interval(x, confidence)
        else:
            center = float(sps.hmean(x))
            if n >= 2:
                lo_r, hi_r = _t_interval(1.0 / x, confidence)
                low = 1.0 / hi_r
                if lo_r > 0:
                    high = 1.0 / lo_r
                else:
                    high = math.inf
                    warnings.append(
                        "harmonic-mean CI has no upper bound: the CI of the mean "
                        "reciprocal reaches 0 (values too noisy)"
                    )
        if n < 2:
            warnings.append(f"need >= 2 samples for a {_conf(confidence)} CI of the {view}, have 1")
        rel_spread = stddev / abs(amean) if amean != 0 else nan
    return Summary(
        n=n,
        view=view,
        center=center,
        low=low,
        high=high,
        stddev=stddev,
        rel_spread=rel_spread,
        minimum=float(x.min()),
        maximum=float(x.max()),
        warnings=tuple(warnings),
    )


# --- comparison ----------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """A candidate against the baseline for one metric.

    Filled by :func:`compare`; ``p_adjusted``, ``alpha``, ``correction`` and
    the final ``verdict`` are filled by :func:`decide` (before that,
    ``verdict`` is the provisional "same", or "insufficient").

    Beyond the fields in the design: ``higher_is_better`` and ``view`` (what
    was compared), ``mwu_method`` ("exact", "asymptotic", "all-equal" or ""
    when no test ran), ``prob_cand_higher`` = ``U_cand / (n_base * n_cand)``,
    the probability that a random candidate value exceeds a random baseline
    value, ties counted half (0.5 = no shift; this is the direction the rank
    test sees), ``alpha`` and ``correction`` used by :func:`decide` (nan and ""
    before).
    """

    n_base: int
    n_cand: int
    base: Summary
    cand: Summary
    delta: float
    delta_low: float
    delta_high: float
    p: float
    p_adjusted: float
    verdict: str
    warnings: tuple[str, ...]
    higher_is_better: bool
    view: str
    mwu_method: str
    prob_cand_higher: float
    alpha: float
    correction: str


def _center_along(view: str):
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


def _bootstrap_delta(
    b: np.ndarray, c: np.ndarray, view: str, confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    # a zero baseline center in some resamples gives inf/nan; reported below
    with np.errstate(divide="ignore", invalid="ignore"):
        res = sps.bootstrap(
            (b, c),
            _center_along(view),
            n_resamples=resamples,
            method="percentile",
            confidence_level=confidence,
            vectorized=True,
            paired=False,
            rng=np.random.default_rng(seed),
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def mwu(base: Sequence[float], cand: Sequence[float]) -> tuple[float, str, float]:
    """Two-sided Mann-Whitney U of ``cand`` against ``base``.

    Returns ``(p, method, prob_cand_higher)``; the method rule is in the
    module docstring. Both sides must be non-empty.
    """
    b = _values(base, "base")
    c = _values(cand, "cand")
    if b.size == 0 or c.size == 0:
        raise ValueError("Mann-Whitney U needs at least one value per side")
    pooled = np.concatenate([b, c])
    if np.all(pooled == pooled[0]):
        return 1.0, "all-equal", 0.5
    ties = np.unique(pooled).size < pooled.size
    method = "asymptotic" if (b.size > 8 and c.size > 8) or ties else "exact"
    res = sps.mannwhitneyu(c, b, alternative="two-sided", method=method)
    return float(res.pvalue), method, float(res.statistic) / (b.size * c.size)


def compare(
    base: Sequence[float],
    cand: Sequence[float],
    *,
    higher_is_better: bool,
    view: str = "median",
    min_n: int = 4,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
) -> Comparison:
    """Compare candidate samples with baseline samples for one metric.

    With fewer than ``min_n`` values on either side the verdict is
    "insufficient" (warning "need >= 4 samples per side, have 3 and 5") and
    there is no test and no delta CI; ``delta`` itself is still given when
    both centers exist. Otherwise the verdict is the provisional "same" until
    :func:`decide` corrects the p-values of the whole table.
    """
    b = _values(base, "base")
    c = _values(cand, "cand")
    _check_view(view)
    confidence = _check_fraction("confidence", confidence)
    if isinstance(min_n, bool) or not isinstance(min_n, int) or min_n < 1:
        raise ValueError(f"min_n must be a positive integer, got {min_n!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < MIN_RESAMPLES:
        raise ValueError(f"resamples must be an integer >= {MIN_RESAMPLES}, got {resamples!r}")

    sb = summarize(b, view, confidence)
    sc = summarize(c, view, confidence)
    warnings: list[str] = []
    if sb.center == 0:
        delta = math.nan
        warnings.append("baseline center is 0: relative change undefined")
    else:
        delta = sc.center / sb.center - 1.0  # nan if either side is empty

    common = dict(
        n_base=int(b.size), n_cand=int(c.size), base=sb, cand=sc, delta=delta,
        p_adjusted=math.nan, higher_is_better=bool(higher_is_better), view=view,
        alpha=math.nan, correction="",
    )
    if b.size < min_n or c.size < min_n:
        warnings.append(f"need >= {min_n} samples per side, have {b.size} and {c.size}")
        return Comparison(
            **common, delta_low=math.nan, delta_high=math.nan, p=math.nan,
            verdict="insufficient", warnings=tuple(warnings), mwu_method="",
            prob_cand_higher=math.nan,
        )

    p, method, prob = mwu(b, c)
    lo, hi = _bootstrap_delta(b, c, view, confidence, resamples, seed)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo = hi = math.nan
        warnings.append("no bootstrap CI for the change: baseline center is 0 in some resamples")
    return Comparison(
        **common, delta_low=lo, delta_high=hi, p=p, verdict="same",
        warnings=tuple(warnings), mwu_method=method, prob_cand_higher=prob,
    )


# --- multiple comparisons and verdicts ----------------------------------------

def adjust_pvalues(ps: Sequence[float], method: str = "holm") -> np.ndarray:
    """Adjusted p-values, in the input order.

    "holm": step-down Holm-Bonferroni: sort ascending, multiply the i-th
    smallest (i from 0) by ``m - i``, take the running maximum, cap at 1.
    "bh": Benjamini-Hochberg via ``scipy.stats.false_discovery_control``.
    "none": unchanged (the caller has split alpha already).
    """
    p = np.asarray(ps, dtype=float)
    if p.ndim != 1:
        raise ValueError("p-values must be a flat sequence")
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p-values must be in [0, 1], got {p.tolist()}")
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {CORRECTIONS}, got {method!r}")
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bh":
        return np.asarray(sps.false_discovery_control(p, method="bh"), dtype=float)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def min_possible_p(n_base: int, n_cand: int) -> float:
    """Smallest two-sided exact Mann-Whitney U p-value at these sample sizes.

    ``2 / C(n_base + n_cand, n_base)`` (complete separation, no ties), capped
    at 1. With 4 and 4 it is 0.029; with 3 and 3 it is 0.1.
    """
    return min(1.0, 2.0 / math.comb(n_base + n_cand, n_base))


def _direction(c: Comparison) -> int:
    """+1 if the candidate is higher, -1 if lower, 0 if undetermined.

    The sign of delta; when delta is 0 or undefined, the side the rank test
    saw (``prob_cand_higher`` vs 0.5).
    """
    if math.isfinite(c.delta) and c.delta != 0:
        return 1 if c.delta > 0 else -1
    if math.isfinite(c.prob_cand_higher) and c.prob_cand_higher != 0.5:
        return 1 if c.prob_cand_higher > 0.5 else -1
    return 0


def decide(
    comparisons: Sequence[Comparison], alpha: float = 0.05, method: str = "holm"
) -> list[Comparison]:
    """Correct the p-values of a table of comparisons and set the verdicts.

    All comparisons that are not "insufficient" form one family; their p is
    adjusted by ``method`` ("holm", "bh", or "none" when ``alpha`` is already
    the level of each comparison) into ``p_adjusted``. A comparison
    with ``p_adjusted < alpha`` is "better" or "worse" by the direction of the
    change (sign of delta; the rank test's side if delta is 0 or undefined)
    and ``higher_is_better``; otherwise "same". Insufficient comparisons keep
    their verdict and a nan ``p_adjusted``.

    Warnings added: a significant result whose delta CI contains 0, a delta CI
    that excludes 0 without significance, delta and rank test pointing in
    opposite directions, and sample sizes so small that the exact test cannot
    reach ``alpha / m``. Comparisons must come from :func:`compare` and not be
    decided already (ValueError); returns new objects, in the input order.
    """
    alpha = _check_fraction("alpha", alpha)
    if method not in CORRECTIONS:
        raise ValueError(f"method must be one of {CORRECTIONS}, got {method!r}")
    for c in comparisons:
        if c.correction or not math.isnan(c.alpha):
            raise ValueError("comparison already decided; decide() takes the output of compare()")
    idx = [i for i, c in enumerate(comparisons) if c.verdict != "insufficient"]
    adjusted = adjust_pvalues([comparisons[i].p for i in idx], method)
    m = len(idx)
    out = [replace(c, alpha=alpha, correction=method) for c in comparisons]
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "per-comparison"}[method]
    # the level the best comparison must reach: Holm's and BH's first step, or alpha itself
    first_step = alpha if method == "none" else alpha / max(1, m)
    for i, pa in zip(idx, adjusted):
        c = comparisons[i]
        pa = float(pa)
        w = list(c.warnings)
        ci_ok = math.isfinite(c.delta_low) and math.isfinite(c.delta_high)
        ci_text = f"[{_pct(c.delta_low)}, {_pct(c.delta_high)}]" if ci_ok else ""
        direction = _direction(c)
        ptext = f"p={c.p:.3g}" if method == "none" else f"p={c.p:.3g}, {name} p={pa:.3g}"
        if pa < alpha and direction != 0:
            up = direction > 0
            verdict = "better" if up == c.higher_is_better else "worse"
            if ci_ok and c.delta_low <= 0 <= c.delta_high:
                w.append(
                    f"significant ({ptext}) but the delta CI "
                    f"{ci_text} includes 0"
                )
            rank_dir = np.sign(c.prob_cand_higher - 0.5)
            if math.isfinite(c.delta) and c.delta != 0 and rank_dir != 0 and rank_dir != direction:
                w.append("center and rank test disagree on the direction of the change")
        else:
            verdict = "same"
            if ci_ok and (c.delta_low > 0 or c.delta_high < 0):
                w.append(
                    f"delta CI {ci_text} excludes 0 but the test is not significant "
                    f"({ptext}, alpha={alpha:.3g})"
                )
        floor = min_possible_p(c.n_base, c.n_cand)
        if floor >= first_step:
            level = f"{alpha:.3g}" if method == "none" else f"alpha/{m} = {alpha / m:.3g}"
            w.append(
                f"with {c.n_base} and {c.n_cand} samples the smallest possible p is "
                f"{floor:.3g}, not below {level}: a real change "
                f"may be reported as same"
            )
        out[i] = replace(out[i], p_adjusted=pa, verdict=verdict, warnings=tuple(w))
    return out


# --- sequential looks ---------------------------------------------------------------

SEQUENTIAL_SIMULATIONS = 20000


def _mwu_method(n: int) -> str:
    """The method :func:`mwu` uses for n untied values per side."""
    return "exact" if n <= 8 else "asymptotic"


@lru_cache(maxsize=64)
def _min_p_over_looks(first_look: int, last_look: int, simulations: int, seed: int) -> np.ndarray:
    """Sorted smallest p over looks first..last, for runs with no difference.

    Small n: scipy's exact test. Larger n: U is updated round by round (the
    new pairs only) and turned into scipy's asymptotic p (normal
    approximation with continuity correction; no ties in simulated data),
    which keeps 100 looks at about a second.
    """
    rng = np.random.default_rng(seed)
    base = rng.random((simulations, last_look))
    cand = rng.random((simulations, last_look))
    smallest = np.ones(simulations)
    u = np.zeros(simulations)  # U of cand against base over the first n rounds
    for n in range(1, last_look + 1):
        b, c = base[:, n - 1 : n], cand[:, n - 1 : n]
        u += np.sum(c > base[:, :n], axis=1) + np.sum(cand[:, : n - 1] > b, axis=1)
        if n < first_look:
            continue
        if _mwu_method(n) == "exact":
            p = sps.mannwhitneyu(cand[:, :n], base[:, :n], axis=1, method="exact").pvalue
        else:
            mu = n * n / 2.0
            sd = math.sqrt(n * n * (2 * n + 1) / 12.0)
            z = (np.maximum(u, n * n - u) - mu - 0.5) / sd
            p = np.minimum(1.0, 2.0 * sps.norm.sf(z))
        np.minimum(smallest, p, out=smallest)
    smallest.sort()
    smallest.flags.writeable = False
    return smallest


def sequential_alpha(
    alpha: float,
    first_look: int,
    last_look: int,
    boundary: str = "calibrated",
    *,
    simulations: int = SEQUENTIAL_SIMULATIONS,
    seed: int = 0,
) -> float:
    """The level of each look of a run that tests after every round
    ``first_look .. last_look`` (n per side), keeping the chance of any false
    "significant" over the whole run at or below ``alpha``.

    "bonferroni": ``alpha / K``, K = ``last_look - first_look + 1``.
    "calibrated" (Pocock-like, see the module docstring): simulate
    ``simulations`` runs with no difference (uniform values: the rank test
    makes this distribution-free for untied data), take each run's smallest
    p over its looks, and return the value ``v`` at index ``floor(alpha *
    simulations)`` of the sorted minima, so that the share of simulated runs
    with any p < v is <= alpha, capped at alpha (one look at n = 10 would
    otherwise give 0.054: the asymptotic test is a little conservative
    there). Deterministic (seeded); cached; well under a second for 100 looks.
    """
    alpha = _check_fraction("alpha", alpha)
    for name, v in (("first_look", first_look), ("last_look", last_look)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if last_look < first_look:
        raise ValueError(f"last_look ({last_look}) < first_look ({first_look})")
    if boundary not in BOUNDARIES:
        raise ValueError(f"boundary must be one of {BOUNDARIES}, got {boundary!r}")
    looks = last_look - first_look + 1
    if boundary == "bonferroni":
        return alpha / looks
    if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1000:
        raise ValueError(f"simulations must be an integer >= 1000, got {simulations!r}")
    minima = _min_p_over_looks(first_look, last_look, simulations, seed)
    return min(alpha, float(minima[int(math.floor(alpha * simulations))]))


class AARate(NamedTuple):
    """Observed A/A false-positive rate over subsets of rounds."""

    observed: float  # share of subsets with p < alpha
    expected: float  # that share with no difference and untied values (simulated)
    subsets: int  # how many subsets were tested
    k: int  # rounds per subset
    warnings: tuple[str, ...]


def _smallest_useful_k(alpha: float) -> int:
    k = 1
    while min_possible_p(k, k) >= alpha:
        k += 1
    return k


def aa_false_positive_rate(
    a: Sequence[float],
    b: Sequence[float],
    alpha: float = 0.05,
    *,
    k: int | None = None,
    subsets: int = 2000,
    seed: int = 0,
) -> AARate:
    """How often A against A' on a subset of the rounds looks "significant".

    ``a[i]`` and ``b[i]`` are the two copies' values in round i. Each subset
    is k distinct rounds; the test is :func:`mwu` of ``b`` against ``a`` on
    those rounds, so whatever differs between the two copies (order within a
    round, a device, a cache) stays in the test, and drift falls on both
    sides alike as it did in the run. All ``C(n, k)`` subsets when there are
    at most ``subsets`` of them, else ``subsets`` random ones (seeded).
    ``k`` defaults to ``max(n // 2, kmin)``, kmin being the smallest k at
    which p < alpha is possible at all (4 at alpha 0.05). ``expected`` is the
    share for data with no difference at k per side (simulated on untied
    data, seeded), which is below alpha because the exact test is discrete.
    Subsets overlap, so they are not independent experiments: with few
    rounds the observed share is a coarse figure. Fewer than kmin rounds:
    nan with a warning.
    """
    x = _values(a, "a")
    y = _values(b, "b")
    alpha = _check_fraction("alpha", alpha)
    if x.size != y.size:
        raise ValueError(f"a and b must be paired by round, got {x.size} and {y.size} values")
    n = int(x.size)
    kmin = _smallest_useful_k(alpha)
    if k is None:
        k = max(n // 2, kmin)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k > n:
        return AARate(math.nan, math.nan, 0, k, (f"need >= {k} rounds for subsets of {k}, have {n}",))
    if k < kmin:
        raise ValueError(f"with {k} per side no p can be below {alpha}: k must be >= {kmin}")
    rng = np.random.default_rng(seed)
    total = math.comb(n, k)
    if total <= subsets:
        chosen = np.array(list(itertools.combinations(range(n), k)))
    else:
        chosen = np.array([rng.choice(n, k, replace=False) for _ in range(subsets)])
    hits = 0
    for rows in chosen:
        p, _, _ = mwu(x[rows], y[rows])
        hits += p < alpha
    null = rng.random((SEQUENTIAL_SIMULATIONS, 2, k))
    p_null = sps.mannwhitneyu(null[:, 1], null[:, 0], axis=1, method=_mwu_method(k)).pvalue
    return AARate(hits / len(chosen), float(np.mean(p_null < alpha)), len(chosen), k, ())


# --- diagnostics -----------------------------------------------------------------

class Trend(NamedTuple):
    """Kendall's tau of the values against their round index, and its p-value."""

    tau: float
    p: float


def trend(values_in_round_order: Sequence[float]) -> Trend:
    """Drift diagnostic: Mann-Kendall test of ``values`` against round order.

    Kendall's tau-b between the round index ``0..n-1`` and the values
    (``scipy.stats.kendalltau``; exact p when there are no ties and n <= 33,
    otherwise the tie-corrected normal approximation). tau > 0: values grow
    over the run. A constant series is ``Trend(0.0, 1.0)``; fewer than 2 values
    is ``Trend(nan, nan)``.
    """
    x = _values(values_in_round_order)
    if x.size < 2:
        return Trend(math.nan, math.nan)
    if np.all(x == x[0]):
        return Trend(0.0, 1.0)
    res = sps.kendalltau(np.arange(x.size), x)
    return Trend(float(res.statistic), float(res.pvalue))


def kendall(x: Sequence[float], y: Sequence[float]) -> Trend:
    """Kendall's tau-b between two paired series and its two-sided p
    (``scipy.stats.kendalltau``); :func:`trend` is this against the round
    index. Fewer than 2 pairs, or a constant series: ``Trend(nan, nan)``."""
    a = _values(x, "x")
    b = _values(y, "y")
    if a.size != b.size:
        raise ValueError(f"x and y must be paired, got {a.size} and {b.size} values")
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Trend(math.nan, math.nan)
    res = sps.kendalltau(a, b)
    return Trend(float(res.statistic), float(res.pvalue))


def outliers(values: Sequence[float], k: float = 1.5) -> list[int]:
    """Indices of values outside Tukey's fences ``[Q1 - k*IQR, Q3 + k*IQR]``.

    Quartiles by linear interpolation (``numpy.percentile`` default, Hyndman &
    Fan type 7); a value exactly on a fence is not an outlier. Fewer than 4
    values give ``[]`` (no meaningful quartiles). When more than half the
    values are equal, IQR is 0 and every other value is flagged -- that is
    Tukey's rule, not a bug.
    """
    x = _values(values)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    if x.size < 4:
        return []
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return [int(i) for i in np.flatnonzero((x < q1 - k * iqr) | (x > q3 + k * iqr))]


def detectable_change(
    values: Sequence[float],
    n: int,
    alpha: float = 0.05,
    power: float = 0.9,
    *,
    seed: int = 0,
    simulations: int = 1000,
) -> float:
    """Smallest relative shift of the center a two-sided MWU would detect.

    "Detect" means p < ``alpha`` in at least a fraction ``power`` of
    experiments with ``n`` values per side, at the noise seen in ``values``
    (e.g. one variant's samples; they must be positive -- timings, rates).
    Returns the factor ``f`` such that multiplying one side by ``1 + f`` is
    detected (0.03 = 3 %); ``inf`` when no shift can be (n too small:
    :func:`min_possible_p` ``>= alpha``); ``0.0`` when the values have no
    spread at all. ``alpha`` is the per-comparison level, so pass the
    corrected level of a table (e.g. alpha / m) to plan for it.

    Method (simulation, seeded):
      1. noise model: a smoothed bootstrap of ``log(values)`` -- resample
         with replacement, add Gaussian noise of Silverman's bandwidth
         ``h = 0.9 min(s, IQR/1.34) N^-1/5``, rescale by ``1/sqrt(1 + h^2/s^2)``
         to keep the variance. Smoothing avoids the ties a plain bootstrap of
         a few values would create, which real timings do not have.
      2. draw ``simulations`` pairs of samples of size ``n`` once (common
         random numbers), so the power curve is smooth in ``f``.
      3. power(f) = share of pairs where ``mannwhitneyu(cand * (1+f), base)``
         has p < alpha (vectorized; "exact" for n <= 8, else asymptotic, as
         :func:`mwu` would choose for untied data). The test is rank-based, so
         shifting ``log`` values by ``log1p(f)`` is the same as scaling by
         ``1 + f``.
      4. bracket by doubling ``f`` from 0.5 %, then bisect to a relative
         precision of 1 %; the returned ``f`` reaches the power.
    About 25 vectorized tests: ~0.1 s for n=10 on one core. The shift is
    upward; a downward shift of the same size is as detectable to within the
    skew of the noise.
    """
    x = _values(values)
    alpha = _check_fraction("alpha", alpha)
    power = _check_fraction("power", power)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if x.size < 2:
        raise ValueError(f"need >= 2 values to estimate the noise, have {x.size}")
    if np.any(x <= 0):
        raise ValueError("detectable_change needs positive values (a relative shift of timings or rates)")
    if power <= alpha:
        raise ValueError(f"power ({power}) must exceed alpha ({alpha})")
    if min_possible_p(n, n) >= alpha:
        return math.inf
    logs = np.log(x)
    s = float(np.std(logs, ddof=1))
    if s == 0.0:
        return 0.0
    q1, q3 = np.percentile(logs, [25, 75])
    spread = min(s, (q3 - q1) / 1.34) if q3 > q1 else s
    h = 0.9 * spread * logs.size ** -0.2
    mu = float(np.mean(logs))
    rng = np.random.default_rng(seed)

    def draw() -> np.ndarray:
        picked = logs[rng.integers(0, logs.size, (simulations, n))]
        noisy = picked + h * rng.standard_normal((simulations, n))
        return mu + (noisy - mu) / math.sqrt(1.0 + h * h / (s * s))

    base, cand = draw(), draw()
    method = "exact" if n <= 8 else "asymptotic"

    def reaches(f: float) -> bool:
        p = sps.mannwhitneyu(cand + math.log1p(f), base, axis=1, method=method).pvalue
        return float(np.mean(p < alpha)) >= power

    lo, hi = 0.0, 0.005
    while not reaches(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1000.0:
            return math.inf
    while hi - lo > 0.01 * hi:
        mid = (lo + hi) / 2.0
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi


# --- adaptive stopping ---------------------------------------------------------------

class StopDecision(NamedTuple):
    """Whether to stop an adaptive run, why, and the alpha of each look."""

    stop: bool
    reason: str
    look_alpha: float


def should_stop(
    base: Sequence[float],
    cand: Sequence[float],
    *,
    round_index: int,
    max_rounds: int,
    target_halfwidth: float = 0.01,
    alpha: float = 0.05,
    min_n: int = 4,
    view: str = "median",
    seed: int = 0,
    resamples: int = MIN_RESAMPLES,
    boundary: str = "calibrated",
) -> StopDecision:
    """Sequential stopping for adaptive runs, honest under repeated looks.

    ``round_index`` is the number of the round just completed, counting from
    1; ``max_rounds`` is the planned maximum. Rule (alpha split over the
    planned looks):

    * Looks happen after rounds ``min_n .. max_rounds``, so there are at most
      ``K = max_rounds - min_n + 1`` of them, and each look tests at one
      ``look_alpha = sequential_alpha(alpha, min_n, max_rounds, boundary)``.
      With ``boundary="bonferroni"`` that is ``alpha / K``: by the union
      bound the chance of any false "significant" over the whole run is
      <= alpha however the looks are correlated, at a high price in power
      (26 looks give a real rate near 0.9 % at alpha 5 %). The default
      ``"calibrated"`` is a Pocock-like constant boundary found by simulating
      this very test over these looks (module docstring): the rate is alpha,
      up to Monte-Carlo error, for untied data; the discreteness of the exact
      test at small n is part of the simulation, where normal-theory Pocock
      or O'Brien-Fleming boundaries would not hold.
    * At a look, stop when Mann-Whitney U gives ``p < look_alpha``
      ("significant").
    * Otherwise stop when the bootstrap CI of delta is precise -- half-width
      ``<= target_halfwidth`` (relative; 0.01 = +-1 %) -- and contains 0
      ("precise": no change larger than the target). Stopping without a
      rejection cannot raise the false-positive rate. ``target_halfwidth=0``
      turns this off.
    * Stop at ``round_index == max_rounds`` ("budget").
    * Before round ``min_n``, or with fewer than ``min_n`` values on a side,
      continue (the look, if any, is spent without testing).

    The final verdict must use the same threshold: ``decide(..., alpha=
    look_alpha)``. This controls the error of one comparison; when several
    comparisons drive the stop, pass ``alpha`` already divided among them.
    """
    b = _values(base, "base")
    c = _values(cand, "cand")
    alpha = _check_fraction("alpha", alpha)
    for name, v in (("round_index", round_index), ("max_rounds", max_rounds), ("min_n", min_n)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if max_rounds < min_n:
        raise ValueError(f"max_rounds ({max_rounds}) < min_n ({min_n}): no look would ever happen")
    if round_index > max_rounds:
        raise ValueError(f"round_index {round_index} > max_rounds {max_rounds}")
    if not (target_halfwidth >= 0):
        raise ValueError(f"target_halfwidth must be >= 0, got {target_halfwidth!r}")
    looks = max_rounds - min_n + 1
    look_alpha = sequential_alpha(alpha, min_n, max_rounds, boundary)
    last = round_index == max_rounds
    budget = f"budget: {max_rounds} rounds done"

    if round_index < min_n or b.size < min_n or c.size < min_n:
        why = f"need >= {min_n} samples per side, have {b.size} and {c.size}"
        if round_index < min_n:
            why = f"first look after round {min_n}; " + why
        return StopDecision(last, f"{budget} ({why})" if last else why, look_alpha)

    p, _, _ = mwu(b, c)
    test = f"p={p:.3g} vs look alpha {look_alpha:.3g} ({boundary}, {looks} looks)"
    if p < look_alpha:
        return StopDecision(True, f"significant: {test}", look_alpha)
    if last:
        return StopDecision(True, f"{budget}; {test}", look_alpha)
    if target_halfwidth == 0:
        return StopDecision(False, f"continue: {test}", look_alpha)
    cmp = compare(b, c, higher_is_better=True, view=view, min_n=min_n, seed=seed, resamples=resamples)
    lo, hi = cmp.delta_low, cmp.delta_high
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return StopDecision(False, f"continue: {test}; no delta CI", look_alpha)
    half = (hi - lo) / 2.0
    ci = f"delta CI [{_pct(lo)}, {_pct(hi)}]"
    if half <= target_halfwidth and lo <= 0.0 <= hi:
        return StopDecision(
            True, f"precise: {ci} within +-{target_halfwidth * 100:g}% and includes 0; {test}", look_alpha
        )
    return StopDecision(
        False, f"continue: {test}; {ci}, half-width {half * 100:.2g}% (target {target_halfwidth * 100:g}%)",
        look_alpha,
    )
