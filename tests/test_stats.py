import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as sps

from iolab import stats as S


def binom_median_ci_rank(n, confidence=0.95):
    """Largest k with P(k <= B <= n-k) >= confidence, B ~ Bin(n, 1/2), by hand."""
    best = None
    for k in range(1, n // 2 + 1):
        inside = sum(math.comb(n, j) for j in range(k, n - k + 1)) / 2**n
        if inside >= confidence:
            best = k
    return best


# --- summarize: median -------------------------------------------------------

@pytest.mark.parametrize("n, k", [(6, 1), (10, 2), (20, 6)])
def test_median_ci_order_statistics_match_binomial(n, k):
    assert binom_median_ci_rank(n) == k  # the hand table itself
    rng = np.random.default_rng(n)
    x = rng.permutation(np.arange(1.0, n + 1))  # value == its rank
    s = S.summarize(x)
    assert (s.low, s.high) == (float(k), float(n + 1 - k))
    assert s.center == (n + 1) / 2
    assert s.rel_spread == pytest.approx((n + 1 - 2 * k) / 2 / ((n + 1) / 2))
    assert s.warnings == ()


def test_median_ci_needs_six_samples_at_95():
    assert S.median_ci_min_n(0.95) == 6
    assert S.median_ci_min_n(0.99) == 8  # 2/2**8 < 0.01 <= 2/2**7
    assert binom_median_ci_rank(5) is None
    s = S.summarize([3.0, 1.0, 2.0, 5.0, 4.0])
    assert math.isnan(s.low) and math.isnan(s.high) and math.isnan(s.rel_spread)
    assert s.center == 3.0
    assert s.warnings == ("need >= 6 samples for a 95% CI of the median, have 5",)


def test_median_ci_coverage_is_at_least_nominal():
    # n=10 uses X_(2)..X_(9): exact coverage 1 - 2*11/1024 = 0.9785 for any
    # continuous distribution; a skewed one must not break it.
    rng = np.random.default_rng(7)
    true_median = math.log(2)
    hits = 0
    trials = 800
    for _ in range(trials):
        s = S.summarize(rng.exponential(1.0, 10))
        hits += s.low <= true_median <= s.high
    assert hits / trials > 0.96  # 3.7 sd below 0.9785; k=3 (0.89) would fail


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


def test_mwu_tied_is_asymptotic_with_tie_and_continuity_correction():
    base = [1.0, 2.0, 2.0, 3.0, 4.0]
    cand = [2.0, 3.0, 4.0, 4.0, 5.0, 6.0]
    p, method, prob = S.mwu(base, cand)
    assert method == "asymptotic"
    # by hand: U of cand, normal approximation with tie-corrected variance
    pooled = np.array(base + cand)
    ranks = sps.rankdata(pooled)
    n1, n2 = len(cand), len(base)
    u = ranks[len(base):].sum() - n1 * (n1 + 1) / 2
    _, counts = np.unique(pooled, return_counts=True)
    n = n1 + n2
    var = n1 * n2 / 12 * ((n + 1) - (counts**3 - counts).sum() / (n * (n - 1)))
    z = (abs(u - n1 * n2 / 2) - 0.5) / math.sqrt(var)
    assert p == pytest.approx(2 * sps.norm.sf(z))
    assert prob == pytest.approx(u / (n1 * n2))
    assert p == pytest.approx(sps.mannwhitneyu(cand, base).pvalue)


def test_mwu_large_untied_is_asymptotic():
    rng = np.random.default_rng(3)
    base, cand = rng.normal(0, 1, 9), rng.normal(0.5, 1, 9)
    p, method, _ = S.mwu(base, cand)
    assert method == "asymptotic"
    assert p == pytest.approx(sps.mannwhitneyu(cand, base, method="asymptotic").pvalue)


def test_identical_samples_give_p_one():
    c = S.compare([7.0] * 5, [7.0] * 5, higher_is_better=True)
    assert c.p == 1.0 and c.mwu_method == "all-equal" and c.prob_cand_higher == 0.5
    assert c.delta == 0.0 and c.delta_low == 0.0 and c.delta_high == 0.0
    (d,) = S.decide([c])
    assert d.verdict == "same" and d.p_adjusted == 1.0


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
    assert ok.verdict == "same" and not math.isnan(ok.p)


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
    assert all(c.verdict == "same" for c in out)  # 2/70 * 2 > 0.05
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

def test_should_stop_look_alpha_and_reasons():
    flat = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2]
    d = S.should_stop(flat[:3], flat[:3], round_index=3, max_rounds=10, boundary="bonferroni")
    assert d == (False, d.reason, pytest.approx(0.05 / 7))
    calibrated = S.should_stop(flat[:3], flat[:3], round_index=3, max_rounds=10)
    assert 0.05 / 7 < calibrated.look_alpha < 0.05
    assert "first look after round 4" in d.reason
    far = S.should_stop([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [11.0, 12.0, 13.0, 14.0, 15.0, 16.0],
                        round_index=6, max_rounds=10)
    assert far.stop and far.reason.startswith("significant")  # p = 2/924 < 0.05/7
    four = S.should_stop([1.0, 2.0, 3.0, 4.0], [11.0, 12.0, 13.0, 14.0], round_index=4, max_rounds=10)
    assert not four.stop  # p = 2/70 is not < 0.05/7
    end = S.should_stop(flat, flat, round_index=10, max_rounds=10)
    assert end.stop and end.reason.startswith("budget")


def test_should_stop_for_precision_only_when_ci_contains_zero():
    rng = np.random.default_rng(6)
    base, cand = rng.normal(100, 0.1, 8), rng.normal(100, 0.1, 8)
    d = S.should_stop(base, cand, round_index=8, max_rounds=30, target_halfwidth=0.01)
    assert d.stop and d.reason.startswith("precise")
    wide = S.should_stop(base, cand, round_index=8, max_rounds=30, target_halfwidth=0.0001)
    assert not wide.stop and "half-width" in wide.reason
    off = S.should_stop(base, cand, round_index=8, max_rounds=30, target_halfwidth=0)
    assert not off.stop
    # narrow CI that excludes 0 while p = 2/70 > 0.05/7: more rounds will settle it
    shifted = S.should_stop([100.0, 100.1, 100.2, 100.3], [100.5, 100.6, 100.7, 100.8],
                            round_index=4, max_rounds=10, target_halfwidth=0.01)
    assert not shifted.stop and shifted.reason.startswith("continue")


def test_should_stop_rejects_bad_plans():
    with pytest.raises(ValueError):
        S.should_stop([1.0] * 4, [1.0] * 4, round_index=0, max_rounds=10)
    with pytest.raises(ValueError):
        S.should_stop([1.0] * 4, [1.0] * 4, round_index=11, max_rounds=10)
    with pytest.raises(ValueError):
        S.should_stop([1.0] * 4, [1.0] * 4, round_index=3, max_rounds=3)  # max_rounds < min_n


def test_sequential_false_positive_rate_stays_honest():
    # 400 A/A sequences, one sample per side per round, up to 10 rounds,
    # precision stopping off (the worst case for false positives).
    rng = np.random.default_rng(99)
    sequences, max_rounds = 400, 10
    base = rng.lognormal(0, 0.05, (sequences, max_rounds))
    cand = rng.lognormal(0, 0.05, (sequences, max_rounds))
    false_pos = 0
    for b, c in zip(base, cand):
        for r in range(1, max_rounds + 1):
            d = S.should_stop(b[:r], c[:r], round_index=r, max_rounds=max_rounds, target_halfwidth=0)
            if d.stop:
                false_pos += d.reason.startswith("significant")
                break
    assert false_pos / sequences <= 0.05 + 0.02
    # the naive rule (alpha at every look) on the same draws: the simulation can see the problem
    naive = np.zeros(sequences, dtype=bool)
    for r in range(4, max_rounds + 1):
        naive |= sps.mannwhitneyu(cand[:, :r], base[:, :r], axis=1).pvalue < 0.05
    assert naive.mean() > 0.05 + 0.02


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
    for n in range(looks_first, looks_last + 1):
        method = "exact" if n <= 8 else "asymptotic"
        smallest = np.minimum(smallest, sps.mannwhitneyu(cand[:, :n], base[:, :n], axis=1, method=method).pvalue)
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
