#!/usr/bin/env python3
"""Does a modeled device make device waits exact modeled time? (issue 30)

    .venv/bin/python bench/device_model.py [--kernel debian:linux-source-7.2]
        [--completion-nsec 20000 60000] [--mbps 0] [--append "nohz=off" ...]
        [--rounds 3] [--store FILE]

(as root, the kernel cached: `iolab kernel build scenarios/ext4-write-begin-7.2.toml`,
or `--kernel debian:6.1.0-56-amd64`, a Debian image). For each completion_nsec,
extra guest boot option (--append; "" is none; --mbps adds null_blk.mbps) it runs
bench/device-model.toml -- an A/A of one kernel on [vm] disk = "model", each
round of each variant a boot of its own, in instructions mode -- through
iolab's own run command, in this process (so --append can add to the guest's
command line: it wraps iolab.hosts.vm.host.disk_args). Per workload and metric
it prints every cell's value (variant/round), their spread ((max - min) /
median, all cells of the A/A together: they are one configuration), and for
the second and later completion_nsec the change per I/O against the first
(the modeled wait counts in full when it equals the completion_nsec change).
The load average is printed beside each run: the values must not move with it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from iolab.cli import commands  # noqa: E402
from iolab.hosts.vm import host as vm_host  # noqa: E402
from iolab.store import Store  # noqa: E402

EXPERIMENT = ROOT / "bench/device-model.toml"
METRICS = ("lat_mean", "lat_p50", "read_lat_mean", "read_p50", "read_bw")
PER_IO = {"lat_mean": 1.0, "read_lat_mean": 1000.0}  # the metric's unit in ns (the per-I/O change)


def experiment_file(kernel: str, completion_nsec: int, into: Path) -> Path:
    """bench/device-model.toml with this kernel and device model."""
    text = EXPERIMENT.read_text()
    source = 'source = "debian:linux-source-7.2"'
    if kernel.startswith("debian:linux-source-"):
        text = text.replace(source, f'source = "{kernel}"')
    else:  # a Debian image: every variant boots it
        text = text.replace(f"[kernel]\n{source}\n", "")
        text = text.replace('name = "a"\n', f'name = "a"\nkernel = "{kernel}"\n')
        text = text.replace('name = "b"\n', f'name = "b"\nkernel = "{kernel}"\n')
    text = text.replace("model = { completion_nsec = 20000 }", f"model = {{ completion_nsec = {completion_nsec} }}")
    tomllib.loads(text)
    path = into / f"device-model-{completion_nsec}.toml"
    path.write_text(text)
    return path


def run(store: str, path: Path, rounds: int, append: list[str]) -> tuple[dict[tuple[str, str], list[tuple[str, float]]],
                                                                         str, float, int]:
    """One `iolab run` with `append` on the guest's command line: the values
    per (workload, metric) as (variant/round, value), the load average at
    the end, the wall time, the run's id."""
    disk_args = vm_host.disk_args
    vm_host.disk_args = lambda settings: [*disk_args(settings), *append]  # type: ignore[assignment]
    started = time.monotonic()
    try:
        with open(path.with_suffix(".report.txt"), "w") as report, contextlib.redirect_stdout(report):
            status = commands.main(["--store", store, "run", str(path), "--iterations", str(rounds), "--quiet"])
    finally:
        vm_host.disk_args = disk_args  # type: ignore[assignment]
    elapsed = time.monotonic() - started
    load = Path("/proc/loadavg").read_text().split()[0]
    if status not in (0, 1):
        raise SystemExit(f"iolab run {path} failed ({status})")
    db = Store(store)
    run_id = db.runs()[-1].id
    values: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for sample in sorted(db.samples(run_id, with_histograms=False), key=lambda s: (s.variant, s.round)):
        if sample.status != "ok":
            raise SystemExit(f"run {run_id}: {sample.variant} {sample.workload} round {sample.round} failed: "
                             f"{sample.error}")
        for name in METRICS:
            if name in sample.metrics:
                values.setdefault((sample.workload, name), []).append(
                    (f"{sample.variant}/{sample.round}", sample.metrics[name]))
    db.close()
    return values, load, elapsed, run_id


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / abs(statistics.median(values)) if statistics.median(values) else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", default="debian:linux-source-7.2",
                        help="debian:linux-source-X (built) or debian:<version>-amd64 (a Debian image)")
    parser.add_argument("--completion-nsec", type=int, nargs="+", default=[20000, 60000])
    parser.add_argument("--mbps", type=int, default=0)
    parser.add_argument("--append", nargs="+", default=[""], help="guest boot options to try, one run each")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", help="SQLite store (default: a temporary one)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (VMs)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="iolab-device-model-"))
    store = args.store or str(work / "store.db")
    print(f"store {store}; {time.strftime('%Y-%m-%d %H:%M')} UTC; kernel {args.kernel}; {args.rounds} rounds "
          f"x 2 variants (A/A), a boot each", flush=True)
    for append in args.append:
        first: dict[tuple[str, str], float] = {}
        for nsec in args.completion_nsec:
            path = experiment_file(args.kernel, nsec, work)
            # mbps is not a parameter of the model (it does not repeat): given here on the command line
            extra = append.split() + ([f"null_blk.mbps={args.mbps}"] if args.mbps else [])
            values, load, elapsed, run_id = run(store, path, args.rounds, extra)
            print(f"\ncompletion_nsec={nsec} mbps={args.mbps} append={append or '-'}: run {run_id}, "
                  f"{elapsed:.0f} s, load {load}", flush=True)
            for (workload, name), cells in values.items():
                numbers = [value for _, value in cells]
                center = statistics.median(numbers)
                line = (f"  {workload:<13} {name:<14} median {center:<12.8g} spread {spread(numbers) * 100:.4f}%  "
                        + " ".join(f"{value:.8g}" for _, value in cells))
                if name in PER_IO and (workload, name) in first:
                    per_io = (center - first[(workload, name)]) * PER_IO[name]
                    line += f"  (+{per_io:.0f} ns per I/O for +{nsec - args.completion_nsec[0]} ns)"
                first.setdefault((workload, name), center)
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
