"""The paired test by round: exact signed-rank, Hodges-Lehmann CI, refusals, looks, power."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from iolab import stats as S
from iolab.stats import paired


def brute_force_p(d):
    """Sign-flip permutation p of the Pratt signed-rank statistic, by enumeration."""
    d = np.asarray(d, float)
    ranks = sps.rankdata(np.abs(d))
    nz = d != 0
    observed = ranks[nz & (d > 0)].sum()
    mean = ranks[nz].sum() / 2
    stats_ = [sum(r for r, s in zip(ranks[nz], signs) if s) for signs in itertools.product([0, 1], repeat=int(nz.sum()))]
    return np.mean([abs(t - mean) >= abs(observed - mean) - 1e-9 for t in stats_])


@pytest.mark.parametrize("n", [6, 8, 11, 15])
def test_signed_rank_untied_equals_scipy_exact(n):
    d = np.random.default_rng(n).normal(0.3, 1, n)
    p, m = S.signed_rank(d)
    assert m == n
    assert p == pytest.approx(sps.wilcoxon(d, method="exact").pvalue, rel=1e-12)


def test_signed_rank_with_ties_and_zeros_is_the_full_sign_flip_p():
    d = [0.0, 0.0, 0.1, 0.2, -0.1, 0.3, 0.3, 0.4, 0.05, -0.2]
    p, m = S.signed_rank(d)
    assert m == 8 and p == pytest.approx(brute_force_p(d))


def test_signed_rank_hand_computed():
    # 6 positive differences: only 2 of the 64 sign patterns are as extreme
    assert S.signed_rank([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]) == (pytest.approx(2 / 64), 6)
    assert math.isnan(S.signed_rank([0.0, 0.0, 0.0])[0])


def test_hodges_lehmann_ci_covers_at_the_promised_rate():
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(1500):
        b = rng.lognormal(4, 0.3, 10)
        c = b * 1.05 * np.exp(rng.standard_t(4, 10) * 0.03)  # round noise shared, pair noise heavy-tailed
        cmp = S.compare_paired(b, c, higher_is_better=True)
        hits += cmp.delta_low <= 0.05 <= cmp.delta_high
    assert hits / 1500 > 0.93  # 95% nominal (exact for a symmetric pair noise)


def test_paired_test_ignores_what_both_variants_share():
    rng = np.random.default_rng(9)
    machine = rng.lognormal(0, 0.4, 10)  # the host swings 40% from round to round
    base = 100 * machine * rng.lognormal(0, 0.01, 10)
    cand = 103 * machine * rng.lognormal(0, 0.01, 10)
    (pc,) = S.decide([S.compare_paired(base, cand, higher_is_better=True)])
    (uc,) = S.decide([S.compare(base, cand, higher_is_better=True)])
    assert pc.verdict == "better" and pc.p == pytest.approx(2 / 1024)
    assert uc.verdict == "same"  # the rank test without the pairing sees only the swings
    assert pc.delta == pytest.approx(0.03, abs=0.01) and pc.delta_low < 0.03 < pc.delta_high
    assert pc.test == "signed-rank" and pc.pairs == 10 and pc.test_name.startswith("Wilcoxon")


def test_paired_refusals_are_stated():
    few = S.compare_paired([1.0, 2.0, 3.0, 4.0, 5.0], [1.1, 2.1, 3.1, 4.1, 5.1], higher_is_better=True)
    assert few.verdict == "insufficient" and math.isnan(few.p)
    assert "need >= 6 rounds with both variants for the signed-rank test, have 5" in few.warnings
    same = S.compare_paired([3.0] * 8, [3.0] * 8, higher_is_better=True)
    assert same.verdict == "insufficient" and "same value in all 8 rounds" in same.warnings[-1]
    with pytest.raises(S.Refusal, match="0 or below"):
        S.compare_paired([0.0] * 6, [1.0] * 6, higher_is_better=True)
    with pytest.raises(S.Refusal, match="paired by round"):
        S.compare_paired([1.0] * 6, [1.0] * 7, higher_is_better=True)
    dropped = S.compare_paired(np.arange(1.0, 9), np.arange(1.0, 9) * 1.1, higher_is_better=True, dropped=2)
    assert dropped.dropped == 2 and "2 rounds without both values left out of the pairing" in dropped.warnings


def test_decide_warns_when_few_rounds_cannot_reach_the_level():
    b = np.arange(1.0, 7)
    out = S.decide([S.compare_paired(b, b * 1.1, higher_is_better=True) for _ in range(2)])
    # 2/64 > 0.05/2: no change could have been found: refused, not "same"
    assert all(c.verdict == "insufficient" and c.refusal == "few" for c in out)
    assert any("with 6 rounds the smallest possible p is 0.0312" in w for w in out[0].warnings)


def test_signed_rank_boundary_holds_over_looks():
    level = S.sequential_alpha(0.05, 6, 30, test="signed-rank")
    assert 0.05 / 25 < level < 0.05
    rng = np.random.default_rng(777)  # not the calibration's seed, heavy tails, not its normal
    d = rng.standard_t(2, (5000, 30))
    smallest = np.ones(5000)
    for n in range(6, 31):
        smallest = np.minimum(smallest, sps.wilcoxon(d[:, :n], axis=1, method="exact").pvalue)
    assert np.mean(smallest < level) == pytest.approx(0.05, abs=0.01)
    assert np.mean(smallest < 0.05) > 0.15  # alpha at every look: the problem


def test_detectable_change_paired_has_the_power():
    rng = np.random.default_rng(12)
    noise = rng.normal(0, 0.05, 3000)  # per-round log ratios of an A/A run
    f = S.detectable_change_paired(noise, 12)
    assert 0.01 < f < 0.2
    d = rng.normal(0, 0.05, (3000, 12)) + math.log1p(f)
    power = np.mean(sps.wilcoxon(d, axis=1, method="exact").pvalue < 0.05)
    assert power == pytest.approx(0.9, abs=0.03)
    assert S.detectable_change_paired(noise, 5) == math.inf  # 2/32 >= 0.05
    assert S.detectable_change_paired([0.0, 0.0, 0.0], 10) == 0.0


def test_aa_rate_paired_counts_subsets():
    rng = np.random.default_rng(3)
    machine = rng.lognormal(0, 0.3, 12)
    a, b = 100 * machine * rng.lognormal(0, 0.02, 12), 100 * machine * rng.lognormal(0, 0.02, 12)
    rate = S.aa_false_positive_rate(a, b, test="signed-rank")
    assert (rate.k, rate.subsets) == (6, 924)
    assert rate.expected == pytest.approx(2 / 64)  # exact: only all signs alike at 6 pairs
    hits = sum(paired.signed_rank(np.log(b[list(r)] / a[list(r)]))[0] < 0.05
               for r in itertools.combinations(range(12), 6))
    assert rate.observed == hits / 924
