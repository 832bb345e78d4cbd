"""A/A false-positive rate and power of iolab's verdicts, from recorded real samples.

    .venv/bin/python bench/aa_rate.py [--data bench/data/aa-samples.json] [--quick]

Data: bench/data/aa-samples.json, recorded once by bench/record_aa.py from
real fio runs on loop devices (two identical variants A and A', interleaved,
one value of each per round).

Method (everything seeded, so the figures repeat exactly):

fixed n
    2000 A/A comparisons, each on a random subset of n = 10 of the recorded
    rounds: A's values of those rounds against A''s of the same rounds
    (pairs stay in their rounds, labels are kept: whatever differs between
    the two copies stays in the test). Verdict as iolab gives it: two-sided
    Mann-Whitney U (iolab.stats.mwu), p < 0.05 for one metric; for the
    report's three headline rows together, Holm over the three.
auto
    1000 adaptive runs, each on a random ordering of 30 of the recorded
    rounds fed one round at a time, with iolab's rule (iolab.adaptive,
    iolab.analysis.sequential_level): looks after rounds 5..30, each
    comparison significant when p < the calibrated per-look level of
    alpha / comparisons, otherwise decided when the delta CI is within
    +-1% and contains 0; stop when all are decided. The rate is the share
    of runs that end "significant". Also shown: the same with the
    Bonferroni boundary (alpha / looks), the conservative rule iolab does
    not use, and with no correction for looks (the mistake).
power
    the same comparisons with A''s values multiplied by 1.05 (a real 5%
    shift on top of real noise); "detected" = significant in the right
    direction.

Resamples of one recording overlap, so they are not independent
experiments: the rates say how iolab's test behaves on this noise
(its skew, ties, drift and any difference between the two copies) more
precisely than the number of disjoint experiments in the recording would.
The delta CI of a percentile row comes from merged histograms in a real
report; here from the per-round values (the recording keeps no histograms).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from iolab import stats

HERE = Path(__file__).resolve().parent
HEADLINE = ("read_bw", "read_p50", "read_p99")
HIGHER_IS_BETTER = {"read_bw": True, "read_p50": False, "read_p99": False}
ALPHA = 0.05
FIRST, LAST, TARGET = 5, 30, 0.01


def load(path: Path, with_disturbed: bool = False) -> tuple[dict, dict[str, np.ndarray]]:
    """Per metric an array (rounds, 2): A and A' of each round with both
    (rounds marked disturbed by the recorder left out unless asked for)."""
    document = json.loads(path.read_text())
    skip = set() if with_disturbed else set(document.get("disturbed_rounds", []))
    variants = document["experiment"]["variant"]
    a_name, b_name = variants[0]["name"], variants[1]["name"]
    by_round: dict[int, dict[str, dict[str, float]]] = {}
    for s in document["samples"]:
        by_round.setdefault(s["round"], {})[s["variant"]] = s["metrics"]
    rounds = sorted(r for r, v in by_round.items() if a_name in v and b_name in v and r not in skip)
    data = {
        m: np.array([[by_round[r][a_name][m], by_round[r][b_name][m]] for r in rounds])
        for m in HEADLINE
    }
    return document, data


def fixed(data: dict[str, np.ndarray], n: int, comparisons: int, scale: float, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    rounds = len(next(iter(data.values())))
    hits = {m: 0 for m in HEADLINE}
    family = 0
    for _ in range(comparisons):
        chosen = rng.choice(rounds, n, replace=False)
        ps, ok = [], []
        for m in HEADLINE:
            a, b = data[m][chosen, 0], data[m][chosen, 1] * scale
            p, _, prob = stats.mwu(a, b)
            right = prob > 0.5 if scale > 1 else True
            hits[m] += p < ALPHA and right
            ps.append(p)
            ok.append(right)
        adjusted = stats.adjust_pvalues(ps, "holm")
        family += any(pa < ALPHA and r for pa, r in zip(adjusted, ok))
    out = {m: hits[m] / comparisons for m in HEADLINE}
    out["family"] = family / comparisons
    return out


def _precise(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int = 1000) -> bool:
    """Percentile-bootstrap 95% CI of median(b)/median(a) - 1 within +-TARGET and containing 0
    (what iolab.stats.compare computes, vectorized here with fewer resamples for speed)."""
    ia = rng.integers(0, a.size, (resamples, a.size))
    ib = rng.integers(0, b.size, (resamples, b.size))
    ratios = np.median(b[ib], axis=1) / np.median(a[ia], axis=1) - 1.0
    low, high = np.percentile(ratios, [2.5, 97.5])
    return bool(low <= 0 <= high and (high - low) / 2 <= TARGET)


def looks(data: dict[str, np.ndarray], runs: int, scale: float, seed: int) -> dict[str, dict[str, np.ndarray]]:
    """For every simulated run and look n = FIRST..LAST, per metric: p, the rank
    direction and whether the delta CI is precise. Each run is a random ordering
    of LAST of the recorded rounds, fed one round per look."""
    rng = np.random.default_rng(seed)
    available = len(next(iter(data.values())))
    if available < LAST:
        raise SystemExit(f"need >= {LAST} recorded rounds for auto runs, have {available}")
    orders = [rng.permutation(available)[:LAST] for _ in range(runs)]
    width = LAST - FIRST + 1
    table = {}
    for m in HEADLINE:
        p, up, precise = np.ones((runs, width)), np.zeros((runs, width), bool), np.zeros((runs, width), bool)
        for i, order in enumerate(orders):
            for j, n in enumerate(range(FIRST, LAST + 1)):
                a, b = data[m][order[:n], 0], data[m][order[:n], 1] * scale
                p[i, j], _, prob = stats.mwu(a, b)
                up[i, j] = prob > 0.5
                precise[i, j] = _precise(a, b, rng)
        table[m] = {"p": p, "up": up, "precise": precise}
    return table


def auto(table: dict[str, dict[str, np.ndarray]], metrics: tuple[str, ...], boundary: str,
         shifted: bool) -> tuple[float, float, float]:
    """iolab's stopping rule on precomputed looks: (share of runs ending significant -- in
    the right direction when shifted --, mean rounds, per-look level)."""
    share = ALPHA / len(metrics)
    level = stats.sequential_alpha(share, FIRST, LAST, boundary) if boundary != "none" else share
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
    parser.add_argument("--data", default=str(HERE / "data" / "aa-samples.json"))
    parser.add_argument("--quick", action="store_true", help="fewer resamples (a smoke run)")
    parser.add_argument("--with-disturbed", action="store_true", help="keep rounds the recorder marked disturbed")
    args = parser.parse_args()
    document, data = load(Path(args.data), args.with_disturbed)
    comparisons, runs = (200, 200) if args.quick else (2000, 1000)
    rounds = len(data["read_bw"])
    disturbed = len(document.get("disturbed_rounds", []))
    print(f"data: {args.data}: {rounds} rounds of A and A' ({disturbed} disturbed rounds "
          f"{'kept' if args.with_disturbed else 'left out'}; {document['recorded']}, "
          f"load average {document['loadavg_before'][0]:.2f} -> {document['loadavg_after'][0]:.2f}, "
          f"{document['host'].get('cpus')} CPUs, kernel {document['host'].get('kernel')})")
    for m in HEADLINE:
        values = data[m].ravel()
        rho = spearmanr(data[m][:, 0], data[m][:, 1]).statistic
        print(f"  {m:9s} median {np.median(values):9.2f}  rel. stddev {np.std(values, ddof=1) / np.mean(values):6.1%}"
              f"  A vs A' by round: Spearman {rho:+.2f}")
    started = time.time()
    print(f"\nfixed n=10, {comparisons} A/A comparisons (alpha {ALPHA}):")
    aa = fixed(data, 10, comparisons, 1.0, seed=1)
    power = fixed(data, 10, comparisons, 1.05, seed=1)
    for m in (*HEADLINE, "family"):
        name = m if m != "family" else "3 rows, Holm"
        print(f"  {name:13s} false positives {aa[m]:6.1%}   power at +5% {power[m]:6.1%}")
    print(f"\nauto ({FIRST}..{LAST} rounds, target +-{TARGET:.0%}), {runs} runs per line:")
    null, shift = looks(data, runs, 1.0, seed=2), looks(data, runs, 1.05, seed=2)
    for metrics in (("read_bw",), HEADLINE):
        what = metrics[0] if len(metrics) == 1 else "3 rows"
        for boundary in ("calibrated", "bonferroni", "none"):
            fp, fp_rounds, level = auto(null, metrics, boundary, shifted=False)
            pw, pw_rounds, _ = auto(shift, metrics, boundary, shifted=True)
            print(f"  {what:8s} {boundary:10s} look alpha {level:.4f}  false positives {fp:6.1%} "
                  f"({fp_rounds:4.1f} rounds)  power at +5% {pw:6.1%} ({pw_rounds:4.1f} rounds)")
    print(f"\n({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
