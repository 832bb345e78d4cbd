"""Cells in a VM booted with the variant's kernel: QEMU, the host's userspace.

One boot runs a batch of cells (``[vm] cells_per_boot``):

    host: exchange dir with cells.json + cmd.sh; a sparse disk image
      -> qemu-system-x86_64 (argv from qemu_argv, never a shell string)
         microvm, the kernel's uncompressed vmlinux (PVH entry), our initramfs,
         the host's / read-only over 9p (cache=loose), the exchange dir
         read-write over 9p, the disk as virtio-blk with cache=none
    guest: init (iolab.kernels.initramfs) chroots into the host root and runs
         python -m iolab.hosts.vm.guest /run/iolab: the same cell executor, the
         target rewritten to the virtio disk, one sample per line in
         samples.jsonl (fsynced), the command's exit status in rc
    host: reads samples as they arrive, and ends the VM once every cell
         has its sample (the guest's exit and poweroff are not waited
         for); a guest silent for longer than [vm] timeout is killed with
         its whole process group; cells left without a sample become
         failed samples carrying the console's last lines

With [vm] start = "saved" (instructions mode's default) the guest is
restored from a state QEMU saved after its start-up, or saved in this boot
and run on (iolab.hosts.vm.saved); where that cannot be, the boot is cold.

The guest's exit status (rc) is kept apart from QEMU's: QEMU exits 0 on
poweroff, on a guest panic (-no-reboot, panic=-1) and on SIGTERM alike.

The accelerator and QEMU's command line are iolab.hosts.vm.qemu's; the
kernel comes ready from iolab.kernels. Every variant in its VM, one VMHost
per kernel: iolab.hosts.vm.variants.
"""

from __future__ import annotations

import compileall
import itertools
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import iolab
from iolab.cell.cellspec import CellSpec
from iolab.cell.sample import Sample
from iolab.hosts.vm import guest as guest_side
from iolab.hosts.vm.boot import CONSOLE_TAIL, MARKS, Boot  # noqa: F401 (MARKS: the tests' name)
from iolab.hosts.vm.accel import Choice, LinuxBoot, MachineType, Settled, VerdictCache, boot_id, smallest_cached_kernel
from iolab.hosts.vm.saved import Plan, SavedError, SavedStates
from iolab.hosts.vm.qemu import (DISK_CACHE, QEMU, Disk, Saving, disk_args, guest_tsc_khz, kvm_usable, lean_boot,
                                 null_blk_params, qemu_argv, qemu_version, small_pages, tcg_threading, timing_env,
                                 without_huge_pages)
from iolab.kernels import Kernel
from iolab.spec import VM
from iolab.process import Child, end, start
from iolab.sysutil import ToolError, require
from iolab.units import parse_size

DISK_SERIAL = "iolab0"
QEMU_GRACE = 5.0  # seconds QEMU (its whole session) has after SIGTERM before SIGKILL
POLL_S = 0.02  # how often the host looks into a boot's exchange dir
ROOT_SHARE = "9p ro cache=loose"


def guest_command(python: str, path: Sequence[str]) -> str:
    """cmd.sh: the guest's command, run by init in the host root.

    ``python -S`` with iolab's and the site-packages' directories appended
    to sys.path, after the standard library: no site processing and no .pth
    import hooks, and no standard-library import searched for in them first
    (over 9p). In the guest this made the python process 0.5 s shorter
    (about 4.0 s against 4.5 s, bench/vm_overhead.py --imports)."""
    program = guest_side.program(list(path))
    return (
        "cd /\n"
        "export PYDANTIC_DISABLE_PLUGINS=__all__ PYTHONDONTWRITEBYTECODE=1\n"
        f"exec {shlex.quote(python)} -S -c {shlex.quote(program)} /run/iolab > /run/iolab/guest.log 2>&1\n"
    )


def guest_python_path() -> list[str]:
    """Where the guest's Python finds iolab and its dependencies: iolab's
    parent directory, then this Python's site-packages."""
    import site

    here = str(Path(iolab.__file__).resolve().parent.parent)
    return [here, *(p for p in site.getsitepackages() if os.path.isdir(p) and p != here)]


