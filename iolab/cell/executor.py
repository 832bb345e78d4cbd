"""The cell executor: one (variant, workload, iteration), start to finish.

The same code runs on this host and inside a VM guest. It takes a
`CellSpec` (plain data, serialisable to JSON so a VM host can ship it in)
and returns a `Sample` (the same, shipped back out). Its fixed lifecycle:

    fresh target (image, losetup, mkfs, mount)
    -> knobs applied (sysfs, sysctl, memory cgroup, CPU pinning), read back
    -> sync and drop caches, warm-up run (when asked)
    -> collectors started -> the engine's measured run -> collectors stopped
    -> knobs restored, target torn down

Everything it sets up is a context manager, so an error or Ctrl-C in the
middle leaves no mount, loop device, image, cgroup or changed knob behind.
An error becomes a failed sample carrying the error text; Ctrl-C
propagates after teardown.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from iolab import collectors, engines, knobs
from iolab.cell import derived, environment, targets
from iolab.cell.cellspec import CellSpec
from iolab.collectors.host_noise import HostNoise
from iolab.cell.sample import Sample
from iolab.cell.targets import TargetError
from iolab.collectors import CollectorError
from iolab.engines import EngineError, EngineResult, Prepared, WorkloadRun
from iolab.journal import using
from iolab.knobs import KnobError
from iolab.sysutil import ToolError

# Errors that are the cell's honest outcome: stored as a failed sample.
# (ValueError: a knob or collector table the kernel or target cannot take.)
EXPECTED_ERRORS = (EngineError, TargetError, ToolError, KnobError, CollectorError, OSError, ValueError)


def knob_config(cell: CellSpec) -> dict[str, Any]:
    """The knobs table (iolab.knobs.build_knobs) of a cell's variant and workload
    (the experiment file refuses a setting made by both)."""
    config: dict[str, Any] = {}
    for table in ("sysctl", "sysfs"):
        merged = {**getattr(cell.workload, table), **getattr(cell.variant, table)}
        if merged:
            config[table] = merged
    for name in ("memory_max", "cpus"):
        value = getattr(cell.variant, name)
        value = value if value is not None else getattr(cell.workload, name)
        if value is not None:
            config[name] = value
    return config


SETTLE_TIMEOUT = 10.0  # seconds at most
SETTLE_DIRTY_KIB = 4096  # dirty + writeback pages below this count as settled


def _dirty_kib() -> int:
    total = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Dirty", "Writeback"):
            total += int(rest.split()[0])
    return total


def settle(timeout: float = SETTLE_TIMEOUT, clock: Callable[[], float] = time.monotonic,
           pause: Callable[[float], None] = time.sleep) -> dict[str, float]:
    """``sync``, then wait until Dirty + Writeback (/proc/meminfo) drop below
    SETTLE_DIRTY_KIB or stop falling, at most ``timeout`` s, so the previous
    cell's (or anyone's) writeback does not run in this cell's measurement.
    Returns host.settle_s (time waited) and host.dirty_kib (left at the start)."""
    started = clock()
    os.sync()
    previous = dirty = _dirty_kib()
    while dirty > SETTLE_DIRTY_KIB and clock() - started < timeout:
        pause(0.1)
        dirty = _dirty_kib()
        if dirty >= previous and dirty < 4 * SETTLE_DIRTY_KIB:
            break  # steady low level: someone else keeps writing; waiting will not help
        previous = dirty
    return {"host.settle_s": clock() - started, "host.dirty_kib": float(dirty)}


def drop_caches() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as handle:
        handle.write("3\n")


def _measure(
    cell: CellSpec, prepared: Prepared, workdir: Path, journal: Path | None, env: dict[str, Any]
) -> EngineResult:
    """Knobs, preparation and the measured run on a prepared target."""
    engine = engines.get(cell.workload.engine, cell.fio)
    with ExitStack() as stack:
        cell_knobs = knobs.build_knobs(knob_config(cell), prepared.device, name=f"cell{cell.seq}")
        env["knobs"] = stack.enter_context(knobs.applied(cell_knobs, journal))
        placement = knobs.placement_for(cell_knobs)
        placement.check()
        work = WorkloadRun(
            cell.job, dict(getattr(cell.variant, engine.name, {})), prepared, workdir, placement.preexec,
            allow=(*cell.workload.get("allow", ()), *cell.variant.get("allow", ())),
        )
        if cell.setup.drop_caches:
            drop_caches()
        if cell.setup.warmup_run:
            engine.run(work)
        settled = settle()
        kernel_side = collectors.build_collectors(collectors.table_of(cell.collect, prepared.device_name), prepared.device_name)
        kernel_side.append(HostNoise(prepared.device_name))
        with collectors.collecting(kernel_side) as collected:
            result = engine.run(work)
        for knob in cell_knobs:
            if isinstance(knob, knobs.MemoryLimit):
                result.metrics.update(knob.usage())
    result.metrics.update(collected)
    result.metrics.update(settled)
    if result.unmeasured:
        env["unmeasured"] = result.unmeasured
    values, reasons = derived.compute(cell.derived, result.metrics)
    result.metrics.update({name: value for name, value in values.items() if name not in reasons})
    if reasons:
        result.artefacts["derived-missing"] = "\n".join(f"{name}: {why}" for name, why in reasons.items())
    return result


def execute(cell: CellSpec, scratch: Path, cache_dir: Path, journal: Path | None = None) -> Sample:
    """Run one cell in a scratch directory of its own; always returns a Sample."""
    started = time.time()
    env: dict[str, Any] = {
        **environment.host(),
        "target": cell.target.to_dict(),
        "variant": cell.variant.to_dict(),
    }
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        engine = engines.get(cell.workload.engine, cell.fio)
        env[engine.name] = engine.version()
        with ExitStack() as stack:
            stack.enter_context(using(journal))  # what the cell creates is journalled there
            workdir = stack.enter_context(targets.temp_dir(str(scratch), targets.cell_dir_prefix(cell.seq)))
            prepared = stack.enter_context(targets.prepared(cell.target, workdir, cache_dir))
            env["prepared"] = prepared.describe()
            if prepared.image_place:
                env["image_place"] = prepared.image_place
            t1 = time.perf_counter()
            timings["setup_s"] = t1 - t0
            result = _measure(cell, prepared, workdir, journal, env)
            t2 = time.perf_counter()
            timings["run_s"] = t2 - t1
        timings["teardown_s"] = time.perf_counter() - t2
    except EXPECTED_ERRORS as error:
        return Sample.of(cell, "failed", error=str(error), env=env, started=started, **timings)
    except Exception as error:  # a bug in iolab must not lose the run: store it, with its traceback
        return Sample.of(
            cell,
            "failed",
            error=f"internal error: {type(error).__name__}: {error}",
            artefacts={"traceback": traceback.format_exc()},
            env=env,
            started=started,
            **timings,
        )
    return Sample.of(
        cell,
        "ok",
        metrics=result.metrics,
        histograms=result.histograms,
        artefacts=result.artefacts,
        env=env,
        started=started,
        **timings,
    )
