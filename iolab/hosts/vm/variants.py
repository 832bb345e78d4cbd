"""Every variant in its VM: the runner's host for an experiment whose
variants name kernels (one VMHost per kernel, iolab.hosts.vm.host)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from iolab.cell import environment
from iolab.cell.cellspec import CellSpec
from iolab.cell.sample import BUILD_FAILED, Sample
from iolab.hosts.vm.accel import Choice, Machine
from iolab.hosts.vm.host import ThisMachine, VMHost, compile_iolab
from iolab.hosts.vm.qemu import QEMU, qemu_version, tcg_threading, timing_env
from iolab.journal import Journal, default_journal
from iolab.kernels import Kernel, Steps, label, origin
from iolab.kernels.build import BUILD_LOG, build_log
from iolab.spec import VM


class VMHosts:
    """The runner's host for an experiment whose variants name kernels: each
    cell runs in a VM booted with its variant's kernel; consecutive cells of
    one kernel share a boot, up to [vm] cells_per_boot.

    The kernels come ready (iolab.kernels.ready, by variant name): this host
    only boots them. A series' steps come as iolab.kernels.Steps, which
    builds a step's kernel on its first cell; a step whose build failed
    gets failed samples carrying the error.

    Every VM of a run runs under one accelerator (iolab.hosts.vm.accel):
    decided here by booting the variants' smallest kernel under KVM (once
    per host boot), and switched to TCG for every later boot if a KVM boot
    stalls."""

    name = "vm"

    def __init__(self, kernels: dict[str, Kernel], settings: VM, *, show_command: bool = False,
                 scratch_parent: str | None = None, steps: Steps | None = None, machine: Machine | None = None,
                 qemu: str = QEMU):
        self.settings = settings
        self.kernels = dict(kernels)
        self.steps = steps
        self.by_image: dict[Path, VMHost] = {}
        self.scratch_parent = scratch_parent
        self.show = (lambda text: print(text, file=sys.stderr)) if show_command else None
        self.qemu = qemu
        smallest = min(kernels.values(), key=lambda k: k.image.stat().st_size if k.image.exists() else 0,
                       default=None)
        self.choice = Choice(settings.accel_setting,
                             machine or ThisMachine(smallest, machine=settings.machine, qemu=qemu))
        self.hosts: dict[str, VMHost] = {}
        self.scratch: Path | None = None
        self.logged: set[str] = set()
        # Boots at once: in instructions mode one per host CPU (a guest's counts do not depend on the host's
        # load, and TCG runs each guest in one thread: iolab.run.parallel); in wall mode one, as its timing
        # needs; a series' steps one (a step's kernel is built on its first cell: one build at a time)
        self.parallel = (os.cpu_count() or 1) if settings.timing == "instructions" and steps is None else 1
        self.stopping = threading.Event()  # set: every boot under way ends (iolab.run.parallel)

    def describe(self) -> dict[str, Any]:
        """Stored with the run (its host record): the VM shape and each variant's kernel."""
        accel = self.choice.accel
        return {**environment.host(), "vm": {
            "accel": accel, "accel_reason": self.choice.verdict.reason, "qemu": qemu_version(self.qemu),
            "machine": self.settings.machine,
            "tcg_thread": tcg_threading(self.settings.cpus, self.settings.timing) if accel == "tcg" else None,
            "cpus": self.settings.cpus, "memory_mib": self.settings.memory >> 20,
            "cells_per_boot": self.settings.cells_per_boot, **timing_env(self.settings),
            "kernels": {name: label(kernel) for name, kernel in self.kernels.items()},
            "kernel_from": {name: origin(kernel) for name, kernel in self.kernels.items()},
        }}

    def __enter__(self) -> VMHosts:
        compile_iolab()
        # journalled before it exists: a killed run's images and exchange dirs are reclaimed
        self.scratch = Path(self.scratch_parent or tempfile.gettempdir(), f"iolab-vmrun-{os.urandom(6).hex()}")
        self._entry = Journal(default_journal()).add(f"directory {self.scratch}",
                                                     {"kind": "path", "path": str(self.scratch)})
        self.scratch.mkdir(mode=0o700)
        for variant, kernel in self.kernels.items():
            self._add_host(variant, kernel)
        return self

    def _add_host(self, variant: str, kernel: Kernel) -> Any:
        assert self.scratch is not None
        if kernel.directory not in self.by_image:
            self.by_image[kernel.directory] = VMHost(kernel, self.settings, scratch=self.scratch,
                                                     accel=self.choice, show_command=self.show, qemu=self.qemu,
                                                     stopping=self.stopping)
        self.hosts[variant] = self.by_image[kernel.directory]
        return self.hosts[variant]

    def _host(self, variant: str) -> Any:
        """The VM host of a variant; a series step's kernel is built on its
        first cell (None when that build failed)."""
        if variant in self.hosts or self.steps is None or variant not in self.steps:
            return self.hosts[variant]
        kernel = self.steps.get(variant, self.stopping)
        if kernel is None:
            return None
        self.kernels[variant] = kernel
        return self._add_host(variant, kernel)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.scratch is not None:
            if not os.environ.get("IOLAB_KEEP_VM"):
                shutil.rmtree(self.scratch, ignore_errors=True)
            Journal(default_journal()).discard(self._entry)

    def batches(self, cells: Sequence[CellSpec]) -> list[list[CellSpec]]:
        """Consecutive cells of one kernel, at most cells_per_boot per batch.
        In instructions mode a batch is also one variant's cells of one
        round: each round of a variant is then a boot of its own, so the
        spread of its values over the rounds includes what differs from boot
        to boot (iolab.stats.exact decides a change against that spread), and
        an A/A's two copies boot apart, as an A/B's kernels must."""
        out: list[list[CellSpec]] = []
        by_round = self.settings.timing == "instructions"
        for cell in cells:
            last = out[-1] if out else None
            if (last is not None and self._same_kernel(last[0].variant.name, cell.variant.name)
                    and len(last) < self.settings.cells_per_boot
                    and not (by_round and (last[0].round, last[0].variant.name) != (cell.round, cell.variant.name))):
                last.append(cell)
            else:
                out.append([cell])
        return out

    def _same_kernel(self, one: str, other: str) -> bool:
        if self.steps is not None and (one in self.steps or other in self.steps):
            return one == other  # a step's kernel may not be built yet
        return self.hosts[one] is self.hosts[other]

    def run_batch(self, cells: Sequence[CellSpec]) -> Iterator[Sample]:
        host = self._host(cells[0].variant.name)
        if host is None:
            assert self.steps is not None
            error = self.steps.errors[cells[0].variant.name]
            for cell in cells:
                yield Sample.of(cell, "failed", error=f"{BUILD_FAILED}: {error.splitlines()[0]}",
                                artefacts={BUILD_LOG: error}, started=time.time())
            return
        for sample in host.run_batch(cells):
            yield self._with_build_log(sample)

    def _with_build_log(self, sample: Sample) -> Sample:
        """The run's first sample of a variant whose kernel was built from
        source carries that build's log (artefact BUILD_LOG): the log is
        stored with the run (iolab kernel log RUN VARIANT prints it)."""
        if sample.variant in self.logged:
            return sample
        self.logged.add(sample.variant)
        text = build_log(self.kernels[sample.variant])
        return sample if text is None else sample.with_more(artefacts={BUILD_LOG: text})

    def run_cell(self, cell: CellSpec) -> Sample:
        return list(self.run_batch([cell]))[0]
