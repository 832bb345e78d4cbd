"""Latency histograms: plain mappings ``{bucket_value_ns: count}``.

A histogram maps the representative latency of a bucket, in nanoseconds, to
the number of I/Os that fell in that bucket. fio's json+ output gives
``clat_ns.bins`` as ``{"<ns as string>": count}``; iolab-probe emits the same
shape. Histograms of several iterations are *merged* (counts summed per
bucket) and percentiles are read from the merged histogram -- percentiles of
separate iterations are never averaged (DESIGN.md, "Never average
percentiles").

All functions are pure. Histograms returned by this module never contain
zero-count buckets, so two histograms holding the same samples compare equal.

Percentile rank
---------------
``percentile(hist, q)`` returns the value of the first bucket, in ascending
bucket order, whose cumulative count reaches ``rank = ceil(q / 100 * total)``
(with ``0 < q <= 100``, so ``rank >= 1``). This is fio's rule and numpy's
``method="inverted_cdf"`` on the expanded samples.

The product ``q / 100 * total`` is computed exactly, taking ``q`` as the
decimal number it prints as (``99.9`` means 999/10). fio and numpy compute it
in binary floating point, where e.g. ``99.9 / 100 * 1000`` comes out as
``999.0000000000001`` and ``7 / 100 * 100`` as ``7.000000000000001``; at such
exact-integer ranks they take the *next* sample, we do not: p99.9 of 1000
samples is the 999th, p7 of 100 samples is the 7th. Everywhere else the
results are identical.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from fractions import Fraction

Histogram = Mapping[int, int]

__all__ = [
    "Histogram",
    "from_fio_bins",
    "merge",
    "mean",
    "percentile",
    "percentiles",
    "total",
]


def _check_count(bucket: object, count: object) -> int:
    if isinstance(count, bool) or not isinstance(count, numbers.Integral):
        raise ValueError(f"bucket {bucket!r}: count must be an integer, got {count!r}")
    if count < 0:
        raise ValueError(f"bucket {bucket!r}: negative count {count}")
    return int(count)


def _check_bucket(bucket: object) -> int:
    if isinstance(bucket, bool) or not isinstance(bucket, numbers.Integral):
        raise ValueError(f"bucket value must be an integer (ns), got {bucket!r}")
    if bucket < 0:
        raise ValueError(f"negative bucket value {bucket}")
    return int(bucket)


def _sorted_items(hist: Histogram) -> list[tuple[int, int]]:
    """Validated ``(bucket, count)`` pairs, ascending, zero counts dropped."""
    items = []
    for bucket, count in hist.items():
        c = _check_count(bucket, count)
        if c:
            items.append((_check_bucket(bucket), c))
    items.sort()
    return items


def from_fio_bins(bins: Mapping[str, int]) -> dict[int, int]:
    """Convert fio json+ ``clat_ns.bins`` (``{"<ns>": count}``) to a histogram.

    Keys are parsed as base-10 integers of nanoseconds; zero counts are
    dropped. Raises ValueError on a key that is not a non-negative integer or
    a count that is not a non-negative integer.
    """
    out: dict[int, int] = {}
    for key, count in bins.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit()):
            raise ValueError(f"fio bin key {key!r} is not a decimal integer of nanoseconds")
        bucket = int(key, 10)
        c = _check_count(key, count)
        if c:
            out[bucket] = out.get(bucket, 0) + c
    return out


def merge(histograms: Iterable[Histogram]) -> dict[int, int]:
    """Sum the counts of each bucket over ``histograms``.

    Merging is associative and commutative; merging nothing gives ``{}``.
    """
    out: dict[int, int] = {}
    for hist in histograms:
        for bucket, count in _sorted_items(hist):
            out[bucket] = out.get(bucket, 0) + count
    return dict(sorted(out.items()))


def total(hist: Histogram) -> int:
    """Number of samples in ``hist`` (0 for an empty histogram)."""
    return sum(count for _, count in _sorted_items(hist))


def mean(hist: Histogram) -> float:
    """Mean latency in ns, from bucket values weighted by their counts.

    The bucket value stands for every sample in the bucket, so this is the
    mean of the bucketed samples, not of the exact latencies. Raises
    ValueError on an empty histogram.
    """
    items = _sorted_items(hist)
    n = sum(c for _, c in items)
    if n == 0:
        raise ValueError("mean of an empty histogram")
    return sum(b * c for b, c in items) / n  # exact integer sum, one rounding


def _rank(q: float, n: int) -> int:
    """``ceil(q / 100 * n)`` with ``q`` taken as the decimal it prints as."""
    if isinstance(q, bool) or not isinstance(q, numbers.Real):
        raise ValueError(f"percentile must be a number, got {q!r}")
    qf = float(q)
    if not (0.0 < qf <= 100.0):
        raise ValueError(f"percentile must be in (0, 100], got {q!r}")
    exact = Fraction(str(qf)) * n / 100
    return max(1, math.ceil(exact))


def percentiles(hist: Histogram, qs: Iterable[float]) -> dict[float, float]:
    """Several percentiles of ``hist`` at once: ``{float(q): value_ns}``.

    Each is computed as in :func:`percentile`. Raises ValueError on an empty
    histogram or a ``q`` outside (0, 100].
    """
    items = _sorted_items(hist)
    n = sum(c for _, c in items)
    qs = list(qs)
    ranks = {float(q): _rank(q, n) for q in qs}
    if n == 0:
        raise ValueError("percentile of an empty histogram")
    out: dict[float, float] = {}
    pending = sorted(ranks.items(), key=lambda kv: kv[1])
    i = 0
    cum = 0
    for bucket, count in items:
        cum += count
        while i < len(pending) and cum >= pending[i][1]:
            out[pending[i][0]] = float(bucket)
            i += 1
        if i == len(pending):
            break
    return {float(q): out[float(q)] for q in qs}


def percentile(hist: Histogram, q: float) -> float:
    """The ``q``-th percentile (``0 < q <= 100``) of ``hist``, in ns.

    Returns the value of the first bucket, in ascending order, whose
    cumulative count reaches ``ceil(q / 100 * total)`` -- see the module
    docstring for the exact rank. ``percentile(h, 100)`` is the largest
    non-empty bucket. Raises ValueError on an empty histogram.
    """
    return percentiles(hist, [q])[float(q)]
