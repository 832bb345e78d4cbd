"""Time the statistics core on typical inputs (one comparison row, n=10).

Run: .venv/bin/python bench/stats_speed.py
Budget: detectable_change(n=10) < 0.5 s on one core; a table row (compare)
a few ms, so a 100-row report decides in well under a second.
"""

import time

import numpy as np

from iolab import stats


def best_of(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    base = rng.lognormal(5, 0.03, 10)
    cand = rng.lognormal(5.02, 0.03, 10)
    row = stats.compare(base, cand, higher_is_better=True)
    rows = [
        ("summarize median n=10", lambda: stats.summarize(base)),
        ("compare n=10 (5000 resamples)", lambda: stats.compare(base, cand, higher_is_better=True)),
        ("decide 100 rows (Holm)", lambda: stats.decide([row] * 100)),
        ("detectable_change n=10", lambda: stats.detectable_change(base, 10)),
        ("detectable_change n=30", lambda: stats.detectable_change(base, 30)),
        ("compare_paired n=10", lambda: stats.compare_paired(base, cand, higher_is_better=True)),
        ("sequential_alpha 5..30 paired (cold)", lambda: stats.sequential_alpha(0.05, 5, 30, test="signed-rank")),
        ("trend n=30", lambda: stats.trend(rng.normal(size=30))),
    ]
    for name, fn in rows:
        print(f"{name:34s} {best_of(fn) * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
