"""What this machine can do, and what to install for the rest."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from iolab import process
from iolab.sysutil import PACKAGE_OF

if TYPE_CHECKING:
    from iolab.hosts.vm.accel import Machine


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""  # what to do when not ok
    required: bool = True  # a failed required check makes `doctor` exit non-zero


def _version(argv: list[str]) -> str:
    done = process.run(argv)
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else ""


def _tool(tool: str, version_argv: list[str] | None, required: bool, purpose: str) -> Check:
    if shutil.which(tool) is None:
        return Check(tool, False, f"not found ({purpose})", f"apt-get install {PACKAGE_OF.get(tool, tool)}", required)
    return Check(tool, True, _version(version_argv) if version_argv else "found", required=required)


def _filesystems() -> set[str]:
    return {line.split()[-1] for line in Path("/proc/filesystems").read_text().splitlines()}


def memory_cgroup() -> str:
    """'v2' or 'v1' where the memory controller is mounted, '' if nowhere."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        fstype = fields[fields.index("-") + 1]
        if fstype == "cgroup2":
            controllers = Path(fields[4], "cgroup.controllers")
            if controllers.exists() and "memory" in controllers.read_text().split():
                return "v2"
        elif fstype == "cgroup" and "memory" in fields[-1].split(","):
            return "v1"
    return ""


def _probe() -> Check:
    """Whether the probe engine is built (and not older than its sources)."""
    from iolab.engines import probe
    from iolab.sysutil import ToolError

    try:
        path = probe.binary()
    except ToolError as error:
        return Check("iolab-probe", False, str(error).split(": run ")[0], "make -C probe (or make setup)",
                     required=False)
    return Check("iolab-probe", True, f"built ({path})", required=False)


def _kvm(machine: Machine | None = None) -> Check:
    """Whether VMs run under KVM here: the 14-byte probe guest, then a Linux
    guest booted under KVM (iolab.hosts.vm.accel; cached per host boot)."""
    from iolab.hosts.vm.accel import decide
    from iolab.hosts.vm.host import ThisMachine

    if machine is None and shutil.which("qemu-system-x86_64") is None:
        return Check("kvm", False, "qemu-system-x86_64 missing", "apt-get install qemu-system-x86", required=False)
    verdict = decide("auto", machine or ThisMachine())
    detail = verdict.reason + (" (found earlier in this host boot)" if verdict.cached else "")
    if verdict.detail:
        detail += f"\n      {verdict.detail}"
    fix = ("iolab kernel fetch debian:6.1.0-56-amd64, then iolab doctor boots it under KVM"
           if verdict.found == "no-linux" else "")
    return Check("kvm", verdict.accel == "kvm" and verdict.found != "no-linux", detail, fix, required=False)


def _journal() -> Check:
    """Reclaim what a killed run left (iolab.run.recovery): knobs, loop devices,
    mounts, images, processes; runs left `running` are marked interrupted."""
    from iolab.journal import default_journal
    from iolab.run import recovery

    found = recovery.reclaim()
    failed = [item.text for item in found if item.outcome == "failed"]
    restored = [item.text for item in found if item.outcome == "restored"]
    running = [item.text for item in found if item.outcome == "left"]
    joined = "\n      ".join
    if failed:
        return Check("run journal", False, "could not reclaim:\n      " + joined(failed),
                     f"undo it by hand, then remove its line from {default_journal()}")
    if restored:
        return Check("run journal", True, f"reclaimed what a killed run left ({len(restored)}):\n      "
                     + joined(restored), required=False)
    if running:
        return Check("run journal", True, "in use by a running iolab:\n      " + joined(running), required=False)
    return Check("run journal", True, "nothing left by an earlier run", required=False)


def checks() -> list[Check]:
    found = [
        Check("root", os.geteuid() == 0, "running as root" if os.geteuid() == 0 else "not root",
              "run iolab as root: it attaches loop devices, runs mkfs and mounts"),
        _tool("fio", ["fio", "--version"], True, "the fio engine"),
        _tool("losetup", ["losetup", "--version"], True, "loop targets"),
        Check("loop", os.path.exists("/dev/loop-control"), "/dev/loop-control" if os.path.exists("/dev/loop-control") else "no /dev/loop-control",
              "modprobe loop"),
        _tool("mkfs.ext4", ["mkfs.ext4", "-V"], True, "ext4 targets"),
        _tool("mkfs.xfs", ["mkfs.xfs", "-V"], False, "xfs targets"),
        _tool("mkfs.btrfs", ["mkfs.btrfs", "--version"], False, "btrfs targets"),
        _tool("mkfs.erofs", None, False, "erofs targets"),
        _tool("mkfs.f2fs", None, False, "f2fs targets"),
        _tool("perf", ["perf", "--version"], False, "tracepoint counts"),
        _tool("qemu-system-x86_64", ["qemu-system-x86_64", "--version"], False, "kernels as variants"),
    ]
    kernel_fs = _filesystems()
    from iolab.kernels.kconfig import BASE

    base = BASE.read_text()
    for fs in ("ext4", "xfs", "btrfs", "erofs", "f2fs"):
        ok = fs in kernel_fs
        vm = (f'[kernel] source = "debian:linux-source-X": iolab\'s base config builds {fs} in'
              if f"CONFIG_{fs.upper()}_FS=y" in base else "a kernel that has it")
        found.append(Check(f"kernel {fs}", ok, "supported" if ok else "not in this kernel (nor loaded)",
                           f"modprobe {fs}, or run its cells in a VM ({vm})", required=fs == "ext4"))
    tracing = Path("/sys/kernel/tracing/events").exists() or "tracefs" in kernel_fs
    found.append(Check("tracefs", tracing, "available" if tracing else "missing",
                       "mount -t tracefs nodev /sys/kernel/tracing", required=False))
    cgroup = memory_cgroup()
    found.append(Check("memory cgroup", bool(cgroup), f"memory controller on cgroup {cgroup}" if cgroup else "no memory controller mounted",
                       "mount the memory controller (cgroup v1 or v2)", required=False))
    found.append(_probe())
    found.append(_kvm())
    found.append(_kernel_build())
    found.append(_journal())
    return found


def _kernel_build() -> Check:
    """Can this machine build a kernel from source (variants with a [kernel] source)?"""
    from iolab.kernels.build import BUILD_NEEDS, missing_packages

    missing = missing_packages()
    if missing:
        return Check("kernel build", False, f"missing {', '.join(missing)} (kernels built from source)",
                     f"apt-get install {' '.join(missing)} (or scripts/setup)", required=False)
    return Check("kernel build", True, "gcc, make, flex, bison, bc, libelf-dev, libssl-dev... found "
                 f"({len(set(BUILD_NEEDS.values()))} packages)", required=False)


def render(found: list[Check]) -> str:
    lines = []
    for check in found:
        mark = "ok  " if check.ok else ("FAIL" if check.required else "warn")
        line = f"{mark}  {check.name:<20} {check.detail}"
        if not check.ok and check.fix:
            line += f"\n      -> {check.fix}"
        lines.append(line)
    return "\n".join(lines) + "\n"
