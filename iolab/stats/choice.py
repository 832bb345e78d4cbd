"""Which test a comparison uses, fixed by the plan before any data.

A test whose smallest possible p cannot pass the corrected level can say
nothing: with 6 rounds the exact signed-rank test's smallest p is 2/2^6 =
0.031, which no Holm family of two can pass at alpha 0.05, while the exact
Mann-Whitney U of the same 6 + 6 values reaches 2/C(12, 6) = 0.002.

:func:`choose` picks, from the rounds, the order and the family size
only, the paired signed-rank test where its smallest p passes the level of
the first step of the correction, otherwise the exact Mann-Whitney U where
that passes, otherwise no test can decide. The values never enter the
choice, so each test keeps its own false-positive rate (bench/aa_rate.py
--planned shows it); choosing after the data, the smaller of two p-values,
would not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from iolab.stats import checks
from iolab.stats.kinds import PAIRED, UNPAIRED, Correction, Test

MOST_ROUNDS = 1000  # the search for the rounds a plan needs stops here


def min_p(test: Test, rounds: int) -> float:
    """The smallest two-sided exact p of ``test`` with ``rounds`` values a
    side (untied): signed-rank 2 / 2^n, Mann-Whitney U 2 / C(2n, n)
    (through logarithms: no overflow at any n)."""
    if rounds < 1:
        return 1.0
    if test == PAIRED:
        return min(1.0, 2.0 * 2.0**-rounds)
    if test == UNPAIRED:
        log_comb = math.lgamma(2 * rounds + 1) - 2 * math.lgamma(rounds + 1)
        return min(1.0, math.exp(math.log(2.0) - log_comb))
    raise checks.Refusal(f"test must be {PAIRED!r} or {UNPAIRED!r}, got {test!r}")


def first_level(alpha: float, comparisons: int, correction: Correction) -> float:
    """The level the smallest p of a family must pass for any change to be
    found: alpha / m under Holm and Benjamini-Hochberg (one change among m),
    alpha uncorrected."""
    alpha = checks.fraction("alpha", alpha)
    return alpha if correction == "none" else alpha / max(1, comparisons)


@dataclass(frozen=True)
class Choice:
    """The planned test of a family of comparisons.

    ``test``: PAIRED, UNPAIRED, or "" when neither can pass ``level``;
    ``min_p``: the smallest p of the chosen test (of the better one when
    none passes); ``needed``: the fewest rounds at which a test could pass
    (``rounds`` when one does already).
    """

    test: Test | Literal[""]
    rounds: int
    comparisons: int
    level: float
    min_p: float
    needed: int

    @property
    def decidable(self) -> bool:
        return bool(self.test)


def fewest_rounds(test: Test, level: float) -> int:
    """The fewest rounds at which ``test``'s smallest p is below ``level``."""
    return next((n for n in range(1, MOST_ROUNDS) if min_p(test, n) < level), MOST_ROUNDS)


def _passing(rounds: int, paired: bool, level: float) -> Test | Literal[""]:
    for test in (PAIRED, UNPAIRED) if paired else (UNPAIRED,):
        if min_p(test, rounds) < level:
            return test
    return ""


def choose(rounds: int, comparisons: int, *, paired: bool, alpha: float = 0.05,
           correction: Correction = "holm") -> Choice:
    """The test for ``comparisons`` primary comparisons over ``rounds`` rounds.

    ``paired``: the order gives every variant a cell in every round, so the
    signed-rank test of per-round ratios may be used.
    """
    checks.positive_int("comparisons", max(1, comparisons))
    level = first_level(alpha, comparisons, correction)
    test = _passing(rounds, paired, level)
    needed = rounds
    if not test:
        needed = next((n for n in range(max(1, rounds), MOST_ROUNDS) if _passing(n, paired, level)), MOST_ROUNDS)
    best = min(min_p(t, rounds) for t in ((PAIRED, UNPAIRED) if paired else (UNPAIRED,)))
    return Choice(test, rounds, comparisons, level, min_p(test, rounds) if test else best, needed)
