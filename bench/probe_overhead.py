#!/usr/bin/env python3
"""How much does iolab-probe add to what it measures?

(a) batch: `iolab-probe batch --case=pwrite_u1k` (usecs/call, the libMicro
    method) against a bare C loop of the same pwrite(1 KiB, offset 0) on the
    same file, timed once around the whole loop. Reported as a ratio.
(b) lat: `iolab-probe lat` (two clock reads and a histogram update per op)
    against a bare loop of the same pread/pwrite at the same offsets.
    Reported as added ns/op = lat's elapsed_ns/ops - the bare loop's ns/call.

Probe and bare loop run in ABBA order, pinned to the same CPU, `--rounds`
times each, on the same (synced, cached) file; the table gives the median
over rounds, the min-max range, and the comparison of the best rounds (the
least disturbed by anything else running on the machine).

    python3 bench/probe_overhead.py [--rounds 7] [--cpu 1] [--dir /tmp] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BARE_SRC = REPO / "bench" / "probe_bare.c"


def sh(*cmd: str) -> str:
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"probe_overhead: {' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    return res.stdout


def build(tmp: Path) -> tuple[Path, Path]:
    sh("make", "-s", "-C", str(REPO / "probe"))
    bare = tmp / "probe_bare"
    sh("cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(bare), str(BARE_SRC))
    return REPO / "probe" / "iolab-probe", bare


def probe_json(probe: Path, *args: str) -> dict:
    return json.loads(sh(str(probe), *args))


def bare_ns(bare: Path, mode: str, path: Path, calls: int, bs: int, cpu: int) -> tuple[float, float]:
    """(wall ns/call, CPU ns/call) of the bare loop."""
    doc = json.loads(sh(str(bare), mode, str(path), str(calls), str(bs), str(cpu)))
    return doc["ns_per_call"], doc["cpu_ns_per_call"]


def cpu_ns_per_call(doc: dict, calls: int) -> float:
    """user+system CPU time of the probe's measured region, per call."""
    ru = doc["rusage"]
    return (ru["utime_us"] + ru["stime_us"]) * 1000 / calls


