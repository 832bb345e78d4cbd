"""Cells in a VM booted with the variant's kernel: QEMU, the host's userspace.

One boot runs a batch of cells (``[vm] cells_per_boot``):

    host: exchange dir with cells.json + cmd.sh; a sparse disk image
      -> qemu-system-x86_64 (argv from qemu_argv, never a shell string)
         microvm, the kernel's uncompressed vmlinux (PVH entry), our initramfs,
         the host's / read-only over 9p (cache=loose), the exchange dir
         read-write over 9p, the disk as virtio-blk with cache=none
    guest: init (iolab.hosts.vm.initramfs) chroots into the host root and runs
         python -m iolab.hosts.vm.guest /run/iolab: the same cell executor, the
         target rewritten to the virtio disk, one sample per line in
         samples.jsonl (fsynced), the command's exit status in rc
    host: reads samples as they arrive; a guest silent for longer than
         [vm] timeout is killed with its whole process group; cells left
         without a sample become failed samples carrying the console's
         last lines

The guest's exit status (rc) is kept apart from QEMU's: QEMU exits 0 on
poweroff, on a guest panic (-no-reboot, panic=-1) and on SIGTERM alike.

Accelerator: KVM where a probe shows it works (a 150-byte PVH guest that
writes to an isa-debug-exit port, run with ``-accel kvm -cpu host``), else
TCG. Under TCG the guest kernel is emulated: its numbers compare only with
other numbers from the same host, accelerator and VM shape; every sample
records them (env["vm"]).
"""

from __future__ import annotations

import compileall
import functools
import json
import os
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import iolab
from iolab.hosts.vm import build, kernels
from iolab.hosts.vm.build import Reporter
from iolab.cell.cellspec import CellSpec
from iolab.hosts.vm.kernels import Kernel
from iolab.cell.sample import Sample
from iolab.spec import VM, Build, Experiment
from iolab.hosts.local import default_journal
from iolab.knobs.journal import Journal
from iolab.sysutil import ToolError, die_with_parent, require

QEMU = "qemu-system-x86_64"
DISK_SERIAL = "iolab0"
CONSOLE_TAIL = 25  # console lines kept in the error of a cell without a sample
ROOT_SHARE = "9p ro cache=loose"
BUILD_LOG = "kernel-build.log"  # artefact: the build log of a kernel built from source
DISK_CACHE = "none"
ICOUNT_TSC_KHZ = 1_000_000  # the guest's TSC under -icount: QEMU's virtual clock, in ns
# Instructions mode: the guest's own randomness off where a boot option can
# do it (address-space layout of processes, the kernel stack's offset per
# system call): instruction counts then repeat more closely from boot to boot
DETERMINISTIC_GUEST = ["norandmaps", "randomize_kstack_offset=off"]


@dataclass(frozen=True)
class Disk:
    path: str  # an image file or a host block device
    serial: str
    image: bool = False  # an image made for this boot (removed after it)


# -- facts about this host ----------------------------------------------------------


