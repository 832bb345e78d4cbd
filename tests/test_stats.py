import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as sps

from iolab import stats as S


def coverage(n, lo, hi):
    """P(lo <= B < hi), B ~ Bin(n, 1/2): the coverage of [X_(lo), X_(hi)]."""
    return sum(math.comb(n, j) for j in range(lo, hi)) / 2**n


# --- summarize: median -------------------------------------------------------

@pytest.mark.parametrize("n, lo, hi", [(6, 1, 6), (8, 1, 7), (10, 2, 9), (20, 6, 15)])
def test_median_ci_order_statistics_reach_the_confidence(n, lo, hi):
    assert coverage(n, lo, hi) >= 0.95  # the hand table itself
    assert coverage(n, lo + 1, hi) < 0.95 and coverage(n, lo, hi - 1) < 0.95  # and none narrower
    rng = np.random.default_rng(n)
    x = rng.permutation(np.arange(1.0, n + 1))  # value == its rank
    s = S.summarize(x)
    assert (s.low, s.high) == (float(lo), float(hi))
    assert s.center == (n + 1) / 2
    assert s.rel_spread == pytest.approx((hi - lo) / 2 / ((n + 1) / 2))
    assert s.warnings == ()


def test_median_ci_needs_six_samples_at_95():
    assert S.median_ci_min_n(0.95) == 6
    assert S.median_ci_min_n(0.99) == 8  # 2/2**8 < 0.01 <= 2/2**7
    s = S.summarize([3.0, 1.0, 2.0, 5.0, 4.0])
    assert math.isnan(s.low) and math.isnan(s.high) and math.isnan(s.rel_spread)
    assert s.center == 3.0
    assert s.warnings == ("need >= 6 samples for a 95% CI of the median, have 5",)


def test_median_ci_coverage_is_at_least_nominal():
    # n=10 uses X_(2)..X_(9): exact coverage 1 - 2*11/1024 = 0.9785 for any
    # continuous distribution; a skewed one must not break it. n=8 uses the
    # asymmetric X_(1)..X_(7), 0.961.
    rng = np.random.default_rng(7)
    true_median = math.log(2)
    hits = 0
    trials = 800
    for _ in range(trials):
        s = S.summarize(rng.exponential(1.0, 10))
        hits += s.low <= true_median <= s.high
    assert hits / trials > 0.96  # 3.7 sd below 0.9785; k=3 (0.89) would fail
    hits8 = sum(S.summarize(x).low <= true_median <= S.summarize(x).high
                for x in rng.exponential(1.0, (trials, 8)))
    assert hits8 / trials > 0.94  # 0.961 exact; 2.3 sd below


# --- summarize: mean and hmean -------------------------------------------------

def test_mean_ci_is_student_t():
    x = np.array([10.0, 12.0, 11.0, 15.0, 9.0, 13.0])
    s = S.summarize(x, view="mean")
    half = sps.t.ppf(0.975, 5) * x.std(ddof=1) / math.sqrt(6)
    assert s.center == pytest.approx(70 / 6)
    assert s.low == pytest.approx(70 / 6 - half)
    assert s.high == pytest.approx(70 / 6 + half)
    assert s.stddev == pytest.approx(x.std(ddof=1))
    assert s.rel_spread == pytest.approx(x.std(ddof=1) / (70 / 6))
    assert (s.minimum, s.maximum) == (9.0, 15.0)
    s90 = S.summarize(x, view="mean", confidence=0.90)
    assert s90.high - s90.low == pytest.approx(2 * sps.t.ppf(0.95, 5) * x.std(ddof=1) / math.sqrt(6))


def test_mean_ci_of_constant_values_is_a_point():
    s = S.summarize([4.0, 4.0, 4.0], view="mean")
    assert (s.low, s.center, s.high, s.stddev, s.rel_spread) == (4.0, 4.0, 4.0, 0.0, 0.0)


def test_hmean_center_and_inverted_reciprocal_t_interval():
    x = np.array([100.0, 120.0, 80.0, 110.0])
    r = 1 / x
    half = sps.t.ppf(0.975, 3) * r.std(ddof=1) / 2
    s = S.summarize(x, view="hmean")
    assert s.center == pytest.approx(4 / r.sum())
    assert s.low == pytest.approx(1 / (r.mean() + half))
    assert s.high == pytest.approx(1 / (r.mean() - half))
    assert s.low < s.center < s.high
    assert s.rel_spread == pytest.approx(x.std(ddof=1) / x.mean())


