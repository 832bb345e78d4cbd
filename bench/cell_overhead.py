#!/usr/bin/env python3
"""What a fresh target costs per cell: image + losetup + mkfs + mount, and teardown.

Runs iolab's own target code (iolab.cell.targets.prepared) N times per
filesystem, with no workload in between, and prints median and p90 of the
set-up and teardown wall times. Needs root.

    .venv/bin/python bench/cell_overhead.py [--rounds 20] [--fs ext4 xfs btrfs]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from iolab import spec
from iolab.cell import targets
from iolab.cell.cellspec import Record


def measure(fs: str, size: str, rounds: int) -> tuple[list[float], list[float]]:
    target = Record(spec.Target(fs=fs, size=size).model_dump(mode="json"))
    setup, teardown = [], []
    with tempfile.TemporaryDirectory(prefix="iolab-bench-") as scratch:
        for _ in range(rounds):
            workdir = Path(tempfile.mkdtemp(dir=scratch))
            t0 = time.perf_counter()
            with targets.prepared(target, workdir, Path(scratch)):
                t1 = time.perf_counter()
            t2 = time.perf_counter()
            setup.append(t1 - t0)
            teardown.append(t2 - t1)
    return setup, teardown


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fs", nargs="+", default=["ext4", "xfs", "btrfs"])
    parser.add_argument("--size", default="1GiB")
    args = parser.parse_args()
    print(f"{'fs':<6} {'setup median':>13} {'p90':>7} {'teardown median':>16} {'p90':>7}  (s, {args.rounds} rounds, {args.size})")
    for fs in args.fs:
        setup, teardown = measure(fs, args.size, args.rounds)
        print(f"{fs:<6} {statistics.median(setup):>13.3f} {p90(setup):>7.3f} "
              f"{statistics.median(teardown):>16.3f} {p90(teardown):>7.3f}")


if __name__ == "__main__":
    main()
