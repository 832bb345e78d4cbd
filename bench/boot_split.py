#!/usr/bin/env python3
"""Where a VM boot's host time goes (issue 29): QEMU start to the first cell, as the host sees it.

Boots one variant's kernel of an experiment `--boots` times through the real
path (VMHost.run_batch: the variant's cells of one round, as a run batches
them), and splits each boot by the moments the host saw the guest's
start-up markers (iolab.hosts.vm.host MARKS, polled every POLL_S):

    kernel    QEMU start -> init's first line on the console (PVH entry, the kernel's initcalls)
    init      -> init.json (init's mounts: the 9p root, overlays, the exchange dir)
    python    -> guest.py's first line (the chroot'd cmd.sh, env, sh, Python's start over 9p)
    imports   -> the executor imported (iolab.cell.executor and what it takes)
    ready     -> guest.json (modprobe where the kernel has modules, finding the disk)
    cells     -> the last sample (the batch's cells: setup, run, teardown)
    shutdown  -> QEMU gone (sync, poweroff)

and QEMU's CPU seconds for the boot (user + sys, from its rusage). The guest's
own uptimes are not used: under -icount they count instructions plus the
clock's jumps over idle time, not the host's time.

`--initcalls`: one more boot that runs no cell, with initcall_debug and
printk times on the console, each console line stamped with the host's time
when it appeared (polled every 3 ms); prints the largest host-time gaps
between lines: the kernel's own slow steps under TCG. Printing slows that
boot: its figures say where, not how long a normal boot takes.

    python3 bench/boot_split.py [--experiment scenarios/ext4-write-begin-7.2.toml] [--variant fix]
                                [--kernel-dir DIR] [--boots 3] [--initcalls] [--append ARG] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab import kernels, load, plan  # noqa: E402
from iolab.hosts.vm import host as vm  # noqa: E402
from iolab.kernels import Kernel, entry  # noqa: E402
from iolab.run import runner  # noqa: E402
from iolab.spec import Experiment  # noqa: E402

STEPS = ("kernel", "init", "python", "imports", "ready", "cells", "shutdown")
MARK_ORDER = ("init", "command", "python", "imported", "ready")
INITCALL_ARGS = ["initcall_debug", "printk.time=1", "loglevel=8"]


def split(boot: vm.Boot) -> dict[str, float]:
    """Host seconds of each step of one boot (NaN where a marker was not seen)."""
    nan = float("nan")
    at = [0.0, *(boot.marks.get(name, nan) for name in MARK_ORDER),
          boot.last_sample_s if boot.last_sample_s is not None else nan,
          boot.exited_s if boot.exited_s is not None else nan]
    return {step: round(at[i + 1] - at[i], 3) for i, step in enumerate(STEPS)}


def qemu_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def the_kernel(args: argparse.Namespace, experiment: Experiment, variant: str) -> Kernel:
    if args.kernel_dir:
        kernel = entry.load(Path(args.kernel_dir), Path(args.kernel_dir).name)
        if kernel is None:
            sys.exit(f"boot_split: no cached kernel in {args.kernel_dir}")
        return kernel
    return kernels.ready(experiment, lambda text: print(f"boot_split: {text}", file=sys.stderr))[variant]


def boots(args: argparse.Namespace) -> tuple[list[dict[str, float]], vm.VMHost]:
    experiment = load.load(Path(args.experiment))
    variant = args.variant or experiment.variant[-1].name
    kernel = the_kernel(args, experiment, variant)
    cells = [cell for cell in runner.cell_specs(experiment, plan.plan(experiment, 1))
             if cell.variant.name == variant and cell.round == 0]
    vm.compile_iolab()
    rows = []
    with tempfile.TemporaryDirectory(prefix="iolab-bootsplit-") as scratch:
        host = vm.VMHost(kernel, experiment.vm, scratch=Path(scratch), kernel_args=args.append)
        for index in range(args.boots):
            cpu = qemu_cpu()
            samples = list(host.run_batch(cells))
            failed = [sample.error for sample in samples if sample.status != "ok"]
            if failed:
                sys.exit(f"boot_split: a cell failed: {failed[0]}")
            row = {**split(host.boots[-1]), "boot_s": round(host.boots[-1].ready_s or float("nan"), 3),
                   "qemu_cpu_s": round(qemu_cpu() - cpu, 2), "cells_n": len(samples)}
            rows.append(row)
            print(f"boot {index + 1}: " + "  ".join(f"{key} {row[key]:.2f}" for key in (*STEPS, "qemu_cpu_s")),
                  file=sys.stderr)
    return rows, host


def initcalls(args: argparse.Namespace) -> list[tuple[float, float, str, str]]:
    """(host gap s, guest gap s, the line before, the line after), largest host gaps first."""
    experiment = load.load(Path(args.experiment))
    kernel = the_kernel(args, experiment, args.variant or experiment.variant[-1].name)
    lines: list[tuple[float, str]] = []
    stop = threading.Event()
    with tempfile.TemporaryDirectory(prefix="iolab-bootsplit-") as scratch:
        host = vm.VMHost(kernel, experiment.vm, scratch=Path(scratch), kernel_args=[*INITCALL_ARGS, *args.append])

        def watch() -> None:
            while not host.boots and not stop.is_set():
                time.sleep(0.001)
            boot, offset = host.boots[-1], 0
            while not stop.is_set():
                path = boot.xchg / "console.log"
                data = path.read_bytes()[offset:] if path.exists() else b""
                if b"\n" in data:
                    chunk = data[: data.rfind(b"\n") + 1]
                    offset += len(chunk)
                    now = time.monotonic() - boot.started
                    lines.extend((now, line) for line in chunk.decode(errors="replace").splitlines())
                time.sleep(0.003)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            host.run_command("exit 0\n", timeout=300)
        finally:
            stop.set()
            watcher.join()
    stamped = []
    for host_s, line in lines:
        found = re.match(r"\[\s*([\d.]+)\] (.*)", line)
        if found:
            stamped.append((host_s, float(found[1]), found[2]))
    gaps = [(b[0] - a[0], b[1] - a[1], a[2], b[2]) for a, b in zip(stamped, stamped[1:])]
    return sorted(gaps, reverse=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default=str(REPO / "scenarios" / "ext4-write-begin-7.2.toml"))
    parser.add_argument("--variant", help="whose kernel and cells (default: the last variant)")
    parser.add_argument("--kernel-dir", help="boot this cached kernel (~/.cache/iolab/kernels/NAME) instead")
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--initcalls", action="store_true", help="also: the kernel's slow steps (one boot)")
    parser.add_argument("--append", action="append", default=[], metavar="ARG",
                        help="more of the guest kernel's command line, to try a boot option (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = open("/proc/loadavg").read().split()[:3]
    rows, host = boots(args)
    gaps = initcalls(args) if args.initcalls else []
    load_after = open("/proc/loadavg").read().split()[:3]
    if args.json:
        print(json.dumps({"boots": rows, "gaps": gaps[:20], "load": [load_before, load_after]}))
        return 0
    print(f"VM boot split, host seconds: {args.experiment} ({host.kernel.kver}), {host.accel}, "
          f"{host.settings.cpus} vCPU, timing {host.settings.timing}, {rows[0]['cells_n']} cells a boot")
    print(f"load average before: {' '.join(load_before)}; after: {' '.join(load_after)}")
    print(f"{'step':<11}{'median':>8}  {'min..max':>13}   of {len(rows)} boots")
    for key in (*STEPS, "boot_s", "qemu_cpu_s"):
        values = [row[key] for row in rows]
        print(f"{key:<11}{statistics.median(values):8.2f}  {min(values):6.2f}..{max(values):<6.2f}")
    if gaps:
        print("\nthe kernel's slowest steps (initcall_debug boot; host s between console lines, guest s):")
        for host_s, guest_s, before, after in gaps[:12]:
            print(f"  {host_s:6.2f} host s  {guest_s:6.3f} guest s  {before[:60]!r} -> {after[:60]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