def test_hmean_unbounded_ci_is_inf_with_warning():
    s = S.summarize([1.0, 1000.0], view="hmean")
    assert s.high == math.inf and s.low > 0
    assert any("no upper bound" in w for w in s.warnings)


def test_hmean_rejects_non_positive_values():
    with pytest.raises(ValueError):
        S.summarize([1.0, 0.0, 2.0], view="hmean")


def test_one_and_zero_samples():
    s = S.summarize([5.0], view="mean")
    assert s.center == 5.0 and math.isnan(s.stddev) and math.isnan(s.low)
    assert s.warnings == ("need >= 2 samples for a 95% CI of the mean, have 1",)
    e = S.summarize([])
    assert e.n == 0 and math.isnan(e.center) and e.warnings == ("no samples",)


@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf, 1.0], [[1.0, 2.0]]])
def test_summarize_rejects_non_finite_and_nested(bad):
    with pytest.raises(ValueError):
        S.summarize(bad)


def test_summarize_rejects_unknown_view_and_confidence():
    with pytest.raises(ValueError):
        S.summarize([1.0, 2.0], view="geomean")
    with pytest.raises(ValueError):
        S.summarize([1.0, 2.0], confidence=95)


# --- Mann-Whitney U ---------------------------------------------------------------

def test_mwu_untied_small_is_exact():
    base = [1.0, 2.0, 3.0, 4.0]
    cand = [5.0, 6.0, 7.0, 8.0]
    p, method, prob = S.mwu(base, cand)
    assert method == "exact"
    assert p == pytest.approx(2 / math.comb(8, 4))  # complete separation
    assert prob == 1.0
    assert p == pytest.approx(sps.mannwhitneyu(cand, base).pvalue)  # scipy's auto agrees
    assert S.min_possible_p(4, 4) == pytest.approx(2 / 70)
    assert S.min_possible_p(3, 3) == pytest.approx(0.1)


def test_mwu_tied_is_exact_with_the_permutation_distribution_of_ties():
    base = [1.0, 2.0, 2.0, 3.0, 4.0]
    cand = [2.0, 3.0, 4.0, 4.0, 5.0, 6.0]
    p, method, prob = S.mwu(base, cand)
    assert method == "exact"
    assert p == pytest.approx(0.12121212121212122)  # benchstat (go-moremath) on these samples
    assert p > sps.mannwhitneyu(cand, base, method="asymptotic").pvalue * 0.5
    n1, n2 = len(cand), len(base)
    ranks = sps.rankdata(np.array(base + cand))
    assert prob == pytest.approx((ranks[len(base):].sum() - n1 * (n1 + 1) / 2) / (n1 * n2))


def test_mwu_beyond_the_exact_region_is_the_tie_corrected_normal_approximation():
    rng = np.random.default_rng(3)
    base, cand = rng.normal(0, 1, 51), rng.normal(0.5, 1, 51)
    p, method, _ = S.mwu(base, cand)
    assert method == "asymptotic"
    assert p == pytest.approx(sps.mannwhitneyu(cand, base, method="asymptotic").pvalue)
    tied_b, tied_c = np.round(base[:26]), np.round(cand[:26])  # ties: exact only up to 25
    pooled = np.concatenate([tied_b, tied_c])
    ranks = sps.rankdata(pooled)
    u = ranks[:26].sum() - 26 * 27 / 2
    _, counts = np.unique(pooled, return_counts=True)
    var = 26 * 26 / 12 * (53 - (counts**3 - counts).sum() / (52 * 51))
    z = (abs(u - 26 * 26 / 2) - 0.5) / math.sqrt(var)
    p, method, _ = S.mwu(tied_b, tied_c)
    assert method == "asymptotic" and p == pytest.approx(2 * sps.norm.sf(z))
    assert S.mwu(tied_b[:25], tied_c[:25])[1] == "exact"


def test_mwu_untied_up_to_50_is_exact():
    rng = np.random.default_rng(3)
    base, cand = rng.normal(0, 1, 30), rng.normal(0.5, 1, 30)
    p, method, _ = S.mwu(base, cand)
    assert method == "exact"
    assert p == pytest.approx(sps.mannwhitneyu(cand, base, method="exact").pvalue, rel=1e-9)


