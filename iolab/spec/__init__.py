"""The experiment file's schema.

An experiment is a TOML file (see docs/experiment.md and scenarios/), validated into
the `Experiment` model. This package is the schema only: it imports no
engine, kernel or machine check. Reading a file, the checks that need an
engine, a kernel name or this machine, and error messages naming the field
(``variant[2].fio``, ``workload["normal"].job_file``) are in iolab.load.

    base        SpecError, the strict model, sizes, durations, words
    target      [target], and what a variant or workload may change of it
    kernel      [kernel] (a build from source) and [series] (its steps become variants)
    mail        [mail]: the patch mail an experiment was written from
    vm          [vm] and the timing mode (wall | instructions) with its defaults
    run         [run], [report], [cell], [collect]
    claims      [claims]: a patch mail's claim, beside what the experiment measures
    experiment  Variant, Workload, Experiment: the checks over the whole file

This file only re-exports.
"""

from iolab.spec.base import FioValue, Seconds, Size, SpecError, Strict, Words
from iolab.spec.claims import ClaimRow, Claims
from iolab.spec.experiment import CellSettings, Experiment, KnobValue, Variant, Workload
from iolab.spec.kernel import Build, KernelField, Series, step_name, with_default_kernel, with_series_steps
from iolab.spec.mail import MailPatch, MailRecord, MovedHunk
from iolab.spec.run import CellSetup, Collect, PerfEvent, Phase, ReportSettings, Run
from iolab.spec.target import FILESYSTEMS, MIN_SIZE, TARGET_OVERRIDES, ErofsFiles, Loop, Target, TargetOverrides
from iolab.spec.vm import (CARRIED_PATCH, EXACT_TOLERANCE, ICOUNT_SHIFT, INSTRUCTIONS_ITERATIONS, NULL_BLK_DISKS, VM, Clock, DeviceModel,
                           Timing, with_timing_defaults)

__all__ = [
    "Build", "CARRIED_PATCH", "CellSettings", "ClaimRow", "Claims", "CellSetup", "Collect", "EXACT_TOLERANCE", "ErofsFiles", "Experiment", "FILESYSTEMS",
    "FioValue", "ICOUNT_SHIFT", "INSTRUCTIONS_ITERATIONS", "KernelField", "KnobValue", "Loop", "MIN_SIZE", "MailPatch", "MailRecord", "MovedHunk", "NULL_BLK_DISKS",
    "PerfEvent", "Phase", "ReportSettings", "Run", "Seconds", "Series", "Size", "SpecError", "Strict",
    "Clock", "DeviceModel", "TARGET_OVERRIDES", "Target", "TargetOverrides", "Timing", "VM", "Variant", "Words", "Workload", "step_name",
    "with_default_kernel", "with_series_steps", "with_timing_defaults",
]
