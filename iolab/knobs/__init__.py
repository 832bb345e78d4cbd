"""Knobs: host settings applied for one cell and restored afterwards.

Each kind of setting is one small class with `show()`, `apply()` and
`restore()`, listed in the `KNOBS` table:

    name        class          config value
    sysctl      SysctlKnob     {"vm.dirty_bytes": 67108864, ...}
    sysfs       SysfsKnob      {"/sys/block/{dev}/queue/rq_affinity": 2, ...}
    loop_dio    LoopDirectIO   true | false      (the target must be a loop device)
    memory_max  MemoryLimit    bytes (int), a multiple of the page size
    cpus        CpuPin         [0, 1]

`build_knobs(config, dev)` turns such a dict into knobs, in the table's
order; `{dev}` in a sysfs path stands for the target's block device name.

Every `apply()` reads the old value, writes the new one and reads it back:
a value the kernel rejects, rounds or ignores raises `KnobError` naming the
knob, the path, the wanted and the read-back value. `applied(knobs)` is the
context manager a cell uses: it restores in reverse order on every exit,
also after an exception or Ctrl-C, and tries every restore even when one
fails.

A crash journal makes "everything is restored" hold even for a killed run:
before a knob changes anything it appends a JSON line saying how to undo it
to the journal file; a successful restore removes the line. The same
journal holds what a cell creates (loop devices, images, mounts, child
processes), kept by iolab.journal. `recover(path)` undoes what a dead
process left behind with the cell side's undo actions, given explicitly
(iolab.process.reclaim.ACTIONS and UNDO here); the next run, `iolab doctor`
and `iolab cleanup` call it.

Modules: base (Knob, Placement, kernel files), registry (KNOBS, build_knobs,
applied, UNDO, recover), files (sysfs, sysctl), loop, cgroup, cpus.

Knobs that decide how the workload is started (a memory cgroup, CPU
pinning) also contribute to a `Placement`, whose `preexec()` is passed to
`subprocess.Popen(preexec_fn=...)`.
"""

from iolab.knobs.base import Knob, KnobError, Placement, format_cpus, normalise, placement_for
from iolab.knobs.cgroup import MemoryCgroup, MemoryLimit, detect_memory_cgroup, memory_cgroup
from iolab.knobs.cpus import CpuPin
from iolab.knobs.files import SysctlKnob, SysfsKnob
from iolab.journal import Journal, Recovered, as_journal
from iolab.knobs.loop import LoopDirectIO
from iolab.knobs.registry import KNOBS, UNDO, applied, build_knobs, recover

__all__ = [
    "KNOBS", "UNDO", "CpuPin", "Journal", "Knob", "KnobError", "LoopDirectIO", "MemoryCgroup", "MemoryLimit", "Placement",
    "Recovered", "SysctlKnob", "SysfsKnob", "applied", "as_journal", "build_knobs", "detect_memory_cgroup",
    "format_cpus", "memory_cgroup", "normalise", "placement_for", "recover",
]
