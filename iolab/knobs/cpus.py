"""CPU pinning of the workload: a knob that changes no kernel state."""

from __future__ import annotations

import os
from collections.abc import Sequence

from iolab.knobs.base import Knob, KnobError, Placement, format_cpus
from iolab.journal import Journal

class CpuPin(Knob):
    """Pin the workload to CPUs. Changes no kernel state; only the placement."""

    kind = "cpus"

    def __init__(self, cpus: set[int] | Sequence[int]):
        super().__init__()
        cpus = set(cpus)
        if not cpus or not all(isinstance(c, int) and c >= 0 for c in cpus):
            raise ValueError(f"cpus must be a non-empty set of CPU numbers, not {cpus!r}")
        self.cpus = cpus
        self.label = f"cpu pin {format_cpus(cpus)}"

    def show(self) -> str:
        return format_cpus(os.sched_getaffinity(0))

    def apply(self, journal: Journal | None = None) -> None:
        allowed = os.sched_getaffinity(0)
        if not self.cpus <= allowed:
            raise KnobError(
                f"{self.label}: CPU(s) {format_cpus(self.cpus - allowed)} not available "
                f"(this process may run on {format_cpus(allowed)})"
            )
        self.old = format_cpus(allowed)
        self.new = format_cpus(self.cpus)
        self._applied = True

    def restore(self) -> None:
        self._applied = False

    def place(self, placement: Placement) -> None:
        placement.cpus = set(self.cpus) if placement.cpus is None else placement.cpus & self.cpus


