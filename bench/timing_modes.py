"""Wall-clock against instructions mode on the seed scenarios of Linux 7.2.

    .venv/bin/python bench/timing_modes.py [--modes wall instructions] [--scenarios ...]
        [--wall-rounds N] [--instructions-rounds 3] [--store FILE] [--skip-aa]

(as root, with the scenarios' kernels cached: `iolab kernel build
scenarios/<file>`). For each scenario and timing mode it runs, through the
command line a user types:

  the A/B     iolab run SCENARIO --timing MODE [--iterations N]
  the A/A     iolab calibrate SCENARIO --timing MODE --iterations N
              (the baseline against an identical copy)

and prints per primary row: each variant's spread across rounds ((max -
min) / median), the delta and its verdict (`=` exact, `*` significant,
`~`, `?`), the A/A delta and verdict, and the wall time each run took --
the time to a decided verdict when every primary row of the A/B is
decided (`*` or an exact change), else "undecided". The load average is
printed beside the times: wall-mode figures move with it, instruction
counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ["scenarios/ext4-write-begin-7.2.toml", "scenarios/f2fs-dio-iostat-7.2.toml",
             "scenarios/f2fs-nat-readahead-7.2.toml"]
MARK = {"better": "*", "worse": "*", "same": "~", "insufficient": "?"}


def iolab(store: str, *args: str) -> tuple[dict, float, str]:
    """Run iolab; its JSON document, the wall time and the load average at the end."""
    started = time.monotonic()
    done = subprocess.run([str(ROOT / ".venv/bin/iolab"), "--store", store, *args, "--format", "json",
                           "--quiet"], capture_output=True, text=True, cwd=ROOT, check=False)
    elapsed = time.monotonic() - started
    load = Path("/proc/loadavg").read_text().split()[0]
    if done.returncode not in (0, 1, 3) or not done.stdout.strip():
        raise SystemExit(f"iolab {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout), elapsed, load


def mark(comparison: dict) -> str:
    symbol = "=" if comparison.get("exact") else MARK[comparison["verdict"]]
    delta = comparison["delta"]
    return f"{delta * 100:+.2f}% {symbol}" if delta is not None else symbol


def spread(figure: dict) -> str:
    low, high, center = figure["min"], figure["max"], figure["center"]
    if low is None or not center:
        return "-"
    return f"{(high - low) / abs(center) * 100:.3f}%"


def decided(document: dict) -> bool:
    primary = [c for c in document["comparisons"] if c["family"] == "primary"]
    return bool(primary) and all(c["verdict"] in ("better", "worse") for c in primary)


def bench(scenario: str, mode: str, rounds: int | None, store: str, aa: bool) -> list[str]:
    args = ["run", scenario, "--timing", mode] + (["--iterations", str(rounds)] if rounds else [])
    document, elapsed, load = iolab(store, *args)
    rows = {(r["workload"], r["metric"]): r for r in document["rows"]}
    aa_rows: dict[tuple[str, str], dict] = {}
    aa_text = ""
    if aa:
        calibration, aa_elapsed, aa_load = iolab(store, "calibrate", scenario, "--timing", mode,
                                                 "--iterations", str(rounds or document["run"]["rounds_done"]))
        aa_rows = {(r["workload"], r["metric"]): r for r in calibration["rows"]}
        aa_text = f"; A/A {aa_elapsed:.0f} s (load {aa_load})"
    when = "decided" if decided(document) else "undecided"
    lines = [f"{Path(scenario).name} {mode}: {document['run']['rounds_done']} rounds, {elapsed:.0f} s "
             f"(load {load}), {when}{aa_text}"]
    for c in document["comparisons"]:
        if c["family"] != "primary":
            continue
        row = rows[(c["workload"], c["metric"])]
        base, cand = row["figures"][c["baseline"]], row["figures"][c["variant"]]
        found = aa_rows.get((c["workload"], c["metric"]))
        aa_delta = "-"
        if found is not None and found["aa_delta"] is not None:
            aa_delta = f"{found['aa_delta'] * 100:+.3f}% ({found['aa_verdict']})"
        lines.append(f"  {c['workload']:<14} {row['label']:<16} {base['center']:>12.6g} -> {cand['center']:<12.6g} "
                     f"{mark(c):>12}  spread {spread(base)} / {spread(cand)}  A/A {aa_delta}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", nargs="+", default=SCENARIOS)
    parser.add_argument("--modes", nargs="+", choices=("wall", "instructions"), default=["wall", "instructions"])
    parser.add_argument("--wall-rounds", type=int, help="rounds in wall mode (default: the scenario's)")
    parser.add_argument("--instructions-rounds", type=int, default=3)
    parser.add_argument("--store", help="SQLite store (default: a temporary one)")
    parser.add_argument("--skip-aa", action="store_true", help="no A/A runs")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (loop devices, mounts, VMs)", file=sys.stderr)
        return 2
    store = args.store or str(Path(tempfile.mkdtemp(prefix="iolab-bench-")) / "timing.db")
    print(f"store {store}; {time.strftime('%Y-%m-%d %H:%M')}")
    for scenario in args.scenarios:
        for mode in args.modes:
            rounds = args.instructions_rounds if mode == "instructions" else args.wall_rounds
            for line in bench(scenario, mode, rounds, store, not args.skip_aa):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
