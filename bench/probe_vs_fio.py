#!/usr/bin/env python3
"""iolab-probe lat mode against fio psync: what does each add to the latency it reports?

Two cases, each on one cached 1 MiB file in --dir (default: a temp dir in /tmp):
  pread4k   4 KiB pread at consecutive offsets (wrapping), file in the page cache
  pwrite1k  1 KiB pwrite at consecutive offsets into the cached file
Three runners per case, pinned to the same CPU, on the same file, in one run:
  probe  iolab-probe lat --op=pread|pwrite --bs=... --ops=N --warmup-ops=1000
  fio    fio ioengine=psync rw=read|write bs=... size=1M io_size=N*bs invalidate=0
  chunks bench/probe_vs_fio_bare.c: the same calls timed in chunks of 8
  bare   bench/probe_bare.c: the same calls in one untimed loop
Each round runs the four in a rotated order (round r starts with runner r mod 4),
so drift and the page cache's state fall on all of them alike.

How the overhead is isolated. A tool's median latency is the median call plus
what the tool adds inside its timed interval (clock reads, bookkeeping between
the two timestamps). The median call's own cost S is measured without a clock
read per call: the chunked loop times chunks of 8 calls (the clock pair's cost
subtracted) and takes the median chunk's ns/call; slow calls (writeback, a
cache-cold call after another process ran on the CPU) land in a few chunks
and leave the median alone. Per round:
  overhead(tool) = tool's median latency - S
with the probe's p50 (lat_ns) and fio's completion-latency p50 (clat_ns;
psync: issue to completion). The table gives the median over rounds and the
ratio fio/probe (goal: >= 3). fio p50 - probe p50, on the same calls in the
same round, needs no S at all and is printed too. probe_bare.c's single mean
(CPU time per call, getrusage) is shown as a cross-check: it is a mean, so it
sits above the median call when slow calls are frequent (1 KiB pwrite on a
busy machine), and is not used for the overhead. A second view, cost per
op: each tool's CPU time per op (rusage; fio: usr+sys % x runtime / ios)
minus S.

    python3 bench/probe_vs_fio.py [--rounds 11] [--ops 200000] [--cpu 1] [--dir DIR] [--json]

Needs cc, make, liburing-dev (for the probe) and fio. Reuses the build and
bare-loop helpers of bench/probe_overhead.py.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_overhead import bare_ns, build, cpu_ns_per_call, probe_json, sh, summary  # noqa: E402

CHUNKED_SRC = Path(__file__).resolve().parent / "probe_vs_fio_bare.c"
CHUNK = 8

CASES = {  # name: (probe op, fio rw, bare loop, block size)
    "pread4k": ("pread", "read", "preadseq", 4096),
    "pwrite1k": ("pwrite", "write", "pwriteseq", 1024),
}
FILE_SIZE = 1 << 20


def run_probe(probe: Path, f: Path, op: str, bs: int, ops: int, cpu: int) -> dict:
    doc = probe_json(probe, "lat", f"--op={op}", f"--file={f}", f"--file-size={FILE_SIZE}", f"--bs={bs}",
                     f"--ops={ops}", "--warmup-ops=1000", f"--cpu={cpu}")
    lat = doc["lat_ns"]
    return {"p50": lat["p50"], "mean": lat["mean"], "cpu_per_op": cpu_ns_per_call(doc, doc["ops"]),
            "wall_per_op": doc["elapsed_ns"] / doc["ops"], "ctx": doc["rusage"]["nvcsw"] + doc["rusage"]["nivcsw"]}


def run_fio(f: Path, rw: str, bs: int, ops: int, cpu: int) -> dict:
    out = sh("fio", "--name=bench", f"--filename={f}", f"--rw={rw}", f"--bs={bs}", f"--size={FILE_SIZE}",
             f"--io_size={ops * bs}", "--ioengine=psync", "--invalidate=0", f"--cpus_allowed={cpu}",
             "--percentile_list=50", "--output-format=json")
    job = json.loads(out[out.index("{"):])["jobs"][0]
    side = job[rw]
    ios = side["total_ios"]
    if ios != ops:
        sys.exit(f"probe_vs_fio: fio did {ios} I/Os, expected {ops}")
    runtime_ns = job["job_runtime"] * 1e6
    return {"p50": side["clat_ns"]["percentile"]["50.000000"], "mean": side["clat_ns"]["mean"],
            "cpu_per_op": (job["usr_cpu"] + job["sys_cpu"]) / 100 * runtime_ns / ios,
            "wall_per_op": runtime_ns / ios, "ctx": job["ctx"]}


def run_bare(bare: Path, mode: str, f: Path, ops: int, bs: int, cpu: int) -> dict:
    wall, cpu_ns = bare_ns(bare, mode, f, ops, bs, cpu)
    return {"wall_per_op": wall, "cpu_per_op": cpu_ns}


def run_chunked(chunked: Path, mode: str, f: Path, ops: int, bs: int, cpu: int) -> dict:
    doc = json.loads(sh(str(chunked), mode, str(f), str(ops), str(bs), str(cpu), str(CHUNK)))
    return {"median": doc["median_ns_per_call"]}


def bench_case(name: str, probe: Path, bare: Path, chunked: Path, d: Path, rounds: int, ops: int,
               cpu: int) -> dict:
    op, rw, bare_mode, bs = CASES[name]
    f = d / f"{name}.dat"
    probe_json(probe, "lat", f"--file={f}", f"--file-size={FILE_SIZE}", "--ops=1")  # written, fsynced, cached
    runners = {
        "probe": lambda: run_probe(probe, f, op, bs, ops, cpu),
        "fio": lambda: run_fio(f, rw, bs, ops, cpu),
        "chunks": lambda: run_chunked(chunked, bare_mode, f, ops, bs, cpu),
        "bare": lambda: run_bare(bare, bare_mode, f, ops, bs, cpu),
    }
    names = list(runners)
    results: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(rounds):
        for n in names[r % 4:] + names[: r % 4]:
            results[n].append(runners[n]())
    syscall = [c["median"] for c in results["chunks"]]
    per_round = {
        tool: [x["p50"] - s for x, s in zip(results[tool], syscall)] for tool in ("probe", "fio")
    }
    cost = {tool: [x["cpu_per_op"] - s for x, s in zip(results[tool], syscall)] for tool in ("probe", "fio")}
    probe_ovh, fio_ovh = statistics.median(per_round["probe"]), statistics.median(per_round["fio"])
    return {
        "case": name, "ops": ops, "bs": bs,
        "syscall_median_ns": summary(syscall),
        "bare_cpu_mean_ns": summary([b["cpu_per_op"] for b in results["bare"]]),
        "bare_wall_mean_ns": summary([b["wall_per_op"] for b in results["bare"]]),
        **{f"{tool}_{key}": summary([x[key] for x in results[tool]])
           for tool in ("probe", "fio") for key in ("p50", "mean", "cpu_per_op", "wall_per_op", "ctx")},
        "probe_latency_overhead_ns": summary(per_round["probe"]),
        "fio_latency_overhead_ns": summary(per_round["fio"]),
        "ratio_latency_overhead": fio_ovh / probe_ovh if probe_ovh > 0 else float("inf"),
        "fio_minus_probe_p50_ns": summary([f["p50"] - p["p50"] for f, p in zip(results["fio"], results["probe"])]),
        "probe_cost_overhead_ns": summary(cost["probe"]),
        "fio_cost_overhead_ns": summary(cost["fio"]),
    }


def fmt(s: dict, digits: int = 0) -> str:
    return f"{s['median']:8.{digits}f}  [{s['min']:.{digits}f}..{s['max']:.{digits}f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--ops", type=int, default=200_000)
    ap.add_argument("--cpu", type=int, default=min(1, (os.cpu_count() or 1) - 1))
    ap.add_argument("--dir", default=None, help="where the data files go (default: a temp dir in /tmp)")
    ap.add_argument("--json", action="store_true", help="print the raw results as JSON")
    args = ap.parse_args()
    for tool in ("cc", "make", "fio"):
        if shutil.which(tool) is None:
            sys.exit(f"probe_vs_fio: needs {tool}")
    fio_version = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="iolab-probe-vs-fio-", dir=args.dir) as tmp:
        tmp_path = Path(tmp)
        probe, bare = build(tmp_path)
        chunked = tmp_path / "probe_vs_fio_bare"
        sh("cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(chunked), str(CHUNKED_SRC))
        fs = sh("findmnt", "-n", "-o", "FSTYPE", "-T", str(tmp_path)).strip()
        res = {
            "kernel": os.uname().release, "fio": fio_version, "fs": fs, "cpu": args.cpu, "rounds": args.rounds,
            "loadavg": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
            "cases": [bench_case(name, probe, bare, chunked, tmp_path, args.rounds, args.ops, args.cpu) for name in CASES],
        }
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"iolab-probe lat vs {res['fio']} psync, kernel {res['kernel']}, {res['fs']} file, CPU {res['cpu']},")
    print(f"load average {res['loadavg']}; {res['rounds']} interleaved rounds: median [min..max], ns")
    for c in res["cases"]:
        print(f"\n{c['case']}: {c['bs']} B per op, {c['ops']} ops per run, cached {FILE_SIZE >> 20} MiB file")
        print(f"  S, median call (chunks of {CHUNK})     {fmt(c['syscall_median_ns'], 1)}")
        print(f"  probe_bare mean, CPU | wall        {fmt(c['bare_cpu_mean_ns'], 1)} | "
              f"{c['bare_wall_mean_ns']['median']:.1f}")
        print(f"  probe  p50 / mean                  {fmt(c['probe_p50'])} / {c['probe_mean']['median']:.0f}")
        print(f"  fio    clat p50 / mean             {fmt(c['fio_p50'])} / {c['fio_mean']['median']:.0f}")
        print(f"  probe  p50 - S                     {fmt(c['probe_latency_overhead_ns'], 1)}")
        print(f"  fio    p50 - S                     {fmt(c['fio_latency_overhead_ns'], 1)}")
        print(f"  ratio fio / probe (goal >= 3)      {c['ratio_latency_overhead']:8.1f}")
        print(f"  fio p50 - probe p50                {fmt(c['fio_minus_probe_p50_ns'], 1)}")
        print(f"  cost: probe CPU/op - S             {fmt(c['probe_cost_overhead_ns'], 1)}")
        print(f"  cost: fio   CPU/op - S             {fmt(c['fio_cost_overhead_ns'], 1)}")
        print(f"  wall/op probe | fio                {c['probe_wall_per_op']['median']:8.0f} | "
              f"{c['fio_wall_per_op']['median']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
