"""The choices the statistics make and report, as types.

Each is a ``Literal`` of the strings that also appear in the JSON report, the
store and the goldens (so they travel as they always did), with the tuple of
its values for checks and loops (``typing.get_args`` of the type, so the two
cannot disagree):

    View        the central value: median, mean, harmonic mean
    Test        the test of a comparison: exact Mann-Whitney U (unpaired), or
                Wilcoxon signed-rank of per-round ratios (paired by round)
    Verdict     better | worse | same | insufficient (no verdict: too few samples, ...)
    Family      primary (corrected together) | exploratory (each at alpha)
    Correction  holm | bh | none, or "" before a family is decided
    Refused     why a comparison has no test: few samples, every value equal, rounds
                from hosts that differ; "" when it was tested
    MwuMethod   how the test's p was computed: exact | asymptotic; "" when no test ran
    Exactness   how an exact comparison (iolab.stats.exact) knows its values do not
                vary: identical | within the tolerance | paired (equal in every round)
"""

from __future__ import annotations

from typing import Literal, get_args

View = Literal["median", "mean", "hmean"]
Test = Literal["mann-whitney", "signed-rank"]
Verdict = Literal["better", "worse", "same", "insufficient"]
Family = Literal["primary", "exploratory"]
Correction = Literal["holm", "bh", "none"]
Refused = Literal["", "few", "equal", "hosts"]
MwuMethod = Literal["exact", "asymptotic", ""]
Exactness = Literal["identical", "tolerance", "paired"]

VIEWS: tuple[View, ...] = get_args(View)
TEST_KINDS: tuple[Test, ...] = get_args(Test)
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
FAMILIES: tuple[Family, ...] = get_args(Family)
CORRECTIONS: tuple[Correction, ...] = get_args(Correction)
REFUSALS: tuple[Refused, ...] = get_args(Refused)
MWU_METHODS: tuple[MwuMethod, ...] = get_args(MwuMethod)
EXACTNESS: tuple[Exactness, ...] = get_args(Exactness)
PAIRED: Test = "signed-rank"
UNPAIRED: Test = "mann-whitney"
