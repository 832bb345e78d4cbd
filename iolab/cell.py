"""The cell executor: one (variant, workload, iteration), start to finish.

The same code runs on this host and inside a VM guest. It takes a
`CellSpec` (plain data, serialisable to JSON so a VM host can ship it in)
and returns a `Sample` (the same, shipped back out). Its fixed lifecycle:

    fresh target (mkfs + mount) -> run the engine -> tear everything down

Everything it sets up is a context manager, so an error or Ctrl-C in the
middle leaves no mount, loop device or image behind. An error becomes a
failed sample carrying the error text; Ctrl-C propagates after teardown.
"""

from __future__ import annotations

import time
import traceback
from contextlib import ExitStack
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from iolab import engines, environment, targets
from iolab.engines import EngineError, WorkloadRun
from iolab.spec import Target, Variant, Workload
from iolab.store import Sample
from iolab.sysutil import ToolError
from iolab.targets import TargetError

# Errors that are the cell's honest outcome: stored as a failed sample.
EXPECTED_ERRORS = (EngineError, TargetError, ToolError, OSError)


class CellSpec(BaseModel):
    """Everything needed to run one cell, anywhere."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int
    round: int
    iteration: int
    warmup: bool
    target: Target
    variant: Variant
    workload: Workload
    job: str  # the workload's job text, resolved on the host


def _sample(cell: CellSpec, **fields: object) -> Sample:
    return Sample(
        seq=cell.seq,
        round=cell.round,
        iteration=cell.iteration,
        warmup=cell.warmup,
        variant=cell.variant.name,
        workload=cell.workload.name,
        **fields,  # type: ignore[arg-type]
    )


def execute(cell: CellSpec, scratch: Path, cache_dir: Path) -> Sample:
    """Run one cell in a scratch directory of its own; always returns a Sample."""
    started = time.time()
    engine = engines.get(cell.workload.engine)
    env = {**environment.host(), "target": cell.target.model_dump(), "variant": cell.variant.model_dump()}
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        env[engine.name] = engine.version()
        with ExitStack() as stack:
            workdir = stack.enter_context(targets.temp_dir(str(scratch), f"cell{cell.seq}-"))
            prepared = stack.enter_context(targets.prepared(cell.target, cell.variant, workdir, cache_dir))
            env["prepared"] = prepared.describe()
            t1 = time.perf_counter()
            timings["setup_s"] = t1 - t0
            options = getattr(cell.variant, engine.name, {})
            result = engine.run(WorkloadRun(cell.job, options, prepared, workdir))
            t2 = time.perf_counter()
            timings["run_s"] = t2 - t1
        timings["teardown_s"] = time.perf_counter() - t2
    except EXPECTED_ERRORS as error:
        return _sample(cell, status="failed", error=str(error), env=env, started=started, **timings)
    except Exception as error:  # a bug in iolab must not lose the run: store it, with its traceback
        return _sample(
            cell,
            status="failed",
            error=f"internal error: {type(error).__name__}: {error}",
            artefacts={"traceback": traceback.format_exc()},
            env=env,
            started=started,
            **timings,
        )
    return _sample(
        cell,
        status="ok",
        metrics=result.metrics,
        histograms=result.histograms,
        artefacts=result.artefacts,
        env=env,
        started=started,
        **timings,
    )
