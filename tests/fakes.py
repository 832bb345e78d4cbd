"""Test doubles, chosen like the real things: hosts that return scripted
samples, for exact-output tests of everything after the cell executor
(runner, store, analysis, reports), and fake kernel images."""

from __future__ import annotations

import lzma
import random
import struct
from typing import Any

from iolab.cell.cellspec import CellSpec
from iolab.hosts import CellByCell
from iolab.hosts.vm.accel import LinuxBoot, VerdictCache
from iolab.cell.sample import Sample

FIXED_HOST = {"kernel": "6.18.0-test", "cpus": 2, "cpu_model": "Test CPU", "fio": "fio-3.33"}


class ScriptedHost(CellByCell):
    """Each variant's metrics are `level * (1 + noise)`; a variant may fail."""

    def __init__(self, levels: dict[str, float], fail: dict[str, Any] | None = None, seed: int = 1,
                 noise: float = 0.01):
        self.levels = levels
        self.noise = noise  # relative: 0 gives the same values in every round (deterministic)
        self.fail = fail or {}
        self.rng = random.Random(seed)
        self.seen: list[CellSpec] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def describe(self) -> dict:
        return dict(FIXED_HOST)

    def run_cell(self, cell: CellSpec) -> Sample:
        self.seen.append(cell)
        base = dict(seq=cell.seq, round=cell.round, iteration=cell.iteration, warmup=cell.warmup,
                    variant=cell.variant.name, workload=cell.workload.name, env=dict(FIXED_HOST),
                    started=1_700_000_000.0 + cell.seq)
        error = self.fail.get(cell.variant.name)
        if callable(error):  # the error of this cell (None: it runs)
            error = error(cell)
        if error is not None:
            return Sample(status="failed", error=error, **base)
        level = self.levels[cell.variant.name]
        noise = 1 + self.rng.uniform(-self.noise, self.noise)
        latency_ns = int(1e9 / (level * 256))  # 4 KiB I/Os at `level` MiB/s
        hist = {latency_ns: 90, latency_ns * 2: 9, latency_ns * 5: 1}
        return Sample(
            status="ok",
            metrics={"read_bw": level * noise, "read_p50": latency_ns / 1e3, "read_p99": latency_ns * 2 / 1e3,
                     "ctx": 1000.0 * noise, "ios": 100.0},
            histograms={"read_clat": hist},
            **base,
        )


class ShapedHost(ScriptedHost):
    """ScriptedHost whose samples a function may change: shape(cell, metrics)."""

    def __init__(self, levels, shape, **kw):
        super().__init__(levels, **kw)
        self.shape = shape

    def run_cell(self, cell):
        sample = super().run_cell(cell)
        if sample.status == "ok":
            self.shape(cell, sample.metrics)
        return sample


class DescribedMachine:
    """A host that says what its KVM does (iolab.hosts.vm.accel.Machine):
    /dev/kvm or not, the 14-byte probe's outcome, a Linux boot's (None: no
    kernel to boot); it counts what it was asked."""

    def __init__(self, kvm: bool = True, probe: bool = True, linux: LinuxBoot | None = None,
                 verdicts: VerdictCache | None = None, qemu: str = "7.2.22"):
        self.kvm, self.probe, self.linux, self.verdicts, self.qemu = kvm, probe, linux, verdicts, qemu
        self.probes = 0
        self.boots: list[float] = []  # each Linux boot's limit

    def identity(self) -> dict[str, str]:
        return {"boot_id": "described-boot", "host_kernel": "6.18.0-test", "qemu": self.qemu, "machine": "microvm"}

    def kvm_device(self) -> bool:
        return self.kvm

    def tiny_probe(self) -> bool:
        self.probes += 1
        return self.probe

    def boot_linux(self, limit: float) -> LinuxBoot | None:
        self.boots.append(limit)
        return self.linux


def elf64(pvh: bool, banner: bytes = b"Linux version 6.1.0-test (me@here) #1 SMP\0") -> bytes:
    """A minimal 64-bit ELF: one PT_NOTE (Xen PVH entry note, or another note), a banner."""
    note_type = 18 if pvh else 1
    note = struct.pack("<III", 4, 4, note_type) + b"Xen\0" + struct.pack("<I", 0x1000000)
    phoff = 64
    note_off = phoff + 56
    header = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 2, 0x3E, 1, 0x1000000, phoff, 0, 0, 64, 56, 1, 64, 0, 0)
    program = struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(note), len(note), 4)
    return header + program + note + banner


def bzimage(payload: bytes, compress=lzma.compress, version: str = "6.1.0-test") -> bytes:
    """A fake bzImage: a setup header (HdrS, kernel_version) and a compressed payload."""
    setup = bytearray(0x400)
    setup[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", setup, 0x20E, 0x100)  # version string at 0x100 + 0x200
    text = f"{version} (me@here) #1 SMP".encode() + b"\0"
    setup[0x300:0x300 + len(text)] = text
    if compress is lzma.compress:
        body = lzma.compress(payload, format=lzma.FORMAT_XZ)
    else:
        body = compress(payload)
    return bytes(setup) + b"junk\xfd7zXZ" + body + b"trailer"
