"""QEMU: what this machine's QEMU can do, and the command line of one boot.

Accelerator: KVM or TCG, as iolab.hosts.vm.accel decides (this module's
first probe: a 150-byte PVH guest that writes to an isa-debug-exit port, run
with ``-accel kvm -cpu host``; then a Linux boot). Under TCG the guest kernel is emulated: its numbers compare only with
other numbers from the same host, accelerator and VM shape; every sample
records them (env["vm"]).

Timing: "wall" (real time), or "instructions": single-threaded TCG with
``-icount shift=0,sleep=off``, the guest told that its TSC runs at 1 GHz, so
every duration the guest measures is a count of executed instructions.

The command line is an argument list, never a shell string (``qemu_argv``
is pure: the same inputs give the same list; ``--show-command`` prints it
with shlex.join).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iolab import process
from iolab.kernels import Kernel
from iolab.spec import NULL_BLK_DISKS, VM, DeviceModel
from iolab.sysutil import LIBC, require

QEMU = "qemu-system-x86_64"
DISK_CACHE = "none"
ICOUNT_TSC_KHZ = 1_000_000  # the guest's TSC under -icount: QEMU's virtual clock, in ns
# Instructions mode: the guest's own randomness off where a boot option can
# do it (address-space layout of processes, the kernel stack's offset per
# system call): instruction counts then repeat more closely from boot to boot.
# iolab.sched: scheduler features the guest sets (iolab.hosts.vm.guest): EEVDF's
# delayed dequeue (Linux 6.12+) keeps a task that sleeps queued until its lag is
# spent, and which way that falls flipped a SQPOLL fio job on 1 vCPU between
# runs of 24 and 29-106 guest ms (its SQ thread, the job and fio's main thread
# sharing the vCPU; bench/data/sqpoll-aa-2026-11-28.txt); without it 16 runs of
# 16 took 24 ms (the task dequeued at once, as before 6.12)
DETERMINISTIC_GUEST = ["norandmaps", "randomize_kstack_offset=off", "iolab.sched=NO_DELAY_DEQUEUE"]
# [vm] boot = "lean" under TCG (lean_boot): what an emulated boot spends most
# of its CPU on and a cell does not need
LEAN_TCG = ["initcall_blacklist=trace_eval_init"]
# no_timer_check: with the PIT on the legacy PIC, the kernel would first check
# that its interrupt arrives (timer_irq_works: another rdtsc and pause loop of
# up to 160 ms of the guest's clock); on a busy host a wall-mode vCPU that
# misses the window would see too few ticks and panic. KVM guests set it too.
LEAN_NO_ACPI = ["acpi=off", "noapictimer", "no_timer_check"]


@dataclass(frozen=True)
class Saving:
    """A boot whose guest is saved after its start-up or restored (iolab.hosts.vm.saved)."""

    initrd: Path  # the kernel's initramfs and the guest's Python root after it
    console: Path  # the console's socket (the host sends the guest its go line there)
    qmp: Path  # QEMU's QMP socket
    state: Path | None = None  # the state restored (-incoming); None: a cold boot to be saved


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
    out = process.run([require(qemu), "--version"]).stdout
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
def kvm_usable(machine: str = "microvm", qemu: str = QEMU) -> bool:
    """Whether QEMU runs a guest with -accel kvm -cpu host here (a probe of
    about 0.1 s; nested hypervisors such as kvm-pvm refuse it)."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK) or shutil.which(qemu) is None:
        return False
    with tempfile.NamedTemporaryFile(prefix="iolab-kvm-probe-", suffix=".elf") as elf:
        elf.write(_probe_elf())
        elf.flush()
        argv = [qemu, "-accel", "kvm", "-cpu", "host", "-M", machine, "-m", "16M", "-nodefaults",
                "-no-user-config", "-display", "none", "-serial", "none",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", elf.name]
        try:
            done = process.run(argv, timeout=10)
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == (0x21 << 1) | 1


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
    worth of virtual time, and at shift 0 exactly one instruction (the
    guest's own PIT calibration agrees: 'Detected 999.993 MHz processor')."""
    return ICOUNT_TSC_KHZ if timing == "instructions" else host_tsc_khz()


def icount_option(shift: int) -> str:
    """QEMU's -icount value: a fixed shift, and sleep=off (an idle vCPU jumps
    the virtual clock to the next timer instead of waiting in real time).
    Never shift=auto (adaptive: it follows the host's speed); align=on
    (slowing the guest to real time) is refused by QEMU with sleep=off."""
    if not isinstance(shift, int) or isinstance(shift, bool) or not 0 <= shift <= 10:
        raise ValueError(f"icount shift must be a number from 0 to 10, got {shift!r}")
    return f"shift={shift},sleep=off"


def timing_env(settings: VM) -> dict[str, Any]:
    """The timing mode as recorded with every sample and run (checked keys:
    iolab.cell.environment.CHECKED): the mode, and in instructions mode the
    icount shift, the guest's TSC rate and the modeled device's parameters
    (disk = "model": its waits are part of every guest duration)."""
    if settings.timing != "instructions":
        return {"timing": "wall"}
    model = settings.device_model
    return {"timing": "instructions", "icount_shift": settings.icount_shift, "guest_tsc_khz": ICOUNT_TSC_KHZ,
            **({"device_model": model.recorded()} if model is not None else {})}


PR_SET_THP_DISABLE = 41


def small_pages(timing: str) -> bool:
    """Whether QEMU's guest RAM is kept off the host's transparent huge pages
    (prctl PR_SET_THP_DISABLE in QEMU's process, before its exec): in
    instructions mode, where the host's memory cannot move a count. QEMU asks
    for huge pages for guest RAM, and the host then faults and zeroes 2 MiB
    wherever the guest first touches 4 KiB: under TCG the host's page clearing
    was 7.8% of a boot's samples (perf), and a boot of seed 004's kernel took
    6.19 -> 5.74 s of QEMU's CPU without it (bench/data/pace-cut4-*.txt). Not in
    wall mode: a KVM guest's memory is faster on huge pages, and its time is
    the measure there."""
    return timing == "instructions"


def without_huge_pages() -> None:
    """QEMU's preexec (small_pages): no transparent huge pages for this process and what it execs."""
    LIBC.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)

# -- the command line ------------------------------------------------------------------


def null_blk_params(model: DeviceModel | None) -> dict[str, str]:
    """The null_blk parameters of a device model, as /sys/module/null_blk/parameters
    shows them once set (the guest checks them: iolab.hosts.vm.guest): timer
    completions; with a rate, a seek cost or poll queues, iolab's change to
    null_blk (iolab_model: one request at a time, docs/device-model.md);
    without it no poll queue, so a polled job is refused by the kernel rather
    than complete at its first poll with no device time; the rotational flag."""
    if model is None:
        return {}
    params = {"irqmode": "2", "completion_nsec": str(model.completion_nsec)}
    if model.carried:
        params["iolab_model"] = "Y"
        if model.mib_per_s:
            params["iolab_mib_per_s"] = str(model.mib_per_s)
        if model.seek_nsec:
            params["iolab_seek_nsec"] = str(model.seek_nsec)
        if model.parallel > 1:
            params["iolab_parallel"] = str(model.parallel)
    params["poll_queues"] = str(model.poll_queues or 0)
    if model.max_kb:
        params["max_sectors"] = str(model.max_kb * 2)
    if model.rotational:
        params["rotational"] = "Y"
    return params


def null_blk_args(memory: int, model: DeviceModel | None = None) -> list[str]:
    """The kernel command line of [vm] disk = "null_blk": one memory-backed
    /dev/nullb0 of half the VM's memory, rounded up to whole GiB (its pages
    exist only where written). With a device model (disk = "model"), its
    parameters (null_blk_params)."""
    args = ["null_blk.nr_devices=1", "null_blk.memory_backed=1", f"null_blk.gb={max(1, -(-memory // (2 << 30)))}"]
    flags = {"Y": "1"}
    return args + [f"null_blk.{name}={flags.get(value, value)}" for name, value in null_blk_params(model).items()]


def lean_boot(settings: VM, accel: str, kernel: Kernel) -> tuple[bool, list[str]]:
    """Whether the VM has ACPI, and the guest kernel's lean options ([vm] boot).

    "lean" under TCG skips what an emulated boot spends most of its CPU on
    and a cell does not need. Measured with bench/boot_split.py (Linux 7.2,
    QEMU's CPU from its start to init on a quiet host): 5.2-6.4 s as the
    kernel is, 3.4-3.5 s without the first, 1.3-1.7 s without both:

    - the trace events' enum names resolved in tracefs's format files
      (trace_eval_init: string scans over every event's format; the format
      files keep the names, the events and their output are as before);
    - on a 1-vCPU microvm, the local APIC timer's calibration (100 ms of the
      guest's clock spun in rdtsc and pause, each pause a return to QEMU's
      main loop): the PIT drives the tick instead (noapictimer). microvm's
      ACPI is the hardware-reduced kind, which has no PIT, so such a VM has
      no ACPI (QEMU puts virtio-mmio's devices on the command line; the
      guest ends by a reset, which -no-reboot turns into QEMU's exit). Not
      with disk = "model": the PIT cannot time an event sooner than 12.6 us
      (15 of its 1.19 MHz ticks), and the model's completions are timers of
      completion_nsec (1 us at least). Nor where the kernel cannot take
      virtio-mmio's devices from its command line
      (CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES: iolab's builds can, Debian's
      packages cannot).

    KVM boots as the kernel is, lean or not."""
    if settings.boot != "lean" or accel == "kvm":
        return True, []
    if (settings.machine == "microvm" and settings.cpus == 1 and settings.device_model is None
            and kernel.config("CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES") == "y"):
        return False, [*LEAN_TCG, *LEAN_NO_ACPI]
    return True, list(LEAN_TCG)


def disk_args(settings: VM) -> list[str]:
    """The guest kernel's command line for the VM's disk (its null_blk's parameters)."""
    if settings.disk not in NULL_BLK_DISKS:
        return []
    return null_blk_args(settings.memory, settings.device_model)


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
    kernel_args: Sequence[str] = (),
    acpi: bool = True,
    saved: Saving | None = None,
) -> list[str]:
    """QEMU's argument list for one boot (pure: the same inputs give the same list).

    ``acpi``: microvm's ACPI (off: lean_boot). ``saved``: a guest saved or
    restored (iolab.hosts.vm.saved: its initrd, _console, iolab.saved=1).

    ``kernel_args``: more of the guest kernel's command line (a built-in
    module's parameters: ``null_blk.memory_backed=1``).

    ``timing = "instructions"``: single-threaded TCG with -icount (fixed
    shift, sleep=off); refused with KVM or multi-threaded TCG, where the
    guest's clock is real time."""
    mmio = machine == "microvm"
    if timing == "instructions" and (accel == "kvm" or tcg_thread != "single"):
        raise ValueError(f"instructions timing needs single-threaded TCG, not accel {accel!r} "
                         f"with thread {tcg_thread!r}")

    def device(kind: str) -> str:
        return f"virtio-{kind}-device" if mmio else f"virtio-{kind}-pci"

    argv = [qemu, *(["-accel", "kvm", "-cpu", "host"] if accel == "kvm"
                    else ["-accel", f"tcg,thread={tcg_thread}", "-cpu", "max"])]
    if timing == "instructions":
        argv += ["-icount", icount_option(icount_shift)]
    argv += ["-smp", str(cpus), "-m", f"{memory_mib}M",
             "-nodefaults", "-no-user-config", "-nographic", "-no-reboot"]
    if mmio:
        argv += ["-M", f"microvm,acpi={'on' if acpi else 'off'},pit=on,pic=on,rtc=on,isa-serial=on",
                 "-global", "virtio-mmio.force-legacy=false"]
    else:
        argv += ["-M", machine]
    argv += [*_console(console, saved), "-kernel", str(kernel.image),
             "-initrd", str(saved.initrd if saved else kernel.initramfs), "-fsdev", "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap",
             "-device", f"{device('9p')},fsdev=root,mount_tag=hostroot",
             "-fsdev", f"local,id=xchg,path={xchg},security_model=none",
             "-device", f"{device('9p')},fsdev=xchg,mount_tag=xchg"]
    for index, disk in enumerate(disks):
        argv += ["-drive", f"file={disk.path},if=none,id=disk{index},format=raw,cache={DISK_CACHE},aio=native",
                 "-device", f"{device('blk')},drive=disk{index},serial={disk.serial}"]
    return argv + ["-append", _command_line(kernel, mmio, accel, tsc_khz, timing,
                                            [*kernel_args, *(["iolab.saved=1"] if saved else [])])]


def _console(console: Path, saved: Saving | None) -> list[str]:
    """The serial console into a file; for a guest saved or restored, on a
    socket the host writes its go line to (logged to the same file), with
    QEMU's QMP socket and the state it restores."""
    if saved is None:
        return ["-serial", f"file:{console}"]
    argv = ["-chardev", f"socket,id=console,path={saved.console},server=on,wait=off,logfile={console}",
            "-serial", "chardev:console", "-qmp", f"unix:{saved.qmp},server=on,wait=off"]
    return argv + (["-incoming", f"exec:cat {shlex.quote(str(saved.state))}"] if saved.state is not None else [])


def _command_line(kernel: Kernel, mmio: bool, accel: str, tsc_khz: int | None, timing: str,
                  kernel_args: Sequence[str]) -> str:
    """The guest kernel's command line."""
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
    return " ".join([*append, *kernel_args])
