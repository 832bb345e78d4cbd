#!/usr/bin/env python3
"""What a guest restored from a saved state would cost (issue 39, Pace: the next cut, not made yet).

    python3 bench/pace_snapshot.py [--experiment scenarios/ext4-write-begin-7.2.toml] [--variant fix]

QEMU refuses to save a guest while a 9p share is mounted in it (its
migration blocker: "Migration is disabled when VirtFS export path ... is
mounted"), and iolab's guests run from the host's root over 9p. So this
boots the variant's kernel with the same QEMU command line as a cell's boot
(iolab.hosts.vm.host), but with busybox's sh as init (rdinit), waiting on the console, so nothing
mounts 9p; once the kernel is up it saves the guest with QMP's migrate to a
file (QEMU's own migration stream), then starts a second QEMU with
`-incoming` from that file and times it until the guest runs again. Printed:
the host's seconds and QEMU's CPU for the boot to init, the save, the
state's size, and the restore. A saved guest after Python and the
executor's imports would hold more memory than this one (the page cache of
what Python read, its heap): the restore's figure is a lower bound for it.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from iolab import kernels, load  # noqa: E402
from iolab.hosts.vm import host as vm  # noqa: E402
from iolab.hosts.vm.qemu import guest_tsc_khz, lean_boot, qemu_argv  # noqa: E402
from iolab.hosts.vm.saved import QMP, SavedError  # noqa: E402


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def argv_for(kernel, settings, xchg: Path, qmp: str) -> list[str]:
    acpi, lean = lean_boot(settings, "tcg", kernel)
    argv = qemu_argv(kernel, memory_mib=settings.memory >> 20, cpus=settings.cpus, machine=settings.machine,
                     accel="tcg", xchg=xchg, console=xchg / "console.log", disks=[],
                     tsc_khz=guest_tsc_khz(settings.timing), tcg_thread="single", timing=settings.timing,
                     icount_shift=settings.icount_shift, kernel_args=lean, acpi=acpi)
    # busybox's sh as PID 1, waiting at its prompt on the console (no input): nothing mounts 9p
    argv[-1] = argv[-1].replace("rdinit=/init", "rdinit=/bin/sh")
    return argv[:-2] + ["-qmp", f"unix:{qmp},server=on,wait=off"] + argv[-2:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default=str(REPO / "scenarios/ext4-write-begin-7.2.toml"))
    parser.add_argument("--variant", default="fix")
    args = parser.parse_args()
    experiment = load.load(Path(args.experiment))
    kernel = kernels.ready(experiment, lambda text: None)[args.variant]
    settings = experiment.vm
    print(f"load before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; {kernel.name} ({kernel.kver}), "
          f"{settings.memory >> 20} MiB, timing {settings.timing}")
    with tempfile.TemporaryDirectory(prefix="iolab-pace-snap-") as scratch:
        xchg, state = Path(scratch), Path(scratch, "state.bin")
        argv = argv_for(kernel, settings, xchg, f"{scratch}/qmp1")
        started = time.monotonic()
        first = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        qmp = QMP(Path(scratch, "qmp1"), lambda: first.poll() is None, time.monotonic() + 30)
        while "built-in shell" not in (xchg / "console.log").read_text(errors="replace"):
            if time.monotonic() - started > 120 or first.poll() is not None:
                raise SystemExit("pace_snapshot: the kernel did not come up: "
                                 + (xchg / "console.log").read_text(errors="replace")[-800:])
            time.sleep(0.01)
        time.sleep(0.3)
        up, up_cpu = time.monotonic() - started, cpu_of(first.pid)
        qmp.call("stop")
        saving = time.monotonic()
        try:
            qmp.call("migrate", uri=f"exec:cat > {state}")
        except SavedError as error:
            raise SystemExit(f"pace_snapshot: {error}") from None
        while qmp.call("query-migrate").get("status") not in ("completed", "failed"):
            time.sleep(0.005)
        saved, status = time.monotonic() - saving, qmp.call("query-migrate")["status"]
        first.kill()
        first.wait()
        print(f"boot to init: {up:.2f} host s, QEMU's CPU {up_cpu:.2f} s; save: {status} in {saved:.2f} s, "
              f"{state.stat().st_size / 2**20:.1f} MiB")
        for attempt in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            restored = argv_for(kernel, settings, xchg, f"{scratch}/qmp2")
            restored = restored[:-2] + ["-incoming", f"exec:cat {state}"] + restored[-2:]
            begun = time.monotonic()
            second = subprocess.Popen(restored, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE)
            qmp2 = QMP(Path(scratch, "qmp2"), lambda: second.poll() is None, time.monotonic() + 30)
            while qmp2.call("query-status")["status"] != "running":
                if second.poll() is not None:
                    raise SystemExit(f"pace_snapshot: the restore failed: {second.stderr.read().decode()[-800:]}")
                qmp2.call("cont") if qmp2.call("query-status")["status"] == "paused" else None
                time.sleep(0.005)
            running = time.monotonic() - begun
            cpu = cpu_of(second.pid)
            second.kill()
            second.wait()
            del before
            print(f"restore {attempt + 1}: running after {running:.2f} host s, QEMU's CPU {cpu:.2f} s")
    print(f"load after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
