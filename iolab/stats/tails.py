"""Tail latency across iterations: merged histograms and their bootstrap.

The p99 of a set of iterations is the p99 of their merged histogram, not
a mean or median of per-iteration p99s. Its uncertainty comes from
resampling whole iterations (each resample merges a bootstrap draw of the
iterations' histograms), which keeps the iteration as the unit of
independence, as the rank test on per-iteration values does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from iolab import histogram


def merged_percentile(histograms: Sequence[dict[int, int]], q: float) -> float:
    return histogram.percentile(histogram.merge(histograms), q)


def _dense(histograms: Sequence[dict[int, int]], buckets: np.ndarray) -> np.ndarray:
    index = {int(b): i for i, b in enumerate(buckets)}
    matrix = np.zeros((len(histograms), len(buckets)))
    for row, hist in enumerate(histograms):
        for bucket, count in hist.items():
            matrix[row, index[bucket]] = count
    return matrix


def _weights(n: int, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """How often each of n iterations is drawn, per bootstrap resample."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)


def _resampled_percentiles(matrix: np.ndarray, buckets: np.ndarray, q: float, weights: np.ndarray) -> np.ndarray:
    """q-th percentile of the bootstrap merges of the rows of `matrix` (one per row of `weights`)."""
    merged = weights @ matrix  # (resamples, buckets)
    cumulative = np.cumsum(merged, axis=1)
    totals = cumulative[:, -1]
    ranks = np.ceil(q / 100.0 * totals - 1e-9)
    positions = (cumulative < ranks[:, None]).sum(axis=1)  # first bucket reaching the rank
    return buckets[positions].astype(float)


def delta_ci(
    base: Sequence[dict[int, int]],
    cand: Sequence[dict[int, int]],
    q: float,
    *,
    confidence: float = 0.95,
    resamples: int = 5000,
    seed: int = 0,
    paired: bool = False,
) -> tuple[float, float, float]:
    """(delta, low, high): relative change of the merged q-th percentile, with
    a seeded percentile-bootstrap CI over iterations. ``paired``: ``base[i]``
    and ``cand[i]`` come from round i and each resample draws the same
    rounds for both (a bootstrap over rounds, as the paired test pairs them)."""
    if paired and len(base) != len(cand):
        raise ValueError(f"paired histograms: {len(base)} and {len(cand)} rounds")
    delta = merged_percentile(cand, q) / merged_percentile(base, q) - 1.0
    if len(base) < 2 or len(cand) < 2:
        return delta, math.nan, math.nan
    buckets = np.array(sorted(set().union(*base, *cand)), dtype=np.int64)
    rng = np.random.default_rng(seed)
    base_w = _weights(len(base), rng, resamples)
    cand_w = base_w if paired else _weights(len(cand), rng, resamples)
    base_p = _resampled_percentiles(_dense(base, buckets), buckets, q, base_w)
    cand_p = _resampled_percentiles(_dense(cand, buckets), buckets, q, cand_w)
    ratios = cand_p / base_p - 1.0
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return delta, float(low), float(high)
