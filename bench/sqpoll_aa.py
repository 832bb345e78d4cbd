"""The SQPOLL A/A of bench/sqpoll-determinism.toml, read from its store: per cell, the mail's job's
rates as iolab measured them (fio engine: MiB and I/Os per 10^9 instructions, over the I/O span where
clocked), and the script's runs of the same job (fio's runtime in guest ms, its mean latency in guest
ns); then each row's spread over the boots.

    iolab --store S.db run bench/sqpoll-determinism.toml
    .venv/bin/python bench/sqpoll_aa.py S.db [RUN_ID]

The spread is max/min - 1 of a row's values over every cell of both variants (an A/A: one kernel),
and the relative standard deviation; "exact" where every value is within 0.1% of the median.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import sys
import zlib


def _cells(db: sqlite3.Connection, run: int) -> list[tuple[str, int, str, dict[str, float], str, str]]:
    rows = db.execute("SELECT id, variant, round, workload, status, coalesce(error, ''), env_json FROM samples "
                      "WHERE run_id = ? ORDER BY variant, round, seq", (run,)).fetchall()
    out = []
    for sample, variant, round_, workload, status, error, env in rows:
        metrics = dict(db.execute("SELECT name, value FROM metrics WHERE sample_id = ?", (sample,)).fetchall())
        blob = db.execute("SELECT content FROM artefacts WHERE sample_id = ? AND name = 'script.stdout'",
                          (sample,)).fetchone()
        stdout = zlib.decompress(bytes(blob[0])).decode() if blob else ""
        sched = json.loads(env).get("guest", {}).get("sched_features", {})
        out.append((variant, round_, workload, metrics, stdout if status == "ok" else f"failed: {error[:80]}",
                    ",".join(f"{k}={v}" for k, v in sched.items()) or "-"))
    return out


def _spread(name: str, values: list[float]) -> str:
    if len(values) < 2:
        return f"  {name:34s} {len(values)} value(s)"
    median = statistics.median(values)
    exact = all(abs(v / median - 1) <= 0.001 for v in values)
    return (f"  {name:34s} n={len(values):2d}  median {median:12.4f}  min {min(values):12.4f}  max {max(values):12.4f}"
            f"  spread {max(values) / min(values) - 1:7.2%}  rel.sd {statistics.stdev(values) / statistics.mean(values):7.2%}"
            + ("  exact (all within 0.1%)" if exact else ""))


def main() -> None:
    db = sqlite3.connect(sys.argv[1])
    run = int(sys.argv[2]) if len(sys.argv) > 2 else db.execute("SELECT max(id) FROM runs").fetchone()[0]
    rows: dict[str, list[float]] = {}
    print(f"run {run}")
    print(f"{'cell':22s} {'sched':28s} values")
    for variant, round_, workload, metrics, stdout, sched in _cells(db, run):
        if workload == "inside":
            runs = [line.split() for line in stdout.splitlines() if line.startswith("run ") and " fio " in line]
            for words in runs:
                rows.setdefault("script: fio runtime guest ms", []).append(float(words[3]))
                rows.setdefault("script: fio lat mean guest ns", []).append(float(words[5]))
            shown = " | ".join(f"{w[3]} ms {float(w[5]) / 1e6:.4f} M" for w in runs) or stdout
        else:
            for name in ("read_bw", "read_iops", "read_lat_mean"):
                if name in metrics:
                    rows.setdefault(f"{workload} {name}", []).append(metrics[name])
            shown = (f"read_bw {metrics['read_bw']:.3f} MiB/Ginsn, lat mean {metrics.get('read_lat_mean', 0):.2f} kinsn"
                     if "read_bw" in metrics else stdout)
        print(f"{variant}/{round_} {workload:16s} {sched:28s} {shown}")
    print("\nspread over every cell of both variants (an A/A):")
    for name, values in rows.items():
        print(_spread(name, values))


if __name__ == "__main__":
    main()