def compile_iolab() -> None:
    """Byte-compile iolab on the host: the guest's root is read-only, so a
    stale .pyc would be recompiled (slowly, under emulation) on every boot."""
    compileall.compile_dir(str(Path(iolab.__file__).parent), quiet=1)


# -- one boot ---------------------------------------------------------------------------


class VMHost:
    """Boots one kernel in a VM per batch of cells and brings their samples back."""

    name = "vm"

    def __init__(
        self,
        kernel: Kernel,
        settings: VM,
        *,
        scratch: Path,
        accel: Choice | None = None,
        show_command: Callable[[str], None] | None = None,
        qemu: str = QEMU,
        stopping: threading.Event | None = None,
        kernel_args: Sequence[str] = (),
    ):
        self.kernel = kernel
        self.kernel_args = list(kernel_args)  # more of the guest's command line (bench/boot_split.py: initcall_debug)
        self.stopping = stopping or threading.Event()  # set by another thread: end the boot under way
        self.settings = settings
        self.scratch = scratch
        self.qemu = qemu
        # the run's accelerator (VMHosts shares one among its VMs); alone,
        # decided for this kernel (iolab.hosts.vm.accel)
        self.choice = accel or Choice(settings.accel_setting, ThisMachine(kernel, machine=settings.machine, qemu=qemu))
        self.tcg_thread = tcg_threading(settings.cpus, settings.timing)
        self.show_command = show_command
        self.boots: list[Boot] = []
        self.numbers = itertools.count(1)  # each boot's number (env["vm"]["boot"])
        # [vm] start = "saved": guests restored from states saved after their start-up (iolab.hosts.vm.saved)
        self.saved = (SavedStates(kernel, sys.executable, guest_python_path(), qemu)
                      if settings.start == "saved" else None)

    @property
    def accel(self) -> str:
        return self.choice.accel

    def describe(self) -> dict[str, Any]:
        """The VM's shape and the kernel, as recorded with each sample (env["vm"])."""
        manifest = self.kernel.manifest
        return {
            "accel": self.accel,
            "accel_reason": self.choice.verdict.reason,
            "tcg_thread": self.tcg_thread if self.accel == "tcg" else None,
            "qemu": qemu_version(self.qemu),
            "machine": self.settings.machine,
            "cpus": self.settings.cpus,
            "memory_mib": self.settings.memory >> 20,
            "boot_mode": self.settings.boot if self.accel == "tcg" else "full",  # [vm] boot ("boot": which boot)
            "kernel": self.kernel.name,
            "kver": self.kernel.kver,
            "kernel_package": manifest.get("package"),
            "kernel_version": manifest.get("version"),
            "kernel_sha256": manifest.get("image_sha256") or manifest.get("source_sha256"),
            "kernel_source": manifest.get("source_identity"),
            "kernel_patches": manifest.get("patches"),
            "root_share": ROOT_SHARE,
            "disk_cache": DISK_CACHE if self.settings.disk == "virtio" else None,
            "disk": self.settings.disk,
            "ram_huge_pages": not small_pages(self.settings.timing),  # the host's, under QEMU's guest RAM
            **timing_env(self.settings),
        }

    def run_cells(self, cells: list[CellSpec]) -> list[Sample]:
        """One boot for these cells; a sample for each, in their order."""
        return list(self.run_batch(cells))

    def run_cell(self, cell: CellSpec) -> Sample:
        return self.run_cells([cell])[0]

    def _disk(self, cells: Sequence[CellSpec], into: Path) -> Disk:
        target = cells[0].target
        if target.kind == "device":
            assert target.device is not None
            return Disk(target.device, DISK_SERIAL)
        size = max(cell.target.size for cell in cells)
        directory = Path(target.image_dir) if target.image_dir else into
        image = Path(tempfile.mkstemp(prefix="iolab-vmdisk-", suffix=".img", dir=directory)[1])
        os.truncate(image, size)
        try:  # cache=none opens the image with O_DIRECT
            os.close(os.open(image, os.O_RDONLY | os.O_DIRECT))
        except OSError as error:
            image.unlink()
            raise ToolError(
                f"the VM's disk image in {directory} cannot be opened with O_DIRECT ({error.strerror}; "
                "tmpfs cannot): set [target] image_dir to a directory on a disk filesystem"
            ) from None
        return Disk(str(image), DISK_SERIAL, image=True)

    def _argv(self, xchg: Path, disks: Sequence[Disk], saving: Saving | None = None) -> list[str]:
        # the guest's init binds the module tree from the initramfs's root, where
        # a symlink on the way (a cache reached through one) points nowhere
        kernel = replace(self.kernel, moddir=self.kernel.moddir.resolve()) if self.kernel.moddir else self.kernel
        acpi, lean = lean_boot(self.settings, self.accel, kernel)
        return qemu_argv(
            kernel, memory_mib=self.settings.memory >> 20, cpus=self.settings.cpus,
            machine=self.settings.machine, accel=self.accel, xchg=xchg, console=xchg / "console.log",
            disks=disks, tsc_khz=guest_tsc_khz(self.settings.timing), tcg_thread=self.tcg_thread,
            timing=self.settings.timing, icount_shift=self.settings.icount_shift, qemu=self.qemu,
            kernel_args=[*lean, *disk_args(self.settings), *self.kernel_args], acpi=acpi, saved=saving,
        )

    def _launch(self, xchg: Path, disks: Sequence[Disk], command: str, plan: Plan | None = None) -> tuple[Child, Boot]:
        """Start QEMU for one boot whose guest runs `command` (cmd.sh), or
        one saved or restored (plan: iolab.hosts.vm.saved)."""
        require(self.qemu)
        (xchg / "cmd.sh").write_text(command)
        argv = self._argv(xchg, disks, plan.saving if plan else None)
        if self.show_command is not None:
            self.show_command(shlex.join(argv))
        boot = Boot(argv, xchg, self.accel, self.settings.boot_timeout)
        with open(xchg / "qemu.stderr", "wb") as stderr:
            boot.started = time.monotonic()
            process = start(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                            preexec=without_huge_pages if small_pages(self.settings.timing) else None,
                            start_new_session=True, cwd=plan.where if plan else None)
        if plan is not None and self.saved is not None:
            try:
                self.saved.begin(plan, boot, lambda: process.poll() is None)
            except SavedError as error:
                end(process, grace=QEMU_GRACE)
                done = "was not restored" if plan.restoring else "was not made"
                self.saved.failed(f"the guest's saved state ({plan.state.name}) {done}: {error}")
                if plan.restoring:
                    plan.state.unlink(missing_ok=True)
                process, boot = self._launch(self._fresh(xchg), disks, command)
                boot.start["not_saved"] = self.saved.broken  # why this boot is cold (said once on stderr)
                return process, boot
        self.boots.append(boot)
        boot.number = next(self.numbers)  # its own, where boots run side by side (len(self.boots) moves)
        return process, boot

    def _fresh(self, xchg: Path) -> Path:
        """A new exchange dir beside xchg, with its request (a boot after one that failed to start)."""
        fresh = Path(tempfile.mkdtemp(prefix="xchg-", dir=xchg.parent))
        if (xchg / "cells.json").exists():
            shutil.copy(xchg / "cells.json", fresh / "cells.json")
        return fresh

    def run_command(self, command: str, *, timeout: float, disks: Sequence[Disk] = (),
                    ready: str = "init.json") -> Boot:
        """Boot and run a shell command in the guest (in the host root, as
        cmd.sh); the Boot says how it ended (guest_rc, timed_out, stalled,
        console). The boot is up when `ready` appears in the exchange dir
        (init.json: init starts the command). Its exchange dir (boot.xchg)
        stays in this host's scratch dir."""
        xchg = Path(tempfile.mkdtemp(prefix="iolab-vm-", dir=self.scratch))
        process, boot = self._launch(xchg, disks, command)
        try:
            for _ in self._follow(process, boot, timeout=timeout, ready=ready):
                pass
        finally:
            end(process, grace=QEMU_GRACE)
        return boot

    def run_batch(self, cells: Sequence[CellSpec]) -> Iterator[Sample]:
        """Boot, and yield each cell's sample as the guest writes it; cells
        without one (timeout, crash) yield failed samples at the end. A boot
        under KVM that does not come up within boot_timeout is booted again
        under TCG when the run's accelerator falls back (accel = "auto")."""
        workdir = Path(tempfile.mkdtemp(prefix="iolab-vm-", dir=self.scratch))
        process = None
        disk = None
        try:
            disk = self._disk(cells, workdir) if self.settings.disk == "virtio" else None
            command = guest_command(sys.executable, guest_python_path())
            pending = {cell.seq: cell for cell in cells}
            while True:
                xchg = Path(tempfile.mkdtemp(prefix="xchg-", dir=workdir))
                (xchg / "cells.json").write_text(_request(cells, self.settings.disk, null_blk_params(self.settings.device_model)))
                disks = [disk] if disk else []
                plan = self.saved.plan(xchg, disks, self._argv) if self.saved else None
                process, boot = self._launch(xchg, disks, command, plan)
                if self.saved is not None and plan is None:
                    boot.start["not_saved"] = self.saved.broken
                for sample in self._follow(process, boot, timeout=self.settings.timeout, ready="guest.json"):
                    if sample.seq in pending:
                        pending.pop(sample.seq)
                        yield self._enriched(sample, boot, len(cells))
                    if not pending:
                        break
                if not pending:
                    # every cell has its sample: the VM is ended now, not after the guest's own
                    # exit, sync and poweroff (0.3-0.8 host s a boot under TCG, bench/boot_split.py)
                    boot.qemu_rc = end(process, grace=QEMU_GRACE)
                    boot.exited_s = time.monotonic() - boot.started
                    boot.ended_early = True
                    break
                if not (boot.stalled and boot.accel == "kvm" and self._falls_back(boot)):
                    break
            for cell in cells:
                if cell.seq in pending:
                    yield self._failed(cell, boot, len(cells))
        finally:
            if process is not None:
                end(process, grace=QEMU_GRACE)
            if disk is not None and disk.image:
                Path(disk.path).unlink(missing_ok=True)
            if os.environ.get("IOLAB_KEEP_VM"):  # debugging a guest: keep console.log, guest.log, cells.json
                print(f"iolab: IOLAB_KEEP_VM: kept {workdir}", file=sys.stderr)
            else:
                shutil.rmtree(workdir, ignore_errors=True)

    def _falls_back(self, boot: Boot) -> bool:
        """A boot under KVM stalled: whether the run's accelerator is now TCG."""
        tail = boot.console_tail(3)
        stall = LinuxBoot(False, boot.exited_s or boot.boot_timeout, self.kernel.kver,
                          "console: " + " | ".join(tail) if tail else "the console stayed empty")
        if not self.choice.stalled(stall, f"[vm] boot_timeout {boot.boot_timeout:g} s"):
            return False
        print(f"iolab: {self.choice.verdict.reason}; this boot again too ({stall.detail})", file=sys.stderr)
        return True

    def _follow(self, process: Child, boot: Boot, *, timeout: float, ready: str) -> Iterator[Sample]:
        """Samples as their lines appear, until QEMU exits, the guest is not
        up (`ready` in the exchange dir) within [vm] boot_timeout of QEMU's
        start (boot.stalled), or once up is silent for longer than `timeout`
        (boot.timed_out). The guest speaks when its init starts the command
        (init.json), when its executor is ready (guest.json) and with each
        sample."""
        samples_path = boot.xchg / "samples.jsonl"
        offset = 0
        deadline = boot.started + self.settings.boot_timeout
        while True:
            exited = process.poll() is not None
            now = time.monotonic()
            if len(boot.marks) < len(MARKS):
                boot.see_marks(now)
            if boot.ready_s is None and (boot.xchg / ready).exists():
                boot.ready_s = now - boot.started
                boot.guest = {**(_read_json(boot.xchg / "init.json") or {}),
                              **(_read_json(boot.xchg / "guest.json") or {})}
                deadline = now + timeout
            if samples_path.exists():
                with open(samples_path) as handle:
                    handle.seek(offset)
                    text = handle.read()
                complete = text[: text.rfind("\n") + 1]
                offset += len(complete.encode())
                for line in complete.splitlines():
                    if line.strip():
                        boot.last_sample_s = now - boot.started
                        deadline = now + timeout
                        yield Sample.from_json(line)
            if exited:
                boot.exited_s = time.monotonic() - boot.started
                boot.see_marks(now)
                boot.qemu_rc = process.returncode
                rc_path = boot.xchg / "rc"
                if rc_path.exists():
                    boot.guest_rc = int(rc_path.read_text().strip() or -1)
                return
            if self.stopping.is_set():
                boot.stopped = True
                end(process, grace=QEMU_GRACE)
                boot.exited_s = time.monotonic() - boot.started
                boot.qemu_rc = process.returncode
                return
            if now > deadline:
                boot.stalled = boot.ready_s is None
                boot.timed_out = not boot.stalled
                end(process, grace=QEMU_GRACE)
                boot.exited_s = time.monotonic() - boot.started
                boot.qemu_rc = process.returncode
                return
            time.sleep(POLL_S)

    def _vm_env(self, boot: Boot, count: int) -> dict[str, Any]:
        guest = boot.guest or {}
        timeline = {key: guest.get(key) for key in (
            "init_uptime", "command_uptime", "python_started_uptime", "import_s", "ready_uptime")}
        return {**self.describe(), "boot_s": boot.ready_s, "cells_in_boot": count, "boot": boot.number,
                "guest_timeline": timeline, "boot_host": dict(boot.marks), "modprobe": guest.get("modprobe"),
                "start": dict(boot.start)}

    def _enriched(self, sample: Sample, boot: Boot, count: int) -> Sample:
        boot_s = {"vm.boot_s": round(boot.ready_s, 3)} if boot.ready_s is not None else {}
        return sample.with_more(env={"vm": self._vm_env(boot, count)}, metrics=boot_s)

    def _failed(self, cell: CellSpec, boot: Boot, count: int) -> Sample:
        tail = boot.console_tail()
        setting = (' (accel = "kvm" is set; "auto" falls back to TCG)'
                   if boot.stalled and boot.accel == "kvm" and self.choice.setting == "kvm" else "")
        return Sample.of(
            cell, "failed",
            error=f"no sample from the VM: {boot.outcome()}{setting}; console: " + " | ".join(tail[-6:]),
            artefacts={"console": "\n".join(tail)}, env={"vm": self._vm_env(boot, count)}, started=time.time(),
        )


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _request(cells: Sequence[CellSpec], disk: str = "virtio", null_blk: dict[str, str] | None = None) -> str:
    """cells.json: the cells, the disk, and the null_blk parameters the guest checks before any cell."""
    return json.dumps({"disk_serial": DISK_SERIAL, "disk": disk, "null_blk": null_blk or {},
                       "cells": [cell.to_dict() for cell in cells]})


