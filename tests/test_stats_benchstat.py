"""iolab's unpaired statistics against benchstat's.

Fixed cases (always run): tests/fixtures/benchstat/cases.json holds samples
and what benchstat's own library (go-moremath ``stats``, the code benchstat
links) computes for them, full precision; regenerate with the Go program
beside it. Live cases: where a benchstat binary is installed
(``go install golang.org/x/perf/cmd/benchstat@latest``), the same samples
and random ones go through the real command and its printed p must be
iolab's p rounded to 3 decimals.
"""

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from iolab import stats as S
from iolab.stats import unpaired

CASES = json.loads((Path(__file__).parent / "fixtures" / "benchstat" / "cases.json").read_text())["cases"]


def _ids():
    return [f"{len(c['old'])}+{len(c['new'])}" + ("-err" if c["error"] else "") for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_p_equals_benchstat_library(case):
    p, method, _ = S.mwu(case["old"], case["new"])
    if case["error"]:
        assert case["error"] == "all samples are equal"
        assert math.isnan(p) and method == "all-equal"  # refused, not a number
        return
    ties = len(set(case["old"] + case["new"])) < len(case["old"]) + len(case["new"])
    exact = unpaired.exact_region(len(case["old"]), len(case["new"]), ties)
    assert method == ("exact" if exact else "asymptotic")
    assert p == pytest.approx(case["p"], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("case", CASES, ids=_ids())
def test_median_ci_as_tight_as_benchstat(case):
    for values, (median, low, high) in zip((case["old"], case["new"]), case["median_ci"]):
        s = S.summarize(values)
        assert s.center == pytest.approx(median, rel=1e-12, abs=1e-12)
        if math.isinf(low) or math.isinf(high):
            assert len(values) < 6 and math.isnan(s.low) and math.isnan(s.high)
        elif len(values) <= 30:  # benchstat counts exactly up to 30: the same order statistics
            assert (s.low, s.high) == (low, high)
        else:  # beyond, benchstat approximates; iolab's exact count is never wider
            assert low <= s.low and s.high <= high


def test_median_ci_orders_match_benchstat_rule_hand_checked():
    # n = 8: the greedy widening stops at X_(1)..X_(7), coverage 1 - (1 + 1 + 8)/256 = 0.961
    assert S.median_ci_orders(8) == (1, 7, pytest.approx(0.9609375))
    assert S.median_ci_orders(10)[:2] == (2, 9)  # symmetric here
    assert S.median_ci_orders(5)[0] == 0  # no lower bound: n = 5 cannot reach 95% on both sides


def test_exact_p_with_ties_is_the_full_permutation_p():
    old, new = [1.0, 2.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 4.0, 5.0, 6.0]
    pooled = np.array(old + new)
    import itertools
    from scipy.stats import rankdata
    ranks = rankdata(pooled)
    n1 = len(old)
    u_obs = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    small = min(u_obs, n1 * len(new) - u_obs)
    us = [ranks[list(idx)].sum() - n1 * (n1 + 1) / 2 for idx in itertools.combinations(range(pooled.size), n1)]
    by_hand = 2 * sum(u <= small + 1e-9 for u in us) / len(us)
    p, method, _ = S.mwu(old, new)
    assert method == "exact" and p == pytest.approx(by_hand)


def _benchstat() -> str | None:
    found = shutil.which("benchstat")
    if found:
        return found
    gopath = os.environ.get("GOPATH") or str(Path.home() / "go")
    candidate = Path(gopath) / "bin" / "benchstat"
    return str(candidate) if candidate.exists() else None


BENCHSTAT = _benchstat()


def _live_p(tmp_path, old, new) -> float | None:
    for name, values in (("old", old), ("new", new)):
        (tmp_path / name).write_text("".join(f"BenchmarkA 1 {v!r} ns/op\n" for v in values))
    out = subprocess.run([BENCHSTAT, str(tmp_path / "old"), str(tmp_path / "new")], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    found = re.search(r"p=([0-9.]+) n=", out)
    return float(found.group(1)) if found else None


@pytest.mark.skipif(BENCHSTAT is None, reason="no benchstat binary (go install golang.org/x/perf/cmd/benchstat@latest)")
def test_p_equals_real_benchstat(tmp_path):
    rng = np.random.default_rng(2024)
    samples = [(c["old"], c["new"]) for c in CASES if not c["error"]]
    for n1, n2, step in [(6, 6, 0), (10, 10, 0.5), (8, 11, 0), (20, 20, 0.25), (30, 30, 0)]:
        for _ in range(3):
            old, new = rng.normal(100, 3, n1), rng.normal(102, 3, n2)
            if step:
                old, new = np.round(old / step) * step, np.round(new / step) * step
            samples.append((old.tolist(), new.tolist()))
    checked = 0
    for old, new in samples:
        if min(old) <= 0 or min(new) <= 0:  # benchstat scales units; keep positive timings
            shift = 1 - min(old + new)
            old, new = [v + shift for v in old], [v + shift for v in new]
        printed = _live_p(tmp_path, old, new)
        p, _, _ = S.mwu(old, new)
        if printed is None:  # benchstat prints no p for p=0 exact distributions
            continue
        assert round(p, 3) == pytest.approx(printed, abs=1e-9), (old, new)
        checked += 1
    assert checked >= 20
