#!/usr/bin/env python3
"""One boot of a seed's kernel and one round of its cells, ABAB between two iolab trees (issue 39, Pace).

    python3 bench/pace_boot.py --tree A=/tmp/base --tree B=/work/wt/pace [--pairs 3]
        [--experiment scenarios/ext4-write-begin-7.2.toml] [--variant fix]

Each tree is a checkout of iolab (its probe built: make -C TREE/probe). For
each pair, each tree in turn boots the variant's cached kernel through its
own VMHost.run_batch (the real path: QEMU, the guest's init, Python, the
executor) with that variant's cells of one round, one VM at a time. Printed
per boot: the load average before and after, the host's seconds from QEMU's
start to the guest ready (and its steps: the kernel's boot to init's first
line, init's mounts, Python's start to guest.py's first line, the executor's
imports; for a guest restored from a saved state, iolab.hosts.vm.saved: QEMU's start
to the go line, init's mounts, Python's start of work) and to each cell's sample, QEMU's CPU seconds
(user + sys, from its rusage), and each cell's value of the experiment's
first primary metric (instructions mode: the same in every boot, or the cut
changed what is measured). A tree runs in a Python of its own (the trees'
iolab packages differ), this script's child.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

ONE_BOOT = r"""
import json, os, resource, sys, tempfile, time
from pathlib import Path
tree, experiment, variant = sys.argv[1:4]
sys.path.insert(0, tree)
from iolab import kernels, load, plan
from iolab.hosts.vm import host as vm
from iolab.run import runner
exp = load.load(Path(experiment))
kernel = kernels.ready(exp, lambda text: None)[variant]
metric = exp.report.primary[0]
cells = [c for c in runner.cell_specs(exp, plan.plan(exp, 1)) if c.variant.name == variant and c.round == 0]
vm.compile_iolab()
before = open("/proc/loadavg").read().split()[0]
with tempfile.TemporaryDirectory(prefix="iolab-paceboot-") as scratch:
    host = vm.VMHost(kernel, exp.vm, scratch=Path(scratch))
    at, values = [], []
    for sample in host.run_batch(cells):
        at.append(round(time.monotonic() - host.boots[-1].started, 3))
        values.append(sample.metrics.get(metric) if sample.status == "ok" else f"FAILED: {sample.error[:300]}")
    boot = host.boots[-1]
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"load": [before, open("/proc/loadavg").read().split()[0]], "ready_s": boot.ready_s,
                  "samples_at": at, "qemu_cpu_s": round(used.ru_utime + used.ru_stime, 2), "values": values,
                  "marks": boot.marks, "start": getattr(boot, "start", {"kind": "cold"})}))
"""


def one_boot(tree: str, experiment: str, variant: str) -> dict:
    done = subprocess.run([sys.executable, "-c", ONE_BOOT, tree, experiment, variant], capture_output=True,
                          text=True, check=False, env={**os.environ, "PYTHONPATH": tree}, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"pace_boot: the boot of {tree} failed: {done.stderr.strip()[-1000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def line(label: str, row: dict) -> str:
    ready = row["ready_s"]
    cells = [b - a for a, b in zip([ready, *row["samples_at"]], row["samples_at"])]
    marks = row["marks"]
    steps = "  ".join(f"{name} {marks[b] - marks.get(a, 0.0):.2f}" for name, a, b in (
        ("kernel", "", "init"), ("init", "init", "command"), ("python", "command", "python"),
        ("imports", "python", "imported"), ("restore", "", "go"), ("mounts", "go", "command"),
        ("to-ready", "command", "ready")) if b in marks and (not a or a in marks) and (name != "to-ready" or "go" in marks))
    start = row.get("start", {}).get("kind", "cold")
    return (f"{label}  load {row['load'][0]}->{row['load'][1]}  {start}  {steps}  ready {ready:.2f}  cells "
            + " ".join(f"{c:.2f}" for c in cells)
            + f"  last sample {row['samples_at'][-1]:.2f}  qemu_cpu {row['qemu_cpu_s']:.2f}  values "
            + " ".join(str(v) for v in row["values"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, metavar="LABEL=DIR")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--experiment", default="scenarios/ext4-write-begin-7.2.toml")
    parser.add_argument("--variant", default="fix")
    args = parser.parse_args()
    trees = [tuple(item.split("=", 1)) for item in args.tree]
    rows: dict[str, list[dict]] = {label: [] for label, _ in trees}
    for _ in range(args.pairs):
        for label, tree in trees:
            row = one_boot(tree, str(Path(tree, args.experiment)), args.variant)
            rows[label].append(row)
            print(line(label, row), flush=True)
    for label, tree in trees:
        cpu = [row["qemu_cpu_s"] for row in rows[label]]
        last = [row["samples_at"][-1] for row in rows[label]]
        print(f"{label} ({tree}): QEMU CPU median {statistics.median(cpu):.2f} s ({min(cpu):.2f}..{max(cpu):.2f}), "
              f"QEMU start to last sample median {statistics.median(last):.2f} s, {len(cpu)} boots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
