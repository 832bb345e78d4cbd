"""The smallest change a comparison would detect, at a given noise and n.

:func:`detectable_change` (unpaired, Mann-Whitney U) and
:func:`detectable_change_paired` (paired by round, signed-rank) share one
method, seeded:

1. noise model: a smoothed bootstrap of the logs (of the values; of the
   per-round log ratios, centred on 0, for the paired test): resample with
   replacement, add Gaussian noise of Silverman's bandwidth ``h = 0.9
   min(s, IQR/1.34) N^-1/5``, rescale by ``1/sqrt(1 + h^2/s^2)`` to keep the
   variance. Smoothing avoids the ties a plain bootstrap of a few values
   would create, which real timings do not have.
2. draw ``simulations`` experiments of size n once (common random numbers),
   so the power curve is smooth in the shift f.
3. power(f) = share of experiments where the test, as iolab computes it
   (exact tables), has p < alpha after shifting the logs by ``log1p(f)``.
4. bracket by doubling f from 0.5%, then bisect to 1% relative precision;
   the returned f reaches the power. ``inf``: no shift can (n too small);
   ``0.0``: the values have no spread.

:func:`rounds_to_narrow` is the cheap estimate a report gives for an
undecided row: the rounds at which its CI, narrowing as 1/sqrt(n), would
leave out either no change or the claimed size.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from iolab.stats import checks, paired, unpaired
from iolab.stats.checks import Values


def _smoothed(logs: np.ndarray, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    s = float(np.std(logs, ddof=1))
    q1, q3 = np.percentile(logs, [25, 75])
    spread = min(s, (q3 - q1) / 1.34) if q3 > q1 else s
    h = 0.9 * spread * logs.size ** -0.2
    mu = float(np.mean(logs))
    picked = logs[rng.integers(0, logs.size, shape)]
    noisy = picked + h * rng.standard_normal(shape)
    return mu + (noisy - mu) / math.sqrt(1.0 + h * h / (s * s))


def _search(reaches: Callable[[float], bool]) -> float:
    lo, hi = 0.0, 0.005
    while not reaches(hi):
        lo, hi = hi, hi * 2.0
        if hi > 1000.0:
            return math.inf
    while hi - lo > 0.01 * hi:
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def _check(x: np.ndarray, n: int, alpha: float, power: float) -> tuple[float, float]:
    alpha, power = checks.fraction("alpha", alpha), checks.fraction("power", power)
    checks.positive_int("n", n)
    if x.size < 2:
        raise checks.Refusal(f"need >= 2 values to estimate the noise, have {x.size}")
    if power <= alpha:
        raise checks.Refusal(f"power ({power}) must exceed alpha ({alpha})")
    return alpha, power


def detectable_change(values: Values, n: int, alpha: float = 0.05, power: float = 0.9, *, seed: int = 0,
                      simulations: int = 1000) -> float:
    """Smallest relative upward shift of one side that an unpaired
    Mann-Whitney U with n values per side detects (p < alpha) in a share
    ``power`` of experiments, at the noise of ``values`` (positive)."""
    x = checks.values(values)
    alpha, power = _check(x, n, alpha, power)
    if np.any(x <= 0):
        raise checks.Refusal("detectable_change needs positive values (a relative shift of timings or rates)")
    if unpaired.min_possible_p(n, n) >= alpha:
        return math.inf
    logs = np.log(x)
    if np.std(logs) == 0.0:
        return 0.0
    rng = np.random.default_rng(seed)
    base = _smoothed(logs, rng, (simulations, n))
    cand = _smoothed(logs, rng, (simulations, n))
    table = unpaired.untied_p_by_u(n, n)

    def reaches(f: float) -> bool:
        u = np.sum(base[:, :, None] > cand[:, None, :] + math.log1p(f), axis=(1, 2))
        return float(np.mean(table[u] < alpha)) >= power

    return _search(reaches)


def detectable_change_paired(log_ratios: Values, n: int, alpha: float = 0.05, power: float = 0.9, *,
                             seed: int = 0, simulations: int = 1000) -> float:
    """The same for the paired signed-rank test over n rounds, at the noise of
    per-round log ratios (e.g. ``log(A'/A)`` of an A/A run; centred here)."""
    x = checks.values(log_ratios, "log_ratios")
    alpha, power = _check(x, n, alpha, power)
    if 2.0 / 2**n >= alpha:
        return math.inf
    if np.std(x) == 0.0:
        return 0.0
    rng = np.random.default_rng(seed)
    d = _smoothed(x - np.median(x), rng, (simulations, n))
    table = paired.untied_p_by_t(n)

    def reaches(f: float) -> bool:
        shifted = d + math.log1p(f)
        ranks = np.argsort(np.argsort(np.abs(shifted), axis=1), axis=1) + 1
        t = np.sum(np.where(shifted > 0, ranks, 0), axis=1)
        return float(np.mean(table[t] < alpha)) >= power

    return _search(reaches)


def rounds_to_narrow(rounds: int, half_width: float, distance: float, most: int = 1000) -> int:
    """The rounds at which a delta CI of ``half_width`` over ``rounds`` rounds
    narrows below ``distance``, as CIs of a median or a Hodges-Lehmann shift
    narrow, by 1/sqrt(rounds): an estimate at the noise seen so far, not a
    promise (``most`` when the distance is 0 or the CI has no width to
    scale from)."""
    checks.positive_int("rounds", rounds)
    if not (half_width > 0 and distance > 0) or not (math.isfinite(half_width) and math.isfinite(distance)):
        return rounds + 1 if half_width == 0 else most
    needed = rounds * (half_width / distance) ** 2
    return min(most, max(rounds + 1, math.ceil(needed)))
