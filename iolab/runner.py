"""Running an experiment: plan -> cells on a host -> store, sample by sample."""

from __future__ import annotations

import os
import random
from typing import Protocol

from iolab import engines, environment, plan, spec
from iolab.cell import CellSpec
from iolab.hosts.local import LocalHost
from iolab.spec import Experiment
from iolab.store import Sample, Store
from iolab.sysutil import ToolError, require


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; the run and its samples so far are in the store."""

    def __init__(self, run_id: int):
        super().__init__(run_id)
        self.run_id = run_id


def preflight(experiment: Experiment) -> None:
    """Refuse to start a run that cannot work: missing tools, not root."""
    for workload in experiment.workload:
        engines.get(workload.engine).version()
    target = experiment.target
    if target.kind != "dir":
        if os.geteuid() != 0:
            raise ToolError("iolab needs root for loop devices, mkfs and mount (or use target.kind = 'dir')")
        for tool in ("losetup", "mount", "umount"):
            require(tool)
        for variant in experiment.variant:
            for workload in experiment.workload:
                fs = experiment.target_for(variant, workload).fs
                if fs != "none":
                    require(f"mkfs.{fs}")


class Host(Protocol):
    """Where cells run (iolab.hosts): a context manager that runs a CellSpec."""

    def __enter__(self) -> Host: ...

    def __exit__(self, *exc: object) -> None: ...

    def run_cell(self, cell: CellSpec) -> Sample: ...


class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def cell_started(self, label: str) -> None: ...

    def cell_done(self, sample: Sample) -> None: ...

    def stop(self) -> None: ...


class NoProgress:
    def start(self, total: int) -> None:
        pass

    def cell_started(self, label: str) -> None:
        pass

    def cell_done(self, sample: Sample) -> None:
        pass

    def stop(self) -> None:
        pass


def cell_specs(experiment: Experiment, planned: list[plan.PlannedCell]) -> list[CellSpec]:
    variants = {v.name: v for v in experiment.variant}
    workloads = {w.name: w for w in experiment.workload}
    return [
        CellSpec(
            seq=cell.seq,
            round=cell.round,
            iteration=cell.iteration,
            warmup=cell.warmup,
            target=experiment.target_for(variants[cell.variant], workloads[cell.workload]),
            variant=variants[cell.variant],
            workload=workloads[cell.workload],
            job=spec.job_text(experiment, workloads[cell.workload]),
            setup=experiment.cell,
            collect=experiment.collect,
            derived=experiment.derived,
        )
        for cell in planned
    ]


def run(
    experiment: Experiment,
    store: Store,
    *,
    experiment_path: str | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
    recheck_of: int | None = None,
    host: Host | None = None,
) -> int:
    """Run every planned cell and store each sample as it comes; the run's id.

    Ctrl-C stops after the current cell's teardown: the run is marked
    'interrupted', its samples so far stay in the store, and
    KeyboardInterrupt propagates to the caller.
    """
    progress = progress or NoProgress()
    if host is None:
        preflight(experiment)
        host = LocalHost()
    if seed is None:
        seed = experiment.run.seed if experiment.run.seed is not None else random.randrange(2**31)
    cells = cell_specs(experiment, plan.plan(experiment, seed))
    run_id = store.begin_run(
        name=experiment.name,
        experiment_path=experiment_path,
        experiment_json=experiment.model_dump_json(),
        seed=seed,
        planned_cells=len(cells),
        host=environment.host(),
        recheck_of=recheck_of,
    )
    status = "failed"
    progress.start(len(cells))
    try:
        with host:
            for cell in cells:
                progress.cell_started(f"{cell.variant.name} / {cell.workload.name}")
                sample = host.run_cell(cell)
                store.add_sample(run_id, sample)
                progress.cell_done(sample)
        status = "complete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise Interrupted(run_id) from None
    finally:
        progress.stop()
        store.end_run(run_id, status)
    return run_id
