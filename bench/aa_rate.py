"""A/A false-positive rate and power of iolab's verdicts, from recorded real samples.

    .venv/bin/python bench/aa_rate.py [--data FILE ...] [--all-rounds] [--quick]

Data: recordings made by bench/record_aa.py from real fio runs on loop
devices (two identical variants A and A', interleaved, one value of each per
round; default bench/data/aa-samples-*.json). Several files are pooled, round
by round. Rounds the recorder marked disturbed (another engineer's VM or test
run on this shared 2-CPU machine) are left out unless --all-rounds.

Two ways to build an A/A comparison from the rounds:

independent rounds
    A's values from n random rounds, A''s from n *other* random rounds: two
    samples of this setup's real noise (its skew, ties, outliers) that share
    nothing, like two runs made apart. This is the calibration of the test
    itself: the rate should be close to alpha.
same rounds
    A and A' from the same n random rounds, as an interleaved run pairs
    them. Whatever changes the machine from round to round falls on both
    sides alike; the Mann-Whitney U test does not use that pairing, so it
    becomes conservative (a lower rate, and less power) as far as such
    round-to-round changes are part of the noise. iolab notes it in a report
    when it sees it ("rise and fall together from round to round").

fixed n
    2000 comparisons of n rounds (10 and 20). Verdicts as iolab gives them:
    the paired test (iolab.stats.signed_rank of the per-round log ratios,
    the default of an interleaved run) and, for comparison, the unpaired
    Mann-Whitney U (iolab.stats.mwu, exact as benchstat); p < 0.05 for one
    metric; "2 primary": Holm over the default primary rows (BW, p50).
auto
    1000 adaptive runs, each fed rounds one at a time (up to 30 per side),
    with iolab's rule (iolab.run.adaptive, iolab.analysis.sequential_level):
    looks after rounds 5..30, a comparison significant when p < the
    calibrated per-look level of alpha / comparisons, otherwise decided when
    its delta CI is within +-1% and contains 0; the run stops when all are
    decided. The rate is the share of runs that end "significant". Also
    shown: the Bonferroni boundary (alpha / looks, safe but conservative; not
    what iolab uses) and no correction for looks (the mistake it avoids).
planned test
    n = 4..8 rounds, same rounds, 2 primary rows (BW, p50; Holm): the test
    iolab.plan fixes before any data (iolab.stats.choice.choose: signed-rank
    where its smallest p passes alpha/2, else exact Mann-Whitney U), against
    picking per comparison the test with the smaller p after seeing the data
    (the mistake the plan avoids). The family rate must stay at or under alpha.
power
    the same comparisons with A''s values multiplied by 1.05 (a real 5%
    shift on top of real noise); "detected" = significant in the right
    direction.
With independent rounds the paired test pairs A of one round with A' of
another: pseudo-pairs that share nothing, the calibration of the test on
this noise's shape. With same rounds it is what an interleaved run does.

Resamples of one recording overlap, so they are not independent
experiments; the rates describe how the test behaves on this noise. The
delta CI of a percentile row comes from merged histograms in a real report;
here from the per-round values (the recording keeps no histograms).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from iolab import stats
from iolab.stats import paired
from iolab.stats.choice import choose

HERE = Path(__file__).resolve().parent
HEADLINE = ("read_bw", "read_p50", "read_p99")
ALPHA = 0.05
N_FIXED = (10, 20)
FIRST, LAST, TARGET = 5, 30, 0.01


def load(paths: list[Path], all_rounds: bool) -> tuple[list[dict], dict[str, np.ndarray]]:
    """Per metric an array (rounds, 2): A and A' of each kept round, files pooled."""
    documents, rows = [], {m: [] for m in HEADLINE}
    for path in paths:
        document = json.loads(path.read_text())
        documents.append(document)
        skip = set() if all_rounds else set(document.get("disturbed_rounds", []))
        a_name, b_name = (v["name"] for v in document["experiment"]["variant"][:2])
        by_round: dict[int, dict[str, dict[str, float]]] = {}
        for s in document["samples"]:
            by_round.setdefault(s["round"], {})[s["variant"]] = s["metrics"]
        for r in sorted(by_round):
            if a_name in by_round[r] and b_name in by_round[r] and r not in skip:
                for m in HEADLINE:
                    rows[m].append([by_round[r][a_name][m], by_round[r][b_name][m]])
    return documents, {m: np.array(v) for m, v in rows.items()}


def draw(rng: np.random.Generator, rounds: int, n: int, design: str) -> tuple[np.ndarray, np.ndarray]:
    """Round indices of A's and of A''s values."""
    if design == "same":
        picked = rng.choice(rounds, n, replace=False)
        return picked, picked
    picked = rng.choice(rounds, 2 * n, replace=False)
    return picked[:n], picked[n:]


