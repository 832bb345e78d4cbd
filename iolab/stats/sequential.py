"""The level of each look of an adaptive run, honest under repeated looks.

An adaptive run tests after every round from ``first_look`` to
``last_look``. Testing each look at alpha would inflate the false-positive
rate; each look is tested at one constant ``look_alpha`` instead:

"bonferroni"
    ``alpha / K`` for K looks: safe for any test, very conservative,
    because consecutive looks share most of their data.
"calibrated" (default)
    a Pocock-like constant boundary: the largest level at which the chance
    that *any* look gives p < level, with no difference, is <= alpha, found
    by simulating the very test over the looks. Both tests are rank tests:
    under no difference and untied data the joint distribution of the ranks
    (Mann-Whitney U: of the pooled values; signed-rank: of |d| with fair
    signs) is the same whatever the distribution of the values, so the
    calibration holds for every continuous distribution, up to its
    Monte-Carlo error (20000 simulated runs: about +-0.15 points at 5%).
    The p of each look is the exact p the test computes (the tables of
    :mod:`iolab.stats.unpaired` and :mod:`iolab.stats.paired`).

Which comparisons share alpha, and when a run stops, is decided in
:mod:`iolab.run.adaptive`; this module only gives the level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from iolab.stats import checks, paired, unpaired
from iolab.stats.kinds import TEST_KINDS, UNPAIRED, Test

BOUNDARIES = ("bonferroni", "calibrated")
SEQUENTIAL_TESTS = TEST_KINDS
SIMULATIONS = 20000


@dataclass(frozen=True)
class Sequential:
    """How an adaptive run's verdicts are made: alpha split evenly over the
    primary comparisons, then over the looks by the boundary."""

    alpha: float  # the table's alpha
    comparisons: int  # alpha is split over this many (primary) comparisons ...
    first_look: int  # ... and over looks after rounds first_look..last_look
    last_look: int
    boundary: str
    look_alpha: float  # each comparison is significant when p < look_alpha
    test: Test = UNPAIRED

    @property
    def looks(self) -> int:
        return self.last_look - self.first_look + 1


def _mwu_minima(first: int, last: int, simulations: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base, cand = rng.random((simulations, last)), rng.random((simulations, last))
    smallest = np.ones(simulations)
    u = np.zeros(simulations, dtype=np.int64)  # U of the baseline over the first n rounds
    for n in range(1, last + 1):
        b, c = base[:, n - 1 : n], cand[:, n - 1 : n]
        u += np.sum(b > cand[:, :n], axis=1) + np.sum(base[:, : n - 1] > c, axis=1)
        if n >= first:
            np.minimum(smallest, unpaired.untied_p_by_u(n, n)[u], out=smallest)
    return smallest


def _signed_rank_minima(first: int, last: int, simulations: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = rng.standard_normal((simulations, last))
    size, up = np.abs(d), d > 0
    smallest = np.ones(simulations)
    t = np.zeros(simulations, dtype=np.int64)  # sum of the ranks of the positive d so far
    for n in range(1, last + 1):
        new = size[:, n - 1 : n]
        larger = size[:, : n - 1] > new  # earlier values the new one pushes up one rank
        t += np.sum(larger & up[:, : n - 1], axis=1)
        t += np.where(up[:, n - 1], 1 + np.sum(~larger, axis=1), 0)
        if n >= first:
            np.minimum(smallest, paired.untied_p_by_t(n)[t], out=smallest)
    return smallest


@lru_cache(maxsize=64)
def _min_p_over_looks(first: int, last: int, test: Test, simulations: int, seed: int) -> np.ndarray:
    """Sorted smallest p over looks first..last of simulated runs with no difference."""
    simulate = _mwu_minima if test == UNPAIRED else _signed_rank_minima
    minima = np.sort(simulate(first, last, simulations, seed))
    minima.flags.writeable = False
    return minima


def sequential_alpha(alpha: float, first_look: int, last_look: int, boundary: str = "calibrated", *,
                     test: Test = UNPAIRED, simulations: int = SIMULATIONS, seed: int = 0) -> float:
    """The level of each look (module docstring). "calibrated" returns the
    value at index ``floor(alpha * simulations)`` of the sorted minima, so
    that the share of simulated runs with any p below it is <= alpha, capped
    at alpha. Deterministic (seeded) and cached."""
    alpha = checks.fraction("alpha", alpha)
    checks.positive_int("first_look", first_look)
    checks.positive_int("last_look", last_look)
    if last_look < first_look:
        raise checks.Refusal(f"last_look ({last_look}) < first_look ({first_look})")
    if boundary not in BOUNDARIES:
        raise checks.Refusal(f"boundary must be one of {BOUNDARIES}, got {boundary!r}")
    if test not in SEQUENTIAL_TESTS:
        raise checks.Refusal(f"test must be one of {SEQUENTIAL_TESTS}, got {test!r}")
    if boundary == "bonferroni":
        return alpha / (last_look - first_look + 1)
    checks.positive_int("simulations", simulations, 1000)
    minima = _min_p_over_looks(first_look, last_look, test, simulations, seed)
    return min(alpha, float(minima[int(math.floor(alpha * simulations))]))


def level(alpha: float, comparisons: int, first_look: int, last_look: int, test: Test,
          boundary: str = "calibrated") -> Sequential:
    """The per-look level of an adaptive run whose ``comparisons`` primary
    comparisons share ``alpha`` (Bonferroni over them, then the boundary)."""
    share = alpha / max(1, comparisons)
    look_alpha = sequential_alpha(share, first_look, last_look, boundary, test=test)
    return Sequential(alpha, comparisons, first_look, last_look, boundary, look_alpha, test)
