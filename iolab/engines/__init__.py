"""Workload engines: one interface, one module each.

An engine turns a workload (job text and the variant's options) into
metrics, latency histograms and raw artefacts, or raises EngineError with
the tool's own error text.

    base          Engine, WorkloadRun, Prepared, EngineResult, EngineError
    registry      get(name): the engine of a workload; for_instructions: its op count cut
    fio, probe    the engines; fio_options: which fio options a job may use;
                  fio_jobs: a job's sizes and runtime, read from its text

This file only re-exports.
"""

from iolab.engines.base import Engine, EngineError, EngineResult, Prepared, WorkloadRun
from iolab.engines.registry import for_instructions, get

__all__ = ["Engine", "EngineError", "EngineResult", "Prepared", "WorkloadRun", "for_instructions", "get"]