def _p(test: str, a: np.ndarray, b: np.ndarray) -> tuple[float, bool]:
    """p of iolab's test and whether b is higher (the direction it saw)."""
    if test == "paired":
        d = np.log(b) - np.log(a)
        return stats.signed_rank(d)[0], float(np.median(d)) > 0
    p, _, prob = stats.mwu(a, b)
    return p, prob > 0.5


def fixed(data: dict[str, np.ndarray], design: str, comparisons: int, scale: float, seed: int, n: int,
          test: str) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    rounds = len(data[HEADLINE[0]])
    hits = {m: 0 for m in HEADLINE}
    family = 0
    for _ in range(comparisons):
        ia, ib = draw(rng, rounds, n, design)
        ps, right = [], []
        for m in HEADLINE:
            a, b = data[m][ia, 0], data[m][ib, 1] * scale
            p, up = _p(test, a, b)
            ok = up if scale > 1 else True
            hits[m] += p < ALPHA and ok
            ps.append(1.0 if math.isnan(p) else p)
            right.append(ok)
        adjusted = stats.adjust_pvalues(ps[:2], "holm")  # the default primary rows: BW, p50
        family += any(pa < ALPHA and ok for pa, ok in zip(adjusted, right[:2]))
    out = {m: hits[m] / comparisons for m in HEADLINE}
    out["family"] = family / comparisons
    return out


def planned(data: dict[str, np.ndarray], comparisons: int, scale: float, seed: int, n: int) -> tuple[float, float, str]:
    """Family rate (2 primary rows, Holm) with the plan's test, and with the
    smaller p of both tests chosen after the data; the plan's test."""
    test = {"signed-rank": "paired", "mann-whitney": "unpaired", "": ""}[choose(n, 2, paired=True).test]
    rng = np.random.default_rng(seed)
    rounds = len(data[HEADLINE[0]])
    hits_plan = hits_peek = 0
    for _ in range(comparisons):
        ia, ib = draw(rng, rounds, n, "same")
        plan_ps, peek_ps, right = [], [], []
        for m in HEADLINE[:2]:
            a, b = data[m][ia, 0], data[m][ib, 1] * scale
            found = {t: _p(t, a, b) for t in ("paired", "unpaired")}
            p_of = {t: 1.0 if math.isnan(p) else p for t, (p, _) in found.items()}
            plan_ps.append(p_of[test] if test else 1.0)
            best = min(p_of, key=p_of.get)
            peek_ps.append(p_of[best])
            right.append(found[test or best][1] if scale > 1 else True)
        hits_plan += any(pa < ALPHA and ok for pa, ok in zip(stats.adjust_pvalues(plan_ps, "holm"), right))
        hits_peek += any(pa < ALPHA for pa in stats.adjust_pvalues(peek_ps, "holm"))
    return hits_plan / comparisons, hits_peek / comparisons, test or "none"


def _precise(a: np.ndarray, b: np.ndarray) -> bool:
    """The paired delta CI (Hodges-Lehmann of the per-round log ratios, as
    iolab.stats.compare_paired computes it) within +-TARGET and containing 0."""
    _, low, high = paired.hodges_lehmann(np.log(b) - np.log(a), 0.95)
    low, high = np.expm1(low), np.expm1(high)
    return bool(np.isfinite(low) and low <= 0 <= high and (high - low) / 2 <= TARGET)


def looks(data: dict[str, np.ndarray], design: str, runs: int, scale: float, seed: int) -> dict:
    """For every simulated run and look n = FIRST..LAST, per metric: the paired
    test's p, its direction and whether the delta CI is precise."""
    rng = np.random.default_rng(seed)
    rounds = len(data[HEADLINE[0]])
    draws = [draw(rng, rounds, LAST, design) for _ in range(runs)]
    width = LAST - FIRST + 1
    table = {}
    for m in HEADLINE:
        p, up, precise = np.ones((runs, width)), np.zeros((runs, width), bool), np.zeros((runs, width), bool)
        for i, (ia, ib) in enumerate(draws):
            for j, n in enumerate(range(FIRST, LAST + 1)):
                a, b = data[m][ia[:n], 0], data[m][ib[:n], 1] * scale
                pv, up[i, j] = _p("paired", a, b)
                p[i, j] = 1.0 if math.isnan(pv) else pv
                precise[i, j] = _precise(a, b)
        table[m] = {"p": p, "up": up, "precise": precise}
    return table


