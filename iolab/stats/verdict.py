"""A comparison of a candidate with the baseline, and the verdicts of a table.

:class:`Comparison` is what :func:`iolab.stats.unpaired.compare` and
:func:`iolab.stats.paired.compare_paired` return: the delta, its CI, the
p of the test and what the test was, with every caveat in ``warnings``.

:func:`decide` corrects the p-values of one family of comparisons together
and sets each verdict. Holm (default; family-wise error rate) or
Benjamini-Hochberg ("bh"; false discovery rate); "none" leaves p as it is,
for an alpha that is already split (an adaptive run's per-look level) or
for exploratory rows, which are tested each at alpha and marked so.
``p_adjusted < alpha`` is a change, "better" or "worse" by its direction
and ``higher_is_better``; otherwise "same". "insufficient" (too few
samples, every value equal) stays out of the family: no test, no guess.
An exact comparison (iolab.stats.exact: values that do not vary) comes with
its final verdict and no p-value; it stays out of the family too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import scipy  # scipy.stats (2 s to import) loads at its first use, not with every command

from iolab.stats import checks
from iolab.stats.checks import Values
from iolab.stats.kinds import (CORRECTIONS, EXACTNESS, FAMILIES, MWU_METHODS, REFUSALS, TEST_KINDS, VERDICTS, VIEWS,
                               Correction, Exactness, Family, MwuMethod, PAIRED, UNPAIRED, Refused, Test, Verdict, View)
from iolab.stats.summary import Summary

TESTS: dict[Test, str] = {
    "mann-whitney": "Mann-Whitney U",
    "signed-rank": "Wilcoxon signed-rank of per-round ratios",
}


@dataclass(frozen=True)
class Comparison:
    """A candidate against the baseline for one metric.

    ``test``: "mann-whitney" (unpaired) or "signed-rank" (paired by round).
    ``mwu_method``: how its p was computed ("exact", "asymptotic", or ""
    when no test ran; the name is kept from when only Mann-Whitney U ran).
    ``prob_cand_higher``: the direction the test sees (unpaired: P(a
    candidate value exceeds a baseline value), ties half; paired: the share
    of rounds in which the candidate is higher, ties half); 0.5 = no shift.
    ``pairs``: rounds paired (0 for an unpaired test); ``dropped``: rounds
    left out of the pairing because a cell failed or lacked the metric.
    ``min_p``: the smallest p the test can give at these sample sizes.
    ``refusal``: why the verdict is "insufficient": "few" samples, or
    "equal" (every value equal on both sides, or in every round: nothing
    moved at the metric's resolution, and nothing to test).
    ``family``: "primary" (corrected together) or "exploratory" (each at
    alpha, marked so). ``alpha``, ``correction``, ``p_adjusted`` and the
    final ``verdict`` are set by :func:`decide`.
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
    verdict: Verdict
    warnings: tuple[str, ...]
    higher_is_better: bool
    view: View
    mwu_method: MwuMethod
    prob_cand_higher: float
    alpha: float
    correction: Correction | Literal[""]  # "" until decide() corrects its family
    test: Test = UNPAIRED
    pairs: int = 0
    dropped: int = 0
    min_p: float = math.nan
    family: Family = "primary"
    refusal: Refused = ""  # why no test ran: "few" (too few samples), "equal" (every value equal: no change seen),
    # "hosts" (a queued run whose rounds came from hosts that differ in a checked environment key)
    exact: Exactness | None = None  # an exact comparison: no test, the delta as measured (iolab.stats.exact)
    tolerance: float = 0.0  # the relative width within which an exact comparison's values counted as deterministic
    # an exact comparison of values that vary: the smallest relative change they can show (iolab.stats.exact.resolution)
    resolution: float = 0.0

    def __post_init__(self) -> None:
        """Every choice is one of its type's values (iolab.stats.kinds): a
        misspelt verdict or test fails here, not as a blank in a report."""
        for name, allowed in (("verdict", VERDICTS), ("view", VIEWS), ("mwu_method", MWU_METHODS),
                              ("correction", ("", *CORRECTIONS)), ("test", TEST_KINDS), ("family", FAMILIES),
                              ("refusal", REFUSALS), ("exact", (None, *EXACTNESS))):
            if getattr(self, name) not in allowed:
                raise checks.Refusal(f"Comparison.{name} must be one of {allowed}, got {getattr(self, name)!r}")

    @property
    def test_name(self) -> str:
        return TESTS.get(self.test, self.test)


def adjust_pvalues(ps: Values, method: Correction = "holm") -> np.ndarray:
    """Adjusted p-values, in the input order.

    "holm": step-down Holm-Bonferroni (sort ascending, multiply the i-th
    smallest, from 0, by ``m - i``, running maximum, cap 1); "bh":
    Benjamini-Hochberg (``scipy.stats.false_discovery_control``); "none":
    unchanged.
    """
    p = np.asarray(ps, dtype=float)
    if p.ndim != 1:
        raise checks.Refusal("p-values must be a flat sequence")
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise checks.Refusal(f"p-values must be in [0, 1], got {p.tolist()}")
    if method not in CORRECTIONS:
        raise checks.Refusal(f"method must be one of {CORRECTIONS}, got {method!r}")
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bh":
        return np.asarray(scipy.stats.false_discovery_control(p, method="bh"), dtype=float)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def direction(c: Comparison) -> int:
    """+1 if the candidate is higher, -1 if lower, 0 if undetermined: the
    sign of delta, or when that is 0 or undefined the side the test saw."""
    if math.isfinite(c.delta) and c.delta != 0:
        return 1 if c.delta > 0 else -1
    if math.isfinite(c.prob_cand_higher) and c.prob_cand_higher != 0.5:
        return 1 if c.prob_cand_higher > 0.5 else -1
    return 0


def _caveats(c: Comparison, significant: bool, ptext: str, alpha: float) -> list[str]:
    """Disagreements between the test, the delta CI and the center."""
    found = []
    ci_ok = math.isfinite(c.delta_low) and math.isfinite(c.delta_high)
    ci_text = f"[{checks.pct(c.delta_low)}, {checks.pct(c.delta_high)}]" if ci_ok else ""
    if significant:
        if ci_ok and c.delta_low <= 0 <= c.delta_high:
            found.append(f"significant ({ptext}) but the delta CI {ci_text} includes 0")
        seen = np.sign(c.prob_cand_higher - 0.5)
        if math.isfinite(c.delta) and c.delta != 0 and seen != 0 and seen != direction(c):
            found.append("center and rank test disagree on the direction of the change")
    elif ci_ok and (c.delta_low > 0 or c.delta_high < 0):
        found.append(f"delta CI {ci_text} excludes 0 but the test is not significant ({ptext}, "
                     f"alpha={alpha:.3g})")
    return found


def decide(comparisons: Sequence[Comparison], alpha: float = 0.05, method: Correction = "holm",
           family: Family = "primary") -> list[Comparison]:
    """Correct the p-values of one family together and set the verdicts.

    Warnings added: a significant result whose delta CI contains 0, a delta
    CI that excludes 0 without significance, center and test pointing in
    opposite directions, and sample sizes so small that the test cannot
    reach the first step's level. Comparisons must not be decided already;
    returns new objects, in the input order.
    """
    alpha = checks.fraction("alpha", alpha)
    if method not in CORRECTIONS:
        raise checks.Refusal(f"method must be one of {CORRECTIONS}, got {method!r}")
    if family not in FAMILIES:
        raise checks.Refusal(f"family must be one of {FAMILIES}, got {family!r}")
    for c in comparisons:
        if c.correction or not math.isnan(c.alpha):
            raise checks.Refusal("comparison already decided; decide() takes the output of compare()")
    idx = [i for i, c in enumerate(comparisons) if c.verdict != "insufficient" and c.exact is None]
    adjusted = adjust_pvalues([comparisons[i].p for i in idx], method)
    m = len(idx)
    out = [replace(c, alpha=alpha, correction=method, family=family) for c in comparisons]
    name = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": ""}[method]
    first_step = alpha if method == "none" else alpha / max(1, m)
    for i, pa in zip(idx, adjusted):
        c, pa = comparisons[i], float(pa)
        ptext = f"p={c.p:.3g}" if method == "none" else f"p={c.p:.3g}, {name} p={pa:.3g}"
        significant = pa < alpha and direction(c) != 0
        verdict: Verdict = "same"
        if significant:
            verdict = "better" if (direction(c) > 0) == c.higher_is_better else "worse"
        w = list(c.warnings) + _caveats(c, significant, ptext, alpha)
        if math.isfinite(c.min_p) and c.min_p >= first_step:
            level = f"{alpha:.3g}" if method == "none" else f"alpha/{m} = {alpha / m:.3g}"
            sizes = f"{c.pairs} rounds" if c.test == PAIRED else f"{c.n_base} and {c.n_cand} samples"
            w.append(f"with {sizes} the smallest possible p is {c.min_p:.3g}, not below {level}: "
                     f"no change could have been found; run more rounds")
            if not significant:  # the test could not have said anything: refuse, never "same"
                out[i] = replace(out[i], p_adjusted=pa, verdict="insufficient", refusal="few",
                                 warnings=tuple(w))
                continue
        out[i] = replace(out[i], p_adjusted=pa, verdict=verdict, warnings=tuple(w))
    return out
