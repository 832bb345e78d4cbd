#!/usr/bin/env python3
"""What does running a cell in a VM add? (iolab/hosts/vm/, under TCG here)

Default mode: boots `--boots` VMs one after another, each running one tiny
cell (iolab-probe lat, 200 reads from the raw virtio disk) through the real
path (VMHost.run_batch: exchange dir, disk image, QEMU, init, python -m
iolab.hosts.vm.guest, the cell executor, samples.jsonl). Per boot it reports:

    prep      host side before QEMU starts (disk image, cells.json, argv)
    kernel    QEMU start -> the initramfs's /init (firmware-less PVH boot
              and kernel initcalls)
    init      /init -> the command (insmod of the boot modules, 9p mounts)
    python    the command -> Python running iolab.hosts.vm.guest
    imports   iolab.hosts.vm.guest importing the executor (iolab.cell.executor)
    ready     the rest until the first cell starts (waiting for modprobe -a
              of the cells' modules, finding the disk)
    boot      QEMU start -> first cell starts (= the metric vm.boot_s)
    shutdown  last sample written -> QEMU gone (poweroff)
    overhead  prep + boot + shutdown: what a cell in a VM pays and a cell
              on the host does not (its setup, workload and teardown are
              the same code in both places)

`--imports`: the guest's cost of importing the executor, before and after
this project's cuts, one fresh boot per measurement (the 9p cache of the
host root starts cold in every boot, as it does for a real cell), ABAB:

    before          python -c 'import iolab.store, iolab.cell.executor'   (site, .pth
                    import hooks, pydantic plugin discovery, sqlite3 via the store)
    -S, PYTHONPATH  python -S, iolab and site-packages on PYTHONPATH (searched
                    before the standard library), PYDANTIC_DISABLE_PLUGINS=__all__
    after           python -S, iolab and site-packages appended to sys.path
                    (after the standard library), PYDANTIC_DISABLE_PLUGINS=__all__
                    (what cmd.sh runs)

"import" is timed inside Python (the executor's imports alone); "process"
is the whole python command (interpreter start, site, imports, exit).

    python3 bench/vm_overhead.py [--boots 6] [--cpus 2] [--kernel debian:6.1.0-56-amd64] [--imports] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab import load, plan, spec  # noqa: E402
from iolab.kernels import fetch  # noqa: E402
from iolab.run import runner  # noqa: E402
from iolab.hosts.vm import host as vm  # noqa: E402
from iolab.hosts.vm import accel as accel_choice  # noqa: E402

COLUMNS = ("prep", "kernel", "init", "python", "imports", "ready", "boot", "shutdown", "overhead")


def experiment(kernel: str, cpus: int) -> spec.Experiment:
    return load.parse({
        "name": "vm overhead",
        "target": {"fs": "none", "size": "64MiB"},
        "variant": [{"name": "a", "kernel": kernel}, {"name": "b", "kernel": kernel}],
        "workload": [{"name": "tiny", "engine": "probe",
                      "probe": {"mode": "lat", "op": "pread", "bs": "4k", "file_size": "16M",
                                "direct": True, "ops": 200}}],
        "run": {"iterations": 1},
        "vm": {"cpus": cpus, "cells_per_boot": 1},
    })


def one_boot(host: vm.VMHost, cell: object) -> dict[str, float]:
    t0 = time.monotonic()
    samples = []
    batch = host.run_batch([cell])  # type: ignore[list-item]
    for sample in batch:
        samples.append(sample)
    done = time.monotonic()
    boot = host.boots[-1]
    if samples[0].status != "ok":
        sys.exit(f"vm_overhead: the cell failed: {samples[0].error}")
    g = boot.guest or {}
    prep = boot.started - t0
    ready = boot.ready_s or float("nan")
    kernel_start = ready - g["ready_uptime"]  # QEMU start -> uptime 0, as the host saw it
    row = {
        "prep": prep,
        "kernel": kernel_start + g["init_uptime"],
        "init": g["command_uptime"] - g["init_uptime"],
        "python": g["python_started_uptime"] - g["command_uptime"],
        "imports": g["import_s"],
        "ready": g["ready_uptime"] - g["python_started_uptime"] - g["import_s"],
        "boot": ready,
        "shutdown": (boot.exited_s or 0) - (boot.last_sample_s or 0),
    }
    row["overhead"] = prep + ready + row["shutdown"] + max(0.0, done - t0 - prep - (boot.exited_s or 0))
    return row


def boots(args: argparse.Namespace) -> list[dict[str, float]]:
    exp = experiment(args.kernel, args.cpus)
    kernel = fetch.ensure(args.kernel, lambda text: print(f"vm_overhead: {text}", file=sys.stderr))
    cell = runner.cell_specs(exp, plan.plan(exp, 1))[0]
    vm.compile_iolab()
    rows = []
    with tempfile.TemporaryDirectory(prefix="iolab-vmbench-") as scratch:
        host = vm.VMHost(kernel, exp.vm, scratch=Path(scratch))
        for index in range(args.boots):
            row = one_boot(host, cell)
            rows.append(row)
            print(f"boot {index + 1}: " + "  ".join(f"{k} {row[k]:.2f}" for k in COLUMNS), file=sys.stderr)
    return rows


IMPORT_SCRIPT = """exec > /run/iolab/out.txt 2>&1
cd /
read t0 rest < /proc/uptime
{env} {python} {flags} -c '{prefix}import time; t = time.perf_counter(); {imports}; print(time.perf_counter() - t)'
read t1 rest < /proc/uptime
echo "$t0 $t1"
"""


def imports(args: argparse.Namespace) -> dict[str, list[float]]:
    kernel = fetch.ensure(args.kernel)
    vm.compile_iolab()
    settings = spec.VM(cpus=args.cpus)
    path = ":".join(vm.guest_python_path())
    paths = vm.guest_python_path()
    configs = {
        "before": dict(env="", flags="", prefix="", imports="import iolab.store, iolab.cell.executor"),
        "-S, PYTHONPATH": dict(
            env=f"PYDANTIC_DISABLE_PLUGINS=__all__ PYTHONDONTWRITEBYTECODE=1 PYTHONPATH={shlex.quote(path)}",
            flags="-S", prefix="", imports="import iolab.cell.executor"),
        "after": dict(env="PYDANTIC_DISABLE_PLUGINS=__all__ PYTHONDONTWRITEBYTECODE=1", flags="-S",
                      prefix=f"import sys; sys.path += {json.dumps(paths)}; ", imports="import iolab.cell.executor"),
    }
    found: dict[str, list[float]] = {name: [] for name in configs}
    process: dict[str, list[float]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory(prefix="iolab-vmbench-") as scratch:
        host = vm.VMHost(kernel, settings, scratch=Path(scratch))
        for index in range(args.boots):
            names = list(configs) if index % 2 == 0 else list(reversed(configs))
            for name in names:
                script = IMPORT_SCRIPT.format(python=shlex.quote(sys.executable), **configs[name])
                boot = host.run_command(script, timeout=300)
                out = (boot.xchg / "out.txt").read_text().strip().splitlines()
                try:
                    found[name].append(float(out[-2]))
                    t0, t1 = map(float, out[-1].split())
                    process[name].append(t1 - t0)
                except (IndexError, ValueError):
                    sys.exit(f"vm_overhead: the import failed in the guest: {out}")
                print(f"{name}: import {found[name][-1]:.2f} s, process {process[name][-1]:.2f} s", file=sys.stderr)
    return {"import": found, "process": process}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boots", type=int, default=6)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--kernel", default="debian:6.1.0-56-amd64")
    parser.add_argument("--imports", action="store_true", help="guest import time, before/after")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    accel = accel_choice.decide("auto", accel_choice.ThisMachine()).accel
    if args.imports:
        found = imports(args)
        if args.json:
            print(json.dumps(found))
            return 0
        print(f"guest: importing the executor (import) and the whole python process (process),\n"
              f"{args.kernel}, {accel}, {args.cpus} vCPUs, load {load:.1f}; seconds, median (min..max)")
        for name in found["import"]:
            cells = [f"{statistics.median(v[name]):5.2f} ({min(v[name]):.2f}..{max(v[name]):.2f})"
                     for v in (found["import"], found["process"])]
            print(f"  {name:<15} import {cells[0]}   process {cells[1]}   n={len(found['import'][name])}")
        return 0
    rows = boots(args)
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"VM cell overhead, {args.kernel}, {accel}, {args.cpus} vCPUs, load {load:.1f} "
          f"(seconds; median, min..max of {len(rows)} boots)")
    for key in COLUMNS:
        values = [row[key] for row in rows]
        print(f"  {key:<9} {statistics.median(values):6.2f}   {min(values):6.2f}..{max(values):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