def summary(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def alternate(rounds: int, run_probe, run_bare) -> tuple[list, list]:
    """Paired runs in ABBA order (probe, bare, bare, probe, ...) to cancel drift."""
    probe_xs, bare_xs = [], []
    for r in range(rounds):
        if r % 2 == 0:
            probe_xs.append(run_probe())
            bare_xs.append(run_bare())
        else:
            bare_xs.append(run_bare())
            probe_xs.append(run_probe())
    return probe_xs, bare_xs


def bench_batch(probe: Path, bare: Path, d: Path, cpu: int, rounds: int) -> dict:
    f = d / "batch.dat"
    batches, batch = 200, 1000
    # one prep, synced, then both loops overwrite the same steady file
    probe_json(probe, "batch", "--case=pwrite_u1k", f"--file={f}", "--batches=1",
               "--prep-sync")
    docs: list[dict] = []

    def run_probe() -> tuple[float, float]:
        doc = probe_json(probe, "batch", "--case=pwrite_u1k", f"--file={f}", "--prep=keep",
                         f"--batches={batches}", f"--batch={batch}",
                         "--warmup-batches=1", f"--cpu={cpu}")
        docs.append(doc)
        return doc["us_per_call_raw"]["mean"] * 1000, cpu_ns_per_call(doc, doc["calls"])

    def run_bare() -> tuple[float, float]:
        return bare_ns(bare, "pwrite0", f, batches * batch, 1024, cpu)

    probe_xs, bare_xs = alternate(rounds, run_probe, run_bare)
    probe_mean, probe_cpu = [x[0] for x in probe_xs], [x[1] for x in probe_xs]
    bare_wall, bare_cpu = [x[0] for x in bare_xs], [x[1] for x in bare_xs]
    probe_med = [doc["us_per_call"]["median"] * 1000 for doc in docs]
    return {"probe_median_ns": summary(probe_med), "probe_raw_mean_ns": summary(probe_mean),
            "bare_ns": summary(bare_wall),
            "ratio_wall": summary([p / b for p, b in zip(probe_mean, bare_wall)]),
            "ratio_of_best_wall": min(probe_mean) / min(bare_wall),
            "probe_cpu_ns": summary(probe_cpu), "bare_cpu_ns": summary(bare_cpu),
            "ratio_cpu": summary([p / b for p, b in zip(probe_cpu, bare_cpu)]),
            "timer_overhead_ns": docs[-1]["timer_overhead_ns"]}


def bench_lat(probe: Path, bare: Path, d: Path, cpu: int, rounds: int, op: str) -> dict:
    f = d / "lat.dat"
    ops = 200_000
    # 1 MiB file: every op hits the page cache, so the op is short and the
    # probe's own cost is as visible as it gets
    probe_json(probe, "lat", f"--file={f}", "--file-size=1M", "--ops=1")
    docs: list[dict] = []

    def run_probe() -> tuple[float, float]:
        doc = probe_json(probe, "lat", f"--op={op}", f"--file={f}", "--file-size=1M",
                         f"--ops={ops}", "--warmup-ops=1000", f"--cpu={cpu}")
        docs.append(doc)
        return doc["elapsed_ns"] / doc["ops"], cpu_ns_per_call(doc, doc["ops"])

    def run_bare() -> tuple[float, float]:
        return bare_ns(bare, f"{op}seq", f, ops, 4096, cpu)

    probe_xs, bare_xs = alternate(rounds, run_probe, run_bare)
    lat_op, lat_cpu = [x[0] for x in probe_xs], [x[1] for x in probe_xs]
    bare_wall, bare_cpu = [x[0] for x in bare_xs], [x[1] for x in bare_xs]
    return {"op": op, "lat_elapsed_per_op_ns": summary(lat_op),
            "lat_p50_ns": summary([doc["lat_ns"]["p50"] for doc in docs]),
            "bare_ns": summary(bare_wall),
            "added_wall_ns_per_op": summary([a - b for a, b in zip(lat_op, bare_wall)]),
            "added_best_wall": min(lat_op) - min(bare_wall),
            "lat_cpu_ns": summary(lat_cpu), "bare_cpu_ns": summary(bare_cpu),
            "added_cpu_ns_per_op": summary([a - b for a, b in zip(lat_cpu, bare_cpu)]),
            "timer_overhead_ns": docs[-1]["timer_overhead_ns"]}


def fmt(s: dict, unit: str = "", digits: int = 1) -> str:
    return f"{s['median']:.{digits}f}{unit} [{s['min']:.{digits}f}..{s['max']:.{digits}f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--cpu", type=int, default=min(1, (os.cpu_count() or 1) - 1))
    ap.add_argument("--dir", default=None, help="where the data files go (default: a temp dir in /tmp)")
    ap.add_argument("--json", action="store_true", help="print the raw results as JSON")
    args = ap.parse_args()
    if shutil.which("cc") is None:
        sys.exit("probe_overhead: needs cc")

    with tempfile.TemporaryDirectory(prefix="iolab-probe-bench-", dir=args.dir) as tmp:
        tmp_path = Path(tmp)
        probe, bare = build(tmp_path)
        res = {
            "kernel": os.uname().release,
            "loadavg": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
            "cpu": args.cpu,
            "rounds": args.rounds,
            "batch_pwrite_u1k": bench_batch(probe, bare, tmp_path, args.cpu, args.rounds),
            "lat_pread": bench_lat(probe, bare, tmp_path, args.cpu, args.rounds, "pread"),
            "lat_pwrite": bench_lat(probe, bare, tmp_path, args.cpu, args.rounds, "pwrite"),
        }
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    b = res["batch_pwrite_u1k"]
    print(f"iolab-probe overhead, kernel {res['kernel']}, CPU {res['cpu']}, "
          f"load average {res['loadavg']}, {res['rounds']} rounds: median [min..max]")
    print("wall = clock time per call; cpu = user+system CPU time per call (getrusage),")
    print("which time spent preempted by other processes does not inflate")
    print("\n(a) batch pwrite_u1k (1 KiB pwrite at offset 0, 200 x 1000 calls)")
    print(f"  probe usecs/call, libMicro median   {fmt(b['probe_median_ns'], ' ns')}")
    print(f"  probe wall, mean of batches         {fmt(b['probe_raw_mean_ns'], ' ns')}")
    print(f"  bare loop wall                      {fmt(b['bare_ns'], ' ns')}")
    print(f"  ratio probe / bare, wall            {fmt(b['ratio_wall'], '', 4)}")
    print(f"  ratio of the best rounds, wall      {b['ratio_of_best_wall']:.4f}")
    print(f"  probe cpu                           {fmt(b['probe_cpu_ns'], ' ns')}")
    print(f"  bare loop cpu                       {fmt(b['bare_cpu_ns'], ' ns')}")
    print(f"  ratio probe / bare, cpu             {fmt(b['ratio_cpu'], '', 4)}")
    for key in ("lat_pread", "lat_pwrite"):
        l = res[key]
        print(f"\n(b) lat --op={l['op']} 4 KiB, cached 1 MiB file, 200000 ops")
        print(f"  lat p50                             {fmt(l['lat_p50_ns'], ' ns', 0)}")
        print(f"  lat wall/op                         {fmt(l['lat_elapsed_per_op_ns'], ' ns')}")
        print(f"  bare loop wall                      {fmt(l['bare_ns'], ' ns')}")
        print(f"  added by lat, wall, paired rounds   {fmt(l['added_wall_ns_per_op'], ' ns/op')}")
        print(f"  added by lat, wall, best - best     {l['added_best_wall']:.1f} ns/op")
        print(f"  lat cpu/op                          {fmt(l['lat_cpu_ns'], ' ns')}")
        print(f"  bare loop cpu                       {fmt(l['bare_cpu_ns'], ' ns')}")
        print(f"  added by lat, cpu, paired rounds    {fmt(l['added_cpu_ns_per_op'], ' ns/op')}")
        print(f"  (one back-to-back clock pair costs {l['timer_overhead_ns']} ns)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