def test_identical_samples_are_refused_not_given_a_p():
    c = S.compare([7.0] * 5, [7.0] * 5, higher_is_better=True)
    assert c.verdict == "insufficient" and math.isnan(c.p)
    assert any("all 10 values are equal" in w for w in c.warnings)
    assert c.delta == 0.0 and math.isnan(c.delta_low)
    (d,) = S.decide([c])
    assert d.verdict == "insufficient" and math.isnan(d.p_adjusted)
    assert S.mwu([7.0] * 5, [7.0] * 5)[:2] == (pytest.approx(math.nan, nan_ok=True), "all-equal")


@pytest.mark.parametrize("bad", [[1.0, math.nan, 2.0, 3.0], [math.inf, 1.0, 2.0, 3.0]])
def test_nan_and_inf_are_refused(bad):
    with pytest.raises(S.Refusal, match="nan or inf"):
        S.compare(bad, [1.0, 2.0, 3.0, 4.0], higher_is_better=True)
    with pytest.raises(S.Refusal, match="nan or inf"):
        S.compare_paired(bad, [1.0, 2.0, 3.0, 4.0], higher_is_better=True)


# --- compare --------------------------------------------------------------------

def test_insufficient_below_min_n():
    c = S.compare([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0, 5.0], higher_is_better=True)
    assert c.verdict == "insufficient"
    assert "need >= 4 samples per side, have 3 and 5" in c.warnings
    assert math.isnan(c.p) and math.isnan(c.delta_low) and math.isnan(c.delta_high)
    assert c.delta == pytest.approx(3.0 / 2.0 - 1)
    c6 = S.compare([1.0] * 5, [2.0] * 5, higher_is_better=True, min_n=6)
    assert c6.verdict == "insufficient" and "need >= 6 samples per side, have 5 and 5" in c6.warnings
    ok = S.compare([1.0] * 4, [2.0] * 4, higher_is_better=True)
    assert ok.verdict == "same" and ok.p == pytest.approx(2 / 70)


def test_delta_and_bootstrap_are_reproducible():
    rng = np.random.default_rng(11)
    base, cand = rng.normal(100, 3, 12), rng.normal(104, 3, 12)
    a = S.compare(base, cand, higher_is_better=True)
    b = S.compare(list(base), list(cand), higher_is_better=True)
    assert (a.delta_low, a.delta_high) == (b.delta_low, b.delta_high)
    assert a.delta == pytest.approx(np.median(cand) / np.median(base) - 1)
    assert a.delta_low < a.delta < a.delta_high
    other = S.compare(base, cand, higher_is_better=True, seed=1)
    assert (other.delta_low, other.delta_high) != (a.delta_low, a.delta_high)
    assert other.delta_low == pytest.approx(a.delta_low, abs=0.01)


def test_bootstrap_is_an_independent_percentile_bootstrap():
    # same figure as a hand-written percentile bootstrap up to resampling noise
    rng = np.random.default_rng(5)
    base, cand = rng.lognormal(3, 0.1, 10), rng.lognormal(3.05, 0.1, 10)
    c = S.compare(base, cand, higher_is_better=True, view="mean", resamples=20000)
    r = np.random.default_rng(99)
    bi = r.integers(0, 10, (20000, 10))
    ci = r.integers(0, 10, (20000, 10))
    d = cand[ci].mean(1) / base[bi].mean(1) - 1
    lo, hi = np.quantile(d, [0.025, 0.975])
    assert c.delta_low == pytest.approx(lo, abs=0.004)
    assert c.delta_high == pytest.approx(hi, abs=0.004)


def test_hmean_view_delta():
    base, cand = [100.0, 200.0, 100.0, 200.0], [150.0, 150.0, 150.0, 150.0]
    c = S.compare(base, cand, higher_is_better=True, view="hmean")
    assert c.base.center == pytest.approx(400 / 3)
    assert c.delta == pytest.approx(150 / (400 / 3) - 1)


def test_zero_baseline_center_gives_nan_delta_with_warning():
    c = S.compare([0.0, 0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 2.0, 1.0, 1.0], higher_is_better=True)
    assert math.isnan(c.delta) and math.isnan(c.delta_low)
    assert any("baseline center is 0" in w for w in c.warnings)
    (d,) = S.decide([c])
    assert d.verdict == "better"  # direction from the rank test when delta is undefined


