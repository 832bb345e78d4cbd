"""Issue 29: the exact rule's (iolab.stats.exact) A/A false-positive rate and its power, simulated.

Both variants' values are draws of one jitter (an A/A) or the candidate's shifted by a change; each
comparison goes through iolab.stats.compare_exact as a run's rows do (tolerance 1%). Printed: the
share of A/A comparisons called a change, and the share of shifted ones found, per number of rounds.

    .venv/bin/python bench/exact_rule.py [--trials 20000]
"""

from __future__ import annotations

import argparse

import numpy as np

from iolab.stats import compare_exact
from iolab.stats.exact import SEPARATION, SEPARATION_TWO


def rate(rng: np.random.Generator, rounds: int, shift: float, jitter: float, dist: str, trials: int) -> float:
    """Share of comparisons called a change ("better" or "worse")."""
    found = 0
    for _ in range(trials):
        noise = rng.standard_t(3, (2, rounds)) if dist == "t3" else rng.normal(size=(2, rounds))
        base = 1e4 * (1 + jitter * noise[0])
        cand = 1e4 * (1 + shift) * (1 + jitter * noise[1])
        c = compare_exact(base, cand, higher_is_better=True, tolerance=0.01)
        found += c is not None and c.verdict != "same"
    return found / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"separation {SEPARATION:g} x the two ranges ({SEPARATION_TWO:g} x with 2 rounds that vary); tolerance 1%; "
          f"{args.trials} trials a line")
    print(f"{'jitter':>8} {'dist':>5} {'rounds':>6} {'A/A change':>11} {'0.1% found':>11} {'0.4% found':>11}")
    for jitter in (1e-5, 3e-5, 1e-4):
        for dist in ("normal", "t3"):
            for rounds in (2, 3, 4):
                aa = rate(rng, rounds, 0.0, jitter, dist, args.trials)
                small = rate(rng, rounds, 0.001, jitter, dist, args.trials // 10)
                issue = rate(rng, rounds, 0.004, jitter, dist, args.trials // 10)
                print(f"{jitter:8.0e} {dist:>5} {rounds:6d} {aa:11.5f} {small:11.3f} {issue:11.3f}")


if __name__ == "__main__":
    main()