class ThisMachine:
    """This host: /dev/kvm, the 14-byte probe, and a Linux boot of `kernel`
    (None: the smallest cached kernel) under KVM."""

    def __init__(self, kernel: Kernel | None = None, *, machine: MachineType = "microvm", qemu: str = QEMU,
                 verdicts: VerdictCache | None = None):
        self.kernel = kernel
        self.machine = machine
        self.qemu = qemu
        self.verdicts = verdicts or VerdictCache()

    def identity(self) -> dict[str, str]:
        return {"boot_id": boot_id(), "host_kernel": platform.release(), "qemu": qemu_version(self.qemu),
                "machine": self.machine}

    def kvm_device(self) -> bool:
        return os.access("/dev/kvm", os.R_OK | os.W_OK) and shutil.which(self.qemu) is not None

    def tiny_probe(self) -> bool:
        return kvm_usable(self.machine, self.qemu)

    def boot_linux(self, limit: float) -> LinuxBoot | None:
        kernel = self.kernel or smallest_cached_kernel()
        if kernel is None:
            return None
        settings = VM(cpus=1, memory=parse_size("512MiB"), machine=self.machine, accel="kvm", boot_timeout=limit)
        with tempfile.TemporaryDirectory(prefix="iolab-kvm-linux-") as scratch:
            host = VMHost(kernel, settings, scratch=Path(scratch), accel=Choice("kvm", Settled()),
                          qemu=self.qemu)
            boot = host.run_command("exit 0\n", timeout=limit, ready="init.json")
            seconds = boot.ready_s if boot.ready_s is not None else (boot.exited_s or limit)
            if boot.ready_s is not None:
                return LinuxBoot(True, seconds, kernel.kver)
            tail = " | ".join(boot.console_tail(3))
            return LinuxBoot(False, seconds, kernel.kver, boot.outcome() + (f"; console: {tail}" if tail else ""))