def test_compare_rejects_bad_arguments():
    with pytest.raises(ValueError):
        S.compare([1.0] * 4, [1.0] * 4, higher_is_better=True, resamples=100)
    with pytest.raises(ValueError):
        S.compare([1.0] * 4, [1.0] * 4, higher_is_better=True, min_n=0)
    with pytest.raises(ValueError):
        S.compare([1.0] * 4, [math.nan] * 4, higher_is_better=True)


# --- corrections and verdicts ---------------------------------------------------

PS = [0.01, 0.04, 0.03, 0.005]


def test_holm_hand_computed():
    # sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    assert S.adjust_pvalues(PS, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert S.adjust_pvalues([0.5, 0.6], "holm") == pytest.approx([1.0, 1.0])  # capped
    assert S.adjust_pvalues([0.02], "holm") == pytest.approx([0.02])
    assert S.adjust_pvalues([], "holm").size == 0


def test_bh_hand_computed():
    # sorted p*m/rank: 0.02, 0.02, 0.04, 0.04; running min from the top
    assert S.adjust_pvalues(PS, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert S.adjust_pvalues([0.01, 0.02, 0.9], "bh") == pytest.approx([0.03, 0.03, 0.9])


def test_adjust_rejects_bad_input():
    with pytest.raises(ValueError):
        S.adjust_pvalues([0.1, math.nan])
    with pytest.raises(ValueError):
        S.adjust_pvalues([1.5])
    with pytest.raises(ValueError):
        S.adjust_pvalues([0.1], method="bonferroni")


def _with_p(template, ps, delta=0.1):
    return [replace(template, p=p, delta=delta, delta_low=delta / 2, delta_high=delta * 2,
                    prob_cand_higher=0.9 if delta > 0 else 0.1) for p in ps]


@pytest.fixture(scope="module")
def template():
    return S.compare([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                     higher_is_better=True)


def test_decide_holm_and_bh_fill_p_adjusted(template):
    holm = S.decide(_with_p(template, PS), alpha=0.05)
    assert [c.p_adjusted for c in holm] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [c.verdict for c in holm] == ["better", "same", "same", "better"]
    assert all(c.alpha == 0.05 and c.correction == "holm" for c in holm)
    bh = S.decide(_with_p(template, PS), alpha=0.05, method="bh")
    assert [c.p_adjusted for c in bh] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert [c.verdict for c in bh] == ["better"] * 4


def test_decide_leaves_insufficient_out_of_the_family(template):
    short = S.compare([1.0, 2.0], [3.0, 4.0, 5.0, 6.0], higher_is_better=True)
    out = S.decide([short] + _with_p(template, [0.03]))
    assert out[0].verdict == "insufficient" and math.isnan(out[0].p_adjusted)
    assert out[1].p_adjusted == pytest.approx(0.03)  # m = 1, not 2
    assert out[1].verdict == "better"


@pytest.mark.parametrize("shift, higher_is_better, expected", [
    (1.1, True, "better"), (1.1, False, "worse"), (0.9, True, "worse"), (0.9, False, "better"),
])
def test_verdict_direction(shift, higher_is_better, expected):
    rng = np.random.default_rng(2)
    base = rng.normal(100, 1, 10)
    cand = rng.normal(100, 1, 10) * shift
    (c,) = S.decide([S.compare(base, cand, higher_is_better=higher_is_better)])
    assert c.verdict == expected
    assert c.p_adjusted < 1e-3
    assert (c.delta > 0) == (shift > 1)


def test_decide_warns_when_ci_and_test_disagree(template):
    sig_but_ci_has_zero = replace(template, p=0.001, delta=0.02, delta_low=-0.01,
                                  delta_high=0.05, prob_cand_higher=0.9)
    (c,) = S.decide([sig_but_ci_has_zero])
    assert c.verdict == "better"
    assert any("includes 0" in w for w in c.warnings)
    ci_excludes_zero = replace(template, p=0.2, delta=0.02, delta_low=0.01, delta_high=0.05)
    (d,) = S.decide([ci_excludes_zero])
    assert d.verdict == "same"
    assert any("excludes 0 but the test is not significant" in w for w in d.warnings)
    (quiet,) = S.decide(_with_p(template, [0.001]))
    assert not any("0" in w and "CI" in w for w in quiet.warnings)


def test_decide_warns_when_rank_test_and_center_disagree(template):
    odd = replace(template, p=0.001, delta=0.05, delta_low=0.01, delta_high=0.1,
                  prob_cand_higher=0.2)
    (c,) = S.decide([odd])
    assert any("disagree on the direction" in w for w in c.warnings)


def test_decide_warns_when_n_cannot_reach_alpha():
    base, cand = [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]
    two = [S.compare(base, cand, higher_is_better=True) for _ in range(2)]
    out = S.decide(two)
    # 2/70 * 2 > 0.05: the test could not have found a change: refused, not "same"
    assert all(c.verdict == "insufficient" and c.refusal == "few" for c in out)
    assert any("smallest possible p is 0.0286" in w for w in out[0].warnings)
    (single,) = S.decide(two[:1])
    assert single.verdict == "better"
    assert not any("smallest possible p" in w for w in single.warnings)


def test_decide_refuses_decided_input(template):
    once = S.decide([template])
    with pytest.raises(ValueError):
        S.decide(once)
    with pytest.raises(ValueError):
        S.decide([template], method="bonferroni")


def test_a_a_comparisons_are_mostly_same():
    rng = np.random.default_rng(2024)
    comps = [S.compare(rng.lognormal(5, 0.05, 10), rng.lognormal(5, 0.05, 10),
                       higher_is_better=True, resamples=2000) for _ in range(200)]
    # each row its own family: false-positive rate near alpha
    single = [S.decide([c])[0].verdict for c in comps]
    assert single.count("same") / len(single) >= 0.91
    # one table of 20 rows, Holm: almost never any false change
    tables = [S.decide(comps[i:i + 20]) for i in range(0, 200, 20)]
    flagged = sum(any(c.verdict != "same" for c in t) for t in tables)
    assert flagged <= 2


def test_real_change_is_found():
    rng = np.random.default_rng(2025)
    found = 0
    for _ in range(40):
        base = rng.lognormal(5, 0.05, 10)
        cand = rng.lognormal(5, 0.05, 10) * 1.12  # ~2.4 sd: MWU power ~0.97 at n=10
        found += S.decide([S.compare(base, cand, higher_is_better=False, resamples=2000)])[0].verdict == "worse"
    assert found >= 36


# --- trend -----------------------------------------------------------------------

def test_trend_hand_computed_and_against_scipy():
    t = S.trend([1.0, 2.0, 3.0, 4.0, 5.0])
    assert t.tau == pytest.approx(1.0)
    assert t.p == pytest.approx(2 / math.factorial(5))  # exact: 1 of 120 orders, two-sided
    down = S.trend([5.0, 4.0, 3.0, 2.0, 1.0])
    assert down.tau == pytest.approx(-1.0)
    rng = np.random.default_rng(8)
    x = rng.normal(0, 1, 40) + np.linspace(0, 1, 40)
    res = sps.kendalltau(np.arange(40), x)
    assert S.trend(x) == (pytest.approx(res.statistic), pytest.approx(res.pvalue))
    # hand count of concordant minus discordant pairs
    y = [3.0, 1.0, 2.0, 5.0, 4.0]
    s = sum(np.sign(y[j] - y[i]) for i in range(5) for j in range(i + 1, 5))
    assert S.trend(y).tau == pytest.approx(s / 10)


def test_trend_degenerate_series():
    assert S.trend([4.0, 4.0, 4.0]) == (0.0, 1.0)
    t = S.trend([4.0])
    assert math.isnan(t.tau) and math.isnan(t.p)


# --- outliers ------------------------------------------------------------------------

def test_outliers_tukey_fences_hand_computed():
    # Q1 = 11.25, Q3 = 13.75 (linear), IQR 2.5 -> fences 7.5 and 17.5
    x = [10.0, 11.0, 12.0, 13.0, 14.0, 100.0]
    assert S.outliers(x) == [5]
    assert S.outliers([7.4, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]) == []  # Q1=10.5,Q3=13.5 -> 6.0
    assert S.outliers([5.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 30.0]) == [0, 7]
    assert S.outliers([1.0, 2.0, 1000.0]) == []  # fewer than 4 values
    assert S.outliers([5.0, 5.0, 5.0, 5.0, 5.0, 6.0]) == [5]  # IQR 0


def test_outliers_value_on_fence_is_kept():
    # 1..8: Q1 = 2.75, Q3 = 6.25, IQR 3.5 -> upper fence 11.5
    x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 11.5]
    q1, q3 = np.percentile(x, [25, 75])
    fence = q3 + 1.5 * (q3 - q1)
    x2 = x[:-1] + [fence]
    assert S.outliers(x2) == []
    assert S.outliers(x2[:-1] + [fence + 1e-9]) == [8]


# --- detectable change ----------------------------------------------------------------

def _power(rng, gen, n, f, sims=3000):
    base, cand = gen(rng, (sims, n)), gen(rng, (sims, n))
    return float(np.mean(sps.mannwhitneyu(cand * (1 + f), base, axis=1).pvalue < 0.05))


@pytest.mark.parametrize("name, gen", [
    ("lognormal 2%", lambda r, size: np.exp(r.normal(0.0, 0.02, size))),
    ("skewed", lambda r, size: 100.0 + r.exponential(3.0, size)),
])
def test_detectable_change_has_the_promised_power(name, gen):
    rng = np.random.default_rng(12)
    values = gen(rng, 2000)  # the noise model should match the truth closely
    f = S.detectable_change(values, 10)
    assert 0.005 < f < 0.2
    assert _power(rng, gen, 10, f) == pytest.approx(0.9, abs=0.04)
    assert _power(rng, gen, 10, f * 0.6) < 0.8  # the smallest: much less would not do


def test_detectable_change_orders_and_edges():
    rng = np.random.default_rng(4)
    quiet = np.exp(rng.normal(0, 0.01, 30))
    noisy = np.exp(rng.normal(0, 0.04, 30))
    assert S.detectable_change(quiet, 10) < S.detectable_change(noisy, 10)
    assert S.detectable_change(noisy, 20) < S.detectable_change(noisy, 10) < S.detectable_change(noisy, 5)
    assert S.detectable_change(noisy, 10, power=0.8) < S.detectable_change(noisy, 10, power=0.95)
    assert S.detectable_change(noisy, 3) == math.inf  # min p 0.1 >= 0.05
    assert S.detectable_change([5.0, 5.0, 5.0], 10) == 0.0
    assert S.detectable_change(noisy, 10) == S.detectable_change(list(noisy), 10)  # seeded
    with pytest.raises(ValueError):
        S.detectable_change([1.0, -1.0, 2.0], 10)
    with pytest.raises(ValueError):
        S.detectable_change([1.0], 10)


def test_detectable_change_is_fast():
    import time
    values = np.exp(np.random.default_rng(0).normal(0, 0.03, 10))
    t = time.perf_counter()
    S.detectable_change(values, 10)
    assert time.perf_counter() - t < 0.5


# --- sequential stopping ------------------------------------------------------------------

# --- per-comparison alpha, sequential boundary, A/A rate -----------------------------

def test_decide_none_tests_each_comparison_at_alpha(template):
    weak = replace(template, p=0.004)
    decided = S.decide([template, weak, weak], alpha=0.005, method="none")
    assert [c.p_adjusted for c in decided] == [template.p, 0.004, 0.004]
    assert template.p > 0.005  # Holm over 3 would need 0.0017 for the first; none: each at 0.005
    assert [c.verdict for c in decided] == ["same", "better", "better"]
    assert S.decide([replace(template, p=0.006)], alpha=0.005, method="none")[0].verdict == "same"
    assert S.adjust_pvalues([0.2, 0.01], "none").tolist() == [0.2, 0.01]


def test_sequential_alpha_rules():
    assert S.sequential_alpha(0.05, 5, 30, "bonferroni") == pytest.approx(0.05 / 26)
    calibrated = S.sequential_alpha(0.05, 5, 30)
    assert 0.05 / 26 < calibrated < 0.05
    assert S.sequential_alpha(0.05, 5, 30) == calibrated  # seeded, cached
    assert S.sequential_alpha(0.05, 10, 10) == 0.05  # one look: the test's own level (capped)
    assert S.sequential_alpha(0.01, 5, 30) < calibrated
    # the first looks use the exact test: the boundary is one of its p-values
    # (2/70 at n=4 is the smallest, so 4..10 needs a value at or below it)
    assert S.sequential_alpha(0.05, 4, 10) <= S.min_possible_p(4, 4)
    for bad in [(0.05, 0, 5), (0.05, 6, 5), (1.5, 4, 5)]:
        with pytest.raises(ValueError):
            S.sequential_alpha(*bad)
    with pytest.raises(ValueError):
        S.sequential_alpha(0.05, 4, 5, "pocock-normal")


def test_calibrated_boundary_keeps_the_false_positive_rate_at_alpha():
    # fresh simulation with another seed and a skewed distribution: the
    # boundary, calibrated on uniform values, holds (the rank test is
    # distribution-free); the Bonferroni boundary is far below alpha
    looks_first, looks_last, runs = 5, 30, 6000
    rng = np.random.default_rng(12345)
    base = rng.lognormal(3, 0.5, (runs, looks_last))
    cand = rng.lognormal(3, 0.5, (runs, looks_last))
    level = S.sequential_alpha(0.05, looks_first, looks_last)
    smallest = np.ones(runs)
    for n in range(looks_first, looks_last + 1):  # iolab's test is exact up to 50 per side
        smallest = np.minimum(smallest, sps.mannwhitneyu(cand[:, :n], base[:, :n], axis=1, method="exact").pvalue)
    rate = np.mean(smallest < level)
    assert 0.05 - 0.009 < rate <= 0.05 + 0.009  # 3.2 sd of 6000 runs
    assert np.mean(smallest < 0.05 / 26) < 0.015
    assert np.mean(smallest < 0.05) > 0.15  # alpha at every look: the problem this solves


def test_aa_rate_enumerates_subsets_and_knows_the_null():
    rng = np.random.default_rng(3)
    a, b = rng.normal(100, 1, 6), rng.normal(100, 1, 6)
    rate = S.aa_false_positive_rate(a, b)
    assert (rate.k, rate.subsets) == (4, 15)  # C(6, 4): smallest k that can reach 0.05
    # at 4 per side only complete separation (2 of 70 orders) gives p < 0.05
    assert rate.expected == pytest.approx(2 / 70, abs=0.005)
    hits = sum(S.mwu(a[list(r)], b[list(r)])[0] < 0.05 for r in itertools.combinations(range(6), 4))
    assert rate.observed == hits / 15
    shifted = S.aa_false_positive_rate(a, a + 10)
    assert shifted.observed == 1.0
    big = S.aa_false_positive_rate(rng.normal(0, 1, 40), rng.normal(0, 1, 40), subsets=500)
    assert (big.k, big.subsets) == (20, 500)
    assert 0.0 <= big.observed < 0.2 and big.expected == pytest.approx(0.05, abs=0.01)
    few = S.aa_false_positive_rate([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert math.isnan(few.observed) and few.warnings == ("need >= 4 rounds for subsets of 4, have 3",)
    with pytest.raises(ValueError):
        S.aa_false_positive_rate([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        S.aa_false_positive_rate(a, b, k=3)  # 3 per side can never reach 0.05


def test_kendall_matches_scipy_and_hand_count():
    x, y = [1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]
    # 6 pairs: 5 concordant, 1 discordant -> tau = (5 - 1) / 6
    k = S.kendall(x, y)
    assert k.tau == pytest.approx(4 / 6)
    assert k.p == pytest.approx(sps.kendalltau(x, y).pvalue)
    assert math.isnan(S.kendall([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]).tau)
    with pytest.raises(ValueError):
        S.kendall([1.0, 2.0], [1.0])


def test_a_comparison_holds_only_the_values_of_its_choices():
    """Verdict, test, family, refusal, view and method are types
    (iolab.stats.kinds): a misspelt one is refused when the comparison is
    made, not shown as a blank or a wrong mark in a report."""
    made = S.compare([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0], higher_is_better=True)
    assert made.verdict in S.VERDICTS and made.test in S.TESTS and made.mwu_method == "exact"
    for field, bad in (("verdict", "significant"), ("test", "t-test"), ("family", "secondary"),
                       ("refusal", "too few"), ("view", "p99"), ("mwu_method", "approximate"), ("exact", "same")):
        with pytest.raises(S.Refusal, match=f"Comparison.{field} must be one of"):
            replace(made, **{field: bad})
