#!/usr/bin/env python3
"""Where one boot's QEMU CPU goes, step by step (issue 39, Pace).

    python3 bench/pace_cpu_steps.py TREE [--experiment scenarios/ext4-write-begin-7.2.toml] [--variant fix]

Boots the variant's cached kernel with one round of its cells through TREE's
own VMHost.run_batch (run it with TREE's iolab: this script puts TREE first
on its path), while a thread reads the QEMU process's CPU seconds (user +
sys, /proc/PID/stat) every 20 ms and the console's iolab lines as they
appear. Printed: for each step the host saw (iolab.hosts.vm.boot.MARKS, and
a saved or restored guest's save and go marks) and each cell's sample, the
host's seconds from QEMU's start and QEMU's CPU seconds then (to within the
20 ms of a read: a step's CPU is the difference of two lines), then how the
guest started. QEMU's CPU only: not its children (a restore's cat).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def qemu_cpu(parent: int) -> float | None:
    """The CPU seconds of this process's QEMU child, None when there is none."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if "(qemu-system" in stat and int(fields[1]) == parent:
            return (int(fields[11]) + int(fields[12])) / TICK
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("--experiment", default="scenarios/ext4-write-begin-7.2.toml")
    parser.add_argument("--variant", default="fix")
    args = parser.parse_args()
    sys.path.insert(0, args.tree)
    from iolab import kernels, load, plan
    from iolab.hosts.vm import host as vm
    from iolab.run import runner

    exp = load.load(Path(args.tree, args.experiment))
    kernel = kernels.ready(exp, lambda text: None)[args.variant]
    cells = [c for c in runner.cell_specs(exp, plan.plan(exp, 1)) if c.variant.name == args.variant and c.round == 0]
    vm.compile_iolab()
    with tempfile.TemporaryDirectory(prefix="iolab-pace-cpu-") as scratch:
        return _measure(vm.VMHost(kernel, exp.vm, scratch=Path(scratch)), cells, scratch, args.tree)


def _measure(host, cells, scratch: str, tree: str) -> int:
    trace: list[tuple[float, float]] = []
    lines: dict[str, float] = {}
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            cpu = qemu_cpu(os.getpid())
            if cpu is not None:
                trace.append((time.monotonic(), cpu))
            for log in Path(scratch).glob("iolab-vm-*/xchg-*/console.log"):
                for line in log.read_text(errors="replace").splitlines():
                    if line.startswith("iolab-") and line not in lines:
                        lines[line] = time.monotonic()
            time.sleep(0.02)

    def cpu_at(moment: float) -> float:
        seen = [cpu for at, cpu in trace if at <= moment]
        return seen[-1] if seen else 0.0

    threading.Thread(target=poll, daemon=True).start()
    samples = [time.monotonic() for _ in host.run_batch(cells)]
    stop.set()
    boot = host.boots[-1]
    rows = [(f"mark {name}", boot.started + at) for name, at in boot.marks.items()]
    rows += [(f"console {line.split(' ')[0]} {line.split(' ')[1]}", at) for line, at in lines.items()]
    rows += [(f"sample {index}", at) for index, at in enumerate(samples)]
    print(f"# {tree}: load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}, "
          f"start {getattr(boot, 'start', {'kind': 'cold'})}")
    for name, at in sorted(rows, key=lambda row: row[1]):
        print(f"{name:28s} host {at - boot.started:6.2f} s  QEMU CPU {cpu_at(at):5.2f} s")
    print(f"QEMU CPU at its last read: {trace[-1][1] if trace else 0:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
