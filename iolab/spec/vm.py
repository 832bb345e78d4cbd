"""[vm]: the VM that cells of variants with a kernel run in, and its timing
mode: wall time, or the guest's instructions (QEMU TCG with -icount), with
that mode's defaults (with_timing_defaults)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from iolab.spec.base import Seconds, Size, Strict
from iolab.units import parse_size

Timing = Literal["wall", "instructions"]
Clock = Literal["wall", "instructions", "modeled"]  # what durations count (Experiment.clock)
ICOUNT_SHIFT = 0  # the one shift iolab runs: a guest nanosecond is one instruction
INSTRUCTIONS_ITERATIONS = 3  # rounds at most in instructions mode by default: 2, a third only where they vary
# [vm] cells_per_boot by default in instructions mode: every cell of a variant's round in one boot (a boot
# holds one variant's round in this mode: iolab.hosts.vm.variants.VMHosts.batches)
INSTRUCTIONS_CELLS_PER_BOOT = 64
# [report] tolerance by default in instructions mode: a variant's values within
# 1% of each other are deterministic (README "Instructions mode": measured
# spreads); in wall mode only identical values are
EXACT_TOLERANCE = {"wall": 0.0, "instructions": 0.01}


class DeviceModel(Strict):
    """[vm] model: the device of disk = "model", a memory-backed null_blk in
    the guest whose completions are guest timers (null_blk irqmode=2). In
    instructions mode an idle guest's clock jumps to its next timer
    (-icount sleep=off), so a wait for the device is that modeled time
    (docs/device-model.md).

    With completion_nsec alone (null_blk as it is): each request completes
    completion_nsec after it is issued, requests overlapping freely. With a
    rate (mib_per_s), a seek cost (seek_nsec), poll queues or parallel: null_blk with
    the change iolab carries into the kernels it builds
    (iolab/kernels/carry/null_blk-model.patch), which serves one request at
    a time: a request of B bytes takes completion_nsec + B / mib_per_s
    (+ seek_nsec where it does not start after the previous one's last
    sector), from when it arrives or the device has served the one before,
    whichever is later; a polled request completes at the first poll at or
    after that time. With parallel = K, K requests are served at a time
    (each at mib_per_s; a request takes the server free first). max_kb is
    the largest request the device takes (null_blk's own max_sectors)."""

    completion_nsec: int = Field(default=20_000, ge=1_000, le=100_000_000)  # per request, on the guest's clock
    mib_per_s: int | None = Field(default=None, ge=1, le=1_000_000)  # bytes' time: B / (mib_per_s MiB/s)
    seek_nsec: int | None = Field(default=None, ge=1, le=1_000_000_000)  # a request away from the last one's end
    rotational: bool = False  # null_blk's rotational flag (queue/rotational = 1): what the kernel gives an HDD
    poll_queues: int | None = Field(default=None, ge=1, le=64)  # polled I/O (fio hipri, t/io_uring -p1)
    parallel: int = Field(default=1, ge=1, le=64)  # requests served at a time (with the carried change)
    # The largest request the device takes, in KiB (null_blk's max_sectors); None: null_blk's own,
    # the block layer's 255 sectors (a 1 MiB read is then 9 requests)
    max_kb: int | None = Field(default=None, ge=4, le=16384)

    @model_validator(mode="before")
    @classmethod
    def _no_bandwidth(cls, data: Any) -> Any:
        if isinstance(data, dict) and "mbps" in data:
            # null_blk's mbps refills a budget every 20 ms from the device's creation: where a cell starts
            # in that period moved its values by 1.6-17% from boot to boot (bench/data/device-model-2026-11-26.txt)
            raise ValueError("mbps: a bandwidth cap does not repeat from boot to boot (null_blk refills it every "
                             "20 ms, from its creation, not from the cell's start); give mib_per_s, the "
                             "modeled device's own rate, which does")
        return data

    @property
    def carried(self) -> bool:
        """Whether the device needs iolab's change to null_blk (one request at a time)."""
        return self.parallel > 1 or any(value is not None for value in (self.mib_per_s, self.seek_nsec,
                                                                         self.poll_queues))

    @property
    def served(self) -> str:
        """How requests share the device, in the reports' words."""
        if not self.carried:
            return "overlapped"
        return "one at a time" if self.parallel == 1 else f"{self.parallel} at a time"

    def service_nsec(self, nbytes: int, seek: bool = False) -> int:
        """The modeled time of one request of ``nbytes`` (a read or a write), as
        the carried null_blk computes it: completion_nsec + nbytes * 10^9 /
        (mib_per_s * 2^20), rounded down to a whole ns (+ seek_nsec)."""
        rate = nbytes * 1_000_000_000 // (self.mib_per_s << 20) if self.mib_per_s else 0
        return self.completion_nsec + rate + ((self.seek_nsec or 0) if seek else 0)

    def deadlines(self, requests: Iterable[tuple[int, int, int, int]]) -> list[int]:
        """When the carried null_blk completes each request, in the order they
        reach it: (arrival ns, bytes, first sector, sectors) each; the same
        arithmetic as its null_iolab_deadline (a reference for the tests and
        the predictions in docs/device-model.md)."""
        free = [0] * self.parallel
        next_sector = 0
        out = []
        for arrival, nbytes, sector, sectors in requests:
            service = self.service_nsec(nbytes, seek=bool(self.seek_nsec) and sector != next_sector)
            next_sector = sector + sectors
            server = free.index(min(free))
            free[server] = max(free[server], arrival) + service
            out.append(free[server])
        return out

    def recorded(self) -> dict[str, Any]:
        """The parameters as samples and reports record them (the completions are timers: irqmode=2)."""
        optional = {name: value for name, value in self.model_dump().items()
                    if name != "completion_nsec" and value not in (None, False) and (name, value) != ("parallel", 1)}
        return {"completion_nsec": self.completion_nsec, **optional, "irqmode": "timer",
                **({"served": self.served} if self.carried else {})}

    def words(self) -> str:
        """The device in a line: what the dry run, the header and the reply say."""
        parts = [f"{self.completion_nsec} ns a request"]
        if self.mib_per_s:
            parts.append(f"+ its bytes at {self.mib_per_s} MiB/s")
        if self.seek_nsec:
            parts.append(f"+ {self.seek_nsec} ns where it does not follow the last")
        kind = "rotational" if self.rotational else "non-rotational"
        polled = f", {self.poll_queues} poll queue{'s' if self.poll_queues != 1 else ''}" if self.poll_queues else ""
        largest = f", requests of {self.max_kb} KiB at most" if self.max_kb else ""
        return f"{kind}, {' '.join(parts)}, served {self.served}{polled}{largest}"


# null_blk's change iolab carries into the kernels it builds for a DeviceModel that is carried
CARRIED_PATCH = "iolab/kernels/carry/null_blk-model.patch"
NULL_BLK_DISKS = ("null_blk", "model")  # the disks that are the guest's null_blk (kernel command line)


class VM(Strict):
    """The VM that cells of variants with a kernel run in (iolab.hosts.vm);
    recorded with every sample."""

    memory: Size = parse_size("2GiB")
    cpus: int = Field(default=2, ge=1, le=64)
    timeout: Seconds = 600.0  # per cell: a guest silent for longer is killed
    boot_timeout: Seconds = 120.0  # from QEMU's start to the first cell
    cells_per_boot: int = Field(default=1, ge=1, le=10_000)
    machine: Literal["microvm", "q35"] = "microvm"
    # Under TCG: "lean" skips at boot what an emulated boot spends most of its CPU on and
    # no cell needs (iolab.hosts.vm.qemu.LEAN_TCG: about 4 s of a 5-6 s boot of the kernel):
    # the trace events' enum names in tracefs's format files stay as the source spells
    # them (perf stat and tracefs's own output are unaffected; a parser of the format
    # files sees names, not numbers), and a 1-vCPU microvm has no ACPI and its tick
    # comes from the PIT, not the local APIC timer. "full" boots the kernel as it is:
    # for a change to those paths. Under KVM both are the same.
    boot: Literal["lean", "full"] = "lean"
    accel: Literal["auto", "kvm", "tcg"] = "auto"  # auto: KVM where a probe shows it works, else TCG
    # Where the target lives in the guest: "virtio", a disk image on this
    # host attached as virtio-blk (cache=none); "ram", an image in the guest's
    # memory (tmpfs) on a loop device: no emulated device in the I/O path, so
    # the guest kernel's own work is what is timed (needs memory for the image);
    # "null_blk", the guest's /dev/nullb0 (null_blk, memory-backed, of
    # ceil(memory / 2) GiB): a device with no data path behind it (a mail's nullb0);
    # "model" (instructions mode only), that null_blk with timer completions ([vm] model): each
    # request waits the modeled time, which the guest's clock counts (unit: modeled ns)
    disk: Literal["virtio", "ram", "null_blk", "model"] = "virtio"
    model: DeviceModel | None = None  # disk = "model": the device's parameters (None: DeviceModel's defaults)
    # What the guest's clock counts: "wall", real time (the default); or
    # "instructions", QEMU's TCG with a fixed instruction count (single
    # thread, -icount shift=N,sleep=off): the guest's clock advances 2^N ns
    # per executed instruction, so every duration the guest measures is an
    # instruction count (exact and repeatable), never a time
    timing: Timing = "wall"
    icount_shift: int = ICOUNT_SHIFT  # with timing = "instructions": guest ns per instruction = 2^shift
    # With timing = "instructions": "fewest", each workload's op count cut to what an instruction count
    # needs (iolab.engines.for_instructions: probe batches and ops, fio number_ios); "as-written": the job's
    op_counts: Literal["fewest", "as-written"] = "fewest"
    # How a boot's guest starts: "cold", a boot of the kernel; "saved", restored from a state QEMU saved
    # after the guest's start-up (kernel, Python, the executor's imports), each boot of a run from a state
    # of its own, made where missing by a cold boot that is saved and runs on (iolab.hosts.vm.saved; a cold
    # boot where that fails). The default in instructions mode (with_timing_defaults)
    start: Literal["cold", "saved"] = "cold"

    @field_validator("memory")
    @classmethod
    def _memory(cls, memory: int) -> int:
        if memory < 256 << 20 or memory % (1 << 20):
            raise ValueError("must be at least 256MiB and a whole number of MiB")
        return memory

    @field_validator("icount_shift", mode="before")
    @classmethod
    def _shift(cls, value: Any) -> Any:
        if value == "auto":
            raise ValueError("\"auto\" is QEMU's adaptive shift: the guest's clock would follow the host's "
                             "speed, so counts would change from run to run; give a number (0: one "
                             "instruction per guest nanosecond)")
        if isinstance(value, bool) or value != ICOUNT_SHIFT:
            raise ValueError(f"must be {ICOUNT_SHIFT}, got {value!r}: at shift 0 one guest nanosecond is one "
                             "instruction, which is what the reports' instruction units count")
        return value

    @property
    def accel_setting(self) -> str:
        """The accelerator asked for: always TCG in instructions mode ("auto" would pick KVM)."""
        return "tcg" if self.timing == "instructions" else self.accel

    @model_validator(mode="after")
    def _instructions(self) -> VM:
        if self.timing == "instructions" and self.accel == "kvm":
            raise ValueError("timing = \"instructions\" needs QEMU's TCG (it counts the instructions it "
                             "emulates); KVM runs the guest on the CPU, whose clock is real time: "
                             "set accel = \"tcg\" or \"auto\", or timing = \"wall\"")
        return self

    @model_validator(mode="after")
    def _model(self) -> VM:
        if self.disk == "model" and self.timing != "instructions":
            raise ValueError("disk = \"model\" needs timing = \"instructions\": its waits are modeled time on "
                             "the guest's instruction clock; in wall mode use disk = \"null_blk\"")
        if self.model is not None and self.disk != "model":
            raise ValueError(f"model: the device model's parameters need disk = \"model\", not {self.disk!r}")
        return self

    @property
    def device_model(self) -> DeviceModel | None:
        """The modeled device's parameters with disk = "model", else None."""
        return (self.model or DeviceModel()) if self.disk == "model" else None


def with_timing_defaults(data: Any) -> Any:
    """In instructions mode a file that sets no [run] iterations runs 2
    rounds, and a third (INSTRUCTIONS_ITERATIONS) only where a primary
    comparison is not exact after 2 ([run] exact_stop); one that sets no
    [vm] cells_per_boot runs each variant's round in one boot; one
    that sets no [vm] cpus one vCPU: one vCPU's count does not depend on
    how QEMU's single thread interleaves several, and Debian's 6.1 kernel
    never brings up a second vCPU under -icount; and one that sets no [vm]
    disk has its target in the guest's memory (disk = "ram"): a wait for an
    emulated disk is a jump of the guest's clock, not a count (README,
    "Instructions mode")."""
    if not isinstance(data, dict) or not isinstance(data.get("vm"), dict):
        return data
    if data["vm"].get("timing") != "instructions":
        return data
    vm = {"cpus": 1, "disk": "ram", "cells_per_boot": INSTRUCTIONS_CELLS_PER_BOOT, "start": "saved", **data["vm"]}
    run = data.get("run", {})
    if isinstance(run, dict) and "iterations" not in run:
        run = {"exact_stop": True, **run, "iterations": INSTRUCTIONS_ITERATIONS}
    return {**data, "vm": vm, "run": run}
