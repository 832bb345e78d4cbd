import math

import numpy as np
import pytest

from iolab import histogram as H


def expand(hist):
    return np.repeat(
        np.array(list(hist.keys()), dtype=np.int64),
        np.array(list(hist.values()), dtype=np.int64),
    )


# --- from_fio_bins -----------------------------------------------------------

def test_from_fio_bins_parses_keys_and_drops_zero_counts():
    bins = {"1012": 3, "2048": 0, "980": 5}
    assert H.from_fio_bins(bins) == {980: 5, 1012: 3}


@pytest.mark.parametrize("bins", [{"abc": 1}, {"-5": 1}, {"1.5": 1}, {" 7": 1},
                                  {"10": -1}, {"10": 2.0}, {"10": True}, {10: 1}])
def test_from_fio_bins_rejects_bad_input(bins):
    with pytest.raises(ValueError):
        H.from_fio_bins(bins)


# --- merge / total / mean ----------------------------------------------------

def test_merge_sums_counts_per_bucket():
    a = {100: 1, 200: 2}
    b = {200: 3, 400: 1}
    assert H.merge([a, b]) == {100: 1, 200: 5, 400: 1}
    assert H.merge([]) == {}
    assert H.merge([{5: 0}]) == {}


def test_merge_is_associative_and_commutative():
    rng = np.random.default_rng(1)
    hs = [{int(k): int(c) for k, c in zip(rng.integers(0, 50, 20), rng.integers(1, 9, 20))}
          for _ in range(3)]
    a, b, c = hs
    left = H.merge([H.merge([a, b]), c])
    right = H.merge([a, H.merge([b, c])])
    assert left == right == H.merge([c, a, b])
    assert H.total(left) == H.total(a) + H.total(b) + H.total(c)


def test_total_and_mean_hand_computed():
    h = {100: 1, 200: 2, 400: 1}
    assert H.total(h) == 4
    assert H.mean(h) == (100 + 200 + 200 + 400) / 4 == 225.0
    assert H.total({}) == 0
    with pytest.raises(ValueError):
        H.mean({})


def test_mean_is_exact_for_large_sums():
    # sum 2**53 + 3 and count 2**53 + 1 are not floats; one rounding at the end
    # gives 1 + 2**-52, float accumulation would give 1 + 2**-51
    assert H.mean({1: 2**53, 3: 1}) == 1 + 2**-52


# --- percentile ----------------------------------------------------------------

def test_percentile_hand_computed():
    # 10 samples: 1x100, 4x200, 4x300, 1x1000 -> cumulative 1, 5, 9, 10
    h = {300: 4, 100: 1, 1000: 1, 200: 4}
    assert H.percentile(h, 10) == 100.0     # rank ceil(1.0) = 1
    assert H.percentile(h, 10.1) == 200.0   # rank ceil(1.01) = 2
    assert H.percentile(h, 50) == 200.0     # rank 5
    assert H.percentile(h, 50.5) == 300.0   # rank 6
    assert H.percentile(h, 90) == 300.0     # rank 9
    assert H.percentile(h, 99) == 1000.0    # rank 10
    assert H.percentile(h, 100) == 1000.0
    assert H.percentile(h, 0.001) == 100.0  # rank 1


def test_percentile_rank_is_exact_at_integer_ranks():
    # 1..100 and 1..1000 each in its own bucket: p7 is the 7th sample, p99.9
    # of 1000 the 999th (binary floating point would give the 8th / 1000th).
    h100 = {i: 1 for i in range(1, 101)}
    assert H.percentile(h100, 7) == 7.0
    assert H.percentile(h100, 14) == 14.0
    assert H.percentile(h100, 99) == 99.0
    h1000 = {i: 1 for i in range(1, 1001)}
    assert H.percentile(h1000, 99.9) == 999.0
    assert H.percentile(h1000, 99.99) == 1000.0
    assert H.percentile(h1000, np.float64(99.9)) == 999.0


@pytest.mark.parametrize("seed", range(5))
def test_percentile_equals_numpy_inverted_cdf(seed):
    rng = np.random.default_rng(seed)
    buckets = np.unique(rng.lognormal(10, 1, 40).astype(np.int64))
    h = {int(b): int(c) for b, c in zip(buckets, rng.integers(1, 50, buckets.size))}
    samples = expand(dict(sorted(h.items())))
    n = samples.size
    qs = list(rng.uniform(0.01, 100, 50)) + [1, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100]
    checked = 0
    for q in qs:
        x = q / 100 * n
        if abs(x - round(x)) < 1e-6:
            continue  # exact-integer rank: see test above; numpy rounds up there
        assert H.percentile(h, q) == np.percentile(samples, q, method="inverted_cdf"), q
        checked += 1
    assert checked >= 40


def test_percentiles_matches_percentile_and_keeps_order():
    h = {100: 1, 200: 4, 300: 4, 1000: 1}
    qs = [99, 50, 10]
    got = H.percentiles(h, qs)
    assert list(got) == [99.0, 50.0, 10.0]
    assert got == {q: H.percentile(h, q) for q in (99.0, 50.0, 10.0)}


@pytest.mark.parametrize("q", [0, -1, 100.0001, math.nan, math.inf, "50"])
def test_percentile_rejects_q_outside_range(q):
    with pytest.raises(ValueError):
        H.percentile({1: 1}, q)


def test_percentile_of_empty_histogram_raises():
    with pytest.raises(ValueError):
        H.percentile({}, 50)
    with pytest.raises(ValueError):
        H.percentile({10: 0}, 50)


def test_never_average_percentiles_merged_p99_differs_from_mean_of_p99s():
    fast = {100: 99, 200: 1}       # p99 = 100
    slow = {1000: 90, 5000: 10}    # p99 = 5000
    merged = H.merge([fast, slow])  # 200 samples, rank 198 -> 5000
    assert H.percentile(merged, 99) == 5000.0
    assert H.percentile(merged, 90) == 1000.0  # rank 180 -> cumulative 190 at 1000
