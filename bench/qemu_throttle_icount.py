#!/usr/bin/env python3
"""Does a QEMU-side device model repeat in instructions mode? (issue 38: measured before choosing)

    .venv/bin/python bench/qemu_throttle_icount.py [--store FILE] [--rounds 2]

(as root, Debian's 6.1 kernel cached; --iops N, --bps N: the throttle). An A/A of 4 KiB O_DIRECT random reads (iolab-probe, 1000 ops) on the
VM's virtio disk in instructions mode, with QEMU's own block throttling on that disk
(throttling.bps-total = 500 MiB/s, throttling.iops-total = 36000: about what the carried null_blk model
gives at 20 us + B / 500 MiB/s), against the same without throttling. QEMU completes a virtio request when
its host I/O (and the throttle's timer) is done, on the host's real time (the throttle's timers run on
QEMU_CLOCK_REALTIME), so under -icount sleep=off the guest's clock jumps to its next timer meanwhile: the
question is whether such a device's time is a count that repeats. Prints each cell's median and mean ns/op.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from iolab.hosts.vm import qemu  # noqa: E402
from iolab.load import parse  # noqa: E402
from iolab.run import runner  # noqa: E402
from iolab.store import Store  # noqa: E402



def experiment(rounds: int) -> object:
    return parse({
        "name": "QEMU throttling under icount: A/A",
        "variant": [{"name": v, "kernel": "debian:6.1.0-56-amd64"} for v in ("a", "b")],
        "target": {"fs": "none", "size": "64MiB"},
        "workload": [{"name": "dio", "engine": "probe", "probe": {
            "mode": "lat", "op": "pread", "bs": "4k", "file_size": "64M", "direct": True, "pattern": "rand",
            "ops": 1000}, "metrics": ["lat_mean", "lat_p50"], "primary": ["lat_mean"]}],
        "run": {"iterations": rounds, "seed": 1, "order": "alternate"},
        "vm": {"timing": "instructions", "disk": "virtio", "cpus": 1, "memory": "1GiB", "timeout": "10m"},
    }, base_dir=str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--iops", type=int, default=36000, help="throttling.iops-total (host real time)")
    parser.add_argument("--bps", type=int, default=500 << 20, help="throttling.bps-total (host real time)")
    args = parser.parse_args()
    throttle = f"none,throttling.bps-total={args.bps},throttling.iops-total={args.iops}"
    for label, cache in (("no throttle", "none"), (f"QEMU throttle ({args.iops} IOPS)", throttle)):
        qemu.DISK_CACHE = cache  # the -drive's cache= value, with throttling's options after it
        store = Store(args.store or Path(tempfile.mkdtemp(prefix="iolab-thr-")) / "thr.db")
        run_id = runner.run(experiment(args.rounds), store)
        cells = [s for s in store.samples(run_id) if s.status == "ok"]
        failed = [s.error for s in store.samples(run_id) if s.status != "ok"]
        medians = [s.metrics["lat_p50"] for s in cells]
        means = [s.metrics["lat_mean"] for s in cells]
        print(f"{label}: {len(cells)} cells ok, {len(failed)} failed {failed[:1]}")
        print(f"  median ns/op per cell: {' '.join(f'{v:.0f}' for v in medians)}")
        print(f"  mean ns/op per cell:   {' '.join(f'{v:.0f}' for v in means)}")
        if means:
            print(f"  spread of the means: {(max(means) - min(means)) / statistics.median(means):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