def auto(table: dict, metrics: tuple[str, ...], boundary: str, shifted: bool) -> tuple[float, float, float]:
    """iolab's stopping rule (iolab.run.adaptive) on precomputed looks: (share of runs
    ending significant -- in the right direction when shifted --, mean rounds, per-look level)."""
    share = ALPHA / len(metrics)
    level = (stats.sequential_alpha(share, FIRST, LAST, boundary, test="signed-rank")
             if boundary != "none" else share)
    runs = table[metrics[0]]["p"].shape[0]
    hits, used = 0, 0
    for i in range(runs):
        for j in range(LAST - FIRST + 1):
            significant = [table[m]["p"][i, j] < level for m in metrics]
            decided = [sig or table[m]["precise"][i, j] for sig, m in zip(significant, metrics)]
            if all(decided) or j == LAST - FIRST:
                break
        hits += any(sig and (table[m]["up"][i, j] or not shifted) for sig, m in zip(significant, metrics))
        used += FIRST + j
    return hits / runs, used / runs, level


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", default=[str(p) for p in sorted(HERE.glob("data/aa-samples-*.json"))],
                        help="recordings to pool (default: bench/data/aa-samples-*.json)")
    parser.add_argument("--all-rounds", action="store_true", help="keep rounds the recorder marked disturbed")
    parser.add_argument("--quick", action="store_true", help="fewer resamples (a smoke run)")
    args = parser.parse_args()
    documents, data = load([Path(p) for p in args.data], args.all_rounds)
    comparisons, runs = (200, 100) if args.quick else (2000, 500)
    rounds = len(data[HEADLINE[0]])
    recorded = sum(len({s["round"] for s in d["samples"]}) for d in documents)
    print(f"data: {rounds} of {recorded} recorded rounds of A and A' "
          f"({'all' if args.all_rounds else 'rounds marked disturbed left out'})")
    for d in documents:
        print(f"  {d['recorded']}: {len({s['round'] for s in d['samples']})} rounds, "
              f"{len(d.get('disturbed_rounds', []))} disturbed, load average {d['loadavg_before'][0]:.2f} -> "
              f"{d['loadavg_after'][0]:.2f}, nice {d.get('nice', 0)}, {d['host'].get('cpus')} CPUs, "
              f"kernel {d['host'].get('kernel')}, fio {d['host'].get('fio')}, image {d.get('image_place', 'disk')}")
    for m in HEADLINE:
        values = data[m].ravel()
        rho = spearmanr(data[m][:, 0], data[m][:, 1]).statistic
        ratios = np.log(data[m][:, 1] / data[m][:, 0])
        print(f"  {m:9s} median {np.median(values):8.2f}  rel. stddev {np.std(values, ddof=1) / np.mean(values):6.1%}"
              f"  A vs A' of a round: Spearman {rho:+.2f}; per-round log ratio sd {np.std(ratios, ddof=1):.3f}")
    started = time.time()
    for n in N_FIXED:
        for design in ("independent", "same"):
            if (2 if design == "independent" else 1) * n > rounds:
                continue
            print(f"\nfixed n={n}, {design} rounds, {comparisons} A/A comparisons (alpha {ALPHA}):")
            for test in ("paired", "unpaired"):
                aa = fixed(data, design, comparisons, 1.0, 1, n, test)
                power = fixed(data, design, comparisons, 1.05, 1, n, test)
                for m in (*HEADLINE, "family"):
                    name = f"{test} " + {"family": "2 primary"}.get(m, m)
                    print(f"  {name:20s} false positives {aa[m]:6.1%}   power at +5% {power[m]:6.1%}")
    print(f"\nplanned test, same rounds, 2 primary rows (Holm), {comparisons} A/A comparisons (alpha {ALPHA}):")
    for n in range(4, 9):
        fp, fp_peek, test = planned(data, comparisons, 1.0, 3, n)
        power, _, _ = planned(data, comparisons, 1.05, 3, n)
        print(f"  n={n}  plan: {test:8s} false positives {fp:6.1%}  power at +5% {power:6.1%}   "
              f"smaller p after the data: false positives {fp_peek:6.1%}")
    for design in ("independent", "same"):
        if design == "independent" and rounds < 2 * LAST:
            print(f"\nauto, independent rounds: needs {2 * LAST} rounds, have {rounds}")
            continue
        print(f"\nauto, paired ({FIRST}..{LAST} rounds, target +-{TARGET:.0%}), {design} rounds, {runs} runs per line:")
        null, shift = looks(data, design, runs, 1.0, seed=2), looks(data, design, runs, 1.05, seed=2)
        for metrics in (("read_bw",), HEADLINE[:2]):
            what = metrics[0] if len(metrics) == 1 else "2 primary"
            for boundary in ("calibrated", "bonferroni", "none"):
                fp, fp_rounds, level = auto(null, metrics, boundary, shifted=False)
                pw, pw_rounds, _ = auto(shift, metrics, boundary, shifted=True)
                print(f"  {what:9s} {boundary:10s} look alpha {level:.4f}  false positives {fp:6.1%} "
                      f"({fp_rounds:4.1f} rounds)  power at +5% {pw:6.1%} ({pw_rounds:4.1f} rounds)")
    print(f"\n({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