def host_tsc_khz() -> int | None:
    """The host's TSC rate in kHz, when it is constant (TCG's guest TSC is the
    host's). Passed as tsc_early_khz: microvm has no HPET or ACPI PM timer,
    and on a busy host the guest's calibration against the PIT fails and the
    boot hangs after 'APIC: Switch to symmetric I/O mode setup'."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    lines = info.splitlines()
    flags = next((line for line in lines if line.startswith("flags")), "").split()
    mhz = next((line for line in lines if line.startswith("cpu MHz")), None)
    if "constant_tsc" not in flags or mhz is None:
        return None
    return round(float(mhz.split(":")[1]) * 1000)


@functools.cache
def qemu_version(qemu: str = QEMU) -> str:
    out = subprocess.run([require(qemu), "--version"], capture_output=True, text=True, check=False).stdout
    first = out.splitlines()[0] if out else ""
    return first.split("version", 1)[1].split()[0] if "version" in first else first.strip()


def _probe_elf() -> bytes:
    """A 32-bit PVH guest: 'K' to COM1, then 0x21 to isa-debug-exit (QEMU exits 67)."""
    load = 0x100000
    code = bytes([0xB0, 0x4B, 0x66, 0xBA, 0xF8, 0x03, 0xEE, 0xB0, 0x21, 0xE6, 0xF4, 0xF4, 0xEB, 0xFD])
    note = struct.pack("<III", 4, 4, 18) + b"Xen\0" + struct.pack("<I", load)
    code_off = 52 + 2 * 32
    note_off = code_off + len(code) + (-(code_off + len(code)) % 4)
    header = b"\x7fELF\x01\x01\x01\x00" + bytes(8) + struct.pack(
        "<HHIIIIIHHHHHH", 2, 3, 1, load, 52, 0, 0, 52, 32, 2, 40, 0, 0)
    program = struct.pack("<8I", 1, code_off, load, load, len(code), len(code), 5, 0x1000)
    program += struct.pack("<8I", 4, note_off, 0, 0, len(note), len(note), 4, 4)
    image = header + program + code
    return image + bytes(note_off - len(image)) + note


@functools.cache
def kvm_usable(machine: str = "microvm") -> bool:
    """Whether QEMU runs a guest with -accel kvm -cpu host here (a probe of
    about 0.1 s; nested hypervisors such as kvm-pvm refuse it)."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK) or shutil.which(QEMU) is None:
        return False
    with tempfile.NamedTemporaryFile(prefix="iolab-kvm-probe-", suffix=".elf") as elf:
        elf.write(_probe_elf())
        elf.flush()
        argv = [QEMU, "-accel", "kvm", "-cpu", "host", "-M", machine, "-m", "16M", "-nodefaults",
                "-no-user-config", "-display", "none", "-serial", "none",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", elf.name]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=10, check=False, start_new_session=True)
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == (0x21 << 1) | 1


def choose_accel(setting: str, machine: str, timing: str = "wall") -> str:
    """KVM or TCG; instructions mode is always TCG (spec.VM refuses accel = "kvm" with it)."""
    if timing == "instructions":
        return "tcg"
    if setting == "auto":
        return "kvm" if kvm_usable(machine) else "tcg"
    return setting


def tcg_threading(cpus: int, timing: str = "wall") -> str:
    """One host thread per vCPU ("multi") only when the host has a core to
    spare beside them; else one thread runs every vCPU in turn ("single").
    On this project's 2-core host, 2 vCPUs in 2 threads made the boot twice
    as slow (13.8 s against 6.5 s: the vCPU threads contend with QEMU's I/O
    thread and each other), and Python in the guest 2-3 times slower.
    Instructions mode is single: QEMU counts instructions in one thread only."""
    if timing == "instructions":
        return "single"
    return "multi" if (os.cpu_count() or 1) > cpus else "single"


def guest_tsc_khz(timing: str) -> int | None:
    """The TSC rate the guest is told (tsc_early_khz). Under TCG without
    icount the guest's TSC is the host's; with icount QEMU makes it the
    virtual clock in nanoseconds (1 GHz), which advances 2^shift ns per
    instruction: told 1 GHz, the guest's nanosecond is 2^shift instructions'
    worth of virtual time, and at shift 0 exactly one instruction."""
    return ICOUNT_TSC_KHZ if timing == "instructions" else host_tsc_khz()


def icount_option(shift: int) -> str:
    """QEMU's -icount value: a fixed shift, and sleep=off (an idle vCPU jumps
    the virtual clock to the next timer instead of waiting in real time).
    Never shift=auto (adaptive: it follows the host's speed); align=on
    (slowing the guest to real time) is refused by QEMU with sleep=off."""
    if not isinstance(shift, int) or isinstance(shift, bool) or not 0 <= shift <= 10:
        raise ValueError(f"icount shift must be a number from 0 to 10, got {shift!r}")
    return f"shift={shift},sleep=off"


# -- the command line ------------------------------------------------------------------


def qemu_argv(
    kernel: Kernel,
    *,
    memory_mib: int,
    cpus: int,
    machine: str,
    accel: str,
    xchg: Path,
    console: Path,
    disks: Sequence[Disk],
    tsc_khz: int | None,
    tcg_thread: str = "single",
    qemu: str = QEMU,
    timing: str = "wall",
    icount_shift: int = 0,
) -> list[str]:
    """QEMU's argument list for one boot (pure: the same inputs give the same list).

    ``timing = "instructions"``: single-threaded TCG with -icount (fixed
    shift, sleep=off); refused with KVM or multi-threaded TCG, where the
    guest's clock is real time."""
    mmio = machine == "microvm"
    if timing == "instructions" and (accel == "kvm" or tcg_thread != "single"):
        raise ValueError(f"instructions timing needs single-threaded TCG, not accel {accel!r} "
                         f"with thread {tcg_thread!r}")

    def device(kind: str) -> str:
        return f"virtio-{kind}-device" if mmio else f"virtio-{kind}-pci"

    argv = [qemu]
    if accel == "kvm":
        argv += ["-accel", "kvm", "-cpu", "host"]
    else:
        argv += ["-accel", f"tcg,thread={tcg_thread}", "-cpu", "max"]
    if timing == "instructions":
        argv += ["-icount", icount_option(icount_shift)]
    argv += ["-smp", str(cpus), "-m", f"{memory_mib}M",
             "-nodefaults", "-no-user-config", "-nographic", "-no-reboot"]
    if mmio:
        argv += ["-M", "microvm,acpi=on,pit=on,pic=on,rtc=on,isa-serial=on",
                 "-global", "virtio-mmio.force-legacy=false"]
    else:
        argv += ["-M", machine]
    argv += ["-serial", f"file:{console}",
             "-kernel", str(kernel.image), "-initrd", str(kernel.initramfs),
             "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
             "-device", f"{device('9p')},fsdev=root,mount_tag=hostroot",
             "-fsdev", f"local,id=xchg,path={xchg},security_model=none",
             "-device", f"{device('9p')},fsdev=xchg,mount_tag=xchg"]
    for index, disk in enumerate(disks):
        argv += ["-drive", f"file={disk.path},if=none,id=disk{index},format=raw,cache={DISK_CACHE},aio=native",
                 "-device", f"{device('blk')},drive=disk{index},serial={disk.serial}"]
    append = ["console=ttyS0", "panic=-1", "reboot=t", "quiet", "loglevel=4", "rdinit=/init",
              "8250.nr_uarts=1", f"iolab.bus={'mmio' if mmio else 'pci'}"]
    if accel != "kvm":
        # TCG's guest TSC is one host-wide counter, but the guest's sync check
        # sees warps between vCPU threads, marks it unstable and falls back to
        # jiffies (4 ms clock): every latency would read 0 or 4 ms
        append.append("tsc=reliable")
        if tsc_khz:
            append.append(f"tsc_early_khz={tsc_khz}")
    if timing == "instructions":
        append += DETERMINISTIC_GUEST
    if kernel.moddir is not None:
        append.append(f"iolab.moddir={kernel.moddir}")
    argv += ["-append", " ".join(append)]
    return argv


def guest_command(python: str, path: Sequence[str]) -> str:
    """cmd.sh: the guest's command, run by init in the host root.

    ``python -S`` with iolab's and the site-packages' directories appended
    to sys.path, after the standard library: no site processing and no .pth
    import hooks, and no standard-library import searched for in them first
    (over 9p). In the guest this made the python process 0.5 s shorter
    (about 4.0 s against 4.5 s, bench/vm_overhead.py --imports)."""
    program = (f"import sys; sys.path += {json.dumps(list(path))}; "
               "from iolab.hosts.vm import guest; sys.exit(guest.main(sys.argv))")
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


@dataclass
class Boot:
    """What the host saw of one boot."""

    argv: list[str]
    xchg: Path
    started: float = 0.0  # time.monotonic()
    ready_s: float | None = None  # QEMU start -> the guest ready to run its first cell
    exited_s: float | None = None  # QEMU start -> QEMU gone
    last_sample_s: float | None = None
    qemu_rc: int | None = None
    guest_rc: int | None = None
    timed_out: bool = False
    guest: dict[str, Any] | None = None

    def console_tail(self, lines: int = CONSOLE_TAIL) -> list[str]:
        text = ""
        for name in ("console.log", "guest.log"):
            path = self.xchg / name
            if path.exists():
                text += path.read_text(errors="replace")
        return [line.rstrip() for line in text.splitlines() if line.strip()][-lines:]

    def outcome(self) -> str:
        if self.timed_out:
            return "the VM was killed: nothing from the guest for [vm] timeout"
        if self.guest_rc is not None:
            return f"the guest's iolab exited with status {self.guest_rc}"
        stderr = self.xchg / "qemu.stderr"
        detail = stderr.read_text(errors="replace").strip().splitlines()[-2:] if stderr.exists() else []
        if self.qemu_rc not in (0, None):
            return f"QEMU failed (exit {self.qemu_rc}): {' / '.join(detail)}"
        return "the VM stopped before its command ended (crash or panic)"


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Stop QEMU and everything in its session: SIGTERM, then SIGKILL."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        process.wait()


class VMHost:
    """Boots one kernel in a VM per batch of cells and brings their samples back."""

    name = "vm"

    def __init__(
        self,
        kernel: Kernel,
        settings: VM,
        *,
        scratch: Path,
        accel: str | None = None,
        show_command: Callable[[str], None] | None = None,
    ):
        self.kernel = kernel
        self.settings = settings
        self.scratch = scratch
        self.accel = accel or choose_accel(settings.accel, settings.machine, settings.timing)
        self.tcg_thread = tcg_threading(settings.cpus, settings.timing)
        self.show_command = show_command
        self.boots: list[Boot] = []

    def describe(self) -> dict[str, Any]:
        """The VM's shape and the kernel, as recorded with each sample (env["vm"])."""
        manifest = self.kernel.manifest
        return {
            "accel": self.accel,
            "tcg_thread": self.tcg_thread if self.accel == "tcg" else None,
            "qemu": qemu_version(),
            "machine": self.settings.machine,
            "cpus": self.settings.cpus,
            "memory_mib": self.settings.memory >> 20,
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

    def _launch(self, xchg: Path, disks: Sequence[Disk], command: str) -> tuple[subprocess.Popen[bytes], Boot]:
        """Start QEMU for one boot whose guest runs `command` (cmd.sh)."""
        require(QEMU)
        (xchg / "cmd.sh").write_text(command)
        argv = qemu_argv(
            self.kernel, memory_mib=self.settings.memory >> 20, cpus=self.settings.cpus,
            machine=self.settings.machine, accel=self.accel, xchg=xchg, console=xchg / "console.log",
            disks=disks, tsc_khz=guest_tsc_khz(self.settings.timing), tcg_thread=self.tcg_thread,
            timing=self.settings.timing, icount_shift=self.settings.icount_shift,
        )
        if self.show_command is not None:
            self.show_command(shlex.join(argv))
        boot = Boot(argv, xchg)
        self.boots.append(boot)
        with open(xchg / "qemu.stderr", "wb") as stderr:
            boot.started = time.monotonic()
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=stderr, start_new_session=True, preexec_fn=die_with_parent())
        return process, boot

    def run_command(self, command: str, *, timeout: float, disks: Sequence[Disk] = ()) -> Boot:
        """Boot and run a shell command in the guest (in the host root, as
        cmd.sh); the Boot says how it ended (guest_rc, timed_out, console).
        Its exchange dir (boot.xchg) stays in this host's scratch dir."""
        xchg = Path(tempfile.mkdtemp(prefix="iolab-vm-", dir=self.scratch))
        process, boot = self._launch(xchg, disks, command)
        try:
            for _ in self._follow(process, boot, timeout=timeout):
                pass
        finally:
            _kill_group(process)
        return boot

    def run_batch(self, cells: Sequence[CellSpec]) -> Iterator[Sample]:
        """Boot, and yield each cell's sample as the guest writes it; cells
        without one (timeout, crash) yield failed samples at the end."""
        workdir = Path(tempfile.mkdtemp(prefix="iolab-vm-", dir=self.scratch))
        xchg = workdir / "xchg"
        xchg.mkdir()
        process = None
        disk = None
        try:
            disk = self._disk(cells, workdir) if self.settings.disk == "virtio" else None
            (xchg / "cells.json").write_text(_request(cells, self.settings.disk))
            command = guest_command(sys.executable, guest_python_path())
            process, boot = self._launch(xchg, [disk] if disk else [], command)
            pending = {cell.seq: cell for cell in cells}
            for sample in self._follow(process, boot, timeout=self.settings.timeout):
                if sample.seq in pending:
                    pending.pop(sample.seq)
                    yield self._enriched(sample, boot, len(cells))
            for cell in cells:
                if cell.seq in pending:
                    yield self._failed(cell, boot, len(cells))
        finally:
            if process is not None:
                _kill_group(process)
            if disk is not None and disk.image:
                Path(disk.path).unlink(missing_ok=True)
            if os.environ.get("IOLAB_KEEP_VM"):  # debugging a guest: keep console.log, guest.log, cells.json
                print(f"iolab: IOLAB_KEEP_VM: kept {workdir}", file=sys.stderr)
            else:
                shutil.rmtree(workdir, ignore_errors=True)

    def _follow(self, process: subprocess.Popen[bytes], boot: Boot, *, timeout: float) -> Iterator[Sample]:
        """Samples as their lines appear, until QEMU exits or the guest is
        silent for longer than `timeout` (plus [vm] boot_timeout at first)."""
        samples_path = boot.xchg / "samples.jsonl"
        offset = 0
        deadline = boot.started + self.settings.boot_timeout + timeout
        while True:
            exited = process.poll() is not None
            now = time.monotonic()
            if boot.ready_s is None and (boot.xchg / "guest.json").exists():
                boot.ready_s = now - boot.started
                boot.guest = {**(_read_json(boot.xchg / "init.json") or {}),
                              **(_read_json(boot.xchg / "guest.json") or {})}
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
                boot.qemu_rc = process.returncode
                rc_path = boot.xchg / "rc"
                if rc_path.exists():
                    boot.guest_rc = int(rc_path.read_text().strip() or -1)
                return
            if now > deadline:
                boot.timed_out = True
                _kill_group(process)
                boot.exited_s = time.monotonic() - boot.started
                boot.qemu_rc = process.returncode
                return
            time.sleep(0.05)

    def _vm_env(self, boot: Boot, count: int) -> dict[str, Any]:
        guest = boot.guest or {}
        timeline = {key: guest.get(key) for key in (
            "init_uptime", "command_uptime", "python_started_uptime", "import_s", "ready_uptime")}
        return {**self.describe(), "boot_s": boot.ready_s, "cells_in_boot": count, "boot": len(self.boots),
                "guest_timeline": timeline, "modprobe": guest.get("modprobe")}

    def _enriched(self, sample: Sample, boot: Boot, count: int) -> Sample:
        sample.env["vm"] = self._vm_env(boot, count)
        if boot.ready_s is not None:
            sample.metrics["vm.boot_s"] = round(boot.ready_s, 3)
        return sample

    def _failed(self, cell: CellSpec, boot: Boot, count: int) -> Sample:
        tail = boot.console_tail()
        return Sample(
            seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
            variant=cell.variant.name, workload=cell.workload.name, status="failed",
            error=f"no sample from the VM: {boot.outcome()}; console: " + " | ".join(tail[-6:]),
            artefacts={"console": "\n".join(tail)}, env={"vm": self._vm_env(boot, count)}, started=time.time(),
        )


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _request(cells: Sequence[CellSpec], disk: str = "virtio") -> str:
    return json.dumps({"disk_serial": DISK_SERIAL, "disk": disk, "cells": [cell.to_dict() for cell in cells]})


# -- every variant in its VM ------------------------------------------------------------


class VMHosts:
    """The runner's host for an experiment whose variants name kernels: each
    cell runs in a VM booted with its variant's kernel; consecutive cells of
    one kernel share a boot, up to [vm] cells_per_boot.

    Kernels are made ready when this is built (fetched on first use), before
    the run is stored."""

    name = "vm"

    def __init__(self, experiment: Experiment, *, show_command: bool = False,
                 log: Callable[[str], None] | None = None, scratch_parent: str | None = None,
                 build_reporter: Reporter | None = None):
        self.settings = experiment.vm
        self.log = log or (lambda text: print(f"iolab: {text}", file=sys.stderr))
        self.scratch_parent = scratch_parent
        self.show = (lambda text: print(text, file=sys.stderr)) if show_command else None
        self.kernels: dict[str, Kernel] = {}
        for variant in experiment.variant:
            assert variant.kernel is not None
            if isinstance(variant.kernel, Build):
                request = build.request_for(variant.kernel, experiment.base_dir)
                self.kernels[variant.name] = build.ensure(request, self.log, build_reporter)
            else:
                self.kernels[variant.name] = kernels.ensure(_ref(experiment, variant.kernel, variant.modules),
                                                            self.log)
        self.accel = choose_accel(self.settings.accel, self.settings.machine, self.settings.timing)
        self.hosts: dict[str, VMHost] = {}
        self.scratch: Path | None = None
        self.logged: set[str] = set()

    def describe(self) -> dict[str, Any]:
        """Stored with the run (its host record): the VM shape and each variant's kernel."""
        return {"vm": {
            "accel": self.accel, "qemu": qemu_version(), "machine": self.settings.machine,
            "tcg_thread": tcg_threading(self.settings.cpus, self.settings.timing) if self.accel == "tcg" else None,
            "cpus": self.settings.cpus, "memory_mib": self.settings.memory >> 20,
            "cells_per_boot": self.settings.cells_per_boot, **timing_env(self.settings),
            "kernels": {name: kernel_label(kernel) for name, kernel in self.kernels.items()},
        }}

    def __enter__(self) -> VMHosts:
        compile_iolab()
        # journalled before it exists: a killed run's images and exchange dirs are reclaimed
        self.scratch = Path(self.scratch_parent or tempfile.gettempdir(), f"iolab-vmrun-{os.urandom(6).hex()}")
        self._entry = Journal(default_journal()).add(f"directory {self.scratch}",
                                                     {"kind": "path", "path": str(self.scratch)})
        self.scratch.mkdir(mode=0o700)
        by_image: dict[Path, VMHost] = {}
        for variant, kernel in self.kernels.items():
            if kernel.directory not in by_image:
                by_image[kernel.directory] = VMHost(kernel, self.settings, scratch=self.scratch,
                                                    accel=self.accel, show_command=self.show)
            self.hosts[variant] = by_image[kernel.directory]
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.scratch is not None:
            if not os.environ.get("IOLAB_KEEP_VM"):
                shutil.rmtree(self.scratch, ignore_errors=True)
            Journal(default_journal()).discard(self._entry)

    def batches(self, cells: Sequence[CellSpec]) -> list[list[CellSpec]]:
        """Consecutive cells of one kernel, at most cells_per_boot per batch."""
        out: list[list[CellSpec]] = []
        for cell in cells:
            host = self.hosts[cell.variant.name]
            last = out[-1] if out else None
            if (last is not None and self.hosts[last[0].variant.name] is host
                    and len(last) < self.settings.cells_per_boot):
                last.append(cell)
            else:
                out.append([cell])
        return out

    def run_batch(self, cells: Sequence[CellSpec]) -> Iterator[Sample]:
        for sample in self.hosts[cells[0].variant.name].run_batch(cells):
            self._attach_build_log(sample)
            yield sample

    def _attach_build_log(self, sample: Sample) -> None:
        """The run's first sample of a variant whose kernel was built from
        source carries that build's log (artefact BUILD_LOG): the log is
        stored with the run (iolab kernel log RUN VARIANT prints it)."""
        if sample.variant in self.logged:
            return
        self.logged.add(sample.variant)
        text = build.build_log(self.kernels[sample.variant])
        if text is not None:
            sample.artefacts[BUILD_LOG] = text

    def run_cell(self, cell: CellSpec) -> Sample:
        return list(self.run_batch([cell]))[0]


def timing_env(settings: VM) -> dict[str, Any]:
    """The timing mode as recorded with every sample and run (checked keys:
    iolab.cell.environment.CHECKED): the mode, and in instructions mode the
    icount shift and the guest's TSC rate."""
    if settings.timing != "instructions":
        return {"timing": "wall"}
    return {"timing": "instructions", "icount_shift": settings.icount_shift, "guest_tsc_khz": ICOUNT_TSC_KHZ}


def kernel_label(kernel: Kernel) -> str:
    """A kernel as the report's header names it: its release, and for a
    kernel built from source the patches on it (-R: reversed)."""
    patched = kernel.manifest.get("patches") or []
    if kernel.manifest.get("kind") != "build" or not patched:
        return kernel.kver
    names = [("-R " if name.endswith(" (reversed)") else "+") + Path(name.removesuffix(" (reversed)")).name
             for name in patched]
    return f"{kernel.kver} {' '.join(names)}"


def _ref(experiment: Experiment, name: str, modules: str | None) -> kernels.KernelRef:
    """A variant's kernel, its paths taken relative to the experiment file."""
    ref = kernels.parse(name, modules)
    if ref.kind == "local":
        image = Path(experiment.base_dir, ref.name).resolve()
        mods = str(Path(experiment.base_dir, modules).resolve()) if modules else None
        return kernels.KernelRef("local", str(image), mods)
    return ref
